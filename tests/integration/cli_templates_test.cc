// What can be tuned, through the tunefleet binary: `templates` lists the
// registry's templates and knobs, `space` builds a template's search space
// for a workload on a device (this machine's, PoCL here, or one from a
// device info file), and `measure --config` names every missing knob.
// Expectations come from the registry and the template API in this
// process, not from copies of the templates' knobs.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/workload.h"
#include "nlohmann/json.hpp"
#include "tests/support/command_runner.h"
#include "trial/trial_request.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet {
namespace {

using templates::KernelTemplate;
using templates::KnobValues;
using testing::BinaryDir;
using testing::CliBinary;
using testing::RunCommand;
using testing::SourceDir;

class CliTemplates : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = CliBinary();
    work_ = ::testing::TempDir() + "/cli_templates_test_" +
            std::to_string(getpid());
    std::filesystem::create_directories(work_);
  }
  void TearDown() override { std::filesystem::remove_all(work_); }

  // The limits of this machine's device as its agent reports them.
  templates::DeviceLimits LocalLimits() {
    auto r = RunCommand(BinaryDir() + "/cli/tunefleet-agent --info");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    tunefleet::v1::DeviceInfo info;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &info).ok())
        << r.out;
    return trial::LimitsFromDeviceInfo(info);
  }

  // Runs tunefleet with `args` (after a space), expecting the exit code of
  // a usage error (2) and `error` in stderr. Returns what it printed.
  testing::CommandResult RunRefused(const std::string& args,
                                    const std::string& error) {
    testing::CommandResult r = RunCommand(bin_ + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(error), std::string::npos) << r.err;
    return r;
  }

  std::string bin_, work_;
};

const KernelTemplate& GemmTiled() {
  return *templates::FindTemplate("gemm", "gemm_tiled").value();
}

// The valid configs of a template's whole raw space, through CheckConfig.
uint64_t CountValid(const KernelTemplate& tmpl,
                    const templates::Workload& workload,
                    const templates::DeviceLimits& limits) {
  const auto& knobs = tmpl.knobs();
  std::vector<size_t> digits(knobs.size(), 0);
  KnobValues config(knobs.size());
  uint64_t valid = 0;
  while (true) {
    for (size_t k = 0; k < knobs.size(); ++k) {
      config[k] = knobs[k].values[digits[k]];
    }
    if (tmpl.CheckConfig(config, workload, limits).ok()) ++valid;
    size_t k = 0;
    while (k < knobs.size() && ++digits[k] == knobs[k].values.size()) {
      digits[k++] = 0;
    }
    if (k == knobs.size()) return valid;
  }
}

uint64_t RawSize(const KernelTemplate& tmpl) {
  uint64_t raw = 1;
  for (const auto& k : tmpl.knobs()) raw *= k.values.size();
  return raw;
}

// Every entry's knobs are the registered template's, names and values in
// order, and every registered template is listed.
void ExpectListsTemplates(const nlohmann::json& listed,
                          const std::vector<const KernelTemplate*>& expected) {
  ASSERT_EQ(listed.size(), expected.size()) << listed.dump();
  for (size_t i = 0; i < expected.size(); ++i) {
    const KernelTemplate& t = *expected[i];
    const nlohmann::json& j = listed[i];
    EXPECT_EQ(j["name"], std::string(t.name()));
    EXPECT_EQ(j["op"], std::string(t.op()));
    EXPECT_EQ(j["version"], t.version());
    EXPECT_EQ(j["raw_configs"].get<uint64_t>(), RawSize(t)) << t.name();
    ASSERT_EQ(j["knobs"].size(), t.knobs().size()) << t.name();
    for (size_t k = 0; k < t.knobs().size(); ++k) {
      EXPECT_EQ(j["knobs"][k]["name"], t.knobs()[k].name);
      EXPECT_EQ(j["knobs"][k]["values"].get<std::vector<int64_t>>(),
                t.knobs()[k].values)
          << t.name() << " " << t.knobs()[k].name;
      EXPECT_EQ(j["knobs"][k]["size_like"], t.knobs()[k].size_like);
    }
  }
}

