#include "onnx_import/graph_index.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "kernels_templates/workload.h"

namespace tunefleet::onnx_import {

const std::string& Input(const onnx::NodeProto& n, int i) {
  static const std::string kNone;
  return i < n.input_size() ? n.input(i) : kNone;
}

const std::string& Output(const onnx::NodeProto& n, int i) {
  static const std::string kNone;
  return i < n.output_size() ? n.output(i) : kNone;
}

std::optional<int64_t> Product(const Dims& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) {
    if (dims[i] < 1 || n > templates::kMaxShapeProduct / dims[i]) {
      return std::nullopt;
    }
    n *= dims[i];
  }
  return n;
}

int64_t IntAttr(const onnx::NodeProto& n, absl::string_view name,
                int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

float FloatAttr(const onnx::NodeProto& n, absl::string_view name,
                float fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.f();
  }
  return fallback;
}

std::string StringAttr(const onnx::NodeProto& n, absl::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return a.s();
  }
  return "";
}

Dims IntsAttr(const onnx::NodeProto& n, absl::string_view name, Dims fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return Dims(a.ints().begin(), a.ints().end());
  }
  return fallback;
}

bool HasAttr(const onnx::NodeProto& n, absl::string_view name) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [&](const auto& a) { return a.name() == name; });
}

std::optional<Dims> TransposePerm(const onnx::NodeProto& n, int64_t rank) {
  Dims perm = IntsAttr(n, "perm", {});
  if (perm.empty()) {
    for (int64_t k = rank; k-- > 0;) perm.push_back(k);
  }
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t k = 0; k < rank; ++k) {
    if (static_cast<int64_t>(sorted.size()) != rank || sorted[k] != k) {
      return std::nullopt;
    }
  }
  return perm;
}

namespace {

// Sets `data` (a field of `t`) to a Constant's number attribute: the
// scalar `one`, or with `is_list` the 1D tensor `list`.
template <typename T>
void SetNumbers(bool is_list, T one,
                const google::protobuf::RepeatedField<T>& list,
                onnx::TensorProto* t,
                google::protobuf::RepeatedField<T>* data) {
  if (is_list) {
    t->add_dims(list.size());
    *data = list;
  } else {
    data->Add(one);
  }
}

}  // namespace

std::optional<onnx::TensorProto> ConstantNodeValue(const onnx::NodeProto& n) {
  if (n.op_type() != "Constant" || n.output_size() != 1) return std::nullopt;
  for (const auto& a : n.attribute()) {
    onnx::TensorProto t;
    if (a.name() == "value") {
      t = a.t();
    } else if (a.name() == "value_float" || a.name() == "value_floats") {
      t.set_data_type(onnx::TensorProto::FLOAT);
      SetNumbers(a.name() == "value_floats", a.f(), a.floats(), &t,
                 t.mutable_float_data());
    } else if (a.name() == "value_int" || a.name() == "value_ints") {
      t.set_data_type(onnx::TensorProto::INT64);
      SetNumbers<int64_t>(a.name() == "value_ints", a.i(), a.ints(), &t,
                          t.mutable_int64_data());
    } else {
      continue;
    }
    t.set_name(n.output(0));
    return t;
  }
  return std::nullopt;
}

GraphIndex::GraphIndex(const onnx::GraphProto& g) : g_(g) {
  for (const onnx::ValueInfoProto& out : g.output()) {
    if (!out.name().empty()) graph_outputs_.insert(out.name());
  }
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& in : g.node(i).input()) {
      if (in.empty()) continue;
      std::vector<int>& c = consumers_[in];
      // A node reading a tensor twice (Mul(x, x)) is one consumer.
      if (c.empty() || c.back() != i) c.push_back(i);
    }
    for (const std::string& out : g.node(i).output()) {
      if (!out.empty()) producer_[out] = i;
    }
    if (std::optional<onnx::TensorProto> t = ConstantNodeValue(g.node(i))) {
      owned_.push_back(std::move(*t));
      constants_[g.node(i).output(0)] = &owned_.back();
    }
  }
  for (const auto& t : g.initializer()) constants_[t.name()] = &t;
  auto add_shapes = [this](const auto& values) {
    for (const onnx::ValueInfoProto& v : values) {
      if (v.type().tensor_type().elem_type() != 0) {
        types_[v.name()] = v.type().tensor_type().elem_type();
      }
      if (!v.type().tensor_type().has_shape()) continue;
      Dims dims;
      bool known = true;
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        // Dims < 1 (empty tensors, garbage) count as unknown.
        known = known && d.has_dim_value() && d.dim_value() >= 1;
        dims.push_back(d.dim_value());
      }
      if (known) shapes_[v.name()] = dims;
    }
  };
  add_shapes(g.input());
  add_shapes(g.value_info());
  add_shapes(g.output());
  for (const auto& [name, t] : constants_) {
    types_[name] = t->data_type();
    Dims dims(t->dims().begin(), t->dims().end());
    if (std::all_of(dims.begin(), dims.end(),
                    [](int64_t d) { return d >= 1; })) {
      shapes_[name] = std::move(dims);
    }
  }
}

