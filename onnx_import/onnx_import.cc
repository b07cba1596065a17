#include "onnx_import/onnx_import.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "kernels_templates/registry.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace tunefleet::onnx_import {
namespace {

using Dims = std::vector<int64_t>;

// A model is read as hostile input: any field may be missing, any number
// out of range, the graph may have cycles. Names below are empty for
// inputs and outputs a node lacks, and empty names match nothing.
const std::string& Input(const onnx::NodeProto& n, int i) {
  static const std::string kNone;
  return i < n.input_size() ? n.input(i) : kNone;
}
const std::string& Output(const onnx::NodeProto& n, int i) {
  static const std::string kNone;
  return i < n.output_size() ? n.output(i) : kNone;
}

// The product of dims, or nullopt when it exceeds 2^53 (past that no
// workload is accepted anyway) or a dim is < 1.
std::optional<int64_t> Product(const Dims& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) {
    if (dims[i] < 1 || n > templates::kMaxShapeProduct / dims[i]) {
      return std::nullopt;
    }
    n *= dims[i];
  }
  return n;
}

// Links Elements() follows back through reshapes, and nodes FoldEpilogue()
// folds after a conv or dense: enough for any real model, and an end to
// cycles in hostile ones.
constexpr int kMaxChain = 16;

// An index over a graph after shape inference: producers, consumers,
// constants and known shapes of its tensors.
class GraphIndex {
 public:
  explicit GraphIndex(const onnx::GraphProto& g) : g_(g) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const std::string& in : g.node(i).input()) {
        if (!in.empty()) consumers_[in].push_back(i);
      }
      for (const std::string& out : g.node(i).output()) {
        if (!out.empty()) producer_[out] = i;
      }
      if (g.node(i).op_type() == "Constant") {
        for (const auto& a : g.node(i).attribute()) {
          if (a.name() == "value" && g.node(i).output_size() == 1) {
            constants_[g.node(i).output(0)] = &a.t();
          }
        }
      }
    }
    for (const auto& t : g.initializer()) constants_[t.name()] = &t;
    auto add_shapes = [this](const auto& values) {
      for (const onnx::ValueInfoProto& v : values) {
        if (!v.type().tensor_type().has_shape()) continue;
        Dims dims;
        bool known = true;
        for (const auto& d : v.type().tensor_type().shape().dim()) {
          // Dims < 1 (empty tensors, garbage) count as unknown.
          known = known && d.has_dim_value() && d.dim_value() >= 1;
          dims.push_back(d.dim_value());
        }
        if (known) shapes_[v.name()] = dims;
      }
    };
    add_shapes(g.input());
    add_shapes(g.value_info());
    add_shapes(g.output());
    for (const auto& [name, t] : constants_) {
      Dims dims(t->dims().begin(), t->dims().end());
      if (std::all_of(dims.begin(), dims.end(),
                      [](int64_t d) { return d >= 1; })) {
        shapes_[name] = std::move(dims);
      }
    }
  }

  const onnx::NodeProto& node(int i) const { return g_.node(i); }
  const std::vector<int>& Consumers(const std::string& name) const {
    static const std::vector<int> kNone;
    auto it = consumers_.find(name);
    return it == consumers_.end() ? kNone : it->second;
  }
  std::optional<Dims> Shape(const std::string& name) const {
    auto it = shapes_.find(name);
    if (it != shapes_.end()) return it->second;
    return std::nullopt;
  }
  // Records a shape found by matching (e.g. a dense layer's output, which
  // shape inference may miss behind a data-dependent Reshape).
  void SetShape(const std::string& name, Dims dims) {
    shapes_.emplace(name, std::move(dims));
  }
  bool IsConstant(const std::string& name) const {
    return constants_.count(name) > 0;
  }
  // The single value of a constant scalar (or 1-element tensor).
  std::optional<double> Scalar(const std::string& name) const {
    auto it = constants_.find(name);
    if (it == constants_.end()) return std::nullopt;
    const onnx::TensorProto& t = *it->second;
    if (t.float_data_size() == 1) return t.float_data(0);
    if (t.raw_data().size() == 4 && t.data_type() == onnx::TensorProto::FLOAT) {
      float f;
      std::memcpy(&f, t.raw_data().data(), 4);
      return f;
    }
    if (t.int64_data_size() == 1) return static_cast<double>(t.int64_data(0));
    return std::nullopt;
  }
  // Elements of a tensor, looking through Reshape / Flatten / Squeeze
  // chains (at most kMaxChain links) back to a tensor of known shape (they
  // keep the count). nullopt when unknown or over 2^53.
  std::optional<int64_t> Elements(const std::string& name) const {
    std::string at = name;
    for (int link = 0; link <= kMaxChain; ++link) {
      if (std::optional<Dims> s = Shape(at)) return Product(*s, 0, s->size());
      auto p = producer_.find(at);
      if (p == producer_.end()) return std::nullopt;
      const onnx::NodeProto& n = g_.node(p->second);
      static const std::set<std::string> kKeepCount = {
          "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
      if (!kKeepCount.count(n.op_type()) || n.input_size() == 0) break;
      at = n.input(0);
    }
    return std::nullopt;
  }

 private:
  const onnx::GraphProto& g_;
  std::map<std::string, std::vector<int>> consumers_;
  std::map<std::string, int> producer_;
  std::map<std::string, const onnx::TensorProto*> constants_;
  std::map<std::string, Dims> shapes_;
};

