// Tables an app loads at run time (issue 39, item 4; docs/TABLES.md): a
// library emitted from one database, built, and a consumer built against
// it (tests/data/emit_table_consumer) that loads table.tftable files of a
// newer emit. The newer table's entry runs (DescribeRunEntry names its
// config and file) with correct results; a table whose kernel source hash
// differs, a truncated one and one of another driver are refused with the
// reason, and the built-in entry keeps running. The model plan emitted
// with the library (`emit --onnx`) loads through LoadModelPlan and runs; a
// plan with a kernel source the library was not built with, and one of a
// device key it does not have, are refused with the reason.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "model_runtime/model_plan.h"
#include "model_runtime/plan_format.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tests/support/command_runner.h"
#include "tests/support/onnx_test_models.h"

namespace tunefleet::testing {
namespace {

constexpr char kWorkload[] = "softmax N=1 D=100 fp32";

// The config text of a record ("WPR=1,RPG=1,...").
std::string RecordConfigText(const tunefleet::v1::TuningRecord& r) {
  std::vector<std::string> knobs;
  for (const auto& k : r.config().knobs()) {
    knobs.push_back(absl::StrCat(k.name(), "=", k.value()));
  }
  return absl::StrJoin(knobs, ",");
}

// Whether `r` is a record of kWorkload (softmax D=100), not of the small
// model's softmax (D=5), which shares the op, the template and the key.
bool OfTheWorkload(const tunefleet::v1::TuningRecord& r) {
  for (const auto& dim : r.workload().dims()) {
    if (dim.name() == "D") return dim.value() == 100;
  }
  return false;
}

// The records of `db`'s kWorkload on `key` (the best one only with
// `best_only`).
absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> WorkloadRecords(
    store::Store& store, const std::string& key, bool best_only) {
  store::RecordFilter filter;
  filter.device_key = key;
  filter.op = "softmax";
  filter.best_only = best_only;
  auto records = store.QueryRecords(filter);
  if (!records.ok()) return records.status();
  std::erase_if(*records, [](const auto& r) { return !OfTheWorkload(r); });
  return records;
}

// Records in `db` a later measurement of `config` for kWorkload on `key`,
// `time_ns` fast, so that it becomes the workload's best record.
void MeasureLater(const std::string& db, const std::string& key,
                  const std::string& tmpl_name, const std::string& config,
                  double time_ns) {
  auto store = store::Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto workload = templates::Workload::Create("softmax", {{"D", 100}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  store::JobParams job{{*workload}};
  auto tmpl = templates::FindTemplate("softmax", tmpl_name);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  job.tmpl = *tmpl;
  job.device_key = key;
  job.budget = 1;
  auto id = (*store)->CreateJob(job);
  ASSERT_TRUE(id.ok()) << id.status();
  auto trials = (*store)->InsertTrials(*id, {{0, config}});
  ASSERT_TRUE(trials.ok()) << trials.status();
  tunefleet::v1::Measurement m;
  m.set_error(tunefleet::v1::Measurement::OK);
  m.add_times_ns(time_ns);
  auto done = (*store)->CompleteTrial(trials->front(), m, time_ns, 1.0);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_TRUE(
      (*store)->SetJobState(*id, tunefleet::v1::JOB_STATE_DONE, "").ok());
}

// `text` with its first line starting with `prefix` changed by `edit`
// (given the line's tab-separated fields).
std::string EditLine(const std::string& text, const std::string& prefix,
                     void (*edit)(std::vector<std::string>&)) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  for (std::string& line : lines) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    edit(fields);
    line = absl::StrJoin(fields, "\t");
    break;
  }
  return absl::StrJoin(lines, "\n");
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// One library for both checks, in one test so that ctest (a process per
// test) builds it once (most of the test's time): a
// database with a tuned softmax and a small model's tasks, emitted with the
// model's plan (`emit --onnx`), built and installed, and the consumer
// built against it.
class EmitTable : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    bin_ = CliBinary();
    work_ = testing::FreshTempDir("emit_table_test");
    db_ = work_ + "/t.db";
    model_ = work_ + "/small.onnx";
    Write(model_, testing::SmallNet());
    error_ = Prepare();
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(work_); }

