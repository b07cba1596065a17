// Calls the CLBlast-style tunefleet_tuned::Gemm and GemmStridedBatched on
// the first OpenCL device, the way a BLAS user does: transposes, alpha and
// beta, leading dimensions above the tight ones, offsets, column-major
// layout and strided batches. Each case runs on odd shapes (every tile of
// the tuned kernel partial) and is checked against a host reference in
// double precision; elements of C's buffer outside the matrices (before the
// offset, between ld and the row's end, between batches) must come back
// untouched. Bad arguments must return the documented codes. Prints
//   case <name> <max_rel_error> OK|MISMATCH|CHANGED
//   error <name> <code> OK|MISMATCH
// Exit code 0 when every case and every error is OK.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "first_queue.h"
#include "tunefleet_tuned.h"

namespace {

using tunefleet_tuned::Gemm;
using tunefleet_tuned::GemmStridedBatched;
using tunefleet_tuned::Layout;
using tunefleet_tuned::Transpose;

// One call: its arguments, as a BLAS user writes them (ld 0: the tight
// one).
struct Case {
  const char* name;
  Layout layout;
  Transpose a_transpose, b_transpose;
  size_t m, n, k;
  float alpha, beta;
  size_t a_offset = 0, a_ld = 0, a_stride = 0;
  size_t b_offset = 0, b_ld = 0, b_stride = 0;
  size_t c_offset = 0, c_ld = 0, c_stride = 0;
  size_t batch = 0;    // 0: Gemm(), else GemmStridedBatched()
  bool nan_c = false;  // C's input is NaN (beta must be 0: never read)
};

// A stored matrix: `outer` rows (row-major) or columns (column-major) of
// `inner` elements, `ld` apart.
struct Stored {
  size_t outer, inner, ld;
};

Stored StoredA(const Case& c) {
  const bool rows =
      (c.layout == Layout::kRowMajor) == (c.a_transpose == Transpose::kNo);
  return {rows ? c.m : c.k, rows ? c.k : c.m, 0};
}

Stored StoredB(const Case& c) {
  const bool rows =
      (c.layout == Layout::kRowMajor) == (c.b_transpose == Transpose::kNo);
  return {rows ? c.k : c.n, rows ? c.n : c.k, 0};
}

Stored StoredC(const Case& c) {
  const bool row_major = c.layout == Layout::kRowMajor;
  return {row_major ? c.m : c.n, row_major ? c.n : c.m, 0};
}

// Elements a buffer needs for `batches` matrices from `offset`, plus slack
// after them (so a write past the end shows as a changed element).
size_t Elements(const Stored& s, size_t offset, size_t stride, size_t batches) {
  return offset + (batches - 1) * stride + (s.outer - 1) * s.ld + s.inner + 7;
}

// Index of element (i, j) of a stored matrix (i < rows of the matrix as
// the layout sees it).
size_t At(Layout layout, size_t offset, size_t ld, size_t i, size_t j) {
  return layout == Layout::kRowMajor ? offset + i * ld + j
                                     : offset + i + j * ld;
}

cl_mem Upload(cl_context context, std::vector<float>& host) {
  cl_int err = CL_SUCCESS;
  return clCreateBuffer(context, CL_MEM_COPY_HOST_PTR | CL_MEM_READ_WRITE,
                        host.size() * sizeof(float), host.data(), &err);
}

// Runs one case; prints its line and returns whether it is OK.
bool RunCase(cl_context context, cl_command_queue queue, Case c,
             std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  Stored a = StoredA(c), b = StoredB(c), out = StoredC(c);
  a.ld = c.a_ld != 0 ? c.a_ld : a.inner;
  b.ld = c.b_ld != 0 ? c.b_ld : b.inner;
  out.ld = c.c_ld != 0 ? c.c_ld : out.inner;
  const size_t batches = c.batch == 0 ? 1 : c.batch;
  std::vector<float> ha(Elements(a, c.a_offset, c.a_stride, batches));
  std::vector<float> hb(Elements(b, c.b_offset, c.b_stride, batches));
  std::vector<float> hc(Elements(out, c.c_offset, c.c_stride, batches));
  for (float& x : ha) x = dist(rng);
  for (float& x : hb) x = dist(rng);
  for (float& x : hc) x = dist(rng);
  std::vector<bool> written(hc.size(), false);
  for (size_t g = 0; g < batches; ++g) {
    for (size_t i = 0; i < c.m; ++i) {
      for (size_t j = 0; j < c.n; ++j) {
        const size_t at =
            At(c.layout, c.c_offset + g * c.c_stride, out.ld, i, j);
        written[at] = true;
        if (c.nan_c) hc[at] = std::numeric_limits<float>::quiet_NaN();
      }
    }
  }
  const std::vector<float> c_in = hc;
  cl_mem da = Upload(context, ha), db = Upload(context, hb),
         dc = Upload(context, hc);
  cl_int err;
  if (c.batch == 0) {
    err = Gemm(queue, c.layout, c.a_transpose, c.b_transpose, c.m, c.n, c.k,
               c.alpha, da, c.a_offset, a.ld, db, c.b_offset, b.ld, c.beta, dc,
               c.c_offset, out.ld);
  } else {
    err = GemmStridedBatched(
        queue, c.layout, c.a_transpose, c.b_transpose, c.m, c.n, c.k, c.alpha,
        da, c.a_offset, a.ld, c.a_stride, db, c.b_offset, b.ld, c.b_stride,
        c.beta, dc, c.c_offset, out.ld, c.c_stride, c.batch);
  }
  if (err == CL_SUCCESS) {
    err = clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, hc.size() * sizeof(float),
                              hc.data(), 0, nullptr, nullptr);
  }
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  if (err != CL_SUCCESS) {
    std::printf("case %s inf MISMATCH (error %d)\n", c.name, err);
    return false;
  }
  // op(A)(i, q) and op(B)(q, j) from the stored matrices.
  const bool a_t = c.a_transpose != Transpose::kNo;
  const bool b_t = c.b_transpose != Transpose::kNo;
  double worst = 0, scale = 1e-30;
  for (size_t g = 0; g < batches; ++g) {
    const size_t ao = c.a_offset + g * c.a_stride;
    const size_t bo = c.b_offset + g * c.b_stride;
    const size_t co = c.c_offset + g * c.c_stride;
    for (size_t i = 0; i < c.m; ++i) {
      for (size_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (size_t q = 0; q < c.k; ++q) {
          const double x = ha[a_t ? At(c.layout, ao, a.ld, q, i)
                                  : At(c.layout, ao, a.ld, i, q)];
          const double y = hb[b_t ? At(c.layout, bo, b.ld, j, q)
                                  : At(c.layout, bo, b.ld, q, j)];
          sum += x * y;
        }
        const size_t at = At(c.layout, co, out.ld, i, j);
        double expect = c.alpha * sum;
        if (c.beta != 0) expect += double(c.beta) * c_in[at];
        scale = std::fmax(scale, std::fabs(expect));
        const double diff = std::fabs(expect - hc[at]);
        worst = std::isnan(diff) ? INFINITY : std::fmax(worst, diff);
      }
    }
  }
  bool untouched = true;
  for (size_t e = 0; e < hc.size(); ++e) {
    untouched &=
        written[e] || std::memcmp(&hc[e], &c_in[e], sizeof(float)) == 0;
  }
  const double rel = worst / scale;
  const bool ok = rel < 1e-4 && untouched;
  std::printf("case %s %g %s\n", c.name, rel,
              !untouched ? "CHANGED"
              : ok       ? "OK"
                         : "MISMATCH");
  return ok;
}

