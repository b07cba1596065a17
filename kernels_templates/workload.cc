#include "kernels_templates/workload.h"

#include <algorithm>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tunefleet::templates {
namespace {

const std::vector<OpSpec>& Ops() {
  static const std::vector<OpSpec> ops = {
      {"gemm", {"M", "N", "K"}, {"fp32"}},
  };
  return ops;
}

}  // namespace

const OpSpec* FindOp(absl::string_view op) {
  for (const OpSpec& spec : Ops()) {
    if (spec.name == op) return &spec;
  }
  return nullptr;
}

std::vector<absl::string_view> KnownOps() {
  std::vector<absl::string_view> names;
  for (const OpSpec& spec : Ops()) names.push_back(spec.name);
  return names;
}

absl::StatusOr<Workload> Workload::Create(absl::string_view op,
                                          std::vector<Dim> dims,
                                          absl::string_view dtype) {
  const OpSpec* spec = FindOp(op);
  if (spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown op '", op, "'; known ops: ", absl::StrJoin(KnownOps(), ", ")));
  }
  if (std::find(spec->dtypes.begin(), spec->dtypes.end(), dtype) ==
      spec->dtypes.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype '", dtype, "' is not supported by op ", op,
                     "; supported: ", absl::StrJoin(spec->dtypes, ", ")));
  }
  Workload w;
  w.op_ = std::string(op);
  w.dtype_ = std::string(dtype);
  for (absl::string_view name : spec->dims) {
    auto it = std::find_if(dims.begin(), dims.end(),
                           [&](const Dim& d) { return d.name == name; });
    if (it == dims.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape of ", op, " is missing dim ", name, " (", op,
                       " takes ", absl::StrJoin(spec->dims, ","), ")"));
    }
    if (it->value < 1 || it->value > kMaxDim) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape dim ", name, " must be between 1 and ", kMaxDim,
                       ", got ", it->value));
    }
    w.dims_.push_back(*it);
  }
  for (const Dim& d : dims) {
    if (std::count_if(dims.begin(), dims.end(),
                      [&](const Dim& o) { return o.name == d.name; }) > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape dim ", d.name, " is given more than once"));
    }
    if (std::find(spec->dims.begin(), spec->dims.end(), d.name) ==
        spec->dims.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op ", op, " has no dim '", d.name, "' (it takes ",
                       absl::StrJoin(spec->dims, ","), ")"));
    }
  }
  return w;
}

absl::StatusOr<Workload> Workload::Parse(absl::string_view op,
                                         absl::string_view shape,
                                         absl::string_view dtype) {
  std::vector<Dim> dims;
  for (absl::string_view token :
       absl::StrSplit(shape, absl::ByAnyChar(", ;"), absl::SkipWhitespace())) {
    std::vector<absl::string_view> kv = absl::StrSplit(token, '=');
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad shape token '", token, "': expected NAME=VALUE, e.g. M=512"));
    }
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv[1], &value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape dim ", kv[0], " has a non-integer value '", kv[1], "'"));
    }
    dims.push_back(Dim{std::string(kv[0]), value});
  }
  if (dims.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "empty shape for op ", op, "; expected e.g. ", "M=512,N=512,K=512"));
  }
  return Create(op, std::move(dims), dtype);
}

absl::StatusOr<Workload> Workload::ParseCanonical(absl::string_view text) {
  std::vector<absl::string_view> tokens =
      absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (tokens.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad workload '", text, "': expected e.g. 'gemm M=8 N=8 K=8 fp32'"));
  }
  absl::string_view dtype = "fp32";
  if (tokens.back().find('=') == absl::string_view::npos) {
    dtype = tokens.back();
    tokens.pop_back();
  }
  const absl::string_view op = tokens.front();
  tokens.erase(tokens.begin());
  return Parse(op, absl::StrJoin(tokens, ","), dtype);
}

int64_t Workload::dim(absl::string_view name) const {
  for (const Dim& d : dims_) {
    if (d.name == name) return d.value;
  }
  return 0;
}

std::string Workload::ShapeString() const {
  return absl::StrJoin(dims_, ",", [](std::string* out, const Dim& d) {
    absl::StrAppend(out, d.name, "=", d.value);
  });
}

std::string Workload::Canonical() const {
  std::string s = op_;
  for (const Dim& d : dims_) absl::StrAppend(&s, " ", d.name, "=", d.value);
  absl::StrAppend(&s, " ", dtype_);
  return s;
}

std::string Workload::Hash() const { return Fnv1aHex(Canonical()); }

std::string Fnv1aHex(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;  // FNV prime
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tunefleet::templates
