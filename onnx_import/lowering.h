// Lowering of the nodes the matches of match.h do not run (data movement,
// reductions, general broadcasting, ...) to steps of the `copy`, `fill`,
// `reduce`, `eltwise`, `softmax` and `batch_matmul` ops, and the writer
// that collects the steps and temporaries of a ModelGraph
// (model_graph.h). Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_LOWERING_H_
#define TUNEFLEET_ONNX_IMPORT_LOWERING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels_templates/workload.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/model_graph.h"

namespace tunefleet::onnx_import {

// Most steps one node may lower to (copies of a Gather's index runs, of a
// reflect Pad's border, of a negative-step Slice's elements): past it the
// node is refused.
inline constexpr int kMaxStepsPerNode = 64;

// A node this lowering does not run: FAILED_PRECONDITION with `reason`,
// which the importer reports as the node's refusal.
inline absl::Status Refuse(absl::string_view reason) {
  return absl::FailedPreconditionError(reason);
}

// a * b, INT64_MAX (INT64_MIN) where it overflows: hostile dims make
// counts no workload accepts instead of undefined behaviour.
int64_t SaturatingMul(int64_t a, int64_t b);
// Row-major strides of `dims`, in elements (saturating).
Dims RowMajorStrides(const Dims& dims);
// The product of `dims` (1 for a scalar; saturating). StepWriter::ShapeOf
// refuses tensors of more than 2^53 elements, so the counts of tensors
// stay exact.
int64_t ElementsOf(const Dims& dims);

// One dim of a strided copy (the `copy` op): its extent and the strides,
// in elements, of the input and the output along it.
struct CopyDim {
  int64_t extent = 1;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

// A box of a copy: output[out_offset + sum i_k * out_stride_k] =
// input[in_offset + sum i_k * in_stride_k] for every i_k < extent_k.
struct CopyBox {
  std::vector<CopyDim> dims;
  int64_t in_offset = 0;
  int64_t out_offset = 0;
};

// The `copy` workload of `box` between buffers of `in_elements` and
// `out_elements` elements: dims of extent 1 dropped, the others ordered by
// output stride (largest first) and merged where contiguous in both, then
// put in D0..D5 right-aligned (D5 the innermost). Errors:
// INVALID_ARGUMENT when more than 6 dims remain or the op refuses them.
absl::StatusOr<templates::Workload> CopyWorkload(const CopyBox& box,
                                                 int64_t in_elements,
                                                 int64_t out_elements);

// Collects the steps of a ModelGraph in execution order and the
// temporaries they write. Steps are added for the node set by Begin();
// they run at the position of its last node (a fused chain runs when its
// last node would).
class StepWriter {
 public:
  explicit StepWriter(GraphIndex& g) : g_(g) {}

  // The node(s) whose steps follow: `nodes` as ModelStep::nodes, run at
  // position `position`, labelled `label`.
  void Begin(int position, std::vector<int> nodes, std::string label);

  // Adds a step of `workload` with its buffers and floats. Errors: the
  // workload's, as FAILED_PRECONDITION.
  absl::Status Add(absl::StatusOr<templates::Workload> workload,
                   std::vector<StepBuffer> buffers,
                   std::vector<float> floats = {});
  // Adds the copy of `box` from `in` (of `in_elements`) to tensor `out` (of
  // `out_elements`).
  absl::Status Copy(const StepBuffer& in, int64_t in_elements,
                    const std::string& out, int64_t out_elements,
                    const CopyBox& box);
  // Adds a fill of `count` elements from `offset` of tensor `out` (of
  // `out_elements`) with `value`.
  absl::Status Fill(const std::string& out, int64_t out_elements,
                    int64_t offset, int64_t count, float value);

  // The binding of `name` as an input: a constant's values or the tensor.
  // Errors: FAILED_PRECONDITION when a constant cannot be read.
  absl::StatusOr<StepBuffer> In(const std::string& name) const;
  // Dims of tensor or constant `name` (a temporary's too). Errors:
  // FAILED_PRECONDITION naming a tensor of unknown shape.
  absl::StatusOr<Dims> ShapeOf(const std::string& name) const;
  // A new temporary tensor of `dims`, named after `base` ("base@tmp3").
  std::string Temp(const std::string& base, const Dims& dims);

  GraphIndex& graph() { return g_; }
  const std::map<std::string, Dims>& temps() const { return temps_; }
  // The steps, in execution order (stable in their positions).
  std::vector<ModelStep> Steps() const;
  // The index of the output buffer of a step of op `op`.
  static int OutputBuffer(absl::string_view op);

 private:
  struct Pending {
    int position;
    ModelStep step;
  };
  GraphIndex& g_;
  std::vector<Pending> steps_;
  std::map<std::string, Dims> temps_;
  int position_ = 0;
  std::vector<int> nodes_;
  std::string label_;
};

// What a lowering reads and writes.
struct LowerContext {
  GraphIndex& g;
  int64_t opset = 0;
  StepWriter& w;
};

// Lowers node `i` (not matched by match.h) to steps. Errors:
// FAILED_PRECONDITION with the reason the node cannot run (the caller
// names the node); UNIMPLEMENTED when no lowering knows its op.
absl::Status LowerNode(LowerContext& c, int i);

// Data movement (lower_movement.cc): Transpose, Slice, Concat, Split, Pad,
// Gather with constant indices, Expand, Tile, DepthToSpace, SpaceToDepth,
// ConstantOfShape.
absl::Status LowerMovement(LowerContext& c, int i);
// Reductions, general broadcasting of binary eltwise ops, Clip with
// computed bounds, Softmax on another axis, LogSoftmax, MatMul with a
// broadcast batch (lower_compute.cc).
absl::Status LowerCompute(LowerContext& c, int i);

// Writes the fill and copy of a padded input (match.h's PrePad) into a new
// temporary and returns its name.
absl::StatusOr<std::string> WritePrePad(StepWriter& w, const std::string& input,
                                        const Dims& dims, int64_t top,
                                        int64_t left, int64_t bottom,
                                        int64_t right, float value);

// Copies `in` (tensor or constant, of dims `from`) broadcast (numpy rules)
// to `to` into a new temporary; returns its name.
absl::StatusOr<std::string> WriteExpand(StepWriter& w, const std::string& in,
                                        const Dims& from, const Dims& to);

// Copies `in` (of `dims`) permuted by `perm` (output dim k is input dim
// perm[k]) into tensor `out`.
absl::Status WriteTranspose(StepWriter& w, const std::string& in,
                            const Dims& dims, const Dims& perm,
                            const std::string& out);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_LOWERING_H_
