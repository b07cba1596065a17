// libFuzzer target: ONNX import (onnx_import/onnx_import.h). The bytes are read
// as a model (a ModelProto), its dims fixed and shapes inferred by libonnx,
// and its nodes mapped to tuning tasks. Nothing may crash, leak or hit
// undefined behaviour; a refusal is fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onnx_import/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunefleet::onnx_import::ModelTasks> tasks =
      tunefleet::onnx_import::ImportOnnxBytes(bytes, "fuzz.onnx", {});
  if (tasks.ok()) {
    for (const auto& t : tasks->tasks) (void)t.workload.Canonical();
  }
  return 0;
}