int64_t IntAttr(const onnx::NodeProto& n, absl::string_view name,
                int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

float FloatAttr(const onnx::NodeProto& n, absl::string_view name,
                float fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

std::string StringAttr(const onnx::NodeProto& n, absl::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.s();
  }
  return "";
}

Dims IntsAttr(const onnx::NodeProto& n, absl::string_view name, Dims fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return Dims(a.ints().begin(), a.ints().end());
  }
  return fallback;
}

// A recognised node (or chain): its workload and the nodes it covers.
struct Match {
  templates::Workload workload;
  std::vector<int> nodes;
};

// Why a node cannot become a task.
struct NoMatch {
  std::string reason;
};

// Follows the consumers of a conv's or dense's output and folds batch
// normalisation, a per-channel bias Add and one activation into the
// epilogue attrs; adds the nodes it folds to `nodes`.
void FoldEpilogue(const GraphIndex& g, std::string out, bool bias,
                  std::vector<templates::Attr>* attrs,
                  std::vector<int>* nodes) {
  std::string affine = bias ? "shift" : "none";
  std::string act = "none";
  for (int step = 0; act == "none" && step < kMaxChain; ++step) {
    const std::vector<int>& next = g.Consumers(out);
    if (next.size() == 2) {
      // HardSwish as opset 9 spells it: Mul(x, Clip(Add(x, 3), 0, 6)) / 6.
      const int a = g.node(next[0]).op_type() == "Add" ? next[0] : next[1];
      const int m = a == next[0] ? next[1] : next[0];
      if (g.node(a).op_type() != "Add" || g.node(m).op_type() != "Mul") break;
      const std::vector<int>& clip = g.Consumers(Output(g.node(a), 0));
      if (clip.size() != 1 || g.node(clip[0]).op_type() != "Clip") break;
      const std::string& clipped = Output(g.node(clip[0]), 0);
      if (clipped.empty() ||
          (Input(g.node(m), 0) != clipped && Input(g.node(m), 1) != clipped)) {
        break;
      }
      const std::vector<int>& div = g.Consumers(Output(g.node(m), 0));
      if (div.size() != 1 || g.node(div[0]).op_type() != "Div") break;
      std::optional<double> six = g.Scalar(Input(g.node(div[0]), 1));
      std::optional<double> three = g.Scalar(Input(g.node(a), 1));
      if (!six || *six != 6.0 || !three || *three != 3.0) break;
      nodes->insert(nodes->end(), {a, clip[0], m, div[0]});
      act = "hardswish";
      break;
    }
    if (next.size() != 1) break;
    const onnx::NodeProto& n = g.node(next[0]);
    const std::string& op = n.op_type();
    if (op == "BatchNormalization" && affine != "scale_shift") {
      affine = "scale_shift";
    } else if (op == "Add" && n.input_size() == 2 && g.IsConstant(n.input(1))) {
      affine = affine == "none" ? "shift" : affine;
    } else if (op == "Relu") {
      act = "relu";
    } else if (op == "Clip") {
      act = "clip";
    } else if (op == "HardSigmoid") {
      act = "hardsigmoid";
    } else if (op == "HardSwish") {
      act = "hardswish";
    } else {
      break;
    }
    nodes->push_back(next[0]);
    out = Output(n, 0);
  }
  attrs->push_back({"affine", affine});
  attrs->push_back({"act", act});
}

