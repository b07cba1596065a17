// The coverage report of an import (onnx_import.h's Coverage): each
// node's FLOPs and bytes (docs/MODEL_COVERAGE.md gives the rules) summed
// per class and op type. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_COVERAGE_H_
#define TUNEFLEET_ONNX_IMPORT_COVERAGE_H_

#include <string>
#include <vector>

#include "onnx_import/graph_index.h"
#include "onnx_import/onnx_import.h"

namespace tunefleet::onnx_import {

enum class NodeClass { kNone, kTuned, kFused, kFolded, kLeft };

// What one run of a node does: FLOPs, and bytes read and written (4 per
// element of every input, weights included, and output). Unknown shapes
// count 0, and `known` is false when the output's shape is unknown.
struct NodeWork {
  double flops = 0;
  double bytes = 0;
  bool known = true;
};

// Views: nodes that move no data (their output aliases their input).
bool IsView(const std::string& op_type);

NodeWork WorkOf(const GraphIndex& g, int i);

// Sums the nodes' work per class and op type. `op_types[i]`: node i's op
// as the model wrote it (a folded node's original op); `reasons[i]`: why a
// `left` node is not tuned. kNone nodes (Constant) are not counted.
Coverage BuildCoverage(const GraphIndex& g,
                       const std::vector<NodeClass>& classes,
                       const std::vector<std::string>& op_types,
                       const std::vector<std::string>& reasons);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_COVERAGE_H_
