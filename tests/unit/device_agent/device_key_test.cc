// Unit tests of DefaultDeviceKey: the key an agent serves its device under
// when no --key is given.
#include "device_agent/opencl.h"
#include "gtest/gtest.h"

namespace tunefleet::agent {
namespace {

tunefleet::v1::DeviceInfo Device(const std::string& name,
                                 const std::string& vendor, uint32_t vendor_id,
                                 const std::string& type) {
  tunefleet::v1::DeviceInfo d;
  d.set_device_name(name);
  d.set_vendor(vendor);
  d.set_vendor_id(vendor_id);
  d.set_device_type(type);
  return d;
}

TEST(DefaultDeviceKey, IsTheDeviceNameLowercasedWithDashes) {
  EXPECT_EQ(DefaultDeviceKey(Device("Mali-G610 r0p0", "ARM", 0x13b5, "GPU")),
            "mali-g610-r0p0");
  EXPECT_EQ(DefaultDeviceKey(
                Device("QUALCOMM Adreno(TM) 740", "QUALCOMM", 0x5143, "GPU")),
            "qualcomm-adreno-tm-740");
  EXPECT_EQ(DefaultDeviceKey(Device("pthread-skylake-avx512-AMD EPYC",
                                    "AuthenticAMD", 0x8086, "CPU")),
            "pthread-skylake-avx512-amd-epyc");
  EXPECT_EQ(DefaultDeviceKey(Device("  ", "", 0, "CPU")), "opencl-device");
}

// PoCL on an Arm CPU reports Mali's vendor (ARM, 0x13b5) and the bare
// device name "pthread": its key says it is an Arm CPU, never a Mali GPU.
TEST(DefaultDeviceKey, TellsAnArmCpuFromAMaliGpu) {
  const std::string cpu =
      DefaultDeviceKey(Device("pthread", "ARM", 0x13b5, "CPU"));
  EXPECT_EQ(cpu, "arm-cpu-pthread");
  EXPECT_NE(cpu, DefaultDeviceKey(Device("pthread", "ARM", 0x13b5, "GPU")));
  // Either the vendor id or the vendor name marks an Arm device.
  EXPECT_EQ(DefaultDeviceKey(Device("pthread", "ARM", 0, "CPU")),
            "arm-cpu-pthread");
  EXPECT_EQ(DefaultDeviceKey(Device("Cortex-A76", "", 0x13b5, "CPU")),
            "arm-cpu-cortex-a76");
  EXPECT_EQ(DefaultDeviceKey(Device("x", "ARM", 0x13b5, "ACCELERATOR")),
            "arm-accelerator-x");
  // A CPU of another vendor keeps its plain key.
  EXPECT_EQ(DefaultDeviceKey(Device("pthread", "GenuineIntel", 0x8086, "CPU")),
            "pthread");
}

}  // namespace
}  // namespace tunefleet::agent
