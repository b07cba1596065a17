#include "kernels_templates/workload.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "base/hash.h"
#include "base/status_macros.h"

namespace tunefleet::templates {
namespace {

// Epilogue of conv, dense and elementwise ops
// (kernels_templates/common/epilogue.cl), in this order:
//   affine   per-channel bias ("shift") or batch normalisation folded into
//            a scale and shift;
//   residual "add": a tensor of the output's shape added (a skip
//            connection), before the activation;
//   act      the activation;
//   post     "scale_shift": a per-channel affine step after the activation
//            (e.g. PP-LCNetV3's learnable affine blocks).
const AttrSpec kAffine{"affine", {"none", "shift", "scale_shift"}};
const AttrSpec kAct{"act",
                    {"none", "relu", "clip", "hardsigmoid", "hardswish",
                     "leakyrelu", "sigmoid", "silu"}};
const AttrSpec kPost{"post", {"none", "scale_shift"}};
const AttrSpec kResidual{"residual", {"none", "add"}};
const AttrSpec kPoolMode{"mode", {"max", "avg"}};
// Channel gate (a squeeze-and-excitation block's excitation and scaling):
// the activations of its two FCs, with the epilogue's values.
const AttrSpec kGateAct1{"act1", kAct.values};
const AttrSpec kGateAct2{"act2", kAct.values};
// Elementwise: the binary function of inputs A and B (none: A alone, a
// unary op made of the epilogue), and B's shape against the output's
// N x C x H x W: the same, one value, one per channel C, or one per (N, C)
// (e.g. a squeeze-and-excitation scale of shape N x C x 1 x 1).
// Unary functions of A (B unread, one element) follow the binary ones,
// appended so that existing canonical strings keep their meaning; pow is
// binary (A ** B). docs/OPS.md lists them.
const AttrSpec kEltwiseFn{
    "fn", {"none", "add", "sub",   "mul",  "div",   "max",        "min",
           "sqrt", "exp", "log",   "abs",  "neg",   "reciprocal", "tanh",
           "erf",  "pow", "floor", "ceil", "round", "sign"}};
const AttrSpec kEltwiseB{"b", {"tensor", "scalar", "channel", "nc"}};
// Resize (ONNX Resize, 2D on NCHW): interpolation, how an output
// coordinate maps to the input, and nearest's rounding.
const AttrSpec kResizeMode{"mode", {"nearest", "linear"}};
const AttrSpec kResizeCoord{
    "coord",
    {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}};
const AttrSpec kResizeRound{"round", {"round_prefer_floor", "floor", "ceil"}};
const AttrSpec kNormAffine{"affine", {"none", "scale_shift"}};
// Reduce: ONNX's ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp.
const AttrSpec kReduceFn{"fn",
                         {"sum", "mean", "max", "min", "prod", "sumsquare",
                          "l1", "l2", "logsum", "logsumexp"}};

// Copy: a strided box of up to 6 dims (docs/OPS.md). Extents D0..D5 count
// in the shape product; strides, offsets and buffer sizes do not.
std::vector<DimSpec> CopyDims() {
  std::vector<DimSpec> d;
  for (absl::string_view n : {"D0", "D1", "D2", "D3", "D4", "D5"}) {
    d.push_back({n, 1, 1});
  }
  for (absl::string_view n : {"IS0", "IS1", "IS2", "IS3", "IS4", "IS5"}) {
    d.push_back({n, 0, 0, false});
  }
  d.push_back({"IO", 0, 0, false});
  for (absl::string_view n : {"OS0", "OS1", "OS2", "OS3", "OS4", "OS5"}) {
    d.push_back({n, 0, 0, false});
  }
  d.push_back({"OO", 0, 0, false});
  d.push_back({"IE", {}, 1, false});
  d.push_back({"OE", {}, 1, false});
  return d;
}

// Convolution window dims shared by conv2d, depthwise_conv2d and pool2d:
// kernel R x S, strides, symmetric zero padding.
std::vector<DimSpec> WindowDims(bool dilation) {
  std::vector<DimSpec> d = {{"R", {}}, {"S", {}},    {"SH", 1},
                            {"SW", 1}, {"PH", 0, 0}, {"PW", 0, 0}};
  if (dilation) {
    d.push_back({"DH", 1});
    d.push_back({"DW", 1});
  }
  return d;
}

std::vector<OpSpec> MakeOps() {
  auto concat = [](std::vector<DimSpec> a, const std::vector<DimSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Dtype> dtypes = {Dtype::kFp32, Dtype::kFp16};
  std::vector<DimSpec> conv = concat(
      {{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}, {"K", {}}}, WindowDims(true));
  conv.push_back({"G", 1});
  const std::vector<AttrSpec> epilogue = {kAffine, kAct, kPost, kResidual};
  return {
      {"gemm", {{"M", {}}, {"N", {}}, {"K", {}}}, {}, dtypes},
      // Fully connected: M rows (batch), N outputs, K inputs.
      {"dense", {{"M", 1}, {"N", {}}, {"K", {}}}, epilogue, dtypes},
      {"conv2d", conv, epilogue, dtypes},
      {"depthwise_conv2d",
       concat({{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}}, WindowDims(true)),
       epilogue, dtypes},
      // Transposed 2D convolution (ONNX ConvTranspose), NCHW, weight
      // C x K/G x R x S; OPH, OPW: output padding. Output
      // (H - 1) * SH - 2 * PH + DH * (R - 1) + OPH + 1 rows.
      {"conv_transpose2d",
       concat(concat({{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}, {"K", {}}},
                     WindowDims(true)),
              {{"OPH", 0, 0}, {"OPW", 0, 0}, {"G", 1}}),
       {kAffine, kAct, kPost},
       dtypes},
      // Batched matrix product (ONNX MatMul of two computed tensors):
      // C[b] (M x N) = A[b] (M x K) * B[b] (K x N), row-major, tight.
      {"batch_matmul", {{"B", 1}, {"M", {}}, {"N", {}}, {"K", {}}}, {}, dtypes},
      // Elementwise: output N x C x H x W = epilogue(fn(A, B)), A of the
      // output's shape, B broadcast as `b` says; the epilogue's channel is
      // C; residual=add: a tensor of the output's shape added before the
      // activation (a consecutive Add fused into this launch, issue 36).
      // Tensors of other ranks are viewed as N x C x H x W.
      {"eltwise",
       {{"N", 1}, {"C", {}}, {"H", 1}, {"W", 1}},
       {kEltwiseFn, kEltwiseB, kAffine, kAct, kPost, kResidual},
       dtypes},
      // Resize of N x C x H x W to N x C x OH x OW.
      {"resize",
       {{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}, {"OH", {}}, {"OW", {}}},
       {kResizeMode, kResizeCoord, kResizeRound},
       dtypes},
      // Layer normalisation over the last axis of an N x D tensor:
      // (x - mean) / sqrt(var + eps), then * gamma[d] + beta[d] when affine.
      {"layernorm", {{"N", 1}, {"D", {}}}, {kNormAffine}, dtypes},
      {"pool2d",
       concat({{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}}, WindowDims(false)),
       {kPoolMode},
       dtypes},
      {"global_pool",
       {{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}},
       {kPoolMode},
       dtypes},
      // Channel gate (issue 36): output (N x C x H x W) = x * g per
      // channel, g = act2(w2 act1(w1 s + b1) + b2) from s (N x C, x pooled),
      // w1 R x C, w2 C x R; residual=add: a tensor of x's shape added
      // (det's x + x * se(x)). docs/OPS.md has the buffers.
      {"channel_gate",
       {{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}, {"R", {}}},
       {kGateAct1, kGateAct2, kResidual},
       dtypes},
      // A whole squeeze-and-excitation block (issue 36): channel_gate with
      // s computed from x (its mean per channel) in the same launch; reads
      // no s. docs/OPS.md has the buffers.
      {"se_block",
       {{"N", 1}, {"C", {}}, {"H", {}}, {"W", {}}, {"R", {}}},
       {kGateAct1, kGateAct2, kResidual},
       dtypes},
      // Softmax over the last axis of an N x D tensor.
      {"softmax", {{"N", 1}, {"D", {}}}, {}, dtypes},
      // output[OO + sum ik*OSk] = input[IO + sum ik*ISk] for ik < Dk; the
      // rest of the output is left as it is.
      {"copy", CopyDims(), {}, dtypes},
      // output[O + i] = value (a float of the call) for i < E.
      {"fill",
       {{"E", {}}, {"O", 0, 0, false}, {"OE", {}, 1, false}},
       {},
       dtypes},
      // output[o, i] = fn over r of input[o, r, i] (O x R x I -> O x I).
      {"reduce", {{"O", 1}, {"R", {}}, {"I", 1}}, {kReduceFn}, dtypes},
  };
}

// The built-in ops and those registered at run time. Specs are never
// removed, so pointers to them stay valid; names of registered ops are
// interned in `strings`.
struct OpTable {
  absl::Mutex mu;
  std::deque<OpSpec> ops ABSL_GUARDED_BY(mu);
  std::deque<std::string> strings ABSL_GUARDED_BY(mu);

  absl::string_view Intern(absl::string_view s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    strings.emplace_back(s);
    return strings.back();
  }
};

OpTable& Ops() {
  static OpTable* table = [] {
    auto t = std::make_unique<OpTable>();
    absl::MutexLock lock(&t->mu);
    for (OpSpec& spec : MakeOps()) t->ops.push_back(std::move(spec));
    return t.release();  // lives for the whole program
  }();
  return *table;
}

}  // namespace

const OpSpec* FindOp(absl::string_view op) {
  OpTable& t = Ops();
  absl::MutexLock lock(&t.mu);
  for (const OpSpec& spec : t.ops) {
    if (spec.name == op) return &spec;
  }
  return nullptr;
}

bool BufferUnread(const Workload& w, absl::string_view buffer) {
  const OpSpec* op = FindOp(w.op());
  for (size_t a = 0; op != nullptr && a < op->attrs.size(); ++a) {
    const AttrSpec& attr = op->attrs[a];
    if (attr.name == buffer && !attr.values.empty() &&
        attr.values[0] == "none") {
      return w.attr(attr.name) == "none";
    }
  }
  return false;
}

std::vector<absl::string_view> KnownOps() {
  OpTable& t = Ops();
  absl::MutexLock lock(&t.mu);
  std::vector<absl::string_view> names;
  for (const OpSpec& spec : t.ops) names.push_back(spec.name);
  return names;
}

absl::Status RegisterOp(const OpSpec& spec) {
  if (spec.name.empty() || spec.dims.empty()) {
    return absl::InvalidArgumentError("an op needs a name and dims");
  }
  OpTable& t = Ops();
  // Look-up and insertion under one lock: two registrations of the same
  // new op racing both succeed, and it is added once.
  absl::MutexLock lock(&t.mu);
  for (const OpSpec& existing : t.ops) {
    if (existing.name != spec.name) continue;
    bool same = existing.dims.size() == spec.dims.size();
    for (size_t i = 0; same && i < spec.dims.size(); ++i) {
      same = existing.dims[i].name == spec.dims[i].name;
    }
    if (same) return absl::OkStatus();
    return absl::AlreadyExistsError(
        absl::StrCat("op ", spec.name, " exists with other dims"));
  }
  OpSpec copy;
  copy.name = t.Intern(spec.name);
  for (const DimSpec& d : spec.dims) {
    copy.dims.push_back(
        {t.Intern(d.name), d.default_value, d.min_value, d.in_shape_product});
  }
  for (const AttrSpec& a : spec.attrs) {
    AttrSpec attr{t.Intern(a.name), {}};
    for (absl::string_view v : a.values) attr.values.push_back(t.Intern(v));
    copy.attrs.push_back(std::move(attr));
  }
  copy.dtypes = spec.dtypes;
  if (copy.dtypes.empty()) copy.dtypes.push_back(Dtype::kFp32);
  t.ops.push_back(std::move(copy));
  return absl::OkStatus();
}

namespace {

// "M,N,K?" for messages: the op's dims, ? marking optional ones.
std::string DimNames(const OpSpec& spec) {
  return absl::StrJoin(spec.dims, ",", [](std::string* out, const DimSpec& d) {
    absl::StrAppend(out, d.name, d.default_value ? "?" : "");
  });
}

// OK when every dim given is one of the op's, once.
absl::Status CheckDimNames(const OpSpec& spec, const std::vector<Dim>& dims) {
  for (const Dim& d : dims) {
    if (std::count_if(dims.begin(), dims.end(),
                      [&](const Dim& o) { return o.name == d.name; }) > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape dim ", d.name, " is given more than once"));
    }
    if (std::none_of(spec.dims.begin(), spec.dims.end(),
                     [&](const DimSpec& s) { return s.name == d.name; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", spec.name, " has no dim '", d.name, "' (it takes ",
          DimNames(spec), "; ? marks optional dims)"));
    }
  }
  return absl::OkStatus();
}

// The op's dims in its order, optional ones defaulted, each within its
// range.
absl::StatusOr<std::vector<Dim>> CanonicalDims(const OpSpec& spec,
                                               const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const DimSpec& s : spec.dims) {
    auto it = std::find_if(dims.begin(), dims.end(),
                           [&](const Dim& d) { return d.name == s.name; });
    if (it == dims.end() && !s.default_value) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape of ", spec.name, " is missing dim ", s.name, " (", spec.name,
          " takes ", DimNames(spec), "; ? marks optional dims)"));
    }
    const int64_t value = it == dims.end() ? *s.default_value : it->value;
    if (value < s.min_value || value > kMaxDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape dim ", s.name, " must be between ", s.min_value,
                       " and ", kMaxDim, ", got ", value));
    }
    out.push_back(Dim{std::string(s.name), value});
  }
  return out;
}

