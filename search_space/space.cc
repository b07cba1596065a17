#include "search_space/space.h"

#include <algorithm>
#include <limits>

namespace tunefleet::search_space {

namespace {

// Product of the knobs' value counts, saturating at UINT64_MAX.
uint64_t RawSize(const std::vector<KnobSpec>& knobs) {
  uint64_t size = 1;
  for (const KnobSpec& k : knobs) {
    const uint64_t n = k.values.size();
    if (n == 0) return 0;
    size = size > std::numeric_limits<uint64_t>::max() / n
               ? std::numeric_limits<uint64_t>::max()
               : size * n;
  }
  return size;
}

}  // namespace

SearchSpace::SearchSpace(std::vector<KnobSpec> knobs,
                         std::vector<uint64_t> valid)
    : knobs_(std::move(knobs)),
      raw_size_(RawSize(knobs_)),
      enumerable_(true),
      listed_(true),
      valid_(std::move(valid)) {
  std::sort(valid_.begin(), valid_.end());
  valid_.erase(std::unique(valid_.begin(), valid_.end()), valid_.end());
  valid_size_ = valid_.size();
}

SearchSpace::SearchSpace(std::vector<KnobSpec> knobs, Validity valid)
    : knobs_(std::move(knobs)),
      valid_fn_(std::move(valid)),
      raw_size_(RawSize(knobs_)),
      enumerable_(raw_size_ <= kMaxEnumerable) {
  if (enumerable_) {
    for (uint64_t i = 0; i < raw_size_; ++i) {
      if (IsValid(i)) valid_.push_back(i);
    }
    valid_size_ = valid_.size();
  } else {
    std::mt19937_64 rng(0);
    std::uniform_int_distribution<uint64_t> pick(0, raw_size_ - 1);
    constexpr int kSamples = 4096;
    int hits = 0;
    for (int s = 0; s < kSamples; ++s) hits += IsValid(pick(rng));
    valid_size_ =
        static_cast<uint64_t>(static_cast<double>(raw_size_) * hits / kSamples);
  }
}

std::vector<uint32_t> SearchSpace::Digits(uint64_t index) const {
  std::vector<uint32_t> digits(knobs_.size());
  for (size_t k = knobs_.size(); k-- > 0;) {
    const uint64_t n = knobs_[k].values.size();
    digits[k] = static_cast<uint32_t>(index % n);
    index /= n;
  }
  return digits;
}

uint64_t SearchSpace::IndexOf(const std::vector<uint32_t>& digits) const {
  uint64_t index = 0;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    index = index * knobs_[k].values.size() + digits[k];
  }
  return index;
}

std::vector<int64_t> SearchSpace::Config(uint64_t index) const {
  std::vector<uint32_t> digits = Digits(index);
  std::vector<int64_t> config(knobs_.size());
  for (size_t k = 0; k < knobs_.size(); ++k) {
    config[k] = knobs_[k].values[digits[k]];
  }
  return config;
}

bool SearchSpace::IsValid(uint64_t index) const {
  if (index >= raw_size_) return false;
  if (listed_) return std::binary_search(valid_.begin(), valid_.end(), index);
  return !valid_fn_ || valid_fn_(Config(index));
}

std::vector<uint64_t> SearchSpace::Neighbours(uint64_t index) const {
  std::vector<uint64_t> out;
  std::vector<uint32_t> digits = Digits(index);
  for (size_t k = 0; k < knobs_.size(); ++k) {
    const uint32_t d = digits[k];
    for (int step : {-1, 1}) {
      if ((step < 0 && d == 0) ||
          (step > 0 && d + 1 >= knobs_[k].values.size())) {
        continue;
      }
      digits[k] = d + step;
      const uint64_t n = IndexOf(digits);
      if (IsValid(n)) out.push_back(n);
    }
    digits[k] = d;
  }
  return out;
}

uint64_t SearchSpace::RandomValid(std::mt19937_64& rng, int attempts) const {
  if (enumerable()) {
    if (valid_.empty()) return std::numeric_limits<uint64_t>::max();
    return valid_[std::uniform_int_distribution<size_t>(
        0, valid_.size() - 1)(rng)];
  }
  std::uniform_int_distribution<uint64_t> pick(0, raw_size_ - 1);
  for (int a = 0; a < attempts; ++a) {
    const uint64_t i = pick(rng);
    if (IsValid(i)) return i;
  }
  return std::numeric_limits<uint64_t>::max();
}

std::string SearchSpace::ConfigString(uint64_t index) const {
  std::vector<int64_t> config = Config(index);
  std::string s;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    if (k) s += ",";
    s += knobs_[k].name + "=" + std::to_string(config[k]);
  }
  return s;
}

}  // namespace tunefleet::search_space
