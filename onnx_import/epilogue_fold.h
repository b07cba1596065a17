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
  // Values of what the task applies, for the step's buffers and floats:
  // the bias constant (`bias`: the conv's B, Gemm's C; one value per
  // channel, or one for all), the affine of `affine` (channels values
  // each; empty: scale 1, shift 0) and the parameters of `act`.
  std::string bias_name;
  std::vector<double> scale, shift;
  double act_a = 0, act_b = 0;
};

// What was folded: the attrs' values and the nodes.
struct Epilogue {
  std::string affine = "none";
  std::string residual = "none";
  std::string act = "none";
  std::string post = "none";
  std::vector<int> nodes;  // folded, in order
  std::string out;         // the last folded node's output (the task's)

  // The values the step binds (common/epilogue.cl): scale and shift of
  // `affine` and of `post` (site.channels each), the residual tensor, the
  // activation's parameters act_a and act_b (clip: min and max, +-infinity
  // when unbounded; hardsigmoid, hardswish: alpha and beta; leakyrelu:
  // alpha; 0 for the others). `error`: a constant whose values could not
  // be read (the attrs still hold: tasks do not need the values).
  std::vector<double> scale, shift, post_scale, post_shift;
  std::string residual_tensor;
  double act_a = 0, act_b = 0;
  std::string error;

  // affine, act, and residual / post where the site has them.
  std::vector<templates::Attr> Attrs(const EpilogueSite& site) const;
  // The nodes a task of node `node` covers: `node`, then the folded ones.
  std::vector<int> Covering(int node) const;
  // The scale and shift buffers: channels values each, 2 * channels with
  // post=scale_shift (the post step's in the second half), as fp32.
  std::vector<float> ScaleBuffer() const;
  std::vector<float> ShiftBuffer() const;
  // The per-call floats {act_a, act_b}.
  std::vector<float> Floats() const;
};

// Follows the consumers of site.out while each intermediate tensor has no
// other consumer and no node is `covered` (already in a task) and folds, in
// the epilogue's order:
//   affine    BatchNormalization; Mul / Div / Add / Sub by a constant that
//             is a scalar or per channel (either operand order for Mul and
//             Add, as PP-LCNetV3 writes `Mul(C, x)`) -> scale_shift or shift
//   residual  Add of a computed tensor of the output's shape
//   act       Relu, Max(x, 0) -> relu; Max(x, c) -> clip(c, inf), Min(x,
//             c) -> clip(-inf, c); then Max / Min by scalar constants
//             narrow a relu or clip, and Max(LeakyRelu(x), c >= 0) is
//             clip(c, inf) (alpha >= 0); Clip with constant bounds,
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

// The values of a constant that is a scalar or per channel (as the
// epilogue folds it) spread to `channels` values; nullopt when not
// readable or of another count.
std::optional<std::vector<double>> ChannelValues(const GraphIndex& g,
                                                 const std::string& name,
                                                 int64_t channels);

// The epilogue's act of single-op activation `op`: "relu", "clip",
// "leakyrelu", "sigmoid", "hardsigmoid" for Relu, Clip, LeakyRelu,
// Sigmoid, HardSigmoid, and "hardswish" for any other (HardSwish).
std::string ActName(const std::string& op);

// The activation parameters {act_a, act_b} of single-op activation node
// `n` (Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish), or nullopt
// (Clip bounds not constant).
std::optional<std::pair<double, double>> ActParams(const GraphIndex& g,
                                                   const onnx::NodeProto& n);

// BatchNormalization `bn` as a scale and shift per channel: scale = gamma
// / sqrt(var + epsilon), shift = beta - mean * scale; nullopt when its
// inputs are not constants of `channels` values.
std::optional<std::pair<std::vector<double>, std::vector<double>>>
BatchNormAffine(const GraphIndex& g, const onnx::NodeProto& bn,
                int64_t channels);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_EPILOGUE_FOLD_H_
