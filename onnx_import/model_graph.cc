// ImportModelGraph: read and fold the model (model_reader.h), compute at
// import what only constants feed, then lower every live node in order:
// views to aliases, the matches of match.h to their bound steps, the rest
// through lowering.h; a node nothing runs is an error naming it.
#include "onnx_import/model_graph.h"

#include <algorithm>
#include <set>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels_templates/registry.h"
#include "onnx_import/coverage.h"
#include "onnx_import/graph_index.h"
#include "onnx_import/inline_control.h"
#include "onnx_import/lowering.h"
#include "onnx_import/match.h"
#include "onnx_import/model_reader.h"

namespace tunefleet::onnx_import {
namespace {

std::string Label(const onnx::NodeProto& n, int i) {
  return n.name().empty() ? absl::StrCat(n.op_type(), "@", i) : n.name();
}

// "FLOAT", "INT64", ... for an ONNX data type number.
std::string TypeName(int64_t type) {
  if (!onnx::TensorProto_DataType_IsValid(static_cast<int>(type))) {
    return absl::StrCat("data type ", type);
  }
  return onnx::TensorProto_DataType_Name(
      static_cast<onnx::TensorProto_DataType>(type));
}

// "node 'conv_3' (Conv): <reason>".
absl::Status NodeError(const onnx::NodeProto& n, int i,
                       absl::string_view reason) {
  return absl::FailedPreconditionError(
      absl::StrCat("node '", Label(n, i), "' (", n.op_type(), "): ", reason));
}

// Whether any output of node `n` is used (by a live node or as a graph
// output): `live` holds the live tensors.
bool AnyOutputLive(const onnx::NodeProto& n,
                   const std::set<std::string>& live) {
  for (const std::string& out : n.output()) {
    if (!out.empty() && live.count(out)) return true;
  }
  return false;
}

// The nodes whose outputs a graph output depends on (the others are dead
// code: they leave nothing to run).
std::vector<bool> LiveNodes(const onnx::GraphProto& graph) {
  std::set<std::string> live;
  for (const auto& out : graph.output()) live.insert(out.name());
  std::vector<bool> result(graph.node_size(), false);
  for (int i = graph.node_size(); i-- > 0;) {
    const onnx::NodeProto& n = graph.node(i);
    if (!AnyOutputLive(n, live)) continue;
    result[i] = true;
    for (const std::string& in : n.input()) live.insert(in);
    // Names a subgraph (If, Loop) reads from the outer scope.
    for (const auto& a : n.attribute()) {
      std::vector<const onnx::GraphProto*> subs = {&a.g()};
      for (const auto& sub : a.graphs()) subs.push_back(&sub);
      for (const onnx::GraphProto* sub : subs) {
        for (const auto& sn : sub->node()) {
          for (const std::string& in : sn.input()) live.insert(in);
        }
      }
    }
  }
  return result;
}

// A node whose output is its input's elements in the same order (the
// output aliases the input), or whose first output is: Dropout at
// inference, Cast between fp32 tensors, a one-input Sum / Max / Min /
// Mean.
bool IsAliasNode(const GraphIndex& g, const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (IsView(op) || op == "Dropout") return true;
  if (op == "Cast") {
    return IntAttr(n, "to", 0) == onnx::TensorProto::FLOAT &&
           g.ElemType(Input(n, 0)) == onnx::TensorProto::FLOAT;
  }
  return (op == "Sum" || op == "Max" || op == "Min" || op == "Mean") &&
         n.input_size() == 1;
}

// The values of a node all of whose inputs are constants, computed at
// import when they are too large for constant folding (a view, Transpose
// or fp32 Cast of a weight), or nullopt.
std::optional<std::vector<float>> ImportTimeValue(const GraphIndex& g,
                                                  const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (n.input_size() == 0 || !g.IsConstant(n.input(0))) return std::nullopt;
  const bool view =
      IsView(op) || op == "Dropout" ||
      (op == "Cast" && IntAttr(n, "to", 0) == onnx::TensorProto::FLOAT);
  if (!view && op != "Transpose") return std::nullopt;
  std::optional<std::vector<float>> x = g.Floats(n.input(0));
  if (!x || (view && op != "Cast" && !g.Shape(Output(n, 0)))) {
    return std::nullopt;
  }
  if (view) return x;
  std::optional<Dims> d = g.ConstantDims(n.input(0));
  if (!d) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(d->size());
  const std::optional<Dims> found = TransposePerm(n, rank);
  if (!found) return std::nullopt;
  const Dims& perm = *found;
  Dims od;
  for (int64_t p : perm) od.push_back((*d)[p]);
  const Dims is = RowMajorStrides(*d), os = RowMajorStrides(od);
  std::vector<float> out(x->size());
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    int64_t from = 0;
    for (int64_t k = 0; k < rank; ++k)
      from += (o / os[k]) % od[k] * is[perm[k]];
    out[o] = (*x)[from];
  }
  return out;
}

// Builds the graph: one pass over the nodes.
class Lowerer {
 public:
  Lowerer(const InferredModel& model, GraphIndex& g)
      : model_(model),
        graph_(model.model.graph()),
        g_(g),
        writer_(g),
        size_(graph_.node_size()),
        covered_(size_, false),
        classes_(size_, NodeClass::kNone),
        reasons_(size_) {}

