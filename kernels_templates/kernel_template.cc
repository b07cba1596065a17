#include "kernels_templates/kernel_template.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/hash.h"

namespace tunefleet::templates {

int KernelTemplate::KnobIndex(absl::string_view knob_name) const {
  const std::vector<Knob>& all = knobs();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name == knob_name) return static_cast<int>(i);
  }
  return -1;
}

absl::StatusOr<KnobValues> KernelTemplate::ConfigFromPairs(
    const std::vector<std::pair<std::string, int64_t>>& pairs) const {
  const std::vector<Knob>& all = knobs();
  KnobValues config(all.size());
  std::vector<bool> seen(all.size(), false);
  // Every problem of the config, so that one message names them all.
  std::vector<std::string> unknown, outside, missing;
  for (const auto& [knob_name, value] : pairs) {
    const int i = KnobIndex(knob_name);
    if (i < 0) {
      unknown.push_back(absl::StrCat("'", knob_name, "'"));
      continue;
    }
    const std::vector<int64_t>& values = all[i].values;
    if (std::find(values.begin(), values.end(), value) == values.end()) {
      outside.push_back(absl::StrCat("knob ", knob_name, "=", value,
                                     " is outside its values {",
                                     absl::StrJoin(values, ","), "}"));
    }
    config[i] = value;
    seen[i] = true;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (!seen[i]) missing.push_back(all[i].name);
  }
  if (unknown.empty() && outside.empty() && missing.empty()) return config;
  std::vector<std::string> problems;
  if (!unknown.empty()) {
    problems.push_back(absl::StrCat("template ", name(), " has no knob",
                                    unknown.size() > 1 ? "s " : " ",
                                    absl::StrJoin(unknown, ", ")));
  }
  problems.insert(problems.end(), outside.begin(), outside.end());
  if (!missing.empty()) {
    problems.push_back(absl::StrCat("config is missing knob",
                                    missing.size() > 1 ? "s " : " ",
                                    absl::StrJoin(missing, ", ")));
  }
  std::string message = absl::StrJoin(problems, "; ");
  if (!unknown.empty() || !missing.empty()) {
    absl::StrAppend(&message, " (template ", name(), " has ",
                    absl::StrJoin(all, ", ",
                                  [](std::string* out, const Knob& k) {
                                    out->append(k.name);
                                  }),
                    ")");
  }
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<KnobValues> KernelTemplate::ParseConfig(
    absl::string_view text) const {
  std::vector<std::pair<std::string, int64_t>> pairs;
  for (absl::string_view token :
       absl::StrSplit(text, absl::ByAnyChar(", ;"), absl::SkipWhitespace())) {
    std::vector<absl::string_view> kv = absl::StrSplit(token, '=');
    int64_t value = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad config token '", token, "': expected KNOB=INTEGER"));
    }
    pairs.emplace_back(std::string(kv[0]), value);
  }
  return ConfigFromPairs(pairs);
}

std::string KernelTemplate::ConfigString(const KnobValues& config) const {
  const std::vector<Knob>& all = knobs();
  std::string s;
  for (size_t i = 0; i < all.size() && i < config.size(); ++i) {
    absl::StrAppend(&s, i ? "," : "", all[i].name, "=", config[i]);
  }
  return s;
}

std::string KernelTemplate::SourceHash() const {
  return base::Fnv1aHex(absl::StrCat(name(), "\n", version(), "\n", source()));
}

double KernelTemplate::Tolerance(const Workload& workload) const {
  return workload.dtype() == Dtype::kFp16 ? std::max(rtol(), 1e-2) : rtol();
}



}  // namespace tunefleet::templates
