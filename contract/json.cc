#include "contract/json.h"

#include <cmath>
#include <string>

#include "google/protobuf/descriptor.h"

namespace tunefleet::contract {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

nlohmann::json Double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// One value of `field` (element `index` of a repeated field, else -1).
nlohmann::json Value(const Message& m, const Reflection& r,
                     const FieldDescriptor& f, int index) {
  const bool rep = index >= 0;
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r.GetRepeatedInt32(m, &f, index) : r.GetInt32(m, &f);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r.GetRepeatedInt64(m, &f, index) : r.GetInt64(m, &f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r.GetRepeatedUInt32(m, &f, index) : r.GetUInt32(m, &f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r.GetRepeatedUInt64(m, &f, index) : r.GetUInt64(m, &f);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return Double(rep ? r.GetRepeatedDouble(m, &f, index)
                        : r.GetDouble(m, &f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return Double(rep ? r.GetRepeatedFloat(m, &f, index) : r.GetFloat(m, &f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r.GetRepeatedBool(m, &f, index) : r.GetBool(m, &f);
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number =
          rep ? r.GetRepeatedEnumValue(m, &f, index) : r.GetEnumValue(m, &f);
      const auto* value = f.enum_type()->FindValueByNumber(number);
      if (value == nullptr) return number;  // unknown to this build
      return value->name();
    }
    case FieldDescriptor::CPPTYPE_STRING:
      // bytes fields do not occur in the contract's views; written as text.
      return rep ? r.GetRepeatedString(m, &f, index) : r.GetString(m, &f);
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return ContractJson(rep ? r.GetRepeatedMessage(m, &f, index)
                              : r.GetMessage(m, &f));
  }
  return nullptr;
}

// A map entry's key as JSON object keys are: text.
std::string MapKey(const Message& entry) {
  const nlohmann::json key =
      Value(entry, *entry.GetReflection(),
            *entry.GetDescriptor()->FindFieldByNumber(1), -1);
  return key.is_string() ? key.get<std::string>() : key.dump();
}

}  // namespace

nlohmann::json ContractJson(const Message& message) {
  const google::protobuf::Descriptor& d = *message.GetDescriptor();
  const Reflection& r = *message.GetReflection();
  nlohmann::json out = nlohmann::json::object();
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (f.is_map()) {
      nlohmann::json map = nlohmann::json::object();
      for (int k = 0; k < r.FieldSize(message, &f); ++k) {
        const Message& entry = r.GetRepeatedMessage(message, &f, k);
        map[MapKey(entry)] =
            Value(entry, *entry.GetReflection(),
                  *entry.GetDescriptor()->FindFieldByNumber(2), -1);
      }
      out[f.name()] = std::move(map);
    } else if (f.is_repeated()) {
      nlohmann::json list = nlohmann::json::array();
      for (int k = 0; k < r.FieldSize(message, &f); ++k) {
        list.push_back(Value(message, r, f, k));
      }
      out[f.name()] = std::move(list);
    } else if (f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
               !r.HasField(message, &f)) {
      out[f.name()] = nullptr;
    } else {
      out[f.name()] = Value(message, r, f, -1);
    }
  }
  return out;
}

nlohmann::json ErrorJson(const absl::Status& status) {
  return {{"error", std::string(status.message())},
          {"code", absl::StatusCodeToString(status.code())}};
}

}  // namespace tunefleet::contract
