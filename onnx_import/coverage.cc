#include "onnx_import/coverage.h"

#include <algorithm>
#include <map>
#include <set>

namespace tunefleet::onnx_import {
namespace {

// Elements of a tensor, 0 when unknown.
double TensorElements(const GraphIndex& g, const std::string& name) {
  if (name.empty()) return 0;
  if (std::optional<Dims> d = g.ConstantDims(name)) {
    return static_cast<double>(Product(*d, 0, d->size()).value_or(0));
  }
  return static_cast<double>(g.Elements(name).value_or(0));
}

// The product of dims[1:] of a tensor (a weight's C/G x R x S), 0 when
// unknown.
double PerOutput(const GraphIndex& g, const std::string& weight) {
  std::optional<Dims> w = g.ConstantDims(weight);
  if (!w) w = g.Shape(weight);
  if (!w || w->size() < 2) return 0;
  return static_cast<double>(Product(*w, 1, w->size()).value_or(0));
}

}  // namespace

bool IsView(const std::string& op_type) {
  static const std::set<std::string> kViews = {
      "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
  return kViews.count(op_type) > 0;
}

NodeWork WorkOf(const GraphIndex& g, int i) {
  const onnx::NodeProto& n = g.node(i);
  const std::string& op = n.op_type();
  NodeWork w;
  if (op == "Constant" || IsView(op)) return w;
  const double out = TensorElements(g, Output(n, 0));
  const double in = TensorElements(g, Input(n, 0));
  w.known = n.output_size() == 0 || out > 0;
  for (const std::string& name : n.input())
    w.bytes += 4 * TensorElements(g, name);
  for (const std::string& name : n.output())
    w.bytes += 4 * TensorElements(g, name);
  static const std::set<std::string> kMoves = {
      "Transpose", "Slice",        "Concat",      "Split", "Gather",
      "Pad",       "Expand",       "Tile",        "Cast",  "Shape",
      "Size",      "DepthToSpace", "SpaceToDepth"};
  if (op == "Conv") {
    w.flops = 2 * out * PerOutput(g, Input(n, 1));
  } else if (op == "ConvTranspose") {
    w.flops = 2 * in * PerOutput(g, Input(n, 1));
  } else if (op == "MatMul" || op == "Gemm") {
    std::optional<Dims> a = g.Shape(Input(n, 0));
    double k = 0;
    if (a && !a->empty()) {
      k = static_cast<double>(op == "Gemm" && a->size() == 2 &&
                                      IntAttr(n, "transA", 0) != 0
                                  ? (*a)[0]
                                  : a->back());
    } else if (std::optional<Dims> b = g.ConstantDims(Input(n, 1));
               b && b->size() == 2) {
      k = static_cast<double>(
          op == "Gemm" && IntAttr(n, "transB", 0) != 0 ? (*b)[1] : (*b)[0]);
    }
    w.flops = 2 * out * k;
  } else if (op == "MaxPool" || op == "AveragePool") {
    const Dims kernel = IntsAttr(n, "kernel_shape", {});
    w.flops = out * static_cast<double>(
                        Product(kernel, 0, kernel.size()).value_or(0));
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" ||
             op.rfind("Reduce", 0) == 0) {
    w.flops = in;
  } else if (op == "Softmax") {
    w.flops = 3 * out;
  } else if (op == "LayerNormalization") {
    w.flops = 5 * out;
  } else if (op == "BatchNormalization") {
    w.flops = 2 * out;
  } else if (kMoves.count(op)) {
    w.flops = 0;
  } else {
    w.flops = out;
  }
  return w;
}

Coverage BuildCoverage(const GraphIndex& g,
                       const std::vector<NodeClass>& classes,
                       const std::vector<std::string>& op_types,
                       const std::vector<std::string>& reasons) {
  std::map<std::string, OpShare> by_class[4];
  Coverage c;
  for (int i = 0; i < g.size(); ++i) {
    if (classes[i] == NodeClass::kNone) continue;
    const int k = static_cast<int>(classes[i]) - 1;
    // A folded node's work was done at import: none is left at run time.
    const NodeWork w =
        classes[i] == NodeClass::kFolded ? NodeWork{} : WorkOf(g, i);
    OpShare& s = by_class[k][op_types[i]];
    s.op_type = op_types[i];
    if (s.nodes++ == 0 && classes[i] == NodeClass::kLeft) s.reason = reasons[i];
    s.flops += w.flops;
    s.bytes += w.bytes;
    if (!w.known) {
      ++s.unknown;
      ++c.unknown_nodes;
    }
    c.flops += w.flops;
    c.bytes += w.bytes;
  }
  std::vector<OpShare>* lists[4] = {&c.tuned, &c.fused, &c.folded, &c.left};
  for (int k = 0; k < 4; ++k) {
    for (auto& [op, s] : by_class[k]) lists[k]->push_back(s);
    std::stable_sort(lists[k]->begin(), lists[k]->end(),
                     [](const OpShare& a, const OpShare& b) {
                       return a.flops != b.flops ? a.flops > b.flops
                                                 : a.bytes > b.bytes;
                     });
  }
  return c;
}

}  // namespace tunefleet::onnx_import
