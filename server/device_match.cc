#include "server/device_match.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/text_format.h"

namespace tunefleet::server {
namespace {

using google::protobuf::FieldDescriptor;

// DeviceInfo fields that must match, in the order they are reported.
constexpr const char* kMatchedFields[] = {"device_name",
                                          "vendor_id",
                                          "device_type",
                                          "driver_version",
                                          "compute_units",
                                          "max_work_group_size",
                                          "max_work_item_sizes",
                                          "local_mem_bytes",
                                          "local_mem_is_global",
                                          "max_mem_alloc_bytes",
                                          "preferred_vector_width_float",
                                          "image_support",
                                          "image2d_max_width",
                                          "image2d_max_height"};

// A field's value as text; repeated fields as "[a, b]".
std::string FieldText(const tunefleet::v1::DeviceInfo& info,
                      const FieldDescriptor* field) {
  std::string text;
  if (!field->is_repeated()) {
    google::protobuf::TextFormat::PrintFieldValueToString(info, field, -1,
                                                          &text);
    return text;
  }
  const int n = info.GetReflection()->FieldSize(info, field);
  std::vector<std::string> items(n);
  for (int i = 0; i < n; ++i) {
    google::protobuf::TextFormat::PrintFieldValueToString(info, field, i,
                                                          &items[i]);
  }
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

std::vector<std::string> Sorted(
    const google::protobuf::RepeatedPtrField<std::string>& list) {
  std::vector<std::string> out(list.begin(), list.end());
  std::sort(out.begin(), out.end());
  return out;
}

// The extensions one lists and the other does not, e.g.
// "extensions: cl_khr_fp16 missing; cl_arm_printf extra".
std::string ExtensionDifference(const tunefleet::v1::DeviceInfo& joining,
                                const tunefleet::v1::DeviceInfo& serving) {
  const std::vector<std::string> mine = Sorted(joining.extensions());
  const std::vector<std::string> theirs = Sorted(serving.extensions());
  std::vector<std::string> missing, extra;
  std::set_difference(theirs.begin(), theirs.end(), mine.begin(), mine.end(),
                      std::back_inserter(missing));
  std::set_difference(mine.begin(), mine.end(), theirs.begin(), theirs.end(),
                      std::back_inserter(extra));
  if (missing.empty() && extra.empty()) return "";
  std::vector<std::string> parts;
  if (!missing.empty()) {
    parts.push_back(absl::StrCat(absl::StrJoin(missing, " "), " missing"));
  }
  if (!extra.empty()) {
    parts.push_back(absl::StrCat(absl::StrJoin(extra, " "), " extra"));
  }
  return absl::StrCat("extensions: ", absl::StrJoin(parts, "; "));
}

// Whether `info` reports `field`: non-default (proto3 scalars), or
// non-empty (repeated).
bool Reports(const tunefleet::v1::DeviceInfo& info,
             const FieldDescriptor* field) {
  const google::protobuf::Reflection* r = info.GetReflection();
  return field->is_repeated() ? r->FieldSize(info, field) > 0
                              : r->HasField(info, field);
}

}  // namespace

std::string DeviceDifference(const tunefleet::v1::DeviceInfo& joining,
                             const tunefleet::v1::DeviceInfo& serving,
                             bool same_agent_build) {
  const google::protobuf::Descriptor* d =
      tunefleet::v1::DeviceInfo::descriptor();
  for (const char* name : kMatchedFields) {
    const FieldDescriptor* field = d->FindFieldByName(name);
    if (!same_agent_build &&
        (!Reports(joining, field) || !Reports(serving, field))) {
      continue;
    }
    const std::string mine = FieldText(joining, field);
    const std::string theirs = FieldText(serving, field);
    if (mine != theirs) return absl::StrCat(name, " ", mine, ", not ", theirs);
  }
  return ExtensionDifference(joining, serving);
}

}  // namespace tunefleet::server
