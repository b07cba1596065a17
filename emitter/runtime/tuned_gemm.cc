// The BLAS-style Gemm() and GemmStridedBatched() of tunefleet_tuned.h, as
// CLBlast's "indirect" GEMM: helper kernels pack operands the tuned kernel
// cannot read in place into tight row-major temporaries, the tuned kernel
// runs on them, and an epilogue kernel computes C = alpha * T + beta * C.
// The tuned kernels handle any M, N, K (partial tiles in-kernel), so packing
// pads nothing.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tuned_runtime.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace {

// The helper kernels (OpenCL C 1.2). Offsets, steps and strides count fp32
// elements; get_global_id(2) is the GEMM of the batch.
const char kHelperSource[] = R"tfcl(
// Copies the rows x cols matrix whose element (r, c) of GEMM b is at
// src[src_offset + b * src_stride + r * src_row + c * src_col] into the
// tight row-major matrix at dst + b * dst_stride.
__kernel void tunefleet_gemm_pack(const int rows, const int cols,
                                  const __global float* restrict src,
                                  const ulong src_offset, const ulong src_row,
                                  const ulong src_col, const ulong src_stride,
                                  __global float* restrict dst,
                                  const ulong dst_stride) {
  const int c = get_global_id(0);
  const int r = get_global_id(1);
  const ulong b = get_global_id(2);
  if (r >= rows || c >= cols) return;
  dst[b * dst_stride + (ulong)r * cols + c] =
      src[src_offset + b * src_stride + r * src_row + c * src_col];
}

// C = alpha * T + beta * C over the rows x cols matrix C whose element
// (r, c) of GEMM b is at out[c_offset + b * c_stride + r * c_row + c]; T is
// tight row-major at t + b * t_stride. T is not read when alpha == 0 (it
// may then be C's buffer), C's input not when beta == 0.
__kernel void tunefleet_gemm_epilogue(const int rows, const int cols,
                                      const float alpha, const float beta,
                                      const __global float* t,
                                      const ulong t_stride,
                                      __global float* out,
                                      const ulong c_offset, const ulong c_row,
                                      const ulong c_stride) {
  const int c = get_global_id(0);
  const int r = get_global_id(1);
  const ulong b = get_global_id(2);
  if (r >= rows || c >= cols) return;
  const ulong at = c_offset + b * c_stride + r * c_row + c;
  float x = 0.0f;
  if (alpha != 0.0f) x = alpha * t[b * t_stride + (ulong)r * cols + c];
  if (beta != 0.0f) x += beta * out[at];
  out[at] = x;
}
)tfcl";

using internal::Event;
using internal::Kernel;
using internal::Mem;

// a * b + c into *out; false when it overflows size_t.
bool MulAdd(size_t a, size_t b, size_t c, size_t* out) {
  if (b != 0 && a > (SIZE_MAX - c) / b) return false;
  *out = a * b + c;
  return true;
}

size_t RoundUp(size_t x, size_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

bool ValidLayout(Layout layout) {
  return layout == Layout::kRowMajor || layout == Layout::kColMajor;
}

bool ValidTranspose(Transpose t) {
  return t == Transpose::kNo || t == Transpose::kYes ||
         t == Transpose::kConjugate;
}

// The codes one matrix argument answers with.
struct MatrixCodes {
  cl_int invalid;       // kInvalidMatrixX
  cl_int lead_dim;      // kInvalidLeadDimX
  cl_int insufficient;  // kInsufficientMemoryX
};

// A matrix argument as stored: `outer` rows (row-major) or columns
// (column-major) of `inner` elements each, `ld` apart, from `offset`, and
// batch_count such matrices `stride` apart. Returns CL_SUCCESS or the code
// for a null or invalid buffer, an ld below `inner`, or a buffer smaller
// than the last matrix's extent.
cl_int CheckMatrix(cl_mem buffer, size_t offset, size_t ld, size_t stride,
                   size_t batch_count, size_t outer, size_t inner,
                   const MatrixCodes& codes) {
  if (buffer == nullptr) return codes.invalid;
  if (ld < inner) return codes.lead_dim;
  size_t bytes = 0;
  if (clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof(bytes), &bytes, nullptr) !=
      CL_SUCCESS) {
    return codes.invalid;
  }
  // offset + (batch_count - 1) * stride + (outer - 1) * ld + inner
  size_t extent = 0;
  if (!MulAdd(ld, outer - 1, inner, &extent) ||
      !MulAdd(stride, batch_count - 1, extent, &extent) ||
      !MulAdd(offset, 1, extent, &extent) || extent > bytes / sizeof(float)) {
    return codes.insufficient;
  }
  return CL_SUCCESS;
}

