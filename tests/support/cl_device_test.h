// A GoogleTest fixture for tests on the OpenCL device (PoCL here):
// device 0 of platform 0, opened in SetUp. Header-only.
#ifndef TUNEFLEET_TESTS_SUPPORT_CL_DEVICE_TEST_H_
#define TUNEFLEET_TESTS_SUPPORT_CL_DEVICE_TEST_H_

#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "opencl/opencl.h"

namespace tunefleet::testing {

// Opens device 0 of platform 0 in SetUp (a failure there fails the test,
// and a subclass's SetUp returns on HasFatalFailure()); device_ holds it
// for the test.
class ClDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = opencl::OpenDevice(0, 0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::make_unique<opencl::ClDevice>(*std::move(device));
  }

  std::unique_ptr<opencl::ClDevice> device_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_CL_DEVICE_TEST_H_
