#include "tests/support/ort_oracle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/files.h"
#include "base/subprocess.h"
#include "nlohmann/json.hpp"

namespace tunefleet::testing {
namespace {

namespace fs = std::filesystem;

// The path of `program` on $PATH (or itself when it holds a '/'), or "".
std::string FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? program : "";
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir :
       absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    const std::string candidate = absl::StrCat(dir, "/", program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A directory removed when this goes away (when it made it).
class WorkDir {
 public:
  static absl::StatusOr<WorkDir> Make(const std::string& given) {
    WorkDir d;
    if (!given.empty()) {
      std::error_code ec;
      fs::create_directories(given, ec);
      if (ec) {
        return absl::InternalError(
            absl::StrCat("cannot create ", given, ": ", ec.message()));
      }
      d.path_ = given;
      return d;
    }
    std::string tmp = Env("TMPDIR");
    if (tmp.empty()) tmp = "/tmp";
    std::string pattern = tmp + "/tunefleet_ort_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return base::ErrnoError("cannot create a directory like", pattern);
    }
    d.path_ = pattern;
    d.owned_ = true;
    return d;
  }
  WorkDir() = default;
  WorkDir(WorkDir&& o) noexcept : path_(std::move(o.path_)), owned_(o.owned_) {
    o.owned_ = false;
  }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (owned_) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

// The last `n` bytes of a file (the runner's stderr), for messages.
std::string Tail(const std::string& path, size_t n = 4000) {
  absl::StatusOr<std::string> text = base::ReadWholeFile(path);
  if (!text.ok()) return "";
  return text->size() > n ? "..." + text->substr(text->size() - n) : *text;
}

std::optional<double> Number(const nlohmann::ordered_json& j, const char* k) {
  if (!j.is_object() || !j.contains(k) || !j[k].is_number()) {
    return std::nullopt;
  }
  return j[k].get<double>();
}

// "[0, 2, 5, 1]": the multi-index of flat index `i` in `shape`.
std::string IndexString(const std::vector<int64_t>& shape, int64_t i) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = i % shape[d];
      i /= shape[d];
    }
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

}  // namespace

base::NpyArray RandomNpy(const std::vector<int64_t>& shape, uint64_t seed,
                         float lo, float hi) {
  base::NpyArray a;
  a.shape = shape;
  a.data.resize(static_cast<size_t>(a.elements()));
  uint64_t state = seed;
  for (float& v : a.data) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) / 16777216.0f;
    v = lo + (hi - lo) * u;  // exactly u for [0, 1)
  }
  return a;
}

base::NpyArray OcrTextImage(int64_t height, int64_t width, uint64_t seed) {
  const base::NpyArray noise = RandomNpy({height * width * 4 + 64}, seed);
  size_t next = 0;
  const auto rnd = [&] { return noise.data[next++ % noise.data.size()]; };
  std::vector<float> gray(static_cast<size_t>(height * width), 1.0f);
  const int64_t line = std::max<int64_t>(2, std::min<int64_t>(24, height / 2));
  for (int64_t y0 = line / 2; y0 + line <= height; y0 += line * 5 / 2) {
    int64_t x = width / 20 + static_cast<int64_t>(rnd() * (width / 16 + 1));
    while (x < width - width / 10) {
      const int64_t glyph = line / 2 + static_cast<int64_t>(rnd() * line / 2);
      for (int64_t y = y0; y < y0 + line; ++y) {
        for (int64_t xx = x; xx < std::min(x + glyph, width); ++xx) {
          // Vertical and horizontal strokes, 80% inked.
          if (((xx - x) % 4 < 2 || (y - y0) % 6 < 2) && rnd() < 0.8f) {
            gray[y * width + xx] = 0.0f;
          }
        }
      }
      x += glyph + line / 6 + static_cast<int64_t>(rnd() * line / 4);
      if (rnd() < 0.1f) x += line;  // a space between words
    }
  }
  constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
  constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};
  base::NpyArray image;
  image.shape = {1, 3, height, width};
  image.data.resize(3 * gray.size());
  for (int c = 0; c < 3; ++c) {
    for (size_t i = 0; i < gray.size(); ++i) {
      image.data[c * gray.size() + i] = (gray[i] - kMean[c]) / kStd[c];
    }
  }
  return image;
}

