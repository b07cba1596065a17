#include "library_backends/clblast_backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "library_backends/routine_args.h"

namespace tunefleet::library_backends {

namespace {

constexpr char kName[] = "clblast";

// The argument roles of each routine, in library.h's order; the last is
// optional (RoutineArgs::CheckCount).
constexpr const char* kGemmRoles[] = {"m", "n", "k", "a", "b", "c", "swap"};
constexpr const char* kGemmBatchedBRoles[] = {"m", "n", "k", "batch",
                                              "a", "b", "c", "swap"};
constexpr const char* kConvgemmRoles[] = {
    "channels",   "height",      "width",    "kernel_h", "kernel_w",
    "pad_h",      "pad_w",       "stride_h", "stride_w", "dilation_h",
    "dilation_w", "num_kernels", "batch",    "input",    "weight",
    "output",     "per_image"};

// The loaded backends by library name; never freed (see Load()).
absl::Mutex loaded_mutex;
std::map<std::string, std::shared_ptr<ClblastBackend>>& Loaded() {
  static auto* loaded =
      new std::map<std::string, std::shared_ptr<ClblastBackend>>;
  return *loaded;
}

// The file the library was loaded from, its symbolic links resolved.
std::string LoadedPath(const void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "";
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return resolved;
  return info.dli_fname;
}

// The status of a failed CLBlast call: INTERNAL naming the function and
// the status code's name.
absl::Status CallError(absl::string_view function, ClblastStatus status) {
  return absl::InternalError(absl::StrCat(
      function, ": ", ClblastStatusName(status), " (", status, ")"));
}

std::vector<LibraryEvent> Events(cl_event event) {
  std::vector<LibraryEvent> events;
  if (event != nullptr) events.emplace_back(event);
  return events;
}

bool IsFp16(tunefleet::v1::Dtype dtype) {
  return dtype == tunefleet::v1::DTYPE_FP16;
}

}  // namespace

std::string VersionFromLibraryPath(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view file =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t so = file.find(".so.");
  if (so == absl::string_view::npos) return "unknown";
  const absl::string_view version = file.substr(so + 4);
  if (version.empty()) return "unknown";
  for (char c : version) {
    if (!absl::ascii_isdigit(c) && c != '.') return "unknown";
  }
  return std::string(version);
}

absl::StatusOr<std::shared_ptr<ClblastBackend>> ClblastBackend::Load(
    const std::string& library) {
  absl::MutexLock lock(&loaded_mutex);
  auto it = Loaded().find(library);
  if (it != Loaded().end()) return it->second;
  dlerror();  // clears an earlier error
  // Never closed: CLBlast's static caches hold OpenCL programs, and its
  // destructors must not run while the agent's OpenCL objects live.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(absl::StrCat("cannot load ", library, ": ",
                                            error ? error : "dlopen failed"));
  }
  absl::StatusOr<ClblastApi> api = ReadClblastApi(handle);
  if (!api.ok()) {
    dlclose(handle);
    return absl::NotFoundError(
        absl::StrCat(library, ": ", api.status().message()));
  }
  auto backend = std::make_shared<ClblastBackend>(
      *api, VersionFromLibraryPath(
                LoadedPath(reinterpret_cast<const void*>(api->sgemm))));
  Loaded()[library] = backend;
  return backend;
}

const std::string& ClblastBackend::name() const {
  static const std::string* name = new std::string(kName);
  return *name;
}

std::vector<std::string> ClblastBackend::routines() const {
  return {"convgemm", "gemm", "gemm_batched_b"};
}

absl::StatusOr<std::vector<LibraryEvent>> ClblastBackend::Enqueue(
    absl::string_view routine, absl::Span<const LibraryArg> args,
    cl_command_queue queue) {
  if (routine == "gemm") return Gemm(args, queue, /*batched=*/false);
  if (routine == "gemm_batched_b") return Gemm(args, queue, /*batched=*/true);
  if (routine == "convgemm") return Convgemm(args, queue);
  return absl::UnimplementedError(
      absl::StrCat("library clblast has no routine '", routine,
                   "' (it has convgemm, gemm, gemm_batched_b)"));
}

