#include "emitter/emitter.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/files.h"
#include "base/hash.h"
#include "base/status_macros.h"
#include "emitter/choice.h"
#include "emitter/shape_code.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "kernels_templates/workload.h"
#include "trial/trial_request.h"

namespace tunefleet::emitter {

// Files of the emitted library, embedded from runtime/ (and the expression
// functions from kernels_templates/spec/).
absl::string_view EmitPublicHeader();
absl::string_view EmitTableHeader();
absl::string_view EmitRuntimeHeader();
absl::string_view EmitRuntime();
absl::string_view EmitTableFile();
absl::string_view EmitModelLoad();
absl::string_view EmitGemm();
absl::string_view EmitLibraryCalls();
absl::string_view EmitImages();
absl::string_view EmitImagePackKernels();
absl::string_view EmitCMakeLists();
absl::string_view EmitCMakeConfig();
absl::string_view EmitExpressionFunctions();
absl::string_view EmitModelHeader();
absl::string_view EmitModelPlanHeader();
absl::string_view EmitPlanFormatHeader();
absl::string_view EmitMemoryPlanHeader();
absl::string_view EmitClObjectsHeader();
absl::string_view EmitModel();
absl::string_view EmitPlanFormat();
absl::string_view EmitMemoryPlan();
absl::string_view EmitRecordingHeader();
absl::string_view EmitRecording();

namespace {

// A C++ string literal holding `text`, as raw-string pieces small enough
// for every compiler.
std::string CxxLiteral(absl::string_view text) {
  std::string out;
  for (size_t pos = 0; pos < text.size() || pos == 0; pos += 4000) {
    absl::StrAppend(&out, "    R\"tfsrc(", text.substr(pos, 4000),
                    ")tfsrc\"\n");
    if (text.empty()) break;
  }
  return out;
}

// How many of the buffers in `order` (a template's, in the order callers
// pass them) a caller must pass for `w`: all but the trailing ones the
// workload does not read. A buffer named as an attribute of the op whose
// default value is "none" (the "residual" of conv2d, depthwise_conv2d,
// dense and eltwise) is not read while the attribute is "none", so callers
// written before it existed keep passing the buffers they did.
int RequiredBuffers(const templates::Workload& w,
                    const std::vector<std::string>& order) {
  int required = static_cast<int>(order.size());
  while (required > 0 && templates::BufferUnread(w, order[required - 1])) {
    --required;
  }
  return required;
}

// One kernel or library-call argument as both tables write it (the
// runtime's Arg, tuned_table.h): 'i' an integer, 'b' the caller's buffer,
// 'f' the caller's float, 's' scratch bytes, 'm' a buffer as an image.
struct RowArg {
  char kind;
  long long value;
  long long rows = 0;
  long long row_elements = 0;
};

// An exact entry's launch as the caller's buffers and floats see it.
struct KernelRow {
  std::string library, routine;  // empty: no library call
  std::vector<RowArg> call_args, args;
  int num_buffers = 0, min_buffers = 0, num_floats = 0;
  int dims = 1;
  size_t global[3] = {1, 1, 1}, local[3] = {0, 0, 0};
};

// How many float arguments `l`'s kernel takes.
int FloatArgs(const templates::LaunchDesc& l) {
  return static_cast<int>(
      std::count_if(l.args.begin(), l.args.end(), [](const auto& a) {
        return a.kind == templates::ArgDesc::Kind::kFloat;
      }));
}

// `args` with buffers as their slot in `order`, scratch buffers as 's'
// with their size in bytes, floats numbered on from `floats`.
std::vector<RowArg> RowArgs(const std::vector<templates::ArgDesc>& args,
                            const std::vector<std::string>& order,
                            const std::map<std::string, uint64_t>& scratch,
                            int& floats) {
  std::vector<RowArg> out;
  for (const templates::ArgDesc& a : args) {
    const long long slot =
        std::find(order.begin(), order.end(), a.buffer) - order.begin();
    switch (a.kind) {
      case templates::ArgDesc::Kind::kInt:
        out.push_back({'i', static_cast<long long>(a.value)});
        break;
      case templates::ArgDesc::Kind::kBuffer:
        if (auto it = scratch.find(a.buffer); it != scratch.end()) {
          out.push_back({'s', static_cast<long long>(it->second)});
        } else {
          out.push_back({'b', slot});
        }
        break;
      case templates::ArgDesc::Kind::kFloat:
        out.push_back({'f', floats++});
        break;
      case templates::ArgDesc::Kind::kImage:
        out.push_back({'m', slot, static_cast<long long>(a.rows),
                       static_cast<long long>(a.row_elements)});
        break;
    }
  }
  return out;
}

// The exact launch `l` of `w` (a record's config, the reference kernel or
// a library call with its epilogue) as an entry runs it. Buffers in the
// order callers pass them: the template's, less its scratch (fill =
// "zero", after every other buffer), which the runtime keeps per command
// queue.
KernelRow MakeRow(const templates::Workload& w,
                  const templates::KernelTemplate& tmpl,
                  const templates::LaunchDesc& l) {
  std::vector<std::string> order;
  std::map<std::string, uint64_t> scratch;
  for (const templates::BufferDesc& b : tmpl.Buffers(w)) {
    if (b.zero_fill) {
      scratch[b.name] = b.elements * templates::ElementBytes(b.dtype);
    } else {
      order.push_back(b.name);
    }
  }
  KernelRow row;
  int floats = 0;
  if (l.library.has_value()) {
    row.library = l.library->name;
    row.routine = l.library->routine;
    row.call_args = RowArgs(l.library->args, order, scratch, floats);
  }
  // An epilogue's floats follow the call's, as the caller passes them.
  row.args = RowArgs(l.args, order, scratch, floats);
  // A library call without an epilogue kernel runs the workload with no
  // activation; callers still pass the workload's floats (those of its
  // reference kernel, the same for every entry of the workload), unused.
  if (l.library.has_value() && l.kernel_name.empty()) {
    floats = std::max(floats, FloatArgs(tmpl.ReferenceLaunch(w)));
  }
  row.num_buffers = static_cast<int>(order.size());
  row.min_buffers = RequiredBuffers(w, order);
  row.num_floats = floats;
  row.dims = std::max(1, static_cast<int>(l.global.size()));
  for (size_t d = 0; d < l.global.size() && d < 3; ++d) {
    row.global[d] = l.global[d];
  }
  for (size_t d = 0; d < l.local.size() && d < 3; ++d) {
    row.local[d] = l.local[d];
  }
  return row;
}

// SHA-256 of a kernel source, 64 lowercase hex digits: its identity in
// the library (kSourceHashes) and in table files.
std::string SourceHash(absl::string_view source) {
  return absl::BytesToHexString(base::Sha256(source));
}

// The generated table: device keys, distinct sources, the shape-generic
// templates of this build with their generated code, and the entries.
class TableWriter {
 public:
  // One driver revision of a device key (its driver is info's).
  int AddDevice(const std::string& key, const tunefleet::v1::DeviceInfo& info,
                int revision) {
    devices_ += absl::StrFormat(
        "    {\"%s\", \"%s\", \"%s\", \"%s\", %d},\n", absl::CEscape(key),
        absl::CEscape(info.vendor()), absl::CEscape(info.device_name()),
        absl::CEscape(info.driver_version()), revision);
    return num_devices_++;
  }
  int AddSource(const std::string& source) {
    auto [it, fresh] =
        sources_.emplace(source, static_cast<int>(sources_.size()));
    if (fresh) source_order_.push_back(source);
    return it->second;
  }

