// The agent's cache of kernel sources by content hash
// (KernelLaunch.source_hash, Hello.source_cache): a server sends a source
// in full once per session and afterwards names it by hash alone; the agent
// fills the source back in before the request reaches its worker, so the
// worker protocol (worker.proto) always carries whole requests.
#ifndef TUNEFLEET_DEVICE_AGENT_SOURCE_CACHE_H_
#define TUNEFLEET_DEVICE_AGENT_SOURCE_CACHE_H_

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tunefleet/v1/common.pb.h"

namespace tunefleet::device_agent {

// Byte-bounded LRU map from source hash to source text. Not thread-safe:
// one stream's reader owns it.
class SourceCache {
 public:
  // Holds at most `capacity_bytes` of source text (the sources' sizes,
  // bytes); a source larger than that is used for its own request but not
  // kept. 0 keeps nothing.
  explicit SourceCache(size_t capacity_bytes)
      : capacity_bytes_(capacity_bytes) {}

  // Fills in the sources of `request`'s kernel and reference launches that
  // it names by hash alone, and keeps the sources it carries in full (by
  // their hash). Returns the hashes it named but the cache lacks (empty:
  // the request is whole). A request with missing sources must be answered
  // Measurement.SOURCE_UNKNOWN, not measured.
  std::vector<std::string> Resolve(tunefleet::v1::MeasureRequest* request);

  // Forgets every source (as after a restart).
  void Clear();

  size_t size_bytes() const { return size_bytes_; }
  size_t entries() const { return entries_.size(); }
  bool Contains(const std::string& hash) const { return index_.contains(hash); }

 private:
  using Entry = std::pair<std::string, std::string>;  // (hash, source)
  // Keeps or uses one launch's source; appends a missing hash.
  void ResolveLaunch(tunefleet::v1::KernelLaunch* launch,
                     std::vector<std::string>* missing);
  void Put(const std::string& hash, const std::string& source);

  const size_t capacity_bytes_;
  size_t size_bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_SOURCE_CACHE_H_
