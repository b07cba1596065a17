#include "onnx_import/inline_control.h"

#include <map>
#include <optional>
#include <set>

#include "onnx_import/graph_index.h"
#include "onnx_import/tensor_values.h"

namespace tunefleet::onnx_import {
namespace {

using Renames = std::map<std::string, std::string>;

// Renames the inputs of the nodes of `g` and of their subgraphs (names a
// subgraph reads from the scope it is in) by `renames`, and the outputs of
// `g`'s own nodes when `outputs`.
void Rename(onnx::GraphProto* g, const Renames& renames, bool outputs) {
  auto apply = [&](std::string* name) {
    auto it = renames.find(*name);
    if (it != renames.end()) *name = it->second;
  };
  for (onnx::NodeProto& n : *g->mutable_node()) {
    for (std::string& in : *n.mutable_input()) apply(&in);
    if (outputs) {
      for (std::string& out : *n.mutable_output()) apply(&out);
    }
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) Rename(a.mutable_g(), renames, false);
      for (onnx::GraphProto& sub : *a.mutable_graphs()) {
        Rename(&sub, renames, false);
      }
    }
  }
}

// The truth of constant `name`, or nullopt.
std::optional<bool> Truth(
    const std::map<std::string, const onnx::TensorProto*>& constants,
    const std::string& name) {
  auto it = constants.find(name);
  if (it == constants.end()) return std::nullopt;
  std::optional<TensorValue> v = ReadTensor(*it->second, 1);
  if (!v || v->size() != 1) return std::nullopt;
  return v->at(0) != 0;
}

// The branch graph attribute `name` of `n`, or nullptr.
const onnx::GraphProto* Branch(const onnx::NodeProto& n,
                               const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return nullptr;
}

// Constants of `graph` by name: its initializers and the values of its
// Constant nodes (kept in `owned`).
std::map<std::string, const onnx::TensorProto*> Constants(
    const onnx::GraphProto& graph, std::vector<onnx::TensorProto>* owned) {
  owned->reserve(graph.node_size());
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : graph.initializer()) constants[t.name()] = &t;
  for (const auto& n : graph.node()) {
    if (std::optional<onnx::TensorProto> t = ConstantNodeValue(n)) {
      owned->push_back(*std::move(t));
    }
  }
  for (const auto& t : *owned) constants[t.name()] = &t;
  return constants;
}

// Whether the Loop body `body` passes its condition through: its condition
// output is its condition input, an Identity of it, or a constant true.
bool PassesConditionThrough(const onnx::GraphProto& body) {
  const std::string& in = body.input(1).name();
  const std::string& out = body.output(0).name();
  if (out == in) return true;
  std::vector<onnx::TensorProto> owned;
  const auto constants = Constants(body, &owned);
  if (Truth(constants, out) == true) return true;
  for (const auto& n : body.node()) {
    if (n.output_size() > 0 && n.output(0) == out) {
      return n.op_type() == "Identity" && n.input_size() == 1 &&
             n.input(0) == in;
    }
  }
  return false;
}

onnx::TensorProto ScalarTensor(const std::string& name, int32_t type,
                               int64_t value) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == onnx::TensorProto::INT64) {
    t.add_int64_data(value);
  } else {
    t.add_int32_data(static_cast<int32_t>(value));
  }
  return t;
}

// One pass over a graph that replaces some of its nodes: the graph's
// constants it reads (Constants), and what it writes: the new node list,
// the folded op of each new node ("" for none) and the initializers the new
// nodes read.
struct NodeRewrite {
  explicit NodeRewrite(const onnx::GraphProto& graph)
      : constants(Constants(graph, &owned)) {}
  NodeRewrite(const NodeRewrite&) = delete;
  NodeRewrite& operator=(const NodeRewrite&) = delete;

  // When `changed` (the nodes replaced) is not 0: puts the new nodes and
  // initializers into `graph` and the ops into `folded_ops`. Returns
  // `changed`.
  int Commit(int changed, onnx::GraphProto* graph,
             std::vector<std::string>* folded_ops) {
    if (changed == 0) return 0;
    graph->mutable_node()->Swap(&nodes);
    for (onnx::TensorProto& t : initializers) {
      *graph->add_initializer() = std::move(t);
    }
    *folded_ops = std::move(ops);
    return changed;
  }

