// Unit tests of the device part of TaskFeatures: what the agent reports
// (DeviceInfo) reaches the cost model's features through DeviceLimits.
#include "search_space/task_features.h"

#include <map>

#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/test_device.h"
#include "trial/trial_request.h"

namespace tunefleet::search_space {
namespace {

// The features of the gemm template's default config on `device`, by name.
std::map<std::string, float> DeviceFeatures(
    const tunefleet::v1::DeviceInfo& device) {
  const templates::KernelTemplate& tmpl =
      *templates::FindTemplate("gemm", "gemm_tiled").value();
  TaskFeatures features(tmpl,
                        *templates::Workload::Parse("gemm", "M=64,N=64,K=64"),
                        trial::LimitsFromDeviceInfo(device));
  const std::vector<std::string> names = features.Names();
  templates::KnobValues first;  // each knob's first value
  for (const templates::Knob& k : tmpl.knobs()) first.push_back(k.values[0]);
  const std::vector<float> values = features(first);
  EXPECT_EQ(names.size(), values.size());
  std::map<std::string, float> out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out[names[i]] = values[i];
  }
  return out;
}

// An Adreno-like device: images, fp16, Qualcomm's extensions and
// subgroups through cl_qcom_subgroup_shuffle.
tunefleet::v1::DeviceInfo Adreno() {
  tunefleet::v1::DeviceInfo d = testing::TestDevice();
  d.set_image_support(true);
  d.set_image2d_max_width(16383);
  d.set_image2d_max_height(16384);
  for (const char* ext : {"cl_khr_fp16", "cl_khr_image2d_from_buffer",
                          "cl_qcom_perf_hint", "cl_qcom_subgroup_shuffle"}) {
    d.add_extensions(ext);
  }
  return d;
}

TEST(TaskFeatures, CarryImageSupportAndVendorExtensions) {
  const std::map<std::string, float> adreno = DeviceFeatures(Adreno());
  EXPECT_EQ(adreno.at("image_support"), 1.0f);
  EXPECT_FLOAT_EQ(adreno.at("log2_image2d_max_width"), 14.0f);  // log2(1+16383)
  EXPECT_EQ(adreno.at("image2d_from_buffer"), 1.0f);
  EXPECT_EQ(adreno.at("fp16"), 1.0f);
  EXPECT_EQ(adreno.at("subgroups"), 1.0f);
  EXPECT_EQ(adreno.at("qcom_extensions"), 1.0f);
  EXPECT_EQ(adreno.at("arm_extensions"), 0.0f);

  const std::map<std::string, float> plain =
      DeviceFeatures(testing::TestDevice());
  for (const char* name :
       {"image_support", "log2_image2d_max_width", "image2d_from_buffer",
        "fp16", "subgroups", "qcom_extensions", "arm_extensions"}) {
    EXPECT_EQ(plain.at(name), 0.0f) << name;
  }
  tunefleet::v1::DeviceInfo mali = testing::TestDevice();
  mali.set_local_mem_is_global(true);
  mali.add_extensions("cl_arm_printf");
  const std::map<std::string, float> m = DeviceFeatures(mali);
  EXPECT_EQ(m.at("arm_extensions"), 1.0f);
  EXPECT_EQ(m.at("local_mem_is_global"), 1.0f);
}

}  // namespace
}  // namespace tunefleet::search_space
