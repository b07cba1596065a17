// The scheduler's per-key queue (server/trial_queue.h): the order trials
// come out in, and taking or dropping trials from anywhere in it.
#include "server/trial_queue.h"

#include <vector>

#include "gtest/gtest.h"

namespace tunefleet::server {
namespace {

QueuedTrial Trial(int64_t id, int64_t job, int priority) {
  QueuedTrial t;
  t.trial_id = id;
  t.job_id = job;
  t.priority = priority;
  return t;
}

// Pops every trial; returns their ids in the order they came out.
std::vector<int64_t> Drain(TrialQueue& queue) {
  std::vector<int64_t> ids;
  while (!queue.empty()) ids.push_back(queue.PopNext().trial_id);
  return ids;
}

TEST(TrialQueue, HighestPriorityFirstThenOldestWithLostLeasesAhead) {
  TrialQueue queue;
  queue.PushBack(Trial(1, 10, 0));
  queue.PushBack(Trial(2, 10, 0));
  queue.PushBack(Trial(3, 11, 5));
  queue.PushBack(Trial(4, 12, -1));
  queue.PushBack(Trial(5, 11, 5));
  // Back from a lost lease: ahead of its priority, not of higher ones.
  queue.PushFront(Trial(6, 10, 0));
  EXPECT_EQ(queue.size(), 6u);
  EXPECT_EQ(Drain(queue), (std::vector<int64_t>{3, 5, 6, 1, 2, 4}));
  EXPECT_EQ(queue.size(), 0u);
}

TEST(TrialQueue, FindTakeAndEraseJobKeepTheRestInOrder) {
  TrialQueue queue;
  for (int64_t id = 1; id <= 6; ++id) {
    queue.PushBack(Trial(id, id % 2 ? 7 : 8, id <= 3 ? 1 : 0));
  }
  ASSERT_NE(queue.Find(4), nullptr);
  EXPECT_EQ(queue.Find(4)->job_id, 8);
  EXPECT_EQ(queue.Find(99), nullptr);

  std::optional<QueuedTrial> taken = queue.Take(2);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->trial_id, 2);
  EXPECT_FALSE(queue.Take(2).has_value());
  EXPECT_EQ(queue.size(), 5u);

  queue.EraseJob(7);  // trials 1, 3 and 5
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.Find(1), nullptr);
  EXPECT_EQ(Drain(queue), (std::vector<int64_t>{4, 6}));
  queue.EraseJob(7);  // on an empty queue: nothing
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace tunefleet::server
