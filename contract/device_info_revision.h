// Which DeviceInfo fields an agent fills (Hello.device_info_revision):
// 0 before the image fields (22-26), 1 with them, 2 with `libraries`
// (27). Agents set the current one;
// the server compares two agents of one key only on the fields both fill
// (server/device_match.h). Raise it with every DeviceInfo field that
// agents of this build fill and older ones do not.
#ifndef TUNEFLEET_CONTRACT_DEVICE_INFO_REVISION_H_
#define TUNEFLEET_CONTRACT_DEVICE_INFO_REVISION_H_

#include <cstdint>

namespace tunefleet::contract {

inline constexpr uint32_t kDeviceInfoRevision = 2;

}  // namespace tunefleet::contract

#endif  // TUNEFLEET_CONTRACT_DEVICE_INFO_REVISION_H_