absl::StatusOr<templates::Workload> MakeWorkload(
    absl::string_view op, std::vector<templates::Dim> dims,
    std::vector<templates::Attr> attrs = {}) {
  return templates::Workload::Create(op, std::move(dims),
                                     templates::Dtype::kFp32,
                                     std::move(attrs));
}

// Symmetric padding of a node, or nullopt for asymmetric / auto padding.
std::optional<std::pair<int64_t, int64_t>> SymmetricPads(
    const onnx::NodeProto& n) {
  const std::string auto_pad = StringAttr(n, "auto_pad");
  if (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "VALID") {
    return std::nullopt;
  }
  const Dims pads = IntsAttr(n, "pads", {0, 0, 0, 0});
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) {
    return std::nullopt;
  }
  return std::make_pair(pads[0], pads[1]);
}

std::variant<Match, NoMatch> MatchConv(const GraphIndex& g, int i) {
  const onnx::NodeProto& n = g.node(i);
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  std::optional<Dims> x = g.Shape(n.input(0));
  std::optional<Dims> w = g.Shape(n.input(1));
  if (!x || !w || x->size() != 4 || w->size() != 4) {
    return NoMatch{"only 2D convolutions with known shapes"};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weights are not constant"};
  std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
  if (!pads) return NoMatch{"asymmetric or automatic padding"};
  const Dims strides = IntsAttr(n, "strides", {1, 1});
  const Dims dilations = IntsAttr(n, "dilations", {1, 1});
  if (strides.size() != 2 || dilations.size() != 2) {
    return NoMatch{"strides or dilations are not 2D"};
  }
  const int64_t group = IntAttr(n, "group", 1);
  const int64_t c = (*x)[1], k = (*w)[0];
  std::vector<templates::Attr> attrs;
  Match m{*MakeWorkload("gemm", {{"M", 1}, {"N", 1}, {"K", 1}}), {i}};
  FoldEpilogue(g, n.output(0), n.input_size() > 2, &attrs, &m.nodes);
  std::vector<templates::Dim> dims = {
      {"N", (*x)[0]},       {"C", c},
      {"H", (*x)[2]},       {"W", (*x)[3]},
      {"R", (*w)[2]},       {"S", (*w)[3]},
      {"SH", strides[0]},   {"SW", strides[1]},
      {"PH", pads->first},  {"PW", pads->second},
      {"DH", dilations[0]}, {"DW", dilations[1]}};
  absl::StatusOr<templates::Workload> workload;
  if (group == c && k == c && group > 1) {
    workload = MakeWorkload("depthwise_conv2d", dims, attrs);
  } else {
    dims.push_back({"K", k});
    dims.push_back({"G", group});
    workload = MakeWorkload("conv2d", dims, attrs);
  }
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  m.workload = *workload;
  return m;
}

std::variant<Match, NoMatch> MatchDense(GraphIndex& g, int i) {
  const onnx::NodeProto& n = g.node(i);
  const bool gemm = n.op_type() == "Gemm";
  if (n.input_size() < 2 || n.output_size() < 1) {
    return NoMatch{"needs an input, a weight and an output"};
  }
  if (!g.IsConstant(n.input(1))) return NoMatch{"weight is not constant"};
  std::optional<Dims> w = g.Shape(n.input(1));
  if (!w || w->size() != 2) return NoMatch{"weight is not a 2D constant"};
  if (gemm && (IntAttr(n, "transA", 0) != 0 || FloatAttr(n, "alpha", 1) != 1 ||
               FloatAttr(n, "beta", 1) != 1)) {
    return NoMatch{"transA, alpha or beta other than 0, 1, 1"};
  }
  const bool trans_b = gemm && IntAttr(n, "transB", 0) != 0;
  const int64_t k = trans_b ? (*w)[1] : (*w)[0];
  const int64_t out = trans_b ? (*w)[0] : (*w)[1];
  std::optional<int64_t> elements = g.Elements(n.input(0));
  if (k < 1 || out < 1 || !elements || *elements % k != 0) {
    return NoMatch{"input shape unknown or not a multiple of the weight's"};
  }
  std::vector<templates::Attr> attrs;
  Match m{*MakeWorkload("gemm", {{"M", 1}, {"N", 1}, {"K", 1}}), {i}};
  FoldEpilogue(g, n.output(0), gemm && n.input_size() > 2, &attrs, &m.nodes);
  absl::StatusOr<templates::Workload> workload = MakeWorkload(
      "dense", {{"M", *elements / k}, {"N", out}, {"K", k}}, attrs);
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  m.workload = *workload;
  for (int node : m.nodes) {
    if (!Output(g.node(node), 0).empty()) {
      g.SetShape(Output(g.node(node), 0), {*elements / k, out});
    }
  }
  return m;
}

std::variant<Match, NoMatch> MatchPool(const GraphIndex& g, int i) {
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || x->size() != 4) return NoMatch{"only 2D pooling of known shape"};
  const bool global = absl::StartsWith(n.op_type(), "Global");
  const std::string mode =
      absl::StrContains(n.op_type(), "Max") ? "max" : "avg";
  std::vector<templates::Dim> dims = {
      {"N", (*x)[0]}, {"C", (*x)[1]}, {"H", (*x)[2]}, {"W", (*x)[3]}};
  absl::StatusOr<templates::Workload> workload;
  if (global) {
    workload = MakeWorkload("global_pool", dims, {{"mode", mode}});
  } else {
    std::optional<std::pair<int64_t, int64_t>> pads = SymmetricPads(n);
    if (!pads || IntAttr(n, "ceil_mode", 0) != 0 ||
        IntAttr(n, "count_include_pad", 0) != 0 ||
        IntsAttr(n, "dilations", {1, 1}) != Dims{1, 1}) {
      return NoMatch{
          "asymmetric padding, ceil_mode, count_include_pad or dilation"};
    }
    const Dims kernel = IntsAttr(n, "kernel_shape", {});
    const Dims strides = IntsAttr(n, "strides", {1, 1});
    if (kernel.size() != 2 || strides.size() != 2) {
      return NoMatch{"kernel_shape or strides are not 2D"};
    }
    dims.insert(dims.end(), {{"R", kernel[0]},
                             {"S", kernel[1]},
                             {"SH", strides[0]},
                             {"SW", strides[1]},
                             {"PH", pads->first},
                             {"PW", pads->second}});
    workload = MakeWorkload("pool2d", dims, {{"mode", mode}});
  }
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  return Match{*workload, {i}};
}

