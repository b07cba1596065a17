// Who may call the server: checks per RPC method the caller's bearer token
// (sent as "authorization: Bearer <token>" call metadata, as
// client/channel.h does) against the accepted tokens and the method's role
// (roles.h). A missing, malformed or unknown token is UNAUTHENTICATED; a
// known token of the wrong role is PERMISSION_DENIED.
#ifndef TUNEFLEET_AUTH_AUTHORIZER_H_
#define TUNEFLEET_AUTH_AUTHORIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "auth/tokens.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet::auth {

// Decides, per call, whether the caller's token allows the method.
// Thread-safe; SetTokens() may run while calls are checked.
class Authorizer {
 public:
  // `tokens` null: authentication is off (tunefleet-server --no-auth) and
  // every call is allowed. Refusals are logged to stderr when
  // `log_refusals`.
  Authorizer(std::shared_ptr<const TokenSet> tokens, bool log_refusals);

  bool enabled() const { return enabled_; }
  // Replaces the accepted tokens (a reloaded tokens file). Errors:
  // FAILED_PRECONDITION when authentication is off, INVALID_ARGUMENT for
  // null.
  absl::Status SetTokens(std::shared_ptr<const TokenSet> tokens);

  // `authorization` holds the call's "authorization" metadata values.
  // Returns the caller's entry's name ("" when authentication is off).
  // Errors: UNAUTHENTICATED for none, several, one not "Bearer <token>",
  // or an unknown token; PERMISSION_DENIED for a token whose role may not
  // call `full_method` (naming the role needed), or an unknown method.
  absl::StatusOr<std::string> Authorize(
      absl::string_view full_method,
      const std::vector<absl::string_view>& authorization) const;

  // Authorize() on the call's metadata, as a gRPC status; with `caller`,
  // the caller's entry's name goes there when allowed.
  grpc::Status Check(const grpc::ServerContextBase& context,
                     absl::string_view full_method,
                     std::string* caller = nullptr) const;

 private:
  const bool enabled_;
  const bool log_refusals_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const TokenSet> tokens_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet::auth

#endif  // TUNEFLEET_AUTH_AUTHORIZER_H_
