// The server's side of the agents' source cache (Hello.source_cache): a
// session sends each source in full once and then by hash alone, fills in
// sources left out of lean requests, forgets what the agent lacks, and the
// scheduler resends a trial whose sources the agent lacked under the same
// lease.
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "server/agent_session.h"
#include "server/lease_scheduler.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_store.h"
#include "trial/trial_request.h"

namespace tunefleet::server {
namespace {

using tunefleet::testing::FakeClock;
using tunefleet::testing::TempStore;

// Records every request sent on it.
class Recorder final : public AgentChannel {
 public:
  bool Send(const tunefleet::v1::ServerMessage& message) override {
    absl::MutexLock lock(&mu_);
    for (const auto& r : message.batch().requests()) requests_.push_back(r);
    return true;
  }
  void Cancel() override {}
  std::vector<tunefleet::v1::MeasureRequest> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  absl::Mutex mu_;
  std::vector<tunefleet::v1::MeasureRequest> requests_ ABSL_GUARDED_BY(mu_);
};

tunefleet::v1::Hello AgentHello(bool source_cache) {
  tunefleet::v1::Hello hello;
  hello.set_device_key("key");
  hello.set_agent_name("agent-host");
  hello.set_max_in_flight(4);
  hello.set_source_cache(source_cache);
  return hello;
}

const trial::SourceTexts& Texts() {
  static const auto* texts =
      new trial::SourceTexts{{"kh", "kernel text"}, {"rh", "reference text"}};
  return *texts;
}

// A lean request: both launches name their sources by hash alone.
tunefleet::v1::MeasureRequest Lean(int64_t trial_id) {
  tunefleet::v1::MeasureRequest r;
  r.set_trial_id(trial_id);
  r.mutable_kernel()->set_source_hash("kh");
  r.mutable_verification()->mutable_reference()->set_source_hash("rh");
  r.mutable_timing()->set_timeout_ms(1000);
  return r;
}

tunefleet::v1::ServerMessage Batch(int64_t trial_id) {
  tunefleet::v1::ServerMessage m;
  *m.mutable_batch()->add_requests() = Lean(trial_id);
  return m;
}

TEST(SourceCacheSendTest, SendsEachSourceOnceThenByHash) {
  Recorder channel;
  AgentSession session("agent-1", AgentHello(true), &channel, 0);
  ASSERT_TRUE(session.SendBatch(Batch(-1), {&Texts()}));
  ASSERT_TRUE(session.SendBatch(Batch(-2), {&Texts()}));
  const auto sent = channel.requests();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].kernel().source(), "kernel text");
  EXPECT_EQ(sent[0].verification().reference().source(), "reference text");
  EXPECT_EQ(sent[1].kernel().source(), "");
  EXPECT_EQ(sent[1].kernel().source_hash(), "kh");
  EXPECT_EQ(sent[1].verification().reference().source(), "");

  // The agent lacked them: the next request carries them again.
  session.ForgetSources(sent[1]);
  ASSERT_TRUE(session.SendBatch(Batch(-3), {&Texts()}));
  EXPECT_EQ(channel.requests()[2].kernel().source(), "kernel text");
  EXPECT_EQ(channel.requests()[2].verification().reference().source(),
            "reference text");
}

TEST(SourceCacheSendTest, AgentsWithoutACacheGetEveryRequestWhole) {
  Recorder channel;
  AgentSession session("agent-1", AgentHello(false), &channel, 0);
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(session.SendBatch(Batch(-i), {&Texts()}));
  }
  // Whole requests too: an earlier server's way.
  tunefleet::v1::ServerMessage whole = Batch(-4);
  trial::FillSources(Texts(), whole.mutable_batch()->mutable_requests(0));
  ASSERT_TRUE(session.Send(whole));
  for (const auto& r : channel.requests()) {
    EXPECT_EQ(r.kernel().source(), "kernel text") << r.trial_id();
    EXPECT_EQ(r.verification().reference().source(), "reference text");
  }
}

TEST(SourceCacheSendTest, WholeRequestsAreStrippedAfterTheFirst) {
  Recorder channel;
  AgentSession session("agent-1", AgentHello(true), &channel, 0);
  for (int i = 1; i <= 2; ++i) {
    tunefleet::v1::ServerMessage whole = Batch(-i);
    trial::FillSources(Texts(), whole.mutable_batch()->mutable_requests(0));
    ASSERT_TRUE(session.Send(whole));
  }
  EXPECT_EQ(channel.requests()[0].kernel().source(), "kernel text");
  EXPECT_EQ(channel.requests()[1].kernel().source(), "");
}

TEST(SourceCacheSendTest, SchedulerResendsUnderTheSameLease) {
  TempStore db("source_cache_send_test");
  FakeClock clock;
  LeaseScheduler scheduler(db.store(), clock);
  Recorder channel;
  auto session =
      std::make_shared<AgentSession>("agent-1", AgentHello(true), &channel, 0);
  scheduler.AddAgent(session);
  auto texts = std::make_shared<const trial::SourceTexts>(Texts());
  std::vector<QueuedTrial> trials;
  for (int64_t id : {-1, -2}) {  // reference runs: no store rows needed
    trials.push_back(QueuedTrial{
        id, 7, 0, "key",
        std::make_shared<tunefleet::v1::MeasureRequest>(Lean(id)), 0, texts});
  }
  scheduler.Enqueue(std::move(trials));
  ASSERT_EQ(channel.requests().size(), 2u);
  EXPECT_EQ(channel.requests()[1].kernel().source(), "");  // by hash

  // The agent answered trial -2 SOURCE_UNKNOWN: resent whole, same attempt.
  EXPECT_TRUE(scheduler.ResendWithSources(-2, "agent-1"));
  const auto sent = channel.requests();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[2].trial_id(), -2);
  EXPECT_EQ(sent[2].attempt(), 1u);
  EXPECT_EQ(sent[2].kernel().source(), "kernel text");
  EXPECT_EQ(sent[2].verification().reference().source(), "reference text");
  EXPECT_EQ(scheduler.LeaseCount(), 2u);
  EXPECT_EQ(scheduler.QueuedCount(), 0u);

  // Not this agent's lease, or no lease: nothing sent.
  EXPECT_FALSE(scheduler.ResendWithSources(-2, "agent-2"));
  EXPECT_FALSE(scheduler.ResendWithSources(-9, "agent-1"));
  EXPECT_EQ(channel.requests().size(), 3u);
  scheduler.RemoveAgent("agent-1");
}

}  // namespace
}  // namespace tunefleet::server
