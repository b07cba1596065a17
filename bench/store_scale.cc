// Benchmark (not a test): the store's reads at a million trial rows
// (issue 19, "Queries that stay fast"), against the targets of `tunefleet
// query` (best records, <= 10 ms of store time) and `tunefleet jobs` (<= 50
// ms).
//
//   store_scale [--rows 1000000] [--trials-per-job 1000] [--db PATH]
//               [--runs 7] [--json] [--cli PATH]
//
// Builds the database through the store's own API, as a server writes it:
// Store::CreateJob per job, InsertTrials per job, then LeaseTrial and
// CompleteTrial per trial (each its own transaction, as results arrive one
// by one): about 85% OK with times drawn from a few values (ties), 10%
// failed, 5% never measured; jobs spread over 4 device keys, 5 gemm shapes
// and the built-in gemm templates. With --db PATH the file is kept, and
// reused when it already holds --rows trials. Then times each read
// (median of --runs, in ms, one thread) and, once each, the wall time of
// `tunefleet query --db` and `tunefleet jobs --db` (a whole process:
// start, open, migrate check, read, print to /dev/null). Also times, once,
// the SQL the store ran before schema v4 (the best-record window query and
// a job's GROUP BY tally) for comparison.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "kernels_templates/registry.h"
#include "nlohmann/json.hpp"
#include "progress/stored_progress.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "transfer/transfer.h"

