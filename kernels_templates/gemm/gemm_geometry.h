// Launch geometry, build defines and constraints of the tunable GEMM in
// gemm.cl. Header-only and dependent on the C++ standard library alone: the
// tuner compiles it, and `tunefleet emit` copies it verbatim into every
// emitted kernel library, so tuned and shipped launches cannot disagree.
#ifndef TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GEOMETRY_H_
#define TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GEOMETRY_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tunefleet_gemm {

// One config of gemm.cl; the meaning of each knob is in gemm.cl's header.
struct GemmKnobs {
  int64_t mwg = 16, nwg = 16, kwg = 8;
  int64_t mwi = 2, nwi = 2, vw = 1;
  int64_t sa = 0, sb = 0, kunroll = 1;
};

// What a launch needs: 2D NDRange (dimension 0 runs along N), the build
// options and the static local memory the kernel declares, in bytes.
struct GemmLaunch {
  size_t global[2];
  size_t local[2];
  std::string build_options;
  uint64_t local_mem_bytes;
};

// The device limits the constraints read (clGetDeviceInfo values).
struct GemmDeviceLimits {
  uint64_t max_work_group_size;
  uint64_t max_work_item_size0;
  uint64_t max_work_item_size1;
  uint64_t local_mem_bytes;
};

// Largest register tile (accumulators per work-item) we allow; bigger tiles
// spill on every device class tunefleet targets.
constexpr int64_t kMaxRegisterTile = 64;

inline int64_t GemmWorkGroupSize(const GemmKnobs& k) {
  return (k.mwg / k.mwi) * (k.nwg / k.nwi);
}

inline uint64_t GemmLocalMemBytes(const GemmKnobs& k) {
  return static_cast<uint64_t>(k.sa * k.kwg * k.mwg + k.sb * k.kwg * k.nwg) *
         sizeof(float);
}

// Returns nullptr when the config is valid on a device with these limits,
// else a short reason naming the violated constraint.
inline const char* GemmCheck(const GemmKnobs& k, const GemmDeviceLimits& d) {
  if (k.mwi > k.mwg || k.mwg % k.mwi != 0) return "MWI must divide MWG";
  if (k.nwi > k.nwg || k.nwg % k.nwi != 0) return "NWI must divide NWG";
  if (k.nwi % k.vw != 0) return "VW must divide NWI";
  if (k.kwg % k.kunroll != 0) return "KUNROLL must divide KWG";
  if (k.mwi * k.nwi > kMaxRegisterTile) return "register tile MWI*NWI > 64";
  if (static_cast<uint64_t>(GemmWorkGroupSize(k)) > d.max_work_group_size)
    return "work-group size exceeds the device's maximum";
  if (static_cast<uint64_t>(k.nwg / k.nwi) > d.max_work_item_size0 ||
      static_cast<uint64_t>(k.mwg / k.mwi) > d.max_work_item_size1)
    return "work-group dimension exceeds the device's work-item sizes";
  if (GemmLocalMemBytes(k) > d.local_mem_bytes)
    return "local memory tiles exceed the device's local memory";
  return nullptr;
}

// Geometry and build options for C(MxN) = A(MxK) * B(KxN) with knobs k.
inline GemmLaunch GemmGeometry(const GemmKnobs& k, int64_t m, int64_t n) {
  const int64_t ndimc = k.nwg / k.nwi;
  const int64_t mdimc = k.mwg / k.mwi;
  const int64_t groups_n = (n + k.nwg - 1) / k.nwg;
  const int64_t groups_m = (m + k.mwg - 1) / k.mwg;
  GemmLaunch l;
  l.global[0] = static_cast<size_t>(groups_n * ndimc);
  l.global[1] = static_cast<size_t>(groups_m * mdimc);
  l.local[0] = static_cast<size_t>(ndimc);
  l.local[1] = static_cast<size_t>(mdimc);
  l.local_mem_bytes = GemmLocalMemBytes(k);
  auto def = [&l](const char* name, int64_t v) {
    l.build_options += " -D";
    l.build_options += name;
    l.build_options += "=";
    l.build_options += std::to_string(v);
  };
  def("MWG", k.mwg);
  def("NWG", k.nwg);
  def("KWG", k.kwg);
  def("MWI", k.mwi);
  def("NWI", k.nwi);
  def("VW", k.vw);
  def("SA", k.sa);
  def("SB", k.sb);
  def("KUNROLL", k.kunroll);
  def("EDGE_M", m % k.mwg != 0);
  def("EDGE_N", n % k.nwg != 0);
  l.build_options.erase(0, 1);
  return l;
}

}  // namespace tunefleet_gemm

#endif  // TUNEFLEET_KERNELS_TEMPLATES_GEMM_GEMM_GEOMETRY_H_
