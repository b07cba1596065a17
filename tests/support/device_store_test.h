// A GoogleTest fixture for tests of what is kept in a tuning-record
// database: a fresh store on a file of its own (TempStore, temp_store.h) in
// which one device ("Test GPU", AddTestGpu in small_job.h) is registered
// before each test.
#ifndef TUNEFLEET_TESTS_SUPPORT_DEVICE_STORE_TEST_H_
#define TUNEFLEET_TESTS_SUPPORT_DEVICE_STORE_TEST_H_

#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"

namespace tunefleet::testing {

class DeviceStoreTest : public ::testing::Test {
 protected:
  // The database's file name starts with `prefix`; the device registered
  // is `device_key`, of vendor `vendor` when not empty.
  explicit DeviceStoreTest(const std::string& prefix,
                           std::string device_key = "test-gpu",
                           std::string vendor = "")
      : db_(prefix),
        device_key_(std::move(device_key)),
        vendor_(std::move(vendor)) {}

  // Fails the test when the store did not open or the device was refused.
  // A fixture that adds to it calls it under ASSERT_NO_FATAL_FAILURE.
  void SetUp() override {
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(AddTestGpu(store_, device_key_, vendor_).ok());
  }

  TempStore db_;
  store::Store* store_ = db_.store();

 private:
  std::string device_key_;
  std::string vendor_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_DEVICE_STORE_TEST_H_
