#include "onnx_import/tensor_values.h"

#include <cstring>
#include <string>

namespace tunefleet::onnx_import {

bool FoldableType(int32_t type) {
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::DOUBLE ||
         type == onnx::TensorProto::INT32 || type == onnx::TensorProto::INT64 ||
         type == onnx::TensorProto::BOOL;
}

std::optional<int64_t> ElementCount(const Dims& dims, int64_t limit) {
  // The product of the nonzero dims is bounded too: a tensor with a zero
  // dim is empty, but its other dims still make strides and sums.
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > limit / d) return std::nullopt;
    n *= d;
  }
  return empty ? 0 : n;
}

namespace {

// Reads `count` elements of type T from raw little-endian bytes.
template <typename T>
bool ReadRaw(const std::string& raw, int64_t count, std::vector<T>* out) {
  if (static_cast<int64_t>(raw.size()) != count * int64_t{sizeof(T)}) {
    return false;
  }
  out->resize(count);
  if (count > 0) std::memcpy(out->data(), raw.data(), raw.size());
  return true;
}

// Reads `count` elements into `out`: from raw little-endian bytes of type T
// when the tensor has them, else from its typed field `field`.
template <typename T, typename Field, typename Out>
bool ReadElements(const onnx::TensorProto& t, int64_t count, const Field& field,
                  std::vector<Out>* out) {
  if (!t.has_raw_data()) {
    out->assign(field.begin(), field.end());
    return true;
  }
  std::vector<T> values;
  if (!ReadRaw(t.raw_data(), count, &values)) return false;
  out->assign(values.begin(), values.end());
  return true;
}

// Reads the `count` elements of a foldable `t` into v->floats or v->ints.
// False for raw data of another length, or another type.
bool ReadValues(const onnx::TensorProto& t, int64_t count, TensorValue* v) {
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      return ReadElements<float>(t, count, t.float_data(), &v->floats);
    case onnx::TensorProto::DOUBLE:
      return ReadElements<double>(t, count, t.double_data(), &v->floats);
    case onnx::TensorProto::INT64:
      return ReadElements<int64_t>(t, count, t.int64_data(), &v->ints);
    case onnx::TensorProto::INT32:
      return ReadElements<int32_t>(t, count, t.int32_data(), &v->ints);
    case onnx::TensorProto::BOOL:  // raw: a byte each; else in int32_data
      return ReadElements<uint8_t>(t, count, t.int32_data(), &v->ints);
    default:
      return false;
  }
}

}  // namespace

std::optional<TensorValue> ReadTensor(const onnx::TensorProto& t,
                                      int64_t max_elements) {
  if (!FoldableType(t.data_type()) ||
      t.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  TensorValue v;
  v.type = t.data_type();
  v.dims.assign(t.dims().begin(), t.dims().end());
  std::optional<int64_t> count = ElementCount(v.dims, max_elements);
  if (!count) return std::nullopt;
  if (!ReadValues(t, *count, &v) || v.size() != *count) return std::nullopt;
  return v;
}

onnx::TensorProto WriteTensor(const TensorValue& v, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(v.type);
  for (int64_t d : v.dims) t.add_dims(d);
  switch (v.type) {
    case onnx::TensorProto::FLOAT:
      for (double f : v.floats) t.add_float_data(static_cast<float>(f));
      break;
    case onnx::TensorProto::DOUBLE:
      for (double f : v.floats) t.add_double_data(f);
      break;
    case onnx::TensorProto::INT64:
      for (int64_t i : v.ints) t.add_int64_data(i);
      break;
    default:  // INT32, BOOL
      for (int64_t i : v.ints) t.add_int32_data(static_cast<int32_t>(i));
      break;
  }
  return t;
}

}  // namespace tunefleet::onnx_import