std::variant<Match, NoMatch> MatchSoftmax(const GraphIndex& g, int i,
                                          int64_t opset) {
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || x->empty()) return NoMatch{"input shape unknown"};
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis = IntAttr(n, "axis", opset >= 13 ? -1 : 1);
  if (axis < -rank || axis > rank) return NoMatch{"axis out of range"};
  if (axis < 0) axis += rank;
  // Before opset 13, Softmax flattens dims from `axis` on into one row;
  // from opset 13 it normalises along `axis` alone, which is our op only
  // when that is the last axis.
  if (opset >= 13 && axis != rank - 1) {
    return NoMatch{"softmax over an axis other than the last"};
  }
  std::optional<int64_t> rows = Product(*x, 0, static_cast<size_t>(axis));
  std::optional<int64_t> row =
      Product(*x, static_cast<size_t>(axis), x->size());
  if (!rows || !row) return NoMatch{"shape too large"};
  absl::StatusOr<templates::Workload> workload =
      MakeWorkload("softmax", {{"N", *rows}, {"D", *row}});
  if (!workload.ok()) return NoMatch{std::string(workload.status().message())};
  return Match{*workload, {i}};
}

// Subgraphs (If, Loop, Scan bodies) CheckForInference() walks, at most.
constexpr int kMaxGraphDepth = 8;