absl::StatusOr<std::vector<LibraryEvent>> ClblastBackend::Gemm(
    absl::Span<const LibraryArg> args, cl_command_queue queue, bool batched) {
  const RoutineArgs in(batched ? "clblast gemm_batched_b" : "clblast gemm",
                       args,
                       batched ? absl::MakeConstSpan(kGemmBatchedBRoles)
                               : absl::MakeConstSpan(kGemmRoles));
  const int sizes = batched ? 4 : 3;  // m, n, k[, batch]
  if (absl::Status s = in.CheckCount(sizes + 3); !s.ok()) return s;
  uint64_t v[4] = {0, 0, 0, 1};
  for (int i = 0; i < sizes; ++i) {
    absl::StatusOr<uint64_t> value = in.Size(i);
    if (!value.ok()) return value.status();
    v[i] = *value;
  }
  const uint64_t m = v[0], n = v[1], k = v[2], batch = v[3];
  absl::StatusOr<const LibraryArg*> a =
      in.Buffer(sizes, SaturatingProduct({m, k}));
  if (!a.ok()) return a.status();
  absl::StatusOr<const LibraryArg*> b =
      in.Buffer(sizes + 1, SaturatingProduct({batch, k, n}));
  if (!b.ok()) return b.status();
  absl::StatusOr<const LibraryArg*> c =
      in.Buffer(sizes + 2, SaturatingProduct({batch, m, n}));
  if (!c.ok()) return c.status();
  absl::StatusOr<uint64_t> swapped = in.Size(sizes + 3, 0, 1, /*absent=*/0);
  if (!swapped.ok()) return swapped.status();
  absl::StatusOr<tunefleet::v1::Dtype> dtype = CommonDtype(
      batched ? "clblast gemm_batched_b" : "clblast gemm", {*a, *b, *c});
  if (!dtype.ok()) return dtype.status();
  const bool half = IsFp16(*dtype);

  // Row-major C(m x n) = A(m x k) B(k x n), dense (leading dimensions are
  // row lengths); or, swapped, the same memory as the column-major
  // C^T(n x m) = B^T(n x k) A^T(k x m): B is then CLBlast's first operand.
  // A is shared across the batch (stride 0); B_i and C_i follow each other.
  struct Operand {
    cl_mem mem;
    size_t ld;
    size_t stride;
  };
  const Operand op_a{(*a)->buffer, k, 0};
  const Operand op_b{(*b)->buffer, n, k * n};
  const bool swap = *swapped == 1;
  const ClblastLayout layout = swap ? kClblastColMajor : kClblastRowMajor;
  const size_t rows = swap ? n : m, cols = swap ? m : n;
  const Operand first = swap ? op_b : op_a, second = swap ? op_a : op_b;
  cl_mem c_mem = (*c)->buffer;
  const size_t c_stride = m * n;
  constexpr ClblastTranspose kNo = kClblastNoTranspose;
  cl_event event = nullptr;
  ClblastStatus status = 0;
  const char* function = "";
  if (!batched) {
    function = half ? "CLBlastHgemm" : "CLBlastSgemm";
    status = half ? api_.hgemm(layout, kNo, kNo, rows, cols, k, kHalfOne,
                               first.mem, 0, first.ld, second.mem, 0, second.ld,
                               kHalfZero, c_mem, 0, n, &queue, &event)
                  : api_.sgemm(layout, kNo, kNo, rows, cols, k, 1.0f, first.mem,
                               0, first.ld, second.mem, 0, second.ld, 0.0f,
                               c_mem, 0, n, &queue, &event);
  } else {
    function =
        half ? "CLBlastHgemmStridedBatched" : "CLBlastSgemmStridedBatched";
    status = half ? api_.hgemm_strided_batched(
                        layout, kNo, kNo, rows, cols, k, kHalfOne, first.mem, 0,
                        first.ld, first.stride, second.mem, 0, second.ld,
                        second.stride, kHalfZero, c_mem, 0, n, c_stride, batch,
                        &queue, &event)
                  : api_.sgemm_strided_batched(
                        layout, kNo, kNo, rows, cols, k, 1.0f, first.mem, 0,
                        first.ld, first.stride, second.mem, 0, second.ld,
                        second.stride, 0.0f, c_mem, 0, n, c_stride, batch,
                        &queue, &event);
  }
  if (status != 0) {
    if (event != nullptr) clReleaseEvent(event);
    return CallError(function, status);
  }
  return Events(event);
}

