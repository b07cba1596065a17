#include "kernels_templates/spec/knob_tables.h"

#include <algorithm>
#include <cmath>

#include "kernels_templates/spec/let_plan.h"

namespace tunefleet::templates {

KnobTables::KnobTables(const SpecModel& model)
    : model_(&model),
      let_knobs_(model.lets.size()),
      let_knob_only_(model.lets.size(), false),
      table_of_(model.expressions->size(), -1) {
  for (const Knob& k : model.knobs) {
    std::vector<int16_t> digits;
    if (k.values.front() >= 0 && k.values.back() <= kMaxDirectValue) {
      digits.assign(k.values.back() + 1, -1);
      for (size_t d = 0; d < k.values.size(); ++d) {
        digits[k.values[d]] = static_cast<int16_t>(d);
      }
    }
    digit_of_.push_back(std::move(digits));
  }
  // Which lets read knobs only, and which knobs.
  for (size_t i = 0; i < model.lets.size(); ++i) {
    let_knob_only_[i] = KnobsRead(model.lets[i].expression, let_knobs_,
                                  let_knob_only_, let_knobs_[i]);
  }
  for (int h = 0; h < model.expressions->size(); ++h) {
    const std::vector<int> knobs = KnobsOf(h);
    if (knobs.empty()) continue;
    std::vector<size_t> strides;
    const size_t entries = Strides(knobs, strides);
    if (entries > kMaxEntries ||
        !Spend(entries * (1 + LetPlan(model, {h}).size()))) {
      continue;
    }
    table_of_[h] = static_cast<int>(tables_.size());
    tables_.push_back(Build(h, knobs));
  }
}

std::vector<int> KnobTables::KnobsOf(int handle) const {
  std::vector<int> knobs;
  if (handle < 0 || !KnobsRead(handle, let_knobs_, let_knob_only_, knobs)) {
    return {};
  }
  return knobs;
}

size_t KnobTables::Strides(const std::vector<int>& knobs,
                           std::vector<size_t>& strides) const {
  strides.assign(knobs.size(), 0);
  size_t entries = 1;
  for (int k = static_cast<int>(knobs.size()) - 1; k >= 0; --k) {
    strides[k] = entries;
    entries *= model_->knobs[knobs[k]].values.size();
    // Far past any table's cap; stops before the product can overflow.
    if (entries > (size_t{1} << 40)) return entries;
  }
  return entries;
}

void KnobTables::SetCombination(size_t index, const std::vector<int>& knobs,
                                const std::vector<size_t>& strides,
                                std::vector<double>& slots) const {
  for (size_t k = 0; k < knobs.size(); ++k) {
    const std::vector<int64_t>& values = model_->knobs[knobs[k]].values;
    const size_t digit = index / strides[k] % values.size();
    slots[model_->slots.knob(knobs[k])] = static_cast<double>(values[digit]);
  }
}

bool KnobTables::Spend(size_t work) {
  if (work > work_left_) return false;
  work_left_ -= work;
  return true;
}

std::vector<KnobTables::CheckRun> KnobTables::Runs(
    const std::vector<int>& checks) {
  std::vector<CheckRun> runs;
  CheckRun run;
  auto close = [&] {
    if (run.count > 1 && FillRun(checks, run)) runs.push_back(std::move(run));
    run = CheckRun();
  };
  for (size_t i = 0; i < checks.size(); ++i) {
    const std::vector<int> knobs = KnobsOf(checks[i]);
    std::vector<int> joined = run.knobs;
    joined.insert(joined.end(), knobs.begin(), knobs.end());
    std::sort(joined.begin(), joined.end());
    joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
    std::vector<size_t> strides;
    const bool fits = !knobs.empty() && run.count < CheckRun::kAllHold &&
                      Strides(joined, strides) <= kMaxRunEntries;
    if (!fits) close();
    if (knobs.empty()) continue;
    if (run.count == 0) run.first = i;
    run.knobs = fits ? joined : knobs;
    ++run.count;
  }
  close();
  return runs;
}

bool KnobTables::FillRun(const std::vector<int>& checks, CheckRun& run) {
  const SpecModel& m = *model_;
  const std::vector<int> handles(checks.begin() + run.first,
                                 checks.begin() + run.first + run.count);
  const LetPlan lets(m, handles);
  std::vector<double> slots(m.slots.size(), 0.0);
  const size_t entries = Strides(run.knobs, run.strides);
  if (!Spend(entries * (run.count + lets.size()))) return false;
  run.first_failing.assign(entries, CheckRun::kAllHold);
  for (size_t index = 0; index < entries; ++index) {
    SetCombination(index, run.knobs, run.strides, slots);
    for (size_t i = 0; i < handles.size(); ++i) {
      lets.Before(i, slots.data());
      const double v = m.expressions->Evaluate(handles[i], slots.data());
      if (!(std::isfinite(v) && v != 0)) {
        run.first_failing[index] = static_cast<uint8_t>(i);
        break;
      }
    }
  }
  return true;
}

bool KnobTables::KnobsRead(int handle,
                           const std::vector<std::vector<int>>& let_knobs,
                           const std::vector<bool>& let_knob_only,
                           std::vector<int>& knobs) const {
  const SpecSlots& s = model_->slots;
  for (int slot : model_->expressions->Reads(handle)) {
    if (slot >= s.knob(0) && slot < s.knob(s.num_knobs)) {
      knobs.push_back(slot - s.knob(0));
    } else if (slot >= s.let(0) && let_knob_only[slot - s.let(0)]) {
      const std::vector<int>& more = let_knobs[slot - s.let(0)];
      knobs.insert(knobs.end(), more.begin(), more.end());
    } else {
      return false;
    }
  }
  std::sort(knobs.begin(), knobs.end());
  knobs.erase(std::unique(knobs.begin(), knobs.end()), knobs.end());
  return true;
}

KnobTables::Table KnobTables::Build(int handle,
                                    const std::vector<int>& knobs) const {
  const SpecModel& m = *model_;
  Table table;
  table.knobs = knobs;
  const size_t entries = Strides(knobs, table.strides);
  const LetPlan lets(m, {handle});
  std::vector<double> slots(m.slots.size(), 0.0);
  table.values.resize(entries);
  for (size_t index = 0; index < entries; ++index) {
    SetCombination(index, knobs, table.strides, slots);
    lets.All(slots.data());
    table.values[index] = m.expressions->Evaluate(handle, slots.data());
  }
  return table;
}

bool KnobTables::Digits(const KnobValues& config, int* digits) const {
  for (size_t i = 0; i < config.size(); ++i) {
    const std::vector<int16_t>& direct = digit_of_[i];
    if (!direct.empty()) {
      const int64_t v = config[i];
      digits[i] =
          v >= 0 && v < static_cast<int64_t>(direct.size()) ? direct[v] : -1;
      if (digits[i] < 0) return false;
      continue;
    }
    const std::vector<int64_t>& values = model_->knobs[i].values;
    const auto it = std::find(values.begin(), values.end(), config[i]);
    if (it == values.end()) return false;
    digits[i] = static_cast<int>(it - values.begin());
  }
  return true;
}

}  // namespace tunefleet::templates
