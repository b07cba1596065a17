#include "search_space/table.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/json_limits.h"
#include "nlohmann/json.hpp"

namespace tunefleet::search_space {
namespace {

using nlohmann::json;

// Rows as text, before knob domains are known.
struct RawTable {
  std::string format;
  std::vector<std::string> knobs;
  struct Row {
    std::vector<std::string> values;
    double time_ms = 0;
    bool ok = false;
  };
  std::vector<Row> rows;
  std::map<std::string, std::string> metadata;
};

absl::Status Invalid(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("table ", name, ": ", what));
}

// Why a knob name or label cannot be written back as CSV (TableToCsv),
// or nullptr when it can: no commas or control characters, and names
// neither look like a comment or JSON nor take a CSV column's reserved name.
const char* CsvTrouble(absl::string_view text, bool is_name) {
  for (char c : text) {
    if (c == ',') return "holds a comma";
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
      return "holds a control character";
    }
  }
  if (!is_name) return nullptr;
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return "is empty";
  if (t.front() == '#' || t.front() == '{') return "starts with # or {";
  if (t == "time_ms" || t == "time" || t == "error" || t == "gflops" ||
      t == "trial_id") {
    return "is the name of a result column";
  }
  return nullptr;
}

// A JSON scalar as text: integers exactly, other numbers with %.17g.
std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    const double d = v.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 1e15) {
      return std::to_string(static_cast<int64_t>(d));
    }
    return absl::StrCat(d);
  }
  return v.dump();
}

absl::Status ParseCsv(absl::string_view text, absl::string_view name,
                      RawTable& raw) {
  raw.format = "csv";
  std::vector<std::string> header;
  int time_col = -1, error_col = -1;
  std::vector<int> knob_cols;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    if (absl::ConsumePrefix(&line, "#")) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(line, absl::MaxSplits(':', 1));
      const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
      if (!key.empty() && !kv.second.empty()) {
        raw.metadata[std::string(key)] =
            std::string(absl::StripAsciiWhitespace(kv.second));
      }
      continue;
    }
    std::vector<std::string> fields;
    for (absl::string_view f : absl::StrSplit(line, ',')) {
      fields.emplace_back(absl::StripAsciiWhitespace(f));
    }
    if (header.empty()) {
      header = fields;
      for (size_t c = 0; c < header.size(); ++c) {
        const std::string& h = header[c];
        if (h == "time_ms" || h == "time") {
          time_col = static_cast<int>(c);
        } else if (h == "error") {
          error_col = static_cast<int>(c);
        } else if (h != "gflops" && h != "trial_id") {
          knob_cols.push_back(static_cast<int>(c));
          raw.knobs.push_back(h);
        }
      }
      if (time_col < 0) {
        return Invalid(name, "no time column (expected time_ms or time)");
      }
      if (raw.knobs.empty()) return Invalid(name, "no knob columns");
      continue;
    }
    if (fields.size() != header.size()) {
      return Invalid(name,
                     absl::StrCat("line ", line_no, " has ", fields.size(),
                                  " fields, the header ", header.size()));
    }
    RawTable::Row row;
    for (int c : knob_cols) row.values.push_back(fields[c]);
    const std::string& time = fields[time_col];
    const bool failed = (error_col >= 0 && fields[error_col] != "OK") ||
                        time.empty() || absl::AsciiStrToLower(time) == "inf";
    if (!failed && (!absl::SimpleAtod(time, &row.time_ms) ||
                    !std::isfinite(row.time_ms) || row.time_ms <= 0)) {
      return Invalid(name, absl::StrCat("line ", line_no, ": time '", time,
                                        "' is not a positive number"));
    }
    row.ok = !failed;
    raw.rows.push_back(std::move(row));
  }
  if (header.empty()) return Invalid(name, "is empty");
  return absl::OkStatus();
}

