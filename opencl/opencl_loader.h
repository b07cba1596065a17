// The OpenCL library, found and loaded at run time (dlopen), so that one
// binary serves boards with an ICD loader (libOpenCL.so.1) and phones whose
// vendor ships only libOpenCL.so under /vendor or /system.
//
// opencl_loader.cc defines, with C linkage, every cl* function the agent
// calls (or passes to ClHandle as a release function); each forwards to the
// function of the same name in the loaded library. The first cl* call
// without a LoadOpenCL() before it loads the library in the default order
// (kOpenClLibraryEnv, else DefaultOpenClLibraries()). A function that the
// loaded library lacks returns CL_INVALID_OPERATION (objects: nullptr with
// *errcode_ret = CL_INVALID_OPERATION), and its name is printed to stderr
// on its first call. A cl* function the agent starts to use must be added
// to TUNEFLEET_OPENCL_FUNCTIONS in opencl_loader.cc (else the agent fails
// to link: undefined reference).
//
// Only the tunefleet-agent executable links this (tunefleet_opencl_loader)
// and not libOpenCL; tests and benchmarks link libOpenCL directly.
#ifndef TUNEFLEET_OPENCL_OPENCL_LOADER_H_
#define TUNEFLEET_OPENCL_OPENCL_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet::opencl {

// The environment variable naming the OpenCL library to load (a path, or a
// file name for the dynamic linker's search); --opencl-library overrides it.
inline constexpr char kOpenClLibraryEnv[] = "TUNEFLEET_OPENCL_LIBRARY";

// The libraries tried, in order, when neither a path nor kOpenClLibraryEnv
// names one: the Khronos ICD loader's soname, the unversioned name, then
// the Android vendor paths.
std::vector<std::string> DefaultOpenClLibraries();

// Loads the OpenCL library once per process; thread-safe. `explicit_path`
// (e.g. --opencl-library), if not empty, is the only library tried; else
// the value of kOpenClLibraryEnv, if set and not empty, is the only one
// tried; else DefaultOpenClLibraries() in order, the first that loads and
// has clGetPlatformIDs wins.
// Errors: NOT_FOUND naming every library tried and, for each, dlerror()
// (or the missing clGetPlatformIDs); FAILED_PRECONDITION when OpenCL was
// already loaded from another library than `explicit_path`. A later call
// returns the first call's result.
absl::Status LoadOpenCL(const std::string& explicit_path);

// The library that LoadOpenCL() (or the first cl* call) loaded, as it was
// named to dlopen; empty when none is loaded.
std::string LoadedOpenClLibrary();

// The forwarded cl* functions that the loaded library lacks (their calls
// return CL_INVALID_OPERATION); empty when none is loaded.
std::vector<std::string> MissingOpenClFunctions();

}  // namespace tunefleet::opencl

#endif  // TUNEFLEET_OPENCL_OPENCL_LOADER_H_