  absl::StatusOr<ModelGraph> Run() {
    const std::vector<bool> live = LiveNodes(graph_);
    for (int i = 0; i < size_; ++i) {
      const onnx::NodeProto& n = graph_.node(i);
      if (!model_.folded_ops[i].empty()) {
        classes_[i] = NodeClass::kFolded;
      } else if (n.op_type() != "Constant" &&
                 (!live[i] || ComputeAtImport(i))) {
        classes_[i] = NodeClass::kFolded;
      }
    }
    for (int i = 0; i < size_; ++i) {
      const onnx::NodeProto& n = graph_.node(i);
      if (covered_[i] || classes_[i] != NodeClass::kNone ||
          n.op_type() == "Constant") {
        continue;
      }
      absl::Status s = LowerOne(i);
      if (!s.ok()) return NodeError(n, i, s.message());
    }
    return Finish();
  }

 private:
  // Computes node `i` at import when only constants feed it (too large
  // for constant folding); true when it did.
  bool ComputeAtImport(int i) {
    const onnx::NodeProto& n = graph_.node(i);
    if (n.output_size() < 1 || Output(n, 0).empty()) return false;
    if (n.op_type() == "Dropout" && n.output_size() > 1 &&
        !Output(n, 1).empty()) {
      return false;
    }
    std::optional<std::vector<float>> v = ImportTimeValue(g_, n);
    if (!v) return false;
    std::optional<Dims> dims = g_.Shape(Output(n, 0));
    if (!dims) dims = g_.ConstantDims(n.input(0));
    if (!dims || ElementsOf(*dims) != static_cast<int64_t>(v->size())) {
      return false;
    }
    g_.AddConstant(Output(n, 0), *dims, *v);
    return true;
  }

  std::string Root(const std::string& name) const {
    auto it = alias_.find(name);
    return it == alias_.end() ? name : it->second;
  }