// A time field of a JSON entry: true with the time when it is a usable
// positive number, false for a failed config. Errors for other junk.
absl::StatusOr<bool> JsonTime(const json& entry, const char* key,
                              absl::string_view name, double* time_ms) {
  if (!entry.contains(key)) {
    return Invalid(name, absl::StrCat("an entry has no \"", key, "\""));
  }
  const json& t = entry[key];
  if (t.is_string()) {
    // Kernel Tuner writes failures as strings ("InvalidConfig", ...);
    // a numeric string is a time.
    if (absl::SimpleAtod(t.get<std::string>(), time_ms) && *time_ms > 0 &&
        *time_ms < 1e20) {
      return true;
    }
    return false;
  }
  if (!t.is_number()) {
    return Invalid(name,
                   absl::StrCat("\"", key, "\" is not a number: ", t.dump()));
  }
  *time_ms = t.get<double>();
  return std::isfinite(*time_ms) && *time_ms > 0 && *time_ms < 1e20;
}

absl::Status ParseKernelTuner(const json& doc, absl::string_view name,
                              RawTable& raw) {
  raw.format = "kernel_tuner";
  if (!doc["tune_params_keys"].is_array()) {
    return Invalid(name, "\"tune_params_keys\" is not a list");
  }
  for (const json& k : doc["tune_params_keys"])
    raw.knobs.push_back(ValueText(k));
  if (doc.contains("device_name")) {
    raw.metadata["device"] = ValueText(doc["device_name"]);
  }
  if (doc.contains("kernel_name")) {
    raw.metadata["kernel"] = ValueText(doc["kernel_name"]);
  }
  for (const auto& [key, entry] : doc["cache"].items()) {
    RawTable::Row row;
    for (const std::string& k : raw.knobs) {
      if (!entry.contains(k)) {
        return Invalid(
            name, absl::StrCat("cache entry ", key, " has no value for ", k));
      }
      row.values.push_back(ValueText(entry[k]));
    }
    absl::StatusOr<bool> ok = JsonTime(entry, "time", name, &row.time_ms);
    if (!ok.ok()) return ok.status();
    row.ok = *ok;
    raw.rows.push_back(std::move(row));
  }
  return absl::OkStatus();
}

