#include "proto/device_info_json.h"

#include "proto/json.h"

namespace tunefleet::proto {

std::string DeviceInfoToJson(const tunefleet::v1::DeviceInfo& info) {
  return ContractJson(info).dump(2);
}

}  // namespace tunefleet::proto