// Checks that a call with a bad argument returns `expect`; prints its line.
bool ExpectError(const char* name, cl_int got, cl_int expect) {
  std::printf("error %s %d %s\n", name, got, got == expect ? "OK" : "MISMATCH");
  return got == expect;
}

// The arguments of a Gemm call with alpha 1, beta 0 and B's offset 0.
struct GemmArgs {
  Layout layout;
  Transpose a_transpose, b_transpose;
  size_t m, n, k;
  cl_mem a;
  size_t a_offset, a_ld;
  cl_mem b;
  size_t b_ld;
  cl_mem c;
  size_t c_offset, c_ld;

  cl_int Run(cl_command_queue queue) const {
    return Gemm(queue, layout, a_transpose, b_transpose, m, n, k, 1.0f, a,
                a_offset, a_ld, b, 0, b_ld, 0.0f, c, c_offset, c_ld);
  }
};

// A bad row-major, untransposed GemmStridedBatched call with alpha 1, beta
// 0 and no offsets: it must return `expect`.
struct BadBatch {
  const char* name;
  size_t m, n, k;
  cl_mem a;
  size_t a_ld, a_stride, b_ld, b_stride, c_ld, c_stride, batch;
  cl_int expect;
};

// Bad arguments, each on an otherwise valid row-major 8 x 6 x 4 GEMM whose
// buffers hold 64 floats (tight A 8 x 4, B 4 x 6, C 8 x 6 need 32, 24, 48).
int CheckErrors(cl_context context, cl_command_queue queue) {
  std::vector<float> host(64, 1.0f), small(16, 1.0f);
  cl_mem x = Upload(context, host), y = Upload(context, host),
         z = Upload(context, host), tiny = Upload(context, small);
  const Layout rm = Layout::kRowMajor, cm = Layout::kColMajor;
  const Transpose no = Transpose::kNo, yes = Transpose::kYes;
  int failures = 0;
  const GemmArgs valid = {rm, no, no, 8, 6, 4, x, 0, 4, y, 6, z, 0, 6};
  // The valid call with `change` made must return `expect`.
  auto bad_gemm = [&](const char* name, cl_int expect, auto change) {
    GemmArgs g = valid;
    change(g);
    failures += !ExpectError(name, g.Run(queue), expect);
  };
  bad_gemm("zero_m", tunefleet_tuned::kInvalidDimension,
           [](GemmArgs& g) { g.m = 0; });
  bad_gemm("null_a", tunefleet_tuned::kInvalidMatrixA,
           [](GemmArgs& g) { g.a = nullptr; });
  bad_gemm("null_b", tunefleet_tuned::kInvalidMatrixB,
           [](GemmArgs& g) { g.b = nullptr; });
  bad_gemm("null_c", tunefleet_tuned::kInvalidMatrixC,
           [](GemmArgs& g) { g.c = nullptr; });
  bad_gemm("small_lda", tunefleet_tuned::kInvalidLeadDimA,
           [](GemmArgs& g) { g.a_ld = 3; });
  // Transposed row-major A is stored k x m: its ld is at least m.
  bad_gemm("small_lda_transposed", tunefleet_tuned::kInvalidLeadDimA,
           [&](GemmArgs& g) { g.a_transpose = yes; });
  bad_gemm("small_ldb", tunefleet_tuned::kInvalidLeadDimB,
           [](GemmArgs& g) { g.b_ld = 5; });
  bad_gemm("small_ldc", tunefleet_tuned::kInvalidLeadDimC,
           [](GemmArgs& g) { g.c_ld = 5; });
  // Column-major C is m x n by columns: its ld is at least m (A and B with
  // their tight column-major lds).
  bad_gemm("small_ldc_col_major", tunefleet_tuned::kInvalidLeadDimC,
           [&](GemmArgs& g) {
             g.layout = cm;
             g.a_ld = 8;
             g.b_ld = 4;
           });
  bad_gemm("short_a", tunefleet_tuned::kInsufficientMemoryA,
           [&](GemmArgs& g) { g.a = tiny; });
  bad_gemm("offset_past_c", tunefleet_tuned::kInsufficientMemoryC,
           [](GemmArgs& g) { g.c_offset = 17; });
  bad_gemm("bad_layout", CL_INVALID_VALUE,
           [](GemmArgs& g) { g.layout = static_cast<Layout>(7); });
  failures +=
      !ExpectError("null_queue", valid.Run(nullptr), CL_INVALID_COMMAND_QUEUE);
  const BadBatch bad_batches[] = {
      {"zero_batch", 2, 2, 2, x, 2, 4, 2, 4, 2, 4, 0,
       tunefleet_tuned::kInvalidBatchCount},
      // As CLBlast: the batch count is checked before the other arguments
      // (here a null A), and a batch writing every C to the same memory is
      // refused.
      {"zero_batch_first", 2, 2, 2, nullptr, 2, 4, 2, 4, 2, 4, 0,
       tunefleet_tuned::kInvalidBatchCount},
      {"shared_c", 2, 2, 2, x, 2, 4, 2, 4, 2, 0, 2,
       tunefleet_tuned::kInvalidDimension},
      // Three 4 x 4 B matrices 24 apart end at element 2 * 24 + 16 = 64, the
      // buffer's end; 25 apart they do not fit.
      {"batch_past_b", 4, 4, 4, x, 4, 16, 4, 25, 4, 16, 3,
       tunefleet_tuned::kInsufficientMemoryB},
  };
  for (const BadBatch& b : bad_batches) {
    failures += !ExpectError(
        b.name,
        GemmStridedBatched(queue, rm, no, no, b.m, b.n, b.k, 1.0f, b.a, 0,
                           b.a_ld, b.a_stride, y, 0, b.b_ld, b.b_stride, 0.0f,
                           z, 0, b.c_ld, b.c_stride, b.batch),
        b.expect);
  }
  failures += !ExpectError("legacy_zero_m", Gemm(queue, 0, 4, 4, x, y, z),
                           CL_INVALID_VALUE);
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseMemObject(z);
  clReleaseMemObject(tiny);
  return failures;
}

}  // namespace

