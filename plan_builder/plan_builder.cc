#include "plan_builder/plan_builder.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/hash.h"
#include "base/status_macros.h"
#include "emitter/choice.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "model_runtime/memory_plan.h"

namespace tunefleet::plan_builder {

// measure/image_pack.cl, embedded at build time.
absl::string_view ImagePackKernels();

namespace {

using tunefleet_tuned::Plan;
using tunefleet_tuned::PlanArg;
using tunefleet_tuned::PlanCommand;
using tunefleet_tuned::PlanConstant;
using tunefleet_tuned::PlanStep;
using tunefleet_tuned::PlanTensor;

uint64_t Elements(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

// Plan-wide tables while steps are added.
class Builder {
 public:
  explicit Builder(Plan& plan) : plan_(plan) {}

  int32_t AddSource(absl::string_view source) {
    auto [it, fresh] = sources_.emplace(
        std::string(source), static_cast<int32_t>(plan_.sources.size()));
    if (fresh) plan_.sources.push_back(std::string(source));
    return it->second;
  }

  // A constant of `values` (deduplicated by content).
  int32_t AddConstant(const std::vector<float>& values) {
    std::string bytes(values.size() * sizeof(float), '\0');
    if (!values.empty()) {
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    auto it = constants_.find(bytes);
    if (it != constants_.end()) return it->second;
    PlanConstant c;
    c.elements = values.size();
    c.weights_offset = plan_.weights.size();
    plan_.weights += bytes;
    const auto index = static_cast<int32_t>(plan_.constants.size());
    plan_.constants.push_back(c);
    constants_.emplace(std::move(bytes), index);
    return index;
  }

  // Constant `c` as an image of `rows` rows of `row_elements` elements:
  // RGBA fp32 texels, ceil(row_elements / 4) per row, 0 past a row's end.
  int32_t AddImageConstant(int32_t c, uint64_t rows, uint64_t row_elements) {
    const auto key = std::make_tuple(c, rows, row_elements);
    auto it = images_.find(key);
    if (it != images_.end()) return it->second;
    const PlanConstant source = plan_.constants[c];
    const uint64_t width = (row_elements + 3) / 4;
    std::vector<float> texels(rows * width * 4, 0.0f);
    const char* data = plan_.weights.data() + source.weights_offset;
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t e = 0; e < row_elements; ++e) {
        const uint64_t at = r * row_elements + e;
        if (at >= source.elements) break;
        std::memcpy(&texels[r * width * 4 + e], data + at * sizeof(float),
                    sizeof(float));
      }
    }
    PlanConstant image;
    image.elements = texels.size();
    image.weights_offset = plan_.weights.size();
    image.image_rows = rows;
    image.image_width = width;
    plan_.weights.append(reinterpret_cast<const char*>(texels.data()),
                         texels.size() * sizeof(float));
    const auto index = static_cast<int32_t>(plan_.constants.size());
    plan_.constants.push_back(image);
    images_.emplace(key, index);
    return index;
  }

  // Scratch slot `slot` of at least `bytes`.
  void NeedScratch(size_t slot, uint64_t bytes) {
    auto& slots = plan_.memory.scratch_bytes;
    if (slots.size() <= slot) slots.resize(slot + 1, 0);
    slots[slot] = std::max(slots[slot], bytes);
  }

 private:
  Plan& plan_;
  std::map<std::string, int32_t> sources_;
  std::map<std::string, int32_t> constants_;
  std::map<std::tuple<int32_t, uint64_t, uint64_t>, int32_t> images_;
};

// A buffer of a step as bound: a tensor or a constant, or nothing (a
// trailing buffer the workload does not read).
struct Bound {
  int32_t tensor = -1;
  int32_t constant = -1;
};

std::string StepName(size_t index, const onnx_import::ModelStep& step) {
  return absl::StrCat("step ", index, " ('", step.label, "', ",
                      step.workload.Canonical(), ")");
}

// The launch a step runs and what the plan says of it.
struct StepEntry {
  const templates::KernelTemplate* tmpl = nullptr;
  templates::LaunchDesc launch;
  std::string source;  // the kernel's source text
  std::string entry;   // "tuned", "reference", "library"
  std::string config;
  double estimate_ns = -1;
  bool no_record = false;
};

absl::StatusOr<StepEntry> ChooseStep(size_t index,
                                     const onnx_import::ModelStep& step,
                                     const emitter::DeviceChoices* choices,
                                     data_source::RecordReader& records,
                                     const PlanOptions& options) {
  const std::string canonical = step.workload.Canonical();
  const emitter::EntryChoice* choice = nullptr;
  if (choices != nullptr) {
    auto it = choices->entries.find(canonical);
    if (it != choices->entries.end()) choice = &it->second;
  }
  StepEntry e;
  if (choice != nullptr && options.tuned && !choice->runs_reference()) {
    e.tmpl = choice->tmpl;
    e.launch = choice->tmpl->Launch(choice->config, choice->workload);
    e.source = choice->source;
    e.entry = e.launch.library.has_value() ? "library" : "tuned";
    e.config = choice->tmpl->ConfigString(choice->config);
    e.estimate_ns = choice->record.time_ns();
    return e;
  }
  if (choice != nullptr) {
    e.tmpl = choice->tmpl;
  } else {
    absl::StatusOr<const templates::KernelTemplate*> tmpl =
        templates::FindTemplateFor(step.workload, "");
    if (!tmpl.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          StepName(index, step),
          ": no template of this build runs it: ", tmpl.status().message()));
    }
    e.tmpl = *tmpl;
    e.no_record = true;
  }
  e.launch = e.tmpl->ReferenceLaunch(step.workload);
  e.source = std::string(e.launch.source);
  e.entry = "reference";
  e.config = "reference";
  if (choice != nullptr && choice->runs_reference()) {
    e.estimate_ns = *choice->reference_ns;
  } else if (choice != nullptr || !options.tuned) {
    // The naive plan's estimate: the reference time measured for the
    // workload, if any.
    absl::StatusOr<std::optional<double>> reference = records.ReferenceTime(
        options.device_key, canonical, std::string(e.tmpl->name()));
    if (reference.ok() && reference->has_value()) e.estimate_ns = **reference;
  }
  return e;
}

}  // namespace

