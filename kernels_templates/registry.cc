#include "kernels_templates/registry.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "kernels_templates/builtin_templates.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::templates {
namespace {

struct Registry {
  Registry() {
    absl::StatusOr<std::vector<std::unique_ptr<KernelTemplate>>> builtin =
        LoadBuiltinTemplates();
    if (!builtin.ok()) {
      // A built-in spec that does not parse is a defect of this build.
      std::fprintf(stderr, "tunefleet: built-in templates: %s\n",
                   builtin.status().ToString().c_str());
      std::abort();
    }
    absl::MutexLock lock(&mu);
    templates = *std::move(builtin);
    built_in = templates.size();
  }

  // The template called `name`, or null.
  const KernelTemplate* Named(absl::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (const auto& t : templates) {
      if (t->name() == name) return t.get();
    }
    return nullptr;
  }

  // OK while users may register another template.
  absl::Status CheckRoom(absl::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (templates.size() - built_in < kMaxRegisteredTemplates) {
      return absl::OkStatus();
    }
    return absl::ResourceExhaustedError(
        absl::StrCat("template ", name, ": this process already holds ",
                     kMaxRegisteredTemplates, " registered templates"));
  }

  absl::Mutex mu;
  std::vector<std::unique_ptr<KernelTemplate>> templates ABSL_GUARDED_BY(mu);
  size_t built_in = 0;  // the first templates, loaded above
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
  if (r.Named(tmpl->name()) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("a template named ", tmpl->name(), " exists"));
  }
  if (absl::Status s = r.CheckRoom(tmpl->name()); !s.ok()) return s;
  r.templates.push_back(std::move(tmpl));
  return absl::OkStatus();
}

absl::StatusOr<PendingTemplate> ParseUserTemplate(
    const std::string& spec, const std::string& format,
    const std::string& source, const std::string& reference_source) {
  absl::StatusOr<std::unique_ptr<SpecTemplate>> parsed =
      SpecTemplate::Parse(spec, format, source, reference_source);
  if (!parsed.ok()) return parsed.status();
  PendingTemplate pending;
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  if (const KernelTemplate* t = r.Named((*parsed)->name())) {
    if (t->SourceHash() != (*parsed)->SourceHash()) {
      return absl::AlreadyExistsError(absl::StrCat(
          "a different template named ", (*parsed)->name(), " is registered"));
    }
    pending.existing_ = t;
    return pending;
  }
  if (absl::Status s = r.CheckRoom((*parsed)->name()); !s.ok()) return s;
  if (FindOp((*parsed)->op()) == nullptr) pending.new_op_ = (*parsed)->Op();
  pending.fresh_ = *std::move(parsed);
  return pending;
}

absl::StatusOr<const KernelTemplate*> CommitUserTemplate(
    PendingTemplate pending) {
  if (pending.registered()) return pending.existing_;
  const std::string hash = pending.fresh_->SourceHash();
  const std::string name(pending.fresh_->name());
  // Look-up, op and insertion under one lock: two identical registrations
  // racing both get the one template.
  Registry& r = TheRegistry();
  absl::MutexLock lock(&r.mu);
  if (const KernelTemplate* t = r.Named(name)) {
    if (t->SourceHash() == hash) return t;
    return absl::AlreadyExistsError(
        absl::StrCat("a different template named ", name, " is registered"));
  }
  if (absl::Status s = r.CheckRoom(name); !s.ok()) return s;
  if (pending.new_op_) {
    if (absl::Status s = RegisterOp(*pending.new_op_); !s.ok()) return s;
  }
  r.templates.push_back(std::move(pending.fresh_));
  return r.templates.back().get();
}

absl::StatusOr<const KernelTemplate*> RegisterSpecTemplate(
    const std::string& spec, const std::string& format,
    const std::string& source, const std::string& reference_source) {
  absl::StatusOr<PendingTemplate> pending =
      ParseUserTemplate(spec, format, source, reference_source);
  if (!pending.ok()) return pending.status();
  return CommitUserTemplate(*std::move(pending));
}

absl::StatusOr<const KernelTemplate*> RegisterSpecFile(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<SpecTemplate>> loaded =
      SpecTemplate::Load(path);
  if (!loaded.ok()) return loaded.status();
  return RegisterSpecTemplate((*loaded)->spec_text(), (*loaded)->spec_format(),
                              std::string((*loaded)->source()),
                              (*loaded)->reference_source());
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
      name.empty() ? "no template runs "
                   : absl::StrCat("template '", name, "' does not run "),
      workload.Canonical(), "; templates of ", workload.op(), ": ",
      names.empty() ? "none" : absl::StrJoin(names, ", ")));
}

}  // namespace tunefleet::templates
