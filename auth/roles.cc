#include "auth/roles.h"

#include "absl/strings/str_cat.h"
#include "base/enum_names.h"

namespace tunefleet::auth {
namespace {

constexpr base::EnumNames<Role, 3> kRoleNames{{{{Role::kAgent, "agent"},
                                                {Role::kTuner, "tuner"},
                                                {Role::kReader, "reader"}}}};

}  // namespace

absl::string_view RoleName(Role role) { return kRoleNames.Name(role); }

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  if (std::optional<Role> role = kRoleNames.Parse(name)) return *role;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "'; roles: ", kRoleNames.List()));
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
