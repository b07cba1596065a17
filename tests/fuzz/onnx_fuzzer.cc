// libFuzzer target: ONNX import (onnx_import/onnx_import.h). The bytes are read
// as a model (a ModelProto), its dims fixed and shapes inferred by libonnx,
// and its nodes mapped to tuning tasks, then lowered to a ModelGraph's
// steps (onnx_import/model_graph.h). Nothing may crash, leak or hit
// undefined behaviour; a refusal is fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onnx_import/model_graph.h"
#include "onnx_import/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunefleet::onnx_import::ModelTasks> tasks =
      tunefleet::onnx_import::ImportOnnxBytes(bytes, "fuzz.onnx", {});
  if (tasks.ok()) {
    for (const auto& t : tasks->tasks) (void)t.workload.Canonical();
  }
  absl::StatusOr<tunefleet::onnx_import::ModelGraph> graph =
      tunefleet::onnx_import::ImportModelGraph(bytes, "fuzz.onnx", {});
  if (graph.ok()) {
    for (const auto& s : graph->steps) (void)s.workload.Canonical();
  }
  return 0;
}