absl::StatusOr<OrtOracle> OrtOracle::Find() {
  const std::string command = Env("TUNEFLEET_ORT_COMMAND");
  if (!command.empty()) {
    std::vector<std::string> argv =
        absl::StrSplit(command, ' ', absl::SkipEmpty());
    const std::string program = FindProgram(argv[0]);
    if (program.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("ONNX Runtime oracle: TUNEFLEET_ORT_COMMAND='", command,
                       "' but ", argv[0], " is not an executable on PATH"));
    }
    argv[0] = program;
    return OrtOracle(std::move(argv));
  }
  const std::string node = FindProgram("node");
  if (node.empty()) {
    return absl::FailedPreconditionError(
        "ONNX Runtime oracle: node (Node.js) is not on PATH; install it "
        "(apt-get install nodejs npm) and run bash deploy/fetch-ort.sh");
  }
  std::string dir = Env("TUNEFLEET_ORT_DIR");
  if (dir.empty()) dir = std::string(TUNEFLEET_SOURCE_DIR) + "/.cache/ort";
  if (!fs::exists(dir + "/node_modules/onnxruntime-node/package.json")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "ONNX Runtime oracle: onnxruntime-node is not installed in ", dir,
        " (bash deploy/fetch-ort.sh installs it; TUNEFLEET_ORT_DIR names "
        "another install)"));
  }
  return OrtOracle(
      {node, std::string(TUNEFLEET_SOURCE_DIR) + "/tests/support/ort_run.mjs",
       "--ort-dir", dir});
}

std::string OrtOracle::Describe() const { return absl::StrJoin(command_, " "); }

absl::StatusOr<OrtResult> OrtOracle::Run(
    const std::string& model_path,
    const std::map<std::string, base::NpyArray>& inputs,
    const OrtRunOptions& options) const {
  absl::StatusOr<WorkDir> dir = WorkDir::Make(options.work_dir);
  if (!dir.ok()) return dir.status();
  const std::string in_dir = dir->path() + "/in";
  const std::string out_dir = dir->path() + "/out";
  fs::create_directories(in_dir);
  std::vector<std::string> argv = command_;
  for (const std::string& flag :
       {std::string("--model"), model_path, std::string("--out"), out_dir,
        std::string("--runs"), std::to_string(options.runs),
        std::string("--warmup"), std::to_string(options.warmup),
        std::string("--threads"), std::to_string(options.threads),
        std::string("--optimization"), options.optimization}) {
    argv.push_back(flag);
  }
  std::set<std::string> files;
  for (const auto& [name, array] : inputs) {
    const std::string file = in_dir + "/" + base::NpyFileName(name);
    if (!files.insert(file).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two inputs map to the file ", file));
    }
    if (absl::Status s = base::WriteNpy(file, array); !s.ok()) return s;
    argv.push_back("--input");
    argv.push_back(name + "=" + file);
  }

  // stdout through a pipe (the JSON), stderr into a file (ORT's warnings
  // and the runner's errors; a file cannot fill up and stall the child).
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return base::ErrnoError("cannot make a pipe for", "ort_run");
  }
  base::UniqueFd out_read(pipe_fds[0]), out_write(pipe_fds[1]);
  const std::string err_path = dir->path() + "/ort_run.stderr";
  base::UniqueFd err(
      open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!err.valid()) return base::ErrnoError("cannot create", err_path);
  base::Subprocess::Options spawn;
  spawn.fds = {{1, out_write.get()}, {2, err.get()}};
  absl::StatusOr<base::Subprocess> child = base::Subprocess::Spawn(argv, spawn);
  if (!child.ok()) return child.status();
  out_write.Reset();
  err.Reset();
  const base::Deadline deadline = base::DeadlineIn(options.timeout_ms);
  absl::StatusOr<std::string> json_text =
      base::ReadToEof(out_read.get(), deadline);
  absl::StatusOr<base::ExitStatus> exit =
      json_text.ok() ? child->Wait(deadline) : json_text.status();
  if (!exit.ok()) {
    child->Kill();
    return absl::DeadlineExceededError(absl::StrCat(
        "ONNX Runtime (", Describe(), ") did not finish ", model_path, " in ",
        options.timeout_ms, " ms: ", exit.status().message()));
  }
  if (!exit->success()) {
    return absl::InternalError(
        absl::StrCat("ONNX Runtime (", Describe(), ") failed on ", model_path,
                     " (", exit->ToString(), "): ", Tail(err_path)));
  }

  const auto j = nlohmann::ordered_json::parse(*json_text, nullptr,
                                               /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("outputs") || !j["outputs"].is_object()) {
    return absl::InternalError(absl::StrCat(
        "ONNX Runtime's runner printed no JSON with outputs: ", *json_text,
        Tail(err_path)));
  }
  OrtResult result;
  result.json = *json_text;
  if (j.contains("ort") && j["ort"].is_object()) {
    const auto& ort = j["ort"];
    result.runtime =
        absl::StrCat(ort.value("runtime", "?"), " ", ort.value("version", "?"));
  }
  result.load_ms = Number(j, "load_ms").value_or(0);
  if (j.contains("latency_ms")) {
    result.median_ms = Number(j["latency_ms"], "median");
    result.p10_ms = Number(j["latency_ms"], "p10");
    result.p90_ms = Number(j["latency_ms"], "p90");
  }
  for (const auto& [name, entry] : j["outputs"].items()) {
    if (!entry.is_object() || !entry.contains("file") ||
        !entry["file"].is_string()) {
      return absl::InternalError(
          absl::StrCat("ONNX Runtime's runner gave output ", name,
                       " without a file: ", *json_text));
    }
    absl::StatusOr<base::NpyArray> array =
        base::ReadNpy(entry["file"].get<std::string>());
    if (!array.ok()) {
      return absl::Status(array.status().code(),
                          absl::StrCat("ONNX Runtime's output ", name, ": ",
                                       array.status().message()));
    }
    result.outputs[name] = *std::move(array);
    result.output_order.push_back(name);
  }
  return result;
}