// OK when the product of the shape dims (DimSpec::in_shape_product, each
// read as at least 1) is at most kMaxShapeProduct; checked before each
// step, so it never overflows. `dims` are in the spec's order.
absl::Status CheckShapeProduct(const OpSpec& spec,
                               const std::vector<Dim>& dims) {
  int64_t product = 1;
  std::vector<absl::string_view> names;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (spec.dims[i].in_shape_product) names.push_back(spec.dims[i].name);
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!spec.dims[i].in_shape_product) continue;
    const int64_t factor = std::max<int64_t>(dims[i].value, 1);
    if (product > kMaxShapeProduct / factor) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape of ", spec.name, " is too large: the product of its dims ",
          absl::StrJoin(names, "*"), " exceeds 2^53 (", kMaxShapeProduct, ")"));
    }
    product *= factor;
  }
  return absl::OkStatus();
}

// Every attribute of the op in its order, those not given at their
// default; each given one is the op's, once, with one of its values.
absl::StatusOr<std::vector<Attr>> CanonicalAttrs(
    const OpSpec& spec, const std::vector<Attr>& attrs) {
  for (const Attr& a : attrs) {
    if (std::count_if(attrs.begin(), attrs.end(),
                      [&](const Attr& o) { return o.name == a.name; }) > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute ", a.name, " is given more than once"));
    }
    auto s = std::find_if(spec.attrs.begin(), spec.attrs.end(),
                          [&](const AttrSpec& x) { return x.name == a.name; });
    if (s == spec.attrs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op ", spec.name, " has no attribute '", a.name, "'"));
    }
    if (std::find(s->values.begin(), s->values.end(), a.value) ==
        s->values.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute ", a.name, "=", a.value, " of ", spec.name,
                       " is not one of ", absl::StrJoin(s->values, ", ")));
    }
  }
  std::vector<Attr> out;
  for (const AttrSpec& s : spec.attrs) {
    auto it = std::find_if(attrs.begin(), attrs.end(),
                           [&](const Attr& a) { return a.name == s.name; });
    out.push_back(
        Attr{std::string(s.name),
             std::string(it == attrs.end() ? s.values[0] : it->value)});
  }
  return out;
}

}  // namespace

