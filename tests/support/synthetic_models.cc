#include "tests/support/synthetic_models.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::testing {
namespace {

// An int64 list attribute's value.
using Ints = std::vector<int64_t>;
// A node attribute's value; its type (INT, FLOAT, STRING or INTS) follows
// the alternative held.
using AttrValue = std::variant<int64_t, float, std::string, Ints>;
// A node's attributes, in the order they are written.
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

// A model under construction: GraphBuilder plus the inputs and outputs
// with their shapes, and seeded weights.
class Net {
 public:
  // A model `name` holding `forms`, with float32 `inputs` and `outputs`
  // of the shapes given, in order.
  Net(std::string name, std::string forms, std::vector<NamedShape> inputs,
      std::vector<NamedShape> outputs) {
    b_.graph()->set_name(name);
    model_.name = std::move(name);
    model_.forms = std::move(forms);
    for (auto& [in, dims] : inputs) In(in, std::move(dims));
    for (auto& [out, dims] : outputs) Out(out, std::move(dims));
  }

  GraphBuilder& b() { return b_; }

  // A weight of `dims` with values uniform in [-s, s), s = 1/sqrt(fan_in)
  // (fan_in: the product of dims after the first), from a seed made of the
  // model's and the weight's names.
  std::string Weight(const std::string& name, std::vector<int64_t> dims) {
    int64_t n = 1, fan_in = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      n *= dims[i];
      if (i > 0) fan_in *= dims[i];
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
    uint64_t state = Fnv1a(model_.name + "/" + name);
    std::vector<float> values(n);
    for (float& v : values) {
      v = scale * (2.0f * Uniform(state) - 1.0f);
    }
    b_.Floats(name, dims, values);
    return name;
  }
  // A float scalar (0-d) constant.
  std::string Scalar(const std::string& name, float v) {
    b_.Floats(name, {}, {v});
    return name;
  }
  std::string Int64s(const std::string& name, std::vector<int64_t> v) {
    b_.Int64s(name, std::move(v));
    return name;
  }
  std::string Int64Scalar(const std::string& name, int64_t v) {
    b_.Int64s(name, {v}, /*scalar=*/true);
    return name;
  }
  // A node with `attrs` written in order.
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const Attrs& attrs = {}) {
    onnx::NodeProto* node = b_.Node(op, std::move(in), std::move(out));
    for (const auto& [key, value] : attrs) {
      if (const auto* i = std::get_if<int64_t>(&value)) {
        GraphBuilder::Int(node, key, *i);
      } else if (const auto* f = std::get_if<float>(&value)) {
        GraphBuilder::Float(node, key, *f);
      } else if (const auto* s = std::get_if<std::string>(&value)) {
        GraphBuilder::String(node, key, *s);
      } else {
        GraphBuilder::Ints(node, key, std::get<Ints>(value));
      }
    }
    return node;
  }
  // One node with one output named `out`; returns `out`.
  std::string Op(const std::string& op, std::vector<std::string> in,
                 const std::string& out, const Attrs& attrs = {}) {
    Node(op, std::move(in), {out}, attrs);
    return out;
  }
  // Conv of `x` with a seeded weight `w` of `dims` (and a bias of dims[0]
  // when `bias`), with `attrs`.
  onnx::NodeProto* Conv(const std::string& x, const std::string& w,
                        std::vector<int64_t> dims, bool bias,
                        const std::string& out, const Attrs& attrs = {}) {
    const int64_t k = dims[0];
    Weight(w, std::move(dims));
    std::vector<std::string> in = {x, w};
    if (bias) in.push_back(Weight(w + "_bias", {k}));
    return Node("Conv", in, {out}, attrs);
  }
  // Abs(x) + c: the guard that keeps Sqrt, Log, Reciprocal and fractional
  // Pow in their domain.
  std::string AbsPlus(const std::string& x, float c, const std::string& out) {
    Op("Abs", {x}, out + "_abs");
    return Op("Add", {out + "_abs", Scalar(out + "_c", c)}, out);
  }
  // A scalar int64 dim of `x`'s shape: Gather(Shape(x), i), folded at
  // import for a fixed input shape.
  std::string ShapeDim(const std::string& x, int64_t i,
                       const std::string& out) {
    Op("Shape", {x}, out + "_shape");
    return Op("Gather", {out + "_shape", Int64Scalar(out + "_i", i)}, out);
  }

