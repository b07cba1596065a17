#include "contract/device_info_json.h"

#include "contract/json.h"

namespace tunefleet::contract {

std::string DeviceInfoToJson(const tunefleet::v1::DeviceInfo& info) {
  return ContractJson(info).dump(2);
}

}  // namespace tunefleet::contract
