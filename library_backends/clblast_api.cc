#include "library_backends/clblast_api.h"

#include <dlfcn.h>

#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"

// With CLBlast's header at build time, the pointer types of clblast_api.h
// are checked against its declarations: same arity, and each parameter of
// the same size and class (integer, floating point, pointer), which is
// what the calling convention depends on. The agent itself needs neither
// the header nor the library.
#if __has_include(<clblast_c.h>)
#include <clblast_c.h>

namespace {

template <typename A, typename B>
struct SameAbi : std::false_type {};
template <typename R1, typename... P1, typename R2, typename... P2>
struct SameAbi<R1 (*)(P1...), R2 (*)(P2...)>
    : std::bool_constant<
          sizeof(R1) == sizeof(R2) && sizeof...(P1) == sizeof...(P2) &&
          ((sizeof(P1) == sizeof(P2) &&
            std::is_floating_point_v<P1> == std::is_floating_point_v<P2> &&
            std::is_pointer_v<P1> == std::is_pointer_v<P2>)&&...)> {};

using Api = tunefleet::library_backends::ClblastApi;
static_assert(SameAbi<Api::Sgemm, decltype(&CLBlastSgemm)>::value);
static_assert(SameAbi<Api::Hgemm, decltype(&CLBlastHgemm)>::value);
static_assert(SameAbi<Api::SgemmStridedBatched,
                      decltype(&CLBlastSgemmStridedBatched)>::value);
static_assert(SameAbi<Api::HgemmStridedBatched,
                      decltype(&CLBlastHgemmStridedBatched)>::value);
static_assert(SameAbi<Api::Convgemm, decltype(&CLBlastSconvgemm)>::value);
static_assert(SameAbi<Api::Convgemm, decltype(&CLBlastHconvgemm)>::value);
static_assert(
    static_cast<int>(CLBlastLayoutRowMajor) ==
        static_cast<int>(tunefleet::library_backends::kClblastRowMajor) &&
    static_cast<int>(CLBlastLayoutColMajor) ==
        static_cast<int>(tunefleet::library_backends::kClblastColMajor) &&
    static_cast<int>(CLBlastTransposeNo) ==
        static_cast<int>(tunefleet::library_backends::kClblastNoTranspose) &&
    static_cast<int>(CLBlastKernelModeCrossCorrelation) ==
        static_cast<int>(
            tunefleet::library_backends::kClblastCrossCorrelation) &&
    CLBlastSuccess == 0);

}  // namespace
#endif

namespace tunefleet::library_backends {

namespace {

template <typename Fn>
absl::Status Read(void* handle, const char* name, Fn* out) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    return absl::NotFoundError(absl::StrCat("the library has no ", name));
  }
  *out = reinterpret_cast<Fn>(symbol);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClblastApi> ReadClblastApi(void* handle) {
  ClblastApi api;
  for (absl::Status s :
       {Read(handle, "CLBlastSgemm", &api.sgemm),
        Read(handle, "CLBlastHgemm", &api.hgemm),
        Read(handle, "CLBlastSgemmStridedBatched", &api.sgemm_strided_batched),
        Read(handle, "CLBlastHgemmStridedBatched", &api.hgemm_strided_batched),
        Read(handle, "CLBlastSconvgemm", &api.sconvgemm),
        Read(handle, "CLBlastHconvgemm", &api.hconvgemm)}) {
    if (!s.ok()) return s;
  }
  return api;
}

std::string ClblastStatusName(ClblastStatus status) {
  // clblast_c.h (CLBlast 1.5.3), CLBlastStatusCode.
  static constexpr std::pair<int, const char*> kNames[] = {
      {0, "CLBlastSuccess"},
      {-3, "CLBlastOpenCLCompilerNotAvailable"},
      {-4, "CLBlastTempBufferAllocFailure"},
      {-5, "CLBlastOpenCLOutOfResources"},
      {-6, "CLBlastOpenCLOutOfHostMemory"},
      {-11, "CLBlastOpenCLBuildProgramFailure"},
      {-30, "CLBlastInvalidValue"},
      {-36, "CLBlastInvalidCommandQueue"},
      {-38, "CLBlastInvalidMemObject"},
      {-42, "CLBlastInvalidBinary"},
      {-43, "CLBlastInvalidBuildOptions"},
      {-44, "CLBlastInvalidProgram"},
      {-45, "CLBlastInvalidProgramExecutable"},
      {-46, "CLBlastInvalidKernelName"},
      {-47, "CLBlastInvalidKernelDefinition"},
      {-48, "CLBlastInvalidKernel"},
      {-49, "CLBlastInvalidArgIndex"},
      {-50, "CLBlastInvalidArgValue"},
      {-51, "CLBlastInvalidArgSize"},
      {-52, "CLBlastInvalidKernelArgs"},
      {-53, "CLBlastInvalidLocalNumDimensions"},
      {-54, "CLBlastInvalidLocalThreadsTotal"},
      {-55, "CLBlastInvalidLocalThreadsDim"},
      {-56, "CLBlastInvalidGlobalOffset"},
      {-57, "CLBlastInvalidEventWaitList"},
      {-58, "CLBlastInvalidEvent"},
      {-59, "CLBlastInvalidOperation"},
      {-61, "CLBlastInvalidBufferSize"},
      {-63, "CLBlastInvalidGlobalWorkSize"},
      {-1024, "CLBlastNotImplemented"},
      {-1022, "CLBlastInvalidMatrixA"},
      {-1021, "CLBlastInvalidMatrixB"},
      {-1020, "CLBlastInvalidMatrixC"},
      {-1019, "CLBlastInvalidVectorX"},
      {-1018, "CLBlastInvalidVectorY"},
      {-1017, "CLBlastInvalidDimension"},
      {-1016, "CLBlastInvalidLeadDimA"},
      {-1015, "CLBlastInvalidLeadDimB"},
      {-1014, "CLBlastInvalidLeadDimC"},
      {-1013, "CLBlastInvalidIncrementX"},
      {-1012, "CLBlastInvalidIncrementY"},
      {-1011, "CLBlastInsufficientMemoryA"},
      {-1010, "CLBlastInsufficientMemoryB"},
      {-1009, "CLBlastInsufficientMemoryC"},
      {-1008, "CLBlastInsufficientMemoryX"},
      {-1007, "CLBlastInsufficientMemoryY"},
      {-2050, "CLBlastInsufficientMemoryTemp"},
      {-2049, "CLBlastInvalidBatchCount"},
      {-2048, "CLBlastInvalidOverrideKernel"},
      {-2047, "CLBlastMissingOverrideParameter"},
      {-2046, "CLBlastInvalidLocalMemUsage"},
      {-2045, "CLBlastNoHalfPrecision"},
      {-2044, "CLBlastNoDoublePrecision"},
      {-2043, "CLBlastInvalidVectorScalar"},
      {-2042, "CLBlastInsufficientMemoryScalar"},
      {-2041, "CLBlastDatabaseError"},
      {-2040, "CLBlastUnknownError"},
      {-2039, "CLBlastUnexpectedError"},
  };
  for (const auto& [code, name] : kNames) {
    if (code == status) return name;
  }
  return absl::StrCat("CLBlastStatusCode(", status, ")");
}

}  // namespace tunefleet::library_backends
