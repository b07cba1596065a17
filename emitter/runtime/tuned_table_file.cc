// Table files an app loads at run time (LoadTable() of tunefleet_tuned.h):
// reads the text format `tunefleet emit` writes (table.tftable, format 2,
// and format 1 of emits before driver revisions; docs/TABLES.md in
// tunefleet), checks it against this library's kernel source hashes, the
// device's name and its driver, and keeps the entries of that device and
// driver, which FindEntry() (tuned_runtime.cc) looks up before the
// built-in table.
//
// The format, one record a line, fields separated by tabs, a backslash
// escaping a tab (\t), a newline (\n) or itself (\\) inside a field:
//   tunefleet-table  2
//   library  <sha256>                      a source of the library emitted
//                                          with the file, in its order
//   device   <i> <key> <vendor> <name> <driver version> <revision>
//                                          (format 1: no revision, 1)
//   source   <i> <sha256>                  a source the entries use
//   entry    <device i> <workload> <source i or -1> <kernel> <options>
//            <dims> <global: 3 numbers> <local: 3 numbers> <buffers>
//            <min buffers> <floats> <time ns> <gflops> <config> <args>
//            <library call: "-" or "<library> <routine> <args>">
//   end      <number of entry lines>
// Args are space-separated tokens: i<int>, b<buffer>, f<float>,
// s<scratch bytes>, m<buffer>:<rows>:<row elements>.
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "tuned_runtime.h"
#include "tuned_table.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace internal {
namespace {

// The format this library writes and reads; it also reads format 1 (the
// same, without device lines' revision).
constexpr int kTableFormatVersion = 2;

// One loaded entry and the storage its pointers refer to.
struct LoadedEntry {
  std::string op, workload, kernel, options, config, key, table, driver;
  std::vector<Arg> args, call_args;
  std::string library, routine;
  LibraryCall call{};
  KernelEntry entry{};
};

// The entries of one successful LoadTable(), for one device name.
struct LoadedTable {
  std::string device_name;
  std::string key, driver;  // of the file's device line it took
  int revision = 1;
  std::vector<std::unique_ptr<LoadedEntry>> entries;
  std::map<std::string, const KernelEntry*> by_workload;
};

struct Loaded {
  std::mutex mu;
  const LoadedTable* current = nullptr;  // null: the built-in table only
  // Every table ever loaded: entries stay valid for Run()s under way.
  std::vector<std::unique_ptr<LoadedTable>> all;
};

Loaded& Tables() {
  static Loaded loaded;
  return loaded;
}

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> fields(1);
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      fields.emplace_back();
    } else if (c == '\\' && i + 1 < line.size()) {
      const char n = line[++i];
      fields.back() += n == 't' ? '\t' : n == 'n' ? '\n' : n;
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

bool ParseDouble(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0';
}

bool IsHash(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "a b c" as up to `max` numbers.
bool ParseSizes(const std::string& text, size_t* out, int count) {
  std::istringstream in(text);
  for (int i = 0; i < count; ++i) {
    std::string word;
    long long v = 0;
    if (!(in >> word) || !ParseInteger(word, &v) || v < 0) return false;
    out[i] = static_cast<size_t>(v);
  }
  std::string rest;
  return !(in >> rest);
}

// Args tokens (see the top of this file), each checked against the
// entry's buffer and float counts.
bool ParseArgs(std::istringstream& in, int num_buffers, int num_floats,
               std::vector<Arg>* out) {
  std::string token;
  while (in >> token) {
    Arg a{token[0], 0};
    std::string rest = token.substr(1);
    if (a.kind == 'm') {
      const size_t c1 = rest.find(':');
      const size_t c2 = c1 == std::string::npos ? c1 : rest.find(':', c1 + 1);
      if (c2 == std::string::npos ||
          !ParseInteger(rest.substr(c1 + 1, c2 - c1 - 1), &a.rows) ||
          !ParseInteger(rest.substr(c2 + 1), &a.row_elements) || a.rows < 1 ||
          a.row_elements < 1) {
        return false;
      }
      rest = rest.substr(0, c1);
    }
    if (!ParseInteger(rest, &a.value)) return false;
    switch (a.kind) {
      case 'i':
        break;
      case 'b':
      case 'm':
        if (a.value < 0 || a.value >= num_buffers) return false;
        break;
      case 'f':
        if (a.value < 0 || a.value >= num_floats) return false;
        break;
      case 's':
        if (a.value < 0) return false;
        break;
      default:
        return false;
    }
    out->push_back(a);
  }
  return true;
}

struct FileDevice {
  std::string key, vendor, name, driver;
  long long revision = 1;
};

// The result of reading a file: a code, a message, and on success the
// table.
struct Reading {
  cl_int code = CL_SUCCESS;
  std::string message;
  std::unique_ptr<LoadedTable> table;
  std::string key;
};

Reading Fail(cl_int code, std::string message) {
  Reading r;
  r.code = code;
  r.message = std::move(message);
  return r;
}

Reading Read(const std::string& path, const std::string& text,
             const std::string& device_name, const std::string& driver) {
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  auto at = [&](const std::string& what) {
    return path + " line " + std::to_string(number) + ": " + what;
  };
  if (!std::getline(lines, line)) {
    return Fail(kTableMalformed, path + ": empty, not a table file");
  }
  ++number;
  std::vector<std::string> f = SplitFields(line);
  if (f.size() != 2 || f[0] != "tunefleet-table") {
    return Fail(kTableMalformed,
                path +
                    ": not a tunefleet table file (no tunefleet-table "
                    "header line)");
  }
  long long version = 0;
  if (!ParseInteger(f[1], &version) || version < 1 ||
      version > kTableFormatVersion) {
    return Fail(kTableVersion, path + ": table format " + f[1] +
                                   ", this library reads format " +
                                   std::to_string(kTableFormatVersion));
  }
  // This library's sources by hash.
  std::map<std::string, int> built_in;
  for (size_t i = 0; i < kNumSources; ++i) {
    built_in.emplace(kSourceHashes[i], static_cast<int>(i));
  }
  std::vector<FileDevice> devices;
  std::vector<std::string> sources;  // hashes, by the file's index
  struct PendingEntry {
    int number = 0;  // line
    std::vector<std::string> fields;
  };
  std::vector<PendingEntry> pending;
  bool ended = false;
  long long end_count = -1;
  while (std::getline(lines, line)) {
    ++number;
    if (ended) return Fail(kTableMalformed, at("a line after the end line"));
    if (line.empty()) continue;
    f = SplitFields(line);
    const std::string& kind = f[0];
    long long index = 0;
    if (kind == "library") {
      if (f.size() != 2 || !IsHash(f[1])) {
        return Fail(kTableMalformed, at("library: a SHA-256 in hex expected"));
      }
    } else if (kind == "device") {
      const size_t fields = version == 1 ? 6 : 7;
      long long revision = 1;
      if (f.size() != fields || !ParseInteger(f[1], &index) ||
          index != static_cast<long long>(devices.size()) ||
          (version > 1 && (!ParseInteger(f[6], &revision) || revision < 1))) {
        return Fail(kTableMalformed,
                    at(std::string("device: <index> <key> <vendor> <name> "
                                   "<driver>") +
                       (version > 1 ? " <revision>" : "") +
                       " expected, numbered from 0"));
      }
      devices.push_back({f[2], f[3], f[4], f[5], revision});
    } else if (kind == "source") {
      if (f.size() != 3 || !ParseInteger(f[1], &index) ||
          index != static_cast<long long>(sources.size()) || !IsHash(f[2])) {
        return Fail(kTableMalformed,
                    at("source: <index> <sha256> expected, numbered from 0"));
      }
      sources.push_back(f[2]);
    } else if (kind == "entry") {
      if (f.size() != 17) {
        return Fail(kTableMalformed,
                    at("entry: 16 fields expected, " +
                       std::to_string(f.size() - 1) + " found"));
      }
      pending.push_back({number, f});
    } else if (kind == "end") {
      if (f.size() != 2 || !ParseInteger(f[1], &end_count)) {
        return Fail(kTableMalformed, at("end: <number of entries> expected"));
      }
      ended = true;
    } else {
      return Fail(kTableMalformed, at("unknown record '" + kind + "'"));
    }
  }
  if (!ended || end_count != static_cast<long long>(pending.size())) {
    return Fail(
        kTableMalformed,
        path + ": truncated (" +
            (ended ? "its end line counts " + std::to_string(end_count) +
                         " entries, " + std::to_string(pending.size()) + " read"
                   : std::string("no end line")) +
            ")");
  }
  // The device: of the same name, with the device's driver.
  int device = -1;
  std::string drivers;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].name != device_name) continue;
    if (devices[d].driver == driver) {
      device = static_cast<int>(d);
      break;
    }
    drivers += (drivers.empty() ? "" : ", ") + std::string("'") +
               devices[d].driver + "' (key " + devices[d].key + " revision " +
               std::to_string(devices[d].revision) + ")";
  }
  if (device < 0 && drivers.empty()) {
    std::string names;
    for (const FileDevice& d : devices) {
      names += (names.empty() ? "" : ", ") + std::string("'") + d.name + "'";
    }
    return Fail(kTableOtherDevice,
                path + ": no entries for device '" + device_name +
                    "' (the file's devices: " +
                    (names.empty() ? std::string("none") : names) + ")");
  }
  if (device < 0) {
    return Fail(kTableOtherDriver, path + ": measured on driver " + drivers +
                                       ", this device '" + device_name +
                                       "' runs driver '" + driver + "'");
  }
  auto table = std::make_unique<LoadedTable>();
  table->device_name = device_name;
  table->key = devices[device].key;
  table->driver = devices[device].driver;
  table->revision = static_cast<int>(devices[device].revision);
  for (const PendingEntry& p : pending) {
    const std::vector<std::string>& e = p.fields;
    number = p.number;
    long long dev = 0, source = 0, dims = 0, buffers = 0, min_buffers = 0,
              floats = 0;
    double time_ns = 0, gflops = 0;
    size_t global[3], local[3];
    if (!ParseInteger(e[1], &dev) || dev < 0 ||
        dev >= static_cast<long long>(devices.size()) ||
        !ParseInteger(e[3], &source) || source < -1 ||
        source >= static_cast<long long>(sources.size()) ||
        !ParseInteger(e[6], &dims) || dims < 1 || dims > 3 ||
        !ParseSizes(e[7], global, 3) || !ParseSizes(e[8], local, 3) ||
        !ParseInteger(e[9], &buffers) || buffers < 0 || buffers > 64 ||
        !ParseInteger(e[10], &min_buffers) || min_buffers < 0 ||
        min_buffers > buffers || !ParseInteger(e[11], &floats) || floats < 0 ||
        floats > 64 || !ParseDouble(e[12], &time_ns) ||
        !ParseDouble(e[13], &gflops)) {
      return Fail(kTableMalformed, at("entry: a field out of range"));
    }
    if (dev != device) continue;  // another device's
    const std::string workload = e[2];
    if (CanonicalWorkload(workload.c_str()) != workload) {
      return Fail(kTableUnknownWorkload,
                  at("entry " + workload +
                     ": not a canonical workload of this library's ops"));
    }
    int built_source = -1;
    if (source >= 0) {
      auto it = built_in.find(sources[source]);
      if (it == built_in.end()) {
        return Fail(
            kTableOtherSources,
            at("entry " + workload + " uses kernel source " + sources[source] +
               ", which this library was not built with (emit a "
               "library with it, or a table from records of the "
               "library's template versions)"));
      }
      built_source = it->second;
    }
    auto loaded = std::make_unique<LoadedEntry>();
    loaded->workload = workload;
    loaded->op = workload.substr(0, workload.find(' '));
    loaded->kernel = e[4];
    loaded->options = e[5];
    loaded->config = e[14];
    loaded->key = devices[device].key;
    loaded->driver = devices[device].driver;
    loaded->table = path;
    std::istringstream args(e[15]);
    if (!ParseArgs(args, static_cast<int>(buffers), static_cast<int>(floats),
                   &loaded->args)) {
      return Fail(kTableMalformed, at("entry " + workload + ": bad args"));
    }
    int library = -1;
    if (e[16] != "-") {
      std::istringstream call(e[16]);
      if (!(call >> loaded->library >> loaded->routine) ||
          !ParseArgs(call, static_cast<int>(buffers), static_cast<int>(floats),
                     &loaded->call_args)) {
        return Fail(kTableMalformed,
                    at("entry " + workload + ": bad library call"));
      }
      loaded->call = LibraryCall{
          loaded->library.c_str(), loaded->routine.c_str(), 0,
          static_cast<int>(loaded->call_args.size()), loaded->call_args.data()};
      library = 0;
    } else if (built_source < 0) {
      return Fail(kTableMalformed,
                  at("entry " + workload + ": neither a kernel nor a call"));
    }
    KernelEntry& k = loaded->entry;
    k.device = 0;
    k.op = loaded->op.c_str();
    k.workload = loaded->workload.c_str();
    k.source = built_source;
    k.kernel = loaded->kernel.c_str();
    k.options = loaded->options.c_str();
    k.dims = static_cast<int>(dims);
    for (int d = 0; d < 3; ++d) {
      k.global[d] = global[d];
      k.local[d] = local[d];
    }
    k.first_arg = 0;
    k.num_args = static_cast<int>(loaded->args.size());
    k.num_buffers = static_cast<int>(buffers);
    k.num_floats = static_cast<int>(floats);
    k.time_ns = time_ns;
    k.gflops = gflops;
    k.library = library;
    k.min_buffers = static_cast<int>(min_buffers);
    k.config = loaded->config.c_str();
    k.table = loaded->table.c_str();
    k.args = loaded->args.data();
    k.call = library >= 0 ? &loaded->call : nullptr;
    k.key = loaded->key.c_str();
    k.driver = loaded->driver.c_str();
    k.revision = table->revision;
    if (!table->by_workload.emplace(loaded->workload, &k).second) {
      return Fail(kTableMalformed, at("entry " + workload +
                                      ": a second entry of the workload "
                                      "for the device"));
    }
    table->entries.push_back(std::move(loaded));
  }
  Reading r;
  r.key = devices[device].key;
  r.table = std::move(table);
  return r;
}

}  // namespace