  // Adds the nodes (folding no op) and initializers of a copy of
  // `subgraph` (a Loop body or an If branch) renamed by `renames`
  // (Rename, outputs too); an initializer takes renames[its name], which
  // adds the names not there yet.
  void AddRenamedCopy(const onnx::GraphProto& subgraph, Renames& renames) {
    onnx::GraphProto copy = subgraph;
    Rename(&copy, renames, true);
    for (onnx::TensorProto& t : *copy.mutable_initializer()) {
      t.set_name(renames[t.name()]);
      initializers.push_back(t);
    }
    for (const onnx::NodeProto& bn : copy.node()) {
      *nodes.Add() = bn;
      ops.push_back("");
    }
  }

  std::vector<onnx::TensorProto> owned;  // Constant nodes' values
  const std::map<std::string, const onnx::TensorProto*> constants;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<std::string> ops;
  std::vector<onnx::TensorProto> initializers;
};

}  // namespace

int UnrollConstantLoops(onnx::GraphProto* graph, int64_t opset,
                        std::vector<std::string>* folded_ops) {
  NodeRewrite r(*graph);
  int unrolled = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto& n = graph->node(i);
    const onnx::GraphProto* body = nullptr;
    std::optional<int64_t> trips;
    if (n.op_type() == "Loop" &&
        (n.domain().empty() || n.domain() == "ai.onnx") &&
        n.input_size() >= 2 && !n.input(0).empty()) {
      body = Branch(n, "body");
      auto m = r.constants.find(n.input(0));
      if (m != r.constants.end()) {
        if (std::optional<TensorValue> v = ReadTensor(*m->second, 1);
            v && v->size() == 1 && !v->is_float()) {
          trips = v->ints[0];
        }
      }
    }
    const int carried = n.input_size() - 2;
    const bool cond_true =
        n.input_size() >= 2 &&
        (n.input(1).empty() || Truth(r.constants, n.input(1)) == true);
    const bool ok = body != nullptr && trips && *trips >= 1 &&
                    *trips <= kMaxUnrolledIterations && cond_true &&
                    carried >= 0 && body->input_size() == 2 + carried &&
                    body->output_size() >= 1 + carried &&
                    n.output_size() == body->output_size() - 1 &&
                    body->sparse_initializer_size() == 0 &&
                    PassesConditionThrough(*body);
    if (!ok) {
      *r.nodes.Add() = n;
      r.ops.push_back((*folded_ops)[i]);
      continue;
    }
    const std::string base =
        (n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : n.name()) +
        "/";
    std::vector<std::string> values(n.input().begin() + 2, n.input().end());
    const int scans = body->output_size() - 1 - carried;
    std::vector<std::vector<std::string>> scan_parts(scans);
    for (int64_t k = 0; k < *trips; ++k) {
      const std::string prefix = base + "iter" + std::to_string(k) + "/";
      Renames renames;
      for (const auto& bn : body->node()) {
        for (const std::string& out : bn.output()) {
          if (!out.empty()) renames[out] = prefix + out;
        }
      }
      for (const auto& t : body->initializer()) {
        renames[t.name()] = prefix + t.name();
      }
      renames[body->input(0).name()] = prefix + "iteration";
      renames[body->input(1).name()] = prefix + "condition";
      r.initializers.push_back(
          ScalarTensor(prefix + "iteration", onnx::TensorProto::INT64, k));
      r.initializers.push_back(
          ScalarTensor(prefix + "condition", onnx::TensorProto::BOOL, 1));
      for (int j = 0; j < carried; ++j) {
        renames[body->input(2 + j).name()] = values[j];
      }
      r.AddRenamedCopy(*body, renames);
      auto renamed = [&](const std::string& name) {
        auto it = renames.find(name);
        return it == renames.end() ? name : it->second;
      };
      for (int j = 0; j < carried; ++j) {
        values[j] = renamed(body->output(1 + j).name());
      }
      for (int s = 0; s < scans; ++s) {
        const std::string part = renamed(body->output(1 + carried + s).name());
        onnx::NodeProto* u = r.nodes.Add();
        u->set_op_type("Unsqueeze");
        u->set_name(prefix + "scan" + std::to_string(s));
        u->add_input(part);
        u->add_output(prefix + "scan" + std::to_string(s));
        if (opset >= 13) {
          u->add_input(base + "axis0");
        } else {
          onnx::AttributeProto* a = u->add_attribute();
          a->set_name("axes");
          a->set_type(onnx::AttributeProto::INTS);
          a->add_ints(0);
        }
        r.ops.push_back("");
        scan_parts[s].push_back(u->output(0));
      }
    }
    if (scans > 0 && opset >= 13) {
      onnx::TensorProto axis;
      axis.set_name(base + "axis0");
      axis.set_data_type(onnx::TensorProto::INT64);
      axis.add_dims(1);
      axis.add_int64_data(0);
      r.initializers.push_back(axis);
    }
    for (int j = 0; j < carried; ++j) {
      if (n.output(j).empty()) continue;
      onnx::NodeProto* id = r.nodes.Add();
      id->set_op_type("Identity");
      id->set_name(n.output(j) + "/identity");
      id->add_input(values[j]);
      id->add_output(n.output(j));
      r.ops.push_back("");
    }
    for (int s = 0; s < scans; ++s) {
      if (n.output(carried + s).empty()) continue;
      onnx::NodeProto* cat = r.nodes.Add();
      cat->set_op_type("Concat");
      cat->set_name(n.output(carried + s) + "/concat");
      for (const std::string& part : scan_parts[s]) cat->add_input(part);
      cat->add_output(n.output(carried + s));
      onnx::AttributeProto* a = cat->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(0);
      r.ops.push_back("");
    }
    ++unrolled;
  }
  return r.Commit(unrolled, graph, folded_ops);
}

