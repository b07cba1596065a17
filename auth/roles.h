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

// The TuningService methods and the role each needs: X(Method, Role
// enumerator).
#define TUNEFLEET_TUNING_METHOD_ROLES(X) \
  X(SubmitJob, kTuner)                   \
  X(CancelJob, kTuner)                   \
  X(SubmitModelJob, kTuner)              \
  X(RunModel, kTuner)                    \
  X(ImportRecords, kTuner)               \
  X(WatchJob, kReader)                   \
  X(ListDevices, kReader)                \
  X(QueryRecords, kReader)               \
  X(ListJobs, kReader)                   \
  X(GetJob, kReader)                     \
  X(ExportRecords, kReader)

// Full gRPC method names ("/package.Service/Method") the server serves:
// kConnectMethod (AgentService) and, for each TuningService method above,
// k<Method>Method = "/tunefleet.v1.TuningService/<Method>" (kSubmitJobMethod
// and so on).
inline constexpr char kConnectMethod[] = "/tunefleet.v1.AgentService/Connect";
#define TUNEFLEET_TUNING_METHOD_NAME(rpc, role)             \
  inline constexpr char k##rpc##Method[] = "/tunefleet.v1." \
                                           "TuningService/" #rpc;
TUNEFLEET_TUNING_METHOD_ROLES(TUNEFLEET_TUNING_METHOD_NAME)
#undef TUNEFLEET_TUNING_METHOD_NAME

// The role a method needs; nullopt for a method no token may call.
std::optional<Role> RequiredRole(absl::string_view full_method);

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_AUTH_ROLES_H_
