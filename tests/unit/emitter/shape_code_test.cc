// GenerateShapeCode leaves templates with scratch buffers (fill = "zero")
// to exact entries: an emitted library sizes scratch only for those.
#include "emitter/shape_code.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"

namespace tunefleet::emitter {
namespace {

using ::testing::HasSubstr;

TEST(ShapeCode, RefusesShapeGenericTemplatesWithScratch) {
  const auto* gemm = dynamic_cast<const templates::SpecTemplate*>(
      templates::FindTemplate("gemm", "gemm_tiled").value());
  ASSERT_NE(gemm, nullptr);
  ASSERT_TRUE(gemm->model().shape_generic);
  EXPECT_TRUE(GenerateShapeCode(*gemm, 0, 0).ok());

  // The same spec with a scratch buffer after its others.
  auto with_scratch = templates::SpecTemplate::Parse(
      gemm->spec_text() +
          "\n[[buffers]]\nname = \"Z\"\nelements = \"M * N\"\n"
          "fill = \"zero\"\n",
      "toml", std::string(gemm->source()), gemm->reference_source());
  ASSERT_TRUE(with_scratch.ok()) << with_scratch.status();
  ASSERT_TRUE((*with_scratch)->model().shape_generic);
  const absl::StatusOr<ShapeCode> code =
      GenerateShapeCode(**with_scratch, 0, 0);
  EXPECT_EQ(code.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(code.status().message()),
              HasSubstr("scratch buffer Z"));
}

}  // namespace
}  // namespace tunefleet::emitter
