// The dependency rule of docs/ARCHITECTURE.md, checked on the sources: every
// library may include headers of its own and of the libraries it uses
// (directly or through them), and nothing of a library above it. A new
// include that breaks the layering fails here, naming the file and the
// header.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// A library: the files that belong to it (path prefixes from the
// repository root) and the libraries it uses directly.
struct Library {
  std::vector<std::string> files;
  std::vector<std::string> uses;
};

const std::map<std::string, Library>& Libraries() {
  static const std::map<std::string, Library> libraries = {
      {"base", {{"base/"}, {}}},
      {"kernel_policy", {{"kernel_policy/"}, {}}},
      {"proto", {{"tunefleet/v1/"}, {}}},
      {"contract",
       {{"proto/names.", "proto/timing_policy.", "proto/device_info_revision.",
         "proto/device_info_json.", "proto/json."},
        {"proto"}}},
      {"templates", {{"kernels_templates/"}, {"base", "kernel_policy"}}},
      {"cost_model",
       {{"cost_model/features.", "cost_model/xgb_ranker.",
         "cost_model/rank_ensemble."},
        {}}},
      {"client", {{"client/"}, {"base"}}},
      {"auth", {{"server/auth/"}, {"base"}}},
      {"metrics",
       {{"server/metrics/server_metrics.", "server/metrics/rpc_interceptor."},
        {"contract", "proto"}}},
      {"search", {{"search/"}, {"cost_model", "base"}}},
      {"trial", {{"trial/"}, {"templates", "proto", "contract", "base"}}},
      {"onnx_import", {{"onnx_import/"}, {"templates", "base"}}},
      {"measure",
       {{"device_agent/opencl.", "device_agent/program_cache.",
         "device_agent/build_inspect.", "device_agent/verify.",
         "device_agent/workload_buffers.", "device_agent/measurer.",
         "device_agent/image_args.", "device_agent/library/library_trial."},
        {"library_backends", "proto", "contract", "base", "kernel_policy"}}},
      {"library_backends", {{"device_agent/library/"}, {"proto"}}},
      {"store",
       {{"store/"}, {"templates", "trial", "proto", "contract", "base"}}},
      {"task_features",
       {{"cost_model/task_features."},
        {"cost_model", "search", "templates", "trial", "proto"}}},
      {"validation",
       {{"server/validation/"},
        {"trial", "templates", "proto", "contract", "kernel_policy", "base"}}},
      {"opencl_loader", {{"device_agent/opencl_loader."}, {}}},
      // Plain C++17 and OpenCL: copied into emitted libraries.
      {"model_runtime", {{"model_runtime/"}, {}}},
      {"model_run",
       {{"model_run/"},
        {"model_runtime", "measure", "library_backends", "base"}}},
      // A model run on the wire and the runner over the server.
      {"model_run_remote",
       {{"model_run/run_messages.", "model_run/remote_runner."},
        {"model_run", "client", "proto"}}},
      {"agent",
       {{"device_agent/agent.", "device_agent/backend.", "device_agent/worker.",
         "device_agent/source_cache."},
        {"measure", "client", "proto"}}},
      {"transfer", {{"cost_model/transfer."}, {"task_features", "store"}}},
      {"emitter", {{"emitter/"}, {"store", "templates", "trial", "base"}}},
      {"bundle", {{"bundle/"}, {"store", "contract", "proto", "base"}}},
      {"plan_builder",
       {{"plan_builder/"},
        {"emitter", "onnx_import", "model_runtime", "templates", "base"}}},
      {"dashboard", {{"dashboard/"}, {"store", "auth", "proto", "base"}}},
      {"server",
       {{"server/"},
        {"dashboard", "bundle", "store", "transfer", "task_features", "search",
         "trial", "validation", "auth", "metrics", "contract", "base",
         "plan_builder", "emitter", "onnx_import", "model_runtime"}}},
      {"tunefleet-agent",
       {{"device_agent/main.", "device_agent/measure_command.",
         "device_agent/model_run_handler."},
        {"agent", "opencl_loader", "trial", "templates", "model_run",
         "model_run_remote"}}},
      {"cli",
       {{"cli/"},
        {"server", "dashboard", "bundle", "store", "emitter", "onnx_import",
         "task_features", "search", "trial", "auth", "client", "templates",
         "contract", "base", "plan_builder", "model_run", "model_runtime",
         "model_run_remote"}}},
  };
  return libraries;
}

// The library a repository path belongs to (longest matching prefix), or
// "" for a path of no library (third-party headers).
std::string LibraryOf(const std::string& path) {
  std::string best;
  size_t best_length = 0;
  for (const auto& [name, library] : Libraries()) {
    for (const std::string& prefix : library.files) {
      if (path.rfind(prefix, 0) == 0 && prefix.size() > best_length) {
        best = name;
        best_length = prefix.size();
      }
    }
  }
  return best;
}

// `name` and every library it uses, directly or not.
std::set<std::string> Closure(const std::string& name) {
  std::set<std::string> out;
  std::vector<std::string> todo = {name};
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    if (!out.insert(next).second) continue;
    for (const std::string& used : Libraries().at(next).uses) {
      todo.push_back(used);
    }
  }
  return out;
}

// Files of the libraries: sources and headers under the libraries' folders.
std::vector<std::string> SourceFiles(const std::filesystem::path& root) {
  std::vector<std::string> files;
  for (const char* folder :
       {"base", "kernel_policy", "proto", "kernels_templates", "cost_model",
        "search", "trial", "store", "bundle", "onnx_import", "emitter",
        "dashboard",
        "client", "server", "device_agent", "cli", "model_runtime",
        "plan_builder", "model_run"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(root / folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".h" && ext != ".cc") continue;
      const std::string path =
          std::filesystem::relative(entry.path(), root).string();
      // The emitted library's runtime is copied out, not linked here.
      if (path.rfind("emitter/runtime/", 0) == 0) continue;
      files.push_back(path);
    }
  }
  return files;
}

TEST(Layers, EveryIncludeStaysWithinTheLibrarysDependencies) {
  const std::filesystem::path root = TUNEFLEET_SOURCE_DIR;
  const std::regex include(R"re(^\s*#include\s+"([^"]+)")re");
  std::vector<std::string> violations;
  int checked = 0;
  for (const std::string& path : SourceFiles(root)) {
    const std::string library = LibraryOf(path);
    ASSERT_FALSE(library.empty()) << path << " belongs to no library";
    const std::set<std::string> allowed = Closure(library);
    std::ifstream in(root / path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string used = LibraryOf(m[1].str());
      if (used.empty()) continue;  // a third-party header
      ++checked;
      if (allowed.count(used) == 0) {
        violations.push_back(path + ":" + std::to_string(number) + " (" +
                             library + ") includes " + m[1].str() + " (" +
                             used + ")");
      }
    }
  }
  EXPECT_GT(checked, 200) << "the sources were not found under " << root;
  EXPECT_TRUE(violations.empty()) << [&] {
    std::string all;
    for (const std::string& v : violations) all += "\n  " + v;
    return all;
  }();
}

TEST(Layers, NoLibraryUsesOneThatUsesIt) {
  for (const auto& [name, library] : Libraries()) {
    for (const std::string& used : library.uses) {
      ASSERT_TRUE(Libraries().count(used)) << name << " uses unknown " << used;
      EXPECT_EQ(Closure(used).count(name), 0u)
          << name << " and " << used << " use each other";
    }
  }
}

}  // namespace
}  // namespace tunefleet
