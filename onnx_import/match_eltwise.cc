// Elementwise nodes left after the other matches -> eltwise: binary Add,
// Sub, Mul, Div, Max, Min, Pow (B broadcast as tensor, scalar, channel or
// nc), unary functions (Sqrt, Exp, Log, Abs, Neg, Reciprocal, Tanh, Erf,
// Floor, Ceil, Round, Sign), activations and a lone BatchNormalization
// (fn=none), each with the epilogue of what follows folded.
#include <cctype>

#include "onnx_import/epilogue_fold.h"
#include "onnx_import/match.h"

namespace tunefleet::onnx_import {

bool IsUnaryEltwise(const std::string& op) {
  return op == "Sqrt" || op == "Exp" || op == "Log" || op == "Abs" ||
         op == "Neg" || op == "Reciprocal" || op == "Tanh" || op == "Erf" ||
         op == "Floor" || op == "Ceil" || op == "Round" || op == "Sign";
}

MatchResult MatchEltwise(const MatchContext& c, int i) {
  const GraphIndex& g = c.g;
  const onnx::NodeProto& n = g.node(i);
  const std::string& op = n.op_type();
  std::optional<Dims> out = g.Shape(Output(n, 0));
  if (!out) return NoMatch{"output shape unknown"};
  EpilogueSite site;
  site.out = Output(n, 0);
  // A consecutive Add of a tensor of the output's shape is fused as the
  // residual step (issue 36: one launch instead of two).
  site.residual = true;
  site.rank = static_cast<int>(out->size());
  site.channel_axis = site.rank == 4 ? 1 : site.rank - 1;
  std::string fn = "none", b = "scalar";
  // The operands: A of the output's shape, B as `b` says ("" for none).
  std::string a_name = Input(n, 0), b_name;
  const bool binary = op == "Add" || op == "Sub" || op == "Mul" ||
                      op == "Div" || op == "Max" || op == "Min" || op == "Pow";
  if (binary) {
    if (n.input_size() != 2) return NoMatch{"needs two inputs"};
    std::optional<Dims> x = g.Shape(n.input(0)), y = g.Shape(n.input(1));
    if (!x || !y) return NoMatch{"input shape unknown"};
    const bool commutes = op != "Sub" && op != "Div" && op != "Pow";
    b_name = n.input(1);
    if (*x != *out) {
      if (!commutes || *y != *out) {
        return NoMatch{"the first operand is broadcast"};
      }
      std::swap(x, y);
      std::swap(a_name, b_name);
    }
    int axis = site.channel_axis;
    b = BroadcastKind(*y, *out, &axis);
    if (b.empty()) {
      return NoMatch{"a broadcast other than tensor, scalar, channel or N x C"};
    }
    if (b == "nc") axis = 1;
    site.channel_axis = axis;
    fn = op;
    for (char& ch : fn) ch = static_cast<char>(std::tolower(ch));
  } else if (IsUnaryEltwise(op)) {
    fn = op;
    for (char& ch : fn) ch = static_cast<char>(std::tolower(ch));
  } else if (op == "BatchNormalization") {
    if (site.rank < 2) return NoMatch{"input of rank < 2"};
    site.channel_axis = 1;
    site.affine = "scale_shift";
  } else {
    std::optional<std::pair<double, double>> params = ActParams(g, n);
    if (!params) return NoMatch{"Clip bounds are not constant"};
    site.act = ActName(op);
    site.act_a = params->first;
    site.act_b = params->second;
  }
  // The view as N x C x H x W with the channel axis as C.
  const size_t axis = static_cast<size_t>(std::max(site.channel_axis, 0));
  std::vector<templates::Dim> dims = {{"N", 1}, {"C", 1}, {"H", 1}, {"W", 1}};
  if (!out->empty()) {
    std::optional<int64_t> lead = Product(*out, 0, axis);
    std::optional<int64_t> rest = Product(*out, axis + 1, out->size());
    if (!lead || !rest) return NoMatch{"shape too large"};
    dims = {{"N", *lead}, {"C", (*out)[axis]}, {"H", *rest}, {"W", 1}};
    if (out->size() == 4 && axis == 1) {
      dims[2].value = (*out)[2];
      dims[3].value = (*out)[3];
    }
    site.channels = (*out)[axis];
  } else {
    site.rank = 0;
  }
  std::string bn_error;
  if (op == "BatchNormalization" && c.bind) {
    if (auto bn = BatchNormAffine(g, n, site.channels)) {
      site.scale = bn->first;
      site.shift = bn->second;
    } else {
      bn_error =
          "its parameters are not readable constants of one value "
          "per channel";
    }
  }
  const Epilogue e = FoldEpilogue(g, site, c.covered);
  const std::vector<int> nodes = e.Covering(i);
  std::vector<templates::Attr> attrs = e.Attrs(site);
  attrs.push_back({"fn", fn});
  attrs.push_back({"b", b});
  MatchResult r = Result(MakeWorkload("eltwise", dims, attrs), nodes);
  Match* m = std::get_if<Match>(&r);
  if (m == nullptr || !c.bind) return r;
  m->error = !bn_error.empty() ? bn_error : e.error;
  m->buffers.push_back(BindInput(g, a_name, &m->error));
  m->buffers.push_back(b_name.empty() ? BindConstant({0.0f})
                                      : BindInput(g, b_name, &m->error));
  BindEpilogue(g, e, /*residual_arg=*/true, m);
  return r;
}

}  // namespace tunefleet::onnx_import
