// Library entries: calls into a vendor library that measured faster than
// every generated kernel for their workload. The emitted CMake package
// defines TUNEFLEET_TUNED_CLBLAST and links CLBlast only when some entry
// calls it; each routine takes its arguments in the order tunefleet's agent
// documents (library_backends/library.h in tunefleet).
#include <cstring>
#include <string>
#include <vector>

#include "tuned_runtime.h"
#include "tuned_table.h"
#include "tunefleet_model.h"

#ifdef TUNEFLEET_TUNED_CLBLAST
#include <clblast_c.h>
#endif

namespace tunefleet_tuned::internal {
namespace {

// A call's arguments split by kind, each in the order the call lists them.
struct CallArgs {
  std::vector<long long> ints;
  std::vector<cl_mem> buffers;
  std::vector<float> floats;
};

CallArgs Split(const LibraryCall& call, const cl_mem* buffers,
               const float* floats) {
  CallArgs out;
  const Arg* args = call.args != nullptr ? call.args : &kArgs[call.first_arg];
  for (int i = 0; i < call.num_args; ++i) {
    const Arg& a = args[i];
    if (a.kind == 'i') out.ints.push_back(a.value);
    if (a.kind == 'b') out.buffers.push_back(buffers[a.value]);
    if (a.kind == 'f') out.floats.push_back(floats[a.value]);
  }
  return out;
}

#ifdef TUNEFLEET_TUNED_CLBLAST
// fp32 and fp16 (cl_half bits) forms of one CLBlast GEMM call: the
// strided-batched routine for gemm_batched_b (batch > 0), else the plain
// one, as the agent measured them.
cl_int Gemm(bool fp16, CLBlastLayout layout, size_t m, size_t n, size_t k,
            cl_mem a, size_t a_ld, size_t a_stride, cl_mem b, size_t b_ld,
            size_t b_stride, cl_mem c, size_t c_ld, size_t c_stride,
            size_t batch, cl_command_queue* queue, cl_event* event) {
  const CLBlastTranspose no = CLBlastTransposeNo;
  if (batch == 0 && fp16) {
    return CLBlastHgemm(layout, no, no, m, n, k, 0x3c00, a, 0, a_ld, b, 0, b_ld,
                        0, c, 0, c_ld, queue, event);
  }
  if (batch == 0) {
    return CLBlastSgemm(layout, no, no, m, n, k, 1.0f, a, 0, a_ld, b, 0, b_ld,
                        0.0f, c, 0, c_ld, queue, event);
  }
  if (fp16) {
    return CLBlastHgemmStridedBatched(
        layout, no, no, m, n, k, 0x3c00, a, 0, a_ld, a_stride, b, 0, b_ld,
        b_stride, 0, c, 0, c_ld, c_stride, batch, queue, event);
  }
  return CLBlastSgemmStridedBatched(layout, no, no, m, n, k, 1.0f, a, 0, a_ld,
                                    a_stride, b, 0, b_ld, b_stride, 0.0f, c, 0,
                                    c_ld, c_stride, batch, queue, event);
}

// batch x (C_i(m x n) = A(m x k) * B_i(k x n)), row-major and dense, A
// shared (batch 0: one plain GEMM); `swap`: as the column-major
// C^T = B^T * A^T.
cl_int BatchedGemm(const std::vector<long long>& i, size_t batch, bool swap,
                   const std::vector<cl_mem>& b, bool fp16,
                   cl_command_queue* queue, cl_event* event) {
  const size_t m = i[0], n = i[1], k = i[2];
  if (swap) {
    return Gemm(fp16, CLBlastLayoutColMajor, n, m, k, b[1], n, k * n, b[0], k,
                0, b[2], n, m * n, batch, queue, event);
  }
  return Gemm(fp16, CLBlastLayoutRowMajor, m, n, k, b[0], k, 0, b[1], n, k * n,
              b[2], n, m * n, batch, queue, event);
}

// One convgemm call over `batch` images from the given element offsets.
cl_int Convgemm(const std::vector<long long>& i, size_t batch, size_t in_at,
                size_t out_at, const std::vector<cl_mem>& b, bool fp16,
                cl_command_queue* queue, cl_event* event) {
  const CLBlastKernelMode mode = CLBlastKernelModeCrossCorrelation;
  if (fp16) {
    return CLBlastHconvgemm(mode, i[0], i[1], i[2], i[3], i[4], i[5], i[6],
                            i[7], i[8], i[9], i[10], i[11], batch, b[0], in_at,
                            b[1], 0, b[2], out_at, queue, event);
  }
  return CLBlastSconvgemm(mode, i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7],
                          i[8], i[9], i[10], i[11], batch, b[0], in_at, b[1], 0,
                          b[2], out_at, queue, event);
}

// NCHW input, OIHW weight, NCHW output, cross-correlation as ONNX Conv;
// `per_image`: one call per image.
cl_int Conv(const std::vector<long long>& i, bool per_image,
            const std::vector<cl_mem>& b, bool fp16, cl_command_queue* queue,
            cl_event* event) {
  const long long batch = i[12];
  if (!per_image) return Convgemm(i, batch, 0, 0, b, fp16, queue, event);
  const long long out_h = (i[1] + 2 * i[5] - i[9] * (i[3] - 1) - 1) / i[7] + 1;
  const long long out_w = (i[2] + 2 * i[6] - i[10] * (i[4] - 1) - 1) / i[8] + 1;
  for (long long image = 0; image < batch; ++image) {
    // The queue is in order: only the last call's event is kept.
    cl_event done = nullptr;
    const cl_int err = Convgemm(i, 1, image * i[0] * i[1] * i[2],
                                image * i[11] * out_h * out_w, b, fp16, queue,
                                event != nullptr ? &done : nullptr);
    if (err != CL_SUCCESS) return err;
    if (event == nullptr) continue;
    if (image + 1 == batch) {
      *event = done;
    } else {
      clReleaseEvent(done);
    }
  }
  return CL_SUCCESS;
}

// The routines and argument orders of tunefleet's agent (gemm: m, n, k, a,
// b, c [, swap]; gemm_batched_b: m, n, k, batch, a, b, c [, swap];
// convgemm: channels, height, width, kernel_h, kernel_w, pad_h, pad_w,
// stride_h, stride_w, dilation_h, dilation_w, num_kernels, batch, input,
// weight, output [, per_image]). CLBlast's status codes are OpenCL's where
// they overlap and its own (-1024 to -2048) beyond them; both are returned
// as they are.
cl_int EnqueueClblast(cl_command_queue queue, const std::string& routine,
                      const CallArgs& a, bool fp16, cl_event* event) {
  const std::vector<long long>& i = a.ints;
  if (a.buffers.size() != 3) return CL_INVALID_OPERATION;
  if (routine == "gemm" && (i.size() == 3 || i.size() == 4)) {
    return BatchedGemm(i, 0, i.size() == 4 && i[3] != 0, a.buffers, fp16,
                       &queue, event);
  }
  if (routine == "gemm_batched_b" && (i.size() == 4 || i.size() == 5)) {
    return BatchedGemm(i, i[3], i.size() == 5 && i[4] != 0, a.buffers, fp16,
                       &queue, event);
  }
  if (routine == "convgemm" && (i.size() == 13 || i.size() == 14)) {
    return Conv(i, i.size() == 14 && i[13] != 0, a.buffers, fp16, &queue,
                event);
  }
  return CL_INVALID_OPERATION;
}
#endif

}  // namespace

