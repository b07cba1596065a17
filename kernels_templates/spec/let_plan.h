// Which lets of a spec to compute before each expression of an ordered
// list, so that evaluating the list in order (stopping at the first check
// that fails) computes each let it needs once and no let it does not.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_SPEC_LET_PLAN_H_
#define TUNEFLEET_KERNELS_TEMPLATES_SPEC_LET_PLAN_H_

#include <vector>

#include "kernels_templates/spec/spec_model.h"

namespace tunefleet::templates {

class KnobTables;

class LetPlan {
 public:
  LetPlan() = default;
  // For `expressions` (handles of model.expressions, -1 for none) in that
  // order. The model's lets must read only earlier lets. Lets are looked
  // up in `tables` where it has them and the caller passes digits. The
  // model and tables must outlive the plan.
  LetPlan(const SpecModel& model, const std::vector<int>& expressions,
          const KnobTables* tables = nullptr);

  // Computes into `slots` the lets expression i needs that expressions
  // before it did not. `digits`: the config's knob digits (KnobTables),
  // or null.
  void Before(size_t i, double* slots, const int* digits = nullptr) const {
    if (!before_[i].empty()) Compute(before_[i], slots, digits);
  }
  // Computes every let that any expression of the list needs.
  void All(double* slots, const int* digits = nullptr) const;
  // How many lets All() computes.
  size_t size() const { return all_.size(); }

 private:
  // A let to compute: its slot and expression.
  struct Step {
    int slot;
    int expression;
  };

  void Compute(const std::vector<Step>& steps, double* slots,
               const int* digits) const;

  const SpecModel* model_ = nullptr;
  const KnobTables* tables_ = nullptr;
  std::vector<std::vector<Step>> before_;  // in the lets' order
  std::vector<Step> all_;
};

}  // namespace tunefleet::templates

#endif  // TUNEFLEET_KERNELS_TEMPLATES_SPEC_LET_PLAN_H_