namespace tunefleet::bench {
namespace {

using Clock = std::chrono::steady_clock;
using tunefleet::v1::Measurement;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// The median of `runs` calls of `fn`, in ms; exits on a failed call.
double MedianMs(int runs, const std::function<absl::Status()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point start = Clock::now();
    absl::Status s = fn();
    ms.push_back(MsSince(start));
    if (!s.ok()) {
      std::cerr << "store_scale: " << s << "\n";
      std::exit(1);
    }
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Trial rows in the file (0 when it has no trials table).
int64_t TrialRows(const std::string& path) {
  absl::StatusOr<store::Database> db = store::Database::Open(path);
  if (!db.ok()) return 0;
  absl::StatusOr<store::Statement> s =
      db->Prepare("SELECT COUNT(*) FROM trials");
  if (!s.ok()) return 0;
  absl::StatusOr<bool> row = s->Step();
  return row.ok() && *row ? s->Int(0) : 0;
}

absl::Status Build(store::Store& store, int64_t rows, int trials_per_job) {
  std::vector<const templates::KernelTemplate*> gemm;
  for (const templates::KernelTemplate* t : templates::AllTemplates()) {
    if (t->op() == "gemm") gemm.push_back(t);
  }
  const std::vector<std::string> keys = {"pocl-cpu", "adreno-740", "mali-g715",
                                         "rtx-4090"};
  const std::vector<std::string> shapes = {
      "M=256,N=256,K=256", "M=512,N=512,K=512", "M=1024,N=1024,K=1024",
      "M=128,N=3136,K=576", "M=64,N=12544,K=147"};
  std::mt19937_64 rng(19);
  const Clock::time_point start = Clock::now();
  int64_t written = 0;
  for (int64_t job_index = 0; written < rows; ++job_index) {
    const int n =
        static_cast<int>(std::min<int64_t>(trials_per_job, rows - written));
    TUNEFLEET_ASSIGN_OR_RETURN(
        templates::Workload workload,
        templates::Workload::Parse("gemm", shapes[job_index % shapes.size()]));
    store::JobParams params{
        {workload, gemm[(job_index / shapes.size()) % gemm.size()]},
        keys[job_index % keys.size()],
        tunefleet::v1::STRATEGY_RANDOM,
        n,
        static_cast<uint64_t>(job_index),
        0};
    TUNEFLEET_ASSIGN_OR_RETURN(int64_t job, store.CreateJob(params));
    // Configs over the template's own knobs (values drawn from each knob's
    // list), so that the transfer history keeps them.
    std::vector<store::NewTrial> trials;
    for (int i = 0; i < n; ++i) {
      std::string config;
      for (const templates::Knob& k : params.tmpl->knobs()) {
        absl::StrAppend(&config, config.empty() ? "" : ",", k.name, "=",
                        k.values[rng() % k.values.size()]);
      }
      trials.push_back({static_cast<uint64_t>(i), config});
    }
    TUNEFLEET_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                               store.InsertTrials(job, trials));
    for (int64_t id : ids) {
      const uint64_t roll = rng() % 20;
      if (roll == 0) continue;  // never measured
      TUNEFLEET_RETURN_IF_ERROR(store.LeaseTrial(id, "bench-agent"));
      Measurement m;
      double time_ns = 0;
      if (roll <= 2) {
        m.set_error(roll == 1 ? Measurement::COMPILE_ERROR
                              : Measurement::WRONG_ANSWER);
      } else {
        m.set_error(Measurement::OK);
        time_ns = 1e5 * (1 + rng() % 64);
        m.add_times_ns(time_ns);
        m.set_number(1);
      }
      TUNEFLEET_RETURN_IF_ERROR(
          store.CompleteTrial(id, m, time_ns, time_ns > 0 ? 1e3 : 0).status());
    }
    TUNEFLEET_RETURN_IF_ERROR(
        store.SetJobState(job, tunefleet::v1::JOB_STATE_DONE, "budget spent"));
    written += n;
    if (job_index % 100 == 99) {
      std::cerr << absl::StrFormat("  %d trials written, %.0f s\n", written,
                                   MsSince(start) / 1000);
    }
  }
  return absl::OkStatus();
}

// Wall time (ms) of `argv` with stdout and stderr to /dev/null; -1 when it
// failed to run or exited non-zero.
double WallMs(const std::vector<std::string>& argv) {
  const Clock::time_point start = Clock::now();
  tunefleet::base::Subprocess::Options quiet;
  quiet.output_path = "/dev/null";
  absl::StatusOr<tunefleet::base::Subprocess> child =
      tunefleet::base::Subprocess::Spawn(argv, quiet);
  if (!child.ok()) return -1;
  absl::StatusOr<tunefleet::base::ExitStatus> ended = child->Wait();
  if (!ended.ok() || !ended->success()) return -1;
  return MsSince(start);
}

struct Row {
  std::string name;
  double ms = 0;
  double target_ms = 0;  // 0: none
  std::string note;
};

int Main(int argc, char** argv) {
  CLI::App app{"the store's reads at a million trial rows"};
  int64_t rows = 1000000;
  int trials_per_job = 1000;
  std::string db;
  int runs = 7;
  bool json = false;
  std::string cli = TUNEFLEET_CLI_BINARY;
  // Every option's --help shows its default.
  app.option_defaults()->always_capture_default();
  app.add_option("--rows", rows, "trial rows");
  app.add_option("--trials-per-job", trials_per_job, "trials of each job");
  app.add_option("--db", db, "keep (and reuse) the database at this path");
  app.add_option("--runs", runs, "runs per read (the median is printed)");
  app.add_flag("--json", json, "print a JSON object instead of a table");
  app.add_option("--cli", cli, "the tunefleet binary");
  CLI11_PARSE(app, argc, argv);

  const bool keep = !db.empty();
  if (!keep) db = absl::StrCat("/tmp/store_scale_", getpid(), ".db");
  const int64_t existing = std::filesystem::exists(db) ? TrialRows(db) : 0;
  double build_s = -1;
  if (existing < rows) {
    for (const char* suffix : {"", "-wal", "-shm", "-openers"}) {
      std::filesystem::remove(db + suffix);
    }
    absl::StatusOr<std::unique_ptr<store::Store>> store =
        store::Store::Open(db);
    if (!store.ok()) {
      std::cerr << "store_scale: " << store.status() << "\n";
      return 1;
    }
    std::cerr << "building " << rows << " trial rows in " << db << "\n";
    const Clock::time_point start = Clock::now();
    absl::Status s = Build(**store, rows, trials_per_job);
    if (!s.ok()) {
      std::cerr << "store_scale: " << s << "\n";
      return 1;
    }
    build_s = MsSince(start) / 1000;
  }
  const int64_t trial_rows = TrialRows(db);

  std::vector<Row> out;
  double open_ms = 0;
  {
    const Clock::time_point start = Clock::now();
    absl::StatusOr<std::unique_ptr<store::Store>> opened =
        store::Store::Open(db);
    open_ms = MsSince(start);
    if (!opened.ok()) {
      std::cerr << "store_scale: " << opened.status() << "\n";
      return 1;
    }
    store::Store& store = **opened;
    size_t n = 0;
    auto records = [&store, &n](store::RecordFilter f) {
      return [&store, &n, f]() -> absl::Status {
        absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> r =
            store.QueryRecords(f);
        if (r.ok()) n = r->size();
        return r.status();
      };
    };
    store::RecordFilter best;
    best.best_only = true;
    out.push_back(
        {"best records, all (query)", MedianMs(runs, records(best)), 10, ""});
    out.back().note = absl::StrCat(n, " records");
    store::RecordFilter by_key = best;
    by_key.device_key = "mali-g715";
    out.push_back({"best records, one device key",
                   MedianMs(runs, records(by_key)), 10, ""});
    out.back().note = absl::StrCat(n, " records");
    store::RecordFilter by_op = best;
    by_op.op = "gemm";
    by_op.template_name = "gemm_tiled";
    out.push_back({"best records, op + template",
                   MedianMs(runs, records(by_op)), 10, ""});
    out.back().note = absl::StrCat(n, " records");

    auto jobs = [&store, &n](int64_t limit) {
      return [&store, &n, limit]() -> absl::Status {
        absl::StatusOr<std::vector<tunefleet::v1::JobProgress>> j =
            progress::StoredJobList(store, limit);
        if (j.ok()) n = j->size();
        return j.status();
      };
    };
    out.push_back({"jobs list, first page of 50 (jobs)",
                   MedianMs(runs, jobs(50)), 50, ""});
    out.back().note = absl::StrCat(n, " jobs");
    out.push_back({"jobs list, every job", MedianMs(runs, jobs(0)), 0, ""});
    out.back().note = absl::StrCat(n, " jobs");

    store::RecordFilter page;
    page.limit = 100;
    page.after_trial_id = trial_rows / 2;
    out.push_back({"records page of 100 (keyset, mid-table)",
                   MedianMs(runs, records(page)), 0, ""});
    out.back().note = absl::StrCat(n, " records");
    store::RecordFilter job_page;
    job_page.limit = 100;
    job_page.job_id = 2;
    out.push_back({"records page of 100, one job",
                   MedianMs(runs, records(job_page)), 0, ""});
    out.back().note = absl::StrCat(n, " records");

    const int64_t history_bound =
        static_cast<int64_t>(transfer::kHistoryReadFactor * 3000);
    out.push_back(
        {"history read (HistoryRecords, bound 6000)",
         MedianMs(runs,
                  [&]() -> absl::Status {
                    absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> h =
                        store.HistoryRecords("gemm", "gemm_tiled",
                                             history_bound);
                    if (h.ok()) n = h->size();
                    return h.status();
                  }),
         0, ""});
    out.back().note = absl::StrCat(n, " rows");
    const templates::KernelTemplate* xgemm =
        *templates::FindTemplate("gemm", "gemm_tiled");
    out.push_back({"transfer history (TransferHistory, 3000)",
                   MedianMs(runs,
                            [&]() -> absl::Status {
                              auto h = transfer::TransferHistory(store, *xgemm,
                                                                 3000);
                              if (h.ok()) n = h->size();
                              return h.status();
                            }),
                   0, ""});
    out.back().note = absl::StrCat(n, " groups");
  }
  {
    // The SQL before schema v4, once each, on a connection of its own.
    absl::StatusOr<store::Database> raw = store::Database::Open(db);
    if (raw.ok()) {
      auto once = [&raw](const std::string& sql) {
        const Clock::time_point start = Clock::now();
        absl::StatusOr<store::Statement> s = raw->Prepare(sql);
        if (!s.ok()) return -1.0;
        if (!s->ForEachRow([](const store::Statement&) {}).ok()) return -1.0;
        return MsSince(start);
      };
      out.push_back(
          {"before v4: best records window query",
           once("SELECT * FROM (SELECT t.id, j.device_key, w.op, w.shape, "
                "w.dtype, tp.name, ROW_NUMBER() OVER (PARTITION BY "
                "j.device_key, w.id, tp.name ORDER BY t.time_ns, t.id) AS "
                "rank FROM trials t JOIN jobs j ON t.job_id = j.id JOIN "
                "workloads w ON j.workload_id = w.id JOIN templates tp ON "
                "j.template_id = tp.id WHERE t.state = 'done' AND ('' = '' "
                "OR w.op = '') AND t.error = 'OK') WHERE rank = 1 ORDER BY "
                "2, 3, 4, 5, 6"),
           0, "once"});
      out.push_back(
          {"before v4: one job's tally GROUP BY",
           once("SELECT error, COUNT(*) FROM trials WHERE job_id = 2 AND "
                "state = 'done' GROUP BY error"),
           0, "once"});
    }
  }
  const double cli_query = WallMs({cli, "query", "--db", db});
  const double cli_jobs = WallMs({cli, "jobs", "--db", db});
  out.push_back(
      {"CLI: tunefleet query --db (wall, process)", cli_query, 0, "once"});
  out.push_back(
      {"CLI: tunefleet jobs --db (wall, process)", cli_jobs, 0, "once"});

  if (json) {
    nlohmann::json j;
    j["trial_rows"] = trial_rows;
    j["build_s"] = build_s;
    j["open_ms"] = open_ms;
    j["runs"] = runs;
    for (const Row& r : out) {
      j["reads"].push_back({{"read", r.name},
                            {"ms", r.ms},
                            {"target_ms", r.target_ms},
                            {"note", r.note}});
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << absl::StrFormat(
        "store_scale: %d trial rows (%s), Store::Open %.1f ms, median of "
        "%d runs\n",
        trial_rows,
        build_s < 0 ? std::string("reused file")
                    : absl::StrFormat("built in %.0f s", build_s),
        open_ms, runs);
    std::cout << absl::StrFormat("%-44s %10s %8s  %s\n", "READ", "MS", "TARGET",
                                 "NOTE");
    for (const Row& r : out) {
      std::cout << absl::StrFormat(
          "%-44s %10.3f %8s  %s\n", r.name, r.ms,
          r.target_ms > 0 ? absl::StrFormat("<= %.0f", r.target_ms) : "-",
          r.note);
    }
  }
  if (!keep) {
    for (const char* suffix : {"", "-wal", "-shm", "-openers"}) {
      std::filesystem::remove(db + suffix);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tunefleet::bench

int main(int argc, char** argv) { return tunefleet::bench::Main(argc, argv); }
