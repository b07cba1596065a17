// The one JSON form of the contract's messages (contract/json.h): field names
// as in the .proto, enums by name, 64-bit integers as numbers, every field
// written, unset messages null; protobuf's own JSON parser reads it back.
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "contract/json.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::contract {
namespace {

tunefleet::v1::JobProgress Progress() {
  tunefleet::v1::JobProgress p;
  p.set_job_id((int64_t{1} << 52) + 1);  // exact in a double
  p.set_state(tunefleet::v1::JOB_STATE_CANCELLED);
  p.set_strategy(tunefleet::v1::STRATEGY_SA);
  p.set_trials_done(3);
  p.set_space_size(uint64_t{50256});
  (*p.mutable_errors())["OK"] = 2;
  (*p.mutable_errors())["WRONG_ANSWER"] = 1;
  p.add_in_flight_trial_ids(41);
  p.add_in_flight_trial_ids(42);
  p.mutable_best()->set_trial_id(40);
  p.mutable_best()->set_error(tunefleet::v1::Measurement::OK);
  p.mutable_best()->set_time_ns(1250.5);
  tunefleet::v1::KnobValue* k = p.mutable_best()->mutable_config()->add_knobs();
  k->set_name("MWG");
  k->set_value(-64);
  return p;
}

TEST(ContractJson, UsesTheProtosNamesAndNumbersForEveryInteger) {
  const nlohmann::json j = ContractJson(Progress());
  EXPECT_EQ(j["job_id"], (int64_t{1} << 52) + 1);
  EXPECT_TRUE(j["job_id"].is_number_integer());
  EXPECT_EQ(j["state"], "JOB_STATE_CANCELLED");
  EXPECT_EQ(j["strategy"], "STRATEGY_SA");
  EXPECT_EQ(j["trials_done"], 3);
  EXPECT_EQ(j["space_size"], 50256);
  EXPECT_EQ(j["errors"]["WRONG_ANSWER"], 1);
  EXPECT_EQ(j["in_flight_trial_ids"], nlohmann::json::array({41, 42}));
  EXPECT_EQ(j["best"]["error"], "OK");
  EXPECT_EQ(j["best"]["config"]["knobs"][0]["value"], -64);
  EXPECT_DOUBLE_EQ(j["best"]["time_ns"].get<double>(), 1250.5);
  // Every field is there: zeros, empty strings, unset messages (null).
  EXPECT_EQ(j["trials_requeued"], 0);
  EXPECT_EQ(j["message"], "");
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j.size(),
            static_cast<size_t>(
                tunefleet::v1::JobProgress::descriptor()->field_count()));
}

TEST(ContractJson, ProtobufsParserReadsItBack) {
  const tunefleet::v1::JobProgress p = Progress();
  tunefleet::v1::JobProgress back;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(ContractJson(p).dump(), &back)
          .ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(p, back))
      << back.DebugString();
}

TEST(ContractJson, NonFiniteNumbersAreTheMappingsStrings) {
  tunefleet::v1::TuningRecord r;
  r.set_time_ns(std::nan(""));
  r.set_gflops(-INFINITY);
  const nlohmann::json j = ContractJson(r);
  EXPECT_EQ(j["time_ns"], "NaN");
  EXPECT_EQ(j["gflops"], "-Infinity");
}

TEST(ContractJson, ErrorsNameTheirCode) {
  const nlohmann::json j = ErrorJson(absl::NotFoundError("no job 7"));
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"error": "no job 7", "code": "NOT_FOUND"})"));
}

}  // namespace
}  // namespace tunefleet::contract
