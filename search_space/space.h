// The search space of a task: every config of a
// template's knobs that passes its constraints for one workload on one
// device. Configs are numbered by a mixed-radix index over the knobs' value
// lists, so a space is enumerated lazily (index <-> config) and strategies
// keep sets of indices rather than configs.
#ifndef TUNEFLEET_SEARCH_SPACE_SPACE_H_
#define TUNEFLEET_SEARCH_SPACE_SPACE_H_

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tunefleet::search_space {

struct KnobSpec {
  std::string name;
  std::vector<int64_t> values;  // smallest first
  bool size_like = true;        // compared on a log2 scale
};

// Immutable after construction, hence safe to share between threads.
class SearchSpace {
 public:
  // Whether a config (one value per knob) satisfies the constraints.
  using Validity = std::function<bool(const std::vector<int64_t>& config)>;

  // Spaces with at most this many raw configs are scanned once, so their
  // valid configs are listed exactly; larger ones are sampled.
  static constexpr uint64_t kMaxEnumerable = uint64_t{1} << 22;

  SearchSpace(std::vector<KnobSpec> knobs, Validity valid);
  // A space whose valid configs are listed (a recorded table): `valid`
  // holds their indices. Enumerable whatever the raw size.
  SearchSpace(std::vector<KnobSpec> knobs, std::vector<uint64_t> valid);

  const std::vector<KnobSpec>& knobs() const { return knobs_; }
  // Product of the knobs' value counts (saturates at UINT64_MAX).
  uint64_t raw_size() const { return raw_size_; }
  bool enumerable() const { return enumerable_; }
  // Exact count of valid configs when enumerable(); else an estimate from
  // 4096 random samples.
  uint64_t valid_size() const { return valid_size_; }
  // Valid indices in increasing order (empty unless enumerable()).
  const std::vector<uint64_t>& valid_indices() const { return valid_; }

  // Value positions per knob of an index (the mixed-radix digits; knob 0
  // is the most significant).
  std::vector<uint32_t> Digits(uint64_t index) const;
  uint64_t IndexOf(const std::vector<uint32_t>& digits) const;
  // Knob values of an index.
  std::vector<int64_t> Config(uint64_t index) const;
  bool IsValid(uint64_t index) const;
  // Valid configs that differ from `index` in one knob by one step up or
  // down its value list (annealing moves).
  std::vector<uint64_t> Neighbours(uint64_t index) const;
  // A uniformly random valid index, or UINT64_MAX when none is found in
  // `attempts` tries (only possible for non-enumerable spaces).
  uint64_t RandomValid(std::mt19937_64& rng, int attempts = 10000) const;

  // "MWG=64,NWG=32,..." for logs and records.
  std::string ConfigString(uint64_t index) const;

 private:
  std::vector<KnobSpec> knobs_;
  Validity valid_fn_;
  uint64_t raw_size_ = 1;
  bool enumerable_ = false;
  bool listed_ = false;  // valid_ is the definition of validity
  uint64_t valid_size_ = 0;
  std::vector<uint64_t> valid_;
};

}  // namespace tunefleet::search_space

#endif  // TUNEFLEET_SEARCH_SPACE_SPACE_H_
