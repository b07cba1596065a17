// Run-time lookup and launch of the tuned kernels (see tunefleet_tuned.h):
// exact-workload entries, and the nearest tuned shape of shape-generic
// templates (tuned_table.h), whose checks and launches are generated code.
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tuned_table.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace {

using internal::ShapeEntry;
using internal::ShapeLaunch;
using internal::ShapeTemplate;

std::string DeviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS)
    return "";
  std::string s(size, '\0');
  clGetDeviceInfo(device, param, size, &s[0], nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

// The device limits shape-generic checks read, in their order.
std::vector<double> Limits(cl_device_id device) {
  size_t wg = 0, items[3] = {0, 0, 0};
  cl_ulong local = 0, alloc = 0;
  cl_uint units = 0;
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(wg), &wg,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local), &local,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(alloc), &alloc,
                  nullptr);
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units,
                  nullptr);
  return {double(wg),    double(items[0]), double(items[1]), double(items[2]),
          double(local), double(alloc),    double(units)};
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

// What a launch needs besides its program.
struct Launch {
  const char* source;
  const char* kernel;
  const std::string* options;
  int dims;
  const size_t* global;
  const size_t* local;  // all 0: let the runtime choose
  const internal::Arg* args;
  int num_args;
  const long long* ints;  // for 'i' args of shape-generic launches, or null
};

cl_int Enqueue(cl_command_queue queue, const Launch& l, const cl_mem* buffers,
               const float* floats, cl_uint num_wait_events,
               const cl_event* wait_events, cl_event* event) {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(context),
                              &context, nullptr);
  if (err != CL_SUCCESS) return err;
  cl_program program = nullptr;
  err = GetProgram(context, device, l.source, *l.options, &program);
  if (err != CL_SUCCESS) return err;
  cl_kernel kernel = clCreateKernel(program, l.kernel, &err);
  if (err != CL_SUCCESS) return err;
  for (int a = 0; a < l.num_args && err == CL_SUCCESS; ++a) {
    const internal::Arg& arg = l.args[a];
    if (arg.kind == 'i') {
      const cl_int v = static_cast<cl_int>(l.ints != nullptr ? l.ints[arg.value]
                                                             : arg.value);
      err = clSetKernelArg(kernel, a, sizeof(v), &v);
    } else if (arg.kind == 'b') {
      err = clSetKernelArg(kernel, a, sizeof(cl_mem), &buffers[arg.value]);
    } else {
      err = clSetKernelArg(kernel, a, sizeof(float), &floats[arg.value]);
    }
  }
  if (err == CL_SUCCESS) {
    const bool local = l.local[0] != 0;
    err = clEnqueueNDRangeKernel(queue, kernel, l.dims, nullptr, l.global,
                                 local ? l.local : nullptr, num_wait_events,
                                 wait_events, event);
  }
  clReleaseKernel(kernel);
  return err;
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

// A shape of a shape-generic template: its variables up to the knobs.
struct Shape {
  int tmpl = -1;  // index into kShapeTemplates
  std::string dtype;
  std::vector<double> vars;
};

const ShapeTemplate& TemplateOf(const Shape& s) {
  return internal::kShapeTemplates[s.tmpl];
}

// The first shape-generic template of `op` that runs `dtype`, or -1.
int FindShapeTemplate(const std::string& op, const std::string& dtype) {
  for (size_t i = 0; i < internal::kNumShapeTemplates; ++i) {
    const ShapeTemplate& t = internal::kShapeTemplates[i];
    bool dtype_ok = t.num_dtypes == 0;
    for (int d = 0; d < t.num_dtypes; ++d) dtype_ok |= dtype == t.dtypes[d];
    if (op == t.op && dtype_ok) return static_cast<int>(i);
  }
  return -1;
}

// The shape of `op` with `dims` (in the op's order) and attributes by name
// (missing ones at their default). False without a template for it or
// with an unknown attribute value.
bool MakeShape(const std::string& op, const std::vector<long long>& dims,
               const std::string& dtype,
               const std::map<std::string, std::string>& attrs, Shape* out) {
  out->tmpl = FindShapeTemplate(op, dtype);
  if (out->tmpl < 0) return false;
  const ShapeTemplate& t = TemplateOf(*out);
  if (static_cast<int>(dims.size()) != t.num_dims) return false;
  out->dtype = dtype;
  out->vars.assign(t.num_vars, 0.0);
  for (int i = 0; i < t.num_dims; ++i) out->vars[i] = double(dims[i]);
  for (int a = 0; a < t.num_attrs; ++a) {
    const internal::Attr& attr = t.attrs[a];
    auto it = attrs.find(attr.name);
    const std::string value = it == attrs.end() ? attr.values[0] : it->second;
    int v = 0;
    while (v < attr.num_values && value != attr.values[v]) ++v;
    if (v == attr.num_values) return false;
    out->vars[t.num_dims + a] = attr.numbers[v];
  }
  const int dtype_slot = t.num_dims + t.num_attrs;
  for (size_t d = 0; d < internal::kNumDtypeValues; ++d) {
    const internal::DtypeValues& values = internal::kDtypeValues[d];
    if (dtype != values.name) continue;
    out->vars[dtype_slot] = values.fp16;
    out->vars[dtype_slot + 1] = values.element_bytes;
    return true;
  }
  return false;
}