absl::string_view DtypeName(Dtype dtype) {
  return dtype == Dtype::kFp16 ? "fp16" : "fp32";
}

absl::StatusOr<Dtype> ParseDtype(absl::string_view name) {
  if (name == "fp32") return Dtype::kFp32;
  if (name == "fp16") return Dtype::kFp16;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "'; known: fp32, fp16"));
}

int ElementBytes(Dtype dtype) { return dtype == Dtype::kFp16 ? 2 : 4; }

absl::StatusOr<Workload> Workload::Create(absl::string_view op,
                                          std::vector<Dim> dims, Dtype dtype,
                                          std::vector<Attr> attrs) {
  const OpSpec* spec = FindOp(op);
  if (spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown op '", op, "'; known ops: ", absl::StrJoin(KnownOps(), ", ")));
  }
  return Create(*spec, std::move(dims), dtype, std::move(attrs));
}

absl::StatusOr<Workload> Workload::Create(const OpSpec& op_spec,
                                          std::vector<Dim> dims, Dtype dtype,
                                          std::vector<Attr> attrs) {
  const OpSpec* spec = &op_spec;
  const absl::string_view op = spec->name;
  if (std::find(spec->dtypes.begin(), spec->dtypes.end(), dtype) ==
      spec->dtypes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dtype '", DtypeName(dtype), "' is not supported by op ", op,
        "; supported: ",
        absl::StrJoin(spec->dtypes, ", ", [](std::string* out, Dtype d) {
          absl::StrAppend(out, DtypeName(d));
        })));
  }
  if (dims.size() > kMaxWorkloadDims || attrs.size() > kMaxWorkloadAttrs) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape of ", op, " has ", dims.size(), " dims and ", attrs.size(),
        " attributes; at most ", kMaxWorkloadDims, " and ", kMaxWorkloadAttrs));
  }
  TUNEFLEET_RETURN_IF_ERROR(CheckDimNames(*spec, dims));
  Workload w;
  w.op_ = std::string(op);
  w.dtype_ = dtype;
  TUNEFLEET_ASSIGN_OR_RETURN(w.dims_, CanonicalDims(*spec, dims));
  TUNEFLEET_RETURN_IF_ERROR(CheckShapeProduct(*spec, w.dims_));
  TUNEFLEET_ASSIGN_OR_RETURN(w.attrs_, CanonicalAttrs(*spec, attrs));
  return w;
}

