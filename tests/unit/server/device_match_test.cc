// Unit tests of DeviceDifference: which devices may share a device key.
#include "server/device_match.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/test_device.h"

namespace tunefleet::server {
namespace {

using ::tunefleet::testing::TestDevice;

tunefleet::v1::DeviceInfo ImageDevice() {
  tunefleet::v1::DeviceInfo d = TestDevice();
  d.set_image_support(true);
  d.set_image2d_max_width(16384);
  d.set_image2d_max_height(16384);
  d.add_extensions("cl_khr_fp16");
  d.add_extensions("cl_qcom_perf_hint");
  return d;
}

TEST(DeviceDifference, IsEmptyForTheSameDevice) {
  EXPECT_EQ(DeviceDifference(ImageDevice(), ImageDevice()), "");
}

// What may differ between interchangeable agents: memory size, clock,
// version strings, the order extensions are listed in.
TEST(DeviceDifference, IgnoresWhatDoesNotDecideConfigsOrSpeed) {
  tunefleet::v1::DeviceInfo other = ImageDevice();
  other.set_global_mem_bytes(other.global_mem_bytes() * 2);
  other.set_max_clock_mhz(other.max_clock_mhz() + 100);
  other.set_platform_version("OpenCL 3.0 other");
  other.clear_extensions();
  other.add_extensions("cl_qcom_perf_hint");
  other.add_extensions("cl_khr_fp16");
  EXPECT_EQ(DeviceDifference(other, ImageDevice()), "");
}

// Another driver is admitted: it becomes a driver revision of the key
// (docs/DRIVER_DRIFT.md), whose records are re-validated.
TEST(DeviceDifference, IgnoresTheDriverVersion) {
  tunefleet::v1::DeviceInfo other = ImageDevice();
  other.set_driver_version("other driver");
  EXPECT_EQ(DeviceDifference(other, ImageDevice()), "");
  other.set_compute_units(ImageDevice().compute_units() + 1);
  EXPECT_NE(DeviceDifference(other, ImageDevice()).find("compute_units"),
            std::string::npos);
}

TEST(DeviceDifference, NamesTheFirstPropertyThatDiffers) {
  tunefleet::v1::DeviceInfo other = ImageDevice();
  other.set_compute_units(ImageDevice().compute_units() * 2);
  other.set_image_support(false);
  EXPECT_EQ(DeviceDifference(other, ImageDevice()),
            absl::StrCat("compute_units ", other.compute_units(), ", not ",
                         ImageDevice().compute_units()));
  other = ImageDevice();
  other.set_image2d_max_width(8192);
  EXPECT_EQ(DeviceDifference(other, ImageDevice()),
            "image2d_max_width 8192, not 16384");
  other = ImageDevice();
  other.set_local_mem_is_global(!ImageDevice().local_mem_is_global());
  EXPECT_NE(DeviceDifference(other, ImageDevice()).find("local_mem_is_global"),
            std::string::npos);
  other = ImageDevice();
  other.add_max_work_item_sizes(7);
  EXPECT_NE(DeviceDifference(other, ImageDevice()).find("max_work_item_sizes"),
            std::string::npos);
}

TEST(DeviceDifference, ListsMissingAndExtraExtensions) {
  tunefleet::v1::DeviceInfo other = ImageDevice();
  other.clear_extensions();
  other.add_extensions("cl_khr_fp16");
  other.add_extensions("cl_arm_printf");
  EXPECT_EQ(DeviceDifference(other, ImageDevice()),
            "extensions: cl_qcom_perf_hint missing; cl_arm_printf extra");
}

// A fleet being upgraded: an agent of revision 0, which does not fill the
// image fields, joins a key served by a revision-1 agent; between two
// revision-1 agents the same report is refused. A field both fill still
// must agree.
TEST(DeviceDifference, AcrossRevisionsComparesOnlyWhatBothFill) {
  tunefleet::v1::DeviceInfo older = ImageDevice();
  older.clear_image_support();
  older.clear_image2d_max_width();
  older.clear_image2d_max_height();
  EXPECT_EQ(DeviceDifference(older, ImageDevice(), /*revision=*/0), "");
  EXPECT_EQ(DeviceDifference(ImageDevice(), older, /*revision=*/0), "");
  EXPECT_NE(DeviceDifference(older, ImageDevice(), /*revision=*/1), "");
  older.set_compute_units(ImageDevice().compute_units() + 1);
  EXPECT_NE(DeviceDifference(older, ImageDevice(), /*revision=*/0)
                .find("compute_units"),
            std::string::npos);
}

}  // namespace
}  // namespace tunefleet::server
