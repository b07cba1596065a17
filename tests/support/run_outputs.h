// The outputs `tunefleet run --save-outputs DIR --json` saved, read back.
#ifndef TUNEFLEET_TESTS_RUN_OUTPUTS_H_
#define TUNEFLEET_TESTS_RUN_OUTPUTS_H_

#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/npy.h"
#include "nlohmann/json.hpp"

namespace tunefleet::testing {

// The arrays named in the run's JSON `run` ("outputs": output name -> .npy
// file), by output name. An error names the output whose file could not be
// read.
inline absl::StatusOr<std::map<std::string, base::NpyArray>> ReadSavedOutputs(
    const nlohmann::json& run) {
  std::map<std::string, base::NpyArray> outputs;
  for (const auto& [name, file] : run["outputs"].items()) {
    absl::StatusOr<base::NpyArray> a = base::ReadNpy(file.get<std::string>());
    if (!a.ok()) {
      return absl::Status(
          a.status().code(),
          absl::StrCat("output ", name, ": ", a.status().message()));
    }
    outputs[name] = *std::move(a);
  }
  return outputs;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_RUN_OUTPUTS_H_
