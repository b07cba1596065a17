// Run-time lookup and launch of the tuned kernels (see tunefleet_tuned.h).
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_geometry.h"
#include "tuned_table.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace {

using internal::GemmEntry;
using tunefleet_gemm::GemmKnobs;

std::string DeviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS)
    return "";
  std::string s(size, '\0');
  clGetDeviceInfo(device, param, size, &s[0], nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

tunefleet_gemm::GemmDeviceLimits Limits(cl_device_id device) {
  size_t wg = 0, items[3] = {0, 0, 0};
  cl_ulong local = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local,
                  nullptr);
  return {wg, items[0], items[1], local};
}

double ShapeDistance(const GemmEntry& e, int m, int n, int k) {
  return std::fabs(std::log(double(e.m) / m)) +
         std::fabs(std::log(double(e.n) / n)) +
         std::fabs(std::log(double(e.k) / k));
}

std::string KnobsText(const GemmKnobs& g) {
  return "MWG=" + std::to_string(g.mwg) + ",NWG=" + std::to_string(g.nwg) +
         ",KWG=" + std::to_string(g.kwg) + ",MWI=" + std::to_string(g.mwi) +
         ",NWI=" + std::to_string(g.nwi) + ",VW=" + std::to_string(g.vw) +
         ",SA=" + std::to_string(g.sa) + ",SB=" + std::to_string(g.sb) +
         ",KUNROLL=" + std::to_string(g.kunroll);
}

struct Pick {
  const GemmEntry* entry = nullptr;
  const char* device_match = "none";
  const char* shape_match = "default";
};

// The nearest valid entry among devices accepted by `in_tier`.
template <typename Tier>
const GemmEntry* NearestIn(Tier in_tier, int m, int n, int k,
                           const tunefleet_gemm::GemmDeviceLimits& limits) {
  const GemmEntry* best = nullptr;
  double best_distance = 0;
  for (size_t i = 0; i < internal::kNumGemmEntries; ++i) {
    const GemmEntry& e = internal::kGemmEntries[i];
    if (!in_tier(internal::kDevices[e.device])) continue;
    if (tunefleet_gemm::GemmCheck(e.knobs, limits) != nullptr) continue;
    const double d = ShapeDistance(e, m, n, k);
    if (best == nullptr || d < best_distance) {
      best = &e;
      best_distance = d;
    }
  }
  return best;
}

Pick FindGemm(cl_device_id device, int m, int n, int k) {
  const std::string name = DeviceString(device, CL_DEVICE_NAME);
  const std::string vendor = DeviceString(device, CL_DEVICE_VENDOR);
  const tunefleet_gemm::GemmDeviceLimits limits = Limits(device);
  Pick pick;
  auto same_name = [&](const internal::Device& d) { return name == d.name; };
  auto same_vendor = [&](const internal::Device& d) {
    return vendor == d.vendor;
  };
  auto any = [](const internal::Device&) { return true; };
  if ((pick.entry = NearestIn(same_name, m, n, k, limits))) {
    pick.device_match = "name";
  } else if ((pick.entry = NearestIn(same_vendor, m, n, k, limits))) {
    pick.device_match = "vendor";
  } else if ((pick.entry = NearestIn(any, m, n, k, limits))) {
    pick.device_match = "any";
  }
  if (pick.entry != nullptr) {
    const GemmEntry& e = *pick.entry;
    pick.shape_match = e.m == m && e.n == n && e.k == k ? "exact" : "nearest";
  }
  return pick;
}

// Built programs per (context, device, source, options).
struct ProgramCache {
  std::mutex mu;
  std::map<std::tuple<cl_context, cl_device_id, const char*, std::string>,
           cl_program>
      programs;
};

ProgramCache& Cache() {
  static ProgramCache cache;
  return cache;
}

cl_int GetProgram(cl_context context, cl_device_id device, const char* source,
                  const std::string& options, cl_program* out) {
  ProgramCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto key = std::make_tuple(context, device, source, options);
  auto it = cache.programs.find(key);
  if (it != cache.programs.end()) {
    *out = it->second;
    return CL_SUCCESS;
  }
  cl_int err = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  if (err != CL_SUCCESS) return err;
  err = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    clReleaseProgram(program);
    return err;
  }
  cache.programs[key] = program;
  *out = program;
  return CL_SUCCESS;
}

// The entry for an exact workload on `device`: same device name, else same
// vendor, else any tuned device.
const internal::KernelEntry* FindEntry(cl_device_id device,
                                       const char* workload) {
  const std::string name = DeviceString(device, CL_DEVICE_NAME);
  const std::string vendor = DeviceString(device, CL_DEVICE_VENDOR);
  const internal::KernelEntry* by_vendor = nullptr;
  const internal::KernelEntry* any = nullptr;
  for (size_t i = 0; i < internal::kNumKernelEntries; ++i) {
    const internal::KernelEntry& e = internal::kKernelEntries[i];
    if (std::string(e.workload) != workload) continue;
    const internal::Device& d = internal::kDevices[e.device];
    if (name == d.name) return &e;
    if (by_vendor == nullptr && vendor == d.vendor) by_vendor = &e;
    if (any == nullptr) any = &e;
  }
  return by_vendor != nullptr ? by_vendor : any;
}

}  // namespace

