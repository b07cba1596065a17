// tune -> emit -> build the emitted library with CMake -> install -> use it
// from another project via find_package -> run on PoCL against a host
// reference; and `emit --server` against a real tunefleet-server.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "auth/roles.h"
#include "auth/tokens.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/fleet_harness.h"
#include "tests/support/template_harness.h"

namespace tunefleet {
namespace {

using testing::CliBinary;
using testing::ReadAll;
using testing::RunCommand;
using testing::SourceDir;

// Expects each line of emit_consumer's output to show the launch the tuner
// itself computes for the shape and config: the library's geometry and
// build options are generated from the template's spec, not written again.
void ExpectLaunchesOfTheTemplate(const std::string& output) {
  const templates::KernelTemplate& gemm =
      *templates::FindTemplate("gemm", "gemm_tiled").value();
  std::istringstream lines(output);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    int m = 0, n = 0, k = 0;
    char match[32], device[32], config[256];
    double error = 0;
    if (std::sscanf(line.c_str(), "%dx%dx%d %31s %31s %lf %255s", &m, &n, &k,
                    match, device, &error, config) != 7) {
      continue;
    }
    auto workload =
        templates::Workload::Create("gemm", {{"M", m}, {"N", n}, {"K", k}});
    auto values = gemm.ParseConfig(config);
    ASSERT_TRUE(workload.ok() && values.ok()) << line;
    const templates::LaunchDesc l = gemm.Launch(*values, *workload);
    EXPECT_NE(line.find(absl::StrCat("[", l.build_options, "] g=", l.global[0],
                                     ",", l.global[1], " l=", l.local[0], ",",
                                     l.local[1])),
              std::string::npos)
        << line;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// The lines of `output` that start with `prefix` + " ", by their second
// word: e.g. "case transposed_a 3e-07 OK" under "case" is
// {"transposed_a", "3e-07 OK"}.
std::map<std::string, std::string> Lines(const std::string& output,
                                         const std::string& prefix) {
  std::map<std::string, std::string> found;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix + " ", 0) != 0) continue;
    const std::string rest = line.substr(prefix.size() + 1);
    const size_t space = rest.find(' ');
    found[rest.substr(0, space)] =
        space == std::string::npos ? "" : rest.substr(space + 1);
  }
  return found;
}

class EmittedLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    bin_ = CliBinary();
    work_ = testing::FreshTempDir("emit_test");
  }
  void TearDown() override { std::filesystem::remove_all(work_); }

  // Tunes `args` (--shape ... and more) into `db`; returns the --json
  // summary.
  nlohmann::json Tune(const std::string& db, const std::string& args) {
    auto tune = RunCommand(bin_ + " tune --json " + args + " --db " + db);
    EXPECT_EQ(tune.exit_code, 0) << tune.err;
    return tune.exit_code == 0 ? nlohmann::json::parse(tune.out)
                               : nlohmann::json();
  }

  std::string bin_, work_;
};

