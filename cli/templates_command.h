// `tunefleet templates`: what can be tuned. Lists the registered templates
// (the built-in ones, and a user's spec file given with --template) with
// their op, version, the op's dims and every knob with its values.
#ifndef TUNEFLEET_CLI_TEMPLATES_COMMAND_H_
#define TUNEFLEET_CLI_TEMPLATES_COMMAND_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"
#include "nlohmann/json.hpp"

namespace tunefleet::cli {

struct TemplatesOptions {
  std::string op;             // empty: every op
  std::string template_name;  // empty: every template; else a name or a
                              // spec file (.toml/.json), listed alone
  bool json = false;
};

// Declares the flags of subcommand `cmd` (main.cc registers it with its
// name and one-line help); `options` must outlive parsing.
void AddTemplatesOptions(CLI::App* cmd, TemplatesOptions& options);

// Runs it; returns the process exit code (common.h).
int RunTemplates(const TemplatesOptions& options);

// The template a --template argument names, as `tune` and `measure` read
// it: a spec file (.toml or .json), loaded and registered in this process,
// or the name of a registered template. Errors: the spec's (NOT_FOUND,
// INVALID_ARGUMENT naming the field); NOT_FOUND for an unknown name,
// listing every known template and its op.
absl::StatusOr<const templates::KernelTemplate*> TemplateFromArg(
    const std::string& template_arg);

// {"templates": [{"name", "op", "version", "dims": [{"name", "default"?}],
// "knobs": [{"name", "values", "size_like"}], "raw_configs"}]}: the
// listing --json prints, in registry order.
nlohmann::json TemplatesJson(
    const std::vector<const templates::KernelTemplate*>& templates);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_TEMPLATES_COMMAND_H_
