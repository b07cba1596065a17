// DeviceInfo as JSON, the one form `tunefleet-agent --info` and
// `tunefleet devices --json` print: contract::ContractJson (contract/json.h:
// snake_case field names, every field including zeros and false, 64-bit
// integers as numbers), two-space indents.
#ifndef TUNEFLEET_CONTRACT_DEVICE_INFO_JSON_H_
#define TUNEFLEET_CONTRACT_DEVICE_INFO_JSON_H_

#include <string>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::contract {

std::string DeviceInfoToJson(const tunefleet::v1::DeviceInfo& info);

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_DEVICE_INFO_JSON_H_
