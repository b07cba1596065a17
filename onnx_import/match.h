// Matching graph nodes to workloads (kernels_templates/workload.cc): one
// function per kind of node, each giving the workload and the nodes it
// covers (the node and those folded into its epilogue or kernel), or why
// the node cannot become a task. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_MATCH_H_
#define TUNEFLEET_ONNX_IMPORT_MATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels_templates/workload.h"
#include "onnx_import/epilogue_fold.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/model_graph.h"

namespace tunefleet::onnx_import {

// An input padded into a temporary before the step runs (a convolution
// or pool with asymmetric or automatic padding): the 4D input `input` of
// `dims` (N x C x H x W) copied into the middle of a tensor of N x C x
// (H + top + bottom) x (W + left + right) whose border holds `value`; the
// step's buffer 0 then reads that tensor.
struct PrePad {
  std::string input;
  Dims dims;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  float value = 0;
};

// A recognised node (or chain): its workload and the nodes it covers, the
// matched node first.
struct Match {
  templates::Workload workload;
  std::vector<int> nodes;
  // With MatchContext::bind: the step's buffers (model_graph.h's
  // ModelStep: the template's order, weights in the layout it reads) and
  // per-call floats; `error` says why they could not be made (a constant
  // that cannot be read).
  std::vector<StepBuffer> buffers;
  std::vector<float> floats;
  std::optional<PrePad> pad;
  std::string error;
};

// Why a node cannot become a task.
struct NoMatch {
  std::string reason;
};

using MatchResult = std::variant<Match, NoMatch>;

// What every match reads: the graph, the default domain's opset, and the
// nodes already in a task (never folded again). `bind`: also make the
// buffers and floats of the step (ImportModelGraph; reads the weights).
struct MatchContext {
  GraphIndex& g;
  int64_t opset = 0;
  const std::vector<bool>& covered;
  bool bind = false;
};

// Binding of tensor `name` as a step's input: its values when it is a
// constant (any size; error set when they cannot be read), else the
// tensor.
StepBuffer BindInput(const GraphIndex& g, const std::string& name,
                     std::string* error);
// Binding of a step's output (or an input tensor known to be computed).
StepBuffer BindTensor(const std::string& name);
// A buffer of constant values.
StepBuffer BindConstant(std::vector<float> values);

// Appends the fused epilogue's buffers to `m` in the order its ops read
// them (common/epilogue.cl): the output tensor e.out, the scale and shift
// buffers and, when `residual_arg` (the op takes a residual buffer), the
// residual tensor (one 0.0f when e.residual is not "add"); sets m->floats
// to e.Floats(). A residual that cannot be read sets m->error.
void BindEpilogue(const GraphIndex& g, const Epilogue& e, bool residual_arg,
                  Match* m);

// An fp32 workload.
absl::StatusOr<templates::Workload> MakeWorkload(
    absl::string_view op, std::vector<templates::Dim> dims,
    std::vector<templates::Attr> attrs = {});
// The match of `nodes` on `workload`, or its error as the NoMatch.
MatchResult Result(absl::StatusOr<templates::Workload> workload,
                   std::vector<int> nodes);

// Symmetric padding of a node, or nullopt for asymmetric / auto padding.
std::optional<std::pair<int64_t, int64_t>> SymmetricPads(
    const onnx::NodeProto& n);

// The begin and end padding of each spatial axis of a windowed node (Conv,
// ConvTranspose is not one, MaxPool, AveragePool) over `in` (its spatial
// dims) with `kernel`, `strides` and `dilations`: `pads` (begin..., end...)
// or auto_pad SAME_UPPER / SAME_LOWER (total max((ceil(in / s) - 1) * s +
// (k - 1) * d + 1 - in, 0), the odd one at the end for SAME_UPPER, at the
// begin for SAME_LOWER) or VALID (none). nullopt for another auto_pad or
// pads of the wrong count or negative.
std::optional<std::pair<Dims, Dims>> WindowPads(const onnx::NodeProto& n,
                                                const Dims& in,
                                                const Dims& kernel,
                                                const Dims& strides,
                                                const Dims& dilations);

// Conv -> conv2d / depthwise_conv2d (match_conv.cc).
MatchResult MatchConv(const MatchContext& c, int i);
// ConvTranspose -> conv_transpose2d (match_conv.cc).
MatchResult MatchConvTranspose(const MatchContext& c, int i);
// MatMul / Gemm with a constant weight -> dense; MatMul of two computed
// tensors -> batch_matmul (match_matmul.cc).
MatchResult MatchMatMul(const MatchContext& c, int i);
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (match_pool.cc).
MatchResult MatchPool(const MatchContext& c, int i);
// Softmax over the last axis (match_pool.cc).
MatchResult MatchSoftmax(const MatchContext& c, int i);
// Resize (opset 10+), Upsample -> resize (match_resize.cc).
MatchResult MatchResize(const MatchContext& c, int i);
// LayerNormalization, and ReduceMean starting its decomposed form ->
// layernorm (match_layernorm.cc).
MatchResult MatchLayerNorm(const MatchContext& c, int i);
// Add, Sub, Mul, Div, Max, Min, Pow, unary functions and activations and a
// lone BatchNormalization -> eltwise (match_eltwise.cc).
MatchResult MatchEltwise(const MatchContext& c, int i);
// A squeeze-and-excitation block from its first Conv `i` -> channel_gate
// (match_gate.cc): Conv 1x1 on an N x C x 1 x 1 map (bias, folded affine
// and act1) -> Conv 1x1 back to C channels (act2) -> Mul by x (N x C x H x
// W) with the gate broadcast per channel, each intermediate read by the
// next node only, and an Add of a computed tensor of x's shape right after
// (residual=add); the step reads x, the map, both weights (with the
// folded affine steps multiplied in) and biases. nullopt when the chain is
// not exactly that: the nodes then match one by one as before.
std::optional<Match> MatchChannelGate(const MatchContext& c, int i);
// The images (C x H x W elements) up to which a squeeze-and-excitation
// block runs as one se_block launch: every work-group of that kernel pools
// the whole image again, which below 2^16 elements (256 KiB of fp32, read
// from cache after the first group) costs less than the launch of a
// global_pool step it saves (issue 36: 7-12 us of host time a launch on
// the H200, bench/results/h200_model_e2e.txt). Larger images keep the
// global_pool + channel_gate pair, whose pool reads each element once.
inline constexpr int64_t kSeBlockMaxImage = int64_t{1} << 16;
// A GlobalAveragePool `i` of x (N x C x H x W, C*H*W <= kSeBlockMaxImage)
// whose output only the squeeze Conv of a chain MatchChannelGate takes
// reads, the chain scaling that same x -> se_block: the pool, both
// convolutions, the Mul and any residual Add in one step reading x, both
// weights and biases (and the residual). nullopt otherwise: the pool
// matches as global_pool and the chain as channel_gate.
std::optional<Match> MatchSeBlock(const MatchContext& c, int i);
// Whether `op` is one of the unary functions eltwise runs (fn=sqrt, ...).
bool IsUnaryEltwise(const std::string& op);

// The workload node `i` (with the nodes folded into it) runs, or why none
// (match.cc).
MatchResult MatchNode(const MatchContext& c, int i);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_MATCH_H_