const KernelEntry* FindLoadedEntry(const std::string& device_name,
                                   const char* workload) {
  Loaded& loaded = Tables();
  std::lock_guard<std::mutex> lock(loaded.mu);
  const LoadedTable* t = loaded.current;
  if (t == nullptr || t->device_name != device_name) return nullptr;
  auto it = t->by_workload.find(workload);
  return it == t->by_workload.end() ? nullptr : it->second;
}

bool DriversOfKey(const std::string& key, std::vector<std::string>* drivers) {
  drivers->clear();
  {
    Loaded& loaded = Tables();
    std::lock_guard<std::mutex> lock(loaded.mu);
    if (loaded.current != nullptr && loaded.current->key == key) {
      drivers->push_back(loaded.current->driver);
    }
  }
  for (size_t d = 0; d < kNumDevices; ++d) {
    if (key == kDevices[d].key) drivers->push_back(kDevices[d].driver);
  }
  return !drivers->empty();
}

}  // namespace internal

cl_int LoadTable(cl_device_id device, const char* path, std::string* message) {
  auto say = [&](cl_int code, const std::string& text) {
    if (message == nullptr) return code;
    if (code == CL_SUCCESS) {
      *message = text;
      return code;
    }
    internal::Loaded& loaded = internal::Tables();
    std::lock_guard<std::mutex> lock(loaded.mu);
    *message = text + "; the " +
               (loaded.current == nullptr ? "built-in" : "previously loaded") +
               " table stays in use";
    return code;
  };
  if (path == nullptr) return say(kTableUnreadable, "no table path given");
  cl_device_type type = 0;
  const cl_int err =
      clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
  if (err != CL_SUCCESS) {
    return say(err, std::string(path) +
                        ": cannot query the device (OpenCL "
                        "error " +
                        std::to_string(err) + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    return say(kTableUnreadable, std::string(path) + ": cannot be opened");
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return say(kTableUnreadable, std::string(path) + ": cannot be read");
  }
  internal::Reading r =
      internal::Read(path, text.str(), internal::DeviceName(device),
                     internal::DriverVersion(device));
  if (r.code != CL_SUCCESS) return say(r.code, r.message);
  const size_t n = r.table->entries.size();
  {
    internal::Loaded& loaded = internal::Tables();
    std::lock_guard<std::mutex> lock(loaded.mu);
    loaded.current = r.table.get();
    loaded.all.push_back(std::move(r.table));
  }
  return say(CL_SUCCESS, std::to_string(n) + " entries of device key " + r.key +
                             " from " + path);
}

void UnloadTable() {
  internal::Loaded& loaded = internal::Tables();
  std::lock_guard<std::mutex> lock(loaded.mu);
  loaded.current = nullptr;
}

}  // namespace tunefleet_tuned