// The variables of a shape with a config and a device's limits.
std::vector<double> VarsFor(const Shape& s, const long long* knobs,
                            const std::vector<double>& limits) {
  const ShapeTemplate& t = TemplateOf(s);
  std::vector<double> vars = s.vars;
  const int knob_slot = t.num_dims + t.num_attrs + 2;
  for (int k = 0; k < t.num_knobs; ++k) vars[knob_slot + k] = double(knobs[k]);
  for (size_t l = 0; l < limits.size(); ++l) {
    vars[knob_slot + t.num_knobs + l] = limits[l];
  }
  return vars;
}

bool Passes(const Shape& s, const long long* knobs,
            const std::vector<double>& limits) {
  std::vector<double> vars = VarsFor(s, knobs, limits);
  return TemplateOf(s).check(vars.data()) == nullptr;
}

double ShapeDistance(const ShapeEntry& e, const Shape& s) {
  double d = 0;
  for (int i = 0; i < TemplateOf(s).num_dims; ++i) {
    d += std::fabs(std::log(double(e.dims[i]) / s.vars[i]));
  }
  return d;
}

bool SameVariant(const ShapeEntry& e, const Shape& s) {
  const ShapeTemplate& t = TemplateOf(s);
  if (e.shape_template != s.tmpl || s.dtype != e.dtype) return false;
  for (int a = 0; a < t.num_attrs; ++a) {
    if (e.attrs[a] != s.vars[t.num_dims + a]) return false;
  }
  return true;
}

struct Pick {
  const ShapeEntry* entry = nullptr;
  const char* device_match = "none";
  const char* shape_match = "default";
};

// The nearest valid entry among devices accepted by `in_tier`.
template <typename Tier>
const ShapeEntry* NearestIn(Tier in_tier, const Shape& s,
                            const std::vector<double>& limits) {
  const ShapeEntry* best = nullptr;
  double best_distance = 0;
  for (size_t i = 0; i < internal::kNumShapeEntries; ++i) {
    const ShapeEntry& e = internal::kShapeEntries[i];
    if (!SameVariant(e, s) || !in_tier(internal::kDevices[e.device])) continue;
    if (!Passes(s, e.knobs, limits)) continue;
    const double d = ShapeDistance(e, s);
    if (best == nullptr || d < best_distance) {
      best = &e;
      best_distance = d;
    }
  }
  return best;
}

Pick FindShape(cl_device_id device, const Shape& s) {
  const std::string name = DeviceString(device, CL_DEVICE_NAME);
  const std::string vendor = DeviceString(device, CL_DEVICE_VENDOR);
  const std::vector<double> limits = Limits(device);
  Pick pick;
  auto same_name = [&](const internal::Device& d) { return name == d.name; };
  auto same_vendor = [&](const internal::Device& d) {
    return vendor == d.vendor;
  };
  auto any = [](const internal::Device&) { return true; };
  if ((pick.entry = NearestIn(same_name, s, limits))) {
    pick.device_match = "name";
  } else if ((pick.entry = NearestIn(same_vendor, s, limits))) {
    pick.device_match = "vendor";
  } else if ((pick.entry = NearestIn(any, s, limits))) {
    pick.device_match = "any";
  }
  if (pick.entry != nullptr) {
    pick.shape_match = ShapeDistance(*pick.entry, s) == 0 ? "exact" : "nearest";
  }
  return pick;
}

// The config a pick runs: its entry's, or the template's default.
const long long* KnobsOf(const Pick& pick, const Shape& s) {
  return pick.entry != nullptr ? pick.entry->knobs
                               : TemplateOf(s).default_config;
}

std::string ConfigText(const ShapeTemplate& t, const long long* knobs) {
  std::string text;
  for (int k = 0; k < t.num_knobs; ++k) {
    text += (k ? "," : "") + std::string(t.knobs[k]) + "=" +
            std::to_string(knobs[k]);
  }
  return text;
}

// Enqueues the shape with the config of its pick. CL_INVALID_WORK_GROUP_SIZE
// when that config fails the template's checks on this device.
cl_int RunShape(cl_command_queue queue, const Shape& s, const cl_mem* buffers,
                const float* floats, cl_uint num_wait_events,
                const cl_event* wait_events, cl_event* event) {
  cl_device_id device = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  const ShapeTemplate& t = TemplateOf(s);
  const Pick pick = FindShape(device, s);
  std::vector<double> vars = VarsFor(s, KnobsOf(pick, s), Limits(device));
  if (t.check(vars.data()) != nullptr) return CL_INVALID_WORK_GROUP_SIZE;
  ShapeLaunch launch;
  t.launch(vars.data(), &launch);
  const int source = pick.entry ? pick.entry->source : t.default_source;
  const Launch l{internal::kSources[source],
                 t.kernel,
                 &launch.options,
                 launch.dims,
                 launch.global,
                 launch.local,
                 t.args,
                 t.num_args,
                 launch.ints};
  return Enqueue(queue, l, buffers, floats, num_wait_events, wait_events,
                 event);
}

