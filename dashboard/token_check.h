// Who may read the dashboard: every API call and /metrics needs a bearer
// token (Authorization: Bearer TOKEN) of role reader or tuner from the
// daemon's tokens file (auth/tokens.h); cancelling a job needs
// tuner. The pages themselves hold no data: their script asks for the
// token (a login form, kept in the browser tab's sessionStorage) and sends
// it on every fetch.
#ifndef TUNEFLEET_DASHBOARD_TOKEN_CHECK_H_
#define TUNEFLEET_DASHBOARD_TOKEN_CHECK_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/roles.h"
#include "auth/tokens.h"

namespace tunefleet::dashboard {

// The role of the caller whose Authorization header is `authorization`,
// when it may do what needs `needed`. `tokens` null: no authentication
// (the daemon's --no-auth, or a local database file): every caller is a
// tuner. Errors: UNAUTHENTICATED for a missing header, another scheme or
// an unknown token; PERMISSION_DENIED for a role that does not allow
// `needed` (an agent token never reads the dashboard).
absl::StatusOr<auth::Role> CheckBearer(const auth::TokenSet* tokens,
                                       absl::string_view authorization,
                                       auth::Role needed);

}  // namespace tunefleet::dashboard

#endif  // TUNEFLEET_DASHBOARD_TOKEN_CHECK_H_
