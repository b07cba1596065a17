// SpecTemplate: parsing entry points and the evaluation of a parsed spec.
#include "kernels_templates/spec/spec_template.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kernel_policy/source_check.h"
#include "kernels_templates/spec/expression_functions.h"
#include "kernels_templates/spec/spec_json.h"
#include "kernels_templates/spec/spec_parse.h"

namespace tunefleet::templates {
namespace {

using spec_json::Invalid;
using tunefleet_expr::Holds;

std::vector<int> Handles(const std::vector<SpecValue>& values) {
  std::vector<int> out;
  for (const SpecValue& v : values) out.push_back(v.expression);
  return out;
}

// Every expression a kernel's launch evaluates: its `when`, geometry,
// args (with their images') and options.
std::vector<int> KernelExpressions(const SpecModel& m, const SpecKernel& k) {
  std::vector<int> out = {k.when};
  out.insert(out.end(), k.global.begin(), k.global.end());
  out.insert(out.end(), k.local.begin(), k.local.end());
  for (const SpecArg& a : k.args) {
    if (a.expression >= 0) out.push_back(a.expression);
    if (a.kind != SpecArg::kImage) continue;
    const SpecImage& image = m.images[a.image];
    out.insert(out.end(), {image.when, image.rows, image.row_elements});
  }
  for (const SpecOption& o : k.options) {
    if (o.when >= 0) out.push_back(o.when);
    for (int h : o.text.Expressions()) out.push_back(h);
  }
  return out;
}

// The [kernel]'s expressions and the library call's.
std::vector<int> LaunchExpressions(const SpecModel& m) {
  std::vector<int> out =
      m.has_kernel ? KernelExpressions(m, m.kernel) : std::vector<int>{};
  if (m.library.has_value()) {
    for (const SpecArg& a : m.library->args) out.push_back(a.expression);
  }
  return out;
}

// The comment that ends a library template's source(): its call, so that
// the source hash changes with it. Escaped: a newline in an argument
// would end the comment.
std::string LibraryTag(const SpecModel& m) {
  std::string args;
  for (const SpecArg& a : m.library->args) {
    const std::string text =
        a.kind == SpecArg::kBuffer
            ? a.buffer
            : absl::StrCat(a.kind == SpecArg::kFloat ? "float:" : "",
                           m.expressions->Text(a.expression));
    absl::StrAppend(&args, args.empty() ? "" : ", ", absl::CEscape(text));
  }
  return absl::StrCat("\n// tunefleet library call: ", m.library->name, " ",
                      m.library->routine, "(", args, ")\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<SpecTemplate>> SpecTemplate::Parse(
    const std::string& spec, const std::string& format,
    const std::string& source, const std::string& reference_source) {
  if (spec.size() > kMaxSpecTextBytes) {
    return Invalid(absl::StrCat("the spec is ", spec.size(), " bytes; at most ",
                                kMaxSpecTextBytes));
  }
  if (source.size() > kMaxSpecSourceBytes ||
      reference_source.size() > kMaxSpecSourceBytes) {
    return Invalid(
        absl::StrCat("the OpenCL source is ",
                     std::max(source.size(), reference_source.size()),
                     " bytes; at most ", kMaxSpecSourceBytes));
  }
  // What an agent compiles (kernel_policy/source_check.h), refused here
  // already.
  if (absl::Status s = kernel_policy::CheckKernelSource(source); !s.ok()) {
    return Invalid(absl::StrCat("source: ", s.message()));
  }
  if (absl::Status s = kernel_policy::CheckKernelSource(reference_source);
      !s.ok()) {
    return Invalid(absl::StrCat("reference source: ", s.message()));
  }
  absl::StatusOr<spec_json::json> j =
      spec_json::ParseObject(spec, format, kMaxSpecJsonDepth);
  if (!j.ok()) return j.status();
  absl::StatusOr<SpecModel> model =
      ParseSpecModel(*j, source, reference_source);
  if (!model.ok()) return model.status();
  auto t = std::make_unique<SpecTemplate>(base::PassKey<SpecTemplate>());
  t->model_ = *std::move(model);
  t->spec_text_ = spec;
  t->spec_format_ = format;
  const spec_json::json& reference = (*j)["reference"];
  if (reference.contains("source")) t->reference_source_ = reference_source;
  if ((t->model_.has_kernel && t->model_.kernel.source.empty()) ||
      t->model_.reference.source.empty()) {
    return Invalid("the OpenCL source is empty");
  }
  t->source_ = t->model_.kernel.source;
  if (t->model_.library.has_value()) {
    // A source shipped from source() already ends with the tag.
    const std::string tag = LibraryTag(t->model_);
    if (!absl::EndsWith(t->source_, tag)) t->source_ += tag;
  }
  if (j->contains("default_config")) {
    const spec_json::json& text = (*j)["default_config"];
    absl::StatusOr<KnobValues> config =
        text.is_string() ? t->ParseConfig(text.get<std::string>())
                         : Invalid("default_config: a string \"K=V,...\"");
    if (!config.ok()) {
      return Invalid(
          absl::StrCat("default_config: ", config.status().message()));
    }
    t->model_.default_config = *std::move(config);
  } else if (t->model_.shape_generic) {
    return Invalid("shape_generic: give the default_config of untuned shapes");
  }
  t->MakePlans();
  return t;
}

void SpecTemplate::MakePlans() {
  const SpecModel& m = model_;
  std::vector<int> shape = {m.accepts.expression};
  for (const SpecCheck& c : m.workload_checks) shape.push_back(c.expression);
  std::vector<int> constraints;
  for (const SpecCheck& c : m.constraints) constraints.push_back(c.expression);
  // The launch rules: the kernel's `when`, geometry and images.
  std::vector<int> rules = {m.kernel.when};
  rules.insert(rules.end(), m.kernel.global.begin(), m.kernel.global.end());
  rules.insert(rules.end(), m.kernel.local.begin(), m.kernel.local.end());
  for (const SpecImage& image : m.images) {
    rules.insert(rules.end(), {image.when, image.rows, image.row_elements});
  }
  std::vector<int> buffers;
  for (const SpecBuffer& b : m.buffers) buffers.push_back(b.elements);
  tables_ = KnobTables(m);
  constraint_runs_ = tables_.Runs(constraints);
  std::vector<int> outside_runs = constraints;
  for (const KnobTables::CheckRun& run : constraint_runs_) {
    std::fill_n(outside_runs.begin() + run.first, run.count, -1);
  }
  plans_.shape = LetPlan(m, shape);
  plans_.constraints = LetPlan(m, constraints, &tables_);
  plans_.constraints_by_run = LetPlan(m, outside_runs, &tables_);
  plans_.launch_rules = LetPlan(m, rules);
  plans_.features = LetPlan(m, Handles(m.features), &tables_);
  plans_.buffers = LetPlan(m, buffers);
  plans_.flops = LetPlan(m, {m.flops});
  plans_.bytes = LetPlan(m, {m.bytes});
  plans_.kernel = LetPlan(m, LaunchExpressions(m));
  plans_.reference = LetPlan(m, KernelExpressions(m, m.reference));
  plans_.lets = LetPlan(m, Handles(m.lets));
}

OpSpec SpecTemplate::Op() const {
  OpSpec spec;
  spec.name = model_.op;
  for (const std::string& d : model_.dims) spec.dims.push_back({d, {}});
  spec.dtypes = {Dtype::kFp32};
  return spec;
}

SpecTemplate::Frame SpecTemplate::NewFrame(const Workload& w) const {
  const SpecSlots& s = model_.slots;
  Frame frame(s.size(), 0.0);
  const bool same_op = w.op() == model_.op;
  for (int i = 0; i < s.num_dims; ++i) {
    frame[s.dim(i)] = static_cast<double>(same_op ? w.dims()[i].value
                                                  : w.dim(model_.dims[i]));
  }
  for (int i = 0; i < s.num_attrs; ++i) {
    const SpecAttr& a = model_.attrs[i];
    const std::string& value = w.attr(a.name);
    for (const auto& [name, number] : a.values) {
      if (name == value) frame[s.attr(i)] = number;
    }
  }
  frame[s.fp16()] = w.dtype() == Dtype::kFp16 ? 1 : 0;
  frame[s.element_bytes()] = ElementBytes(w.dtype());
  return frame;
}

void SpecTemplate::SetLimits(const DeviceLimits& l, Frame& frame) const {
  const double values[kNumSpecLimits] = {
      static_cast<double>(l.max_work_group_size),
      static_cast<double>(l.max_work_item_sizes[0]),
      static_cast<double>(l.max_work_item_sizes[1]),
      static_cast<double>(l.max_work_item_sizes[2]),
      static_cast<double>(l.local_mem_bytes),
      static_cast<double>(l.max_mem_alloc_bytes),
      static_cast<double>(l.compute_units),
      l.image_support ? 1.0 : 0.0,
      static_cast<double>(l.image2d_max_width),
      static_cast<double>(l.image2d_max_height),
      l.image2d_from_buffer ? 1.0 : 0.0,
      l.library_clblast ? 1.0 : 0.0,
      l.library_clml ? 1.0 : 0.0,
      l.fp16 ? 1.0 : 0.0};
  std::copy(std::begin(values), std::end(values),
            frame.begin() + model_.slots.limit(0));
}

void SpecTemplate::SetKnobs(const KnobValues& config, Frame& frame) const {
  const size_t n = std::min(config.size(), model_.knobs.size());
  for (size_t i = 0; i < n; ++i) {
    frame[model_.slots.knob(static_cast<int>(i))] =
        static_cast<double>(config[i]);
  }
}

std::string SpecTemplate::Render(const TextTemplate& text, const Workload& w,
                                 Frame& frame) const {
  if (text.HasExpressions()) plans_.lets.All(frame.data());
  return text.Render(*model_.expressions, frame.data(),
                     text.HasWorkload() ? w.Canonical() : std::string(),
                     model_.name);
}

bool SpecTemplate::AcceptsFrame(const Workload& w, Frame& frame) const {
  if (w.op() != model_.op) return false;
  if (!model_.dtypes.empty() &&
      std::find(model_.dtypes.begin(), model_.dtypes.end(), w.dtype()) ==
          model_.dtypes.end()) {
    return false;
  }
  if (model_.accepts.expression < 0) return true;
  plans_.shape.Before(0, frame.data());
  return Holds(
      model_.expressions->Evaluate(model_.accepts.expression, frame.data()));
}

bool SpecTemplate::Accepts(const Workload& w) const {
  if (w.op() != model_.op) return false;
  Frame frame = NewFrame(w);
  return AcceptsFrame(w, frame);
}

absl::Status SpecTemplate::CheckShape(const Workload& w, Frame& frame) const {
  if (!AcceptsFrame(w, frame)) {
    if (model_.has_accepts) {
      return absl::InvalidArgumentError(
          Render(model_.accepts.reason, w, frame));
    }
    return absl::InvalidArgumentError(
        w.op() != model_.op ? absl::StrCat("template ", model_.name, " runs ",
                                           model_.op, ", not ", w.op())
                            : absl::StrCat("template ", model_.name,
                                           " does not run ", w.Canonical()));
  }
  for (size_t i = 0; i < model_.workload_checks.size(); ++i) {
    const SpecCheck& c = model_.workload_checks[i];
    plans_.shape.Before(i + 1, frame.data());
    if (!Holds(model_.expressions->Evaluate(c.expression, frame.data()))) {
      return absl::InvalidArgumentError(Render(c.reason, w, frame));
    }
  }
  return absl::OkStatus();
}

absl::Status SpecTemplate::CheckBuffers(const Workload& w,
                                        const DeviceLimits& limits,
                                        Frame& frame) const {
  plans_.buffers.All(frame.data());
  for (const SpecBuffer& b : model_.buffers) {
    absl::StatusOr<double> n =
        model_.expressions->EvaluateFinite(b.elements, frame.data());
    if (!n.ok()) return n.status();
    if (*n < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", b.name, " of ", w.Canonical(), " has ", *n,
          " elements: must be >= 1 and fit the device's max allocation"));
    }
    const uint64_t bytes = tunefleet_expr::Size(*n) *
                           (b.workload_dtype ? ElementBytes(w.dtype())
                                             : ElementBytes(Dtype::kFp32));
    if (limits.max_mem_alloc_bytes != 0 && bytes > limits.max_mem_alloc_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", b.name, " of ", w.Canonical(), " needs ",
                       bytes, " bytes, over the device's max allocation of ",
                       limits.max_mem_alloc_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status SpecTemplate::CheckWorkload(const Workload& w,
                                         const DeviceLimits& limits) const {
  Frame frame = NewFrame(w);
  SetLimits(limits, frame);
  if (absl::Status s = CheckShape(w, frame); !s.ok()) return s;
  return CheckBuffers(w, limits, frame);
}

absl::Status SpecTemplate::ConfigError(const KnobValues& config,
                                       absl::string_view why) const {
  return absl::InvalidArgumentError(
      absl::StrCat(ConfigString(config), ": ", why));
}

absl::StatusOr<int> SpecTemplate::FailingConstraint(const KnobValues& config,
                                                    const Workload& w,
                                                    const DeviceLimits& limits,
                                                    Frame& frame) const {
  if (config.size() != model_.knobs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config has ", config.size(), " values, template has ",
                     model_.knobs.size(), " knobs"));
  }
  SetLimits(limits, frame);
  SetKnobs(config, frame);
  if (model_.config_rechecks_workload) {
    if (absl::Status s = CheckShape(w, frame); !s.ok()) return s;
  }
  int digits_storage[kMaxSpecKnobs];
  const int* digits =
      tables_.Digits(config, digits_storage) ? digits_storage : nullptr;
  return FirstFailingConstraint(digits, frame);
}

absl::Status SpecTemplate::CheckConfig(const KnobValues& config,
                                       const Workload& w,
                                       const DeviceLimits& limits) const {
  Frame frame = NewFrame(w);
  absl::StatusOr<int> failing = FailingConstraint(config, w, limits, frame);
  if (!failing.ok()) return failing.status();
  if (const int i = *failing; i >= 0) {
    const TextTemplate& reason = model_.constraints[i].reason;
    if (const std::string* text = reason.StaticText()) {
      return ConfigError(config, *text);
    }
    return ConfigError(config, Render(reason, w, frame));
  }
  if (!model_.launch_checks) return absl::OkStatus();
  return CheckLaunchRules(config, limits, frame);
}

bool SpecTemplate::ConfigValid(const KnobValues& config, const Workload& w,
                               const DeviceLimits& limits) const {
  Frame frame = NewFrame(w);
  absl::StatusOr<int> failing = FailingConstraint(config, w, limits, frame);
  if (!failing.ok() || *failing >= 0) return false;
  return !model_.launch_checks || CheckLaunchRules(config, limits, frame).ok();
}

int SpecTemplate::FirstFailingConstraint(const int* digits,
                                         Frame& frame) const {
  const std::vector<SpecCheck>& checks = model_.constraints;
  const LetPlan& plan =
      digits != nullptr ? plans_.constraints_by_run : plans_.constraints;
  size_t run = 0;
  for (size_t i = 0; i < checks.size(); ++i) {
    if (digits != nullptr && run < constraint_runs_.size() &&
        constraint_runs_[run].first == i) {
      const KnobTables::CheckRun& r = constraint_runs_[run++];
      const int failing = KnobTables::FirstFailing(r, digits);
      if (failing != KnobTables::CheckRun::kAllHold) {
        return static_cast<int>(i) + failing;
      }
      i += r.count - 1;
      continue;
    }
    plan.Before(i, frame.data(), digits);
    if (!Holds(tables_.Value(checks[i].expression, frame.data(), digits))) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// OpenCL 1.2 launch rules: sizes of at least 1, local sizes that divide
// global ones and fit the device.
absl::Status SpecTemplate::CheckLaunchRules(const KnobValues& config,
                                            const DeviceLimits& limits,
                                            Frame& frame) const {
  plans_.launch_rules.All(frame.data());
  if (!KernelRuns(frame)) return absl::OkStatus();
  const SpecKernel& k = model_.kernel;
  double group = 1;
  for (size_t d = 0; d < k.global.size(); ++d) {
    absl::StatusOr<double> g =
        model_.expressions->EvaluateFinite(k.global[d], frame.data());
    if (!g.ok()) return g.status();
    if (*g < 1) {
      return ConfigError(config,
                         absl::StrCat("global size ", *g, " is below 1"));
    }
    if (d >= k.local.size()) continue;
    absl::StatusOr<double> l =
        model_.expressions->EvaluateFinite(k.local[d], frame.data());
    if (!l.ok()) return l.status();
    if (*l < 1 || std::fmod(*g, *l) != 0 ||
        *l > static_cast<double>(limits.max_work_item_sizes[d])) {
      return ConfigError(
          config, absl::StrCat("local size ", *l, " does not divide global ",
                               *g, " or exceeds the device's work-item size"));
    }
    group *= *l;
  }
  if (group > static_cast<double>(limits.max_work_group_size)) {
    return ConfigError(
        config, absl::StrCat("work-group of ", group, " exceeds the device's ",
                             limits.max_work_group_size));
  }
  return CheckImages(config, limits, frame);
}

bool SpecTemplate::KernelRuns(const Frame& frame) const {
  const SpecKernel& k = model_.kernel;
  return model_.has_kernel && (k.when < 0 || Holds(model_.expressions->Evaluate(
                                                 k.when, frame.data())));
}

// Images the device cannot hold (OpenCL 1.2 section 5.3.1: width and height
// within CL_DEVICE_IMAGE2D_MAX_WIDTH / HEIGHT).
absl::Status SpecTemplate::CheckImages(const KnobValues& config,
                                       const DeviceLimits& limits,
                                       const Frame& frame) const {
  for (const SpecArg& a : model_.kernel.args) {
    if (a.kind != SpecArg::kImage) continue;
    const ArgDesc arg = MakeArg(a, frame);
    if (arg.kind != ArgDesc::Kind::kImage) continue;
    const uint64_t width = (arg.row_elements + 3) / 4;
    if (!limits.image_support) {
      return ConfigError(config,
                         absl::StrCat("reads buffer ", arg.buffer,
                                      " as an image; the device has no image "
                                      "support"));
    }
    if (width > limits.image2d_max_width ||
        arg.rows > limits.image2d_max_height) {
      return ConfigError(
          config, absl::StrCat("image ", model_.images[a.image].name, " is ",
                               width, "x", arg.rows,
                               " texels, over the device's "
                               "image2d_max_width x image2d_max_height of ",
                               limits.image2d_max_width, "x",
                               limits.image2d_max_height));
    }
  }
  return absl::OkStatus();
}

std::vector<BufferDesc> SpecTemplate::Buffers(const Workload& w) const {
  Frame frame = NewFrame(w);
  plans_.buffers.All(frame.data());
  std::vector<BufferDesc> out;
  for (const SpecBuffer& b : model_.buffers) {
    const double n = model_.expressions->Evaluate(b.elements, frame.data());
    out.push_back({b.name, tunefleet_expr::Size(n), b.output, b.seed,
                   b.workload_dtype ? w.dtype() : Dtype::kFp32, b.zero_fill});
  }
  return out;
}

std::string SpecTemplate::BuildOptions(const SpecKernel& k, const Frame& frame,
                                       const Workload& w) const {
  std::string options;
  if (k.has_options) {
    for (const SpecOption& o : k.options) {
      if (o.when >= 0 &&
          !Holds(model_.expressions->Evaluate(o.when, frame.data()))) {
        continue;
      }
      options += o.text.Render(*model_.expressions, frame.data(), w.Canonical(),
                               model_.name);
    }
    return options;
  }
  const std::vector<std::string>& names = model_.expressions->variables();
  for (const std::string& d : model_.defines) {
    const size_t slot =
        std::find(names.begin(), names.end(), d) - names.begin();
    absl::StrAppend(&options, options.empty() ? "" : " ", "-D", d, "=",
                    tunefleet_expr::Int32(frame[slot]));
  }
  return options;
}

SpecTemplate::Frame SpecTemplate::LaunchFrame(const LetPlan& plan,
                                              const KnobValues& config,
                                              const Workload& w) const {
  Frame frame = NewFrame(w);
  SetKnobs(config, frame);
  plan.All(frame.data());
  return frame;
}

ArgDesc SpecTemplate::MakeArg(const SpecArg& a, const Frame& frame) const {
  const ExpressionSet& e = *model_.expressions;
  switch (a.kind) {
    case SpecArg::kBuffer:
      return ArgDesc::Buffer(a.buffer);
    case SpecArg::kImage: {
      const SpecImage& image = model_.images[a.image];
      if (image.when >= 0 && !Holds(e.Evaluate(image.when, frame.data()))) {
        return ArgDesc::Buffer(image.buffer);
      }
      return ArgDesc::Image(
          image.buffer,
          tunefleet_expr::Size(e.Evaluate(image.rows, frame.data())),
          tunefleet_expr::Size(e.Evaluate(image.row_elements, frame.data())));
    }
    case SpecArg::kFloat:
      return ArgDesc::Float(
          tunefleet_expr::Float(e.Evaluate(a.expression, frame.data())));
    case SpecArg::kInt:
      break;
  }
  return ArgDesc::Int(
      tunefleet_expr::Int32(e.Evaluate(a.expression, frame.data())));
}

void SpecTemplate::AddKernel(const SpecKernel& k, const Frame& frame,
                             const Workload& w, LaunchDesc& l) const {
  const ExpressionSet& e = *model_.expressions;
  l.source = k.source;
  l.kernel_name = k.name;
  for (int h : k.global) {
    l.global.push_back(tunefleet_expr::Size(e.Evaluate(h, frame.data())));
  }
  for (int h : k.local) {
    l.local.push_back(tunefleet_expr::Size(e.Evaluate(h, frame.data())));
  }
  for (const SpecArg& a : k.args) l.args.push_back(MakeArg(a, frame));
  l.build_options = BuildOptions(k, frame, w);
}

LaunchDesc SpecTemplate::Launch(const KnobValues& config,
                                const Workload& w) const {
  const Frame frame = LaunchFrame(plans_.kernel, config, w);
  LaunchDesc l;
  if (model_.library.has_value()) {
    LibraryDesc library{model_.library->name, model_.library->routine, {}};
    for (const SpecArg& a : model_.library->args) {
      library.args.push_back(MakeArg(a, frame));
    }
    l.library = std::move(library);
  }
  if (KernelRuns(frame)) AddKernel(model_.kernel, frame, w, l);
  return l;
}

LaunchDesc SpecTemplate::ReferenceLaunch(const Workload& w) const {
  // The reference often shares the source, which may use the knobs'
  // defines: build it with each knob's first value.
  KnobValues first;
  for (const Knob& k : model_.knobs) first.push_back(k.values.front());
  LaunchDesc l;
  AddKernel(model_.reference, LaunchFrame(plans_.reference, first, w), w, l);
  return l;
}

double SpecTemplate::Flops(const Workload& w) const {
  Frame frame = NewFrame(w);
  plans_.flops.All(frame.data());
  return model_.expressions->EvaluateFinite(model_.flops, frame.data())
      .value_or(0);
}

double SpecTemplate::Bytes(const Workload& w) const {
  if (model_.bytes < 0) return 0;
  Frame frame = NewFrame(w);
  plans_.bytes.All(frame.data());
  return model_.expressions->EvaluateFinite(model_.bytes, frame.data())
      .value_or(0);
}

std::vector<Feature> SpecTemplate::DerivedFeatures(
    const KnobValues& config, const Workload& w,
    const DeviceLimits& limits) const {
  Frame frame = NewFrame(w);
  SetLimits(limits, frame);
  SetKnobs(config, frame);
  int digits_storage[kMaxSpecKnobs];
  const int* digits = config.size() == model_.knobs.size() &&
                              tables_.Digits(config, digits_storage)
                          ? digits_storage
                          : nullptr;
  plans_.features.All(frame.data(), digits);
  std::vector<Feature> out;
  out.reserve(model_.features.size());
  for (const SpecValue& f : model_.features) {
    out.push_back({f.name, tables_.Value(f.expression, frame.data(), digits)});
  }
  return out;
}

}  // namespace tunefleet::templates
