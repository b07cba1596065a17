#include "kernels_templates/registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kernels_templates/conv/conv2d_template.h"
#include "kernels_templates/conv/depthwise_template.h"
#include "kernels_templates/gemm/gemm_gpu_template.h"
#include "kernels_templates/gemm/gemm_template.h"
#include "kernels_templates/pool/global_pool_template.h"
#include "kernels_templates/pool/pool2d_template.h"
#include "kernels_templates/softmax/softmax_template.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

struct Registry {
  Registry() {
    using Variant = GemmTemplate::Variant;
    for (Variant v : {Variant::kGemm, Variant::kDense, Variant::kConv1x1}) {
      templates.push_back(std::make_unique<GemmTemplate>(v));
    }
    // After gemm_tiled, which stays the default for op gemm.
    templates.push_back(std::make_unique<GemmGpuTemplate>());
    // After conv2d_1x1_gemm, so 1x1 convolutions still go to the GEMM.
    templates.push_back(std::make_unique<Conv2dTemplate>());
    templates.push_back(std::make_unique<DepthwiseTemplate>());
    templates.push_back(std::make_unique<Pool2dTemplate>());
    templates.push_back(std::make_unique<GlobalPoolTemplate>());
    templates.push_back(std::make_unique<SoftmaxTemplate>());
    built_in = templates.size();
  }
  absl::Mutex mu;
  std::vector<std::unique_ptr<KernelTemplate>> templates ABSL_GUARDED_BY(mu);
  size_t built_in = 0;  // the first templates, registered above
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

std::vector<const KernelTemplate*> AllTemplates() {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  std::vector<const KernelTemplate*> out;
  for (const auto& t : r.templates) out.push_back(t.get());
  return out;
}

absl::Status RegisterTemplate(std::unique_ptr<KernelTemplate> tmpl) {
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  for (const auto& t : r.templates) {
    if (t->name() == tmpl->name()) {
      return absl::AlreadyExistsError(
          absl::StrCat("a template named ", tmpl->name(), " exists"));
    }
  }
  if (r.templates.size() - r.built_in >= kMaxRegisteredTemplates) {
    return absl::ResourceExhaustedError(
        absl::StrCat("template ", tmpl->name(), ": this process already holds ",
                     kMaxRegisteredTemplates, " registered templates"));
  }
  r.templates.push_back(std::move(tmpl));
  return absl::OkStatus();
}

absl::StatusOr<const KernelTemplate*> RegisterSpecTemplate(
    const std::string& spec, const std::string& format,
    const std::string& source) {
  absl::StatusOr<std::unique_ptr<SpecTemplate>> parsed =
      SpecTemplate::Parse(spec, format, source);
  if (!parsed.ok()) return parsed.status();
  const std::string name((*parsed)->name());
  for (const KernelTemplate* t : AllTemplates()) {
    if (t->name() != name) continue;
    if (t->SourceHash() == (*parsed)->SourceHash()) return t;
    return absl::AlreadyExistsError(
        absl::StrCat("a different template named ", name, " is registered"));
  }
  {
    Registry& r = TheRegistry();
    absl::MutexLock lock(&r.mu);
    if (r.templates.size() - r.built_in >= kMaxRegisteredTemplates) {
      return absl::ResourceExhaustedError(
          absl::StrCat("template ", name, ": this process already holds ",
                       kMaxRegisteredTemplates, " registered templates"));
    }
  }
  if (absl::Status s = RegisterOp((*parsed)->Op()); !s.ok()) return s;
  const KernelTemplate* raw = parsed->get();
  if (absl::Status s = RegisterTemplate(*std::move(parsed)); !s.ok()) return s;
  return raw;
}

absl::StatusOr<const KernelTemplate*> RegisterSpecFile(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<SpecTemplate>> loaded =
      SpecTemplate::Load(path);
  if (!loaded.ok()) return loaded.status();
  return RegisterSpecTemplate((*loaded)->spec_text(), (*loaded)->spec_format(),
                              std::string((*loaded)->source()));
}

absl::StatusOr<const KernelTemplate*> FindTemplate(absl::string_view op,
                                                   absl::string_view name) {
  std::vector<std::string> names;
  for (const KernelTemplate* t : AllTemplates()) {
    if (name.empty() ? t->op() == op : t->name() == name) return t;
    names.push_back(absl::StrCat(t->name(), " (", t->op(), ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      name.empty() ? absl::StrCat("no template for op '", op, "'")
                   : absl::StrCat("no template named '", name, "'"),
      "; templates: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<const KernelTemplate*> FindTemplateFor(const Workload& workload,
                                                      absl::string_view name) {
  std::vector<std::string> names;
  for (const KernelTemplate* t : AllTemplates()) {
    if (t->op() != workload.op()) continue;
    const bool named = name.empty() || t->name() == name;
    if (named && t->Accepts(workload)) return t;
    names.push_back(std::string(t->name()));
  }
  return absl::NotFoundError(absl::StrCat(
      name.empty() ? "no template" : absl::StrCat("template '", name, "'"),
      " runs ", workload.Canonical(), "; templates of ", workload.op(), ": ",
      names.empty() ? "none" : absl::StrJoin(names, ", ")));
}

}  // namespace tunefleet::templates
