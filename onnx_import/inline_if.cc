#include "onnx_import/inline_if.h"

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

}  // namespace

int InlineConstantIfs(onnx::GraphProto* graph,
                      std::vector<std::string>* folded_ops) {
  std::vector<onnx::TensorProto> owned;
  owned.reserve(graph->node_size());
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const auto& t : graph->initializer()) constants[t.name()] = &t;
  for (const auto& n : graph->node()) {
    if (std::optional<onnx::TensorProto> t = ConstantNodeValue(n)) {
      owned.push_back(*std::move(t));
    }
  }
  for (const auto& t : owned) constants[t.name()] = &t;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<std::string> ops;
  std::vector<onnx::TensorProto> initializers;
  int inlined = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto& n = graph->node(i);
    std::optional<bool> cond;
    if (n.op_type() == "If" &&
        (n.domain().empty() || n.domain() == "ai.onnx") &&
        n.input_size() >= 1) {
      cond = Truth(constants, n.input(0));
    }
    const std::string which = cond && *cond ? "then" : "else";
    const onnx::GraphProto* branch =
        cond ? Branch(n, which + "_branch") : nullptr;
    if (branch == nullptr || branch->sparse_initializer_size() > 0 ||
        branch->output_size() != n.output_size() || n.output_size() == 0) {
      *nodes.Add() = n;
      ops.push_back((*folded_ops)[i]);
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
    onnx::GraphProto copy = *branch;
    Rename(&copy, renames, true);
    for (onnx::TensorProto& t : *copy.mutable_initializer()) {
      t.set_name(renames[t.name()]);
      initializers.push_back(t);
    }
    for (const onnx::NodeProto& bn : copy.node()) {
      *nodes.Add() = bn;
      ops.push_back("");
    }
    for (const auto& [from, to] : identities) {
      onnx::NodeProto* id = nodes.Add();
      id->set_op_type("Identity");
      id->set_name(to + "/identity");
      auto it = renames.find(from);
      id->add_input(it == renames.end() ? from : it->second);
      id->add_output(to);
      ops.push_back("");
    }
    ++inlined;
  }
  if (inlined == 0) return 0;
  graph->mutable_node()->Swap(&nodes);
  for (onnx::TensorProto& t : initializers) {
    *graph->add_initializer() = std::move(t);
  }
  *folded_ops = std::move(ops);
  return inlined;
}

}  // namespace tunefleet::onnx_import
