// The roles a bearer token may hold and the role each RPC method needs:
//   agent   AgentService/Connect;
//   reader  WatchJob, ListDevices, QueryRecords, ListJobs;
//   tuner   SubmitJob, CancelJob, SubmitModelJob, RunModel and everything a
//           reader may do.
#ifndef TUNEFLEET_AUTH_ROLES_H_
#define TUNEFLEET_AUTH_ROLES_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::auth {

enum class Role { kAgent, kReader, kTuner };

// "agent", "reader", "tuner".
absl::string_view RoleName(Role role);
// The role named `name`. Errors: INVALID_ARGUMENT listing the roles.
absl::StatusOr<Role> ParseRole(absl::string_view name);
// True when a token of role `held` may call a method needing `needed`
// (tuner includes reader; agent is only agent).
bool RoleAllows(Role held, Role needed);

// Full gRPC method names ("/package.Service/Method") the server serves.
inline constexpr char kConnectMethod[] = "/tunefleet.v1.AgentService/Connect";
inline constexpr char kSubmitJobMethod[] =
    "/tunefleet.v1.TuningService/SubmitJob";
inline constexpr char kCancelJobMethod[] =
    "/tunefleet.v1.TuningService/CancelJob";
inline constexpr char kSubmitModelJobMethod[] =
    "/tunefleet.v1.TuningService/SubmitModelJob";
inline constexpr char kWatchJobMethod[] =
    "/tunefleet.v1.TuningService/WatchJob";
inline constexpr char kListDevicesMethod[] =
    "/tunefleet.v1.TuningService/ListDevices";
inline constexpr char kQueryRecordsMethod[] =
    "/tunefleet.v1.TuningService/QueryRecords";
inline constexpr char kListJobsMethod[] =
    "/tunefleet.v1.TuningService/ListJobs";
inline constexpr char kGetJobMethod[] = "/tunefleet.v1.TuningService/GetJob";
inline constexpr char kRunModelMethod[] =
    "/tunefleet.v1.TuningService/RunModel";
inline constexpr char kExportRecordsMethod[] =
    "/tunefleet.v1.TuningService/ExportRecords";
inline constexpr char kImportRecordsMethod[] =
    "/tunefleet.v1.TuningService/ImportRecords";

// The role a method needs; nullopt for a method no token may call.
std::optional<Role> RequiredRole(absl::string_view full_method);

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_AUTH_ROLES_H_
