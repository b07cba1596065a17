#include "kernels_templates/spec/let_plan.h"

#include "kernels_templates/spec/knob_tables.h"

namespace tunefleet::templates {
namespace {

// Marks in `need` the lets that expression `handle` reads, directly or
// through other lets (`closures[i]`: the lets let i needs, itself too).
void MarkNeeds(const SpecModel& m, int handle,
               const std::vector<std::vector<bool>>& closures,
               std::vector<bool>& need) {
  if (handle < 0) return;  // no expression
  for (int slot : m.expressions->Reads(handle)) {
    const int let = slot - m.slots.let(0);
    if (let < 0) continue;
    for (int j = 0; j <= let; ++j) need[j] = need[j] || closures[let][j];
  }
}

std::vector<std::vector<bool>> Closures(const SpecModel& m) {
  const int n = static_cast<int>(m.lets.size());
  std::vector<std::vector<bool>> closures(n, std::vector<bool>(n, false));
  for (int i = 0; i < n; ++i) {
    MarkNeeds(m, m.lets[i].expression, closures, closures[i]);
    closures[i][i] = true;
  }
  return closures;
}

}  // namespace

LetPlan::LetPlan(const SpecModel& model, const std::vector<int>& expressions,
                 const KnobTables* tables)
    : model_(&model), tables_(tables) {
  const std::vector<std::vector<bool>> closures = Closures(model);
  std::vector<bool> done(model.lets.size(), false);
  for (int handle : expressions) {
    std::vector<bool> need(model.lets.size(), false);
    MarkNeeds(model, handle, closures, need);
    std::vector<int> lets;
    for (size_t j = 0; j < need.size(); ++j) {
      if (need[j] && !done[j]) lets.push_back(static_cast<int>(j));
      done[j] = done[j] || need[j];
    }
    before_.push_back(std::move(lets));
  }
  for (size_t j = 0; j < done.size(); ++j) {
    if (done[j]) all_.push_back(static_cast<int>(j));
  }
}

void LetPlan::Compute(const std::vector<int>& lets, double* slots,
                      const int* digits) const {
  for (int j : lets) {
    const int h = model_->lets[j].expression;
    slots[model_->slots.let(j)] = tables_ != nullptr
                                      ? tables_->Value(h, slots, digits)
                                      : model_->expressions->Evaluate(h, slots);
  }
}

void LetPlan::Before(size_t i, double* slots, const int* digits) const {
  Compute(before_[i], slots, digits);
}

void LetPlan::All(double* slots, const int* digits) const {
  Compute(all_, slots, digits);
}

}  // namespace tunefleet::templates
