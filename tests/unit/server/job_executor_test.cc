// The job executor (server/job_executor.h): posted work runs on its fixed
// threads, timers run once their time has come and in order, and Stop()
// drops what is left; and the steps of a TrackedJob never run two at once.
#include "server/job_executor.h"

#include <atomic>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/tracked_job.h"

namespace tunefleet::server {
namespace {

constexpr absl::Duration kPatience = absl::Seconds(30);

TEST(JobExecutor, RunsWorkOnItsOwnFixedThreads) {
  JobExecutor executor(3);
  EXPECT_EQ(executor.threads(), 3);
  absl::Mutex mu;
  std::set<std::thread::id> threads;
  int done = 0;
  for (int i = 0; i < 200; ++i) {
    executor.Post([&] {
      absl::MutexLock lock(&mu);
      threads.insert(std::this_thread::get_id());
      ++done;
    });
  }
  absl::MutexLock lock(&mu);
  auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return done == 200; };
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&all), kPatience));
  EXPECT_LE(threads.size(), 3u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(JobExecutor, TimersRunInTheirOrderOnceDue) {
  JobExecutor executor(1);
  absl::Mutex mu;
  std::vector<int> order;
  const absl::Time start = absl::Now();
  absl::Time first_at;
  executor.PostAfter(absl::Milliseconds(300), [&] {
    absl::MutexLock lock(&mu);
    order.push_back(2);
  });
  // Posted later, due earlier: it wakes the waiting thread.
  executor.PostAfter(absl::Milliseconds(100), [&] {
    absl::MutexLock lock(&mu);
    first_at = absl::Now();
    order.push_back(1);
  });
  absl::MutexLock lock(&mu);
  auto both = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return order.size() == 2;
  };
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&both), kPatience));
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_GE(first_at - start, absl::Milliseconds(100));
}

TEST(JobExecutor, StopDropsTimersAndLaterWork) {
  std::atomic<int> ran{0};
  {
    JobExecutor executor(2);
    executor.PostAfter(absl::Hours(1), [&] { ran.fetch_add(1); });
    executor.Stop();
    executor.Post([&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 0);
}

// A job whose steps count themselves and check that none overlaps.
class CountingJob final : public TrackedJob {
 public:
  int64_t id() const override { return 1; }
  void Poke() { Wake(); }
  int steps() const { return steps_.load(); }
  bool overlapped() const { return overlapped_.load(); }
  void EndAt(int steps) { end_at_.store(steps); }

 protected:
  bool Step() override {
    if (in_step_.exchange(true)) overlapped_.store(true);
    absl::SleepFor(absl::Microseconds(50));
    const int n = steps_.fetch_add(1) + 1;
    in_step_.store(false);
    return n >= end_at_.load();
  }

 private:
  std::atomic<bool> in_step_{false};
  std::atomic<bool> overlapped_{false};
  std::atomic<int> steps_{0};
  std::atomic<int> end_at_{1 << 30};
};

TEST(TrackedJob, StepsNeverOverlapAndEveryWakeIsSeen) {
  JobExecutor executor(4);
  auto job = std::make_shared<CountingJob>();
  std::atomic<int> ended{0};
  job->Start(&executor, [&] { ended.fetch_add(1); });
  std::vector<std::thread> wakers;
  for (int t = 0; t < 4; ++t) {
    wakers.emplace_back([&] {
      for (int i = 0; i < 500; ++i) job->Poke();
    });
  }
  for (auto& t : wakers) t.join();
  // A wake after the last step started is followed by one more step.
  const int before = job->steps();
  job->Poke();
  const absl::Time give_up = absl::Now() + kPatience;
  while (job->steps() <= before && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_GT(job->steps(), before);
  EXPECT_FALSE(job->overlapped());
  // Wakes coalesce: far fewer steps than wakes.
  EXPECT_LT(job->steps(), 2001);
  job->EndAt(0);
  job->Poke();
  job->Join();
  EXPECT_TRUE(job->ended());
  EXPECT_EQ(ended.load(), 1);
  const int final_steps = job->steps();
  job->Poke();  // an ended job takes no more steps
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(job->steps(), final_steps);
}

}  // namespace
}  // namespace tunefleet::server
