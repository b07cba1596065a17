#include "onnx_import/shape_inference.h"

#include <cstdint>
#include <exception>

#include "absl/strings/str_cat.h"
#include "base/subprocess.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace tunefleet::onnx_import {
namespace {

// Subgraphs (If, Loop, Scan bodies) CheckForInference() walks, at most.
constexpr int kMaxGraphDepth = 8;

}  // namespace

absl::Status CheckForInference(const onnx::GraphProto& graph,
                               const std::map<std::string, int>& opsets,
                               absl::string_view name, int depth) {
  if (depth > kMaxGraphDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " nests subgraphs deeper than ", kMaxGraphDepth, " levels"));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    const std::string where =
        absl::StrCat(name, ": node ", n.name().empty() ? "" : n.name(), " (",
                     n.op_type(), " @", i, ")");
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    auto opset = opsets.find(domain);
    if (opset != opsets.end()) {
      const onnx::OpSchema* schema =
          onnx::OpSchemaRegistry::Schema(n.op_type(), opset->second, domain);
      if (schema != nullptr) {
        // libonnx reports errors by throwing; they stop here.
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, " does not match its schema: ", e.what()));
        }
      }
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      const std::string& attr = a.name();
      const int64_t min = attr == "strides" || attr == "dilations" ||
                                  attr == "kernel_shape" || attr == "group" ||
                                  attr == "blocksize"
                              ? 1
                          : attr == "pads" ? 0
                                           : INT64_MIN;
      // An int set on an attribute of another type is read all the same.
      bool ok = !a.has_i() || a.i() >= min;
      for (int64_t v : a.ints()) ok = ok && v >= min;
      if (!ok) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": attribute ", attr, " must be >= ", min));
      }
      if (a.has_g()) {
        if (absl::Status s = CheckForInference(a.g(), opsets, name, depth + 1);
            !s.ok()) {
          return s;
        }
      }
      for (const onnx::GraphProto& sub : a.graphs()) {
        if (absl::Status s = CheckForInference(sub, opsets, name, depth + 1);
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// libonnx's shape inference, as ImportOnnxBytes runs it. Errors:
// INVALID_ARGUMENT with libonnx's message.
absl::Status InferShapes(onnx::ModelProto* model, absl::string_view name) {
  // libonnx reports errors by throwing; they stop here.
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        *model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference of ", name, " failed: ", e.what()));
  }
  return absl::OkStatus();
}

// Longest libonnx's shape inference may take on one model.
constexpr int kInferenceTimeoutMs = 120000;

}  // namespace

absl::Status InferShapesIsolated(onnx::ModelProto* model,
                                 absl::string_view name) {
  (void)onnx::OpSchemaRegistry::Instance();  // built before the fork
  // The child replies 'O' and the inferred shapes, or 'E' and the error.
  absl::StatusOr<base::ChildOutput> child = base::RunInChild(
      [&]() -> std::string {
        absl::Status s = InferShapes(model, name);
        if (!s.ok()) return absl::StrCat("E", s.message());
        onnx::GraphProto shapes;
        *shapes.mutable_value_info() = model->graph().value_info();
        *shapes.mutable_output() = model->graph().output();
        return absl::StrCat("O", shapes.SerializeAsString());
      },
      kInferenceTimeoutMs);
  if (absl::IsDeadlineExceeded(child.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape inference of ", name, " did not finish in ",
                     kInferenceTimeoutMs / 1000, " s"));
  }
  if (!child.ok()) {
    return absl::InternalError(
        absl::StrCat("shape inference: ", child.status().message()));
  }
  const std::string& reply = child->bytes;
  if (!child->exit.success() || reply.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape inference of ", name, " crashed (",
        child->exit.signaled ? absl::StrCat("signal ", child->exit.code)
                             : absl::StrCat("exit ", child->exit.code),
        "): the model is malformed"));
  }
  if (reply[0] == 'E') return absl::InvalidArgumentError(reply.substr(1));
  onnx::GraphProto shapes;
  if (reply[0] != 'O' ||
      !shapes.ParseFromArray(reply.data() + 1,
                             static_cast<int>(reply.size() - 1))) {
    return absl::InternalError(
        absl::StrCat("shape inference of ", name, ": garbled reply"));
  }
  *model->mutable_graph()->mutable_value_info() = shapes.value_info();
  *model->mutable_graph()->mutable_output() = shapes.output();
  return absl::OkStatus();
}

}  // namespace tunefleet::onnx_import
