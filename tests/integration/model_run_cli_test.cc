// `tunefleet run` and `tunefleet emit --onnx` as users run them (the
// binary, a real SQLite file, PoCL): a small ONNX model (tests/support)
// run without records and checked against ONNX Runtime (skipped, with the
// reason, where ORT is absent); its plan emitted, the emitted library built
// and its tunefleet_tuned::Model run by a consumer (tests/data/
// emit_plan_consumer) giving `tunefleet run --plan`'s outputs; and every
// bad input of issue 35 refused with a message naming the cause and no
// output file left: a plan of another model, version or device key, a
// truncated weights file, an input of the wrong shape or dtype, a model
// with a node that cannot run.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/npy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "tests/support/onnx_test_models.h"
#include "tests/support/ort_expect.h"
#include "tests/support/ort_oracle.h"
#include "tests/support/run_outputs.h"
#include "tests/support/small_net_files.h"
#include "tests/support/synthetic_models.h"

namespace tunefleet::testing {
namespace {

using ::testing::HasSubstr;

class ModelRunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTempDir("model_run_cli");
    absl::StatusOr<testing::SmallNetFiles> files =
        testing::WriteSmallNetFiles(dir_);
    ASSERT_TRUE(files.ok()) << files.status();
    model_ = files->model;
    input_ = files->input;
  }
  void TearDown() override {
    if (std::getenv("TUNEFLEET_KEEP_TEST_DIRS") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  // `tunefleet run` of the small model in dir_ (no ./tunefleet.db there:
  // every layer naive unless --db).
  testing::CommandResult Run(const std::string& args) {
    return RunCommand("cd " + dir_ + " && " + CliBinary() + " run --onnx " +
                      model_ + " --input-shape " + kSmallNetShape + " " + args);
  }

  // The .npy files in `out`.
  std::vector<std::string> Files(const std::string& out) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(out, ec)) {
      files.push_back(e.path().filename().string());
    }
    return files;
  }

  std::string dir_, model_, input_;
};

