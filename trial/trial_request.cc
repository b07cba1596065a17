#include "trial/trial_request.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/hash.h"
#include "base/stats.h"

namespace tunefleet::trial {

std::string KernelSha256(const tunefleet::v1::KernelLaunch& launch,
                         const SourceTexts* sources) {
  absl::string_view source = launch.source();
  if (source.empty() && !launch.source_hash().empty() && sources != nullptr) {
    if (auto it = sources->find(launch.source_hash()); it != sources->end()) {
      source = it->second;
    }
  }
  std::string text("tunefleet-kernel-v1");
  text.push_back('\0');
  for (absl::string_view part :
       {source, absl::string_view(launch.build_options()),
        absl::string_view(launch.library().library()),
        absl::string_view(launch.library().routine())}) {
    text.append(part.data(), part.size());
    text.push_back('\0');
  }
  text.pop_back();
  return absl::BytesToHexString(base::Sha256(text));
}

std::string SourceHash(absl::string_view source) {
  return base::Fnv1aHex(source);
}

namespace {

using templates::ArgDesc;
using templates::LaunchDesc;

void ToKernelArg(const ArgDesc& a, tunefleet::v1::KernelArg* arg) {
  switch (a.kind) {
    case ArgDesc::Kind::kBuffer:
      arg->set_buffer(a.buffer);
      break;
    case ArgDesc::Kind::kInt:
      arg->set_i32(a.value);
      break;
    case ArgDesc::Kind::kFloat:
      arg->set_f32(a.real);
      break;
    case ArgDesc::Kind::kImage: {
      tunefleet::v1::ImageArg* image = arg->mutable_image();
      image->set_buffer(a.buffer);
      image->set_rows(a.rows);
      image->set_row_elements(a.row_elements);
      break;
    }
  }
}

// `source_hash`: KernelLaunch.source_hash of in.source (computed when
// empty).
void ToKernelLaunch(const LaunchDesc& in, tunefleet::v1::KernelLaunch* out,
                    std::string source_hash = "") {
  out->set_source(std::string(in.source));
  if (!in.source.empty()) {
    out->set_source_hash(source_hash.empty() ? SourceHash(in.source)
                                             : std::move(source_hash));
  }
  out->set_kernel_name(in.kernel_name);
  out->set_build_options(in.build_options);
  for (uint64_t g : in.global) out->add_global_size(g);
  for (uint64_t l : in.local) out->add_local_size(l);
  for (const ArgDesc& a : in.args) ToKernelArg(a, out->add_args());
  if (in.library.has_value()) {
    tunefleet::v1::LibraryCall* call = out->mutable_library();
    call->set_library(in.library->name);
    call->set_routine(in.library->routine);
    for (const ArgDesc& a : in.library->args) ToKernelArg(a, call->add_args());
  }
}

void AddBuffers(const templates::KernelTemplate& tmpl,
                const templates::Workload& workload,
                tunefleet::v1::MeasureRequest* r) {
  for (const templates::BufferDesc& b : tmpl.Buffers(workload)) {
    tunefleet::v1::BufferSpec* spec = r->add_buffers();
    spec->set_name(b.name);
    spec->set_elements(b.elements);
    spec->set_dtype(DtypeToProto(b.dtype));
    spec->set_output(b.output);
    spec->set_fill(b.output || b.zero_fill
                       ? tunefleet::v1::BufferSpec::ZERO
                       : tunefleet::v1::BufferSpec::UNIFORM);
    spec->set_seed(b.seed);
  }
}

// The reference runs once per (workload, reference source, options) on an
// agent; its output is cached under that key.
void SetVerification(const templates::KernelTemplate& tmpl,
                     const templates::Workload& workload,
                     const LaunchDesc& reference,
                     tunefleet::v1::MeasureRequest* r) {
  tunefleet::v1::Verification* v = r->mutable_verification();
  ToKernelLaunch(reference, v->mutable_reference());
  v->set_reference_key(absl::StrCat(workload.Canonical(), "|",
                                    base::Fnv1aHex(reference.source), "|",
                                    reference.build_options));
  v->set_rtol(tmpl.Tolerance(workload));
}

}  // namespace

tunefleet::v1::MeasureRequest BuildMeasureRequest(
    const templates::KernelTemplate& tmpl, const templates::Workload& workload,
    const templates::KnobValues& config, int64_t trial_id,
    const tunefleet::v1::TimingPolicy& timing) {
  tunefleet::v1::MeasureRequest r;
  r.set_trial_id(trial_id);
  r.set_workload_key(workload.Canonical());
  AddBuffers(tmpl, workload, &r);
  ToKernelLaunch(tmpl.Launch(config, workload), r.mutable_kernel());
  SetVerification(tmpl, workload, tmpl.ReferenceLaunch(workload), &r);
  *r.mutable_timing() = timing;
  return r;
}

MeasureRequestBuilder::MeasureRequestBuilder(
    const templates::KernelTemplate& tmpl, templates::Workload workload,
    const tunefleet::v1::TimingPolicy& timing)
    : tmpl_(tmpl), workload_(std::move(workload)) {
  shared_.set_workload_key(workload_.Canonical());
  AddBuffers(tmpl_, workload_, &shared_);
  SetVerification(tmpl_, workload_, tmpl_.ReferenceLaunch(workload_), &shared_);
  *shared_.mutable_timing() = timing;
  shared_lean_ = shared_;
  tunefleet::v1::KernelLaunch* reference =
      shared_lean_.mutable_verification()->mutable_reference();
  auto sources = std::make_shared<SourceTexts>();
  if (!reference->source().empty()) {
    (*sources)[reference->source_hash()] = reference->source();
    reference->clear_source();
  }
  sources_ = std::move(sources);
}

tunefleet::v1::MeasureRequest MeasureRequestBuilder::Build(
    const templates::KnobValues& config, int64_t trial_id) const {
  tunefleet::v1::MeasureRequest r = shared_;
  r.set_trial_id(trial_id);
  const LaunchDesc launch = tmpl_.Launch(config, workload_);
  ToKernelLaunch(launch, r.mutable_kernel(), HashOf(launch.source));
  return r;
}

LeanRequest MeasureRequestBuilder::BuildLean(
    const templates::KnobValues& config, int64_t trial_id) const {
  LeanRequest out;
  tunefleet::v1::MeasureRequest& r = out.request;
  r = shared_lean_;
  r.set_trial_id(trial_id);
  LaunchDesc launch = tmpl_.Launch(config, workload_);
  bool kept = false;
  std::string hash = HashOf(launch.source, &kept);
  const absl::string_view source = launch.source;
  if (kept) launch.source = {};  // its text is in sources_
  ToKernelLaunch(launch, r.mutable_kernel());
  if (!source.empty()) r.mutable_kernel()->set_source_hash(std::move(hash));
  absl::MutexLock lock(&mu_);
  out.sources = sources_;
  return out;
}

std::string MeasureRequestBuilder::HashOf(absl::string_view source,
                                          bool* kept) const {
  if (kept != nullptr) *kept = false;
  if (source.empty()) return "";
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [text, hash] : hashes_) {
      if (text == source) {
        if (kept != nullptr) *kept = true;
        return hash;
      }
    }
  }
  std::string hash = SourceHash(source);
  absl::MutexLock lock(&mu_);
  if (hashes_.size() < kMaxHashedSources) {
    hashes_.emplace_back(std::string(source), hash);
    auto sources = std::make_shared<SourceTexts>(*sources_);
    (*sources)[hash] = std::string(source);
    sources_ = std::move(sources);
    if (kept != nullptr) *kept = true;
  }
  return hash;
}