TEST_F(EmittedLibrary, BuildsInstallsAndComputesCorrectGemms) {
  const std::string db = work_ + "/t.db";
  const nlohmann::json tuned =
      Tune(db, "--shape M=64,N=48,K=40 --trials 6 --skip-reference");
  ASSERT_FALSE(tuned.is_null());
  const std::string key = tuned["device_key"];
  ASSERT_FALSE(tuned["best"].is_null());
  auto one = RunCommand(bin_ + " emit --db " + db + " --out " + work_ + "/one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find(": 1 tuned entry\n"), std::string::npos) << one.out;
  // An op of exact entries (no shape-generic template), for workload
  // strings in short forms.
  ASSERT_FALSE(
      Tune(db, "--op softmax --shape D=100 --trials 3 --skip-reference")
          .is_null());

  // Without --device-key the database's only key is emitted, and said.
  auto emit =
      RunCommand(bin_ + " emit --json --db " + db + " --out " + work_ + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 2);
  EXPECT_EQ(nlohmann::json::parse(emit.out)["device_keys"],
            nlohmann::json::array({key}));
  // --page-size 0 is refused, as by query and jobs.
  auto zero = RunCommand(bin_ + " emit --server 127.0.0.1:1 --page-size 0 " +
                         "--out " + work_ + "/never");
  EXPECT_EQ(zero.exit_code, 2) << zero.err;

  auto build = testing::BuildEmittedLibrary(work_, "emit_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;

  // The tuned shape, a nearby one, odd ones and a tiny one; then workload
  // strings for DescribeRun and CanonicalWorkload.
  auto run = RunCommand(work_ + "/consumer/emit_consumer 64x48x40 50x70x33 " +
                        "1x1x1 129x3x77 'softmax D=100' " +
                        "'softmax fp32 D=100;N=1' 'softmax D=101' " +
                        "'softmax D=0' 'softmax D=100 D=100' " +
                        "'softmax N=1 D=100 fp32 act=relu' 'conv9d X=1'");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("64x48x40 exact name"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("50x70x33 nearest name"), std::string::npos)
      << run.out;
  // The best config as the library prints it: "MWG=16,NWG=16,...".
  std::string best_config;
  for (const nlohmann::json& knob : tuned["best"]["config"]["knobs"]) {
    best_config += absl::StrCat(best_config.empty() ? "" : ",",
                                knob["name"].get<std::string>(), "=",
                                knob["value"].get<int64_t>());
  }
  EXPECT_NE(run.out.find(best_config), std::string::npos) << run.out;
  ExpectLaunchesOfTheTemplate(run.out);
  // Short forms read as the canonical string; untuned, out of range, given
  // twice, an attribute softmax lacks and an unknown op do not.
  const std::string softmax = "canonical='softmax N=1 D=100 fp32' device=";
  for (const std::string& line :
       {"describe 'softmax D=100' " + softmax + key,
        "describe 'softmax fp32 D=100;N=1' " + softmax + key,
        std::string("describe 'softmax D=101' canonical='softmax N=1 D=101 "
                    "fp32' device="),
        std::string("describe 'softmax D=0' canonical='' device="),
        std::string("describe 'softmax D=100 D=100' canonical='' device="),
        std::string("describe 'softmax N=1 D=100 fp32 act=relu' canonical='' "
                    "device="),
        std::string("describe 'conv9d X=1' canonical='' device=")}) {
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n"
                                                            << run.out;
  }

  // The CLBlast-style API, case by case against a host reference.
  auto api = RunCommand(work_ + "/consumer/emit_gemm_api");
  EXPECT_EQ(api.exit_code, 0) << api.out << api.err;
  const std::map<std::string, std::string> cases = Lines(api.out, "case");
  for (const char* name :
       {"plain", "transposed_a", "transposed_b", "transposed_both",
        "alpha_beta", "alpha_zero", "beta_zero_ignores_c", "col_major",
        "col_major_transposed_alpha_beta", "ld_offsets", "ld_only",
        "ld_offsets_col_major_transposed_a", "batched", "batched_shared_a",
        "batched_col_major"}) {
    ASSERT_EQ(cases.count(name), 1u) << name << "\n" << api.out;
    EXPECT_TRUE(cases.at(name).size() > 3 &&
                cases.at(name).substr(cases.at(name).size() - 3) == " OK")
        << name << ": " << cases.at(name);
  }
  const std::map<std::string, std::string> errors = Lines(api.out, "error");
  // CLBlast's StatusCode values (tunefleet_tuned.h), and OpenCL's
  // CL_INVALID_VALUE (-30) and CL_INVALID_COMMAND_QUEUE (-36).
  const std::map<std::string, int> expected_errors = {
      {"zero_m", -1017},
      {"null_a", -1022},
      {"null_b", -1021},
      {"null_c", -1020},
      {"small_lda", -1016},
      {"small_lda_transposed", -1016},
      {"small_ldb", -1015},
      {"small_ldc", -1014},
      {"small_ldc_col_major", -1014},
      {"short_a", -1011},
      {"offset_past_c", -1009},
      {"bad_layout", -30},
      {"null_queue", -36},
      {"zero_batch", -2049},
      {"batch_past_b", -1010},
      {"legacy_zero_m", -30}};
  for (const auto& [name, code] : expected_errors) {
    ASSERT_EQ(errors.count(name), 1u) << name << "\n" << api.out;
    EXPECT_EQ(errors.at(name), absl::StrCat(code, " OK")) << name;
  }
}

// Image configs (IMB of the GEMM kernel's templates, IMI of the direct
// convolutions) run through the emitted library as the agent measured
// them: images copied from buffers whose rows fill whole texels, packed
// from those that do not, a plain buffer where the config reads none. The
// records are written through the store with chosen times, so that the
// image configs are the entries; the library's outputs are checked against
// host implementations (tests/data/emit_model_consumer).
TEST_F(EmittedLibrary, ImageConfigsReadTheirImagesAsTheAgentDid) {
  const std::string db = work_ + "/img.db";
  std::string workloads;
  {
    auto store = store::Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(
        (*store)->UpsertDevice("dev", testing::Device().device_info()).ok());
    struct Task {
      const char* op;
      const char* tmpl;
      const char* shape;
      const char* knob;
    };
    // Row lengths 48, 12 (copy) and 70, 11, 13 (pack).
    const Task tasks[] = {
        {"gemm", "gemm_tiled", "M=64,N=48,K=40", "IMB"},
        {"dense", "dense_gemm", "N=70,K=33,affine=shift,act=relu", "IMB"},
        {"conv2d", "conv2d_direct",
         "N=2,C=5,H=9,W=11,K=6,R=3,S=3,PH=1,PW=1,affine=scale_shift,act=clip",
         "IMI"},
        {"conv2d", "conv2d_direct", "C=4,H=7,W=12,K=3,R=3,S=3,SH=2,SW=2",
         "IMI"},
        {"depthwise_conv2d", "depthwise_direct",
         "C=6,H=10,W=13,R=3,S=3,PH=1,PW=1,act=relu", "IMI"},
        // The extended epilogue: the residual buffer passed (residual=add)
        // or left out (the 5 buffers of callers that predate it).
        {"conv2d", "conv2d_direct",
         "N=2,C=3,H=6,W=11,K=4,R=3,S=3,PH=1,PW=1,affine=scale_shift,"
         "residual=add,act=silu,post=scale_shift",
         "IMI"},
        {"dense", "dense_gemm",
         "M=3,N=30,K=20,affine=shift,act=leakyrelu,post=scale_shift", "IMB"},
        {"depthwise_conv2d", "depthwise_direct",
         "C=5,H=9,W=7,R=3,S=3,PH=1,PW=1,residual=add,act=sigmoid", "IMI"},
    };
    uint64_t seed = 7;
    for (const Task& t : tasks) {
      const templates::KernelTemplate& tmpl =
          *templates::FindTemplate(t.op, t.tmpl).value();
      auto w = templates::Workload::Parse(t.op, t.shape);
      ASSERT_TRUE(w.ok()) << w.status();
      const auto configs =
          testing::RandomConfigsWith(tmpl, *w, t.knob, 1, 1, seed++);
      ASSERT_EQ(configs.size(), 1u) << t.tmpl << " " << t.shape;
      store::JobParams job{{*w, &tmpl}, "dev", tunefleet::v1::STRATEGY_RANDOM,
                           1,           1,     0};
      auto id = (*store)->CreateJob(job);
      ASSERT_TRUE(id.ok()) << id.status();
      auto trials =
          (*store)->InsertTrials(*id, {{0, tmpl.ConfigString(configs[0])}});
      ASSERT_TRUE(trials.ok()) << trials.status();
      tunefleet::v1::Measurement m;
      m.set_error(tunefleet::v1::Measurement::OK);
      m.add_times_ns(1000);
      ASSERT_TRUE((*store)->CompleteTrial((*trials)[0], m, 1000, 1).ok());
      workloads += " '" + w->Canonical() + "'";
    }
  }
  // The nearest tuned GEMM shape's image config on a row of 70 (pack).
  workloads += " 'gemm M=50 N=70 K=33 fp32'";
  auto emit = RunCommand(bin_ + " emit --json --db " + db +
                         " --device-key dev --out " + work_ + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 8);
  auto build = testing::BuildEmittedLibrary(work_, "emit_model_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto run = RunCommand(work_ + "/consumer/emit_model_consumer" + workloads);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("MISMATCH"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 9) << run.out;
}

// A record whose kernel needs scratch buffers (gemm_gpu's split-K,
// KSPLIT=2: partial sums W and per-tile counters S, fill = "zero") runs
// through the emitted library's Run() and Gemm()s with A, B and C alone:
// the library keeps zeroed scratch per command queue, and launches three
// times in a row find the counters zero again (one C tile, two K slices).
// The record is written through the store, so that the split-K config is
// the entry.
TEST_F(EmittedLibrary, SplitKScratchBuffersAreTheLibrarys) {
  const std::string db = work_ + "/scratch.db";
  const templates::KernelTemplate& tmpl =
      *templates::FindTemplate("gemm", "gemm_gpu").value();
  auto w = templates::Workload::Parse("gemm", "M=64,N=64,K=256");
  ASSERT_TRUE(w.ok()) << w.status();
  auto config = tmpl.ParseConfig(
      "BM=64,BN=64,BK=16,TM=8,TN=8,LOADV=4,DB=1,STRN=1,WTILE=0,ASYNC=0,"
      "KSPLIT=2");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(tmpl.CheckConfig(*config, *w, testing::DeviceLimits()).ok());
  {
    auto store = store::Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE(
        (*store)->UpsertDevice("dev", testing::Device().device_info()).ok());
    store::JobParams job{{*w, &tmpl}, "dev", tunefleet::v1::STRATEGY_RANDOM,
                         1,           1,     0};
    auto id = (*store)->CreateJob(job);
    ASSERT_TRUE(id.ok()) << id.status();
    auto trials =
        (*store)->InsertTrials(*id, {{0, tmpl.ConfigString(*config)}});
    ASSERT_TRUE(trials.ok()) << trials.status();
    tunefleet::v1::Measurement m;
    m.set_error(tunefleet::v1::Measurement::OK);
    m.add_times_ns(1000);
    ASSERT_TRUE((*store)->CompleteTrial((*trials)[0], m, 1000, 1).ok());
  }
  auto emit = RunCommand(bin_ + " emit --json --db " + db +
                         " --device-key dev --out " + work_ + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_EQ(nlohmann::json::parse(emit.out)["entries"], 1);
  // The table: W (4 * M * N floats) and S (ceil(M/32) * ceil(N/32) ints)
  // as scratch arguments of their size in bytes; the entry's 8 arguments
  // take 3 of the caller's buffers.
  const std::string table = ReadAll(work_ + "/lib/src/tuned_table.cc");
  EXPECT_NE(table.find("{'s', 65536},\n    {'s', 16},"), std::string::npos)
      << table;
  EXPECT_NE(table.find(", 0, 8, 3, 0, 1000.0, "), std::string::npos) << table;

  auto build = testing::BuildEmittedLibrary(work_, "emit_scratch_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  auto run = RunCommand(work_ + "/consumer/emit_scratch_consumer 64 64 256");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(
      run.out.find("describe exact name " + tmpl.ConfigString(*config) + "\n"),
      std::string::npos)
      << run.out;
  const std::map<std::string, std::string> cases = Lines(run.out, "case");
  for (const char* name :
       {"run_1", "run_2", "run_3", "gemm_1", "gemm_2", "gemm_3",
        "blas_alpha_beta_1", "blas_alpha_beta_2", "blas_alpha_beta_3",
        "two_queues_1", "two_queues_2", "two_queues_3", "five_buffers_refused",
        "run_after_release"}) {
    ASSERT_EQ(cases.count(name), 1u) << name << "\n" << run.out;
    EXPECT_TRUE(cases.at(name).size() > 3 &&
                cases.at(name).substr(cases.at(name).size() - 3) == " OK")
        << name << ": " << cases.at(name);
  }
  // PoCL has out-of-order queues; elsewhere the consumer says so.
  if (run.out.find("no out-of-order queue") == std::string::npos) {
    for (const char* name :
         {"out_of_order_1", "out_of_order_2", "out_of_order_3"}) {
      ASSERT_EQ(cases.count(name), 1u) << name << "\n" << run.out;
      EXPECT_EQ(cases.at(name).substr(cases.at(name).size() - 3), " OK")
          << name;
    }
  }
  // Bytes kept: W + S for one queue, twice for two, none once released.
  const std::map<std::string, std::string> scratch = Lines(run.out, "scratch");
  EXPECT_EQ(scratch.count("one_queue") ? scratch.at("one_queue") : "", "65552");
  EXPECT_EQ(scratch.count("two_queues") ? scratch.at("two_queues") : "",
            "131104");
  EXPECT_EQ(scratch.count("released_other") ? scratch.at("released_other") : "",
            "65552");
  EXPECT_EQ(scratch.count("released_all") ? scratch.at("released_all") : "",
            "0");
}

TEST_F(EmittedLibrary, RefusesUnknownDeviceKeys) {
  ASSERT_FALSE(
      Tune(work_ + "/t.db", "--shape M=8,N=8,K=8 --trials 1 --skip-reference")
          .is_null());
  auto emit =
      RunCommand(bin_ + " emit --db " + work_ +
                 "/t.db --device-key no-such-key --out " + work_ + "/o");
  EXPECT_EQ(emit.exit_code, 2);
  EXPECT_NE(emit.err.find("no device with key 'no-such-key'"),
            std::string::npos)
      << emit.err;
  EXPECT_FALSE(std::filesystem::exists(work_ + "/o"));
}

// `emit --server` reads the same records through a real tunefleet-server
// (QueryRecords and ListJobs a page at a time, a reader's token) and writes
// the same library as `emit --db` on the server's database.
TEST_F(EmittedLibrary, EmitsTheSameLibraryThroughAServer) {
  testing::FleetHarness fleet("emit_server");
  // Three tasks: two of the shape-generic gemm template, one of exact
  // entries; references measured (the 8x8x8 gemm may ship its naive
  // kernel), so reference times come through ListJobs too.
  ASSERT_FALSE(Tune(fleet.db_path(),
                    "--shape M=64,N=48,K=40 --trials 4 --skip-reference")
                   .is_null());
  ASSERT_FALSE(
      Tune(fleet.db_path(), "--shape M=8,N=8,K=8 --trials 2").is_null());
  ASSERT_FALSE(
      Tune(fleet.db_path(), "--op softmax --shape D=100 --trials 3").is_null());
  const std::string token = *auth::GenerateToken();
  ASSERT_TRUE(auth::AppendTokenToFile(fleet.tokens_file(),
                                      auth::TokenEntry::ForToken(
                                          token, auth::Role::kReader, "emit"))
                  .ok());
  const std::string token_file = work_ + "/reader.token";
  std::ofstream(token_file) << token << "\n";
  ASSERT_TRUE(fleet.StartServer());

  auto from_db = RunCommand(bin_ + " emit --json --db " + fleet.db_path() +
                            " --out " + work_ + "/from-db");
  ASSERT_EQ(from_db.exit_code, 0) << from_db.err;
  // One record (and job) per page: every page must be followed.
  auto from_server = RunCommand(
      bin_ + " emit --json --server " + fleet.address() + " --token-file " +
      token_file + " --page-size 1 --out " + work_ + "/from-server");
  ASSERT_EQ(from_server.exit_code, 0) << from_server.err;
  const auto db_summary = nlohmann::json::parse(from_db.out);
  const auto server_summary = nlohmann::json::parse(from_server.out);
  EXPECT_EQ(db_summary["entries"], 3);
  EXPECT_EQ(server_summary["entries"], db_summary["entries"]);
  EXPECT_EQ(server_summary["reference_entries"],
            db_summary["reference_entries"]);
  EXPECT_EQ(server_summary["files"], db_summary["files"]);

  const std::map<std::string, std::string> db_files =
      testing::ReadTree(work_ + "/from-db");
  const std::map<std::string, std::string> server_files =
      testing::ReadTree(work_ + "/from-server");
  // 14 of the kernel library, its table file (table.tftable) and 10 of the
  // model runtime (model_runtime/).
  EXPECT_EQ(db_files.size(), 25u);
  ASSERT_EQ(server_files.size(), db_files.size());
  for (const auto& [name, text] : db_files) {
    ASSERT_EQ(server_files.count(name), 1u) << name;
    EXPECT_TRUE(server_files.at(name) == text) << name << " differs";
  }

  // The server refuses a client without a token; nothing is written.
  auto anonymous = RunCommand(bin_ + " emit --server " + fleet.address() +
                              " --out " + work_ + "/anonymous");
  EXPECT_EQ(anonymous.exit_code, 1) << anonymous.err;
  EXPECT_NE(anonymous.err.find("tunefleet emit: "), std::string::npos)
      << anonymous.err;
  EXPECT_FALSE(std::filesystem::exists(work_ + "/anonymous"));
  // --server and --db name two sources: refused.
  auto both = RunCommand(bin_ + " emit --server " + fleet.address() + " --db " +
                         fleet.db_path() + " --out " + work_ + "/both");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(work_ + "/both"));
}

}  // namespace
}  // namespace tunefleet
