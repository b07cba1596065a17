#include "auth/roles.h"

#include "absl/strings/str_cat.h"

namespace tunefleet::auth {
absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAgent:
      return "agent";
    case Role::kReader:
      return "reader";
    case Role::kTuner:
      return "tuner";
  }
  return "?";
}

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (Role role : {Role::kAgent, Role::kReader, Role::kTuner}) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "'; roles: agent, tuner, reader"));
}

bool RoleAllows(Role held, Role needed) {
  return held == needed || (held == Role::kTuner && needed == Role::kReader);
}

std::optional<Role> RequiredRole(absl::string_view full_method) {
  if (full_method == kConnectMethod) return Role::kAgent;
  if (full_method == kSubmitJobMethod || full_method == kCancelJobMethod ||
      full_method == kSubmitModelJobMethod || full_method == kRunModelMethod ||
      full_method == kImportRecordsMethod) {
    return Role::kTuner;
  }
  if (full_method == kWatchJobMethod || full_method == kListDevicesMethod ||
      full_method == kQueryRecordsMethod || full_method == kListJobsMethod ||
      full_method == kGetJobMethod || full_method == kExportRecordsMethod) {
    return Role::kReader;
  }
  return std::nullopt;
}

}  // namespace tunefleet::auth
