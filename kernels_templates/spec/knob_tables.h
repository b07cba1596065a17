// Values of a spec's expressions that read knobs only (directly or through
// lets), precomputed over the values of the knobs each reads: checking a
// config looks them up instead of evaluating them. Search spaces check
// every raw config of a template (millions for conv2d_direct), and most
// constraints are of this kind ("KWG % KWI == 0").
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_KNOB_TABLES_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_KNOB_TABLES_H_

#include <cstdint>
#include <vector>

#include "kernels_templates/spec/spec_model.h"

namespace tunefleet::templates {

class KnobTables {
 public:
  // Most entries of one table; expressions over more knob combinations are
  // evaluated.
  static constexpr size_t kMaxEntries = 4096;
  // Most evaluations all tables of a spec may take to build (a hostile
  // spec must not make parsing slow: this is some 30 ms); tables past it
  // are left out. The built-in specs take at most an eighth of it.
  static constexpr size_t kMaxWork = size_t{1} << 20;

  KnobTables() = default;
  // Tables for the model's expressions (it must outlive this object).
  explicit KnobTables(const SpecModel& model);

  // Sets digits[i] to the position of config[i] among knob i's values
  // (digits has one entry per knob). False when a value is not there: then
  // pass no digits to Value().
  bool Digits(const KnobValues& config, int* digits) const;

  // A run of consecutive checks that read knobs only, tabled together: the
  // position in the run of the first check a config fails, or kAllHold.
  struct CheckRun {
    static constexpr uint8_t kAllHold = 255;
    size_t first = 0, count = 0;  // positions in the checked list
    std::vector<int> knobs;
    std::vector<size_t> strides;
    std::vector<uint8_t> first_failing;
  };
  // Most entries of a run's table.
  static constexpr size_t kMaxRunEntries = 1 << 16;

  // The runs of `checks` (expression handles, checked in order): maximal
  // runs of knob-only checks whose table fits kMaxRunEntries.
  // Builds them within what is left of kMaxWork.
  std::vector<CheckRun> Runs(const std::vector<int>& checks);
  // The position in `run` of the first check that fails, or kAllHold.
  static int FirstFailing(const CheckRun& run, const int* digits) {
    size_t index = 0;
    for (size_t k = 0; k < run.knobs.size(); ++k) {
      index += static_cast<size_t>(digits[run.knobs[k]]) * run.strides[k];
    }
    return run.first_failing[index];
  }

  // The value of expression `handle` over `slots`: from its table when it
  // has one and `digits` is not null, else evaluated.
  double Value(int handle, const double* slots, const int* digits) const {
    const int t = digits == nullptr || handle < 0 ? -1 : table_of_[handle];
    if (t < 0) return model_->expressions->Evaluate(handle, slots);
    const Table& table = tables_[t];
    size_t index = 0;
    for (size_t k = 0; k < table.knobs.size(); ++k) {
      index += static_cast<size_t>(digits[table.knobs[k]]) * table.strides[k];
    }
    return table.values[index];
  }

 private:
  struct Table {
    std::vector<int> knobs;       // knob indices read
    std::vector<size_t> strides;  // of each knob's digit
    std::vector<double> values;
  };

  // The knobs expression `handle` reads (through lets too), or false when
  // it reads anything else.
  bool KnobsRead(int handle, const std::vector<std::vector<int>>& let_knobs,
                 const std::vector<bool>& let_knob_only,
                 std::vector<int>& knobs) const;
  Table Build(int handle, const std::vector<int>& knobs) const;
  // Knobs of a knob-only expression (empty when it is not one).
  std::vector<int> KnobsOf(int handle) const;
  // Fills the run's table; false (and no table) when that would take more
  // than the work left.
  bool FillRun(const std::vector<int>& checks, CheckRun& run);
  // Takes `work` evaluations from what is left of kMaxWork; false (and
  // nothing taken) when less is left.
  bool Spend(size_t work);
  // Strides of mixed-radix digits over `knobs`, the last fastest; returns
  // the number of combinations (or a number over 2^40 when it is larger).
  size_t Strides(const std::vector<int>& knobs,
                 std::vector<size_t>& strides) const;
  // Sets the knobs' slots to the values of combination `index`.
  void SetCombination(size_t index, const std::vector<int>& knobs,
                      const std::vector<size_t>& strides,
                      std::vector<double>& slots) const;

  const SpecModel* model_ = nullptr;
  // Per knob whose values lie in 0..kMaxDirectValue: digit_of[v] is the
  // digit of value v, or -1.
  static constexpr int64_t kMaxDirectValue = 4096;
  std::vector<std::vector<int16_t>> digit_of_;
  std::vector<std::vector<int>> let_knobs_;  // per let; see knob_only_
  std::vector<bool> let_knob_only_;
  size_t work_left_ = kMaxWork;
  std::vector<int> table_of_;  // per expression: index into tables_, or -1
  std::vector<Table> tables_;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_KNOB_TABLES_H_
