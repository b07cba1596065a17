// Computing nodes the matches of match.h leave, lowered to steps:
// ReduceSum ... ReduceLogSumExp over any axes (`reduce`, transposing first
// when the axes are not contiguous), binary eltwise ops with any numpy
// broadcast (operands expanded by copies), Clip with computed bounds
// (eltwise max and min), Softmax over an axis other than the last
// (transposed there and back), LogSoftmax (softmax, then log) and MatMul
// with a broadcast batch or a 1-D operand (batch_matmul) (lowering.h).
#include <algorithm>
#include <cctype>
#include <map>

#include "absl/strings/str_cat.h"
#include "onnx_import/epilogue_fold.h"
#include "onnx_import/lowering.h"
#include "onnx_import/match.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {
namespace {

// The eltwise step out = fn(a, b) on tensors of dims `out` (a of those
// dims, b broadcast as `kind` says along `axis`), no epilogue.
absl::Status WriteEltwise(StepWriter& w, const std::string& fn,
                          const std::string& a, const std::string& b,
                          std::string kind, int axis, const Dims& out,
                          const std::string& to) {
  const int rank = static_cast<int>(out.size());
  if (kind == "nc") axis = 1;
  if (kind != "channel" && kind != "nc") axis = rank == 4 ? 1 : rank - 1;
  std::vector<templates::Dim> dims = {{"N", 1}, {"C", 1}, {"H", 1}, {"W", 1}};
  if (rank > 0) {
    int64_t lead = 1, rest = 1;
    for (int k = 0; k < axis; ++k) lead *= out[k];
    for (int k = axis + 1; k < rank; ++k) rest *= out[k];
    dims = {{"N", lead}, {"C", out[axis]}, {"H", rest}, {"W", 1}};
    if (rank == 4 && axis == 1) dims[2].value = out[2], dims[3].value = out[3];
  }
  const int64_t channels = dims[1].value;
  absl::StatusOr<StepBuffer> ab = w.In(a);
  if (!ab.ok()) return ab.status();
  StepBuffer bb = BindConstant({0.0f});
  if (!b.empty()) {
    absl::StatusOr<StepBuffer> in = w.In(b);
    if (!in.ok()) return in.status();
    bb = *std::move(in);
  } else {
    kind = "scalar";
  }
  return w.Add(MakeWorkload("eltwise", dims, {{"fn", fn}, {"b", kind}}),
               {*ab, bb, BindTensor(to),
                BindConstant(std::vector<float>(channels, 1.0f)),
                BindConstant(std::vector<float>(channels, 0.0f))},
               {0.0f, 0.0f});
}

// ReduceX over any axes (keepdims either way): one `reduce` step of O x R
// x I when the reduced axes are contiguous (axes of size 1 ignored), else
// a transpose putting them last first.
absl::Status LowerReduce(LowerContext& c, const onnx::NodeProto& n,
                         const std::string& fn) {
  absl::StatusOr<Dims> x = c.w.ShapeOf(Input(n, 0));
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>(x->size());
  Dims axes = IntsAttr(n, "axes", {});
  if (!Input(n, 1).empty()) {
    std::optional<TensorValue> v = c.g.Value(Input(n, 1));
    if (!v || v->is_float()) return Refuse("axes are not constant");
    axes = v->ints;
  }
  if (axes.empty()) {
    if (IntAttr(n, "noop_with_empty_axes", 0) != 0) {  // the identity
      Dims perm;
      for (int64_t k = 0; k < rank; ++k) perm.push_back(k);
      return WriteTranspose(c.w, Input(n, 0), *x, perm, Output(n, 0));
    }
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    const int64_t k = NormalizeAxis(a, rank);
    if (k < 0) return Refuse("an axis out of range");
    reduced[k] = true;
  }
  // Contiguous when the dims > 1 read kept*, reduced*, kept*.
  int state = 0;
  bool contiguous = true;
  int64_t o = 1, r = 1, in = 1;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t d = (*x)[k];
    if (reduced[k]) {
      r *= d;
      if (d == 1) continue;
      if (state == 2) contiguous = false;
      state = 1;
    } else if (d != 1) {
      if (state == 1) state = 2;
      (state == 0 ? o : in) *= d;
    }
  }
  std::string input = Input(n, 0);
  if (!contiguous) {
    Dims perm, permuted;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t k = 0; k < rank; ++k) {
        if (reduced[k] == (pass == 1)) perm.push_back(k);
      }
    }
    for (int64_t p : perm) permuted.push_back((*x)[p]);
    input = c.w.Temp(Input(n, 0) + "@reduce", permuted);
    if (absl::Status s = WriteTranspose(c.w, Input(n, 0), *x, perm, input);
        !s.ok()) {
      return s;
    }
    o = 1, in = 1;
    for (int64_t k = 0; k < rank; ++k) {
      if (!reduced[k]) o *= (*x)[k];
    }
  }
  absl::StatusOr<StepBuffer> b = c.w.In(input);
  if (!b.ok()) return b.status();
  return c.w.Add(
      MakeWorkload("reduce", {{"O", o}, {"R", r}, {"I", in}}, {{"fn", fn}}),
      {*b, BindTensor(Output(n, 0))});
}

