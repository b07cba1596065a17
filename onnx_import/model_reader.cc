#include "onnx_import/model_reader.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "onnx_import/constant_fold.h"
#include "onnx_import/shape_inference.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {
namespace {

absl::Status ApplyInputShapes(onnx::GraphProto* graph,
                              const InputShapes& shapes,
                              absl::string_view name) {
  std::set<std::string> initializers;
  for (const auto& t : graph->initializer()) initializers.insert(t.name());
  std::vector<std::string> inputs;
  for (const auto& in : graph->input()) {
    if (!initializers.count(in.name())) inputs.push_back(in.name());
  }
  auto describe = [](const onnx::ValueInfoProto& v) {
    std::vector<std::string> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : "?");
    }
    return absl::StrCat(v.name(), " (", absl::StrJoin(dims, "x"), ")");
  };
  for (const auto& [input, dims] : shapes) {
    if (std::find(inputs.begin(), inputs.end(), input) == inputs.end()) {
      std::vector<std::string> described;
      for (const auto& in : graph->input()) {
        if (!initializers.count(in.name())) described.push_back(describe(in));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(name, " has no input '", input,
                       "'; its inputs: ", absl::StrJoin(described, ", ")));
    }
  }
  for (onnx::ValueInfoProto& in : *graph->mutable_input()) {
    if (initializers.count(in.name())) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    auto given = shapes.find(in.name());
    if (given == shapes.end()) {
      for (const auto& d : shape->dim()) {
        if (!d.has_dim_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input ", describe(in), " of ", name,
                           " has dynamic dims: give --input-shape ", in.name(),
                           "=", "<dims, e.g. 1,3,48,192>"));
        }
      }
      continue;
    }
    if (shape->dim_size() != 0 &&
        shape->dim_size() != static_cast<int>(given->second.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape ", in.name(), " has ", given->second.size(),
          " dims; the model's input is ", describe(in)));
    }
    for (size_t d = 0; d < given->second.size(); ++d) {
      if (d < static_cast<size_t>(shape->dim_size()) &&
          shape->dim(d).has_dim_value() &&
          shape->dim(d).dim_value() != given->second[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--input-shape ", in.name(), " dim ", d, " is ", given->second[d],
            " but the model fixes it to ", shape->dim(d).dim_value()));
      }
    }
    shape->clear_dim();
    for (int64_t v : given->second) shape->add_dim()->set_dim_value(v);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseInputShape(absl::string_view text, InputShapes* shapes) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(text, absl::MaxSplits('=', 1));
  const absl::string_view name = absl::StripAsciiWhitespace(kv.first);
  Dims dims;
  for (absl::string_view d :
       absl::StrSplit(kv.second, absl::ByAnyChar(",;x"), absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v) || v < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad --input-shape '", text,
                       "': dims must be integers >= 1, ", "e.g. x=1,3,48,192"));
    }
    dims.push_back(v);
  }
  if (name.empty() || dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad --input-shape '", text, "': expected NAME=D1,D2,..."));
  }
  (*shapes)[std::string(name)] = dims;
  return absl::OkStatus();
}

absl::StatusOr<InferredModel> ReadAndInfer(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes) {
  InferredModel out;
  onnx::ModelProto& model = out.model;
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is not an ONNX model (no ModelProto with a graph)"));
  }
  std::map<std::string, int> opsets;  // domain ("" for ai.onnx) -> version
  for (const auto& o : model.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    const int version = static_cast<int>(
        std::clamp<int64_t>(o.version(), 0, std::numeric_limits<int>::max()));
    opsets[domain] = version;
    if (domain.empty()) out.opset = o.version();
  }
  TUNEFLEET_RETURN_IF_ERROR(
      ApplyInputShapes(model.mutable_graph(), input_shapes, name));
  TUNEFLEET_RETURN_IF_ERROR(CheckForInference(model.graph(), opsets, name, 0));
  TUNEFLEET_RETURN_IF_ERROR(InferShapesIsolated(&model, name));
  TUNEFLEET_RETURN_IF_ERROR(
      FoldConstants(&model, out.opset, name, &out.folded_ops));
  return out;
}

}  // namespace tunefleet::onnx_import