void FillSources(const SourceTexts& sources,
                 tunefleet::v1::MeasureRequest* request) {
  auto fill = [&sources](tunefleet::v1::KernelLaunch* launch) {
    if (!launch->source().empty() || launch->source_hash().empty()) return;
    auto it = sources.find(launch->source_hash());
    if (it != sources.end()) launch->set_source(it->second);
  };
  fill(request->mutable_kernel());
  if (request->has_verification()) {
    fill(request->mutable_verification()->mutable_reference());
  }
}

tunefleet::v1::MeasureRequest BuildReferenceRequest(
    const templates::KernelTemplate& tmpl, const templates::Workload& workload,
    int64_t trial_id, const tunefleet::v1::TimingPolicy& timing) {
  tunefleet::v1::MeasureRequest r;
  r.set_trial_id(trial_id);
  r.set_workload_key(workload.Canonical());
  AddBuffers(tmpl, workload, &r);
  const LaunchDesc reference = tmpl.ReferenceLaunch(workload);
  ToKernelLaunch(reference, r.mutable_kernel());
  SetVerification(tmpl, workload, reference, &r);
  *r.mutable_timing() = timing;
  return r;
}

templates::DeviceLimits LimitsFromDeviceInfo(
    const tunefleet::v1::DeviceInfo& info) {
  templates::DeviceLimits l;
  l.max_work_group_size = info.max_work_group_size();
  for (int d = 0; d < 3 && d < info.max_work_item_sizes_size(); ++d) {
    l.max_work_item_sizes[d] = info.max_work_item_sizes(d);
  }
  l.local_mem_bytes = info.local_mem_bytes();
  l.max_mem_alloc_bytes = info.max_mem_alloc_bytes();
  l.compute_units = info.compute_units();
  l.max_clock_mhz = info.max_clock_mhz();
  l.preferred_vector_width_float = info.preferred_vector_width_float();
  l.local_mem_is_global = info.local_mem_is_global();
  l.image_support = info.image_support();
  l.image2d_max_width = info.image2d_max_width();
  l.image2d_max_height = info.image2d_max_height();
  for (const std::string& ext : info.extensions()) {
    l.image2d_from_buffer |= ext == "cl_khr_image2d_from_buffer";
    l.fp16 |= ext == "cl_khr_fp16";
    l.subgroups |= ext == "cl_khr_subgroups" || ext == "cl_intel_subgroups" ||
                   ext == "cl_qcom_subgroup_shuffle";
    l.qcom_extensions |= absl::StartsWith(ext, "cl_qcom_");
    l.arm_extensions |= absl::StartsWith(ext, "cl_arm_");
  }
  // "clblast 1.5.3": the library's name is the first word.
  for (const std::string& library : info.libraries()) {
    const absl::string_view name =
        absl::string_view(library).substr(0, library.find(' '));
    l.library_clblast |= name == "clblast";
    l.library_clml |= name == "clml";
  }
  return l;
}