// What libonnx's shape inference takes on trust, checked first (it runs
// on hostile models and does not check them): every node of an op libonnx
// knows must match its schema (input and output counts, attribute types),
// and window attributes must be positive (inference divides by strides,
// dilations and kernel sizes). Recurses into subgraphs. Errors:
// INVALID_ARGUMENT naming the node.
absl::Status CheckForInference(const onnx::GraphProto& graph,
                               const std::map<std::string, int>& opsets,
                               absl::string_view name, int depth) {
  if (depth > kMaxGraphDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " nests subgraphs deeper than ", kMaxGraphDepth, " levels"));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    const std::string where =
        absl::StrCat(name, ": node ", n.name().empty() ? "" : n.name(), " (",
                     n.op_type(), " @", i, ")");
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto opset = opsets.find(domain);
    if (opset != opsets.end()) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(n.op_type(), opset->second, domain);
      if (schema != nullptr) {
        // libonnx reports errors by throwing; they stop here.
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, " does not match its schema: ", e.what()));
        }
      }
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      const std::string& attr = a.name();
      const int64_t min = attr == "strides" || attr == "dilations" ||
                                  attr == "kernel_shape" || attr == "group" ||
                                  attr == "blocksize"
                              ? 1
                          : attr == "pads" ? 0
                                           : INT64_MIN;
      // An int set on an attribute of another type is read all the same.
      bool ok = !a.has_i() || a.i() >= min;
      for (int64_t v : a.ints()) ok = ok && v >= min;
      if (!ok) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": attribute ", attr, " must be >= ", min));
      }
      if (a.has_g()) {
        if (absl::Status s = CheckForInference(a.g(), opsets, name, depth + 1);
            !s.ok()) {
          return s;
        }
      }
      for (const onnx::GraphProto& sub : a.graphs()) {
        if (absl::Status s = CheckForInference(sub, opsets, name, depth + 1);
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return absl::OkStatus();
}

// libonnx's shape inference, as ImportOnnxBytes runs it. Errors:
// INVALID_ARGUMENT with libonnx's message.
absl::Status InferShapes(onnx::ModelProto* model, absl::string_view name) {
  // libonnx reports errors by throwing; they stop here.
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        *model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference of ", name, " failed: ", e.what()));
  }
  return absl::OkStatus();
}

// Longest libonnx's shape inference may take on one model.
constexpr int kInferenceTimeoutMs = 120000;

// Runs InferShapes() in a child process (base::RunInChild) and takes its
// results (value_info and outputs) back. libonnx trusts the models it
// reads: fuzzing found null dereferences and divisions by zero in its shape
// inference (tests/fuzz/corpus/onnx_fuzzer/crash-*). In a child, a crash
// or a hang costs a refusal, not the process. Errors: INVALID_ARGUMENT
// naming the model when inference fails, crashes or times out; INTERNAL
// when no child can be started.
absl::Status InferShapesIsolated(onnx::ModelProto* model,
                                 absl::string_view name) {
  (void)onnx::OpSchemaRegistry::Instance();  // built before the fork
  // The child replies 'O' and the inferred shapes, or 'E' and the error.
  absl::StatusOr<base::ChildOutput> child = base::RunInChild(
      [&]() -> std::string {
        absl::Status s = InferShapes(model, name);
        if (!s.ok()) return absl::StrCat("E", s.message());
        onnx::GraphProto shapes;
        *shapes.mutable_value_info() = model->graph().value_info();
        *shapes.mutable_output() = model->graph().output();
        return "O" + shapes.SerializeAsString();
      },
      kInferenceTimeoutMs);
  if (absl::IsDeadlineExceeded(child.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference of ", name, " did not finish in ",
                     kInferenceTimeoutMs / 1000, " s"));
  }
  if (!child.ok()) {
    return absl::InternalError(
        absl::StrCat("shape inference: ", child.status().message()));
  }
  const std::string& reply = child->bytes;
  if (!child->exit.success() || reply.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape inference of ", name, " crashed (",
        child->exit.signaled ? absl::StrCat("signal ", child->exit.code)
                             : absl::StrCat("exit ", child->exit.code),
        "): the model is malformed"));
  }
  if (reply[0] == 'E') return absl::InvalidArgumentError(reply.substr(1));
  onnx::GraphProto shapes;
  if (reply[0] != 'O' ||
      !shapes.ParseFromArray(reply.data() + 1,
                             static_cast<int>(reply.size() - 1))) {
    return absl::InternalError(
        absl::StrCat("shape inference of ", name, ": garbled reply"));
  }
  *model->mutable_graph()->mutable_value_info() = shapes.value_info();
  *model->mutable_graph()->mutable_output() = shapes.output();
  return absl::OkStatus();
}

