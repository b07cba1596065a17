// Small ONNX models for tests, built with ONNX's protobuf classes.
#ifndef TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_
#define TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_

#include <string>
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
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = t;
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
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void Int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

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

// A MobileNet-like block: conv 3x3/s2 + BN + ReLU, depthwise 3x3 + BN +
// HardSwish (spelled out), a 1x1 conv with bias + HardSigmoid twice (same
// shape), pools, a dense layer with bias and a softmax.
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
  b.Node("Add", {"h2", "h3"}, {"sum"});  // residual: not tunable
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

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_ONNX_TEST_MODELS_H_
