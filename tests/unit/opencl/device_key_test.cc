// Unit tests of DefaultDeviceKey: the key an agent serves its device under
// when no --key is given.
#include "gtest/gtest.h"
#include "opencl/opencl.h"

namespace tunefleet::opencl {
namespace {

tunefleet::v1::DeviceInfo Device(const std::string& name,
                                 const std::string& vendor, uint32_t vendor_id,
                                 const std::string& type,
                                 const std::string& version = "",
                                 uint32_t compute_units = 0) {
  tunefleet::v1::DeviceInfo d;
  d.set_device_name(name);
  d.set_vendor(vendor);
  d.set_vendor_id(vendor_id);
  d.set_device_type(type);
  d.set_device_version(version);
  d.set_compute_units(compute_units);
  return d;
}

TEST(DefaultDeviceKey, IsTheDeviceNameLowercasedWithDashes) {
  EXPECT_EQ(DefaultDeviceKey(Device("Mali-G610 r0p0", "ARM", 0x13b5, "GPU")),
            "mali-g610-r0p0");
  EXPECT_EQ(DefaultDeviceKey(Device("Mali-G78 MP20", "ARM", 0x13b5, "GPU",
                                    "OpenCL 3.0 v1.r38p1", 20)),
            "mali-g78-mp20");
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

// Adreno drivers often name every GPU "QUALCOMM Adreno(TM)": the model
// number comes from CL_DEVICE_VERSION, so a 540 and a 740 never share a key.
TEST(DefaultDeviceKey, TakesTheAdrenoModelFromTheDeviceVersion) {
  const std::string a540 =
      DefaultDeviceKey(Device("QUALCOMM Adreno(TM)", "QUALCOMM", 0x5143, "GPU",
                              "OpenCL 2.0 Adreno(TM) 540"));
  EXPECT_EQ(a540, "qualcomm-adreno-tm-540");
  EXPECT_NE(a540,
            DefaultDeviceKey(Device("QUALCOMM Adreno(TM)", "QUALCOMM", 0x5143,
                                    "GPU", "OpenCL 3.0 Adreno(TM) 740")));
  // A name with the number keeps it once; a version without one adds none.
  EXPECT_EQ(
      DefaultDeviceKey(Device("QUALCOMM Adreno(TM) 740", "QUALCOMM", 0x5143,
                              "GPU", "OpenCL 3.0 Adreno(TM) 740")),
      "qualcomm-adreno-tm-740");
  EXPECT_EQ(DefaultDeviceKey(Device("QUALCOMM Adreno(TM)", "QUALCOMM", 0x5143,
                                    "GPU", "OpenCL 2.0 Adreno(TM)")),
            "qualcomm-adreno-tm");
}

// One Mali name covers several core counts; the key carries the count as
// Arm writes it (MPn) unless the name already does.
TEST(DefaultDeviceKey, AddsTheMaliCoreCount) {
  EXPECT_EQ(DefaultDeviceKey(Device("Mali-G610 r0p0", "ARM", 0x13b5, "GPU",
                                    "OpenCL 3.0 v1.g6p0", 4)),
            "mali-g610-r0p0-mp4");
  EXPECT_NE(DefaultDeviceKey(
                Device("Mali-G78", "ARM", 0x13b5, "GPU", "OpenCL 3.0", 14)),
            DefaultDeviceKey(
                Device("Mali-G78", "ARM", 0x13b5, "GPU", "OpenCL 3.0", 20)));
  // An Arm CPU is not a Mali: no core count.
  EXPECT_EQ(DefaultDeviceKey(Device("pthread", "ARM", 0x13b5, "CPU", "", 8)),
            "arm-cpu-pthread");
}

}  // namespace
}  // namespace tunefleet::opencl