tunefleet::v1::Dtype DtypeToProto(templates::Dtype dtype) {
  return dtype == templates::Dtype::kFp16 ? tunefleet::v1::DTYPE_FP16
                                          : tunefleet::v1::DTYPE_FP32;
}

templates::Dtype DtypeFromProto(tunefleet::v1::Dtype dtype) {
  return dtype == tunefleet::v1::DTYPE_FP16 ? templates::Dtype::kFp16
                                            : templates::Dtype::kFp32;
}

tunefleet::v1::Workload WorkloadToProto(const templates::Workload& workload) {
  tunefleet::v1::Workload w;
  w.set_op(workload.op());
  w.set_dtype(DtypeToProto(workload.dtype()));
  for (const templates::Dim& d : workload.dims()) {
    auto* dim = w.add_dims();
    dim->set_name(d.name);
    dim->set_value(d.value);
  }
  for (const templates::Attr& a : workload.attrs()) {
    auto* attr = w.add_attrs();
    attr->set_name(a.name);
    attr->set_value(a.value);
  }
  return w;
}

absl::StatusOr<templates::Workload> WorkloadFromProto(
    const tunefleet::v1::Workload& workload, const templates::OpSpec* op) {
  std::vector<templates::Dim> dims;
  for (const auto& d : workload.dims()) dims.push_back({d.name(), d.value()});
  std::vector<templates::Attr> attrs;
  for (const auto& a : workload.attrs()) attrs.push_back({a.name(), a.value()});
  if (op != nullptr && op->name == workload.op()) {
    return templates::Workload::Create(*op, std::move(dims),
                                       DtypeFromProto(workload.dtype()),
                                       std::move(attrs));
  }
  return templates::Workload::Create(workload.op(), std::move(dims),
                                     DtypeFromProto(workload.dtype()),
                                     std::move(attrs));
}

tunefleet::v1::Config ConfigToProto(const templates::KernelTemplate& tmpl,
                                    const templates::KnobValues& config) {
  tunefleet::v1::Config c;
  for (size_t i = 0; i < config.size() && i < tmpl.knobs().size(); ++i) {
    auto* k = c.add_knobs();
    k->set_name(tmpl.knobs()[i].name);
    k->set_value(config[i]);
  }
  return c;
}

double MedianNs(const google::protobuf::RepeatedField<double>& times_ns) {
  return base::Median(std::vector<double>(times_ns.begin(), times_ns.end()));
}

}  // namespace tunefleet::trial