// A binary eltwise op with any numpy broadcast: operands not of the
// output's shape (A) or not of a broadcast the op takes (B) are expanded
// into temporaries first.
absl::Status LowerBinary(LowerContext& c, const onnx::NodeProto& n) {
  if (n.input_size() != 2) {
    return Refuse("only two inputs (chain several nodes for more)");
  }
  absl::StatusOr<Dims> y = c.w.ShapeOf(Output(n, 0));
  if (!y.ok()) return y.status();
  std::string a = Input(n, 0), b = Input(n, 1);
  absl::StatusOr<Dims> ad = c.w.ShapeOf(a);
  if (!ad.ok()) return ad.status();
  absl::StatusOr<Dims> bd = c.w.ShapeOf(b);
  if (!bd.ok()) return bd.status();
  if (*ad != *y) {
    absl::StatusOr<std::string> e = WriteExpand(c.w, a, *ad, *y);
    if (!e.ok()) return e.status();
    a = *e;
  }
  int axis = 0;
  std::string kind = BroadcastKind(*bd, *y, &axis);
  if (kind.empty()) {
    absl::StatusOr<std::string> e = WriteExpand(c.w, b, *bd, *y);
    if (!e.ok()) return e.status();
    b = *e;
    kind = "tensor";
  }
  std::string fn = n.op_type();
  for (char& ch : fn) ch = static_cast<char>(std::tolower(ch));
  return WriteEltwise(c.w, fn, a, b, kind, axis, *y, Output(n, 0));
}

// Clip whose bounds are computed tensors (one element each): max with
// the lower bound, then min with the upper one.
absl::Status LowerClip(LowerContext& c, const onnx::NodeProto& n) {
  absl::StatusOr<Dims> y = c.w.ShapeOf(Output(n, 0));
  if (!y.ok()) return y.status();
  const std::string& lo = Input(n, 1);
  const std::string& hi = Input(n, 2);
  for (const std::string* bound : {&lo, &hi}) {
    if (bound->empty()) continue;
    absl::StatusOr<Dims> d = c.w.ShapeOf(*bound);
    if (!d.ok()) return d.status();
    if (ElementsOf(*d) != 1) return Refuse("a bound of more than one value");
  }
  std::string at = Input(n, 0);
  if (!lo.empty()) {
    const std::string to =
        hi.empty() ? Output(n, 0) : c.w.Temp(at + "@max", *y);
    if (absl::Status s = WriteEltwise(c.w, "max", at, lo, "scalar", 0, *y, to);
        !s.ok()) {
      return s;
    }
    at = to;
  }
  if (!hi.empty()) {
    return WriteEltwise(c.w, "min", at, hi, "scalar", 0, *y, Output(n, 0));
  }
  if (lo.empty()) return Refuse("no bounds");
  return absl::OkStatus();
}

// Softmax over `axis` of `x` into `to`: moved last by a transpose, and
// back, when it is not the last.
absl::Status WriteSoftmax(StepWriter& w, const std::string& in, const Dims& x,
                          int64_t axis, const std::string& to) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t d = x[axis];
  const int64_t rows = ElementsOf(x) / std::max<int64_t>(d, 1);
  if (axis == rank - 1) {
    absl::StatusOr<StepBuffer> b = w.In(in);
    if (!b.ok()) return b.status();
    return w.Add(MakeWorkload("softmax", {{"N", rows}, {"D", d}}),
                 {*b, BindTensor(to)});
  }
  Dims perm, inverse(rank), moved;
  for (int64_t k = 0; k < rank; ++k) {
    if (k != axis) perm.push_back(k);
  }
  perm.push_back(axis);
  for (int64_t k = 0; k < rank; ++k) {
    inverse[perm[k]] = k;
    moved.push_back(x[perm[k]]);
  }
  const std::string last = w.Temp(in + "@last", moved);
  if (absl::Status s = WriteTranspose(w, in, x, perm, last); !s.ok()) return s;
  const std::string soft = w.Temp(in + "@softmax", moved);
  if (absl::Status s = w.Add(MakeWorkload("softmax", {{"N", rows}, {"D", d}}),
                             {BindTensor(last), BindTensor(soft)});
      !s.ok()) {
    return s;
  }
  return WriteTranspose(w, soft, moved, inverse, to);
}