std::string DescribeRun(cl_device_id device, const char* workload) {
  const internal::KernelEntry* e = FindEntry(device, workload);
  return e == nullptr ? "" : internal::kDevices[e->device].key;
}

cl_int Run(cl_command_queue queue, const char* workload, const cl_mem* buffers,
           size_t num_buffers, const float* floats, size_t num_floats,
           cl_event* event) {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context),
                              &context, nullptr);
  if (err != CL_SUCCESS) return err;
  const internal::KernelEntry* e = FindEntry(device, workload);
  if (e == nullptr || num_buffers != static_cast<size_t>(e->num_buffers) ||
      num_floats != static_cast<size_t>(e->num_floats)) {
    return CL_INVALID_VALUE;
  }
  cl_program program = nullptr;
  err = GetProgram(context, device, internal::kSources[e->source], e->options,
                   &program);
  if (err != CL_SUCCESS) return err;
  cl_kernel kernel = clCreateKernel(program, e->kernel, &err);
  if (err != CL_SUCCESS) return err;
  for (int a = 0; a < e->num_args && err == CL_SUCCESS; ++a) {
    const internal::Arg& arg = internal::kArgs[e->first_arg + a];
    if (arg.kind == 'i') {
      const cl_int v = static_cast<cl_int>(arg.value);
      err = clSetKernelArg(kernel, a, sizeof(v), &v);
    } else if (arg.kind == 'b') {
      err = clSetKernelArg(kernel, a, sizeof(cl_mem), &buffers[arg.value]);
    } else {
      err = clSetKernelArg(kernel, a, sizeof(float), &floats[arg.value]);
    }
  }
  if (err == CL_SUCCESS) {
    const bool local = e->local[0] != 0;
    err = clEnqueueNDRangeKernel(queue, kernel, e->dims, nullptr, e->global,
                                 local ? e->local : nullptr, 0, nullptr, event);
  }
  clReleaseKernel(kernel);
  return err;
}

GemmChoice DescribeGemm(cl_device_id device, int m, int n, int k) {
  const Pick pick = FindGemm(device, m, n, k);
  const GemmKnobs knobs = pick.entry ? pick.entry->knobs : GemmKnobs();
  const tunefleet_gemm::GemmLaunch launch =
      tunefleet_gemm::GemmGeometry(knobs, m, n);
  GemmChoice c;
  c.device_key = pick.entry ? internal::kDevices[pick.entry->device].key : "";
  c.device_match = pick.device_match;
  c.shape_match = pick.shape_match;
  c.config = KnobsText(knobs);
  c.build_options = launch.build_options;
  for (int d = 0; d < 2; ++d) {
    c.global[d] = launch.global[d];
    c.local[d] = launch.local[d];
  }
  return c;
}

cl_int Gemm(cl_command_queue queue, int m, int n, int k, cl_mem a, cl_mem b,
            cl_mem c, cl_uint num_wait_events, const cl_event* wait_events,
            cl_event* event) {
  if (m < 1 || n < 1 || k < 1) return CL_INVALID_VALUE;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context),
                              &context, nullptr);
  if (err != CL_SUCCESS) return err;
  const Pick pick = FindGemm(device, m, n, k);
  const GemmKnobs knobs = pick.entry ? pick.entry->knobs : GemmKnobs();
  if (tunefleet_gemm::GemmCheck(knobs, Limits(device)) != nullptr) {
    return CL_INVALID_WORK_GROUP_SIZE;
  }
  const int source_index =
      pick.entry ? pick.entry->source : internal::kDefaultGemmSource;
  const tunefleet_gemm::GemmLaunch launch =
      tunefleet_gemm::GemmGeometry(knobs, m, n);
  cl_program program = nullptr;
  err = GetProgram(context, device, internal::kSources[source_index],
                   launch.build_options, &program);
  if (err != CL_SUCCESS) return err;
  cl_kernel kernel = clCreateKernel(program, "gemm", &err);
  if (err != CL_SUCCESS) return err;
  err = clSetKernelArg(kernel, 0, sizeof(int), &m);
  err |= clSetKernelArg(kernel, 1, sizeof(int), &n);
  err |= clSetKernelArg(kernel, 2, sizeof(int), &k);
  err |= clSetKernelArg(kernel, 3, sizeof(cl_mem), &a);
  err |= clSetKernelArg(kernel, 4, sizeof(cl_mem), &b);
  err |= clSetKernelArg(kernel, 5, sizeof(cl_mem), &c);
  if (err == CL_SUCCESS) {
    err = clEnqueueNDRangeKernel(queue, kernel, 2, nullptr, launch.global,
                                 launch.local, num_wait_events, wait_events,
                                 event);
  }
  clReleaseKernel(kernel);
  return err;
}

void ReleaseCachedPrograms() {
  ProgramCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (auto& [key, program] : cache.programs) clReleaseProgram(program);
  cache.programs.clear();
}

int NumTunedEntries() {
  return static_cast<int>(internal::kNumGemmEntries +
                          internal::kNumKernelEntries);
}

int NumTunedEntries(const char* op) {
  if (std::string(op) == "gemm") {
    return static_cast<int>(internal::kNumGemmEntries);
  }
  int n = 0;
  for (size_t i = 0; i < internal::kNumKernelEntries; ++i) {
    n += std::string(internal::kKernelEntries[i].op) == op;
  }
  return n;
}

}  // namespace tunefleet_tuned
