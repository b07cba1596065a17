#include "device_agent/source_cache.h"

namespace tunefleet::device_agent {

std::vector<std::string> SourceCache::Resolve(
    tunefleet::v1::MeasureRequest* request) {
  std::vector<std::string> missing;
  ResolveLaunch(request->mutable_kernel(), &missing);
  if (request->has_verification()) {
    ResolveLaunch(request->mutable_verification()->mutable_reference(),
                  &missing);
  }
  return missing;
}

void SourceCache::ResolveLaunch(tunefleet::v1::KernelLaunch* launch,
                                std::vector<std::string>* missing) {
  const std::string& hash = launch->source_hash();
  if (hash.empty()) return;  // no source, or a server without hashes
  if (!launch->source().empty()) {
    Put(hash, launch->source());
    return;
  }
  auto it = index_.find(hash);
  if (it == index_.end()) {
    missing->push_back(hash);
    return;
  }
  entries_.splice(entries_.begin(), entries_, it->second);  // most recent
  launch->set_source(it->second->second);
}

void SourceCache::Put(const std::string& hash, const std::string& source) {
  if (auto it = index_.find(hash); it != index_.end()) {
    entries_.splice(entries_.begin(), entries_, it->second);
    return;
  }
  if (source.size() > capacity_bytes_) return;
  while (size_bytes_ + source.size() > capacity_bytes_ && !entries_.empty()) {
    size_bytes_ -= entries_.back().second.size();
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  entries_.emplace_front(hash, source);
  index_[hash] = entries_.begin();
  size_bytes_ += source.size();
}

void SourceCache::Clear() {
  entries_.clear();
  index_.clear();
  size_bytes_ = 0;
}

}  // namespace tunefleet::device_agent
