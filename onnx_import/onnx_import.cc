// ImportOnnxBytes: read and fold the model (model_reader.h), match its
// nodes to tasks (match.h), classify every node for the coverage report
// (coverage.h).
#include "onnx_import/onnx_import.h"

#include <algorithm>
#include <map>
#include <variant>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "kernels_templates/registry.h"
#include "onnx_import/coverage.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/match.h"
#include "onnx_import/model_reader.h"

namespace tunefleet::onnx_import {
namespace {

// Adds node `i`'s match, run by `tmpl`, to the task of its workload (a new
// one the first time, with the template's FLOP count).
void AddToTask(const Match& m, const templates::KernelTemplate& tmpl,
               const onnx::NodeProto& node, int i,
               std::map<std::string, size_t>& task_of, ModelTasks& out) {
  auto [it, fresh] = task_of.emplace(m.workload.Canonical(), out.tasks.size());
  if (fresh) {
    out.tasks.push_back({{m.workload, &tmpl}, 0, tmpl.Flops(m.workload), {}});
  }
  ModelTask& t = out.tasks[it->second];
  ++t.count;
  t.nodes.push_back(node.name().empty() ? absl::StrCat(node.op_type(), "@", i)
                                        : node.name());
}

// Tasks heaviest first (FLOPs x count); unsupported ops most frequent
// first.
void SortResults(ModelTasks& out) {
  std::stable_sort(out.tasks.begin(), out.tasks.end(),
                   [](const ModelTask& a, const ModelTask& b) {
                     return a.flops * a.count > b.flops * b.count;
                   });
  std::stable_sort(
      out.unsupported.begin(), out.unsupported.end(),
      [](const auto& a, const auto& b) { return a.count > b.count; });
}

}  // namespace

absl::StatusOr<ModelTasks> ImportOnnxBytes(const std::string& bytes,
                                           absl::string_view name,
                                           const InputShapes& input_shapes) {
  TUNEFLEET_ASSIGN_OR_RETURN(InferredModel inferred,
                             ReadAndInfer(bytes, name, input_shapes));
  const onnx::GraphProto& graph = inferred.model.graph();
  GraphIndex g(graph);
  ModelTasks out;
  out.nodes = graph.node_size();
  out.input_shapes = input_shapes;
  const int size = graph.node_size();
  std::vector<bool> covered(size, false);
  std::vector<NodeClass> classes(size, NodeClass::kNone);
  std::vector<std::string> op_types(size), reasons(size);
  for (int i = 0; i < size; ++i) {
    op_types[i] = inferred.folded_ops[i].empty() ? graph.node(i).op_type()
                                                 : inferred.folded_ops[i];
    if (!inferred.folded_ops[i].empty()) classes[i] = NodeClass::kFolded;
  }
  std::map<std::string, size_t> task_of;  // canonical -> index into tasks
  const MatchContext context{g, inferred.opset, covered};
  for (int i = 0; i < size; ++i) {
    const std::string& op = graph.node(i).op_type();
    if (covered[i] || classes[i] == NodeClass::kFolded || op == "Constant") {
      continue;
    }
    MatchResult r = MatchNode(context, i);
    if (const NoMatch* no = std::get_if<NoMatch>(&r)) {
      classes[i] = IsView(op) ? NodeClass::kFolded : NodeClass::kLeft;
      reasons[i] = no->reason;
      continue;
    }
    const Match& m = std::get<Match>(r);
    absl::StatusOr<const templates::KernelTemplate*> t =
        templates::FindTemplateFor(m.workload, "");
    if (!t.ok()) {
      classes[i] = NodeClass::kLeft;
      reasons[i] = std::string(t.status().message());
      continue;
    }
    for (int n : m.nodes) {
      covered[n] = true;
      classes[n] = n == i ? NodeClass::kTuned : NodeClass::kFused;
    }
    AddToTask(m, **t, graph.node(i), i, task_of, out);
  }
  std::map<std::string, UnsupportedOp> unsupported;
  for (int i = 0; i < size; ++i) {
    if (classes[i] != NodeClass::kLeft) continue;
    UnsupportedOp& u = unsupported[op_types[i]];
    u.op_type = op_types[i];
    if (u.count++ == 0) u.reason = reasons[i];
  }
  for (auto& [op, u] : unsupported) out.unsupported.push_back(u);
  out.coverage = BuildCoverage(g, classes, op_types, reasons);
  SortResults(out);
  return out;
}

absl::StatusOr<ModelTasks> ImportOnnx(const std::string& path,
                                      const InputShapes& input_shapes) {
  absl::StatusOr<std::string> bytes = base::ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  return ImportOnnxBytes(*bytes, path, input_shapes);
}

}  // namespace tunefleet::onnx_import