TEST_F(ModelRunCliTest, RunsWithoutRecordsAndMatchesOnnxRuntime) {
  const std::string out = dir_ + "/out";
  auto r = Run("--input image=" + input_ + " --save-outputs " + out +
               " --runs 3 --warmup 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"latency_ms", "estimated_ms", "host_cpu_ms",
                          "peak_device_bytes", "record", "outputs"}) {
    EXPECT_TRUE(j.contains(key)) << key << " in " << r.out;
  }
  // --record auto (the default): recorded where the device can record.
  EXPECT_EQ(j["record"], j["record_extension"] == "none" ? "off" : "on")
      << r.out;
  EXPECT_GT(j["latency_ms"]["median"].get<double>(), 0);
  EXPECT_LE(j["latency_ms"]["p10"].get<double>(),
            j["latency_ms"]["p90"].get<double>());
  // The same plan with inputs and outputs in device buffers (its outputs
  // are checked against these by the runner).
  EXPECT_GT(j["device_buffers_latency_ms"]["median"].get<double>(), 0);
  EXPECT_LE(j["device_buffers_latency_ms"]["p10"].get<double>(),
            j["device_buffers_latency_ms"]["p90"].get<double>());
  EXPECT_GT(j["device_buffers_submit_cpu_ms"].get<double>(), 0);
  EXPECT_GT(j["peak_device_bytes"].get<int64_t>(), 0);
  EXPECT_LE(j["arena_bytes"].get<int64_t>(), j["tensor_bytes"].get<int64_t>());
  EXPECT_EQ(j["entries"]["reference"].get<int>(), j["layers"].get<int>());
  ASSERT_FALSE(j["outputs"].empty());
  const auto ours = testing::ReadSavedOutputs(j);
  ASSERT_TRUE(ours.ok()) << ours.status();
  // The text form prints the measured latency beside the estimate.
  auto text = Run("--input image=" + input_ + " --runs 2 --warmup 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("latency (2 runs after 0 warm-up"));
  EXPECT_THAT(text.out, HasSubstr("recording "));
  EXPECT_THAT(text.out, HasSubstr("measured"));
  EXPECT_THAT(text.out, HasSubstr("estimated"));
  EXPECT_THAT(text.out, HasSubstr("host CPU per run"));
  EXPECT_THAT(text.out, HasSubstr("on the device (inputs and outputs in "
                                  "device buffers, no host copies): median"));
  EXPECT_THAT(text.out, HasSubstr("slowest layers"));

  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  EXPECT_TRUE(testing::MatchesOrt(oracle, model_, {{"image", input_}}, *ours));
}

// --record off, on and both (issue 36): each mode reported, the same
// outputs in each; on is refused, saying why, where the device cannot
// record.
TEST_F(ModelRunCliTest, RecordModesAreReportedAndGiveTheSameOutputs) {
  std::map<std::string, std::vector<float>> outputs;
  bool can_record = true;
  for (const std::string mode : {"on", "off", "both"}) {
    const std::string out = dir_ + "/out-" + mode;
    auto r =
        Run("--input image=" + input_ + " --save-outputs " + out +
            " --runs 2 --warmup 1 --profiled-runs 0 --json --record " + mode);
    if (mode == "on" && r.exit_code != 0) {
      // A device that cannot record: on is refused saying why and what to
      // do, and nothing is saved.
      can_record = false;
      EXPECT_THAT(r.err, HasSubstr("cannot record the plan"));
      EXPECT_THAT(r.err, HasSubstr("recording off or auto"));
      EXPECT_TRUE(Files(out).empty());
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const bool recorded = mode != "off" && can_record;
    EXPECT_EQ(j["record"], recorded ? "on" : "off") << mode << ": " << r.out;
    if (recorded) {
      EXPECT_NE(j["record_extension"], "none");
      EXPECT_GE(j["recorded_lists"].get<int>(), 1);
      EXPECT_FALSE(j["record_note"].get<std::string>().empty());
    }
    if (mode == "both" && recorded) {
      for (const char* side : {"plain", "recorded"}) {
        ASSERT_TRUE(j.contains(side)) << side << " in " << r.out;
        EXPECT_GT(j[side]["latency_ms"]["median"].get<double>(), 0);
        EXPECT_GT(j[side]["host_cpu_ms"].get<double>(), 0);
        EXPECT_GT(j[side]["submit_cpu_ms"].get<double>(), 0);
      }
      auto text = Run("--input image=" + input_ +
                      " --runs 2 --warmup 0 --profiled-runs 0 --record both");
      ASSERT_EQ(text.exit_code, 0) << text.err;
      EXPECT_THAT(text.out, HasSubstr("plain and recorded runs"));
      EXPECT_THAT(text.out, HasSubstr("submit CPU per command us"));
    }
    const auto saved = testing::ReadSavedOutputs(j);
    ASSERT_TRUE(saved.ok()) << saved.status();
    for (const auto& [name, a] : *saved) {
      if (outputs.count(name) == 0) {
        outputs[name] = a.data;
      } else {
        // The same kernels on the same data: the same bits.
        EXPECT_EQ(a.data, outputs[name]) << name << " with --record " << mode;
      }
    }
  }
  EXPECT_FALSE(outputs.empty());
  auto bad = Run("--record sometimes");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--record"));
}

// Issue 36: a squeeze-and-excitation scale and the skip Add after it run as
// one launch (the Add the eltwise's residual step), which the plan and its
// layer table show, with ONNX Runtime's outputs.
TEST_F(ModelRunCliTest, SkipAddFusedIntoTheEltwiseBeforeItMatchesOnnxRuntime) {
  testing::GraphBuilder g;
  g.Input("x", {1, 8, 5, 6});
  g.Node("GlobalAveragePool", {"x"}, {"m"});
  g.Node("Sigmoid", {"m"}, {"s"});
  g.Node("Mul", {"x", "s"}, {"scaled"});
  g.Node("Add", {"scaled", "x"}, {"y"});
  g.Output("y");
  const std::string model = dir_ + "/se.onnx";
  std::ofstream(model, std::ios::binary) << g.Bytes();
  const std::string input = dir_ + "/se_x.npy";
  ASSERT_TRUE(
      base::WriteNpy(input, testing::RandomNpy({1, 8, 5, 6}, 3, -1, 1)).ok());
  const std::string out = dir_ + "/se_out";
  const std::string run = "cd " + dir_ + " && " + CliBinary() + " run --onnx " +
                          model + " --input x=" + input +
                          " --runs 1 --warmup 0 ";
  auto r = RunCommand(run + "--save-outputs " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  // global_pool, sigmoid, mul with the Add as residual: 3 layers, not 4.
  EXPECT_EQ(j["layers"].get<int>(), 3) << r.out;
  auto text = RunCommand(run + "--describe");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("fn=mul b=channel residual=add"));
  auto ours = base::ReadNpy(j["outputs"]["y"].get<std::string>());
  ASSERT_TRUE(ours.ok()) << ours.status();
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  EXPECT_TRUE(
      testing::MatchesOrt(oracle, model, {{"x", input}}, {{"y", *ours}}));
}

TEST_F(ModelRunCliTest, BadInputIsRefusedNamingTheCauseAndWritesNothing) {
  const std::string out = dir_ + "/out";
  // An input of the wrong shape, and of the wrong dtype.
  const std::string wrong = dir_ + "/wrong.npy";
  ASSERT_TRUE(
      base::WriteNpy(wrong, testing::RandomNpy({1, 3, 17, 22}, 1)).ok());
  auto r = Run("--input image=" + wrong + " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("shape (1, 3, 17, 22)"));
  EXPECT_THAT(r.err, HasSubstr("'image' is (1, 3, 17, 23)"));
  std::string f64 = base::SerializeNpy(testing::RandomNpy(kSmallNetDims, 1));
  f64.replace(f64.find("<f4"), 3, "<f8");
  std::ofstream(dir_ + "/f64.npy", std::ios::binary) << f64;
  r = Run("--input image=" + dir_ + "/f64.npy --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("f8"));
  r = Run("--input nope=" + input_ + " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no input 'nope'"));
  EXPECT_TRUE(Files(out).empty());

  // Plans: one saved by a good run, then copies of it spoilt.
  const std::string lib = dir_ + "/lib";
  r = Run("--runs 1 --warmup 0 --profiled-runs 0 --json --save-plan " + lib);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string key =
      nlohmann::json::parse(r.out)["device_key"].get<std::string>();
  const std::string plan = lib + "/plans/" + key + "/small.tfplan";
  const std::string weights = lib + "/plans/" + key + "/small.tfweights";
  ASSERT_TRUE(std::filesystem::exists(plan));
  ASSERT_TRUE(std::filesystem::exists(weights));
  r = Run("--plan " + lib + " --runs 1 --save-outputs " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Files(out).empty());
  std::filesystem::remove_all(out);
  auto copy = [&](const std::string& name) {
    const std::string to = dir_ + "/" + name;
    std::filesystem::copy(lib, to, std::filesystem::copy_options::recursive);
    return to;
  };
  // Another model of the same name.
  const std::string other_dir = dir_ + "/other";
  std::filesystem::create_directories(other_dir);
  std::ofstream(other_dir + "/small.onnx", std::ios::binary)
      << testing::SmallNet() << std::string(1, '\0');
  r = RunCommand(CliBinary() + " run --onnx " + other_dir + "/small.onnx " +
                 "--input-shape " + kSmallNetShape + " --plan " + lib +
                 " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("made for another model"));
  // Another format version.
  const std::string v2 = copy("v2");
  {
    std::fstream f(v2 + "/plans/" + key + "/small.tfplan",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put(2);
  }
  r = Run("--plan " + v2 + " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("format version 2; this runtime reads version 1"));
  // Another device key's plan, moved under this key's name.
  const std::string moved = copy("moved");
  std::filesystem::rename(moved + "/plans/" + key, moved + "/plans/other-key");
  r = Run("--plan " + moved + " --device-key other-key --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("made for device key '" + key + "', not 'other-key'"));
  r = Run("--plan " + moved + " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("it has plans for other-key"));
  // A truncated weights file.
  const std::string cut = copy("cut");
  std::filesystem::resize_file(cut + "/plans/" + key + "/small.tfweights",
                               std::filesystem::file_size(weights) / 2);
  r = Run("--plan " + cut + " --save-outputs " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("weights file: truncated"));
  EXPECT_TRUE(Files(out).empty());

  // ... a model with a node that cannot run.
  testing::GraphBuilder g;
  g.Input("x", {1, 4});
  g.Output("y");
  g.Node("NonMaxSuppression", {"x", "x"}, {"y"});
  std::ofstream(dir_ + "/bad.onnx", std::ios::binary) << g.Bytes();
  r = RunCommand(CliBinary() + " run --onnx " + dir_ +
                 "/bad.onnx --save-outputs " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("NonMaxSuppression"));
  EXPECT_TRUE(Files(out).empty());
}

// The synthetic model with every op and padding form of issue 35 item 3
// (tests/support/synthetic_models.h) through `tunefleet run`, every output
// against ONNX Runtime's on the same inputs.
TEST_F(ModelRunCliTest, AllFormsModelMatchesOnnxRuntime) {
  TUNEFLEET_ORT_ORACLE_OR_SKIP(oracle);
  const testing::SyntheticModel m = testing::AllFormsModel();
  const std::string path = dir_ + "/" + m.name + ".onnx";
  std::ofstream(path, std::ios::binary) << m.bytes;
  std::string args;
  std::map<std::string, base::NpyArray> inputs;
  uint64_t seed = 11;
  for (const auto& [name, dims] : m.inputs) {
    inputs[name] = testing::RandomNpy(dims, seed++, -1, 1);
    const std::string file = dir_ + "/" + name + ".npy";
    ASSERT_TRUE(base::WriteNpy(file, inputs[name]).ok());
    std::string shape;
    for (int64_t d : dims)
      shape += (shape.empty() ? "" : ",") + std::to_string(d);
    args += " --input-shape " + name + "=" + shape + " --input " + name + "=" +
            file;
  }
  auto r = RunCommand("cd " + dir_ + " && " + CliBinary() + " run --onnx " +
                      path + args + " --save-outputs " + dir_ +
                      "/out --runs 1 --warmup 0 --profiled-runs 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ours = testing::ReadSavedOutputs(nlohmann::json::parse(r.out));
  ASSERT_TRUE(ours.ok()) << ours.status();
  EXPECT_EQ(ours->size(), m.outputs.size());
  auto ref = oracle.Run(path, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_TRUE(testing::OutputsMatch(*ours, ref->outputs));
}

// Tuned records (one trial per task), the plan emitted beside the kernel
// table, the emitted library built and installed, and its Model run by an
// application (tests/data/emit_plan_consumer): the outputs are those of
// `tunefleet run --plan` on the same input.
TEST_F(ModelRunCliTest, EmittedPlanRunsInTheEmittedLibraryAsRunRunsIt) {
  const std::string db = dir_ + "/tuned.db";
  auto tune = RunCommand(CliBinary() + " tune --onnx " + model_ +
                         " --input-shape " + kSmallNetShape +
                         " --trials-per-task 1 --db " + db + " --json --quiet");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const std::string work = dir_ + "/work";
  auto emit = RunCommand(CliBinary() + " emit --db " + db + " --onnx " +
                         model_ + " --input-shape " + kSmallNetShape +
                         " --out " + work + "/lib --json");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  const nlohmann::json summary = nlohmann::json::parse(emit.out);
  ASSERT_EQ(summary["plans"].size(), 1u) << emit.out;
  const std::string key = summary["plans"][0]["device_key"];
  EXPECT_GT(summary["plans"][0]["layers"].get<int>(), 0);
  // The tuned tasks' steps have records (one trial each: the naive kernel
  // may still be the faster entry); steps of ops that are not tuning tasks
  // have none.
  EXPECT_LT(summary["plans"][0]["no_record"].get<int>(),
            summary["plans"][0]["layers"].get<int>())
      << emit.out;
  const std::string plan = work + "/lib/plans/" + key + "/small.tfplan";
  const std::string weights = work + "/lib/plans/" + key + "/small.tfweights";
  ASSERT_TRUE(std::filesystem::exists(plan));

  auto build = testing::BuildEmittedLibrary(work, "emit_plan_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto input = base::ReadNpy(input_);
  ASSERT_TRUE(input.ok());
  {
    std::ofstream raw(dir_ + "/image.f32", std::ios::binary);
    raw.write(reinterpret_cast<const char*>(input->data.data()),
              input->data.size() * sizeof(float));
  }
  auto consumer =
      RunCommand(work + "/consumer/emit_plan_consumer " + plan + " " + weights +
                 " " + dir_ + "/consumer_out " + dir_ + "/image.f32");
  ASSERT_EQ(consumer.exit_code, 0) << consumer.err;
  EXPECT_THAT(consumer.out, HasSubstr("device key " + key));

  auto run =
      Run("--plan " + work + "/lib --input image=" + input_ +
          " --runs 1 --warmup 0 --json --save-outputs " + dir_ + "/run_out");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["outputs"].size(), 1u);
  const auto saved = testing::ReadSavedOutputs(j);
  ASSERT_TRUE(saved.ok()) << saved.status();
  for (const auto& [name, ours] : *saved) {
    const std::string bytes = ReadAll(dir_ + "/consumer_out0.f32");
    ASSERT_EQ(bytes.size(), ours.data.size() * sizeof(float));
    std::vector<float> theirs(ours.data.size());
    std::memcpy(theirs.data(), bytes.data(), bytes.size());
    EXPECT_EQ(theirs, ours.data) << name;
  }
}

}  // namespace
}  // namespace tunefleet::testing
