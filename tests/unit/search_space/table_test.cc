// Recorded tables: the four formats and the errors of bad ones.
#include "search_space/table.h"

#include "gtest/gtest.h"

namespace tunefleet::search_space {
namespace {

TEST(Table, ReadsTunefleetCsvWithMetadataAndFailures) {
  auto t = ParseTable(
      "# template: gemm_tiled\n"
      "# workload: gemm M=8 N=8 K=8 fp32\n"
      "MWG,VW,time_ms,error\n"
      "16,1,2.5,OK\n"
      "32,1,1.5,OK\n"
      "16,4,,COMPILE_ERROR\n"
      "32,4,0.5,WRONG_ANSWER\n"
      "32,1,1.25,OK\n",  // measured twice: the best time is kept
      "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "csv");
  EXPECT_EQ(t->metadata.at("template"), "gemm_tiled");
  ASSERT_EQ(t->knobs.size(), 2u);
  EXPECT_EQ(t->knobs[0].name, "MWG");
  EXPECT_EQ(t->knobs[0].values, (std::vector<int64_t>{16, 32}));
  EXPECT_TRUE(t->knobs[0].size_like);
  EXPECT_EQ(t->rows.size(), 4u);
  EXPECT_DOUBLE_EQ(t->best_time_ms, 1.25);  // the wrong answer does not count
  int failed = 0;
  for (const auto& r : t->rows) failed += !r.ok;
  EXPECT_EQ(failed, 2);
  auto space = t->MakeSpace();
  EXPECT_EQ(space->valid_size(), 4u);
  EXPECT_TRUE(space->enumerable());
}

TEST(Table, ReadsKernelTunerCaches) {
  auto t = ParseTable(R"({
    "device_name": "Testing", "kernel_name": "k",
    "tune_params_keys": ["block_size_x", "unroll"],
    "tune_params": {"block_size_x": [16, 32], "unroll": ["yes", "no"]},
    "cache": {
      "16,yes": {"block_size_x": 16, "unroll": "yes", "time": 3.0},
      "32,yes": {"block_size_x": 32, "unroll": "yes", "time": 2.0},
      "16,no": {"block_size_x": 16, "unroll": "no", "time": "InvalidConfig"},
      "32,no": {"block_size_x": 32, "unroll": "no", "time": 1e20}
    }})",
                      "kt.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "kernel_tuner");
  EXPECT_EQ(t->metadata.at("device"), "Testing");
  EXPECT_DOUBLE_EQ(t->best_time_ms, 2.0);
  // "unroll" holds strings: a categorical knob in label order.
  EXPECT_FALSE(t->knobs[1].size_like);
  EXPECT_EQ(t->labels[1], (std::vector<std::string>{"no", "yes"}));
  int ok = 0;
  for (const auto& r : t->rows) ok += r.ok;
  EXPECT_EQ(ok, 2);
}

TEST(Table, ReadsClblastTunerOutput) {
  auto t = ParseTable(R"({"kernel_family": "xgemm_1", "precision": "32",
    "results": [
      {"kernel": "Xgemm", "time": 3.7, "parameters": {"MWG": 16, "SA": 0}},
      {"kernel": "Xgemm", "time": 0.9, "parameters": {"MWG": 64, "SA": 1}}
    ]})",
                      "c.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "clblast");
  EXPECT_EQ(t->metadata.at("kernel_family"), "xgemm_1");
  EXPECT_DOUBLE_EQ(t->best_time_ms, 0.9);
  EXPECT_EQ(t->rows.size(), 2u);
}

TEST(Table, ReadsTunefleetJson) {
  auto t = ParseTable(R"({"knobs": ["A", "B"], "metadata": {"template": "x"},
    "results": [{"config": {"A": 1, "B": 2}, "time_ms": 4.0, "error": "OK"},
                {"config": {"A": 2, "B": 2}, "time_ms": 1.0,
                 "error": "WRONG_ANSWER"}]})",
                      "t.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format, "json");
  EXPECT_EQ(t->knobs[0].name, "A");
  EXPECT_DOUBLE_EQ(t->best_time_ms, 4.0);
}

TEST(Table, BadTablesGiveClearErrors) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "is empty"},
           Case{"   \n", "is empty"},
           Case{"a,b\n1,2\n", "no time column"},
           Case{"time_ms\n1.0\n", "no knob columns"},
           Case{"a,time_ms\n1,fast\n", "line 2: time 'fast' is not a positive"},
           Case{"a,time_ms\n1,-3\n", "line 2: time '-3' is not a positive"},
           Case{"a,time_ms\n1,2,3\n", "line 2 has 3 fields"},
           Case{"a,time_ms,error\n1,,COMPILE_ERROR\n", "no successful config"},
           Case{"a,time_ms\n", "has no rows"},
           Case{"{\"x\": 1}", "unrecognised JSON"},
           Case{"{\"results\": [{\"parameters\": {\"A\": 1}}]}",
                "has no \"time\""},
           Case{"{\"results\": [{\"parameters\": {\"A\": 1}, \"time\": []}]}",
                "\"time\" is not a number"},
           Case{"{not json", "not a valid JSON"},
       }) {
    auto t = ParseTable(c.text, "bad.tbl");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find("table bad.tbl: "),
              absl::string_view::npos);
    EXPECT_NE(t.status().message().find(c.message), absl::string_view::npos)
        << t.status();
  }
  EXPECT_EQ(LoadTable("/nonexistent/table.csv").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(Table, CsvRoundTrips) {
  auto t = ParseTable("# k: v\nA,B,time_ms\n1,x,2\n2,y,3\n", "t.csv");
  ASSERT_TRUE(t.ok());
  auto again = ParseTable(TableToCsv(*t), "again.csv");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->rows.size(), 2u);
  EXPECT_EQ(again->labels[1], t->labels[1]);
  EXPECT_DOUBLE_EQ(again->best_time_ms, 2);
  EXPECT_EQ(again->metadata.at("k"), "v");
}

}  // namespace
}  // namespace tunefleet::search_space