  SyntheticModel Done() {
    model_.bytes = b_.Bytes();
    return model_;
  }

 private:
  void In(const std::string& name, std::vector<int64_t> dims) {
    b_.Input(name, dims);
    model_.inputs.emplace_back(name, std::move(dims));
  }
  void Out(const std::string& name, std::vector<int64_t> dims) {
    b_.Output(name);
    auto* shape = b_.graph()
                      ->mutable_output(b_.graph()->output_size() - 1)
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
    model_.outputs.emplace_back(name, std::move(dims));
  }
  static uint64_t Fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
  }
  // splitmix64, top 24 bits: uniform in [0, 1).
  static float Uniform(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) / 16777216.0f;
  }

  GraphBuilder b_;
  SyntheticModel model_;
};

using B = GraphBuilder;

// Cast's "to" for float32.
constexpr int64_t kToFloat = onnx::TensorProto::FLOAT;

// A branch of an If: a graph computing `out` = op(`in`) from the outer
// scope's tensor `in` of shape `dims`.
onnx::GraphProto Branch(const std::string& name, const std::string& op,
                        const std::string& in, const std::string& out,
                        const std::vector<int64_t>& dims) {
  onnx::GraphProto g;
  g.set_name(name);
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name + "_" + op);
  n->add_input(in);
  n->add_output(out);
  auto* o = g.add_output();
  o->set_name(out);
  auto* t = o->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  return g;
}

void GraphAttribute(onnx::NodeProto* n, const std::string& name,
                    const onnx::GraphProto& g) {
  *B::Attribute(n, name, onnx::AttributeProto::GRAPH)->mutable_g() = g;
}