  // Adds every shape-generic template of the registry, with its source as
  // that of its default config (so a library always has one, whatever its
  // records). A template whose code cannot be generated is left to exact
  // entries.
  void AddShapeTemplates() {
    for (const templates::KernelTemplate* t : templates::AllTemplates()) {
      const auto* spec = dynamic_cast<const templates::SpecTemplate*>(t);
      if (spec == nullptr || !spec->model().shape_generic) continue;
      const int index = static_cast<int>(shape_specs_.size());
      absl::StatusOr<ShapeCode> code = GenerateShapeCode(
          *spec, index, AddSource(std::string(spec->source())));
      if (!code.ok()) continue;
      shape_specs_.push_back(spec);
      ops_.insert(std::string(spec->op()));
      AddDtypes(spec->op());
      shape_code_ += code->definitions;
      shape_templates_ += absl::StrCat("    ", code->entry, ",\n");
    }
  }
  // The fp16 and element_bytes values of the dtypes of `op`, as the tuner
  // computes them.
  void AddDtypes(absl::string_view op) {
    const templates::OpSpec* spec = templates::FindOp(op);
    for (size_t i = 0; spec != nullptr && i < spec->dtypes.size(); ++i) {
      const templates::Dtype dtype = spec->dtypes[i];
      const std::string name(templates::DtypeName(dtype));
      if (!dtypes_.insert(name).second) continue;
      absl::StrAppend(&dtype_values_, "    {\"", absl::CEscape(name), "\", ",
                      dtype == templates::Dtype::kFp16 ? 1 : 0, ", ",
                      templates::ElementBytes(dtype), "},\n");
    }
  }
  // The index of the shape-generic template named `name`, or -1.
  int ShapeTemplate(absl::string_view name) const {
    for (size_t i = 0; i < shape_specs_.size(); ++i) {
      if (shape_specs_[i]->name() == name) return static_cast<int>(i);
    }
    return -1;
  }
  // An entry of a shape-generic template: the record's shape and config.
  void AddShapeEntry(int tmpl, int device, const templates::Workload& w,
                     const templates::KnobValues& config, int source,
                     const tunefleet::v1::TuningRecord& r) {
    const templates::SpecModel& m = shape_specs_[tmpl]->model();
    std::vector<std::string> attrs;
    for (const templates::SpecAttr& a : m.attrs) {
      double number = 0;
      for (const auto& [value, n] : a.values) {
        if (value == w.attr(a.name)) number = n;
      }
      attrs.push_back(absl::StrFormat("%.17g", number));
    }
    const int i = num_shape_entries_++;
    absl::StrAppend(
        &shape_arrays_, "const long long kEntryDims", i, "[] = {",
        absl::StrJoin(w.dims(), ", ",
                      [](std::string* out, const templates::Dim& d) {
                        absl::StrAppend(out, d.value);
                      }),
        "};\nconst long long kEntryKnobs", i, "[] = {",
        absl::StrJoin(config, ", "), "};\n");
    if (!attrs.empty()) {
      absl::StrAppend(&shape_arrays_, "const double kEntryAttrs", i, "[] = {",
                      absl::StrJoin(attrs, ", "), "};\n");
    }
    shape_entries_ += absl::StrFormat(
        "    {%d, %d, \"%s\", %s, kEntryDims%d, kEntryKnobs%d, %d, %.1f, "
        "%.3f},\n",
        tmpl, device, templates::DtypeName(w.dtype()),
        attrs.empty() ? "nullptr" : absl::StrCat("kEntryAttrs", i), i, i,
        source, r.time_ns(), r.gflops());
  }
  // A generic entry: the exact launch of a record's config, or its
  // library call followed by its epilogue kernel (`source` -1: none).
  void AddKernel(int device, const templates::Workload& w,
                 const templates::KernelTemplate& tmpl,
                 const templates::LaunchDesc& l, int source,
                 const std::string& config,
                 const tunefleet::v1::TuningRecord& r) {
    const KernelRow row = MakeRow(w, tmpl, l);
    int library = -1;
    if (!row.library.empty()) {
      const int first = AddArgs(row.call_args);
      library = num_library_calls_++;
      library_calls_ += absl::StrFormat(
          "    {\"%s\", \"%s\", %d, %d},\n", absl::CEscape(row.library),
          absl::CEscape(row.routine), first, num_args_ - first);
      libraries_.insert(row.library);
    }
    const int first_arg = AddArgs(row.args);
    kernels_ += absl::StrFormat(
        "    {%d, \"%s\", \"%s\", %d, \"%s\", \"%s\", %d, {%d, %d, %d}, "
        "{%d, %d, %d}, %d, %d, %d, %d, %.1f, %.3f, %d, %d, \"%s\"},\n",
        device, w.op(), w.Canonical(), source, l.kernel_name,
        absl::CEscape(l.build_options), row.dims, row.global[0], row.global[1],
        row.global[2], row.local[0], row.local[1], row.local[2], first_arg,
        num_args_ - first_arg, row.num_buffers, row.num_floats, r.time_ns(),
        r.gflops(), library, row.min_buffers, absl::CEscape(config));
    ops_.insert(w.op());
    ++num_kernels_;
  }