// Parses a canonical workload "op D=v ... dtype [attr=value ...]" into a
// shape. False when it is not one of a shape-generic template.
bool ParseShape(const char* workload, Shape* out) {
  std::istringstream in(workload);
  std::string op, token, dtype = "fp32";
  in >> op;
  std::map<std::string, std::string> named;
  while (in >> token) {
    const size_t eq = token.find('=');
    if (eq == std::string::npos) {
      dtype = token;
    } else {
      named[token.substr(0, eq)] = token.substr(eq + 1);
    }
  }
  const int tmpl = FindShapeTemplate(op, dtype);
  if (tmpl < 0) return false;
  const ShapeTemplate& t = internal::kShapeTemplates[tmpl];
  std::vector<long long> dims;
  for (int i = 0; i < t.num_dims; ++i) {
    auto it = named.find(t.dims[i]);
    if (it == named.end()) return false;
    dims.push_back(std::atoll(it->second.c_str()));
    if (dims.back() < 1) return false;
    named.erase(it);
  }
  return MakeShape(op, dims, dtype, named, out);
}

}  // namespace

std::string DescribeRun(cl_device_id device, const char* workload) {
  const internal::KernelEntry* e = FindEntry(device, workload);
  if (e != nullptr) return internal::kDevices[e->device].key;
  Shape s;
  if (!ParseShape(workload, &s)) return "";
  const Pick pick = FindShape(device, s);
  return pick.entry ? internal::kDevices[pick.entry->device].key : "";
}

cl_int Run(cl_command_queue queue, const char* workload, const cl_mem* buffers,
           size_t num_buffers, const float* floats, size_t num_floats,
           cl_event* event) {
  cl_device_id device = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  if (const internal::KernelEntry* e = FindEntry(device, workload)) {
    if (num_buffers != static_cast<size_t>(e->num_buffers) ||
        num_floats != static_cast<size_t>(e->num_floats)) {
      return CL_INVALID_VALUE;
    }
    const std::string options = e->options;
    const Launch l{internal::kSources[e->source],
                   e->kernel,
                   &options,
                   e->dims,
                   e->global,
                   e->local,
                   &internal::kArgs[e->first_arg],
                   e->num_args,
                   nullptr};
    return Enqueue(queue, l, buffers, floats, 0, nullptr, event);
  }
  Shape s;
  if (!ParseShape(workload, &s) ||
      num_buffers != static_cast<size_t>(TemplateOf(s).num_buffers) ||
      num_floats != static_cast<size_t>(TemplateOf(s).num_floats)) {
    return CL_INVALID_VALUE;
  }
  return RunShape(queue, s, buffers, floats, 0, nullptr, event);
}

GemmChoice DescribeGemm(cl_device_id device, int m, int n, int k) {
  GemmChoice c;
  c.device_match = "none";
  c.shape_match = "default";
  Shape s;
  if (!MakeShape("gemm", {m, n, k}, "fp32", {}, &s)) return c;
  const ShapeTemplate& t = TemplateOf(s);
  const Pick pick = FindShape(device, s);
  const long long* knobs = KnobsOf(pick, s);
  std::vector<double> vars = VarsFor(s, knobs, Limits(device));
  ShapeLaunch launch;
  t.launch(vars.data(), &launch);
  c.device_key = pick.entry ? internal::kDevices[pick.entry->device].key : "";
  c.device_match = pick.device_match;
  c.shape_match = pick.shape_match;
  c.config = ConfigText(t, knobs);
  c.build_options = launch.options;
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
  Shape s;
  if (!MakeShape("gemm", {m, n, k}, "fp32", {}, &s) ||
      TemplateOf(s).num_buffers != 3) {
    return CL_INVALID_VALUE;
  }
  const cl_mem buffers[3] = {a, b, c};
  return RunShape(queue, s, buffers, nullptr, num_wait_events, wait_events,
                  event);
}

void ReleaseCachedPrograms() {
  ProgramCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mu);
  for (auto& [key, program] : cache.programs) clReleaseProgram(program);
  cache.programs.clear();
}

int NumTunedEntries() {
  return static_cast<int>(internal::kNumShapeEntries +
                          internal::kNumKernelEntries);
}

int NumTunedEntries(const char* op) {
  int n = 0;
  for (size_t i = 0; i < internal::kNumShapeEntries; ++i) {
    const ShapeEntry& e = internal::kShapeEntries[i];
    n += std::string(internal::kShapeTemplates[e.shape_template].op) == op;
  }
  for (size_t i = 0; i < internal::kNumKernelEntries; ++i) {
    n += std::string(internal::kKernelEntries[i].op) == op;
  }
  return n;
}

}  // namespace tunefleet_tuned