// An operand of the row-major problem the tuned kernel runs: element (r, c)
// of the rows x cols matrix of GEMM i is at
// offset + i * stride + r * row_step + c * col_step of `buffer`.
struct Operand {
  cl_mem buffer;
  size_t rows, cols;
  size_t offset, row_step, col_step, stride;

  // op(X) of a row-major X with leading dimension `ld`.
  static Operand Of(cl_mem buffer, bool transposed, size_t rows, size_t cols,
                    size_t offset, size_t ld, size_t stride) {
    return transposed ? Operand{buffer, rows, cols, offset, 1, ld, stride}
                      : Operand{buffer, rows, cols, offset, ld, 1, stride};
  }
  // Whether the tuned kernel reads it as it is: tight row-major from the
  // buffer's first element, for every GEMM of the batch.
  bool InPlace(size_t batch_count) const {
    return offset == 0 && col_step == 1 && row_step == cols &&
           (batch_count == 1 || stride == 0);
  }
};

// Sets a kernel's arguments from `index` on, in order.
cl_int SetArgs(cl_kernel, cl_uint) { return CL_SUCCESS; }
template <typename T, typename... Rest>
cl_int SetArgs(cl_kernel kernel, cl_uint index, const T& value,
               const Rest&... rest) {
  const cl_int err = clSetKernelArg(kernel, index, sizeof(T), &value);
  return err != CL_SUCCESS ? err : SetArgs(kernel, index + 1, rest...);
}

// Where a call runs.
struct Target {
  cl_command_queue queue;
  cl_context context;
  cl_device_id device;
};

// Enqueues helper kernel `name` over cols x rows x batch_count work-items
// (rounded up to 16 x 16 x 1) after `waits`; *event receives its event.
template <typename... Args>
cl_int EnqueueHelper(const Target& target, const char* name, size_t cols,
                     size_t rows, size_t batch_count,
                     const std::vector<cl_event>& waits, Event* event,
                     const Args&... args) {
  cl_program program = nullptr;
  cl_int err = internal::GetProgram(target.context, target.device,
                                    kHelperSource, std::string(), &program);
  if (err != CL_SUCCESS) return err;
  Kernel kernel(clCreateKernel(program, name, &err));
  if (err != CL_SUCCESS) return err;
  err = SetArgs(kernel.get(), 0, args...);
  if (err != CL_SUCCESS) return err;
  const size_t global[3] = {RoundUp(cols, 16), RoundUp(rows, 16), batch_count};
  cl_event done = nullptr;
  err = clEnqueueNDRangeKernel(target.queue, kernel.get(), 3, nullptr, global,
                               nullptr, static_cast<cl_uint>(waits.size()),
                               waits.empty() ? nullptr : waits.data(), &done);
  event->reset(done);
  return err;
}

// A tight row-major temporary of batch_count rows x cols matrices, each
// starting at an address sub-buffers may start at, and one buffer per
// matrix for the tuned kernel (which takes no offset).
struct Temporary {
  Mem whole;
  std::vector<Mem> slices;  // with batch_count > 1
  size_t slice_elements = 0;

  cl_mem matrix(size_t i) const {
    return slices.empty() ? whole.get() : slices[i].get();
  }
};