std::string Sha256Hex(absl::string_view bytes) {
  return absl::BytesToHexString(base::Sha256(bytes));
}

absl::StatusOr<Plan> BuildPlan(const onnx_import::ModelGraph& graph,
                               data_source::RecordReader& records,
                               const PlanOptions& options, PlanReport* report) {
  if (options.device_key.empty()) {
    return absl::InvalidArgumentError("a plan needs a device key");
  }
  if (options.model_sha256.size() != 64) {
    return absl::InvalidArgumentError(
        "a plan needs the model's SHA-256 (64 hex digits)");
  }
  PlanReport local_report;
  PlanReport& rep = report != nullptr ? *report : local_report;
  rep = PlanReport();

  Plan plan;
  plan.header.model_name = options.model_name;
  plan.header.model_sha256 = options.model_sha256;
  plan.header.device_key = options.device_key;
  plan.header.device_name = options.device_name;
  plan.header.device_vendor = options.device_vendor;
  for (const auto& [name, dims] : options.input_shapes) {
    plan.header.input_shapes.emplace_back(name, dims);
  }

  // The records' choices; a key the records never saw runs naive kernels.
  std::optional<emitter::DeviceChoices> choices;
  {
    absl::StatusOr<emitter::DeviceChoices> chosen = emitter::ChooseEntries(
        records, options.device_key, options.include_library);
    if (chosen.ok()) {
      choices = *std::move(chosen);
      if (!choices->device.device_name().empty()) {
        plan.header.device_name = choices->device.device_name();
        plan.header.device_vendor = choices->device.vendor();
      }
      rep.skipped = choices->skipped;
    } else if (!absl::IsNotFound(chosen.status())) {
      return chosen.status();
    }
  }

  Builder b(plan);
  // Tensors, by name; aliases point at their roots.
  std::map<std::string, int32_t> index;
  for (const auto& [name, t] : graph.tensors) {
    index[name] = static_cast<int32_t>(plan.tensors.size());
    PlanTensor x;
    x.name = name;
    x.dims = t.dims;
    x.elements = Elements(t.dims);
    plan.tensors.push_back(std::move(x));
  }
  for (const auto& [name, t] : graph.tensors) {
    if (t.alias_of.empty()) continue;
    auto root = index.find(t.alias_of);
    if (root == index.end() || !graph.tensors.at(t.alias_of).alias_of.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("tensor '", name, "' is a view of '", t.alias_of,
                       "', which is not a tensor of the graph"));
    }
    PlanTensor& x = plan.tensors[index[name]];
    if (x.elements != plan.tensors[root->second].elements) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tensor '", name, "' (", x.elements, " elements) is a view of '",
          t.alias_of, "' (", plan.tensors[root->second].elements, ")"));
    }
    x.alias_of = root->second;
  }
  auto tensor_of = [&](const std::string& name) -> int32_t {
    auto it = index.find(name);
    return it == index.end() ? -1 : it->second;
  };
  for (const std::string& name : graph.inputs) {
    const int32_t t = tensor_of(name);
    if (t < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("graph input '", name, "' is not a tensor"));
    }
    plan.tensors[t].role = PlanTensor::kInput;
    plan.inputs.push_back(t);
  }
  for (const std::string& name : graph.outputs) {
    int32_t t = tensor_of(name);
    auto constant = graph.constant_outputs.find(name);
    if (t < 0 && constant != graph.constant_outputs.end()) {
      // A constant output the graph lists without a tensor: its values.
      t = static_cast<int32_t>(plan.tensors.size());
      PlanTensor x;
      x.name = name;
      x.dims = {static_cast<int64_t>(constant->second.size())};
      x.elements = constant->second.size();
      plan.tensors.push_back(std::move(x));
      index[name] = t;
    }
    if (t < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("graph output '", name, "' is not a tensor"));
    }
    PlanTensor& x = plan.tensors[t];
    x.role = x.role == PlanTensor::kInput ? PlanTensor::kInputOutput
                                          : PlanTensor::kOutput;
    if (constant != graph.constant_outputs.end()) {
      if (constant->second.size() != x.elements) {
        return absl::FailedPreconditionError(absl::StrCat(
            "constant output '", name, "' has ", constant->second.size(),
            " values for ", x.elements, " elements"));
      }
      x.alias_of = -1;
      x.constant = b.AddConstant(constant->second);
    }
    plan.outputs.push_back(t);
  }

  // Steps.
  std::vector<int32_t> first(plan.tensors.size(), INT_MAX);
  std::vector<int32_t> last(plan.tensors.size(), INT_MIN);
  auto root_of = [&](int32_t t) {
    return plan.tensors[t].alias_of >= 0 ? plan.tensors[t].alias_of : t;
  };
  auto touch = [&](int32_t t, int32_t step) {
    const int32_t r = root_of(t);
    first[r] = std::min(first[r], step);
    last[r] = std::max(last[r], step);
  };
  bool needs_pack = false;
  for (size_t s = 0; s < graph.steps.size(); ++s) {
    const onnx_import::ModelStep& step = graph.steps[s];
    const std::string name = StepName(s, step);
    TUNEFLEET_ASSIGN_OR_RETURN(
        StepEntry entry,
        ChooseStep(s, step, choices ? &*choices : nullptr, records, options));
    const templates::KernelTemplate& tmpl = *entry.tmpl;

    // The template's buffers in the caller's order, and its scratch.
    std::vector<templates::BufferDesc> order;
    std::map<std::string, std::pair<size_t, uint64_t>> scratch;  // slot, bytes
    for (const templates::BufferDesc& d : tmpl.Buffers(step.workload)) {
      if (d.zero_fill) {
        const size_t slot = scratch.size();
        scratch[d.name] = {slot, d.elements * templates::ElementBytes(d.dtype)};
      } else {
        order.push_back(d);
      }
    }
    if (step.buffers.size() > order.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, ": ", step.buffers.size(), " buffers bound, ",
                       tmpl.name(), " takes ", order.size()));
    }
    PlanStep p;
    p.label = step.label;
    p.workload = step.workload.Canonical();
    p.entry = entry.entry;
    p.template_name = std::string(tmpl.name());
    p.config = entry.config;
    p.estimate_ns = entry.estimate_ns;
    p.floats = step.floats;
    std::map<std::string, Bound> bound;
    for (size_t i = 0; i < order.size(); ++i) {
      const templates::BufferDesc& d = order[i];
      if (d.dtype != templates::Dtype::kFp32) {
        return absl::FailedPreconditionError(
            absl::StrCat(name, ": buffer '", d.name,
                         "' is not fp32; the model runtime runs fp32 models"));
      }
      Bound x;
      if (i >= step.buffers.size()) {
        if (!templates::BufferUnread(step.workload, d.name)) {
          return absl::FailedPreconditionError(
              absl::StrCat(name, ": buffer '", d.name, "' of ", tmpl.name(),
                           " is not bound"));
        }
        bound[d.name] = x;  // a null buffer
        continue;
      }
      const onnx_import::StepBuffer& sb = step.buffers[i];
      uint64_t have = 0;
      if (!sb.tensor.empty()) {
        x.tensor = tensor_of(sb.tensor);
        if (x.tensor < 0) {
          return absl::FailedPreconditionError(
              absl::StrCat(name, ": buffer '", d.name, "' is bound to '",
                           sb.tensor, "', which is not a tensor of the graph"));
        }
        have = plan.tensors[x.tensor].elements;
        if (plan.tensors[root_of(x.tensor)].constant >= 0) {
          return absl::FailedPreconditionError(absl::StrCat(
              name, ": buffer '", d.name, "' is bound to the constant output '",
              sb.tensor, "'"));
        }
        if (d.output) {
          p.writes.push_back(x.tensor);
        } else {
          p.reads.push_back(x.tensor);
        }
      } else {
        if (d.output) {
          return absl::FailedPreconditionError(absl::StrCat(
              name, ": output buffer '", d.name, "' is bound to a constant"));
        }
        x.constant = b.AddConstant(sb.constant);
        have = sb.constant.size();
      }
      if (have < d.elements) {
        return absl::FailedPreconditionError(
            absl::StrCat(name, ": buffer '", d.name, "' holds ", have,
                         " floats, ", tmpl.name(), " reads ", d.elements));
      }
      bound[d.name] = x;
    }

    // Arguments: the library call's, then the kernel's; floats in order.
    size_t floats_used = 0;
    absl::Status arg_error;
    auto convert = [&](const std::vector<templates::ArgDesc>& args) {
      std::vector<PlanArg> out;
      for (const templates::ArgDesc& a : args) {
        PlanArg arg;
        switch (a.kind) {
          case templates::ArgDesc::Kind::kInt:
            arg.kind = PlanArg::kInt;
            arg.value = a.value;
            break;
          case templates::ArgDesc::Kind::kFloat:
            arg.kind = PlanArg::kFloat;
            arg.real = floats_used < step.floats.size()
                           ? step.floats[floats_used]
                           : a.real;
            ++floats_used;
            break;
          case templates::ArgDesc::Kind::kBuffer:
          case templates::ArgDesc::Kind::kImage: {
            if (auto sc = scratch.find(a.buffer); sc != scratch.end()) {
              arg.kind = PlanArg::kScratch;
              arg.value = static_cast<int64_t>(sc->second.first);
              arg.bytes = sc->second.second;
              b.NeedScratch(sc->second.first, sc->second.second);
              break;
            }
            auto it = bound.find(a.buffer);
            if (it == bound.end()) {
              arg_error = absl::FailedPreconditionError(
                  absl::StrCat(name, ": the launch names buffer '", a.buffer,
                               "', which ", tmpl.name(), " does not list"));
              break;
            }
            const Bound& x = it->second;
            const bool image = a.kind == templates::ArgDesc::Kind::kImage;
            if (x.tensor >= 0) {
              arg.kind = image ? PlanArg::kTensorImage : PlanArg::kTensor;
              arg.value = x.tensor;
            } else if (x.constant >= 0) {
              arg.kind = PlanArg::kConstant;
              arg.value =
                  image ? b.AddImageConstant(x.constant, a.rows, a.row_elements)
                        : x.constant;
            } else {
              arg.kind = PlanArg::kNull;
            }
            if (image) {
              arg.rows = a.rows;
              arg.row_elements = a.row_elements;
              // The packing kernel fills images whose rows are not whole
              // texels, and every image in a recording (which holds
              // kernels, not copies).
              if (x.tensor >= 0) needs_pack = true;
            }
            break;
          }
        }
        out.push_back(arg);
      }
      return out;
    };
    if (entry.launch.library.has_value()) {
      PlanCommand call;
      call.kind = PlanCommand::kLibrary;
      call.library = entry.launch.library->name;
      call.routine = entry.launch.library->routine;
      call.args = convert(entry.launch.library->args);
      for (const PlanArg& a : call.args) {
        if (a.kind != PlanArg::kInt && a.kind != PlanArg::kFloat &&
            a.kind != PlanArg::kTensor && a.kind != PlanArg::kConstant) {
          return absl::FailedPreconditionError(
              absl::StrCat(name,
                           ": a library argument that is not an int, float or "
                           "bound buffer"));
        }
      }
      p.commands.push_back(std::move(call));
    }
    if (!entry.launch.kernel_name.empty()) {
      PlanCommand k;
      k.kind = PlanCommand::kKernel;
      k.source = b.AddSource(entry.source);
      k.kernel_name = entry.launch.kernel_name;
      k.build_options = entry.launch.build_options;
      k.work_dims = static_cast<uint32_t>(
          std::max<size_t>(1, entry.launch.global.size()));
      if (k.work_dims > 3) {
        return absl::FailedPreconditionError(
            absl::StrCat(name, ": an NDRange of more than 3 dims"));
      }
      for (size_t d = 0; d < entry.launch.global.size(); ++d) {
        k.global[d] = entry.launch.global[d];
      }
      for (size_t d = 0; d < entry.launch.local.size() && d < 3; ++d) {
        k.local[d] = entry.launch.local[d];
      }
      k.args = convert(entry.launch.args);
      p.commands.push_back(std::move(k));
    }
    if (!arg_error.ok()) return arg_error;
    // A library call with no epilogue kernel runs a workload without an
    // activation: the step's floats (the activation's parameters) are
    // unused there, as in the trial that measured it.
    const bool library_only =
        entry.launch.library.has_value() && entry.launch.kernel_name.empty();
    if (floats_used != step.floats.size() &&
        !(library_only && floats_used == 0)) {
      return absl::FailedPreconditionError(absl::StrCat(
          name, ": the step gives ", step.floats.size(), " floats, the ",
          entry.entry, " launch of ", tmpl.name(), " takes ", floats_used));
    }
    if (p.commands.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, ": its launch has no kernel and no call"));
    }
    for (int32_t t : p.reads) touch(t, static_cast<int32_t>(s));
    for (int32_t t : p.writes) touch(t, static_cast<int32_t>(s));

    ++rep.steps;
    rep.no_record += entry.no_record;
    if (entry.entry == "tuned") ++rep.tuned;
    if (entry.entry == "reference") ++rep.reference;
    if (entry.entry == "library") ++rep.library;
    if (entry.estimate_ns >= 0) {
      rep.estimate_ns += entry.estimate_ns;
    } else {
      ++rep.without_estimate;
    }
    plan.steps.push_back(std::move(p));
  }

  // Lifetimes: graph inputs from before the first step, outputs until after
  // the last; a tensor no step touches lives at step 0 alone.
  const auto end = static_cast<int32_t>(plan.steps.size());
  for (int32_t t : plan.inputs) first[root_of(t)] = -1;
  for (int32_t t : plan.outputs) last[root_of(t)] = end;
  for (size_t t = 0; t < plan.tensors.size(); ++t) {
    PlanTensor& x = plan.tensors[t];
    if (x.alias_of >= 0 || x.constant >= 0) continue;
    if (first[t] == INT_MAX) first[t] = last[t] == INT_MIN ? 0 : last[t];
    if (last[t] == INT_MIN) last[t] = first[t];
    x.first_step = first[t];
    x.last_step = last[t];
  }
  if (needs_pack) plan.image_pack_source = b.AddSource(ImagePackKernels());
  tunefleet_tuned::PlanArena(&plan, options.alignment);
  return plan;
}

}  // namespace tunefleet::plan_builder
