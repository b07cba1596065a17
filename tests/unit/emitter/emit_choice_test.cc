// The emitter's per-workload choice: of every template's best record and
// their naive reference kernels, each entry runs the fastest, and the
// package links a vendor library only when an entry calls it. Records are
// written through the store's own API with chosen times, so the winner is
// known.
#include <filesystem>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "dashboard/store_source.h"
#include "emitter/choice.h"
#include "emitter/emitter.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/device_store_test.h"
#include "tests/support/small_job.h"

namespace tunefleet::emitter {
namespace {

using tunefleet::v1::Measurement;

class EmitChoice : public testing::DeviceStoreTest {
 protected:
  EmitChoice() : DeviceStoreTest("emit_choice_test", "dev", "Acme") {}
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DeviceStoreTest::SetUp());
    out_ = ::testing::TempDir() + "/emit_choice_" + std::to_string(getpid());
    std::filesystem::remove_all(out_);
  }
  void TearDown() override { std::filesystem::remove_all(out_); }

  // One job of `template_name` on `shape` whose single trial (config
  // `config`) took `ns`, and whose reference took `reference_ns` (0: not
  // measured).
  // `driver`: the measuring agent's driver version ("": not recorded);
  // `error`: the measurement's outcome.
  void Record(const std::string& template_name, const std::string& config,
              double ns, double reference_ns = 0,
              const std::string& driver = "",
              Measurement::Error error = Measurement::OK) {
    auto tmpl = templates::FindTemplate("dense", template_name);
    ASSERT_TRUE(tmpl.ok()) << tmpl.status();
    store::JobParams job{{*templates::Workload::Parse("dense", kShape), *tmpl},
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
    m.set_error(error);
    m.add_times_ns(ns);
    store::TrialLease lease;
    lease.driver_version = driver;
    ASSERT_TRUE(store_->CompleteTrial((*trials)[0], m, ns, 1, lease).ok());
  }

  // The one entry of the key (the tests record one workload); nullopt,
  // with a failure, otherwise.
  std::optional<EntryChoice> OnlyEntry() {
    dashboard::StoreDataSource records(store_);
    auto choices = ChooseEntries(records, "dev");
    EXPECT_TRUE(choices.ok()) << choices.status();
    if (!choices.ok()) return std::nullopt;
    EXPECT_EQ(choices->entries.size(), 1u);
    if (choices->entries.size() != 1) return std::nullopt;
    return choices->entries.begin()->second;
  }

  // The one entry when every config of dense_gemm failed (no record) and
  // its reference took `reference_ns`, and clblast_dense took 1500 ns.
  std::optional<EntryChoice> EntryBesideAFailedTemplate(double reference_ns) {
    Record("dense_gemm", kGenerated, 2000, reference_ns, "",
           Measurement::INVALID_CONFIG);
    Record("clblast_dense", "SWAP=0", 1500);
    return OnlyEntry();
  }

  absl::StatusOr<EmitSummary> Emit() {
    dashboard::StoreDataSource records(store_);
    return EmitLibrary(records, {{"dev"}, out_});
  }
  // Emits the library, which must succeed, skip nothing and hold one
  // entry of the one workload: `library` of them (0 or 1) a library call,
  // `reference` a naive reference kernel. Without a library call its
  // CMakeLists.txt does not name clblast.
  void ExpectOneEntryEmitted(int library, int reference) {
    auto summary = Emit();
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_TRUE(summary->skipped.empty()) << summary->skipped[0];
    EXPECT_EQ(summary->entries, 1);
    EXPECT_EQ(summary->library_entries, library);
    EXPECT_EQ(summary->reference_entries, reference);
    if (library == 0) {
      const std::string cmake = File("CMakeLists.txt");
      EXPECT_EQ(cmake.find("clblast"), std::string::npos) << cmake;
    }
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
  std::string out_;
};

TEST_F(EmitChoice, ALibraryCallThatMeasuredFastestIsTheEntryAndIsLinked) {
  Record("dense_gemm", kGenerated, 2000, 5000);
  Record("clblast_dense", "SWAP=1", 1500);
  ASSERT_NO_FATAL_FAILURE(ExpectOneEntryEmitted(/*library=*/1, 0));
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
  ASSERT_NO_FATAL_FAILURE(ExpectOneEntryEmitted(0, /*reference=*/0));
  EXPECT_EQ(File("src/tuned_table.cc").find("{\"clblast\""), std::string::npos);
  const std::string cmake = File("CMakeLists.txt");
  EXPECT_EQ(cmake.find("@LIBRARY_LINKS@"), std::string::npos) << cmake;
}

TEST_F(EmitChoice, TheNaiveKernelWinsOverBothWhenItMeasuredFastest) {
  Record("dense_gemm", kGenerated, 2000, 900);
  Record("clblast_dense", "SWAP=0", 1500);
  ASSERT_NO_FATAL_FAILURE(ExpectOneEntryEmitted(0, /*reference=*/1));
}

// A template whose every config failed leaves no record, but its naive
// reference kernel was measured: when that beats the other templates'
// records, the entry runs it.
TEST_F(EmitChoice, AReferenceOfATemplateWithoutRecordsWinsWhenFastest) {
  std::optional<EntryChoice> c = EntryBesideAFailedTemplate(900);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->runs_reference());
  EXPECT_EQ(c->record.template_name(), "dense_gemm");
  EXPECT_EQ(c->tmpl->name(), "dense_gemm");
  EXPECT_DOUBLE_EQ(c->time_ns(), 900);
  ASSERT_NO_FATAL_FAILURE(ExpectOneEntryEmitted(0, /*reference=*/1));
}

// ... and a slower reference of such a template leaves the record be.
TEST_F(EmitChoice, ASlowerReferenceOfATemplateWithoutRecordsIsNotChosen) {
  std::optional<EntryChoice> c = EntryBesideAFailedTemplate(3000);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->runs_reference());
  EXPECT_EQ(c->tmpl->name(), "clblast_dense");
  EXPECT_DOUBLE_EQ(c->time_ns(), 1500);
}

