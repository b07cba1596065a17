// What the runtime's files share (not installed): tuned_runtime.cc looks
// entries up, builds programs and launches kernels; tuned_gemm.cc is the
// BLAS-style Gemm() of tunefleet_tuned.h on top of it.
#ifndef TUNEFLEET_TUNED_RUNTIME_H_
#define TUNEFLEET_TUNED_RUNTIME_H_

#include <map>
#include <string>
#include <vector>

#include "cl_objects.h"  // Mem, Event, Kernel (RAII); DeviceText
#include "tuned_table.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned::internal {

// The program of `source` built with `options` for `device` of `context`,
// from the cache (built on first use). Returns CL_SUCCESS or the OpenCL
// error of creating or building it.
cl_int GetProgram(cl_context context, cl_device_id device, const char* source,
                  const std::string& options, cl_program* out);

// A kernel launch, besides its program.
struct Launch {
  const char* source;
  const char* kernel;
  const std::string* options;
  int dims;
  const size_t* global;
  const size_t* local;  // all 0: let the runtime choose
  const Arg* args;
  int num_args;
  const long long* ints;  // for 'i' args of shape-generic launches, or null
  bool fp16 = false;      // the workload's dtype: images of half texels
};

// Makes the image an 'm' argument reads from `buffer` (`rows` rows of
// `row_elements` elements, fp16 or fp32), on `queue` after the wait list:
// a view of the buffer, or an image filled by a copy or the packing kernel
// (tuned_image.cc). `ready` receives the event of the fill (null for a view
// with nothing to wait for); the caller releases `image` and `ready`.
// Returns CL_SUCCESS or the OpenCL error.
cl_int MakeImage(cl_command_queue queue, cl_mem buffer, size_t rows,
                 size_t row_elements, bool fp16, cl_uint num_wait,
                 const cl_event* wait, cl_mem* image, cl_event* ready);

// What a device's extension list says that images and checks need, read
// once per device and kept.
struct DeviceFeatures {
  bool image2d_from_buffer = false;  // cl_khr_image2d_from_buffer
  bool khr_fp16 = false;             // cl_khr_fp16
  // CL_DEVICE_IMAGE_PITCH_ALIGNMENT, texels (0: none stated); read only
  // with image2d_from_buffer.
  cl_uint pitch_alignment = 0;
};
DeviceFeatures FeaturesOf(cl_device_id device);

// `text` as an integer (an optional sign, then decimal digits, up to the
// string's end or a NUL byte in it); false, `out` unchanged, for anything
// else or a value out of range. For workload strings and table files.
bool ParseInteger(const std::string& text, long long* out);

// Whether a canonical workload string's dtype is fp16.
bool IsFp16(const char* workload);

// Enqueues a library entry: its call, then its epilogue kernel when it
// has one (waiting for the call). `event` receives the last command's.
cl_int RunLibraryEntry(cl_command_queue queue, const KernelEntry& e,
                       const cl_mem* buffers, const float* floats,
                       cl_event* event);

// Enqueues a library entry's call (tuned_library.cc) with the caller's
// buffers and floats; `fp16`: the workload's dtype is fp16. Returns
// CL_SUCCESS, the library's status code, or CL_INVALID_OPERATION for a
// library or routine this build does not call.
cl_int EnqueueLibraryCall(cl_command_queue queue, const LibraryCall& call,
                          const cl_mem* buffers, const float* floats, bool fp16,
                          cl_event* event);

// Enqueues `l` on `queue` with the caller's buffers and floats (indexed by
// 'b' and 'f' args), and for 's' args the queue's scratch buffers (kept in
// a cache per (queue, context, source, kernel, argument), created with
// clCreateBuffer and zeroed by clEnqueueFillBuffer, grown and zeroed again
// when a launch needs more bytes, until ReleaseCachedPrograms() or
// ReleaseScratchBuffers()). A launch with scratch waits for the last
// command that used each of its scratch buffers (their fill, or the
// previous launch), so that kernels sharing one keep their order even on
// an out-of-order queue. Returns CL_SUCCESS or the OpenCL error.
cl_int Enqueue(cl_command_queue queue, const Launch& l, const cl_mem* buffers,
               const float* floats, cl_uint num_wait_events,
               const cl_event* wait_events, cl_event* event);