TEST_F(CliTemplates, JsonListsTheRegistryWithEveryKnob) {
  auto r = RunCommand(bin_ + " templates --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ExpectListsTemplates(j["templates"], templates::AllTemplates());
  bool gemm_tiled = false;
  for (const nlohmann::json& t : j["templates"]) {
    if (t["name"] != "gemm_tiled") continue;
    gemm_tiled = true;
    EXPECT_EQ(t["op"], "gemm");
    std::vector<std::string> dims;
    for (const auto& d : t["dims"]) dims.push_back(d["name"]);
    EXPECT_EQ(dims, (std::vector<std::string>{"M", "N", "K"}));
  }
  EXPECT_TRUE(gemm_tiled);
}

TEST_F(CliTemplates, FiltersByOpAndListsAUsersSpec) {
  auto r = RunCommand(bin_ + " templates --op gemm --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<const KernelTemplate*> gemm;
  for (const KernelTemplate* t : templates::AllTemplates()) {
    if (t->op() == "gemm") gemm.push_back(t);
  }
  ASSERT_FALSE(gemm.empty());
  ExpectListsTemplates(nlohmann::json::parse(r.out)["templates"], gemm);

  // Text: a line per template, a line per knob.
  r = RunCommand(bin_ + " templates --op gemm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gemm_tiled"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("conv2d_direct"), std::string::npos) << r.out;
  for (const auto& k : GemmTiled().knobs()) {
    EXPECT_NE(r.out.find("  " + k.name + " "), std::string::npos) << k.name;
  }

  const std::string spec = SourceDir() + "/tests/data/templates/saxpy.toml";
  r = RunCommand(bin_ + " templates --json --template " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto saxpy = templates::RegisterSpecFile(spec);
  ASSERT_TRUE(saxpy.ok()) << saxpy.status();
  ExpectListsTemplates(nlohmann::json::parse(r.out)["templates"], {*saxpy});

  RunRefused(" templates --op conv9d", "unknown op 'conv9d'");
}

TEST_F(CliTemplates, SpaceSamplesValidConfigsOfTheLocalDevice) {
  const std::string shape = "M=64,N=48,K=40";
  auto r = RunCommand(bin_ + " space --template gemm_tiled --shape " + shape +
                      " --sample 8 --seed 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const KernelTemplate& gemm = GemmTiled();
  const auto workload = templates::Workload::Parse("gemm", shape);
  ASSERT_TRUE(workload.ok());
  const templates::DeviceLimits limits = LocalLimits();
  EXPECT_EQ(j["template_name"], "gemm_tiled");
  EXPECT_EQ(j["workload_key"], workload->Canonical());
  EXPECT_EQ(j["device_limits"]["max_work_group_size"].get<uint64_t>(),
            limits.max_work_group_size);
  const uint64_t raw = j["raw_size"].get<uint64_t>();
  const uint64_t valid = j["valid_size"].get<uint64_t>();
  EXPECT_EQ(raw, RawSize(gemm));
  EXPECT_TRUE(j["valid_exact"].get<bool>());
  EXPECT_LE(valid, raw);
  EXPECT_EQ(valid, CountValid(gemm, *workload, limits));
  ASSERT_GE(valid, 8u);
  ASSERT_EQ(j["sample"].size(), 8u);
  for (const nlohmann::json& text : j["sample"]) {
    auto config = gemm.ParseConfig(text.get<std::string>());
    ASSERT_TRUE(config.ok()) << text << ": " << config.status();
    EXPECT_TRUE(gemm.CheckConfig(*config, *workload, limits).ok()) << text;
  }
  // The same seed draws the same sample.
  auto again = RunCommand(bin_ + " space --template gemm_tiled --shape " +
                          shape + " --sample 8 --seed 3 --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["sample"], j["sample"]);

  // Text output names the counts.
  auto text = RunCommand(bin_ + " space --shape " + shape + " --sample 2");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("raw configs:    " + std::to_string(raw)),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("valid configs:  " + std::to_string(valid)),
            std::string::npos)
      << text.out;
}

// A device info file stands in for the device: a small one admits fewer
// configs, exactly those CheckConfig passes under its limits.
TEST_F(CliTemplates, SpaceReadsADeviceInfoFile) {
  const std::string file = work_ + "/tiny.json";
  std::ofstream(file) << R"({"device_name": "Tiny", "platform_name": "Test",
      "max_work_group_size": 32, "max_work_item_sizes": [32, 32, 32],
      "local_mem_bytes": 2048, "max_mem_alloc_bytes": 1073741824,
      "compute_units": 2})";
  const std::string shape = "M=64,N=64,K=64";
  auto r = RunCommand(bin_ + " space --shape " + shape +
                      " --sample 100 --json --device-info " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"]["name"], "Tiny");
  templates::DeviceLimits tiny;
  tiny.max_work_group_size = 32;
  tiny.max_work_item_sizes = {32, 32, 32};
  tiny.local_mem_bytes = 2048;
  tiny.max_mem_alloc_bytes = uint64_t{1} << 30;
  tiny.compute_units = 2;
  const KernelTemplate& gemm = GemmTiled();
  const auto workload = templates::Workload::Parse("gemm", shape);
  ASSERT_TRUE(workload.ok());
  const uint64_t valid = j["valid_size"].get<uint64_t>();
  EXPECT_EQ(valid, CountValid(gemm, *workload, tiny));
  EXPECT_LT(valid, CountValid(gemm, *workload, LocalLimits()));
  EXPECT_EQ(j["sample"].size(), std::min<uint64_t>(valid, 100));
  for (const nlohmann::json& text : j["sample"]) {
    auto config = gemm.ParseConfig(text.get<std::string>());
    ASSERT_TRUE(config.ok()) << text;
    EXPECT_TRUE(gemm.CheckConfig(*config, *workload, tiny).ok()) << text;
  }

  std::ofstream(work_ + "/bad.json") << "{\"device_name\": 7";
  RunRefused(
      " space --shape " + shape + " --device-info " + work_ + "/bad.json",
      "is not a device info in JSON");
}

TEST_F(CliTemplates, SpaceErrorsNameWhatIsWrong) {
  // An unknown template: every known one is listed.
  auto r = RunRefused(" space --template nope --shape M=64,N=64,K=64",
                      "tunefleet space: no template named 'nope'");
  for (const KernelTemplate* t : templates::AllTemplates()) {
    EXPECT_NE(r.err.find(std::string(t->name())), std::string::npos)
        << t->name() << " not in: " << r.err;
  }
  // A template of another op.
  RunRefused(
      " space --template gemm_tiled --op conv2d --shape "
      "N=1,C=8,H=8,W=8,K=8,R=3,S=3",
      "template gemm_tiled runs op gemm, not conv2d");
  // A template of the op that does not run the shape.
  r = RunRefused(
      " space --template conv2d_1x1_gemm --shape "
      "N=1,C=8,H=8,W=8,K=8,R=3,S=3",
      "template conv2d_1x1_gemm does not run conv2d");
  EXPECT_NE(r.err.find("conv2d_direct"), std::string::npos) << r.err;
  // Bad shapes, as `tune` reports them.
  for (const char* shape : {"M=0,N=4,K=4", "M=4,N=4", "M=4,N=x,K=4"}) {
    r = RunCommand(bin_ + " space --shape " + shape);
    EXPECT_EQ(r.exit_code, 2) << shape;
    EXPECT_NE(r.err.find("tunefleet space: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("shape"), std::string::npos) << shape << ": " << r.err;
  }
}

TEST_F(CliTemplates, MeasureNamesEveryMissingAndUnknownKnob) {
  const auto& knobs = GemmTiled().knobs();
  ASSERT_GE(knobs.size(), 3u);
  std::string config = "BOGUS=1";
  for (size_t k = 2; k < knobs.size(); ++k) {
    absl::StrAppend(&config, ",", knobs[k].name, "=", knobs[k].values[0]);
  }
  auto r = RunCommand(bin_ + " measure --shape M=8,N=8,K=8 --config " + config);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(absl::StrCat("config is missing knobs ", knobs[0].name,
                                    ", ", knobs[1].name, " (")),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("has no knob 'BOGUS'"), std::string::npos) << r.err;
}

TEST_F(CliTemplates, HelpDescribesBothCommands) {
  auto r = RunCommand(bin_ + " templates --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--template"), std::string::npos) << r.out;
  r = RunCommand(bin_ + " space --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--shape", "--op", "--dtype", "--template",
                           "--sample", "--seed", "--device-info", "--json"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
  r = RunCommand(bin_ + " --help");
  EXPECT_NE(r.out.find("templates"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("space"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tunefleet
