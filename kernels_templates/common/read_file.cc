#include "kernels_templates/common/read_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace tunefleet::templates {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", what, what.empty() ? "" : " ", path));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace tunefleet::templates