// Which of kDevices (driver revisions of the tuned keys) a device on
// driver `driver` uses, by index: per key, the revision whose driver is
// `driver`, else the key's latest revision (the highest number: drivers
// have no order of their own, and the latest is the one the key's agents
// last brought). Entries of the other revisions are never used for it.
std::vector<bool> ActiveRevisions(const std::string& driver);

// The exact entry of a canonical workload on `device`: same device name,
// else same vendor, else any tuned device, each among the revisions
// ActiveRevisions() gives for the device's driver; null when there is
// none. `match`, when not null, receives "name", "vendor" or "any".
const KernelEntry* FindEntry(cl_device_id device, const char* workload,
                             const char** match = nullptr);

// The entry of a canonical workload in the table LoadTable() loaded for
// devices named `device_name` (CL_DEVICE_NAME), or null: no table is
// loaded, it is another device's, or it has no entry for the workload.
// Loaded entries are kept until the process ends, so the pointer stays
// valid after another LoadTable() or UnloadTable().
const KernelEntry* FindLoadedEntry(const std::string& device_name,
                                   const char* workload);

// The CL_DRIVER_VERSIONs the records of device key `key` were measured
// on: the loaded table's when it is of that key, then each revision of the
// built-in table's. False when neither knows the key.
bool DriversOfKey(const std::string& key, std::vector<std::string>* drivers);

// An exact entry's kernel arguments (num_args of them), library call
// (library >= 0), device key, and driver revision and version, built in
// or loaded.
const Arg* ArgsOf(const KernelEntry& e);
const LibraryCall& CallOf(const KernelEntry& e);
const char* KeyOf(const KernelEntry& e);
const char* DriverOf(const KernelEntry& e);
int RevisionOf(const KernelEntry& e);

// CL_DEVICE_NAME and CL_DRIVER_VERSION of `device`, trailing NULs and
// spaces removed; "" when the query fails. DriverVersion() returns the
// value of the environment variable TUNEFLEET_TUNED_DRIVER_VERSION instead
// when it is set and not empty: a test hook that makes the library act as
// on another driver (docs/TABLES.md in tunefleet).
std::string DeviceName(cl_device_id device);
std::string DriverVersion(cl_device_id device);

// The exact entry Gemm() and DescribeGemm() use for the row-major fp32
// problem m x n x k on `device` (FindEntry of "gemm M=m N=n K=k fp32"):
// a kernel (not a library call) taking A, B and C and no floats; null when
// there is none, and they use the shape-generic template.
const KernelEntry* FindGemmEntry(cl_device_id device, size_t m, size_t n,
                                 size_t k, const char** match = nullptr);

// The kernel launch of a non-library exact entry; `options` holds its
// build options and must outlive the launch.
Launch LaunchOf(const KernelEntry& e, const std::string& options);

// A shape of a shape-generic template: its variables up to the knobs.
struct Shape {
  int tmpl = -1;  // index into kShapeTemplates
  std::string dtype;
  std::vector<double> vars;
};

// The shape of `op` with `dims` (in the op's order) and attributes by name
// (missing ones at their default). False without a template for it or
// with an unknown attribute value.
bool MakeShape(const std::string& op, const std::vector<long long>& dims,
               const std::string& dtype,
               const std::map<std::string, std::string>& attrs, Shape* out);

// The launch of a shape with the config its lookup picks on a device.
struct ShapeRun {
  const ShapeTemplate* tmpl = nullptr;
  const char* source = nullptr;
  ShapeLaunch launch;
  bool fp16 = false;  // the shape's dtype

  // The launch, valid while this ShapeRun is.
  Launch AsLaunch() const {
    return Launch{source,        tmpl->kernel, &launch.options, launch.dims,
                  launch.global, launch.local, tmpl->args,      tmpl->num_args,
                  launch.ints,   fp16};
  }
};

// Looks `s` up for `device` (tunefleet_tuned.h) and computes its launch.
// Returns CL_SUCCESS, the OpenCL error of a device query, or
// CL_INVALID_WORK_GROUP_SIZE when the picked config fails the template's
// checks on this device.
cl_int PrepareShape(cl_device_id device, const Shape& s, ShapeRun* out);

}  // namespace tunefleet_tuned::internal

#endif  // TUNEFLEET_TUNED_RUNTIME_H_
