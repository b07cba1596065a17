#include "kernels_templates/registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels_templates/gemm/gemm_template.h"

namespace tunefleet::templates {

const std::vector<const KernelTemplate*>& BuiltinTemplates() {
  static const GemmTemplate gemm;
  static const std::vector<const KernelTemplate*> all = {&gemm};
  return all;
}

absl::StatusOr<const KernelTemplate*> FindTemplate(absl::string_view op,
                                                   absl::string_view name) {
  std::vector<std::string> names;
  for (const KernelTemplate* t : BuiltinTemplates()) {
    if (name.empty() ? t->op() == op : t->name() == name) return t;
    names.push_back(absl::StrCat(t->name(), " (", t->op(), ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      name.empty() ? absl::StrCat("no template for op '", op, "'")
                   : absl::StrCat("no template named '", name, "'"),
      "; templates: ", absl::StrJoin(names, ", ")));
}

}  // namespace tunefleet::templates