double OutputDeviation::relative() const {
  if (max_abs_diff == 0) return 0;
  if (max_abs_ref == 0) return std::numeric_limits<double>::infinity();
  return max_abs_diff / max_abs_ref;
}

absl::StatusOr<OutputDeviation> Deviation(const base::NpyArray& ours,
                                          const base::NpyArray& reference) {
  if (ours.shape != reference.shape ||
      ours.data.size() != reference.data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape ", base::NpyShapeString(ours.shape), ", the reference's ",
        base::NpyShapeString(reference.shape)));
  }
  OutputDeviation d;
  for (size_t i = 0; i < reference.data.size(); ++i) {
    const double ref = reference.data[i];
    if (!std::isfinite(ref)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the reference holds ", ref, " at ",
                       IndexString(reference.shape, static_cast<int64_t>(i))));
    }
    d.max_abs_ref = std::max(d.max_abs_ref, std::abs(ref));
    double diff = std::abs(static_cast<double>(ours.data[i]) - ref);
    if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();
    if (diff > d.max_abs_diff) {
      d.max_abs_diff = diff;
      d.worst = static_cast<int64_t>(i);
    }
  }
  return d;
}

absl::Status CompareOutput(const std::string& name, const base::NpyArray& ours,
                           const base::NpyArray& reference, double tolerance) {
  absl::StatusOr<OutputDeviation> d = Deviation(ours, reference);
  if (!d.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("output '", name, "': ", d.status().message()));
  }
  if (d->max_abs_diff <= tolerance * d->max_abs_ref) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "output '%s' %s: max|ours - reference| = %.3g at %s (ours %.7g, "
      "reference %.7g) = %.3g x max|reference| (%.4g); allowed %.3g x "
      "max|reference|",
      name, base::NpyShapeString(reference.shape), d->max_abs_diff,
      IndexString(reference.shape, d->worst), ours.data[d->worst],
      reference.data[d->worst], d->relative(), d->max_abs_ref, tolerance));
}

absl::Status CompareOutputs(
    const std::map<std::string, base::NpyArray>& ours,
    const std::map<std::string, base::NpyArray>& reference, double tolerance) {
  std::vector<std::string> failures;
  for (const auto& [name, ref] : reference) {
    const auto it = ours.find(name);
    if (it == ours.end()) {
      failures.push_back(absl::StrCat("output '", name, "' is missing"));
      continue;
    }
    absl::Status s = CompareOutput(name, it->second, ref, tolerance);
    if (!s.ok()) failures.emplace_back(s.message());
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(failures, "\n"));
}

}  // namespace tunefleet::testing
