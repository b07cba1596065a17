// C++ for emitted libraries, generated from the spec of a shape-generic
// template (spec_template.h, shape_generic): its check and its launch as
// functions over the variables of tuned_table.h's ShapeTemplate, and the
// ShapeTemplate entry itself. The functions are the spec's own expressions
// translated (ExpressionSet::ToCxx), so the library computes exactly what
// the tuner does, for any shape.
#ifndef TUNEFLEET_EMITTER_SHAPE_CODE_H_
#define TUNEFLEET_EMITTER_SHAPE_CODE_H_

#include <string>

#include "absl/status/statusor.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::emitter {

// The generated code of one shape-generic template.
struct ShapeCode {
  // Definitions (functions and arrays) for tuned_table.cc, at namespace
  // scope in tunefleet_tuned::internal.
  std::string definitions;
  // The template's ShapeTemplate initializer, "{...}".
  std::string entry;
};

// The code of `tmpl`, the `index`-th shape template of the table (names of
// its definitions end in `index`), whose default config builds source
// number `default_source`. Errors: FAILED_PRECONDITION when the template
// is not shape-generic, has scratch buffers (fill = "zero": the library
// sizes scratch for exact entries only, so the emitter leaves such a
// template's records to exact entries) or its build options print
// {workload}, which a library cannot.
absl::StatusOr<ShapeCode> GenerateShapeCode(const templates::SpecTemplate& tmpl,
                                            int index, int default_source);

}  // namespace tunefleet::emitter

#endif  // TUNEFLEET_EMITTER_SHAPE_CODE_H_