// ConstantOfShape's `value`: a one-element float tensor.
void FillValue(onnx::NodeProto* n, float v) {
  onnx::AttributeProto* a =
      B::Attribute(n, "value", onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(v);
}

// If(Gather(Shape(x), 0) == 1) then Relu(v) else Neg(v): the condition
// folds to true at a batch of 1.
std::string FoldedIf(Net& n, const std::string& x, const std::string& v,
                     const std::vector<int64_t>& v_dims,
                     const std::string& out) {
  n.ShapeDim(x, 0, "if_batch");
  n.Op("Equal", {"if_batch", n.Int64Scalar("if_one", 1)}, "if_cond");
  onnx::NodeProto* node = n.Node("If", {"if_cond"}, {out});
  GraphAttribute(node, "then_branch",
                 Branch("then", "Relu", v, "then_out", v_dims));
  GraphAttribute(node, "else_branch",
                 Branch("else", "Neg", v, "else_out", v_dims));
  return out;
}

// Clip bounds computed from constants and the input's shape: min =
// Neg(0.5), max = Cast(dim 1 of x) * 0.125; both fold at import.
std::pair<std::string, std::string> FoldedClipBounds(Net& n,
                                                     const std::string& x) {
  const std::string lo = n.Op("Neg", {n.Scalar("clip_half", 0.5f)}, "clip_lo");
  n.ShapeDim(x, 1, "clip_dim");
  n.Op("Cast", {"clip_dim"}, "clip_dim_f", {{"to", kToFloat}});
  const std::string hi =
      n.Op("Mul", {"clip_dim_f", n.Scalar("clip_eighth", 0.125f)}, "clip_hi");
  return {lo, hi};
}

// A channel padding as TensorFlow converters write it: zeros of shape
// [N, extra, H, W] from ConstantOfShape of a shape built with Shape,
// Gather and Concat, concatenated after `x` on axis 1.
std::string ChannelPadding(Net& n, const std::string& x, int64_t extra,
                           const std::string& out) {
  n.Op("Shape", {x}, out + "_shape");
  n.Op("Gather", {out + "_shape", n.Int64s(out + "_i0", {0})}, out + "_n");
  n.Op("Gather", {out + "_shape", n.Int64s(out + "_i23", {2, 3})}, out + "_hw");
  n.Op("Concat", {out + "_n", n.Int64s(out + "_extra", {extra}), out + "_hw"},
       out + "_zshape", {{"axis", 0}});
  FillValue(n.Node("ConstantOfShape", {out + "_zshape"}, {out + "_zeros"}),
            0.0f);
  return n.Op("Concat", {x, out + "_zeros"}, out, {{"axis", 1}});
}

SyntheticModel Transpose() {
  Net n("transpose", "Transpose: NCHW to NHWC, and a 4-D permutation",
        {{"x", {1, 3, 4, 5}}},
        {{"nhwc", {1, 4, 5, 3}}, {"mixed", {5, 3, 1, 4}}});
  n.Op("Transpose", {"x"}, "nhwc", {{"perm", Ints{0, 2, 3, 1}}});
  n.Op("Transpose", {"x"}, "mixed", {{"perm", Ints{3, 1, 0, 2}}});
  return n.Done();
}

SyntheticModel Slice() {
  Net n("slice",
        "Slice: steps 2 and 3 on two axes, a negative end; a negative axis "
        "with end INT64_MAX",
        {{"x", {1, 8, 10, 12}}},
        {{"strided", {1, 3, 10, 3}}, {"tail", {1, 8, 4, 12}}});
  n.Op("Slice",
       {"x", n.Int64s("starts", {1, 2}), n.Int64s("ends", {7, -1}),
        n.Int64s("axes", {1, 3}), n.Int64s("steps", {2, 3})},
       "strided");
  n.Op("Slice",
       {"x", n.Int64s("starts2", {-4}), n.Int64s("ends2", {INT64_MAX}),
        n.Int64s("axes2", {-2})},
       "tail");
  return n.Done();
}

SyntheticModel Concat() {
  Net n("concat",
        "Concat: the input, a computed tensor and a constant on axis 1; two "
        "tensors on axis -1",
        {{"x", {1, 3, 4, 4}}},
        {{"channels", {1, 8, 4, 4}}, {"last", {1, 3, 4, 8}}});
  n.Op("Relu", {"x"}, "r");
  n.Weight("c", {1, 2, 4, 4});
  n.Op("Concat", {"x", "r", "c"}, "channels", {{"axis", 1}});
  n.Op("Concat", {"x", "r"}, "last", {{"axis", -1}});
  return n.Done();
}

SyntheticModel Split() {
  Net n("split", "Split: sizes 1, 2, 3 on axis 1; two equal halves on axis 3",
        {{"x", {1, 6, 4, 4}}},
        {{"s0", {1, 1, 4, 4}},
         {"s1", {1, 2, 4, 4}},
         {"s2", {1, 3, 4, 4}},
         {"h0", {1, 6, 4, 2}},
         {"h1", {1, 6, 4, 2}}});
  n.Node("Split", {"x", n.Int64s("sizes", {1, 2, 3})}, {"s0", "s1", "s2"},
         {{"axis", 1}});
  n.Node("Split", {"x"}, {"h0", "h1"}, {{"axis", 3}});
  return n.Done();
}

SyntheticModel Pad() {
  Net n("pad",
        "Pad (constant mode): begin != end with value 0.5; a channel pad "
        "with the default 0",
        {{"x", {1, 2, 5, 5}}},
        {{"padded", {1, 2, 9, 7}}, {"channel_padded", {1, 3, 5, 6}}});
  n.Op("Pad",
       {"x", n.Int64s("pads", {0, 0, 1, 2, 0, 0, 3, 0}),
        n.Scalar("value", 0.5f)},
       "padded");
  n.Op("Pad", {"x", n.Int64s("pads2", {0, 1, 0, 0, 0, 0, 0, 1})},
       "channel_padded");
  return n.Done();
}

SyntheticModel Gather() {
  Net n("gather",
        "Gather with constant indices: a list on axis 1, a scalar on axis 2 "
        "(drops the axis), a negative index",
        {{"x", {1, 5, 6}}},
        {{"picked", {1, 3, 6}}, {"column", {1, 5}}, {"last_row", {1, 1, 6}}});
  n.Op("Gather", {"x", n.Int64s("list", {4, 0, 2})}, "picked", {{"axis", 1}});
  n.Op("Gather", {"x", n.Int64Scalar("one", 5)}, "column", {{"axis", 2}});
  n.Op("Gather", {"x", n.Int64s("last", {-1})}, "last_row", {{"axis", 1}});
  return n.Done();
}

SyntheticModel Cast() {
  Net n("cast",
        "Cast: float to float on data; int64 to float on a folded shape "
        "value that scales the data",
        {{"x", {1, 3, 4, 4}}},
        {{"same", {1, 3, 4, 4}}, {"scaled", {1, 3, 4, 4}}});
  n.Op("Cast", {"x"}, "same", {{"to", kToFloat}});
  n.ShapeDim("x", 1, "channels");
  n.Op("Cast", {"channels"}, "channels_f", {{"to", kToFloat}});
  n.Op("Mul", {"x", "channels_f"}, "scaled");
  return n.Done();
}

SyntheticModel ConstantOfShape() {
  Net n("constant_of_shape",
        "ConstantOfShape: zeros of a computed shape concatenated as channel "
        "padding; 0.25 of Shape(x) added to x",
        {{"x", {1, 3, 4, 4}}},
        {{"padded", {1, 5, 4, 4}}, {"shifted", {1, 3, 4, 4}}});
  ChannelPadding(n, "x", 2, "padded");
  n.Op("Shape", {"x"}, "x_shape");
  FillValue(n.Node("ConstantOfShape", {"x_shape"}, {"quarters"}), 0.25f);
  n.Op("Add", {"x", "quarters"}, "shifted");
  return n.Done();
}

SyntheticModel Expand() {
  Net n("expand", "Expand: to a larger batch and H; to a shape of lower rank",
        {{"x", {1, 3, 1, 5}}}, {{"big", {2, 3, 4, 5}}, {"rows", {1, 3, 4, 5}}});
  n.Op("Expand", {"x", n.Int64s("to", {2, 3, 4, 5})}, "big");
  n.Op("Expand", {"x", n.Int64s("to2", {4, 1})}, "rows");
  return n.Done();
}

SyntheticModel ConvSame(bool upper) {
  const std::string pad = upper ? "SAME_UPPER" : "SAME_LOWER";
  Net n(upper ? "conv_same_upper" : "conv_same_lower",
        "Conv with auto_pad " + pad +
            ": 3x3/s2 on 8x8 (pads 0+1 or 1+0), 2x2/s1, a depthwise 3x3/s2",
        {{"x", {1, 3, 8, 8}}},
        {{"strided", {1, 4, 4, 4}},
         {"even", {1, 4, 8, 8}},
         {"depthwise", {1, 3, 4, 4}}});
  n.Conv("x", "w", {4, 3, 3, 3}, true, "strided",
         {{"auto_pad", pad}, {"strides", Ints{2, 2}}});
  n.Conv("x", "w2", {4, 3, 2, 2}, false, "even", {{"auto_pad", pad}});
  n.Conv("x", "wd", {3, 1, 3, 3}, true, "depthwise",
         {{"auto_pad", pad}, {"strides", Ints{2, 2}}, {"group", 3}});
  return n.Done();
}

SyntheticModel ConvAsymmetricPads() {
  Net n("conv_asymmetric_pads",
        "Conv with explicit pads whose begin and end differ: 3x3/s1 pads "
        "(0,1,2,1), 3x3/s2 pads (1,0,0,1)",
        {{"x", {1, 3, 8, 8}}}, {{"s1", {1, 4, 8, 8}}, {"s2", {1, 4, 4, 4}}});
  n.Conv("x", "w", {4, 3, 3, 3}, true, "s1", {{"pads", Ints{0, 1, 2, 1}}});
  n.Conv("x", "w2", {4, 3, 3, 3}, false, "s2",
         {{"pads", Ints{1, 0, 0, 1}}, {"strides", Ints{2, 2}}});
  return n.Done();
}

SyntheticModel MaxPoolSameUpper() {
  Net n("maxpool_same_upper",
        "MaxPool 3x3/s2 on 8x8 with auto_pad SAME_UPPER and with pads "
        "(0,0,1,1)",
        {{"x", {1, 3, 8, 8}}},
        {{"same", {1, 3, 4, 4}}, {"explicit", {1, 3, 4, 4}}});
  n.Op("MaxPool", {"x"}, "same",
       {{"auto_pad", "SAME_UPPER"},
        {"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}}});
  n.Op("MaxPool", {"x"}, "explicit",
       {{"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}},
        {"pads", Ints{0, 0, 1, 1}}});
  return n.Done();
}

SyntheticModel AvgPool(bool same_lower) {
  Net n(same_lower ? "avgpool_same_lower" : "avgpool_asymmetric_pads",
        same_lower ? "AveragePool with auto_pad SAME_LOWER, 3x3/s2, "
                     "count_include_pad=1"
                   : "AveragePool with pads (1,0,0,1), 3x3/s1, "
                     "count_include_pad=1",
        {{"x", {1, 3, 8, 8}}},
        {{"y", same_lower ? Ints{1, 3, 4, 4} : Ints{1, 3, 7, 7}}});
  Attrs attrs = {{"kernel_shape", Ints{3, 3}}, {"count_include_pad", 1}};
  if (same_lower) {
    attrs.push_back({"auto_pad", "SAME_LOWER"});
    attrs.push_back({"strides", Ints{2, 2}});
  } else {
    attrs.push_back({"pads", Ints{1, 0, 0, 1}});
  }
  n.Op("AveragePool", {"x"}, "y", attrs);
  return n.Done();
}

SyntheticModel Conv1d() {
  Net n("conv1d", "1-D Conv: k3 pads (1,1); k5/s2 pads (2,1), begin != end",
        {{"x", {1, 4, 16}}}, {{"same", {1, 6, 16}}, {"strided", {1, 6, 8}}});
  n.Conv("x", "w", {6, 4, 3}, true, "same", {{"pads", Ints{1, 1}}});
  n.Conv("x", "w2", {6, 4, 5}, false, "strided",
         {{"pads", Ints{2, 1}}, {"strides", Ints{2}}});
  return n.Done();
}

SyntheticModel Pool1d() {
  Net n("pool1d",
        "1-D pools: MaxPool k2/s2; AveragePool k3 pads (1,1), "
        "count_include_pad=1",
        {{"x", {1, 4, 16}}}, {{"max", {1, 4, 8}}, {"avg", {1, 4, 16}}});
  n.Op("MaxPool", {"x"}, "max",
       {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}});
  n.Op("AveragePool", {"x"}, "avg",
       {{"kernel_shape", Ints{3}},
        {"pads", Ints{1, 1}},
        {"count_include_pad", 1}});
  return n.Done();
}

SyntheticModel NhwcInput() {
  Net n("nhwc_input",
        "an NHWC graph input: Transpose to NCHW first, Conv + Relu, "
        "Transpose back",
        {{"x", {1, 8, 8, 3}}}, {{"y", {1, 8, 8, 4}}});
  n.Op("Transpose", {"x"}, "nchw", {{"perm", Ints{0, 3, 1, 2}}});
  n.Conv("nchw", "w", {4, 3, 3, 3}, true, "c", {{"pads", Ints{1, 1, 1, 1}}});
  n.Op("Relu", {"c"}, "r");
  n.Op("Transpose", {"r"}, "y", {{"perm", Ints{0, 2, 3, 1}}});
  return n.Done();
}

// Unary ops on x of 1x3x4x5.
SyntheticModel Pow() {
  Net n("pow",
        "Pow: (|x|+0.5)^1.5 (scalar exponent), x^2, (|x|+0.5)^[0.5,2,3] "
        "(one exponent per channel)",
        {{"x", {1, 3, 4, 5}}},
        {{"fractional", {1, 3, 4, 5}},
         {"square", {1, 3, 4, 5}},
         {"channel", {1, 3, 4, 5}}});
  n.AbsPlus("x", 0.5f, "base");
  n.Op("Pow", {"base", n.Scalar("e", 1.5f)}, "fractional");
  n.Op("Pow", {"x", n.Scalar("two", 2.0f)}, "square");
  n.b().Floats("per_channel", {3, 1, 1}, {0.5f, 2.0f, 3.0f});
  n.Op("Pow", {"base", "per_channel"}, "channel");
  return n.Done();
}

// A unary op of x, or of |x| + 0.5 (`guarded`: Log, Reciprocal), or of
// |x| (Sqrt).
SyntheticModel Unary(const std::string& op, const std::string& name,
                     bool guarded) {
  Net n(name,
        guarded        ? op + " of |x| + 0.5"
        : op == "Sqrt" ? op + " of |x|"
                       : op + " of x",
        {{"x", {1, 3, 4, 5}}}, {{"y", {1, 3, 4, 5}}});
  std::string in = "x";
  if (guarded) {
    in = n.AbsPlus("x", 0.5f, "guarded");
  } else if (op == "Sqrt") {
    in = n.Op("Abs", {"x"}, "absolute");
  }
  n.Op(op, {in}, "y");
  return n.Done();
}

SyntheticModel Reduce(const std::string& op) {
  const bool sum = op == "ReduceSum";
  std::string name = op == "ReduceMean"  ? "reduce_mean"
                     : op == "ReduceMax" ? "reduce_max"
                     : op == "ReduceMin" ? "reduce_min"
                                         : "reduce_sum";
  std::vector<NamedShape> outputs = {{"y13", {2, 1, 5, 1}}, {"y02", {4, 6}}};
  if (sum) outputs.push_back({"all", {1, 1, 1, 1}});
  Net n(name,
        op +
            " over non-contiguous axes (1,3) and (0,2), keepdims 1 "
            "and 0" +
            (sum ? "; axes as an input (opset 13); all axes" : ""),
        {{"x", {2, 4, 5, 6}}}, std::move(outputs));
  auto reduce = [&](Ints axes, bool keep, const std::string& out) {
    if (sum) {
      n.Op(op, {"x", n.Int64s(out + "_axes", axes)}, out,
           {{"keepdims", keep ? 1 : 0}});
    } else {
      n.Op(op, {"x"}, out, {{"axes", axes}, {"keepdims", keep ? 1 : 0}});
    }
  };
  reduce({1, 3}, true, "y13");
  reduce({0, 2}, false, "y02");
  if (sum) {
    n.Op("ReduceSum", {"x"}, "all");  // no axes: every axis, keepdims 1
  }
  return n.Done();
}

SyntheticModel MaxMinAfterConv(bool max) {
  const std::string op = max ? "Max" : "Min";
  Net n(max ? "max_const_after_conv" : "min_const_after_conv",
        op +
            " of a conv's output and a constant (x first, then the "
            "constant first)" +
            (max ? ", after LeakyRelu" : ""),
        {{"x", {1, 3, 8, 8}}}, {{"y", {1, 4, 8, 8}}, {"y2", {1, 4, 8, 8}}});
  n.Conv("x", "w", {4, 3, 3, 3}, true, "c", {{"pads", Ints{1, 1, 1, 1}}});
  std::string act = "c";
  if (max) act = n.Op("LeakyRelu", {act}, "lrelu", {{"alpha", 0.1f}});
  n.Op(op, {act, n.Scalar("k", max ? 0.05f : 0.25f)}, "y");
  n.Conv("x", "w2", {4, 3, 1, 1}, false, "c2", {{"strides", Ints{1, 1}}});
  n.Op(op, {n.Scalar("k2", max ? -0.1f : 0.1f), "c2"}, "y2");
  return n.Done();
}

SyntheticModel ClipFoldedBounds() {
  Net n("clip_folded_bounds",
        "Clip of a conv with bounds computed by Neg(0.5) and Cast(dim 1 of "
        "x) * 0.125, folding to -0.5 and 0.375",
        {{"x", {1, 3, 8, 8}}}, {{"y", {1, 4, 8, 8}}});
  n.Conv("x", "w", {4, 3, 3, 3}, true, "c", {{"pads", Ints{1, 1, 1, 1}}});
  const auto [lo, hi] = FoldedClipBounds(n, "x");
  n.Op("Clip", {"c", lo, hi}, "y");
  return n.Done();
}

SyntheticModel IfFolded() {
  Net n("if_folded",
        "If whose condition (batch == 1) folds to true: Relu, else Neg; "
        "the result used by an Add",
        {{"x", {1, 3, 4, 4}}}, {{"y", {1, 3, 4, 4}}});
  FoldedIf(n, "x", "x", {1, 3, 4, 4}, "branch");
  n.Op("Add", {"branch", "x"}, "y");
  return n.Done();
}

}  // namespace

SyntheticModel AllFormsModel() {
  Net n("all_forms",
        "every form of issue 35 item 3 in one model: NHWC input, Conv "
        "SAME_UPPER/SAME_LOWER/asymmetric pads, LeakyRelu + Max const, Min "
        "const, Clip with folded bounds, MaxPool SAME_UPPER, AveragePool "
        "SAME_LOWER, Pad, Slice, Split, Concat, ConstantOfShape channel "
        "padding, Gather, ReduceMean, Expand, Cast, Abs, Sqrt, Log, "
        "Reciprocal, Neg, Exp, Pow, If, Transpose back, ReduceMax/Min/Sum "
        "over non-contiguous axes, 1-D Conv and MaxPool",
        {{"x", {1, 16, 16, 3}}},
        {{"out_if", {1, 4, 6, 4}},
         {"r_max", {1, 4}},
         {"r_min", {1, 4, 1, 6}},
         {"r_sum", {1, 1, 4, 1}},
         {"mp", {1, 4, 64}}});
  n.Op("Transpose", {"x"}, "t0", {{"perm", Ints{0, 3, 1, 2}}});
  n.Conv("t0", "w1", {8, 3, 3, 3}, true, "c1",  // 1x8x8x8
         {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}});
  n.Op("LeakyRelu", {"c1"}, "l1", {{"alpha", 0.1f}});
  n.Op("Max", {"l1", n.Scalar("floor", 0.05f)}, "m1");
  n.Conv("m1", "w2", {8, 8, 2, 2}, false, "c2", {{"auto_pad", "SAME_LOWER"}});
  n.Op("Min", {"c2", n.Scalar("ceiling", 0.75f)}, "n2");
  n.Conv("n2", "w3", {8, 8, 3, 3}, true, "c3", {{"pads", Ints{0, 1, 2, 1}}});
  const auto [lo, hi] = FoldedClipBounds(n, "x");  // -0.5, 2
  n.Op("Clip", {"c3", lo, hi}, "cl");
  n.Op("MaxPool", {"cl"}, "p1",  // 1x8x4x4
       {{"auto_pad", "SAME_UPPER"},
        {"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}}});
  n.Op("AveragePool", {"cl"}, "p2",
       {{"auto_pad", "SAME_LOWER"},
        {"kernel_shape", Ints{3, 3}},
        {"strides", Ints{2, 2}},
        {"count_include_pad", 1}});
  n.Op("Add", {"p1", "p2"}, "a");
  n.Op("Pad", {"a", n.Int64s("pads", {0, 0, 1, 0, 0, 0, 0, 2})},
       "pd");  // 1x8x5x6
  n.Op("Slice",
       {"pd", n.Int64s("starts", {0, 1}), n.Int64s("ends", {8, 5}),
        n.Int64s("axes", {1, 2}), n.Int64s("steps", {2, 1})},
       "sl");  // 1x4x4x6
  n.Node("Split", {"sl", n.Int64s("sizes", {2, 4})}, {"sa", "sb"},
         {{"axis", 3}});
  n.Op("Concat", {"sb", "sa"}, "cat", {{"axis", 3}});
  ChannelPadding(n, "cat", 2, "cat2");  // 1x6x4x6
  n.Op("Gather", {"cat2", n.Int64s("pick", {5, 0, 3, 1})}, "g",
       {{"axis", 1}});                                      // 1x4x4x6
  n.Op("ReduceMean", {"g"}, "rm", {{"axes", Ints{1, 3}}});  // 1x1x4x1
  n.Op("Expand", {"rm", n.Int64s("full", {1, 4, 4, 6})}, "e");
  n.Op("Cast", {"e"}, "ce", {{"to", kToFloat}});
  n.Op("Add", {"g", "ce"}, "u");
  n.Op("Abs", {"u"}, "ab");
  n.Op("Sqrt", {"ab"}, "sq");
  n.Op("Add", {"ab", n.Scalar("one", 1.0f)}, "ab1");
  n.Op("Log", {"ab1"}, "lg");
  n.Op("Reciprocal", {"ab1"}, "rc");
  n.Op("Neg", {"ab"}, "nab");
  n.Op("Exp", {"nab"}, "ex");
  n.Op("Add", {"ab", n.Scalar("half", 0.5f)}, "ab5");
  n.Op("Pow", {"ab5", n.Scalar("e15", 1.5f)}, "pw");
  n.Op("Add", {"sq", "lg"}, "v1");
  n.Op("Add", {"v1", "rc"}, "v2");
  n.Op("Add", {"v2", "ex"}, "v3");
  n.Op("Add", {"v3", "pw"}, "v");  // 1x4x4x6
  FoldedIf(n, "x", "v", {1, 4, 4, 6}, "iff");
  n.Op("Transpose", {"iff"}, "out_if", {{"perm", Ints{0, 2, 3, 1}}});
  n.Op("ReduceMax", {"v"}, "r_max", {{"axes", Ints{1, 3}}, {"keepdims", 0}});
  n.Op("ReduceMin", {"v"}, "r_min", {{"axes", Ints{0, 2}}});
  n.Op("ReduceSum", {"v", n.Int64s("sum_axes", {1, 3})}, "r_sum");
  // 1-D: the transposed input as 3 channels of 256 samples.
  n.Op("Reshape", {"t0", n.Int64s("as_1d", {1, 3, 256})}, "s1d");
  n.Conv("s1d", "w4", {4, 3, 5}, false, "k1",  // 1x4x128
         {{"strides", Ints{2}}, {"pads", Ints{2, 1}}});
  n.Op("MaxPool", {"k1"}, "mp",
       {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}});
  return n.Done();
}

std::vector<SyntheticModel> SyntheticModels() {
  return {
      Transpose(),
      Slice(),
      Concat(),
      Split(),
      Pad(),
      Gather(),
      Cast(),
      ConstantOfShape(),
      Expand(),
      ConvSame(/*upper=*/true),
      ConvSame(/*upper=*/false),
      ConvAsymmetricPads(),
      MaxPoolSameUpper(),
      AvgPool(/*same_lower=*/true),
      AvgPool(/*same_lower=*/false),
      Conv1d(),
      Pool1d(),
      NhwcInput(),
      Pow(),
      Unary("Sqrt", "sqrt", false),
      Unary("Exp", "exp", false),
      Unary("Log", "log", true),
      Unary("Abs", "abs", false),
      Unary("Neg", "neg", false),
      Unary("Reciprocal", "reciprocal", true),
      Reduce("ReduceMean"),
      Reduce("ReduceMax"),
      Reduce("ReduceMin"),
      Reduce("ReduceSum"),
      MaxMinAfterConv(/*max=*/true),
      MaxMinAfterConv(/*max=*/false),
      ClipFoldedBounds(),
      IfFolded(),
      AllFormsModel(),
  };
}

}  // namespace tunefleet::testing
