// Unit tests of tunefleet_opencl's build inspection: what --inspect reports
// of a program binary.
#include "opencl/build_inspect.h"

#include "gtest/gtest.h"

namespace tunefleet::opencl {
namespace {

TEST(PtxCounts, CountsVectorLoadsSpillsAndFmas) {
  const char* ptx = R"(.version 8.0
.target sm_90
	ld.shared.v4.f32 	{%f1, %f2, %f3, %f4}, [%r1];
	ld.shared.v4.f32 	{%f5, %f6, %f7, %f8}, [%r1+16];
	ld.shared.f32 	%f9, [%r2];
	ld.global.nc.v4.f32 	{%f10, %f11, %f12, %f13}, [%rd1];
	ld.global.f32 	%f14, [%rd2];
	st.local.f32 	[%rd3], %f1;
	fma.rn.f32 	%f15, %f1, %f5, %f15;
	fma.rn.f32 	%f16, %f2, %f5, %f16;
	bar.sync 	0;
)";
  const PtxCounts c = CountPtx(ptx);
  EXPECT_EQ(c.shared_loads_v4, 2);
  EXPECT_EQ(c.shared_loads, 1);
  EXPECT_EQ(c.global_loads_v4, 1);
  EXPECT_EQ(c.global_loads, 1);
  EXPECT_EQ(c.local_accesses, 1);
  EXPECT_EQ(c.fmas, 2);
  EXPECT_EQ(c.barriers, 1);
  // Not PTX (an ELF from PoCL): nothing counted.
  EXPECT_EQ(CountPtx("\x7f"
                     "ELF fma.rn.f32")
                .fmas,
            0);
}

}  // namespace
}  // namespace tunefleet::opencl
