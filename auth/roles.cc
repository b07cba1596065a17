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
#define TUNEFLEET_ROLE_OF(rpc, role) \
  if (full_method == k##rpc##Method) return Role::role;
  TUNEFLEET_TUNING_METHOD_ROLES(TUNEFLEET_ROLE_OF)
#undef TUNEFLEET_ROLE_OF
  return std::nullopt;
}

}  // namespace tunefleet::auth