absl::Status ApplyInputShapes(onnx::GraphProto* graph,
                              const InputShapes& shapes,
                              absl::string_view name) {
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  std::vector<std::string> inputs;
  for (const auto& in : graph->input()) {
    if (!initializers.count(in.name())) inputs.push_back(in.name());
  }
  auto describe = [](const onnx::ValueInfoProto& v) {
    std::vector<std::string> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : "?");
    }
    return absl::StrCat(v.name(), " (", absl::StrJoin(dims, "x"), ")");
  };
  for (const auto& [input, dims] : shapes) {
    if (std::find(inputs.begin(), inputs.end(), input) == inputs.end()) {
      std::vector<std::string> described;
      for (const auto& in : graph->input()) {
        if (!initializers.count(in.name())) described.push_back(describe(in));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(name, " has no input '", input,
                       "'; its inputs: ", absl::StrJoin(described, ", ")));
    }
  }
  for (onnx::ValueInfoProto& in : *graph->mutable_input()) {
    if (initializers.count(in.name())) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    auto given = shapes.find(in.name());
    if (given == shapes.end()) {
      for (const auto& d : shape->dim()) {
        if (!d.has_dim_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input ", describe(in), " of ", name,
                           " has dynamic dims: give --input-shape ", in.name(),
                           "=", "<dims, e.g. 1,3,48,192>"));
        }
      }
      continue;
    }
    if (shape->dim_size() != 0 &&
        shape->dim_size() != static_cast<int>(given->second.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape ", in.name(), " has ", given->second.size(),
          " dims; the model's input is ", describe(in)));
    }
    for (size_t d = 0; d < given->second.size(); ++d) {
      if (d < static_cast<size_t>(shape->dim_size()) &&
          shape->dim(d).has_dim_value() &&
          shape->dim(d).dim_value() != given->second[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input-shape ", in.name(), " dim ", d, " is ", given->second[d],
            " but the model fixes it to ", shape->dim(d).dim_value()));
      }
    }
    shape->clear_dim();
    for (int64_t v : given->second) shape->add_dim()->set_dim_value(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseInputShape(absl::string_view text, InputShapes* shapes) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(text, absl::MaxSplits('=', 1));
  const absl::string_view name = absl::StripAsciiWhitespace(kv.first);
  Dims dims;
  for (absl::string_view d :
       absl::StrSplit(kv.second, absl::ByAnyChar(",;x"), absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v) || v < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad --input-shape '", text,
                       "': dims must be integers >= 1, ", "e.g. x=1,3,48,192"));
    }
    dims.push_back(v);
  }
  if (name.empty() || dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --input-shape '", text, "': expected NAME=D1,D2,..."));
  }
  (*shapes)[std::string(name)] = dims;
  return absl::OkStatus();
}

namespace {

// A model read, its input dims fixed and its shapes inferred.
struct InferredModel {
  onnx::ModelProto model;
  int64_t opset = 0;  // of the default (ai.onnx) domain
};

absl::StatusOr<InferredModel> ReadAndInfer(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes) {
  InferredModel out;
  onnx::ModelProto& model = out.model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is not an ONNX model (no ModelProto with a graph)"));
  }
  std::map<std::string, int> opsets;  // domain ("" for ai.onnx) -> version
  for (const auto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    const int version = static_cast<int>(
        std::clamp<int64_t>(o.version(), 0, std::numeric_limits<int>::max()));
    opsets[domain] = version;
    if (domain.empty()) out.opset = o.version();
  }
  TUNEFLEET_RETURN_IF_ERROR(
      ApplyInputShapes(model.mutable_graph(), input_shapes, name));
  TUNEFLEET_RETURN_IF_ERROR(CheckForInference(model.graph(), opsets, name, 0));
  TUNEFLEET_RETURN_IF_ERROR(InferShapesIsolated(&model, name));
  return out;
}

