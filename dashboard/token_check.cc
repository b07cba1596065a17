#include "dashboard/token_check.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tunefleet::dashboard {

absl::StatusOr<auth::Role> CheckBearer(const auth::TokenSet* tokens,
                                       absl::string_view authorization,
                                       auth::Role needed) {
  if (tokens == nullptr) return auth::Role::kTuner;
  constexpr absl::string_view kScheme = "Bearer ";
  if (!absl::StartsWithIgnoreCase(authorization, kScheme)) {
    return absl::UnauthenticatedError(
        "no bearer token: send Authorization: Bearer TOKEN (a token of role "
        "reader or tuner)");
  }
  const absl::string_view token =
      absl::StripAsciiWhitespace(authorization.substr(kScheme.size()));
  const auth::TokenEntry* entry = tokens->Find(token);
  if (entry == nullptr) return absl::UnauthenticatedError("unknown token");
  if (!auth::RoleAllows(entry->role, needed)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "a token of role ", auth::RoleName(entry->role),
        " may not do this; it needs role ", auth::RoleName(needed)));
  }
  return entry->role;
}

}  // namespace tunefleet::dashboard
