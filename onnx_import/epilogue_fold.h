// Folding the nodes after a task into its epilogue (kernels_templates/
// workload.cc: affine, residual, act, post). Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_EPILOGUE_FOLD_H_
#define TUNEFLEET_ONNX_IMPORT_EPILOGUE_FOLD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels_templates/workload.h"
#include "onnx_import/graph_index.h"

namespace tunefleet::onnx_import {

// Where a task's output is and what its epilogue may take.
struct EpilogueSite {
  std::string out;       // the task's output tensor
  int64_t channels = 1;  // output channels: the epilogue's channel c
  int rank = 4;          // rank of the output
  int channel_axis = 1;  // axis of the channels in the output
  bool bias = false;     // the task adds a per-channel bias (affine=shift)
  bool residual = true;  // the op has the residual attr
  bool post = true;      // the op has the post attr
  // What the task itself already applies (an eltwise of a lone
  // BatchNormalization or activation): folding goes on after it.
  std::string affine = "";   // overrides `bias` when set
  std::string act = "none";  // an activation: only `post` may follow
};

// What was folded: the attrs' values and the nodes.
struct Epilogue {
  std::string affine = "none";
  std::string residual = "none";
  std::string act = "none";
  std::string post = "none";
  std::vector<int> nodes;  // folded, in order
  std::string out;         // the last folded node's output (the task's)

  // affine, act, and residual / post where the site has them.
  std::vector<templates::Attr> Attrs(const EpilogueSite& site) const;
  // The nodes a task of node `node` covers: `node`, then the folded ones.
  std::vector<int> Covering(int node) const;
};

// Follows the consumers of site.out while each intermediate tensor has no
// other consumer and no node is `covered` (already in a task) and folds, in
// the epilogue's order:
//   affine    BatchNormalization; Mul / Div / Add / Sub by a constant that
//             is a scalar or per channel (either operand order for Mul and
//             Add, as PP-LCNetV3 writes `Mul(C, x)`) -> scale_shift or shift
//   residual  Add of a computed tensor of the output's shape
//   act       Relu, Max(x, 0) -> relu (then Min(x, c) -> clip), Clip,
//             LeakyRelu, Sigmoid, HardSigmoid, HardSwish; x * Sigmoid(x)
//             (also x * Sigmoid(x * 1)) -> silu; Clip(x * a + b, 0, 1) and
//             Clip(x + 3, 0, 6) / 6 -> hardsigmoid; x * Clip(x + 3, 0, 6) / 6
//             (Div 6 or Mul 1/6, before or after the Mul, either operand
//             order) -> hardswish
//   post      Mul / Div / Add / Sub by scalar or per-channel constants after
//             the activation -> scale_shift
// at most kMaxChain nodes (an end to cycles in hostile graphs).
Epilogue FoldEpilogue(const GraphIndex& g, const EpilogueSite& site,
                      const std::vector<bool>& covered);

// Clip's bounds (attributes before opset 11, inputs from 11; a missing one
// is +-infinity), or nullopt when an input is not a constant.
std::optional<std::pair<double, double>> ClipBounds(const GraphIndex& g,
                                                    const onnx::NodeProto& n);

// How a tensor of dims `b` broadcasts against one of dims `out` (numpy
// rules, aligned from the right): "tensor" (the same dims), "scalar" (one
// element), "channel" (its only dim > 1 is out's dim `*axis`, set), "nc"
// (N x C x 1 x 1 against a 4D N x C x H x W, N > 1), or "" for others.
std::string BroadcastKind(const Dims& b, const Dims& out, int* axis);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_EPILOGUE_FOLD_H_
