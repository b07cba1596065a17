// Control flow that is constant at the fixed input shape, replaced by
// plain nodes: an If whose condition is a constant (constant folding makes
// it one: Equal(Gather(Shape(x), 0), 1)) by the branch it takes, a Loop
// with a constant trip count by its body repeated. Internal to
// onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_INLINE_CONTROL_H_
#define TUNEFLEET_ONNX_IMPORT_INLINE_CONTROL_H_

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tunefleet::onnx_import {

// Replaces each If node of `graph` whose condition is an initializer or a
// Constant node's output by the nodes of the branch it takes, in its
// place: names the branch produces (node outputs, its initializers) get
// the prefix "<the If's first output>/<then|else>/", its initializers join
// the graph's, and its outputs become the If's (the producing node's
// output renamed, or an Identity when the branch passes an outer tensor
// or a constant through). Subgraphs of the inlined nodes read the renamed
// names. `folded_ops` (one entry per node) follows the node list: the
// inlined nodes get "". Returns how many Ifs were inlined; an If it cannot
// inline (a branch with sparse initializers or another output count) is
// left as it is.
int InlineConstantIfs(onnx::GraphProto* graph,
                      std::vector<std::string>* folded_ops);

// Most iterations of a Loop that is unrolled.
inline constexpr int64_t kMaxUnrolledIterations = 64;

// Replaces each Loop node of `graph` whose trip count M is a constant of
// at most kMaxUnrolledIterations, whose condition input is absent or a
// constant true, and whose body passes its condition through (the body's
// condition output is its condition input, an Identity of it, or a
// constant true), by M copies of its body: iteration k's names get the
// prefix "<the Loop's first output or name>/iter<k>/", its iteration
// number and condition become constants, its loop-carried inputs the
// previous iteration's outputs; the final values reach the Loop's outputs
// through Identity nodes and each scan output is the Concat of its
// iterations' values, each Unsqueezed on axis 0 (`opset`: Unsqueeze takes
// its axes as an input from 13). `folded_ops` follows the node list as in
// InlineConstantIfs. Returns how many Loops were unrolled; others are left.
int UnrollConstantLoops(onnx::GraphProto* graph, int64_t opset,
                        std::vector<std::string>* folded_ops);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_INLINE_CONTROL_H_