const std::vector<int>& GraphIndex::Consumers(const std::string& name) const {
  static const std::vector<int> kNone;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? kNone : it->second;
}

int GraphIndex::Producer(const std::string& name) const {
  auto it = producer_.find(name);
  return it == producer_.end() ? -1 : it->second;
}

std::optional<Dims> GraphIndex::Shape(const std::string& name) const {
  auto it = shapes_.find(name);
  if (it != shapes_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::vector<Dims>> GraphIndex::Shapes(
    std::initializer_list<std::string> names) const {
  std::vector<Dims> out;
  for (const std::string& name : names) {
    std::optional<Dims> d = Shape(name);
    if (!d) return std::nullopt;
    out.push_back(*std::move(d));
  }
  return out;
}

void GraphIndex::SetShape(const std::string& name, Dims dims) {
  shapes_.emplace(name, std::move(dims));
}

bool GraphIndex::IsConstant(const std::string& name) const {
  return constants_.count(name) > 0;
}

std::optional<TensorValue> GraphIndex::Value(const std::string& name) const {
  auto it = constants_.find(name);
  if (it == constants_.end()) return std::nullopt;
  return ReadTensor(*it->second);
}

std::optional<double> GraphIndex::Scalar(const std::string& name) const {
  auto it = constants_.find(name);
  if (it == constants_.end()) return std::nullopt;
  std::optional<TensorValue> v = ReadTensor(*it->second, 1);
  if (!v || v->size() != 1) return std::nullopt;
  return v->at(0);
}

std::optional<Dims> GraphIndex::ConstantDims(const std::string& name) const {
  auto it = constants_.find(name);
  if (it == constants_.end()) return std::nullopt;
  return Dims(it->second->dims().begin(), it->second->dims().end());
}

std::optional<int64_t> GraphIndex::Elements(const std::string& name) const {
  std::string at = name;
  for (int link = 0; link <= kMaxChain; ++link) {
    if (std::optional<Dims> s = Shape(at)) return Product(*s, 0, s->size());
    auto p = producer_.find(at);
    if (p == producer_.end()) return std::nullopt;
    const onnx::NodeProto& n = g_.node(p->second);
    static const std::set<std::string> kKeepCount = {
        "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if (!kKeepCount.count(n.op_type()) || n.input_size() == 0) break;
    at = n.input(0);
  }
  return std::nullopt;
}

namespace {

// IEEE 754 binary16 bits as a float.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | (static_cast<uint32_t>(exp + 112) << 23) | (mant << 13);
  } else if (mant != 0) {  // subnormal: normalise
    int e = 113;
    while ((mant & 0x400) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace

std::optional<std::vector<float>> GraphIndex::Floats(
    const std::string& name) const {
  auto it = constants_.find(name);
  if (it == constants_.end()) return std::nullopt;
  const onnx::TensorProto& t = *it->second;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  const Dims dims(t.dims().begin(), t.dims().end());
  std::optional<int64_t> count = Product(dims, 0, dims.size());
  if (!count) return std::nullopt;
  std::vector<float> out;
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (t.has_raw_data()) {
      if (static_cast<int64_t>(t.raw_data().size()) != *count * 4) {
        return std::nullopt;
      }
      out.resize(*count);
      if (*count > 0) std::memcpy(out.data(), t.raw_data().data(), *count * 4);
    } else {
      out.assign(t.float_data().begin(), t.float_data().end());
    }
  } else if (t.data_type() == onnx::TensorProto::FLOAT16) {
    if (t.has_raw_data()) {
      if (static_cast<int64_t>(t.raw_data().size()) != *count * 2) {
        return std::nullopt;
      }
      out.resize(*count);
      for (int64_t k = 0; k < *count; ++k) {
        uint16_t h = 0;
        std::memcpy(&h, t.raw_data().data() + 2 * k, 2);
        out[k] = HalfToFloat(h);
      }
    } else {  // int32_data holds the bits
      for (int32_t v : t.int32_data()) {
        out.push_back(HalfToFloat(static_cast<uint16_t>(v)));
      }
    }
  } else {
    std::optional<TensorValue> v = ReadTensor(t, *count);
    if (!v) return std::nullopt;
    out.resize(v->size());
    for (int64_t k = 0; k < v->size(); ++k) {
      out[k] = static_cast<float>(v->at(k));
    }
  }
  if (static_cast<int64_t>(out.size()) != *count) return std::nullopt;
  return out;
}

void GraphIndex::AddConstant(const std::string& name, const Dims& dims,
                             const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(values.data(), values.size() * sizeof(float));
  owned_.push_back(std::move(t));
  constants_[name] = &owned_.back();
  types_[name] = onnx::TensorProto::FLOAT;
  if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 1; })) {
    shapes_[name] = dims;
  }
}

int32_t GraphIndex::ElemType(const std::string& name) const {
  auto it = types_.find(name);
  return it == types_.end() ? 0 : it->second;
}

}  // namespace tunefleet::onnx_import
