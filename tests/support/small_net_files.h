// SmallNet (onnx_test_models.h) and an input image for it written as
// files, for the tests that run the model as a user does (`tunefleet run
// --onnx DIR/small.onnx --input image=DIR/image.npy`).
#ifndef TUNEFLEET_TESTS_SMALL_NET_FILES_H_
#define TUNEFLEET_TESTS_SMALL_NET_FILES_H_

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/npy.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/ort_oracle.h"

namespace tunefleet::testing {

// The paths WriteSmallNetFiles wrote.
struct SmallNetFiles {
  std::string model;  // DIR/small.onnx: SmallNet()
  std::string input;  // DIR/image.npy: kSmallNetDims, RandomNpy seed 5,
                      // values in [-1, 1)
};

// Writes SmallNet() and its input image into the existing folder `dir`.
// An error names the file that could not be written.
inline absl::StatusOr<SmallNetFiles> WriteSmallNetFiles(
    const std::string& dir) {
  SmallNetFiles files = {dir + "/small.onnx", dir + "/image.npy"};
  std::ofstream model(files.model, std::ios::binary);
  model << SmallNet();
  model.close();
  if (!model) return absl::InternalError("cannot write " + files.model);
  absl::Status input =
      base::WriteNpy(files.input, RandomNpy(kSmallNetDims, 5, -1, 1));
  if (!input.ok()) return input;
  return files;
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SMALL_NET_FILES_H_
