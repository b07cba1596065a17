// Inlining of If nodes whose condition is a constant at the fixed input
// shape (constant folding makes it one: Equal(Gather(Shape(x), 0), 1)):
// the branch taken replaces the node. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_INLINE_IF_H_
#define TUNEFLEET_ONNX_IMPORT_INLINE_IF_H_

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

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_INLINE_IF_H_
