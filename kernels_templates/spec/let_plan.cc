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
  auto step = [&model](size_t j) {
    return Step{model.slots.let(static_cast<int>(j)), model.lets[j].expression};
  };
  for (int handle : expressions) {
    std::vector<bool> need(model.lets.size(), false);
    MarkNeeds(model, handle, closures, need);
    std::vector<Step> steps;
    for (size_t j = 0; j < need.size(); ++j) {
      if (need[j] && !done[j]) steps.push_back(step(j));
      done[j] = done[j] || need[j];
    }
    before_.push_back(std::move(steps));
  }
  for (size_t j = 0; j < done.size(); ++j) {
    if (done[j]) all_.push_back(step(j));
  }
}

void LetPlan::Compute(const std::vector<Step>& steps, double* slots,
                      const int* digits) const {
  for (const Step& s : steps) {
    slots[s.slot] = tables_ != nullptr
                        ? tables_->Value(s.expression, slots, digits)
                        : model_->expressions->Evaluate(s.expression, slots);
  }
}

void LetPlan::All(double* slots, const int* digits) const {
  Compute(all_, slots, digits);
}

}  // namespace tunefleet::templates
