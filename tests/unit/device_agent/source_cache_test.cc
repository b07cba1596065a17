// The agent's source cache (device_agent/source_cache.h): sources kept by
// hash, filled back into requests that name them by hash alone, misses
// reported, the byte bound kept least recently used first.
#include "device_agent/source_cache.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet::device_agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A request whose kernel and reference launches carry `kernel` and
// `reference` (empty text: named by hash alone).
tunefleet::v1::MeasureRequest Request(const std::string& kernel_hash,
                                      const std::string& kernel,
                                      const std::string& reference_hash,
                                      const std::string& reference) {
  tunefleet::v1::MeasureRequest r;
  r.mutable_kernel()->set_source_hash(kernel_hash);
  r.mutable_kernel()->set_source(kernel);
  r.mutable_kernel()->set_kernel_name("k");
  auto* ref = r.mutable_verification()->mutable_reference();
  ref->set_source_hash(reference_hash);
  ref->set_source(reference);
  return r;
}

TEST(SourceCacheTest, KeepsFullSourcesAndFillsHashOnlyRequests) {
  SourceCache cache(1 << 20);
  tunefleet::v1::MeasureRequest first =
      Request("k1", "kernel text", "r1", "reference text");
  EXPECT_THAT(cache.Resolve(&first), IsEmpty());
  EXPECT_EQ(first.kernel().source(), "kernel text");  // untouched
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_EQ(cache.size_bytes(), 11u + 14u);

  tunefleet::v1::MeasureRequest later = Request("k1", "", "r1", "");
  EXPECT_THAT(cache.Resolve(&later), IsEmpty());
  EXPECT_EQ(later.kernel().source(), "kernel text");
  EXPECT_EQ(later.verification().reference().source(), "reference text");
  EXPECT_EQ(later.kernel().kernel_name(), "k");
}

TEST(SourceCacheTest, UnknownHashesAreReportedAndClearForgetsAll) {
  SourceCache cache(1 << 20);
  tunefleet::v1::MeasureRequest first = Request("k1", "kernel", "r1", "ref");
  ASSERT_THAT(cache.Resolve(&first), IsEmpty());

  tunefleet::v1::MeasureRequest other = Request("k2", "", "r1", "");
  EXPECT_THAT(cache.Resolve(&other), ElementsAre("k2"));
  EXPECT_EQ(other.verification().reference().source(), "ref");

  cache.Clear();
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.size_bytes(), 0u);
  tunefleet::v1::MeasureRequest again = Request("k1", "", "r1", "");
  EXPECT_THAT(cache.Resolve(&again), ElementsAre("k1", "r1"));
}

TEST(SourceCacheTest, RequestsWithoutHashesPassUnchanged) {
  SourceCache cache(1 << 20);
  tunefleet::v1::MeasureRequest old = Request("", "kernel", "", "ref");
  EXPECT_THAT(cache.Resolve(&old), IsEmpty());
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(old.kernel().source(), "kernel");
  // A library call without an epilogue: no source, no hash.
  tunefleet::v1::MeasureRequest library = Request("", "", "", "");
  EXPECT_THAT(cache.Resolve(&library), IsEmpty());
}

TEST(SourceCacheTest, EvictsLeastRecentlyUsedWithinTheByteBound) {
  SourceCache cache(10);  // bytes
  tunefleet::v1::MeasureRequest a = Request("a", "aaaa", "", "");
  tunefleet::v1::MeasureRequest b = Request("b", "bbbb", "", "");
  ASSERT_THAT(cache.Resolve(&a), IsEmpty());
  ASSERT_THAT(cache.Resolve(&b), IsEmpty());
  // "a" used again: "b" is now the least recently used.
  tunefleet::v1::MeasureRequest use_a = Request("a", "", "", "");
  ASSERT_THAT(cache.Resolve(&use_a), IsEmpty());
  tunefleet::v1::MeasureRequest c = Request("c", "cccc", "", "");
  ASSERT_THAT(cache.Resolve(&c), IsEmpty());
  EXPECT_LE(cache.size_bytes(), 10u);
  EXPECT_TRUE(cache.Contains("a"));
  EXPECT_FALSE(cache.Contains("b"));
  EXPECT_TRUE(cache.Contains("c"));
  tunefleet::v1::MeasureRequest use_b = Request("b", "", "", "");
  EXPECT_THAT(cache.Resolve(&use_b), ElementsAre("b"));
}

TEST(SourceCacheTest, ASourceOverTheBoundIsUsedButNotKept) {
  SourceCache cache(3);
  tunefleet::v1::MeasureRequest big = Request("big", "12345", "", "");
  EXPECT_THAT(cache.Resolve(&big), IsEmpty());
  EXPECT_EQ(big.kernel().source(), "12345");
  EXPECT_EQ(cache.entries(), 0u);
  tunefleet::v1::MeasureRequest later = Request("big", "", "", "");
  EXPECT_THAT(cache.Resolve(&later), ElementsAre("big"));
  SourceCache none(0);
  tunefleet::v1::MeasureRequest any = Request("x", "x", "", "");
  EXPECT_THAT(none.Resolve(&any), IsEmpty());
  EXPECT_EQ(none.entries(), 0u);
}

}  // namespace
}  // namespace tunefleet::device_agent