// Driver revisions (docs/DRIVER_DRIFT.md): each revision gets the records
// measured on its own driver, a config found wrong on a driver is not its
// entry there, and a revision without records of a workload runs the
// naive reference kernel.
TEST_F(EmitChoice, EachDriverRevisionGetsTheRecordsMeasuredOnItsDriver) {
  bool added = false;
  ASSERT_TRUE(store_->NoteDriver("dev", "drv-1", &added).ok());
  ASSERT_TRUE(store_->NoteDriver("dev", "drv-2", &added).ok());
  ASSERT_TRUE(store_->NoteDriver("dev", "drv-3", &added).ok());
  // On drv-1 SWAP=0 is the fastest; on drv-2 it computes wrong answers
  // (a re-validation's finding), and SWAP=1 is the best OK config there.
  // Nothing was measured on drv-3.
  Record("clblast_dense", "SWAP=0", 1000, 0, "drv-1");
  Record("clblast_dense", "SWAP=1", 3000, 0, "drv-1");
  Record("clblast_dense", "SWAP=0", 500, 0, "drv-2", Measurement::WRONG_ANSWER);
  Record("clblast_dense", "SWAP=1", 2000, 0, "drv-2");
  auto summary = Emit();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->skipped.empty()) << summary->skipped[0];
  EXPECT_EQ(summary->entries, 3);  // one workload on three revisions
  EXPECT_EQ(summary->driver_revisions, 3);
  EXPECT_EQ(summary->reference_entries, 1);
  EXPECT_EQ(summary->unmeasured_entries, 1);
  const std::string file = File("table.tftable");
  EXPECT_EQ(file.rfind("tunefleet-table\t2\n", 0), 0u) << file;
  for (int r = 1; r <= 3; ++r) {
    EXPECT_NE(
        file.find(absl::StrCat("device\t", r - 1, "\tdev\tAcme\tTest GPU\tdrv-",
                               r, "\t", r, "\n")),
        std::string::npos)
        << file;
  }
  // drv-3's entry: the naive kernel, never measured there.
  EXPECT_NE(file.find("\t0.0\t0.000\treference\t"), std::string::npos) << file;
  // Entries: device 0 runs SWAP=0 (1000 ns), device 1 SWAP=1 (2000 ns).
  EXPECT_NE(file.find("\t1000.0\t"), std::string::npos) << file;
  EXPECT_NE(file.find("\t2000.0\t"), std::string::npos) << file;
  EXPECT_EQ(file.find("\t500.0\t"), std::string::npos) << file;
  EXPECT_EQ(file.find("\t3000.0\t"), std::string::npos) << file;
  const std::string table = File("src/tuned_table.cc");
  EXPECT_NE(table.find("{\"dev\", \"Acme\", \"Test GPU\", \"drv-1\", 1},"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("{\"dev\", \"Acme\", \"Test GPU\", \"drv-2\", 2},"),
            std::string::npos)
      << table;
}

// A key of one driver revision is emitted as before: its best records
// whatever driver they carry, one device line of revision 1.
TEST_F(EmitChoice, AKeyOfOneDriverKeepsItsBestRecords) {
  bool added = false;
  ASSERT_TRUE(store_->NoteDriver("dev", "drv-1", &added).ok());
  Record("clblast_dense", "SWAP=0", 1000, 0, "drv-1");
  Record("clblast_dense", "SWAP=1", 900);  // stored before v7: no driver
  auto summary = Emit();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->entries, 1);
  EXPECT_EQ(summary->driver_revisions, 1);
  const std::string file = File("table.tftable");
  EXPECT_NE(file.find("\t900.0\t"), std::string::npos) << file;
}

}  // namespace
}  // namespace tunefleet::emitter