// CLBlast's tuner and tunefleet's JSON: "results" of parameter maps.
absl::Status ParseResults(const json& doc, absl::string_view name,
                          const char* params_key, const char* time_key,
                          RawTable& raw) {
  std::set<std::string> names;
  for (const json& r : doc["results"]) {
    if (!r.contains(params_key) || !r[params_key].is_object()) {
      return Invalid(
          name, absl::StrCat("a result has no \"", params_key, "\" object"));
    }
    for (const auto& [k, v] : r[params_key].items()) names.insert(k);
  }
  raw.knobs.assign(names.begin(), names.end());
  if (doc.contains("knobs") && doc["knobs"].is_array()) {
    raw.knobs.clear();
    for (const json& k : doc["knobs"]) raw.knobs.push_back(ValueText(k));
  }
  for (const json& r : doc["results"]) {
    RawTable::Row row;
    for (const std::string& k : raw.knobs) {
      if (!r[params_key].contains(k)) {
        return Invalid(name, absl::StrCat("a result has no value for ", k));
      }
      row.values.push_back(ValueText(r[params_key][k]));
    }
    absl::StatusOr<bool> ok = JsonTime(r, time_key, name, &row.time_ms);
    if (!ok.ok()) return ok.status();
    row.ok = *ok && (!r.contains("error") || r["error"] == "OK");
    raw.rows.push_back(std::move(row));
  }
  for (const auto& [k, v] : doc.items()) {
    if (k != "results" && k != "knobs" && !v.is_structured()) {
      raw.metadata[k] = ValueText(v);
    }
  }
  if (doc.contains("metadata") && doc["metadata"].is_object()) {
    for (const auto& [k, v] : doc["metadata"].items()) {
      raw.metadata[k] = ValueText(v);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseJson(absl::string_view text, absl::string_view name,
                       RawTable& raw) {
  if (base::JsonDepth(text) > kMaxTableJsonDepth) {
    return Invalid(name, absl::StrCat("is nested deeper than ",
                                      kMaxTableJsonDepth, " levels"));
  }
  const json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Invalid(name, "is not a valid JSON object");
  }
  if (doc.contains("cache") && doc.contains("tune_params_keys")) {
    return ParseKernelTuner(doc, name, raw);
  }
  if (doc.contains("results") && doc["results"].is_array()) {
    const json& results = doc["results"];
    if (!results.empty() && results[0].contains("parameters")) {
      raw.format = "clblast";
      return ParseResults(doc, name, "parameters", "time", raw);
    }
    raw.format = "json";
    return ParseResults(doc, name, "config", "time_ms", raw);
  }
  return Invalid(name,
                 "unrecognised JSON: expected a Kernel Tuner cache "
                 "(\"tune_params_keys\", \"cache\"), CLBlast tuner output or "
                 "tunefleet JSON (\"results\")");
}

// OK when the knob names can be written back as CSV and none repeats.
absl::Status CheckKnobNames(const std::vector<std::string>& knobs,
                            absl::string_view name) {
  if (knobs.empty()) return Invalid(name, "no knob columns");
  for (size_t k = 0; k < knobs.size(); ++k) {
    if (const char* why = CsvTrouble(knobs[k], true)) {
      return Invalid(name, absl::StrCat("knob name '", absl::CEscape(knobs[k]),
                                        "' ", why));
    }
    if (std::find(knobs.begin(), knobs.begin() + k, knobs[k]) !=
        knobs.begin() + k) {
      return Invalid(name,
                     absl::StrCat("knob '", knobs[k], "' is named twice"));
    }
  }
  return absl::OkStatus();
}

// Column `k` as a knob: integers keep their values, anything else is
// categorical (values 0..n-1, in label order, with the labels in
// *labels). Fills `position` with each text's position among the values.
absl::StatusOr<KnobSpec> KnobOfColumn(const RawTable& raw, size_t k,
                                      absl::string_view name,
                                      std::map<std::string, uint32_t>& position,
                                      std::vector<std::string>* labels_out) {
  bool numeric = true;
  std::set<int64_t> numbers;
  std::set<std::string> labels;
  for (const RawTable::Row& r : raw.rows) {
    if (const char* why = CsvTrouble(r.values[k], false)) {
      return Invalid(name,
                     absl::StrCat("a value of knob ", raw.knobs[k], ", '",
                                  absl::CEscape(r.values[k]), "', ", why));
    }
    int64_t v = 0;
    numeric = numeric && absl::SimpleAtoi(r.values[k], &v);
    numbers.insert(v);
    labels.insert(r.values[k]);
  }
  KnobSpec spec;
  spec.name = raw.knobs[k];
  if (numeric) {
    spec.values.assign(numbers.begin(), numbers.end());
    spec.size_like = spec.values.front() > 0;
    for (size_t i = 0; i < spec.values.size(); ++i) {
      position[std::to_string(spec.values[i])] = static_cast<uint32_t>(i);
    }
    // Texts like "08" name the same value as "8".
    for (const std::string& l : labels) {
      int64_t v = 0;
      (void)absl::SimpleAtoi(l, &v);  // numeric: it parsed above
      position[l] = position[std::to_string(v)];
    }
    return spec;
  }
  labels_out->assign(labels.begin(), labels.end());
  for (size_t i = 0; i < labels_out->size(); ++i) {
    spec.values.push_back(static_cast<int64_t>(i));
    position[(*labels_out)[i]] = static_cast<uint32_t>(i);
  }
  spec.size_like = false;
  return spec;
}

absl::StatusOr<Table> Build(RawTable raw, absl::string_view name) {
  Table t;
  t.format = raw.format;
  t.metadata = std::move(raw.metadata);
  const size_t n = raw.knobs.size();
  if (absl::Status s = CheckKnobNames(raw.knobs, name); !s.ok()) return s;
  if (raw.rows.empty()) return Invalid(name, "has no rows");
  std::vector<std::map<std::string, uint32_t>> position(n);
  for (size_t k = 0; k < n; ++k) {
    t.labels.emplace_back();
    absl::StatusOr<KnobSpec> spec =
        KnobOfColumn(raw, k, name, position[k], &t.labels.back());
    if (!spec.ok()) return spec.status();
    t.knobs.push_back(*std::move(spec));
  }
  // One row per config; a config measured twice keeps its best time.
  std::map<std::vector<uint32_t>, Table::Row> unique;
  for (const RawTable::Row& r : raw.rows) {
    Table::Row row;
    for (size_t k = 0; k < n; ++k)
      row.digits.push_back(position[k][r.values[k]]);
    row.ok = r.ok;
    row.time_ms = r.time_ms;
    auto [it, fresh] = unique.emplace(row.digits, row);
    if (!fresh && row.ok &&
        (!it->second.ok || row.time_ms < it->second.time_ms)) {
      it->second = row;
    }
  }
  for (auto& [digits, row] : unique) {
    if (row.ok && (t.best_time_ms == 0 || row.time_ms < t.best_time_ms)) {
      t.best_time_ms = row.time_ms;
    }
    t.rows.push_back(std::move(row));
  }
  if (t.best_time_ms == 0) return Invalid(name, "has no successful config");
  double raw_size = 1;
  for (const KnobSpec& k : t.knobs) raw_size *= k.values.size();
  if (raw_size > 1e18) {
    return Invalid(name, "has too many knob combinations to index");
  }
  return t;
}

}  // namespace

std::unique_ptr<SearchSpace> Table::MakeSpace() const {
  std::vector<uint64_t> valid;
  valid.reserve(rows.size());
  SearchSpace indexer(knobs, std::vector<uint64_t>{});
  for (const Row& r : rows) valid.push_back(indexer.IndexOf(r.digits));
  return std::make_unique<SearchSpace>(knobs, std::move(valid));
}

absl::flat_hash_map<uint64_t, const Table::Row*> Table::RowsByIndex() const {
  SearchSpace indexer(knobs, std::vector<uint64_t>{});
  absl::flat_hash_map<uint64_t, const Row*> out;
  for (const Row& r : rows) out[indexer.IndexOf(r.digits)] = &r;
  return out;
}

absl::StatusOr<Table> ParseTable(absl::string_view text,
                                 absl::string_view name) {
  if (text.size() > kMaxTableBytes) {
    return Invalid(name, absl::StrCat("is over ", kMaxTableBytes, " bytes"));
  }
  RawTable raw;
  const absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(text);
  if (trimmed.empty()) return Invalid(name, "is empty");
  absl::Status s = trimmed.front() == '{' ? ParseJson(trimmed, name, raw)
                                          : ParseCsv(trimmed, name, raw);
  if (!s.ok()) return s;
  return Build(std::move(raw), name);
}

absl::StatusOr<Table> LoadTable(const std::string& path) {
  // gzopen reads plain and gzip-compressed files alike.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot read table ", path));
  }
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) {
    text.append(buffer, n);
    // A small compressed file may inflate without bound.
    if (text.size() > kMaxTableBytes) break;
  }
  const bool failed = n < 0;
  gzclose(file);
  if (text.size() > kMaxTableBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table ", path, ": over ", kMaxTableBytes, " bytes uncompressed"));
  }
  if (failed) {
    return absl::InvalidArgumentError(
        absl::StrCat("table ", path, ": corrupt compressed data"));
  }
  return ParseTable(text, path);
}

std::string TableToCsv(const Table& table) {
  std::string out;
  // Metadata read from JSON may hold line breaks: one line each here.
  auto one_line = [](absl::string_view text) {
    std::string s(text);
    for (char& c : s) {
      if (absl::ascii_iscntrl(static_cast<unsigned char>(c))) c = ' ';
    }
    return s;
  };
  for (const auto& [key, value] : table.metadata) {
    absl::StrAppend(&out, "# ", one_line(key), ": ", one_line(value), "\n");
  }
  for (const KnobSpec& k : table.knobs) absl::StrAppend(&out, k.name, ",");
  absl::StrAppend(&out, "time_ms,error\n");
  for (const Table::Row& r : table.rows) {
    for (size_t k = 0; k < table.knobs.size(); ++k) {
      const std::vector<std::string>& labels = table.labels[k];
      absl::StrAppend(&out,
                      labels.empty()
                          ? absl::StrCat(table.knobs[k].values[r.digits[k]])
                          : labels[r.digits[k]],
                      ",");
    }
    absl::StrAppend(&out, r.ok ? absl::StrCat(r.time_ms) : "", ",",
                    r.ok ? "OK" : "FAILED", "\n");
  }
  return out;
}

}  // namespace tunefleet::search_space
