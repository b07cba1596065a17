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
#include "onnx_import/graph_index.h"

namespace tunefleet::onnx_import {

// A recognised node (or chain): its workload and the nodes it covers, the
// matched node first.
struct Match {
  templates::Workload workload;
  std::vector<int> nodes;
};

// Why a node cannot become a task.
struct NoMatch {
  std::string reason;
};

using MatchResult = std::variant<Match, NoMatch>;

// What every match reads: the graph, the default domain's opset, and the
// nodes already in a task (never folded again).
struct MatchContext {
  GraphIndex& g;
  int64_t opset = 0;
  const std::vector<bool>& covered;
};

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
// Add, Sub, Mul, Div, Max, Min, unary activations and a lone
// BatchNormalization -> eltwise (match_eltwise.cc).
MatchResult MatchEltwise(const MatchContext& c, int i);

// The workload node `i` (with the nodes folded into it) runs, or why none
// (match.cc).
MatchResult MatchNode(const MatchContext& c, int i);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_MATCH_H_
