#include "cli/token_command.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/str_format.h"
#include "auth/tokens.h"
#include "cli/common.h"

namespace tunefleet::cli {
namespace {

int RunAdd(const TokenOptions& o) {
  absl::StatusOr<auth::Role> role = auth::ParseRole(o.role);
  if (!role.ok()) return ReportError("token add", role.status());
  absl::StatusOr<std::string> token = auth::GenerateToken();
  if (!token.ok()) return ReportError("token add", token.status());
  auth::TokenEntry entry = auth::TokenEntry::ForToken(*token, *role, o.name);
  if (entry.name.empty()) {
    entry.name = absl::StrCat(o.role, "-", entry.hash_hex().substr(0, 8));
  }
  if (absl::Status s = auth::AppendTokenToFile(o.tokens_file, entry); !s.ok()) {
    // A file others may read is a refusal of the input, not a failure.
    return ReportError("token add",
                       absl::IsFailedPrecondition(s)
                           ? absl::InvalidArgumentError(s.message())
                           : s);
  }
  if (o.json) {
    std::cout << JsonText(nlohmann::json{{"token", *token},
                                         {"name", entry.name},
                                         {"role", o.role},
                                         {"sha256", entry.hash_hex()}})
              << "\n";
  } else {
    std::cout << *token << "\n";
  }
  std::fprintf(stderr,
               "tunefleet token: added '%s' (role %s) to %s. The token is "
               "shown this once; the file keeps only its SHA-256. A running "
               "tunefleet-server picks it up on SIGHUP.\n",
               entry.name.c_str(), o.role.c_str(), o.tokens_file.c_str());
  return kExitOk;
}

int RunList(const TokenOptions& o) {
  absl::StatusOr<auth::TokenSet> set = auth::TokenSet::Load(o.tokens_file);
  if (!set.ok()) return ReportError("token list", set.status());
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auth::TokenEntry& e : set->entries()) {
      list.push_back({{"name", e.name},
                      {"role", auth::RoleName(e.role)},
                      {"sha256", e.hash_hex()}});
    }
    std::cout << JsonText(list) << "\n";
    return kExitOk;
  }
  std::cout << absl::StrFormat("%-24s %-7s %s\n", "NAME", "ROLE", "SHA256");
  for (const auth::TokenEntry& e : set->entries()) {
    std::cout << absl::StrFormat("%-24s %-7s %s...\n", e.name,
                                 auth::RoleName(e.role),
                                 e.hash_hex().substr(0, 16));
  }
  return kExitOk;
}

int RunRemove(const TokenOptions& o) {
  absl::StatusOr<int> removed =
      auth::RemoveTokenFromFile(o.tokens_file, o.name);
  if (!removed.ok()) return ReportError("token remove", removed.status());
  std::fprintf(stderr,
               "tunefleet token: removed '%s' from %s; a running "
               "tunefleet-server drops it on SIGHUP.\n",
               o.name.c_str(), o.tokens_file.c_str());
  return kExitOk;
}

}  // namespace

void AddTokenOptions(CLI::App* cmd, TokenOptions& o) {
  cmd->require_subcommand(1);
  CLI::App* add = cmd->add_subcommand(
      "add",
      "make a random token, add its SHA-256 to the tokens file (created "
      "mode 0600) and print the token once on stdout");
  add->add_option("--tokens", o.tokens_file,
                  "tokens file (tunefleet-server --tokens)")
      ->required();
  add->add_option("--role", o.role,
                  "agent (device agents), tuner (submit and cancel jobs, "
                  "and read) or reader (watch, query, list)")
      ->required()
      ->check(CLI::IsMember({"agent", "tuner", "reader"}));
  add->add_option("--name", o.name,
                  "name in the file and in server logs (default: "
                  "ROLE-<hash prefix>)");
  add->add_flag("--json", o.json,
                "print {token, name, role, sha256} instead of the token");
  add->callback([&o] { o.action = "add"; });

  CLI::App* list = cmd->add_subcommand(
      "list", "names and roles in the tokens file (never the tokens)");
  list->add_option("--tokens", o.tokens_file, "tokens file")->required();
  list->add_flag("--json", o.json, "print a JSON list");
  list->callback([&o] { o.action = "list"; });

  CLI::App* remove = cmd->add_subcommand(
      "remove", "revoke the token with this name (SIGHUP the server after)");
  remove->add_option("--tokens", o.tokens_file, "tokens file")->required();
  remove->add_option("--name", o.name, "the token's name (token list)")
      ->required();
  remove->callback([&o] { o.action = "remove"; });
}

int RunToken(const TokenOptions& o) {
  if (o.action == "add") return RunAdd(o);
  if (o.action == "list") return RunList(o);
  if (o.action == "remove") return RunRemove(o);
  return kExitBadInput;
}

}  // namespace tunefleet::cli
