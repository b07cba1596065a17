// Small ONNX models for tests, built with ONNX's protobuf classes.
#ifndef TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_
#define TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tunefleet::testing {

// Builds a graph node by node; weights are initializers or Constant nodes.
class GraphBuilder {
 public:
  GraphBuilder() {
    model_.set_ir_version(7);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
  }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  // The default domain's opset (13 unless set).
  void Opset(int64_t version) {
    model_.mutable_opset_import(0)->set_version(version);
  }

  // A float input with dims; 0 marks a dynamic dim.
  void Input(const std::string& name, std::vector<int64_t> dims) {
    auto* in = graph()->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d > 0) {
        dim->set_dim_value(d);
      } else {
        dim->set_dim_param("dynamic");
      }
    }
  }
  void Output(const std::string& name) {
    auto* out = graph()->add_output();
    out->set_name(name);
    out->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  }
  // A constant tensor of zeros, as an initializer or a Constant node.
  void Weight(const std::string& name, std::vector<int64_t> dims,
              bool as_constant_node = false, float value = 0) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t.add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t.add_float_data(value);
    if (!as_constant_node) {
      *graph()->add_initializer() = t;
      return;
    }
    onnx::NodeProto* c = Node("Constant", {}, {name});
    *Attribute(c, "value", onnx::AttributeProto::TENSOR)->mutable_t() = t;
  }
  // A constant int64 tensor (dims {values.size()}, or a scalar).
  void Int64s(const std::string& name, std::vector<int64_t> values,
              bool scalar = false) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  // A constant float tensor of `dims` holding `values` in order.
  void Floats(const std::string& name, std::vector<int64_t> dims,
              std::vector<float> values) {
    onnx::TensorProto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  // A new attribute `name` of `type` on `n`, its value for the caller to
  // set.
  static onnx::AttributeProto* Attribute(
      onnx::NodeProto* n, const std::string& name,
      onnx::AttributeProto::AttributeType type) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  static void Float(onnx::NodeProto* n, const std::string& name, float v) {
    Attribute(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
  }
  static void String(onnx::NodeProto* n, const std::string& name,
                     const std::string& v) {
    Attribute(n, name, onnx::AttributeProto::STRING)->set_s(v);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out) {
    onnx::NodeProto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(graph()->node_size()));
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  static void Ints(onnx::NodeProto* n, const std::string& name,
                   std::vector<int64_t> v) {
    onnx::AttributeProto* a = Attribute(n, name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    Attribute(n, name, onnx::AttributeProto::INT)->set_i(v);
  }
  // LayerNorm of `x` over its last axis spelled out in nine nodes, as
  // PP-OCRv4 rec's SVTR neck writes it: ReduceMean, Sub, Pow by `two`,
  // ReduceMean, Add `eps`, Sqrt, Div, Mul by `gamma`, Add `beta` into `y`.
  // `two`, `eps`, `gamma` and `beta` name tensors the caller made; the
  // tensors between are named `y` + "_mean", "_centred" and so on.
  void LayerNormSpelledOut(const std::string& x, const std::string& two,
                           const std::string& eps, const std::string& gamma,
                           const std::string& beta, const std::string& y) {
    Ints(Node("ReduceMean", {x}, {y + "_mean"}), "axes", {-1});
    Node("Sub", {x, y + "_mean"}, {y + "_centred"});
    Node("Pow", {y + "_centred", two}, {y + "_sq"});
    Ints(Node("ReduceMean", {y + "_sq"}, {y + "_var"}), "axes", {-1});
    Node("Add", {y + "_var", eps}, {y + "_var_eps"});
    Node("Sqrt", {y + "_var_eps"}, {y + "_sd"});
    Node("Div", {y + "_centred", y + "_sd"}, {y + "_normed"});
    Node("Mul", {y + "_normed", gamma}, {y + "_scaled"});
    Node("Add", {y + "_scaled", beta}, {y});
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

// A graph begun with the input x {1, `channels`, `side`, `side`} and a 3x3
// Conv (weights w, `filters` x `channels` x 3 x 3) padded by 1 on every
// side, so that its output "c" keeps the input's height and width.
inline GraphBuilder PaddedConv3x3(int64_t channels, int64_t side,
                                  int64_t filters) {
  GraphBuilder b;
  b.Input("x", {1, channels, side, side});
  b.Weight("w", {filters, channels, 3, 3});
  auto* conv = b.Node("Conv", {"x", "w"}, {"c"});
  GraphBuilder::Ints(conv, "pads", {1, 1, 1, 1});
  return b;
}

// A conv whose epilogue loops: conv -> Add -> Add -> back into the conv's
// output name (a cycle that made epilogue folding loop forever once).
inline std::string EpilogueCycle() {
  GraphBuilder b;
  b.Input("x", {1, 4, 8, 8});
  b.Weight("w", {4, 4, 3, 3});
  b.Weight("k", {4, 1, 1}, /*as_constant_node=*/false, 1.0f);
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Add", {"c", "k"}, {"a"});
  b.Node("Add", {"a", "k"}, {"c"});  // "c" again: a loop
  b.Output("a");
  return b.Bytes();
}

// SmallNet's input shape, as `--shape` and as dims.
inline constexpr char kSmallNetShape[] = "image=1,3,17,23";
inline const std::vector<int64_t> kSmallNetDims = {1, 3, 17, 23};

// A MobileNet-like block: conv 3x3/s2 + BN + ReLU, depthwise 3x3 + BN +
// HardSwish (spelled out), a 1x1 conv with bias + HardSigmoid twice (same
// shape) summed by an Add (an eltwise task), pools, a view, a dense layer
// with bias and a softmax: 8 tasks.
inline std::string SmallNet() {
  GraphBuilder b;
  b.Input("image", {0, 3, 0, 0});
  b.Weight("w1", {8, 3, 3, 3}, /*as_constant_node=*/true);
  b.Weight("bn_s", {8}), b.Weight("bn_b", {8}), b.Weight("bn_m", {8});
  b.Weight("bn_v", {8}, false, 1.0f);
  auto* c1 = b.Node("Conv", {"image", "w1"}, {"c1"});
  GraphBuilder::Ints(c1, "strides", {2, 2});
  GraphBuilder::Ints(c1, "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c1", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n1"});
  b.Node("Relu", {"n1"}, {"r1"});
  b.Weight("wd", {8, 1, 3, 3});
  auto* d = b.Node("Conv", {"r1", "wd"}, {"d1"});
  GraphBuilder::Ints(d, "pads", {1, 1, 1, 1});
  GraphBuilder::Int(d, "group", 8);
  b.Node("BatchNormalization", {"d1", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n2"});
  b.Weight("three", {}, true, 3.0f);
  b.Weight("six", {}, true, 6.0f);
  b.Weight("zero", {}, true, 0.0f);
  b.Node("Add", {"n2", "three"}, {"a"});
  b.Node("Clip", {"a", "zero", "six"}, {"cl"});
  b.Node("Mul", {"n2", "cl"}, {"m"});
  b.Node("Div", {"m", "six"}, {"hs"});
  b.Weight("w2", {16, 8, 1, 1});
  b.Weight("b2", {16});
  b.Node("Conv", {"hs", "w2", "b2"}, {"c2"});
  b.Node("HardSigmoid", {"c2"}, {"h2"});
  b.Node("Conv", {"hs", "w2", "b2"}, {"c3"});
  b.Node("HardSigmoid", {"c3"}, {"h3"});
  b.Node("Add", {"h2", "h3"}, {"sum"});  // after both activations: eltwise
  auto* pool = b.Node("MaxPool", {"sum"}, {"p"});
  GraphBuilder::Ints(pool, "kernel_shape", {3, 3});
  GraphBuilder::Ints(pool, "strides", {2, 2});
  GraphBuilder::Ints(pool, "pads", {1, 1, 1, 1});
  b.Node("GlobalAveragePool", {"p"}, {"g"});
  b.Weight("flat", {2}, true, 0);
  auto* reshape_shape = b.graph()->mutable_node(b.graph()->node_size() - 1);
  reshape_shape->mutable_attribute(0)->mutable_t()->set_data_type(
      onnx::TensorProto::INT64);
  reshape_shape->mutable_attribute(0)->mutable_t()->clear_float_data();
  reshape_shape->mutable_attribute(0)->mutable_t()->add_int64_data(1);
  reshape_shape->mutable_attribute(0)->mutable_t()->add_int64_data(16);
  b.Node("Reshape", {"g", "flat"}, {"f"});
  b.Weight("wf", {16, 5});
  b.Weight("bf", {5});
  b.Node("MatMul", {"f", "wf"}, {"mm"});
  b.Node("Add", {"mm", "bf"}, {"logits"});
  b.Node("Softmax", {"logits"}, {"prob"});
  b.Output("prob");
  return b.Bytes();
}

// Every op and fusion of the model coverage work (issue 17) in one small
// model of input x 1x4x8x8, each landing in a task (11 tasks, no node
// left):
//   conv 3x3 + bias with PP-LCNet's learnable affine block spelled out
//   (Mul(scalar, x) with the constant first, Add scalar), HardSwish spelled
//   Add 3 / Clip 0 6 / Mul / Div 6, then Mul and Add by scalars
//     -> conv2d affine=scale_shift act=hardswish post=scale_shift
//   conv 3x3, Add of the block's input, Relu -> conv2d residual=add act=relu
//   ConvTranspose 2x2/s2, Add per-channel bias, BatchNormalization, Relu
//     -> conv_transpose2d affine=scale_shift act=relu
//   Resize nearest asymmetric floor 2x (scales input) -> resize
//   Add of the two (FPN-style) -> eltwise fn=add b=tensor
//   Sigmoid alone -> eltwise fn=none act=sigmoid
//   conv 4x4/s4 -> conv2d, then a Reshape to 1x16x16 tokens whose shape is
//   Shape -> Gather -> Concat (folded at import)
//   MatMul with a constant weight on the 3D tokens, Add bias, Add the
//   tokens -> dense affine=shift residual=add
//   ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add
//     -> layernorm affine=scale_shift
//   Reshapes to 2x8x16 and 2x16x8, MatMul of the two -> batch_matmul B=2
//   Softmax -> softmax
inline std::string CoverageNet() {
  GraphBuilder b;
  b.Input("x", {1, 4, 8, 8});
  b.Floats("zero", {}, {0.0f});
  b.Floats("three", {}, {3.0f});
  b.Floats("six", {}, {6.0f});
  // Conv + PP-LCNet's learnable affine block + HardSwish + post affine.
  b.Weight("w1", {8, 4, 3, 3});
  b.Weight("b1", {8});
  auto* c1 = b.Node("Conv", {"x", "w1", "b1"}, {"c1"});
  GraphBuilder::Ints(c1, "pads", {1, 1, 1, 1});
  b.Floats("lab_scale", {1}, {1.5f});
  b.Floats("lab_bias", {1}, {0.25f});
  b.Node("Mul", {"lab_scale", "c1"}, {"l1"});  // the constant first
  b.Node("Add", {"l1", "lab_bias"}, {"l2"});
  b.Node("Add", {"l2", "three"}, {"hs_a"});
  b.Node("Clip", {"hs_a", "zero", "six"}, {"hs_c"});
  b.Node("Mul", {"l2", "hs_c"}, {"hs_m"});
  b.Node("Div", {"hs_m", "six"}, {"hs"});
  b.Floats("post_scale", {1}, {0.5f});
  b.Floats("post_bias", {1}, {-0.125f});
  b.Node("Mul", {"hs", "post_scale"}, {"p1"});
  b.Node("Add", {"p1", "post_bias"}, {"h1"});
  // Conv + residual Add + Relu.
  b.Weight("w2", {8, 8, 3, 3});
  auto* c2 = b.Node("Conv", {"h1", "w2"}, {"c2"});
  GraphBuilder::Ints(c2, "pads", {1, 1, 1, 1});
  b.Node("Add", {"c2", "h1"}, {"res2"});
  b.Node("Relu", {"res2"}, {"r2"});
  // ConvTranspose + bias Add + BatchNormalization + Relu.
  b.Weight("wt", {8, 8, 2, 2});
  auto* ct = b.Node("ConvTranspose", {"r2", "wt"}, {"t1"});
  GraphBuilder::Ints(ct, "strides", {2, 2});
  b.Weight("tb", {8, 1, 1});
  b.Node("Add", {"t1", "tb"}, {"t2"});
  b.Weight("tn_s", {8}, false, 1.0f);
  b.Weight("tn_b", {8});
  b.Weight("tn_m", {8});
  b.Weight("tn_v", {8}, false, 1.0f);
  b.Node("BatchNormalization", {"t2", "tn_s", "tn_b", "tn_m", "tn_v"}, {"t3"});
  b.Node("Relu", {"t3"}, {"t4"});
  // Resize 2x + the FPN-style Add of two computed tensors.
  b.Floats("scales", {4}, {1, 1, 2, 2});
  auto* rs = b.Node("Resize", {"r2", "", "scales"}, {"up"});
  GraphBuilder::String(rs, "mode", "nearest");
  GraphBuilder::String(rs, "coordinate_transformation_mode", "asymmetric");
  GraphBuilder::String(rs, "nearest_mode", "floor");
  b.Node("Add", {"t4", "up"}, {"fpn"});
  // A Sigmoid alone (fpn has two consumers: nothing folds it).
  b.Node("Sigmoid", {"fpn"}, {"gate"});
  // Conv 4x4/s4, then tokens 1x16x16 by a Reshape of a folded shape.
  b.Weight("w5", {16, 8, 4, 4});
  auto* c5 = b.Node("Conv", {"fpn", "w5"}, {"c5"});
  GraphBuilder::Ints(c5, "strides", {4, 4});
  b.Node("Shape", {"c5"}, {"c5_shape"});
  b.Int64s("first_two", {0, 1});
  auto* gather = b.Node("Gather", {"c5_shape", "first_two"}, {"c5_nc"});
  GraphBuilder::Int(gather, "axis", 0);
  b.Int64s("rest", {-1});
  auto* concat = b.Node("Concat", {"c5_nc", "rest"}, {"tokens_shape"});
  GraphBuilder::Int(concat, "axis", 0);
  b.Node("Reshape", {"c5", "tokens_shape"}, {"tokens"});
  // Dense on the 3D tokens + bias + residual Add.
  b.Weight("wd", {16, 16});
  b.Weight("bd", {16});
  b.Node("MatMul", {"tokens", "wd"}, {"mm"});
  b.Node("Add", {"mm", "bd"}, {"mmb"});
  b.Node("Add", {"mmb", "tokens"}, {"res"});
  // LayerNorm, decomposed.
  b.Floats("two", {}, {2.0f});
  b.Floats("eps", {}, {1e-5f});
  b.Weight("gamma", {16}, false, 1.0f);
  b.Weight("beta", {16});
  b.LayerNormSpelledOut("res", "two", "eps", "gamma", "beta", "ln");
  // A batched MatMul of two computed tensors, then Softmax.
  b.Int64s("q_shape", {2, 8, 16});
  b.Int64s("k_shape", {2, 16, 8});
  b.Node("Reshape", {"ln", "q_shape"}, {"q"});
  b.Node("Reshape", {"tokens", "k_shape"}, {"k"});
  b.Node("MatMul", {"q", "k"}, {"scores"});
  b.Node("Softmax", {"scores"}, {"prob"});
  b.Output("gate");
  b.Output("prob");
  return b.Bytes();
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_
