// Driver revisions in an emitted library (issue 39, item 3;
// docs/DRIVER_DRIFT.md, docs/TABLES.md): one database whose device key has
// three driver revisions (its real PoCL driver with a tuned softmax; a
// driver nothing was measured on; a driver on which another config was
// measured OK and the first driver's best config WRONG_ANSWER), emitted
// once, built, and a consumer (tests/data/emit_driver_consumer) run as on
// each driver (TUNEFLEET_TUNED_DRIVER_VERSION): each runs its revision's
// own entry (the naive reference kernel where its revision has no record),
// a driver of no revision runs the latest revision's, and every run's
// output matches a host softmax.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"

namespace tunefleet::testing {
namespace {

using tunefleet::v1::Measurement;

constexpr char kNothingMeasured[] = "pocl-nothing-measured 1.0";  // rev 2
constexpr char kOtherDriver[] = "pocl-other-driver 9.9";          // rev 3

std::string ConfigText(const tunefleet::v1::TuningRecord& r) {
  std::vector<std::string> knobs;
  for (const auto& k : r.config().knobs()) {
    knobs.push_back(absl::StrCat(k.name(), "=", k.value()));
  }
  return absl::StrJoin(knobs, ",");
}

// Stores a measurement of `config` of "softmax D=100" on `key`, as an
// agent on driver `driver` would report it.
absl::Status Measure(store::Store& store, const std::string& key,
                     const std::string& tmpl_name, const std::string& config,
                     const std::string& driver, Measurement::Error error,
                     double time_ns) {
  auto workload = templates::Workload::Create("softmax", {{"D", 100}});
  if (!workload.ok()) return workload.status();
  auto tmpl = templates::FindTemplate("softmax", tmpl_name);
  if (!tmpl.ok()) return tmpl.status();
  store::JobParams job{{*workload}};
  job.tmpl = *tmpl;
  job.device_key = key;
  job.budget = 1;
  auto id = store.CreateJob(job);
  if (!id.ok()) return id.status();
  auto trials = store.InsertTrials(*id, {{0, config}});
  if (!trials.ok()) return trials.status();
  Measurement m;
  m.set_error(error);
  m.add_times_ns(time_ns);
  store::TrialLease lease;
  lease.agent = "agent-on-" + driver;
  lease.driver_version = driver;
  auto done = store.CompleteTrial(trials->front(), m, time_ns, 1.0, lease);
  if (!done.ok()) return done.status();
  return store.SetJobState(*id, tunefleet::v1::JOB_STATE_DONE, "");
}

TEST(EmitDriver, ALibraryOfThreeRevisionsRunsEachDriversOwnEntry) {
  const std::string bin = CliBinary();
  const std::string work = testing::FreshTempDir("emit_driver_test");
  const std::string db = work + "/t.db";

  // Revision 1: a tuned softmax on the real driver.
  auto tune = RunCommand(bin + " tune --json --op softmax --shape D=100 " +
                         "--trials 4 --skip-reference --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const std::string key = nlohmann::json::parse(tune.out)["device_key"];
  std::string real_driver, first, second, tmpl_name;
  {
    auto store = store::Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status();
    auto device = (*store)->GetDevice(key);
    ASSERT_TRUE(device.ok()) << device.status();
    real_driver = device->driver_version();
    ASSERT_FALSE(real_driver.empty());
    store::RecordFilter filter;
    filter.device_key = key;
    auto all = (*store)->QueryRecords(filter);
    ASSERT_TRUE(all.ok()) << all.status();
    filter.best_only = true;
    auto best = (*store)->QueryRecords(filter);
    ASSERT_TRUE(best.ok()) << best.status();
    ASSERT_EQ(best->size(), 1u);
    first = ConfigText(best->front());
    tmpl_name = best->front().template_name();
    for (const auto& r : *all) {
      if (r.error() == Measurement::OK && ConfigText(r) != first) {
        second = ConfigText(r);
      }
    }
    ASSERT_FALSE(second.empty()) << "the tuning measured one config only";
    // Revisions 2 and 3, as agents on those drivers would add them; on
    // revision 3 the first driver's best config computes wrong answers
    // and another config, measured fastest of all, is right.
    bool added = false;
    ASSERT_EQ(*(*store)->NoteDriver(key, real_driver, &added), 1);
    ASSERT_EQ(*(*store)->NoteDriver(key, kNothingMeasured, &added), 2);
    ASSERT_EQ(*(*store)->NoteDriver(key, kOtherDriver, &added), 3);
    ASSERT_TRUE(Measure(**store, key, tmpl_name, first, kOtherDriver,
                        Measurement::WRONG_ANSWER, 1.0)
                    .ok());
    ASSERT_TRUE(Measure(**store, key, tmpl_name, second, kOtherDriver,
                        Measurement::OK, best->front().time_ns() / 4)
                    .ok());
  }

  // One emit of the three revisions.
  auto emit =
      RunCommand(bin + " emit --json --db " + db + " --out " + work + "/lib");
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  const nlohmann::json summary = nlohmann::json::parse(emit.out);
  EXPECT_EQ(summary["driver_revisions"], 3) << emit.out;
  EXPECT_EQ(summary["entries"], 3) << emit.out;
  EXPECT_EQ(summary["unmeasured_entries"], 1) << emit.out;
  const std::string table = ReadAll(work + "/lib/table.tftable");
  EXPECT_EQ(table.rfind("tunefleet-table\t2\n", 0), 0u) << table;
  EXPECT_TRUE(testing::HasDriverRevision(table, real_driver, 1)) << table;
  EXPECT_TRUE(testing::HasDriverRevision(table, kNothingMeasured, 2)) << table;
  EXPECT_TRUE(testing::HasDriverRevision(table, kOtherDriver, 3)) << table;
  auto build = BuildEmittedLibrary(work, "emit_driver_consumer");
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;

  // The consumer on each driver: its revision's entry, right results.
  struct Case {
    std::string driver;  // forced; "": the device's own
    std::string entry;   // what DescribeRunEntry says
  };
  const Case cases[] = {
      {"", absl::StrCat(first, " revision 1 exact ", real_driver)},
      {kOtherDriver, absl::StrCat(second, " revision 3 exact ", kOtherDriver)},
      {kNothingMeasured,
       absl::StrCat("reference revision 2 exact ", kNothingMeasured)},
      // A driver of no revision: the latest revision's entry.
      {"pocl-never-seen 0.1",
       absl::StrCat(second, " revision 3 nearest ", kOtherDriver)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.driver.empty() ? "the device's driver" : c.driver);
    const std::string env =
        c.driver.empty()
            ? "env -u TUNEFLEET_TUNED_DRIVER_VERSION "
            : "env TUNEFLEET_TUNED_DRIVER_VERSION='" + c.driver + "' ";
    auto run = RunCommand(env + work + "/consumer/emit_driver_consumer 1 100");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(PrefixedLines(run.out, "entry"),
              std::vector<std::string>{c.entry})
        << run.out;
    ASSERT_EQ(PrefixedLines(run.out, "run").size(), 1u) << run.out;
    EXPECT_EQ(PrefixedLines(run.out, "run")[0].rfind("OK ", 0), 0u) << run.out;
  }
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace tunefleet::testing