int main() {
  const auto [device, context, queue] = consumer_support::OpenFirstQueue();
  if (queue == nullptr) return 3;
  const Layout rm = Layout::kRowMajor, cm = Layout::kColMajor;
  const Transpose no = Transpose::kNo, yes = Transpose::kYes;
  // m, n and k differ, so a mixed-up dim or transpose shows.
  std::vector<Case> cases = {
      {"plain", rm, no, no, 37, 29, 23, 1.0f, 0.0f},
      {"transposed_a", rm, yes, no, 37, 29, 23, 1.0f, 0.0f},
      {"transposed_b", rm, no, yes, 37, 29, 23, 1.0f, 0.0f},
      {"transposed_both", rm, yes, Transpose::kConjugate, 37, 29, 23, 1.0f,
       0.0f},
      {"alpha_beta", rm, no, no, 37, 29, 23, 2.0f, 0.5f},
      {"alpha_zero", rm, no, no, 37, 29, 23, 0.0f, 2.0f},
      {"beta_zero_ignores_c", rm, no, no, 37, 29, 23, 1.5f, 0.0f},
      {"col_major", cm, no, no, 37, 29, 23, 1.0f, 0.0f},
      {"col_major_transposed_alpha_beta", cm, yes, yes, 37, 29, 23, -1.0f,
       0.25f},
  };
  cases[6].nan_c = true;
  Case ld = {"ld_offsets", rm, no, no, 37, 29, 23, 1.0f, 0.0f};
  ld.a_offset = 11, ld.a_ld = 23 + 5;
  ld.b_offset = 13, ld.b_ld = 29 + 3;
  ld.c_offset = 17, ld.c_ld = 29 + 7;
  cases.push_back(ld);
  // Wider lds alone (no offset, alpha 1, beta 0): still not in place.
  Case ld_only = {"ld_only", rm, no, no, 37, 29, 23, 1.0f, 0.0f};
  ld_only.a_ld = 23 + 3, ld_only.b_ld = 29 + 1, ld_only.c_ld = 29 + 2;
  cases.push_back(ld_only);
  Case ld_cm = ld;
  ld_cm.name = "ld_offsets_col_major_transposed_a";
  ld_cm.layout = cm, ld_cm.a_transpose = yes;
  ld_cm.a_ld = 23 + 2, ld_cm.b_ld = 23 + 4, ld_cm.c_ld = 37 + 1;
  cases.push_back(ld_cm);
  Case batched = {"batched", rm, no, yes, 37, 29, 23, 2.0f, 0.5f};
  batched.batch = 3;
  batched.a_offset = 5, batched.a_ld = 23 + 1, batched.a_stride = 37 * 24 + 9;
  batched.b_offset = 3, batched.b_ld = 23, batched.b_stride = 29 * 23 + 4;
  batched.c_offset = 2, batched.c_ld = 29 + 2, batched.c_stride = 37 * 31 + 6;
  cases.push_back(batched);
  // A shared by the batch (stride 0) and tight: the tuned kernel reads it
  // in place; B and C tight and contiguous.
  Case shared = {"batched_shared_a", rm, no, no, 37, 29, 23, 1.0f, 0.0f};
  shared.batch = 3;
  shared.b_stride = 23 * 29, shared.c_stride = 37 * 29;
  cases.push_back(shared);
  Case batched_cm = batched;
  batched_cm.name = "batched_col_major";
  batched_cm.layout = cm;
  batched_cm.a_ld = 37 + 3, batched_cm.a_stride = 40 * 23 + 1;
  batched_cm.b_ld = 29, batched_cm.b_stride = 29 * 23;
  batched_cm.c_ld = 37, batched_cm.c_stride = 37 * 29;
  cases.push_back(batched_cm);

  std::mt19937 rng(3);
  int failures = 0;
  for (const Case& c : cases) failures += !RunCase(context, queue, c, rng);
  failures += CheckErrors(context, queue);
  consumer_support::CloseQueue(context, queue);
  return failures == 0 ? 0 : 1;
}
