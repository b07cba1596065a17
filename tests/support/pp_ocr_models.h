// The PP-OCR models deploy/fetch-model.sh fetches into the source tree's
// .cache (the classifier, PP-OCRv4 det and rec), for the tests that run
// on the real models when they are there and are skipped when not.
#ifndef TUNEFLEET_TESTS_SUPPORT_PP_OCR_MODELS_H_
#define TUNEFLEET_TESTS_SUPPORT_PP_OCR_MODELS_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::testing {

// One of the models: its file's path and name, and the dims of its input x.
struct PpOcrModel {
  std::string path;
  std::string file;
  std::vector<int64_t> dims;
};

// Calls `visit` for each of the models that is under `source_dir`; skips
// the running test (GTEST_SKIP, naming the folder looked in) when none is.
inline void ForEachPpOcrModelOrSkip(
    const std::string& source_dir,
    const std::function<void(const PpOcrModel& model)>& visit) {
  const std::string assets = source_dir + "/.cache/models/package/assets/";
  const std::vector<std::pair<std::string, std::vector<int64_t>>> models = {
      {"ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}},
      {"ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}},
      {"ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}}};
  int found = 0;
  for (const auto& [file, dims] : models) {
    if (!std::filesystem::exists(assets + file)) continue;
    ++found;
    visit(PpOcrModel{assets + file, file, dims});
  }
  if (found == 0) {
    GTEST_SKIP() << "no model in " << assets << " (fetch-model.sh)";
  }
}

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_PP_OCR_MODELS_H_
