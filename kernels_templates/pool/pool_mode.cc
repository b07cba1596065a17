#include "kernels_templates/pool/pool_mode.h"

#include "absl/strings/str_cat.h"
#include "kernels_templates/common/template_support.h"

namespace tunefleet::templates {

std::string PoolModeDefines(const Workload& w) {
  return absl::StrCat(" -DPOOL_MAX=", w.attr("mode") == "avg" ? 0 : 1,
                      PreambleDefines(w));
}

}  // namespace tunefleet::templates