  // The steps above; "" or what failed.
  static std::string Prepare() {
    auto tune = RunCommand(bin_ + " tune --json --op softmax --shape D=100 " +
                           "--trials 4 --skip-reference --db " + db_);
    if (tune.exit_code != 0) return "tune: " + tune.err;
    key_ = nlohmann::json::parse(tune.out)["device_key"];
    auto model = RunCommand(bin_ + " tune --onnx " + model_ + kShape +
                            " --trials-per-task 1 --json --quiet --db " + db_);
    if (model.exit_code != 0) return "tune --onnx: " + model.err;
    auto emit = RunCommand(bin_ + " emit --json --db " + db_ + " --onnx " +
                           model_ + kShape + " --out " + work_ + "/lib");
    if (emit.exit_code != 0) return "emit: " + emit.err;
    const nlohmann::json summary = nlohmann::json::parse(emit.out);
    if (summary["plans"].size() != 1 ||
        summary["plans"][0]["device_key"] != key_) {
      return "emit: not one plan of " + key_ + ": " + emit.out;
    }
    auto build = BuildEmittedLibrary(work_, "emit_table_consumer");
    if (build.exit_code != 0) return "build: " + build.out + build.err;
    return "";
  }

  static constexpr char kShape[] = " --input-shape image=1,3,17,23";
  static inline std::string bin_, work_, db_, model_, key_, error_;
};

// The consumer loads a newer table.tftable and runs its entry; a table
// whose kernel source hash differs, truncated ones and one of another
// driver are refused with the reason, the built-in entry running.
void Tables() {
  const std::string &bin = EmitTable::bin_, &work = EmitTable::work_,
                    &db = EmitTable::db_, &key = EmitTable::key_;
  const std::string consumer = work + "/consumer/emit_table_consumer";

  // The built-in config, and another config the tuning measured OK.
  auto store = store::Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto best = WorkloadRecords(**store, key, /*best_only=*/true);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_EQ(best->size(), 1u);
  const std::string built_in = RecordConfigText(best->front());
  auto all = WorkloadRecords(**store, key, /*best_only=*/false);
  ASSERT_TRUE(all.ok()) << all.status();
  std::string newer;
  for (const auto& r : *all) {
    if (r.error() == tunefleet::v1::Measurement::OK &&
        RecordConfigText(r) != built_in) {
      newer = RecordConfigText(r);
    }
  }
  ASSERT_FALSE(newer.empty()) << "the tuning measured one config only";
  const std::string tmpl_name = best->front().template_name();
  const double best_ns = best->front().time_ns();
  store->reset();

  // A newer emit: the other config, measured later, wins.
  const std::string db2 = work + "/t2.db";
  std::filesystem::copy_file(db, db2);
  MeasureLater(db2, key, tmpl_name, newer, best_ns / 4);
  auto emit2 =
      RunCommand(bin + " emit --db " + db2 + " --out " + work + "/lib2");
  ASSERT_EQ(emit2.exit_code, 0) << emit2.err;
  const std::string newer_table = work + "/lib2/table.tftable";
  const std::string text = ReadAll(newer_table);
  ASSERT_NE(text.find("\t" + newer + "\t"), std::string::npos) << text;

  auto loaded = RunCommand(consumer + " 1 100 " + newer_table);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.out << loaded.err;
  EXPECT_EQ(PrefixedLines(loaded.out, "entry"),
            (std::vector<std::string>{built_in + " built-in",
                                      newer + " " + newer_table}))
      << loaded.out;
  ASSERT_EQ(PrefixedLines(loaded.out, "load").size(), 1u) << loaded.out;
  const std::string load = PrefixedLines(loaded.out, "load")[0];
  EXPECT_EQ(load.rfind("0 ", 0), 0u) << load;
  EXPECT_NE(load.find(absl::StrCat(" entries of device key ", key, " from ",
                                   newer_table)),
            std::string::npos)
      << load;
  for (const std::string& run : PrefixedLines(loaded.out, "run")) {
    EXPECT_EQ(run.rfind("OK ", 0), 0u) << loaded.out;
  }

  // Refused: a kernel source hash that differs (the template's source
  // changed), a truncated file, another driver.
  const std::string other_source = work + "/other_source.tftable";
  Write(other_source,
        EditLine(text, "source\t", [](std::vector<std::string>& f) {
          f[2] = std::string(64, 'a');
        }));
  const std::string truncated = work + "/truncated.tftable";
  Write(truncated, text.substr(0, text.find("\nend\t") + 1));
  const std::string cut = work + "/cut.tftable";
  Write(cut, text.substr(0, text.find("\nentry\t") + 20));
  const std::string other_driver = work + "/other_driver.tftable";
  Write(other_driver,
        EditLine(text, "device\t",
                 [](std::vector<std::string>& f) { f[5] = "0.0-older"; }));
  auto refused = RunCommand(consumer + " 1 100 " + other_source + " " +
                            truncated + " " + cut + " " + other_driver);
  ASSERT_EQ(refused.exit_code, 0) << refused.out << refused.err;
  const std::vector<std::string> loads = PrefixedLines(refused.out, "load");
  ASSERT_EQ(loads.size(), 4u) << refused.out;
  EXPECT_EQ(loads[0].rfind("-4004 ", 0), 0u) << loads[0];
  EXPECT_NE(loads[0].find("uses kernel source " + std::string(64, 'a') +
                          ", which this library was not built with"),
            std::string::npos)
      << loads[0];
  EXPECT_EQ(loads[1].rfind("-4002 ", 0), 0u) << loads[1];
  EXPECT_NE(loads[1].find("truncated (no end line)"), std::string::npos)
      << loads[1];
  EXPECT_EQ(loads[2].rfind("-4002 ", 0), 0u) << loads[2];
  EXPECT_EQ(loads[3].rfind("-4006 ", 0), 0u) << loads[3];
  EXPECT_NE(loads[3].find("measured on driver '0.0-older'"), std::string::npos)
      << loads[3];
  for (const std::string& load : loads) {
    EXPECT_NE(load.find("the built-in table stays in use"), std::string::npos)
        << load;
  }
  // The built-in entry ran before and after each refusal, correctly.
  const std::vector<std::string> entries = PrefixedLines(refused.out, "entry");
  ASSERT_EQ(entries.size(), 5u) << refused.out;
  for (const std::string& entry : entries) {
    EXPECT_EQ(entry, built_in + " built-in");
  }
  for (const std::string& run : PrefixedLines(refused.out, "run")) {
    EXPECT_EQ(run.rfind("OK ", 0), 0u) << refused.out;
  }
}

// The model plan of an emitted library (`emit --onnx`), loaded at run
// time with LoadModelPlan: the library's own plan loads and runs; a plan
// with a kernel source the library was not built with, and one of a device
// key the library does not have, are refused with the reason.
void Plans() {
  const std::string &work = EmitTable::work_, &key = EmitTable::key_;
  const std::string plan = work + "/lib/plans/" + key + "/small.tfplan";
  const std::string weights = work + "/lib/plans/" + key + "/small.tfweights";

  // Two altered plans, each encoded whole (its checksums are right).
  tunefleet_tuned::Plan decoded;
  std::string error;
  ASSERT_EQ(tunefleet_tuned::DecodePlan(ReadAll(plan), ReadAll(weights), {},
                                        &decoded, &error),
            0)
      << error;
  ASSERT_FALSE(decoded.sources.empty());
  auto write_plan = [&](const tunefleet_tuned::Plan& p,
                        const std::string& name) {
    std::string plan_file, weights_file;
    tunefleet_tuned::EncodePlan(p, &plan_file, &weights_file);
    Write(work + "/" + name + ".tfplan", plan_file);
    Write(work + "/" + name + ".tfweights", weights_file);
    return " " + work + "/" + name + ".tfplan " + work + "/" + name +
           ".tfweights";
  };
  tunefleet_tuned::Plan other_source = decoded;
  other_source.sources.back() += "\n// another version of the template\n";
  tunefleet_tuned::Plan other_key = decoded;
  other_key.header.device_key = "another-key";
  auto run = RunCommand(work + "/consumer/emit_table_consumer plan " + plan +
                        " " + weights + write_plan(other_source, "source") +
                        write_plan(other_key, "key"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::vector<std::string> plans = PrefixedLines(run.out, "plan");
  ASSERT_EQ(plans.size(), 3u) << run.out;
  EXPECT_EQ(plans[0], "0 plan " + plan + " of device key " + key + " loaded");
  ASSERT_EQ(PrefixedLines(run.out, "ran").size(), 1u) << run.out;
  EXPECT_EQ(PrefixedLines(run.out, "ran")[0].rfind("0 ", 0), 0u) << run.out;
  EXPECT_EQ(plans[1].rfind("-4004 ", 0), 0u) << plans[1];
  EXPECT_NE(plans[1].find("uses a kernel source this library was not built "
                          "with; nothing was loaded"),
            std::string::npos)
      << plans[1];
  EXPECT_EQ(plans[2].rfind("-4005 ", 0), 0u) << plans[2];
  EXPECT_NE(plans[2].find("a plan of device key another-key, which neither "
                          "this library nor its loaded table has"),
            std::string::npos)
      << plans[2];
}

TEST_F(EmitTable, AppLoadsNewerTablesAndPlansAndRefusesMismatchedOnes) {
  ASSERT_EQ(error_, "");
  {
    SCOPED_TRACE("table files");
    Tables();
  }
  {
    SCOPED_TRACE("model plans");
    Plans();
  }
}

}  // namespace
}  // namespace tunefleet::testing
