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

// DeviceInfo fields that must match, in the order they are reported, with
// the Hello.device_info_revision that introduced them.
struct MatchedField {
  const char* name;
  uint32_t revision;
};
// Not driver_version: a key's agents may run different drivers, each a
// driver revision of the key (docs/DRIVER_DRIFT.md).
constexpr MatchedField kMatchedFields[] = {{"device_name", 0},
                                           {"vendor_id", 0},
                                           {"device_type", 0},
                                           {"device_version", 0},
                                           {"compute_units", 0},
                                           {"max_work_group_size", 0},
                                           {"max_work_item_sizes", 0},
                                           {"local_mem_bytes", 0},
                                           {"local_mem_is_global", 0},
                                           {"max_mem_alloc_bytes", 0},
                                           {"preferred_vector_width_float", 0},
                                           {"image_support", 1},
                                           {"image2d_max_width", 1},
                                           {"image2d_max_height", 1},
                                           {"libraries", 2}};

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

}  // namespace

std::string DeviceDifference(const tunefleet::v1::DeviceInfo& joining,
                             const tunefleet::v1::DeviceInfo& serving,
                             uint32_t revision) {
  const google::protobuf::Descriptor* d =
      tunefleet::v1::DeviceInfo::descriptor();
  for (const auto& [name, introduced] : kMatchedFields) {
    const FieldDescriptor* field = d->FindFieldByName(name);
    if (field == nullptr || introduced > revision) continue;
    const std::string mine = FieldText(joining, field);
    const std::string theirs = FieldText(serving, field);
    if (mine != theirs) return absl::StrCat(name, " ", mine, ", not ", theirs);
  }
  return ExtensionDifference(joining, serving);
}

tunefleet::v1::DeviceInfo WithUnreportedFields(
    const tunefleet::v1::DeviceInfo& reported,
    const tunefleet::v1::DeviceInfo& stored, uint32_t revision) {
  // The DeviceInfo field numbers each revision introduced
  // (contract/device_info_revision.h).
  struct Introduced {
    uint32_t revision;
    int first, last;
  };
  constexpr Introduced kIntroduced[] = {{1, 22, 26}, {2, 27, 27}};
  tunefleet::v1::DeviceInfo out = reported;
  const google::protobuf::Reflection* r = out.GetReflection();
  for (const Introduced& added : kIntroduced) {
    if (added.revision <= revision) continue;
    for (int number = added.first; number <= added.last; ++number) {
      const FieldDescriptor* field =
          tunefleet::v1::DeviceInfo::descriptor()->FindFieldByNumber(number);
      if (field == nullptr) continue;
      r->ClearField(&out, field);
      if (field->is_repeated()) {
        for (int i = 0; i < r->FieldSize(stored, field); ++i) {
          r->AddString(&out, field, r->GetRepeatedString(stored, field, i));
        }
        continue;
      }
      switch (field->cpp_type()) {
        case FieldDescriptor::CPPTYPE_BOOL:
          r->SetBool(&out, field, r->GetBool(stored, field));
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          r->SetUInt32(&out, field, r->GetUInt32(stored, field));
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          r->SetUInt64(&out, field, r->GetUInt64(stored, field));
          break;
        default:
          break;
      }
    }
  }
  return out;
}

}  // namespace tunefleet::server