  // Vendor libraries some entry calls (the emitted CMake package links
  // them), e.g. {"clblast"}.
  const std::set<std::string>& libraries() const { return libraries_; }

  int entries() const { return num_shape_entries_ + num_kernels_; }

  // SHA-256 of each source, in kSources' order (kSourceHashes).
  std::vector<std::string> SourceHashes() const {
    std::vector<std::string> hashes;
    for (const std::string& source : source_order_) {
      hashes.push_back(SourceHash(source));
    }
    return hashes;
  }

  std::string Render() const {
    std::string s =
        "// Generated by `tunefleet emit`. Do not edit: run it again.\n"
        "#include <cmath>\n#include <string>\n\n"
        "#include \"expression_functions.h\"\n"
        "#include \"tuned_table.h\"\n\n"
        "namespace tunefleet_tuned::internal {\n\n"
        "const char* const kSources[] = {\n";
    for (const std::string& source : source_order_) {
      absl::StrAppend(&s, CxxLiteral(source), "    ,\n");
    }
    absl::StrAppend(&s, "};\n\nconst char* const kSourceHashes[] = {\n");
    for (const std::string& source : source_order_) {
      absl::StrAppend(&s, "    \"", SourceHash(source), "\",\n");
    }
    absl::StrAppend(&s, source_order_.empty() ? "    \"\",\n" : "",
                    "};\nconst size_t kNumSources = ", source_order_.size(),
                    ";\n");
    absl::StrAppend(
        &s, "\nconst Device kDevices[] = {\n", devices_,
        "};\nconst size_t kNumDevices = ", num_devices_, ";\n\nnamespace {\n\n",
        shape_code_, shape_arrays_, "}  // namespace\n\n",
        "const DtypeValues kDtypeValues[] = {\n", dtype_values_,
        dtypes_.empty() ? "    {\"\", 0, 0},\n" : "",
        "};\nconst size_t kNumDtypeValues = ", dtypes_.size(), ";\n\n",
        "const ShapeTemplate kShapeTemplates[] = {\n", shape_templates_,
        shape_specs_.empty() ? "    {},\n" : "",
        "};\nconst size_t kNumShapeTemplates = ", shape_specs_.size(),
        ";\n\nconst ShapeEntry kShapeEntries[] = {\n", shape_entries_,
        num_shape_entries_ == 0 ? "    {},\n" : "",
        "};\nconst size_t kNumShapeEntries = ", num_shape_entries_, ";\n",
        "\nconst Arg kArgs[] = {\n", args_,
        num_args_ == 0 ? "    {'i', 0},\n" : "",
        "};\n\nconst KernelEntry kKernelEntries[] = {\n", kernels_,
        num_kernels_ == 0 ? "    {0, \"\", \"\", 0, \"\", \"\", 1, {1, 1, 1}, "
                            "{0, 0, 0}, 0, 0, 0, 0, 0, 0, -1, 0, \"\"},\n"
                          : "",
        "};\nconst size_t kNumKernelEntries = ", num_kernels_, ";\n\n",
        "const LibraryCall kLibraryCalls[] = {\n", library_calls_,
        num_library_calls_ == 0 ? "    {\"\", \"\", 0, 0},\n" : "",
        "};\nconst size_t kNumLibraryCalls = ", num_library_calls_, ";\n\n",
        RenderOps(), "\n}  // namespace tunefleet_tuned::internal\n");
    return s;
  }

