// An index over an ONNX graph after shape inference: producers, consumers,
// constants and known shapes of its tensors, and reading of node
// attributes. Internal to onnx_import.
//
// A model is read as hostile input: any field may be missing, any number
// out of range, the graph may have cycles. Names below are empty for
// inputs and outputs a node lacks, and empty names match nothing.
#ifndef TUNEFLEET_ONNX_IMPORT_GRAPH_INDEX_H_
#define TUNEFLEET_ONNX_IMPORT_GRAPH_INDEX_H_

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {

// Links followed back through views, and nodes folded after a task: enough
// for any real model, and an end to cycles in hostile ones.
inline constexpr int kMaxChain = 16;

const std::string& Input(const onnx::NodeProto& n, int i);
const std::string& Output(const onnx::NodeProto& n, int i);

// The product of dims[begin, end), or nullopt when it exceeds 2^53 (past
// that no workload is accepted anyway) or a dim is < 1.
std::optional<int64_t> Product(const Dims& dims, size_t begin, size_t end);

int64_t IntAttr(const onnx::NodeProto& n, absl::string_view name,
                int64_t fallback);
float FloatAttr(const onnx::NodeProto& n, absl::string_view name,
                float fallback);
std::string StringAttr(const onnx::NodeProto& n, absl::string_view name);
Dims IntsAttr(const onnx::NodeProto& n, absl::string_view name, Dims fallback);
bool HasAttr(const onnx::NodeProto& n, absl::string_view name);
// A Transpose node's permutation of `rank` axes: its "perm" attribute, or
// the axes reversed when it has none; nullopt when that is not a
// permutation of 0..rank-1.
std::optional<Dims> TransposePerm(const onnx::NodeProto& n, int64_t rank);

// A Constant node's value as a tensor (attribute value, value_float(s),
// value_int(s)), or nullopt (sparse or string values).
std::optional<onnx::TensorProto> ConstantNodeValue(const onnx::NodeProto& n);

class GraphIndex {
 public:
  explicit GraphIndex(const onnx::GraphProto& g);
  GraphIndex(const GraphIndex&) = delete;
  GraphIndex& operator=(const GraphIndex&) = delete;

  int size() const { return g_.node_size(); }
  const onnx::NodeProto& node(int i) const { return g_.node(i); }
  const std::vector<int>& Consumers(const std::string& name) const;
  // Whether `name` is one of the graph's outputs: a use beside its
  // consumer nodes, so nothing may be fused through it.
  bool IsGraphOutput(const std::string& name) const {
    return graph_outputs_.count(name) > 0;
  }
  // The node producing `name`, or -1 (inputs, initializers, unknown).
  int Producer(const std::string& name) const;
  // Dims of a tensor when all are known and >= 1.
  std::optional<Dims> Shape(const std::string& name) const;
  // Dims of each tensor of `names`, in order, when all are known (Shape()).
  std::optional<std::vector<Dims>> Shapes(
      std::initializer_list<std::string> names) const;
  // Records a shape found by matching (e.g. a dense layer's output, which
  // shape inference may miss behind a data-dependent Reshape).
  void SetShape(const std::string& name, Dims dims);
  bool IsConstant(const std::string& name) const;
  // The values of a small constant (kMaxFoldElements at most).
  std::optional<TensorValue> Value(const std::string& name) const;
  // The single value of a constant scalar (or 1-element tensor).
  std::optional<double> Scalar(const std::string& name) const;
  // Dims of a constant (its TensorProto's), known even for large weights.
  std::optional<Dims> ConstantDims(const std::string& name) const;
  // Elements of a tensor, looking through Reshape / Flatten / Squeeze
  // chains (at most kMaxChain links) back to a tensor of known shape (they
  // keep the count). nullopt when unknown or over 2^53.
  std::optional<int64_t> Elements(const std::string& name) const;
  // Every value of a constant of any size (a weight) as fp32: FLOAT,
  // FLOAT16, DOUBLE, INT32, INT64 and BOOL data; nullopt for another type,
  // external data, or data that does not match its dims.
  std::optional<std::vector<float>> Floats(const std::string& name) const;
  // Adds a constant computed at import (a view or transpose of a weight,
  // ConstantOfShape, ...): fp32 `values` of `dims` (row-major).
  void AddConstant(const std::string& name, const Dims& dims,
                   const std::vector<float>& values);
  // The element type (onnx::TensorProto::DataType) of a tensor, from the
  // graph's inputs, outputs, value_info and constants; 0 when unknown.
  int32_t ElemType(const std::string& name) const;

 private:
  const onnx::GraphProto& g_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> graph_outputs_;
  std::map<std::string, int> producer_;
  std::deque<onnx::TensorProto> owned_;  // values of Constant nodes
  std::map<std::string, const onnx::TensorProto*> constants_;
  std::map<std::string, Dims> shapes_;
  std::map<std::string, int32_t> types_;
};

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_GRAPH_INDEX_H_