  // Checks that the runtime tensors node `n` reads and writes are fp32
  // (tensors hold fp32 only).
  absl::Status CheckFp32(const onnx::NodeProto& n) const {
    for (const auto* names : {&n.input(), &n.output()}) {
      for (const std::string& t : *names) {
        if (t.empty() || g_.IsConstant(t)) continue;
        const int32_t type = g_.ElemType(t);
        if (type != 0 && type != onnx::TensorProto::FLOAT) {
          return absl::FailedPreconditionError(absl::StrCat(
              "tensor '", t, "' is ", TypeName(type),
              " at run time (the runtime holds fp32 tensors only)"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status LowerOne(int i) {
    const onnx::NodeProto& n = graph_.node(i);
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      return absl::FailedPreconditionError("an op of domain " + n.domain() +
                                           " (only ai.onnx runs)");
    }
    if (op == "If") {
      return absl::FailedPreconditionError(
          "its condition is not constant at the fixed input shape");
    }
    if (op == "Loop") {
      return absl::FailedPreconditionError(absl::StrCat(
          "loops do not run unless unrolled: a constant trip count of 1 to ",
          kMaxUnrolledIterations,
          ", a condition that is constant true and stays true"));
    }
    if (op == "Scan") return absl::FailedPreconditionError("Scan does not run");
    if (IsAliasNode(g_, n)) {
      if (op == "Dropout" && n.output_size() > 1 && !Output(n, 1).empty() &&
          (!g_.Consumers(Output(n, 1)).empty() ||
           g_.IsGraphOutput(Output(n, 1)))) {
        return absl::FailedPreconditionError("its mask is used");
      }
      if (g_.IsConstant(Input(n, 0))) {
        return absl::FailedPreconditionError(
            "a view of a constant whose values cannot be computed at import");
      }
      alias_[Output(n, 0)] = Root(Input(n, 0));
      classes_[i] = NodeClass::kFolded;
      return absl::OkStatus();
    }
    if (op == "Cast") {
      return absl::FailedPreconditionError(absl::StrCat(
          "a Cast to ", TypeName(IntAttr(n, "to", 0)),
          " at run time (only fp32 to fp32 runs; others must fold)"));
    }
    TUNEFLEET_RETURN_IF_ERROR(CheckFp32(n));
    const MatchContext context{g_, model_.opset, covered_, /*bind=*/true};
    MatchResult r = MatchNode(context, i);
    if (Match* m = std::get_if<Match>(&r)) return WriteMatch(i, *m);
    const std::string reason = std::get<NoMatch>(r).reason;
    writer_.Begin(i, {i}, Label(n, i));
    LowerContext lower{g_, model_.opset, writer_};
    absl::Status s = LowerNode(lower, i);
    if (absl::IsUnimplemented(s)) {
      return absl::FailedPreconditionError(reason);
    }
    if (!s.ok()) return s;
    covered_[i] = true;
    classes_[i] = NodeClass::kTuned;
    return absl::OkStatus();
  }

  absl::Status WriteMatch(int i, Match& m) {
    const onnx::NodeProto& n = graph_.node(i);
    if (!m.error.empty()) return absl::FailedPreconditionError(m.error);
    writer_.Begin(*std::max_element(m.nodes.begin(), m.nodes.end()), m.nodes,
                  Label(n, i));
    if (m.pad) {
      absl::StatusOr<std::string> padded =
          WritePrePad(writer_, m.pad->input, m.pad->dims, m.pad->top,
                      m.pad->left, m.pad->bottom, m.pad->right, m.pad->value);
      if (!padded.ok()) return padded.status();
      m.buffers[0] = BindTensor(*padded);
    }
    TUNEFLEET_RETURN_IF_ERROR(
        writer_.Add(m.workload, std::move(m.buffers), std::move(m.floats)));
    for (int k : m.nodes) {
      covered_[k] = true;
      classes_[k] = k == i ? NodeClass::kTuned : NodeClass::kFused;
    }
    return absl::OkStatus();
  }

  // Adds tensor `name` (and the root it aliases) to `out`.
  absl::Status AddTensor(const std::string& name, ModelGraph& out) {
    if (out.tensors.count(name)) return absl::OkStatus();
    ModelTensor t;
    t.name = name;
    absl::StatusOr<Dims> dims = writer_.ShapeOf(name);
    if (!dims.ok()) return dims.status();
    t.dims = *dims;
    const std::string root = Root(name);
    if (root != name) {
      t.alias_of = root;
      TUNEFLEET_RETURN_IF_ERROR(AddTensor(root, out));
      if (ElementsOf(t.dims) != ElementsOf(out.tensors[root].dims)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "view '", name, "' has another element count than '", root, "'"));
      }
    }
    out.tensors[name] = std::move(t);
    return absl::OkStatus();
  }

  absl::StatusOr<ModelGraph> Finish() {
    ModelGraph out;
    out.steps = writer_.Steps();
    std::set<std::string> initializers;
    for (const auto& t : graph_.initializer()) initializers.insert(t.name());
    std::set<std::string> written;
    for (const auto& in : graph_.input()) {
      if (initializers.count(in.name())) continue;
      if (g_.ElemType(in.name()) != onnx::TensorProto::FLOAT) {
        return absl::FailedPreconditionError(absl::StrCat(
            "input '", in.name(), "' is ", TypeName(g_.ElemType(in.name())),
            " (only fp32 inputs run)"));
      }
      out.inputs.push_back(in.name());
      written.insert(in.name());
      TUNEFLEET_RETURN_IF_ERROR(AddTensor(in.name(), out));
    }
    for (ModelStep& step : out.steps) {
      const std::string& op = step.workload.op();
      absl::StatusOr<const templates::KernelTemplate*> t =
          templates::FindTemplateFor(step.workload, "");
      const int i = step.nodes.empty() ? 0 : step.nodes[0];
      if (!t.ok()) {
        return NodeError(graph_.node(i), i, t.status().message());
      }
      const int output = StepWriter::OutputBuffer(op);
      for (size_t b = 0; b < step.buffers.size(); ++b) {
        const std::string& name = step.buffers[b].tensor;
        if (name.empty()) continue;
        TUNEFLEET_RETURN_IF_ERROR(AddTensor(name, out));
        if (static_cast<int>(b) == output) continue;
        if (!written.count(Root(name))) {
          return NodeError(
              graph_.node(i), i,
              absl::StrCat("reads tensor '", name,
                           "' before a step writes it (the graph's nodes "
                           "are not in topological order)"));
        }
      }
      if (output < static_cast<int>(step.buffers.size())) {
        written.insert(Root(step.buffers[output].tensor));
      }
    }
    for (const auto& o : graph_.output()) {
      const std::string& name = o.name();
      out.outputs.push_back(name);
      if (g_.IsConstant(name)) {
        std::optional<std::vector<float>> v = g_.Floats(name);
        if (!v) {
          return absl::FailedPreconditionError(absl::StrCat(
              "output '", name, "' is a constant that cannot be read"));
        }
        out.constant_outputs[name] = *std::move(v);
      } else if (!written.count(Root(name))) {
        return absl::FailedPreconditionError(
            absl::StrCat("no step computes output '", name, "'"));
      }
      TUNEFLEET_RETURN_IF_ERROR(AddTensor(name, out));
    }
    out.tasks = Tasks(out.steps);
    return out;
  }

  // The distinct workloads of the steps as tasks, and the coverage of the
  // nodes' classes.
  ModelTasks Tasks(const std::vector<ModelStep>& steps) const {
    ModelTasks tasks;
    tasks.nodes = size_;
    std::map<std::string, size_t> task_of;
    for (const ModelStep& step : steps) {
      auto [it, fresh] =
          task_of.emplace(step.workload.Canonical(), tasks.tasks.size());
      if (fresh) {
        absl::StatusOr<const templates::KernelTemplate*> t =
            templates::FindTemplateFor(step.workload, "");
        tasks.tasks.push_back({{step.workload, t.ok() ? *t : nullptr},
                               0,
                               t.ok() ? (*t)->Flops(step.workload) : 0,
                               {}});
      }
      ModelTask& task = tasks.tasks[it->second];
      ++task.count;
      task.nodes.push_back(step.label);
    }
    std::stable_sort(tasks.tasks.begin(), tasks.tasks.end(),
                     [](const ModelTask& a, const ModelTask& b) {
                       return a.flops * a.count > b.flops * b.count;
                     });
    std::vector<std::string> op_types(size_);
    for (int i = 0; i < size_; ++i) {
      op_types[i] = model_.folded_ops[i].empty() ? graph_.node(i).op_type()
                                                 : model_.folded_ops[i];
    }
    tasks.coverage = BuildCoverage(g_, classes_, op_types, reasons_);
    return tasks;
  }

  const InferredModel& model_;
  const onnx::GraphProto& graph_;
  GraphIndex& g_;
  StepWriter writer_;
  const int size_;
  std::vector<bool> covered_;
  std::vector<NodeClass> classes_;
  std::vector<std::string> reasons_;
  std::map<std::string, std::string> alias_;  // view -> root tensor
};

}  // namespace

absl::StatusOr<ModelGraph> ImportModelGraph(const std::string& bytes,
                                            absl::string_view name,
                                            const InputShapes& input_shapes) {
  TUNEFLEET_ASSIGN_OR_RETURN(InferredModel inferred,
                             ReadAndInfer(bytes, name, input_shapes));
  GraphIndex g(inferred.model.graph());
  Lowerer lowerer(inferred, g);
  TUNEFLEET_ASSIGN_OR_RETURN(ModelGraph graph, lowerer.Run());
  graph.tasks.input_shapes = input_shapes;
  return graph;
}

}  // namespace tunefleet::onnx_import