 private:
  // Appends `args` to kArgs; returns the index of the first.
  int AddArgs(const std::vector<RowArg>& args) {
    const int first = num_args_;
    for (const RowArg& a : args) {
      if (a.kind == 'm') {
        absl::StrAppend(&args_, "    {'m', ", a.value, ", ", a.rows, ", ",
                        a.row_elements, "},\n");
      } else {
        absl::StrAppend(&args_, "    {'", std::string(1, a.kind), "', ",
                        a.value, "},\n");
      }
      ++num_args_;
    }
    return first;
  }

  // kOps: how workload strings of the library's ops read (dims, their
  // defaults and minimums, attributes, dtypes), for the runtime's
  // CanonicalWorkload().
  std::string RenderOps() const {
    std::string arrays, ops;
    int i = 0;
    for (const std::string& name : ops_) {
      const templates::OpSpec* spec = templates::FindOp(name);
      if (spec == nullptr) continue;
      absl::StrAppend(&arrays, "const OpDim kOpDims", i, "[] = {\n");
      for (const templates::DimSpec& d : spec->dims) {
        absl::StrAppend(&arrays, "    {\"", absl::CEscape(d.name), "\", ",
                        d.default_value ? "true" : "false", ", ",
                        d.default_value.value_or(0), ", ", d.min_value, ", ",
                        d.in_shape_product ? "true" : "false", "},\n");
      }
      absl::StrAppend(&arrays, "};\n");
      std::string attrs = "nullptr";
      if (!spec->attrs.empty()) {
        attrs = absl::StrCat("kOpAttrs", i);
        std::string entries;
        for (size_t a = 0; a < spec->attrs.size(); ++a) {
          const templates::AttrSpec& attr = spec->attrs[a];
          absl::StrAppend(
              &arrays, "const char* const kOpAttrValues", i, "_", a, "[] = {",
              absl::StrJoin(attr.values, ", ",
                            [](std::string* out, absl::string_view v) {
                              absl::StrAppend(out, "\"", absl::CEscape(v),
                                              "\"");
                            }),
              "};\n");
          absl::StrAppend(&entries, "    {\"", absl::CEscape(attr.name), "\", ",
                          attr.values.size(), ", kOpAttrValues", i, "_", a,
                          ", nullptr},\n");
        }
        absl::StrAppend(&arrays, "const Attr ", attrs, "[] = {\n", entries,
                        "};\n");
      }
      std::vector<std::string> dtypes;
      for (templates::Dtype d : spec->dtypes) {
        dtypes.push_back(absl::StrCat("\"", templates::DtypeName(d), "\""));
      }
      if (dtypes.empty()) dtypes.push_back("\"fp32\"");
      absl::StrAppend(&arrays, "const char* const kOpDtypes", i, "[] = {",
                      absl::StrJoin(dtypes, ", "), "};\n");
      absl::StrAppend(&ops, "    {\"", absl::CEscape(name), "\", ",
                      spec->dims.size(), ", kOpDims", i, ", ",
                      spec->attrs.size(), ", ", attrs, ", ", dtypes.size(),
                      ", kOpDtypes", i, "},\n");
      ++i;
    }
    return absl::StrCat("namespace {\n\n", arrays,
                        "\n}  // namespace\n\nconst Op kOps[] = {\n", ops,
                        i == 0 ? "    {},\n" : "",
                        "};\nconst size_t kNumOps = ", i, ";\n");
  }

