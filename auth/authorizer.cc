#include "auth/authorizer.h"

#include <cstdio>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "auth/grpc_status.h"

namespace tunefleet::auth {
Authorizer::Authorizer(std::shared_ptr<const TokenSet> tokens,
                       bool log_refusals)
    : enabled_(tokens != nullptr),
      log_refusals_(log_refusals),
      tokens_(std::move(tokens)) {}

absl::Status Authorizer::SetTokens(std::shared_ptr<const TokenSet> tokens) {
  if (!enabled_) {
    return absl::FailedPreconditionError(
        "authentication is off (--no-auth); restart with --tokens FILE");
  }
  if (tokens == nullptr) return absl::InvalidArgumentError("no token set");
  absl::MutexLock lock(&mu_);
  tokens_ = std::move(tokens);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Authorizer::Authorize(
    absl::string_view full_method,
    const std::vector<absl::string_view>& authorization) const {
  if (!enabled_) return std::string();
  const std::optional<Role> needed = RequiredRole(full_method);
  if (!needed) {
    return absl::PermissionDeniedError(
        absl::StrCat("no role may call ", full_method));
  }
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "no access token: every call must carry the metadata "
        "'authorization: Bearer <token>' (tunefleet's CLI and agent send it "
        "with --token-file FILE)");
  }
  if (authorization.size() > 1) {
    return absl::UnauthenticatedError(
        "several 'authorization' metadata values; send one");
  }
  // RFC 6750 section 2.1: the scheme is "Bearer"; auth schemes are case
  // insensitive (RFC 7235 section 2.1), so "bearer" is accepted too.
  absl::string_view token = authorization.front();
  constexpr absl::string_view kScheme = "bearer ";
  if (token.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(token.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError(
        "the 'authorization' metadata must be 'Bearer <token>'");
  }
  token.remove_prefix(kScheme.size());
  std::shared_ptr<const TokenSet> tokens;
  {
    absl::MutexLock lock(&mu_);
    tokens = tokens_;
  }
  const TokenEntry* entry = tokens->Find(token);
  if (entry == nullptr) {
    return absl::UnauthenticatedError(
        "unknown access token (not in the server's tokens file)");
  }
  if (!RoleAllows(entry->role, *needed)) {
    const absl::string_view method =
        full_method.substr(full_method.rfind('/') + 1);
    return absl::PermissionDeniedError(
        absl::StrCat(method, " needs a token of role ", RoleName(*needed),
                     *needed == Role::kReader ? " (or tuner)" : "", "; token '",
                     entry->name, "' has role ", RoleName(entry->role)));
  }
  return entry->name;
}

grpc::Status Authorizer::Check(const grpc::ServerContextBase& context,
                               absl::string_view full_method,
                               std::string* caller_name) const {
  if (!enabled_) return grpc::Status::OK;
  std::vector<absl::string_view> authorization;
  const auto range = context.client_metadata().equal_range("authorization");
  for (auto it = range.first; it != range.second; ++it) {
    authorization.emplace_back(it->second.data(), it->second.size());
  }
  absl::StatusOr<std::string> caller = Authorize(full_method, authorization);
  if (caller.ok()) {
    if (caller_name != nullptr) *caller_name = *std::move(caller);
    return grpc::Status::OK;
  }
  if (log_refusals_) {
    std::fprintf(stderr, "[server] refused %s from %s: %s\n",
                 std::string(full_method).c_str(), context.peer().c_str(),
                 std::string(caller.status().message()).c_str());
  }
  return ToGrpc(caller.status());
}

}  // namespace tunefleet::auth