absl::StatusOr<Workload> Workload::Parse(absl::string_view op,
                                         absl::string_view shape,
                                         absl::string_view dtype) {
  const OpSpec* spec = FindOp(op);
  std::vector<Dim> dims;
  std::vector<Attr> attrs;
  for (absl::string_view token :
       absl::StrSplit(shape, absl::ByAnyChar(", ;"), absl::SkipWhitespace())) {
    std::vector<absl::string_view> kv = absl::StrSplit(token, '=');
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad shape token '", token, "': expected NAME=VALUE, e.g. M=512"));
    }
    const bool is_attr =
        spec != nullptr &&
        std::any_of(spec->attrs.begin(), spec->attrs.end(),
                    [&](const AttrSpec& a) { return a.name == kv[0]; });
    if (is_attr) {
      attrs.push_back(Attr{std::string(kv[0]), std::string(kv[1])});
      continue;
    }
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv[1], &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape dim ", kv[0], " has a non-integer value '", kv[1], "'"));
    }
    dims.push_back(Dim{std::string(kv[0]), value});
  }
  if (dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "empty shape for op ", op, "; expected e.g. ", "M=512,N=512,K=512"));
  }
  TUNEFLEET_ASSIGN_OR_RETURN(const Dtype type, ParseDtype(dtype));
  return Create(op, std::move(dims), type, std::move(attrs));
}