  std::string devices_, args_, kernels_, library_calls_;
  std::set<std::string> libraries_;
  int num_library_calls_ = 0;
  std::string shape_code_, shape_templates_, shape_arrays_, shape_entries_;
  std::string dtype_values_;
  std::set<std::string> dtypes_;
  std::vector<const templates::SpecTemplate*> shape_specs_;
  int num_devices_ = 0, num_args_ = 0, num_kernels_ = 0;
  int num_shape_entries_ = 0;
  std::map<std::string, int> sources_;
  std::vector<std::string> source_order_;
  std::set<std::string> ops_;  // of the entries and shape templates
};

// The table file an app loads at run time (table.tftable, format 2:
// docs/TABLES.md; read by the library's tuned_table_file.cc): every entry
// as an exact launch, its kernel source by SHA-256, a device line per
// driver revision of a key.
class TableFile {
 public:
  int AddDevice(const std::string& key, const tunefleet::v1::DeviceInfo& info,
                int revision) {
    absl::StrAppend(&devices_,
                    Line({"device", absl::StrCat(num_devices_), key,
                          info.vendor(), info.device_name(),
                          info.driver_version(), absl::StrCat(revision)}));
    return num_devices_++;
  }
  // The entry of `w` on device `device`: launch `l` of `source` (empty: a
  // library call alone).
  void AddEntry(int device, const templates::Workload& w,
                const templates::KernelTemplate& tmpl,
                const templates::LaunchDesc& l, const std::string& source,
                const std::string& config, double time_ns, double gflops) {
    const KernelRow row = MakeRow(w, tmpl, l);
    int source_index = -1;
    if (!source.empty()) {
      const std::string hash = SourceHash(source);
      auto [it, fresh] =
          sources_.emplace(hash, static_cast<int>(source_order_.size()));
      if (fresh) source_order_.push_back(hash);
      source_index = it->second;
    }
    const std::string call =
        row.library.empty() ? "-"
                            : absl::StrCat(row.library, " ", row.routine,
                                           row.call_args.empty() ? "" : " ",
                                           Args(row.call_args));
    absl::StrAppend(
        &entries_,
        Line({"entry", absl::StrCat(device), w.Canonical(),
              absl::StrCat(source_index), l.kernel_name, l.build_options,
              absl::StrCat(row.dims), absl::StrJoin(row.global, " "),
              absl::StrJoin(row.local, " "), absl::StrCat(row.num_buffers),
              absl::StrCat(row.min_buffers), absl::StrCat(row.num_floats),
              absl::StrFormat("%.1f", time_ns), absl::StrFormat("%.3f", gflops),
              config, Args(row.args), call}));
    ++num_entries_;
  }
  // The file, naming the library it was emitted with by the SHA-256 of
  // each of its built-in sources.
  std::string Render(const std::vector<std::string>& library_sources) const {
    std::string s = Line({"tunefleet-table", "2"});
    for (const std::string& hash : library_sources) {
      absl::StrAppend(&s, Line({"library", hash}));
    }
    absl::StrAppend(&s, devices_);
    for (size_t i = 0; i < source_order_.size(); ++i) {
      absl::StrAppend(&s, Line({"source", absl::StrCat(i), source_order_[i]}));
    }
    absl::StrAppend(&s, entries_, Line({"end", absl::StrCat(num_entries_)}));
    return s;
  }

