// LayerNormalization, and its decomposed form ReduceMean -> Sub -> Pow 2 ->
// ReduceMean -> Add eps -> Sqrt -> Div (then Mul gamma, Add beta) over the
// last axis -> layernorm.
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {
namespace {

// The single consumer of `name` when it is an `op` not in a task, or -1
// (also when `name` is a graph output).
int Next(const MatchContext& c, const std::string& name, const char* op) {
  if (c.g.IsGraphOutput(name)) return -1;
  const std::vector<int>& next = c.g.Consumers(name);
  if (next.size() != 1 || c.covered[next[0]] ||
      c.g.node(next[0]).op_type() != op) {
    return -1;
  }
  return next[0];
}

// Whether ReduceMean `n` averages the last axis of a rank-`rank` tensor
// and keeps its dims.
bool MeanOfLastAxis(const MatchContext& c, const onnx::NodeProto& n,
                    int64_t rank) {
  if (n.op_type() != "ReduceMean" || IntAttr(n, "keepdims", 1) != 1) {
    return false;
  }
  Dims axes = IntsAttr(n, "axes", {});
  if (!Input(n, 1).empty()) {
    std::optional<TensorValue> v = c.g.Value(Input(n, 1));
    if (!v || v->is_float()) return false;
    axes = v->ints;
  }
  return axes.size() == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

// Whether constant `name` holds one value per element of the last axis
// (D) or one in all.
bool PerLastAxis(const GraphIndex& g, const std::string& name, int64_t d) {
  std::optional<Dims> dims = g.ConstantDims(name);
  if (!dims) return false;
  for (size_t k = 0; k < dims->size(); ++k) {
    if ((*dims)[k] != 1 && !(k + 1 == dims->size() && (*dims)[k] == d)) {
      return false;
    }
  }
  return true;
}

// What a layernorm step binds: input, output, gamma and beta (D values
// each with affine, else one unused value), and eps.
struct LayerNormBinding {
  std::string input, output;
  std::vector<double> gamma, beta;  // empty: 1 and 0
  double eps = 1e-5;
  std::string error;
};

MatchResult Workload(const MatchContext& c, const Dims& x, bool affine,
                     std::vector<int> nodes, const LayerNormBinding& bind) {
  std::optional<int64_t> rows = Product(x, 0, x.size() - 1);
  if (!rows) return NoMatch{"shape too large"};
  MatchResult r =
      Result(MakeWorkload("layernorm", {{"N", *rows}, {"D", x.back()}},
                          {{"affine", affine ? "scale_shift" : "none"}}),
             std::move(nodes));
  Match* m = std::get_if<Match>(&r);
  if (m == nullptr || !c.bind) return r;
  m->error = bind.error;
  const size_t d = affine ? static_cast<size_t>(x.back()) : 1;
  std::vector<float> gamma(d, 1.0f), beta(d, 0.0f);
  if (affine) {
    if (!bind.gamma.empty()) gamma.assign(bind.gamma.begin(), bind.gamma.end());
    if (!bind.beta.empty()) beta.assign(bind.beta.begin(), bind.beta.end());
  }
  m->buffers = {BindInput(c.g, bind.input, &m->error), BindTensor(bind.output),
                BindConstant(std::move(gamma)), BindConstant(std::move(beta))};
  m->floats = {static_cast<float>(bind.eps)};
  return r;
}

// The values of constant `name` spread to `d` (one value, or one per
// element of the last axis), or an error in `error`.
std::vector<double> LastAxisValues(const GraphIndex& g, const std::string& name,
                                   int64_t d, std::string* error) {
  std::optional<std::vector<float>> v = g.Floats(name);
  if (v && v->size() == 1) return std::vector<double>(d, (*v)[0]);
  if (v && static_cast<int64_t>(v->size()) == d) {
    return std::vector<double>(v->begin(), v->end());
  }
  *error = "constant " + name + " is not readable as one value per element";
  return {};
}

}  // namespace

MatchResult MatchLayerNorm(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  std::optional<Dims> x = g.Shape(Input(n, 0));
  if (!x || x->empty()) return NoMatch{"input shape unknown"};
  const int64_t rank = static_cast<int64_t>(x->size());
  if (n.op_type() == "LayerNormalization") {
    const int64_t axis = IntAttr(n, "axis", -1);
    if (axis != -1 && axis != rank - 1) {
      return NoMatch{"normalises more than the last axis"};
    }
    for (int k = 1; k < n.output_size(); ++k) {
      if (!g.Consumers(n.output(k)).empty() || g.IsGraphOutput(n.output(k))) {
        return NoMatch{"its mean or inverse deviation is used"};
      }
    }
    LayerNormBinding bind{
        Input(n, 0), Output(n, 0), {}, {}, FloatAttr(n, "epsilon", 1e-5f), ""};
    if (c.bind) {
      bind.gamma = LastAxisValues(g, Input(n, 1), x->back(), &bind.error);
      if (!Input(n, 2).empty()) {
        bind.beta = LastAxisValues(g, Input(n, 2), x->back(), &bind.error);
      }
    }
    return Workload(c, *x, true, {i}, bind);
  }
  // The decomposed form, from its first ReduceMean.
  const std::string& in = Input(n, 0);
  if (!MeanOfLastAxis(c, n, rank)) return NoMatch{"not a LayerNorm's mean"};
  const int sub = Next(c, Output(n, 0), "Sub");
  if (sub < 0 || Input(g.node(sub), 0) != in) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  const std::string& centred = Output(g.node(sub), 0);
  const std::vector<int>& uses = g.Consumers(centred);
  if (uses.size() != 2 || g.IsGraphOutput(centred)) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  const int pow = g.node(uses[0]).op_type() == "Pow" ? uses[0] : uses[1];
  const int div = pow == uses[0] ? uses[1] : uses[0];
  if (c.covered[pow] || c.covered[div] || g.node(pow).op_type() != "Pow" ||
      g.node(div).op_type() != "Div" || Input(g.node(pow), 0) != centred ||
      g.Scalar(Input(g.node(pow), 1)) != 2.0 ||
      Input(g.node(div), 0) != centred) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  const int var = Next(c, Output(g.node(pow), 0), "ReduceMean");
  if (var < 0 || !MeanOfLastAxis(c, g.node(var), rank)) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  const int eps = Next(c, Output(g.node(var), 0), "Add");
  if (eps < 0 || !g.Scalar(Input(g.node(eps), 1))) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  const int sqrt = Next(c, Output(g.node(eps), 0), "Sqrt");
  if (sqrt < 0 || g.IsGraphOutput(Output(g.node(sqrt), 0)) ||
      g.Consumers(Output(g.node(sqrt), 0)) != std::vector<int>{div} ||
      Input(g.node(div), 1) != Output(g.node(sqrt), 0)) {
    return NoMatch{"not a LayerNorm's mean"};
  }
  std::vector<int> nodes = {i, sub, pow, var, eps, sqrt, div};
  bool affine = false;
  std::string out = Output(g.node(div), 0);
  LayerNormBinding bind{in, "", {}, {}, *g.Scalar(Input(g.node(eps), 1)), ""};
  for (const char* op : {"Mul", "Add"}) {
    const int k = Next(c, out, op);
    if (k < 0) continue;
    const onnx::NodeProto& a = g.node(k);
    const std::string& other = Input(a, 0) == out ? Input(a, 1) : Input(a, 0);
    if (!g.IsConstant(other) || !PerLastAxis(g, other, x->back())) continue;
    nodes.push_back(k);
    affine = true;
    out = Output(a, 0);
    if (c.bind) {
      (op[0] == 'M' ? bind.gamma : bind.beta) =
          LastAxisValues(g, other, x->back(), &bind.error);
    }
  }
  bind.output = out;
  return Workload(c, *x, affine, nodes, bind);
}

}  // namespace tunefleet::onnx_import
