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
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) return 0;
    if (n > limit / d) return std::nullopt;
    n *= d;
  }
  return n;
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
  const bool raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      std::vector<float> f;
      if (raw) {
        if (!ReadRaw(t.raw_data(), *count, &f)) return std::nullopt;
      } else {
        f.assign(t.float_data().begin(), t.float_data().end());
      }
      v.floats.assign(f.begin(), f.end());
      break;
    }
    case onnx::TensorProto::DOUBLE:
      if (raw) {
        if (!ReadRaw(t.raw_data(), *count, &v.floats)) return std::nullopt;
      } else {
        v.floats.assign(t.double_data().begin(), t.double_data().end());
      }
      break;
    case onnx::TensorProto::INT64:
      if (raw) {
        if (!ReadRaw(t.raw_data(), *count, &v.ints)) return std::nullopt;
      } else {
        v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      }
      break;
    case onnx::TensorProto::INT32: {
      std::vector<int32_t> i;
      if (raw) {
        if (!ReadRaw(t.raw_data(), *count, &i)) return std::nullopt;
        v.ints.assign(i.begin(), i.end());
      } else {
        v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    }
    case onnx::TensorProto::BOOL: {
      std::vector<uint8_t> b;
      if (raw) {
        if (!ReadRaw(t.raw_data(), *count, &b)) return std::nullopt;
        v.ints.assign(b.begin(), b.end());
      } else {
        v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      break;
    }
    default:
      return std::nullopt;
  }
  if (v.size() != *count) return std::nullopt;
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