 private:
  // Fields joined by tabs, a backslash escaping a tab, newline or itself.
  static std::string Line(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) line += '\t';
      for (char c : fields[i]) {
        if (c == '\t') {
          line += "\\t";
        } else if (c == '\n') {
          line += "\\n";
        } else if (c == '\\') {
          line += "\\\\";
        } else {
          line += c;
        }
      }
    }
    return line + "\n";
  }
  static std::string Args(const std::vector<RowArg>& args) {
    return absl::StrJoin(args, " ", [](std::string* out, const RowArg& a) {
      absl::StrAppend(out, std::string(1, a.kind), a.value);
      if (a.kind == 'm') absl::StrAppend(out, ":", a.rows, ":", a.row_elements);
    });
  }

  std::string devices_, entries_;
  int num_devices_ = 0, num_entries_ = 0;
  std::map<std::string, int> sources_;
  std::vector<std::string> source_order_;
};

// Adds the chosen kernel of a workload on device `device` to the table:
// the naive reference (tiny tasks, where launch overhead dominates), else
// an entry of its shape-generic template, else its exact launch.
void AddChoice(int device, const EntryChoice& c, TableWriter& table,
               TableFile& file, EmitSummary& summary) {
  const tunefleet::v1::TuningRecord& r = c.record;
  if (c.reference_ns.has_value()) {
    const templates::LaunchDesc l = c.tmpl->ReferenceLaunch(c.workload);
    tunefleet::v1::TuningRecord fallback = r;
    fallback.set_time_ns(*c.reference_ns);
    fallback.set_gflops(*c.reference_ns > 0
                            ? c.tmpl->Flops(c.workload) / *c.reference_ns
                            : 0.0);
    table.AddKernel(device, c.workload, *c.tmpl, l,
                    table.AddSource(std::string(l.source)), "reference",
                    fallback);
    file.AddEntry(device, c.workload, *c.tmpl, l, std::string(l.source),
                  "reference", fallback.time_ns(), fallback.gflops());
    ++summary.reference_entries;
    if (c.unmeasured) ++summary.unmeasured_entries;
    return;
  }
  const templates::LaunchDesc l = c.tmpl->Launch(c.config, c.workload);
  // The file has every entry as its exact launch, shape-generic ones too.
  file.AddEntry(device, c.workload, *c.tmpl, l,
                l.library.has_value() && l.source.empty() ? "" : c.source,
                c.tmpl->ConfigString(c.config), r.time_ns(), r.gflops());
  if (l.library.has_value()) {
    // The call, then its epilogue kernel when it has one.
    table.AddKernel(device, c.workload, *c.tmpl, l,
                    l.source.empty() ? -1 : table.AddSource(c.source),
                    c.tmpl->ConfigString(c.config), r);
    ++summary.library_entries;
  } else if (const int shape = table.ShapeTemplate(c.tmpl->name());
             shape >= 0) {
    table.AddShapeEntry(shape, device, c.workload, c.config,
                        table.AddSource(c.source), r);
  } else {
    table.AddKernel(device, c.workload, *c.tmpl, l, table.AddSource(c.source),
                    c.tmpl->ConfigString(c.config), r);
  }
}

