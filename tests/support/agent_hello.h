// The Hello an agent opens its AgentService.Connect stream with, for tests
// that talk to the server as an agent would.
#ifndef TUNEFLEET_TESTS_AGENT_HELLO_H_
#define TUNEFLEET_TESTS_AGENT_HELLO_H_

#include <cstdint>
#include <string>

#include "tunefleet/v1/agent.pb.h"

namespace tunefleet::testing {

// A Hello for device key `key` with `device`, from agent `agent_name`, one
// trial in flight at a time, its device report written at `revision`
// (contract::kDeviceInfoRevision: as this build's agents).
inline tunefleet::v1::AgentMessage AgentHello(
    const std::string& key, const tunefleet::v1::DeviceInfo& device,
    const std::string& agent_name, uint32_t revision) {
  tunefleet::v1::AgentMessage message;
  tunefleet::v1::Hello* hello = message.mutable_hello();
  hello->set_device_key(key);
  *hello->mutable_device() = device;
  hello->set_agent_name(agent_name);
  hello->set_max_in_flight(1);
  hello->set_device_info_revision(revision);
  return message;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_AGENT_HELLO_H_
