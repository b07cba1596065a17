// Vendor libraries that a trial may call in place of a generated kernel
// (v1::LibraryCall; docs/LIBRARY_BACKENDS.md): the interface a backend
// implements, its arguments as the agent resolves them, and the routines of
// each backend with their argument order.
//
// A backend is loaded at run time (dlopen; registry.h), so that the agent
// has no link-time dependency on any vendor library: where a library is
// missing, its templates' configs are simply absent (their constraint
// `library_<name> == 1` fails on the agent's DeviceInfo.libraries).
//
// Routines of the CLBlast backend ("clblast", clblast_backend.h). Every
// matrix is row-major and dense (leading dimension = its row length); C is
// overwritten (alpha 1, beta 0); no transposes. Buffers are fp32, or all
// fp16 (CLBlast's H routines, which need cl_khr_fp16 on the device). The
// arguments, in this order ([...]: optional, 0 when left out):
//   gemm:            m, n, k, a, b, c [, swap]
//                    C(m x n) = A(m x k) * B(k x n). swap 1: computed as
//                    the column-major C^T(n x m) = B^T(n x k) * A^T(k x m),
//                    the same memory through another code path of CLBlast
//                    (a tuning knob; CLBlast{S,H}gemm).
//   gemm_batched_b:  m, n, k, batch, a, b, c [, swap]
//                    C_i(m x n) = A(m x k) * B_i(k x n) for i < batch, A
//                    shared, B_i at i*k*n and C_i at i*m*n elements
//                    (CLBlast{S,H}gemmStridedBatched, A's stride 0); swap
//                    as for gemm.
//   convgemm:        channels, height, width, kernel_h, kernel_w, pad_h,
//                    pad_w, stride_h, stride_w, dilation_h, dilation_w,
//                    num_kernels, batch, input, weight, output
//                    [, per_image]
//                    2D cross-correlation (what ONNX Conv computes), groups
//                    1, zero padding: input NCHW (batch x channels x height
//                    x width), weight OIHW (num_kernels x channels x
//                    kernel_h x kernel_w), output NCHW (batch x num_kernels
//                    x out_h x out_w), out = (in + 2*pad - dilation*(kernel
//                    - 1) - 1) / stride + 1 (CLBlast{S,H}convgemm,
//                    CLBlastKernelModeCrossCorrelation). per_image 1: one
//                    call per image instead of one for the batch (a tuning
//                    knob). A dilated window larger than the padded input
//                    is refused (ONNX's output is empty there, CLBlast's
//                    is not).
// Integers are KernelArg i32 or u32 (sizes >= 1, padding >= 0, flags 0 or
// 1, all below 2^31), buffers KernelArg buffer; a buffer may be longer
// than the routine needs, never shorter.
#ifndef TUNEFLEET_LIBRARY_BACKENDS_LIBRARY_H_
#define TUNEFLEET_LIBRARY_BACKENDS_LIBRARY_H_

#include <CL/cl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::library_backends {

// Releases a cl_event (clReleaseEvent).
struct EventRelease {
  void operator()(cl_event event) const;
};
// An event a library call enqueued, owned (released on destruction).
using LibraryEvent =
    std::unique_ptr<std::remove_pointer_t<cl_event>, EventRelease>;

// One argument of a library call, resolved by the agent: a buffer of the
// workload (its device memory, name, dtype and element count), an integer
// or a float.
struct LibraryArg {
  enum class Kind { kBuffer, kInteger, kFloat };
  Kind kind = Kind::kInteger;
  // kBuffer: not owned; the workload's buffer outlives the call.
  cl_mem buffer = nullptr;
  std::string name;  // the BufferSpec's name, for errors
  tunefleet::v1::Dtype dtype = tunefleet::v1::DTYPE_UNSPECIFIED;
  uint64_t elements = 0;
  // kInteger (from i32 or u32) and kFloat (from f32).
  int64_t integer = 0;
  double real = 0;

  static LibraryArg Buffer(cl_mem mem, std::string name,
                           tunefleet::v1::Dtype dtype, uint64_t elements);
  static LibraryArg Integer(int64_t value);
  static LibraryArg Float(double value);
};

// A vendor library the agent can call. Implementations are thread-compatible
// (the measurer calls one from one thread at a time).
class LibraryBackend {
 public:
  virtual ~LibraryBackend() = default;

  // The name trials use in LibraryCall.library, e.g. "clblast".
  virtual const std::string& name() const = 0;
  // The library's version as reported in DeviceInfo.libraries ("1.5.3"),
  // or "unknown" where it cannot be read.
  virtual const std::string& version() const = 0;
  // The routines Enqueue() takes, e.g. {"convgemm", "gemm", ...}.
  virtual std::vector<std::string> routines() const = 0;
  bool HasRoutine(absl::string_view routine) const;

  // Enqueues `routine` with `args` (in the order this header documents) on
  // `queue` (an in-order queue with profiling; the call's commands run
  // after everything enqueued before it). Returns the events of the
  // commands it can name, the last one ending the call's work; a library
  // may enqueue more commands than it returns events for (CLBlast returns
  // the last kernel's), so the measurer times a call from a marker before
  // it to the end of its last event (measurer: MeasureLibraryTrial).
  // The caller waits for nothing before the call returns; a library may
  // itself wait on the queue inside the call (CLBlast's convgemm does in
  // its im2col form, not used by CLBlast 1.5.3), so a backend's commands
  // must not be held back behind a user event.
  // Errors: UNIMPLEMENTED for a routine the backend does not have;
  // INVALID_ARGUMENT naming the argument (its index and role) that is
  // missing, of the wrong kind, out of range, or a buffer too short or of
  // another dtype, or a shape the backend refuses; INTERNAL naming the
  // library function and its status code name when the library fails.
  virtual absl::StatusOr<std::vector<LibraryEvent>> Enqueue(
      absl::string_view routine, absl::Span<const LibraryArg> args,
      cl_command_queue queue) = 0;
};

}  // namespace tunefleet::library_backends

#endif  // TUNEFLEET_LIBRARY_BACKENDS_LIBRARY_H_