// Adds the best records of one device key, per driver revision
// (ChooseRevisionEntries: a device line each) one entry per workload (the
// fastest template, library call or reference kernel); returns how many entries
// were added.
absl::StatusOr<int> AddDeviceRecords(data_source::RecordReader& records,
                                     const std::string& key, TableWriter& table,
                                     TableFile& file, EmitSummary& summary) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::vector<DeviceChoices> revisions,
                             ChooseRevisionEntries(records, key));
  int added = 0;
  for (DeviceChoices& chosen : revisions) {
    for (std::string& s : chosen.skipped) {
      summary.skipped.push_back(std::move(s));
    }
    if (chosen.order.empty()) continue;
    const int device = table.AddDevice(key, chosen.device, chosen.revision);
    file.AddDevice(key, chosen.device, chosen.revision);
    ++summary.driver_revisions;
    for (const std::string& workload : chosen.order) {
      AddChoice(device, chosen.entries.at(workload), table, file, summary);
    }
    added += static_cast<int>(chosen.order.size());
  }
  return added;
}

// src/tuned_image_pack.h: the agent's packing kernels (image_pack.cl), so
// that the library fills images as the agent did when it measured.
std::string ImagePackHeader() {
  return absl::StrCat(
      "// Generated by `tunefleet emit` from tunefleet's "
      "measure/image_pack.cl.\n#ifndef TUNEFLEET_TUNED_IMAGE_PACK_H_\n"
      "#define TUNEFLEET_TUNED_IMAGE_PACK_H_\n\n"
      "namespace tunefleet_tuned::internal {\n\n"
      "inline const char* const kImagePackSource =\n",
      CxxLiteral(EmitImagePackKernels()),
      "    ;\n\n}  // namespace tunefleet_tuned::internal\n\n#endif\n");
}

// The package's CMakeLists.txt: it finds and links a vendor library only
// when some entry calls it (`libraries`), so that a library without
// library entries builds where the vendor library is absent.
std::string CMakeListsFor(const std::set<std::string>& libraries) {
  std::string links;
  if (libraries.contains("clblast")) {
    links =
        "# Some entries call CLBlast (they measured fastest for their "
        "workload).\n"
        "find_library(TUNEFLEET_TUNED_CLBLAST_LIBRARY NAMES clblast)\n"
        "find_path(TUNEFLEET_TUNED_CLBLAST_INCLUDE clblast_c.h)\n"
        "if(NOT TUNEFLEET_TUNED_CLBLAST_LIBRARY OR NOT "
        "TUNEFLEET_TUNED_CLBLAST_INCLUDE)\n"
        "  message(FATAL_ERROR \"tunefleet_tuned: entries of this library "
        "call CLBlast; install it (Debian: libclblast-dev) or emit without "
        "its records\")\n"
        "endif()\n"
        "target_include_directories(tunefleet_tuned PRIVATE "
        "${TUNEFLEET_TUNED_CLBLAST_INCLUDE})\n"
        "target_compile_definitions(tunefleet_tuned PRIVATE "
        "TUNEFLEET_TUNED_CLBLAST=1)\n"
        "target_link_libraries(tunefleet_tuned PUBLIC "
        "${TUNEFLEET_TUNED_CLBLAST_LIBRARY})\n";
  }
  std::string text(EmitCMakeLists());
  const std::string marker = "# @LIBRARY_LINKS@\n";
  const size_t at = text.find(marker);
  if (at != std::string::npos) text.replace(at, marker.size(), links);
  return text;
}

}  // namespace

