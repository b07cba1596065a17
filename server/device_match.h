// Which agents may share a device key. A key names interchangeable agents
// (docs/ARCHITECTURE.md, Glossary: "same device and driver"): any of them
// may run any trial of the key's jobs, and their records are one device's.
// An agent whose device differs from the connected agents' in what decides
// which configs are valid or how fast they run is refused, with the first
// difference named.
#ifndef TUNEFLEET_SERVER_DEVICE_MATCH_H_
#define TUNEFLEET_SERVER_DEVICE_MATCH_H_

#include <cstdint>
#include <string>

#include "contract/device_info_revision.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::server {

// The first property in which `joining` differs from `serving`, in words
// ("compute_units 4, not 8"), or "" when they match. Compared: the device's
// name, vendor id, type and OpenCL version, compute units, work-group and
// work-item limits, local memory (size and type), max allocation, preferred
// float vector width, image support and max 2D image size, and the set of
// extensions. Not compared: the driver version (an agent with another
// driver joins the key as a new driver revision, whose records are
// re-validated: docs/DRIVER_DRIFT.md), global memory (phones of one model
// ship with different RAM), the clock (drivers that report the current
// clock), the platform and OpenCL C version strings.
// Agents of different builds (a fleet being upgraded) fill different
// fields: `revision` is the lower of the two agents'
// Hello.device_info_revision, and a field introduced in a later revision
// (the image fields, revision 1) is not compared, so an older agent still
// joins a key that newer agents serve.
std::string DeviceDifference(const tunefleet::v1::DeviceInfo& joining,
                             const tunefleet::v1::DeviceInfo& serving,
                             uint32_t revision = contract::kDeviceInfoRevision);

// The DeviceInfo to store for a key when an agent of `revision`
// (Hello.device_info_revision) reports `reported`: the fields a later
// revision introduced (the image fields 22-26 at revision 1, `libraries`
// at 2), which this agent cannot fill, are kept from `stored` (the key's
// device as a newer agent reported it), not overwritten with zeros.
tunefleet::v1::DeviceInfo WithUnreportedFields(
    const tunefleet::v1::DeviceInfo& reported,
    const tunefleet::v1::DeviceInfo& stored, uint32_t revision);

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_DEVICE_MATCH_H_
