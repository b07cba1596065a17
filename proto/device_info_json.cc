#include "proto/device_info_json.h"

#include "google/protobuf/util/json_util.h"

namespace tunefleet::proto {

std::string DeviceInfoToJson(const tunefleet::v1::DeviceInfo& info) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.preserve_proto_field_names = true;
  print.always_print_primitive_fields = true;
  std::string json;
  // Cannot fail: a DeviceInfo has no Any or other field that needs a type
  // resolver.
  (void)google::protobuf::util::MessageToJsonString(info, &json, print);
  return json;
}

}  // namespace tunefleet::proto