cl_int EnqueueLibraryCall(cl_command_queue queue, const LibraryCall& call,
                          const cl_mem* buffers, const float* floats, bool fp16,
                          cl_event* event) {
  const CallArgs args = Split(call, buffers, floats);
#ifdef TUNEFLEET_TUNED_CLBLAST
  if (std::strcmp(call.library, "clblast") == 0) {
    return EnqueueClblast(queue, call.routine, args, fp16, event);
  }
#endif
  (void)args;
  (void)queue;
  (void)fp16;
  (void)event;
  return CL_INVALID_OPERATION;  // a library this build was not linked with
}

namespace {

// The libraries this library was linked with as the model runtime's
// LibraryCalls (tunefleet_model.h): a plan's library steps call CLBlast
// as the kernel table's library entries do.
class LinkedLibraryCalls : public LibraryCalls {
 public:
  bool Has(const std::string& library,
           const std::string& routine) const override {
#ifdef TUNEFLEET_TUNED_CLBLAST
    return library == "clblast" &&
           (routine == "gemm" || routine == "gemm_batched_b" ||
            routine == "convgemm");
#else
    (void)library;
    (void)routine;
    return false;
#endif
  }

  cl_int Enqueue(const std::string& library, const std::string& routine,
                 const std::vector<LibraryArgument>& args,
                 cl_command_queue queue, cl_event* done,
                 std::string* error) override {
    if (!Has(library, routine)) {
      *error = "this library was built without " + library;
      return kModelLibraryMissing;
    }
#ifdef TUNEFLEET_TUNED_CLBLAST
    CallArgs split;
    for (const LibraryArgument& a : args) {
      if (a.kind == LibraryArgument::kInteger) split.ints.push_back(a.integer);
      if (a.kind == LibraryArgument::kBuffer) split.buffers.push_back(a.buffer);
      if (a.kind == LibraryArgument::kFloat) {
        split.floats.push_back(static_cast<float>(a.real));
      }
    }
    const cl_int err = EnqueueClblast(queue, routine, split, false, done);
    if (err != CL_SUCCESS) {
      *error = "CLBlast " + routine + " returned " + std::to_string(err);
    }
    return err;
#else
    (void)args;
    (void)queue;
    (void)done;
    return kModelLibraryMissing;
#endif
  }
};

}  // namespace

}  // namespace tunefleet_tuned::internal

namespace tunefleet_tuned {

LibraryCalls* LinkedLibraries() {
  static internal::LinkedLibraryCalls calls;
  return &calls;
}

}  // namespace tunefleet_tuned