// The workload node `i` (with the nodes folded into it) runs, or why none.
std::variant<Match, NoMatch> MatchNode(GraphIndex& g, int i, int64_t opset) {
  const std::string& op = g.node(i).op_type();
  if (op == "Conv") return MatchConv(g, i);
  if (op == "MatMul" || op == "Gemm") return MatchDense(g, i);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "GlobalMaxPool") {
    return MatchPool(g, i);
  }
  if (op == "Softmax") return MatchSoftmax(g, i, opset);
  return NoMatch{"no template for this op"};
}

// Adds node `i`'s match to the task of its workload (a new one the first
// time, with its template's FLOP count).
void AddToTask(const Match& m, const onnx::NodeProto& node, int i,
               std::map<std::string, size_t>& task_of, ModelTasks& out) {
  auto [it, fresh] = task_of.emplace(m.workload.Canonical(), out.tasks.size());
  if (fresh) {
    ModelTask t{m.workload, 0, 0, "", {}};
    if (auto tmpl = templates::FindTemplateFor(m.workload, ""); tmpl.ok()) {
      t.flops = (*tmpl)->Flops(m.workload);
      t.template_name = std::string((*tmpl)->name());
    }
    out.tasks.push_back(std::move(t));
  }
  ModelTask& t = out.tasks[it->second];
  ++t.count;
  t.nodes.push_back(node.name().empty() ? absl::StrCat(node.op_type(), "@", i)
                                        : node.name());
}

// Tasks heaviest first (FLOPs x count); unsupported ops most frequent first.
void SortResults(std::map<std::string, UnsupportedOp>& unsupported,
                 ModelTasks& out) {
  std::stable_sort(out.tasks.begin(), out.tasks.end(),
                   [](const ModelTask& a, const ModelTask& b) {
                     return a.flops * a.count > b.flops * b.count;
                   });
  for (auto& [op, u] : unsupported) out.unsupported.push_back(u);
  std::sort(out.unsupported.begin(), out.unsupported.end(),
            [](const auto& a, const auto& b) { return a.count > b.count; });
}

}  // namespace

absl::StatusOr<ModelTasks> ImportOnnxBytes(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes) {
  TUNEFLEET_ASSIGN_OR_RETURN(InferredModel inferred,
                             ReadAndInfer(bytes, name, input_shapes));
  const onnx::GraphProto& graph = inferred.model.graph();
  GraphIndex g(graph);
  ModelTasks out;
  out.nodes = graph.node_size();
  out.input_shapes = input_shapes;
  std::vector<bool> covered(graph.node_size(), false);
  std::map<std::string, size_t> task_of;  // canonical -> index into tasks
  std::map<std::string, UnsupportedOp> unsupported;
  for (int i = 0; i < graph.node_size(); ++i) {
    const std::string& op = graph.node(i).op_type();
    if (covered[i] || op == "Constant") continue;
    std::variant<Match, NoMatch> r = MatchNode(g, i, inferred.opset);
    if (const NoMatch* no = std::get_if<NoMatch>(&r)) {
      UnsupportedOp& u = unsupported[op];
      u.op_type = op;
      if (u.count++ == 0) u.reason = no->reason;
      continue;
    }
    const Match& m = std::get<Match>(r);
    for (int n : m.nodes) covered[n] = true;
    AddToTask(m, graph.node(i), i, task_of, out);
  }
  SortResults(unsupported, out);
  return out;
}

absl::StatusOr<ModelTasks> ImportOnnx(const std::string& path,
                                      const InputShapes& input_shapes) {
  absl::StatusOr<std::string> bytes = base::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  return ImportOnnxBytes(*bytes, path, input_shapes);
}

}  // namespace tunefleet::onnx_import
