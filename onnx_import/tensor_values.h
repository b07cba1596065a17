// The values of small constant tensors (initializers, Constant nodes and
// tensors folded at import time), read from and written to ONNX's
// TensorProto. Internal to onnx_import.
#ifndef TUNEFLEET_ONNX_IMPORT_TENSOR_VALUES_H_
#define TUNEFLEET_ONNX_IMPORT_TENSOR_VALUES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tunefleet::onnx_import {

using Dims = std::vector<int64_t>;

// Most elements a tensor may have to be read or folded: shape arithmetic
// and per-channel constants are far smaller; weights are never read.
inline constexpr int64_t kMaxFoldElements = 1 << 16;

// Axis `a` of a rank-`rank` tensor, negative counting from the end (ONNX's
// axis attributes); -1 when out of range.
inline int64_t NormalizeAxis(int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) return -1;
  return a < 0 ? a + rank : a;
}

// A constant tensor's values: integers (INT32, INT64, BOOL) in `ints`,
// floating point (FLOAT, DOUBLE, FLOAT16 is not read) in `floats`.
struct TensorValue {
  int32_t type = onnx::TensorProto::FLOAT;  // onnx::TensorProto::DataType
  Dims dims;
  std::vector<int64_t> ints;
  std::vector<double> floats;

  bool is_float() const {
    return type == onnx::TensorProto::FLOAT ||
           type == onnx::TensorProto::DOUBLE;
  }
  int64_t size() const {
    return static_cast<int64_t>(is_float() ? floats.size() : ints.size());
  }
  // Element i as a double.
  double at(int64_t i) const {
    return is_float() ? floats[i] : static_cast<double>(ints[i]);
  }
};

// Whether values of ONNX data type `type` can be read and folded.
bool FoldableType(int32_t type);

// The elements of `dims`, or nullopt when a dim is < 0 or the product of
// the nonzero dims passes `limit` (even when another dim is 0: the dims of
// an empty tensor still make strides and concatenated sizes).
std::optional<int64_t> ElementCount(const Dims& dims, int64_t limit);

// The values of `t` (typed or raw data), or nullopt for another data type,
// more than `max_elements` elements, or data that does not match its dims.
std::optional<TensorValue> ReadTensor(const onnx::TensorProto& t,
                                      int64_t max_elements = kMaxFoldElements);

// `v` as a TensorProto named `name` (typed data fields).
onnx::TensorProto WriteTensor(const TensorValue& v, const std::string& name);

}  // namespace tunefleet::onnx_import

#endif  // TUNEFLEET_ONNX_IMPORT_TENSOR_VALUES_H_