absl::StatusOr<EmitSummary> EmitLibrary(data_source::RecordReader& records,
                                        const EmitOptions& options) {
  if (options.device_keys.empty()) {
    return absl::InvalidArgumentError("device key: at least one is needed");
  }
  if (options.out_dir.empty()) {
    return absl::InvalidArgumentError("out: an output directory is needed");
  }
  EmitSummary summary;
  TableWriter table;
  TableFile table_file;
  table.AddShapeTemplates();
  for (const std::string& key : options.device_keys) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        int added, AddDeviceRecords(records, key, table, table_file, summary));
    if (added == 0) {
      return absl::NotFoundError(absl::StrCat(
          "device key ", key, " has no valid tuning record to emit"));
    }
  }
  for (const std::string& source : options.extra_sources) {
    table.AddSource(source);
  }
  summary.entries = table.entries();

  const std::filesystem::path out(options.out_dir);
  std::error_code ec;
  for (const char* dir : {"include", "src", "cmake"}) {
    std::filesystem::create_directories(out / dir, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat(
          "cannot create ", (out / dir).string(), ": ", ec.message()));
    }
  }
  const std::pair<const char*, std::string> files[] = {
      {"CMakeLists.txt", CMakeListsFor(table.libraries())},
      {"cmake/tunefleet_tunedConfig.cmake", std::string(EmitCMakeConfig())},
      {"include/tunefleet_tuned.h", std::string(EmitPublicHeader())},
      {"src/tuned_table.h", std::string(EmitTableHeader())},
      {"src/expression_functions.h", std::string(EmitExpressionFunctions())},
      {"src/tuned_runtime.h", std::string(EmitRuntimeHeader())},
      {"src/tuned_runtime.cc", std::string(EmitRuntime())},
      {"src/tuned_gemm.cc", std::string(EmitGemm())},
      {"src/tuned_library.cc", std::string(EmitLibraryCalls())},
      {"src/tuned_image.cc", std::string(EmitImages())},
      {"src/tuned_image_pack.h", ImagePackHeader()},
      {"src/tuned_table.cc", table.Render()},
      {"src/tuned_table_file.cc", std::string(EmitTableFile())},
      {"src/tuned_model_load.cc", std::string(EmitModelLoad())},
      // The same entries as a table file apps load at run time
      // (LoadTable(), docs/TABLES.md).
      {"table.tftable", table_file.Render(table.SourceHashes())},
      // The model runtime (tunefleet_tuned::Model, docs/MODEL_RUNTIME.md).
      {"include/tunefleet_model.h", std::string(EmitModelHeader())},
      {"include/model_plan.h", std::string(EmitModelPlanHeader())},
      {"include/plan_format.h", std::string(EmitPlanFormatHeader())},
      {"src/memory_plan.h", std::string(EmitMemoryPlanHeader())},
      {"src/cl_objects.h", std::string(EmitClObjectsHeader())},
      {"src/model.cc", std::string(EmitModel())},
      {"src/plan_format.cc", std::string(EmitPlanFormat())},
      {"src/memory_plan.cc", std::string(EmitMemoryPlan())},
      {"include/recording.h", std::string(EmitRecordingHeader())},
      {"src/recording.cc", std::string(EmitRecording())},
  };
  for (const auto& [name, text] : files) {
    TUNEFLEET_RETURN_IF_ERROR(
        base::WriteFileAtomically((out / name).string(), text));
    summary.files.push_back(name);
  }
  return summary;
}

}  // namespace tunefleet::emitter
