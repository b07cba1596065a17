// ONNX Runtime as the oracle of model outputs (issue 35 item 5,
// docs/ORT_ORACLE.md): runs a model with ORT's CPU execution provider in a
// child process (tests/support/ort_run.mjs under Node.js, with npm's
// onnxruntime-node from .cache/ort; or any command with the same flags,
// such as ort_run.py with Python's onnxruntime) and returns its outputs
// and latency; and the comparison the model tests apply: per output,
// max|ours - reference| <= tolerance * max|reference|.
//
// Used by the tests (with ort_expect.h's gtest helpers) and by
// bench/model_e2e (ORT's CPU latency on the same input in the same run).
#ifndef TUNEFLEET_TESTS_ORT_ORACLE_H_
#define TUNEFLEET_TESTS_ORT_ORACLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/npy.h"

namespace tunefleet::testing {

// Values uniform in [lo, hi) for `shape`: element i is lo + (hi - lo) * u_i
// with u_i the top 24 bits of the (i+1)-th output of splitmix64 seeded
// with `seed`, / 2^24. With lo = 0, hi = 1 these are exactly ort_run's
// --random-input values for the same --seed.
base::NpyArray RandomNpy(const std::vector<int64_t>& shape, uint64_t seed,
                         float lo = 0.0f, float hi = 1.0f);

// A 1x3xHxW image of dark glyph-like strokes in rows of text on white,
// normalized as PP-OCR's preprocessing does ((v - mean) / std per channel,
// ImageNet's mean 0.485, 0.456, 0.406 and std 0.229, 0.224, 0.225), from
// `seed`. On it det finds text (outputs up to 1 on ~10% of the pixels at
// 640x640); on uniform noise det's outputs stay below 1e-3 everywhere,
// which would make 1e-4 x max|reference| a test of sigmoid's tail alone.
// Rows are 24 pixels high (H/2 when H < 48), 60 apart.
base::NpyArray OcrTextImage(int64_t height, int64_t width, uint64_t seed);

// What one run of the oracle gave.
struct OrtResult {
  std::map<std::string, base::NpyArray> outputs;  // by the model's names
  std::vector<std::string> output_order;          // the model's order
  std::string runtime;  // "onnxruntime-node 1.30.0", "onnxruntime 1.17.1"
  // Over OrtRunOptions::runs timed runs after the warm-up; absent when
  // runs is 0. Milliseconds of wall time per session.run().
  std::optional<double> median_ms, p10_ms, p90_ms;
  double load_ms = 0;  // creating the session (parse, optimize)
  std::string json;    // the runner's whole JSON line
};

struct OrtRunOptions {
  int runs = 0;     // timed runs (0: outputs only)
  int warmup = 0;   // untimed runs after the first, before the timed ones
  int threads = 0;  // ORT's intra-op threads; 0: ORT's default (all cores)
  // ORT's graph optimization level: all (ORT's default), extended, basic
  // or disabled (the graph as written: no BatchNormalization folded into
  // Conv, no fusions). Two levels differ by fp32 rounding alone, which
  // makes their difference the model's own noise floor.
  std::string optimization = "all";
  double timeout_ms = 300000;  // the child is killed after this
  // Where inputs and outputs are written; empty: a fresh directory under
  // $TMPDIR (or /tmp), removed afterwards.
  std::string work_dir;
};

// Finds and runs the oracle. Copyable; Run() is safe from several threads
// (each run is its own process and directory).
class OrtOracle {
 public:
  // The oracle of this machine:
  //  - $TUNEFLEET_ORT_COMMAND when set: a command line (split at spaces)
  //    given ort_run's flags, e.g. "python3 tests/support/ort_run.py";
  //  - else `node` from $PATH running tests/support/ort_run.mjs of the
  //    source tree, with ORT in $TUNEFLEET_ORT_DIR or <source>/.cache/ort.
  // Errors: FAILED_PRECONDITION saying what is missing and how to install
  // it (tests skip with this message; ort_expect.h's
  // TUNEFLEET_ORT_ORACLE_OR_SKIP).
  static absl::StatusOr<OrtOracle> Find();

  // An oracle running `command` followed by ort_run's flags.
  explicit OrtOracle(std::vector<std::string> command)
      : command_(std::move(command)) {}

  // Runs `model_path` on `inputs` (by the model's input names; every input
  // of the model must be given). Errors: INTERNAL with the runner's exit
  // status and stderr (a model ORT refuses, a missing input); DEADLINE_
  // EXCEEDED after options.timeout_ms; an unreadable output's error.
  absl::StatusOr<OrtResult> Run(
      const std::string& model_path,
      const std::map<std::string, base::NpyArray>& inputs,
      const OrtRunOptions& options = {}) const;

  // The command line, for messages.
  std::string Describe() const;

 private:
  std::vector<std::string> command_;
};

// How far one output is from the reference.
struct OutputDeviation {
  double max_abs_diff = 0;  // max |ours - reference| (inf for a NaN in ours)
  double max_abs_ref = 0;   // max |reference|
  int64_t worst = -1;       // the flat index of max_abs_diff (-1: none)
  // max_abs_diff / max_abs_ref (0 when both are 0, inf when only the
  // reference is all zeros).
  double relative() const;
};

// The deviation of `ours` from `reference`. Errors: INVALID_ARGUMENT when
// the shapes differ, or the reference holds a NaN or an infinity.
absl::StatusOr<OutputDeviation> Deviation(const base::NpyArray& ours,
                                          const base::NpyArray& reference);

// OK when max|ours - reference| <= tolerance * max|reference| (issue 35's
// acceptance: tolerance 1e-4). Errors: INVALID_ARGUMENT naming the output,
// its shape, the worst element (index, both values), the deviation and
// the allowed one; or the shape mismatch.
absl::Status CompareOutput(const std::string& name, const base::NpyArray& ours,
                           const base::NpyArray& reference,
                           double tolerance = 1e-4);

// CompareOutput over every output of `reference`; an output missing from
// `ours` is an error too. All failures in one message, one line each.
absl::Status CompareOutputs(
    const std::map<std::string, base::NpyArray>& ours,
    const std::map<std::string, base::NpyArray>& reference,
    double tolerance = 1e-4);

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_ORT_ORACLE_H_