int InlineConstantIfs(onnx::GraphProto* graph,
                      std::vector<std::string>* folded_ops) {
  NodeRewrite r(*graph);
  int inlined = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto& n = graph->node(i);
    std::optional<bool> cond;
    if (n.op_type() == "If" &&
        (n.domain().empty() || n.domain() == "ai.onnx") &&
        n.input_size() >= 1) {
      cond = Truth(r.constants, n.input(0));
    }
    const std::string which = cond && *cond ? "then" : "else";
    const onnx::GraphProto* branch =
        cond ? Branch(n, which + "_branch") : nullptr;
    if (branch == nullptr || branch->sparse_initializer_size() > 0 ||
        branch->output_size() != n.output_size() || n.output_size() == 0) {
      *r.nodes.Add() = n;
      r.ops.push_back((*folded_ops)[i]);
      continue;
    }
    const std::string prefix =
        (n.output(0).empty() ? n.name() : n.output(0)) + "/" + which + "/";
    Renames renames;
    std::set<std::string> produced;
    for (const auto& bn : branch->node()) {
      for (const std::string& out : bn.output()) {
        if (out.empty()) continue;
        renames[out] = prefix + out;
        produced.insert(out);
      }
    }
    for (const auto& t : branch->initializer())
      renames[t.name()] = prefix + t.name();
    // Outputs produced by a branch node take the If's output names.
    std::vector<std::pair<std::string, std::string>> identities;
    std::set<std::string> taken;
    for (int k = 0; k < n.output_size(); ++k) {
      const std::string& from = branch->output(k).name();
      const std::string& to = n.output(k);
      if (to.empty()) continue;
      if (produced.count(from) && taken.insert(from).second) {
        renames[from] = to;
      } else {
        identities.emplace_back(from, to);
      }
    }
    r.AddRenamedCopy(*branch, renames);
    for (const auto& [from, to] : identities) {
      onnx::NodeProto* id = r.nodes.Add();
      id->set_op_type("Identity");
      id->set_name(to + "/identity");
      auto it = renames.find(from);
      id->add_input(it == renames.end() ? from : it->second);
      id->add_output(to);
      r.ops.push_back("");
    }
    ++inlined;
  }
  return r.Commit(inlined, graph, folded_ops);
}

}  // namespace tunefleet::onnx_import