cl_int MakeTemporary(const Target& target, size_t rows, size_t cols,
                     size_t batch_count, Temporary* out) {
  cl_uint align_bits = 0;
  cl_int err = clGetDeviceInfo(target.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                               sizeof(align_bits), &align_bits, nullptr);
  if (err != CL_SUCCESS) return err;
  const size_t align =
      align_bits / 8 > sizeof(float) ? align_bits / 8 : sizeof(float);
  size_t bytes = 0, total = 0;
  if (!MulAdd(rows, cols, 0, &bytes) ||
      !MulAdd(bytes, sizeof(float), align - 1, &bytes) ||
      !MulAdd(bytes / align * align, batch_count, 0, &total)) {
    return CL_INVALID_BUFFER_SIZE;
  }
  const size_t slice_bytes = bytes / align * align;
  out->slice_elements = slice_bytes / sizeof(float);
  out->whole.reset(
      clCreateBuffer(target.context, CL_MEM_READ_WRITE, total, nullptr, &err));
  if (err != CL_SUCCESS) return err;
  for (size_t i = 0; batch_count > 1 && i < batch_count; ++i) {
    const cl_buffer_region region{i * slice_bytes, slice_bytes};
    out->slices.emplace_back(
        clCreateSubBuffer(out->whole.get(), CL_MEM_READ_WRITE,
                          CL_BUFFER_CREATE_TYPE_REGION, &region, &err));
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

// Packs `x` into a new temporary after `waits`.
cl_int Pack(const Target& target, const Operand& x, size_t batch_count,
            const std::vector<cl_event>& waits, Temporary* out, Event* done) {
  cl_int err = MakeTemporary(target, x.rows, x.cols, batch_count, out);
  if (err != CL_SUCCESS) return err;
  return EnqueueHelper(
      target, "tunefleet_gemm_pack", x.cols, x.rows, batch_count, waits, done,
      static_cast<cl_int>(x.rows), static_cast<cl_int>(x.cols), x.buffer,
      static_cast<cl_ulong>(x.offset), static_cast<cl_ulong>(x.row_step),
      static_cast<cl_ulong>(x.col_step), static_cast<cl_ulong>(x.stride),
      out->whole.get(), static_cast<cl_ulong>(out->slice_elements));
}

// Runs the tuned kernel of the row-major m x n x k problem once per GEMM
// of the batch, after packing A and B where the kernel cannot read them in
// place (those packs wait for `user_waits`). It writes `product`'s
// matrices, or with a null `product` C's buffer (one GEMM, C tight at
// offset 0). Appends the kernels' events to *done.
cl_int RunTuned(const Target& target, size_t m, size_t n, size_t k,
                const Operand& a, const Operand& b, cl_mem c,
                const Temporary* product, size_t batch_count,
                const std::vector<cl_event>& user_waits,
                std::vector<Event>* done) {
  // The exact entry of the shape (as Run() picks it), else the nearest
  // tuned shape of the shape-generic template.
  internal::ShapeRun run;
  std::string options;
  internal::Launch launch{};
  cl_int err = CL_SUCCESS;
  if (const internal::KernelEntry* e =
          internal::FindGemmEntry(target.device, m, n, k)) {
    options = e->options;
    launch = internal::LaunchOf(*e, options);
  } else {
    internal::Shape shape;
    if (!internal::MakeShape(
            "gemm",
            {static_cast<long long>(m), static_cast<long long>(n),
             static_cast<long long>(k)},
            "fp32", {}, &shape)) {
      return CL_INVALID_VALUE;  // the library has no fp32 gemm template
    }
    err = internal::PrepareShape(target.device, shape, &run);
    if (err != CL_SUCCESS) return err;
    if (run.tmpl->num_buffers != 3 || run.tmpl->num_floats != 0) {
      return CL_INVALID_VALUE;
    }
    launch = run.AsLaunch();
  }
  const bool pack_a = !a.InPlace(batch_count);
  const bool pack_b = !b.InPlace(batch_count);
  Temporary packed_a, packed_b;
  Event a_done, b_done;
  if (pack_a) {
    err = Pack(target, a, batch_count, user_waits, &packed_a, &a_done);
  }
  if (err == CL_SUCCESS && pack_b) {
    err = Pack(target, b, batch_count, user_waits, &packed_b, &b_done);
  }
  if (err != CL_SUCCESS) return err;
  std::vector<cl_event> waits;
  if (pack_a) waits.push_back(a_done.get());
  if (pack_b) waits.push_back(b_done.get());
  if (!pack_a && !pack_b) waits = user_waits;
  for (size_t i = 0; i < batch_count; ++i) {
    const cl_mem buffers[3] = {pack_a ? packed_a.matrix(i) : a.buffer,
                               pack_b ? packed_b.matrix(i) : b.buffer,
                               product != nullptr ? product->matrix(i) : c};
    cl_event kernel_done = nullptr;
    err =
        internal::Enqueue(target.queue, launch, buffers, nullptr,
                          static_cast<cl_uint>(waits.size()),
                          waits.empty() ? nullptr : waits.data(), &kernel_done);
    done->emplace_back(kernel_done);
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

// C = alpha * op(A) * op(B) + beta * C of the row-major problem (m x n x
// k, arguments checked) for each GEMM of the batch.
cl_int RowMajorGemm(const Target& target, size_t m, size_t n, size_t k,
                    float alpha, const Operand& a, const Operand& b, float beta,
                    const Operand& c, size_t batch_count,
                    const std::vector<cl_event>& user_waits, cl_event* event) {
  // The tuned kernel writes C itself when nothing is left to apply.
  const bool direct_c = alpha == 1.0f && beta == 0.0f && batch_count == 1 &&
                        c.offset == 0 && c.row_step == n;
  Temporary product;  // alpha * product + beta * C is the result
  std::vector<Event> products_done;
  if (alpha != 0.0f) {
    cl_int err = direct_c ? CL_SUCCESS
                          : MakeTemporary(target, m, n, batch_count, &product);
    if (err == CL_SUCCESS) {
      err = RunTuned(target, m, n, k, a, b, c.buffer,
                     direct_c ? nullptr : &product, batch_count, user_waits,
                     &products_done);
    }
    if (err != CL_SUCCESS) return err;
    if (direct_c) {
      if (event != nullptr) *event = products_done.back().release();
      return CL_SUCCESS;
    }
  }
  std::vector<cl_event> waits = user_waits;  // alpha == 0: C alone
  if (alpha != 0.0f) {
    waits.clear();
    for (const Event& e : products_done) waits.push_back(e.get());
  }
  Event result;
  const cl_int err = EnqueueHelper(
      target, "tunefleet_gemm_epilogue", n, m, batch_count, waits, &result,
      static_cast<cl_int>(m), static_cast<cl_int>(n), alpha, beta,
      alpha != 0.0f ? product.whole.get() : c.buffer,
      static_cast<cl_ulong>(product.slice_elements), c.buffer,
      static_cast<cl_ulong>(c.offset), static_cast<cl_ulong>(c.row_step),
      static_cast<cl_ulong>(c.stride));
  if (err == CL_SUCCESS && event != nullptr) *event = result.release();
  return err;
}

}  // namespace

cl_int GemmStridedBatched(cl_command_queue queue, Layout layout,
                          Transpose a_transpose, Transpose b_transpose,
                          size_t m, size_t n, size_t k, float alpha,
                          cl_mem a_buffer, size_t a_offset, size_t a_ld,
                          size_t a_stride, cl_mem b_buffer, size_t b_offset,
                          size_t b_ld, size_t b_stride, float beta,
                          cl_mem c_buffer, size_t c_offset, size_t c_ld,
                          size_t c_stride, size_t batch_count,
                          cl_uint num_wait_events, const cl_event* wait_events,
                          cl_event* event) {
  Target target{queue, nullptr, nullptr};
  if (queue == nullptr ||
      clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(target.device),
                            &target.device, nullptr) != CL_SUCCESS ||
      clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(target.context),
                            &target.context, nullptr) != CL_SUCCESS) {
    return CL_INVALID_COMMAND_QUEUE;
  }
  if ((num_wait_events > 0) != (wait_events != nullptr)) {
    return CL_INVALID_EVENT_WAIT_LIST;
  }
  // As CLBlast: the batch count before the other arguments.
  if (batch_count == 0) return kInvalidBatchCount;
  if (!ValidLayout(layout) || !ValidTranspose(a_transpose) ||
      !ValidTranspose(b_transpose)) {
    return CL_INVALID_VALUE;
  }
  constexpr size_t kMaxDim = 2147483647;  // the tuned kernels' int dims
  if (m == 0 || n == 0 || k == 0 || m > kMaxDim || n > kMaxDim || k > kMaxDim) {
    return kInvalidDimension;
  }
  // Every C of the batch on the same memory: the launches would race on
  // it. CLBlast refuses it with the same code.
  if (c_stride == 0 && batch_count > 1) return kInvalidDimension;
  const bool row_major = layout == Layout::kRowMajor;
  const bool a_t = a_transpose != Transpose::kNo;
  const bool b_t = b_transpose != Transpose::kNo;
  // Stored matrices are `outer` rows (row-major) or columns (column-major)
  // of `inner` elements: the minimum lds of tunefleet_tuned.h. Their extent
  // is that of the last GEMM.
  const size_t batches = batch_count;
  const bool a_rows = row_major != a_t;  // A stored as m x k row by row
  const bool b_rows = row_major != b_t;  // B stored as k x n row by row
  cl_int err =
      CheckMatrix(a_buffer, a_offset, a_ld, a_stride, batches, a_rows ? m : k,
                  a_rows ? k : m,
                  {kInvalidMatrixA, kInvalidLeadDimA, kInsufficientMemoryA});
  if (err != CL_SUCCESS) return err;
  err = CheckMatrix(b_buffer, b_offset, b_ld, b_stride, batches, b_rows ? k : n,
                    b_rows ? n : k,
                    {kInvalidMatrixB, kInvalidLeadDimB, kInsufficientMemoryB});
  if (err != CL_SUCCESS) return err;
  err = CheckMatrix(c_buffer, c_offset, c_ld, c_stride, batches,
                    row_major ? m : n, row_major ? n : m,
                    {kInvalidMatrixC, kInvalidLeadDimC, kInsufficientMemoryC});
  if (err != CL_SUCCESS) return err;

  const std::vector<cl_event> waits(wait_events, wait_events + num_wait_events);
  if (row_major) {
    return RowMajorGemm(
        target, m, n, k, alpha,
        Operand::Of(a_buffer, a_t, m, k, a_offset, a_ld, a_stride),
        Operand::Of(b_buffer, b_t, k, n, b_offset, b_ld, b_stride), beta,
        Operand::Of(c_buffer, false, m, n, c_offset, c_ld, c_stride),
        batch_count, waits, event);
  }
  // Column-major: a column-major matrix is the transpose of the row-major
  // one in the same memory, so C^T = op(B)^T op(A)^T is the row-major
  // problem n x m x k with B (transposed as given) first.
  return RowMajorGemm(
      target, n, m, k, alpha,
      Operand::Of(b_buffer, b_t, n, k, b_offset, b_ld, b_stride),
      Operand::Of(a_buffer, a_t, k, m, a_offset, a_ld, a_stride), beta,
      Operand::Of(c_buffer, false, n, m, c_offset, c_ld, c_stride), batch_count,
      waits, event);
}

cl_int Gemm(cl_command_queue queue, Layout layout, Transpose a_transpose,
            Transpose b_transpose, size_t m, size_t n, size_t k, float alpha,
            cl_mem a_buffer, size_t a_offset, size_t a_ld, cl_mem b_buffer,
            size_t b_offset, size_t b_ld, float beta, cl_mem c_buffer,
            size_t c_offset, size_t c_ld, cl_uint num_wait_events,
            const cl_event* wait_events, cl_event* event) {
  return GemmStridedBatched(queue, layout, a_transpose, b_transpose, m, n, k,
                            alpha, a_buffer, a_offset, a_ld, 0, b_buffer,
                            b_offset, b_ld, 0, beta, c_buffer, c_offset, c_ld,
                            0, 1, num_wait_events, wait_events, event);
}

cl_int Gemm(cl_command_queue queue, int m, int n, int k, cl_mem a, cl_mem b,
            cl_mem c, cl_uint num_wait_events, const cl_event* wait_events,
            cl_event* event) {
  if (m < 1 || n < 1 || k < 1) return CL_INVALID_VALUE;
  return Gemm(queue, Layout::kRowMajor, Transpose::kNo, Transpose::kNo,
              static_cast<size_t>(m), static_cast<size_t>(n),
              static_cast<size_t>(k), 1.0f, a, 0, static_cast<size_t>(k), b, 0,
              static_cast<size_t>(n), 0.0f, c, 0, static_cast<size_t>(n),
              num_wait_events, wait_events, event);
}

}  // namespace tunefleet_tuned