absl::StatusOr<std::vector<LibraryEvent>> ClblastBackend::Convgemm(
    absl::Span<const LibraryArg> args, cl_command_queue queue) {
  const RoutineArgs in("clblast convgemm", args, kConvgemmRoles);
  if (absl::Status s = in.CheckCount(16); !s.ok()) return s;
  // channels .. batch: padding may be 0, everything else at least 1.
  uint64_t v[13];
  for (int i = 0; i < 13; ++i) {
    const bool padding = i == 5 || i == 6;
    absl::StatusOr<uint64_t> value = in.Size(i, padding ? 0 : 1);
    if (!value.ok()) return value.status();
    v[i] = *value;
  }
  const uint64_t channels = v[0], height = v[1], width = v[2];
  const uint64_t kernel_h = v[3], kernel_w = v[4], pad_h = v[5], pad_w = v[6];
  const uint64_t stride_h = v[7], stride_w = v[8];
  const uint64_t dilation_h = v[9], dilation_w = v[10];
  const uint64_t num_kernels = v[11], batch = v[12];
  // Output rows and columns as ONNX Conv defines them. Where the dilated
  // window is larger than the padded input, ONNX's output is empty while
  // CLBlast computes one row (or column): refused.
  const uint64_t window_h = dilation_h * (kernel_h - 1) + 1;
  const uint64_t window_w = dilation_w * (kernel_w - 1) + 1;
  if (height + 2 * pad_h < window_h || width + 2 * pad_w < window_w) {
    return in.Invalid(absl::StrCat("the dilated ", window_h, "x", window_w,
                                   " window is larger than the padded input (",
                                   height + 2 * pad_h, "x", width + 2 * pad_w,
                                   "): the output is empty"));
  }
  const uint64_t out_h = (height + 2 * pad_h - window_h) / stride_h + 1;
  const uint64_t out_w = (width + 2 * pad_w - window_w) / stride_w + 1;
  const uint64_t image = SaturatingProduct({channels, height, width});
  const uint64_t result = SaturatingProduct({num_kernels, out_h, out_w});
  absl::StatusOr<const LibraryArg*> input =
      in.Buffer(13, SaturatingProduct({batch, image}));
  if (!input.ok()) return input.status();
  absl::StatusOr<const LibraryArg*> weight = in.Buffer(
      14, SaturatingProduct({num_kernels, channels, kernel_h, kernel_w}));
  if (!weight.ok()) return weight.status();
  absl::StatusOr<const LibraryArg*> output =
      in.Buffer(15, SaturatingProduct({batch, result}));
  if (!output.ok()) return output.status();
  absl::StatusOr<uint64_t> per_image = in.Size(16, 0, 1, /*absent=*/0);
  if (!per_image.ok()) return per_image.status();
  // CLBlast's im2col matrix: channels*kernel_h*kernel_w x out_h*out_w per
  // image, indexed with ints.
  if (SaturatingProduct({batch, channels, kernel_h, kernel_w, out_h, out_w}) >
      kMaxIndex) {
    return in.Invalid("the im2col matrix would exceed 2^31-1 elements");
  }
  absl::StatusOr<tunefleet::v1::Dtype> dtype =
      CommonDtype("clblast convgemm", {*input, *weight, *output});
  if (!dtype.ok()) return dtype.status();
  const bool half = IsFp16(*dtype);
  const ClblastApi::Convgemm call = half ? api_.hconvgemm : api_.sconvgemm;
  // One call for the batch, or (per_image) one per image at its offsets.
  const uint64_t calls = *per_image == 1 ? batch : 1;
  const uint64_t images_per_call = *per_image == 1 ? 1 : batch;
  std::vector<LibraryEvent> events;
  for (uint64_t i = 0; i < calls; ++i) {
    cl_event event = nullptr;
    const ClblastStatus status = call(
        kClblastCrossCorrelation, channels, height, width, kernel_h, kernel_w,
        pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, num_kernels,
        images_per_call, (*input)->buffer, i * image, (*weight)->buffer, 0,
        (*output)->buffer, i * result, &queue, &event);
    if (status != 0) {
      if (event != nullptr) clReleaseEvent(event);
      return CallError(half ? "CLBlastHconvgemm" : "CLBlastSconvgemm", status);
    }
    if (event != nullptr) events.emplace_back(event);
  }
  return events;
}

}  // namespace tunefleet::library_backends