absl::StatusOr<Workload> Workload::ParseCanonical(absl::string_view text) {
  std::vector<absl::string_view> tokens =
      absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (tokens.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad workload '", text, "': expected e.g. 'gemm M=8 N=8 K=8 fp32'"));
  }
  absl::string_view dtype = "fp32";
  std::vector<absl::string_view> shape;
  for (size_t i = 1; i < tokens.size(); ++i) {
    if (tokens[i].find('=') == absl::string_view::npos) {
      dtype = tokens[i];
    } else {
      shape.push_back(tokens[i]);
    }
  }
  return Parse(tokens.front(), absl::StrJoin(shape, ","), dtype);
}

int64_t Workload::dim(absl::string_view name) const {
  for (const Dim& d : dims_) {
    if (d.name == name) return d.value;
  }
  return 0;
}

const std::string& Workload::attr(absl::string_view name) const {
  static const std::string kNone;
  for (const Attr& a : attrs_) {
    if (a.name == name) return a.value;
  }
  return kNone;
}

std::vector<const Attr*> Workload::NonDefaultAttrs() const {
  std::vector<const Attr*> out;
  if (attrs_.empty()) return out;  // (its op need not be registered)
  const OpSpec* spec = FindOp(op_);
  for (size_t i = 0; i < attrs_.size(); ++i) {
    if (attrs_[i].value != spec->attrs[i].values[0]) out.push_back(&attrs_[i]);
  }
  return out;
}

std::string Workload::ShapeString() const {
  std::string s = absl::StrJoin(dims_, ",", [](std::string* out, const Dim& d) {
    absl::StrAppend(out, d.name, "=", d.value);
  });
  for (const Attr* a : NonDefaultAttrs()) {
    absl::StrAppend(&s, ",", a->name, "=", a->value);
  }
  return s;
}

std::string Workload::Canonical() const {
  std::string s = op_;
  for (const Dim& d : dims_) absl::StrAppend(&s, " ", d.name, "=", d.value);
  absl::StrAppend(&s, " ", DtypeName(dtype_));
  for (const Attr* a : NonDefaultAttrs()) {
    absl::StrAppend(&s, " ", a->name, "=", a->value);
  }
  return s;
}

std::string Workload::Hash() const { return base::Fnv1aHex(Canonical()); }

}  // namespace tunefleet::templates