// Softmax (an axis other than the last, from opset 13) and LogSoftmax.
absl::Status LowerSoftmax(LowerContext& c, const onnx::NodeProto& n) {
  absl::StatusOr<Dims> x = c.w.ShapeOf(Input(n, 0));
  if (!x.ok()) return x.status();
  if (x->empty()) return Refuse("a scalar input");
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis =
      NormalizeAxis(IntAttr(n, "axis", c.opset >= 13 ? -1 : 1), rank);
  if (axis < 0) return Refuse("axis out of range");
  Dims view = *x;
  if (c.opset < 13) {  // rows of the dims from `axis` on, flattened
    view = {ElementsOf(Dims(x->begin(), x->begin() + axis)),
            ElementsOf(Dims(x->begin() + axis, x->end()))};
    axis = 1;
  }
  const bool log = n.op_type() == "LogSoftmax";
  const std::string to =
      log ? c.w.Temp(Input(n, 0) + "@softmax", *x) : Output(n, 0);
  if (absl::Status s = WriteSoftmax(c.w, Input(n, 0), view, axis, to);
      !s.ok()) {
    return s;
  }
  if (!log) return absl::OkStatus();
  return WriteEltwise(c.w, "log", to, "", "scalar", 0, *x, Output(n, 0));
}

// MatMul of computed tensors whose batch dims differ (numpy broadcast) or
// with a 1-D operand: the operands expanded to the output's batch.
absl::Status LowerMatMul(LowerContext& c, const onnx::NodeProto& n) {
  if (n.op_type() != "MatMul") {
    return Refuse("transA, alpha, beta or a computed weight of a Gemm");
  }
  absl::StatusOr<Dims> ad = c.w.ShapeOf(Input(n, 0));
  if (!ad.ok()) return ad.status();
  absl::StatusOr<Dims> bd = c.w.ShapeOf(Input(n, 1));
  if (!bd.ok()) return bd.status();
  if (ad->empty() || bd->empty()) return Refuse("a scalar operand");
  Dims a = *ad, b = *bd;
  if (a.size() == 1) a.insert(a.begin(), 1);  // 1 x K
  if (b.size() == 1) b.push_back(1);          // K x 1
  const int64_t m = a[a.size() - 2], k = a.back(), nn = b.back();
  if (b[b.size() - 2] != k) return Refuse("inner dims differ");
  const Dims ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Dims batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + ab.size() >= rank ? ab[i + ab.size() - rank] : 1;
    const int64_t z = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    if (x != z && x != 1 && z != 1)
      return Refuse("batch dims do not broadcast");
    batch[i] = x == 1 ? z : x;
  }
  std::string an = Input(n, 0), bn = Input(n, 1);
  Dims want_a = batch, want_b = batch;
  want_a.insert(want_a.end(), {m, k});
  want_b.insert(want_b.end(), {k, nn});
  if (Dims(ab) != batch) {
    absl::StatusOr<std::string> e = WriteExpand(c.w, an, a, want_a);
    if (!e.ok()) return e.status();
    an = *e;
  }
  if (Dims(bb) != batch) {
    absl::StatusOr<std::string> e = WriteExpand(c.w, bn, b, want_b);
    if (!e.ok()) return e.status();
    bn = *e;
  }
  absl::StatusOr<StepBuffer> a_in = c.w.In(an);
  if (!a_in.ok()) return a_in.status();
  absl::StatusOr<StepBuffer> b_in = c.w.In(bn);
  if (!b_in.ok()) return b_in.status();
  return c.w.Add(
      MakeWorkload("batch_matmul",
                   {{"B", ElementsOf(batch)}, {"M", m}, {"N", nn}, {"K", k}}),
      {*a_in, *b_in, BindTensor(Output(n, 0))});
}

}  // namespace

absl::Status LowerCompute(LowerContext& c, int i) {
  const onnx::NodeProto& n = c.g.node(i);
  const std::string& op = n.op_type();
  static const std::map<std::string, std::string> kReduce = {
      {"ReduceSum", "sum"},       {"ReduceMean", "mean"},
      {"ReduceMax", "max"},       {"ReduceMin", "min"},
      {"ReduceProd", "prod"},     {"ReduceSumSquare", "sumsquare"},
      {"ReduceL1", "l1"},         {"ReduceL2", "l2"},
      {"ReduceLogSum", "logsum"}, {"ReduceLogSumExp", "logsumexp"}};
  if (auto it = kReduce.find(op); it != kReduce.end()) {
    return LowerReduce(c, n, it->second);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" ||
      op == "Min" || op == "Pow") {
    return LowerBinary(c, n);
  }
  if (op == "Clip") return LowerClip(c, n);
  if (op == "Softmax" || op == "LogSoftmax") return LowerSoftmax(c, n);
  if (op == "MatMul" || op == "Gemm") return LowerMatMul(c, n);
  return absl::UnimplementedError("no lowering for this op");
}

}  // namespace tunefleet::onnx_import
