// A model as a runtime runs it (issue 35): every node of an ONNX model at
// fixed input shapes lowered to steps, each one workload of a template
// (kernels_templates/) with its buffers bound to the model's tensors or to
// constants made at import, in execution order. Where ImportOnnx()
// (onnx_import.h) lists the distinct tasks to tune, ImportModelGraph()
// says how to run the whole model with them; the plan builder (emit
// --onnx) turns a ModelGraph plus the tuning records of a device key into
// a plan, and the model runtime runs that plan.
//
//   ONNX bytes --ReadAndInfer/fold--> graph --lowering--> ModelGraph
//        (model_reader.h)                (one node or a fused chain -> steps)
//
// Lowering of a node: the matches of match.h (conv, dense, pools, eltwise,
// ... with their epilogues folded) become one step each, their buffers
// bound; views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout in
// inference) become aliases; data movement (Transpose, Slice, Concat,
// Split, Pad, Gather with constant indices, Expand, Tile) becomes `copy`
// and `fill` steps; reductions become `reduce` steps; nodes computed at
// import (constant folding) leave nothing to run. A node that cannot run is
// an error naming it: never a graph that skips one.
#ifndef TUNEFLEET_ONNX_IMPORT_MODEL_GRAPH_H_
#define TUNEFLEET_ONNX_IMPORT_MODEL_GRAPH_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/workload.h"
#include "onnx_import/onnx_import.h"

namespace tunefleet::onnx_import {

// A tensor the runtime holds: fp32, dense, row-major (C order) at `dims`.
struct ModelTensor {
  std::string name;
  std::vector<int64_t> dims;  // each >= 1; empty for a scalar
  // Not empty: a view of that tensor (same elements in the same order,
  // other dims), as Reshape, Flatten, Squeeze, Unsqueeze, Identity and
  // inference-time Dropout make. Aliases are resolved to the root tensor
  // (never an alias of an alias).
  std::string alias_of;
};

// What one buffer of a step is bound to: a tensor of ModelGraph::tensors
// (a graph input, or the output of an earlier step; read or written as the
// template's buffer is), or a constant made at import in exactly the
// layout and element count the template's buffer reads (weights,
// batch-norm folded into scale and shift, a bias, a gather's table...).
struct StepBuffer {
  std::string tensor;           // set: bound to this tensor (or its alias)
  std::vector<float> constant;  // else: these values, fp32
};

// One launch of a template's kernel (or library call): a workload, its
// buffers in the order of the template's buffer list (the spec's
// [[buffers]] without scratch ones, fill = "zero"; the same order as
// tunefleet_tuned::Run() documents per op), and the values of its
// per-call floats (the `float:NAME` kernel arguments, in the order they
// first appear in the spec's [kernel].args: act_a, act_b of the
// activation, eps of layernorm, the value of fill, ...).
struct ModelStep {
  templates::Workload workload;
  std::vector<StepBuffer> buffers;
  std::vector<float> floats;
  // ONNX nodes this step runs (indices into the graph after folding), its
  // own node first, then those fused into it. A node lowered to several
  // steps (Concat: one copy per input) lists itself in each.
  std::vector<int> nodes;
  std::string label;  // the own node's name, or "<op_type>@<index>"
};

// Steps in execution order: every tensor a step reads is a graph input or
// written by an earlier step. A tensor may be written by several steps of
// one node (a fill, then copies into parts of it: Pad, Concat, a padded
// convolution input); temporaries such steps need besides the model's
// tensors are named "<tensor>@<what>@tmp<k>" and are in `tensors` like
// the others.
struct ModelGraph {
  std::vector<ModelStep> steps;  // in execution order
  // Every tensor a step reads or writes, and every graph input and output,
  // by name (constant outputs too: their dims).
  std::map<std::string, ModelTensor> tensors;
  std::vector<std::string> inputs;   // the graph's inputs, in order
  std::vector<std::string> outputs;  // the graph's outputs, in order
  // Graph outputs that are constants after folding: their values, written
  // to the output as they are (no step computes them).
  std::map<std::string, std::vector<float>> constant_outputs;
  // The distinct workloads of `steps` as tasks (count: steps running it;
  // nodes: their labels), and the coverage of the nodes: tuned (a step's
  // own node), fused (folded into a step), folded (computed at import, a
  // view, or dead: no graph output depends on it); nothing is left.
  ModelTasks tasks;
};

// Lowers the model in `bytes` at `input_shapes` (as ImportOnnxBytes()).
// Errors: as ImportOnnxBytes(); FAILED_PRECONDITION naming the first node
// that cannot run ("node 'conv_3' (If): its condition is not constant at
// the fixed input shape"), with its op type and the reason.
absl::StatusOr<ModelGraph> ImportModelGraph(const std::string& bytes,
                                            absl::string_view name,
                                            const InputShapes& input_shapes);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_MODEL_GRAPH_H_
