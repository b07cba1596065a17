// The emitter's per-workload choice: of every template's best record and
// their naive reference kernels, each entry runs the fastest, and the
// package links a vendor library only when an entry calls it. Records are
// written through the store's own API with chosen times, so the winner is
// known.
#include <filesystem>
#include <string>

#include "base/files.h"
#include "emitter/emitter.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/temp_store.h"

namespace tunefleet::emitter {
namespace {

using tunefleet::v1::Measurement;

class EmitChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    tunefleet::v1::DeviceInfo info;
    info.set_device_name("Test GPU");
    info.set_vendor("Acme");
    ASSERT_TRUE(store_->UpsertDevice("dev", info).ok());
    out_ = ::testing::TempDir() + "/emit_choice_" + std::to_string(getpid());
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }

  // One job of `template_name` on `shape` whose single trial (config
  // `config`) took `ns`, and whose reference took `reference_ns` (0: not
  // measured).
  void Record(const std::string& template_name, const std::string& config,
              double ns, double reference_ns = 0) {
    auto tmpl = templates::FindTemplate("dense", template_name);
    ASSERT_TRUE(tmpl.ok()) << tmpl.status();
    store::JobParams job{*templates::Workload::Parse("dense", kShape),
                         *tmpl,
                         "dev",
                         tunefleet::v1::STRATEGY_RANDOM,
                         1,
                         1,
                         0};
    auto id = store_->CreateJob(job);
    ASSERT_TRUE(id.ok()) << id.status();
    if (reference_ns > 0) {
      ASSERT_TRUE(store_->SetJobReference(*id, reference_ns).ok());
    }
    auto trials = store_->InsertTrials(*id, {{0, config}});
    ASSERT_TRUE(trials.ok()) << trials.status();
    Measurement m;
    m.set_error(Measurement::OK);
    m.add_times_ns(ns);
    ASSERT_TRUE(store_->CompleteTrial((*trials)[0], m, ns, 1).ok());
  }

  absl::StatusOr<EmitSummary> Emit() {
    StoreRecords records(store_);
    return EmitLibrary(records, {{"dev"}, out_});
  }
  std::string File(const std::string& name) {
    auto text = base::ReadWholeFile(out_ + "/" + name);
    return text.ok() ? *text : "";
  }

  // A config of dense_gemm: each knob's first value.
  static std::string Generated() {
    std::string config;
    for (const templates::Knob& k :
         (*templates::FindTemplate("dense", "dense_gemm"))->knobs()) {
      config += (config.empty() ? "" : ",") + k.name + "=" +
                std::to_string(k.values[0]);
    }
    return config;
  }

  static constexpr const char* kShape = "N=64,K=32,affine=shift,act=relu";
  const std::string kGenerated = Generated();
  testing::TempStore db_{"emit_choice_test"};
  store::Store* store_ = db_.store();
  std::string out_;
};

TEST_F(EmitChoice, ALibraryCallThatMeasuredFastestIsTheEntryAndIsLinked) {
  Record("dense_gemm", kGenerated, 2000, 5000);
  Record("clblast_dense", "SWAP=1", 1500);
  auto summary = Emit();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->skipped.empty()) << summary->skipped[0];
  EXPECT_EQ(summary->entries, 1);  // one workload, one entry
  EXPECT_EQ(summary->library_entries, 1);
  EXPECT_EQ(summary->reference_entries, 0);
  const std::string table = File("src/tuned_table.cc");
  EXPECT_NE(table.find("{\"clblast\", \"gemm\","), std::string::npos) << table;
  const std::string cmake = File("CMakeLists.txt");
  EXPECT_NE(cmake.find("TUNEFLEET_TUNED_CLBLAST=1"), std::string::npos);
  EXPECT_NE(cmake.find("find_library(TUNEFLEET_TUNED_CLBLAST_LIBRARY"),
            std::string::npos);
}

TEST_F(EmitChoice, AFasterGeneratedKernelLeavesTheLibraryOut) {
  Record("dense_gemm", kGenerated, 1000, 5000);
  Record("clblast_dense", "SWAP=0", 1500);
  auto summary = Emit();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->skipped.empty()) << summary->skipped[0];
  EXPECT_EQ(summary->entries, 1);
  EXPECT_EQ(summary->library_entries, 0);
  EXPECT_EQ(File("src/tuned_table.cc").find("{\"clblast\""), std::string::npos);
  const std::string cmake = File("CMakeLists.txt");
  EXPECT_EQ(cmake.find("clblast"), std::string::npos) << cmake;
  EXPECT_EQ(cmake.find("@LIBRARY_LINKS@"), std::string::npos) << cmake;
}

TEST_F(EmitChoice, TheNaiveKernelWinsOverBothWhenItMeasuredFastest) {
  Record("dense_gemm", kGenerated, 2000, 900);
  Record("clblast_dense", "SWAP=0", 1500);
  auto summary = Emit();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->skipped.empty()) << summary->skipped[0];
  EXPECT_EQ(summary->entries, 1);
  EXPECT_EQ(summary->reference_entries, 1);
  EXPECT_EQ(summary->library_entries, 0);
  EXPECT_EQ(File("CMakeLists.txt").find("clblast"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet::emitter
