// GoogleTest helpers over ort_oracle.h: skip a test when ONNX Runtime is
// absent (with the reason), and assert that outputs match the reference.
#ifndef TUNEFLEET_TESTS_ORT_EXPECT_H_
#define TUNEFLEET_TESTS_ORT_EXPECT_H_

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tests/support/ort_oracle.h"

// Declares `oracle` (a tunefleet::testing::OrtOracle), or skips the test
// with the reason ONNX Runtime cannot run here:
//   TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
//   absl::StatusOr<OrtResult> ref = oracle.Run(model, inputs);
#define TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle)                             \
  absl::StatusOr<::tunefleet::testing::OrtOracle> oracle##_or =          \
      ::tunefleet::testing::OrtOracle::Find();                           \
  if (!oracle##_or.ok()) GTEST_SKIP() << oracle##_or.status().message(); \
  const ::tunefleet::testing::OrtOracle& oracle = *oracle##_or

namespace tunefleet::testing {

// EXPECT_TRUE(OutputsMatch(ours, ort->outputs)): every reference output
// within tolerance * max|reference| (CompareOutputs' message otherwise).
inline ::testing::AssertionResult OutputsMatch(
    const std::map<std::string, base::NpyArray>& ours,
    const std::map<std::string, base::NpyArray>& reference,
    double tolerance = 1e-4) {
  const absl::Status s = CompareOutputs(ours, reference, tolerance);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << s.message();
}

// EXPECT_TRUE(MatchesOrt(oracle, model, {{"image", npy_path}}, ours)):
// ONNX Runtime's outputs of the .onnx file `model` on the inputs read from
// the .npy files `input_files` (input name -> path), compared with `ours`
// as OutputsMatch does. Fails, saying why, when an input cannot be read or
// ONNX Runtime cannot run the model.
inline ::testing::AssertionResult MatchesOrt(
    const OrtOracle& oracle, const std::string& model,
    const std::map<std::string, std::string>& input_files,
    const std::map<std::string, base::NpyArray>& ours,
    double tolerance = 1e-4) {
  std::map<std::string, base::NpyArray> inputs;
  for (const auto& [name, path] : input_files) {
    absl::StatusOr<base::NpyArray> a = base::ReadNpy(path);
    if (!a.ok()) {
      return ::testing::AssertionFailure()
             << "input " << name << ": " << a.status();
    }
    inputs[name] = *std::move(a);
  }
  absl::StatusOr<OrtResult> ref = oracle.Run(model, inputs);
  if (!ref.ok()) {
    return ::testing::AssertionFailure() << "ONNX Runtime: " << ref.status();
  }
  return OutputsMatch(ours, ref->outputs, tolerance);
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_ORT_EXPECT_H_
