// Run-time lookup and launch of the tuned kernels (see tunefleet_tuned.h):
// exact-workload entries, and the nearest tuned shape of shape-generic
// templates (tuned_table.h), whose checks and launches are generated code.
#include "tuned_runtime.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tuned_table.h"
#include "tunefleet_tuned.h"

namespace tunefleet_tuned {
namespace internal {

DeviceFeatures FeaturesOf(cl_device_id device) {
  static std::mutex mu;
  static std::map<cl_device_id, DeviceFeatures> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(device);
  if (it != known.end()) return it->second;
  const std::string extensions =
      " " + DeviceText(device, CL_DEVICE_EXTENSIONS) + " ";
  auto lists = [&](const char* name) {
    return extensions.find(std::string(" ") + name + " ") != std::string::npos;
  };
  DeviceFeatures f;
  f.image2d_from_buffer = lists("cl_khr_image2d_from_buffer");
  f.khr_fp16 = lists("cl_khr_fp16");
  // CL_DEVICE_IMAGE_PITCH_ALIGNMENT (OpenCL 2.0; _KHR of
  // cl_khr_image2d_from_buffer), not in OpenCL 1.2 headers.
  constexpr cl_device_info kPitchAlignment = 0x104A;
  if (f.image2d_from_buffer &&
      clGetDeviceInfo(device, kPitchAlignment, sizeof(f.pitch_alignment),
                      &f.pitch_alignment, nullptr) != CL_SUCCESS) {
    f.image2d_from_buffer = false;  // no alignment to trust: no views
  }
  return known.emplace(device, f).first->second;
}

namespace {

// The device limits shape-generic checks read, in their order
// (kSpecLimitNames of tunefleet's kernels_templates/spec/spec_model.h).
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
  cl_bool images = CL_FALSE;
  size_t image_width = 0, image_height = 0;
  clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images,
                  nullptr);
  if (images == CL_TRUE) {
    clGetDeviceInfo(device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(image_width),
                    &image_width, nullptr);
    clGetDeviceInfo(device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(image_height),
                    &image_height, nullptr);
  }
  const DeviceFeatures features = FeaturesOf(device);
#ifdef TUNEFLEET_TUNED_CLBLAST
  const double clblast = 1;
#else
  const double clblast = 0;
#endif
  return {double(wg),
          double(items[0]),
          double(items[1]),
          double(items[2]),
          double(local),
          double(alloc),
          double(units),
          images == CL_TRUE ? 1.0 : 0.0,
          double(image_width),
          double(image_height),
          features.image2d_from_buffer ? 1.0 : 0.0,
          clblast,
          0.0,  // library_clml: no CLML backend in emitted libraries
          features.khr_fp16 ? 1.0 : 0.0};
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

// One scratch buffer of a queue: zero-filled when created, then as the
// kernels using it leave it.
struct Scratch {
  Mem buffer;
  size_t bytes = 0;
  Event last_use;  // its fill, or the last launch that used it
};

// Scratch buffers per (queue, context, source, kernel, argument index).
// The context is part of the key because a released queue's handle may be
// reused by a queue of another context; buffers hold their context, so
// its handle is not reused while they live.
struct ScratchCache {
  std::mutex mu;
  std::map<
      std::tuple<cl_command_queue, cl_context, const char*, std::string, int>,
      Scratch>
      buffers;
};

ScratchCache& Scratches() {
  static ScratchCache cache;
  return cache;
}

// The scratch of argument `arg` of `l` on `queue`, of at least `bytes`
// bytes: the cached one, or a new zero-filled one (replacing a smaller
// one, which OpenCL frees once the commands using it end). The caller
// holds Scratches().mu.
cl_int AcquireScratch(cl_command_queue queue, cl_context context,
                      const Launch& l, int arg, size_t bytes, Scratch** out) {
  Scratch& s = Scratches().buffers[std::make_tuple(queue, context, l.source,
                                                   std::string(l.kernel), arg)];
  *out = &s;
  if (s.buffer != nullptr && s.bytes >= bytes) return CL_SUCCESS;
  if (bytes == 0) bytes = 1;
  cl_int err = CL_SUCCESS;
  Mem buffer(clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err));
  if (err != CL_SUCCESS) return err;
  const cl_uchar zero = 0;
  cl_event filled = nullptr;
  err = clEnqueueFillBuffer(queue, buffer.get(), &zero, sizeof(zero), 0, bytes,
                            0, nullptr, &filled);
  if (err != CL_SUCCESS) return err;
  s.buffer = std::move(buffer);
  s.bytes = bytes;
  s.last_use.reset(filled);
  return CL_SUCCESS;
}

}  // namespace

std::vector<bool> ActiveRevisions(const std::string& driver) {
  std::vector<bool> active(kNumDevices, false);
  for (size_t d = 0; d < kNumDevices; ++d) {
    bool exact = false;
    int latest = 0;
    for (size_t i = 0; i < kNumDevices; ++i) {
      if (std::strcmp(kDevices[i].key, kDevices[d].key) != 0) continue;
      exact = exact || driver == kDevices[i].driver;
      if (kDevices[i].revision > latest) latest = kDevices[i].revision;
    }
    active[d] =
        exact ? driver == kDevices[d].driver : kDevices[d].revision == latest;
  }
  return active;
}

const KernelEntry* FindEntry(cl_device_id device, const char* workload,
                             const char** match) {
  const std::string name = DeviceText(device, CL_DEVICE_NAME);
  // A loaded table's entry of this device comes first (LoadTable()).
  if (const KernelEntry* loaded = FindLoadedEntry(name, workload)) {
    if (match != nullptr) *match = "name";
    return loaded;
  }
  const std::string vendor = DeviceText(device, CL_DEVICE_VENDOR);
  const std::vector<bool> active = ActiveRevisions(DriverVersion(device));
  const KernelEntry* by_vendor = nullptr;
  const KernelEntry* any = nullptr;
  for (size_t i = 0; i < kNumKernelEntries; ++i) {
    const KernelEntry& e = kKernelEntries[i];
    if (!active[e.device] || std::string(e.workload) != workload) continue;
    const Device& d = kDevices[e.device];
    if (name == d.name) {
      if (match != nullptr) *match = "name";
      return &e;
    }
    if (by_vendor == nullptr && vendor == d.vendor) by_vendor = &e;
    if (any == nullptr) any = &e;
  }
  if (match != nullptr) *match = by_vendor != nullptr ? "vendor" : "any";
  return by_vendor != nullptr ? by_vendor : any;
}

const Arg* ArgsOf(const KernelEntry& e) {
  return e.table != nullptr ? e.args : &kArgs[e.first_arg];
}

const LibraryCall& CallOf(const KernelEntry& e) {
  return e.table != nullptr ? *e.call : kLibraryCalls[e.library];
}

const char* KeyOf(const KernelEntry& e) {
  return e.table != nullptr ? e.key : kDevices[e.device].key;
}

const char* DriverOf(const KernelEntry& e) {
  return e.table != nullptr ? e.driver : kDevices[e.device].driver;
}

int RevisionOf(const KernelEntry& e) {
  return e.table != nullptr ? e.revision : kDevices[e.device].revision;
}

std::string DeviceName(cl_device_id device) {
  return DeviceText(device, CL_DEVICE_NAME);
}

std::string DriverVersion(cl_device_id device) {
  const char* forced = std::getenv("TUNEFLEET_TUNED_DRIVER_VERSION");
  if (forced != nullptr && *forced != '\0') return forced;
  return DeviceText(device, CL_DRIVER_VERSION);
}

Launch LaunchOf(const KernelEntry& e, const std::string& options) {
  return Launch{kSources[e.source],
                e.kernel,
                &options,
                e.dims,
                e.global,
                e.local,
                ArgsOf(e),
                e.num_args,
                nullptr,
                IsFp16(e.workload)};
}

bool ParseInteger(const std::string& text, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = value;
  return true;
}

namespace {

const ShapeTemplate& TemplateOf(const Shape& s) {
  return kShapeTemplates[s.tmpl];
}

// The first shape-generic template of `op` that runs `dtype`, or -1.
int FindShapeTemplate(const std::string& op, const std::string& dtype) {
  for (size_t i = 0; i < kNumShapeTemplates; ++i) {
    const ShapeTemplate& t = kShapeTemplates[i];
    bool dtype_ok = t.num_dtypes == 0;
    for (int d = 0; d < t.num_dtypes; ++d) dtype_ok |= dtype == t.dtypes[d];
    if (op == t.op && dtype_ok) return static_cast<int>(i);
  }
  return -1;
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

// The nearest valid entry among devices accepted by `in_tier`, of the
// `active` revisions.
template <typename Tier>
const ShapeEntry* NearestIn(Tier in_tier, const Shape& s,
                            const std::vector<double>& limits,
                            const std::vector<bool>& active) {
  const ShapeEntry* best = nullptr;
  double best_distance = 0;
  for (size_t i = 0; i < kNumShapeEntries; ++i) {
    const ShapeEntry& e = kShapeEntries[i];
    if (!active[e.device] || !SameVariant(e, s) ||
        !in_tier(kDevices[e.device])) {
      continue;
    }
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
  const std::string name = DeviceText(device, CL_DEVICE_NAME);
  const std::string vendor = DeviceText(device, CL_DEVICE_VENDOR);
  const std::vector<double> limits = Limits(device);
  const std::vector<bool> active = ActiveRevisions(DriverVersion(device));
  Pick pick;
  auto same_name = [&](const Device& d) { return name == d.name; };
  auto same_vendor = [&](const Device& d) { return vendor == d.vendor; };
  auto any = [](const Device&) { return true; };
  if ((pick.entry = NearestIn(same_name, s, limits, active))) {
    pick.device_match = "name";
  } else if ((pick.entry = NearestIn(same_vendor, s, limits, active))) {
    pick.device_match = "vendor";
  } else if ((pick.entry = NearestIn(any, s, limits, active))) {
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

// Workload strings.

// The largest dim (kernels take dims as 32-bit ints) and the largest
// product of a workload's shape dims, as kernels_templates/workload.h has
// them.
constexpr long long kMaxDim = 2147483647LL;
constexpr double kMaxShapeProduct = 9007199254740992.0;  // 2^53

const Op* FindOp(const std::string& name) {
  for (size_t i = 0; i < kNumOps; ++i) {
    if (name == kOps[i].name) return &kOps[i];
  }
  return nullptr;
}

// The tokens of a workload string: split at spaces, tabs, commas and
// semicolons.
std::vector<std::string> Tokens(const char* text) {
  std::vector<std::string> tokens(1);
  for (const char* p = text; *p != '\0'; ++p) {
    const char c = *p;
    if (c == ' ' || c == '\t' || c == '\n' || c == ',' || c == ';') {
      if (!tokens.back().empty()) tokens.emplace_back();
    } else {
      tokens.back() += c;
    }
  }
  if (tokens.back().empty()) tokens.pop_back();
  return tokens;
}

// The canonical string of a workload in any form Run() reads, or "" (see
// CanonicalWorkload() in tunefleet_tuned.h): "op D=v ... dtype [attr=v
// ...]" with every dim in the op's order and the attributes away from
// their default, as templates::Workload::Canonical() writes it.
std::string Canonicalize(const char* workload) {
  if (workload == nullptr) return "";
  const std::vector<std::string> tokens = Tokens(workload);
  const Op* op = tokens.empty() ? nullptr : FindOp(tokens[0]);
  if (op == nullptr) return "";
  std::vector<long long> dims(op->num_dims, 0);
  std::vector<bool> dim_given(op->num_dims, false);
  std::vector<int> attrs(op->num_attrs, 0);  // value indices; 0: default
  std::vector<bool> attr_given(op->num_attrs, false);
  std::string dtype;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const size_t eq = tokens[i].find('=');
    if (eq == std::string::npos) {
      if (!dtype.empty()) return "";
      dtype = tokens[i];
      continue;
    }
    const std::string name = tokens[i].substr(0, eq);
    const std::string value = tokens[i].substr(eq + 1);
    int d = 0;
    while (d < op->num_dims && name != op->dims[d].name) ++d;
    if (d < op->num_dims) {
      if (dim_given[d] || !ParseInteger(value, &dims[d])) return "";
      dim_given[d] = true;
      continue;
    }
    int a = 0;
    while (a < op->num_attrs && name != op->attrs[a].name) ++a;
    if (a == op->num_attrs || attr_given[a]) return "";
    const Attr& attr = op->attrs[a];
    int v = 0;
    while (v < attr.num_values && value != attr.values[v]) ++v;
    if (v == attr.num_values) return "";
    attrs[a] = v;
    attr_given[a] = true;
  }
  if (dtype.empty()) dtype = "fp32";
  bool dtype_known = false;
  for (int t = 0; t < op->num_dtypes; ++t) {
    dtype_known |= dtype == op->dtypes[t];
  }
  if (!dtype_known) return "";
  std::string out = op->name;
  double product = 1;
  for (int d = 0; d < op->num_dims; ++d) {
    const OpDim& dim = op->dims[d];
    if (!dim_given[d]) {
      if (!dim.has_default) return "";
      dims[d] = dim.default_value;
    }
    if (dims[d] < dim.min_value || dims[d] > kMaxDim) return "";
    if (dim.in_shape_product) product *= dims[d] < 1 ? 1.0 : double(dims[d]);
    out += " " + std::string(dim.name) + "=" + std::to_string(dims[d]);
  }
  if (product > kMaxShapeProduct) return "";
  out += " " + dtype;
  for (int a = 0; a < op->num_attrs; ++a) {
    if (attrs[a] == 0) continue;
    out += " " + std::string(op->attrs[a].name) + "=" +
           op->attrs[a].values[attrs[a]];
  }
  return out;
}

// Parses a canonical workload "op D=v ... dtype [attr=value ...]" into a
// shape. False when it is not one of a shape-generic template.
bool ParseShape(const std::string& canonical, Shape* out) {
  const std::vector<std::string> tokens = Tokens(canonical.c_str());
  if (tokens.empty()) return false;
  const std::string& op = tokens[0];
  std::string dtype = "fp32";
  std::map<std::string, std::string> named;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const size_t eq = tokens[i].find('=');
    if (eq == std::string::npos) {
      dtype = tokens[i];
    } else {
      named[tokens[i].substr(0, eq)] = tokens[i].substr(eq + 1);
    }
  }
  const int tmpl = FindShapeTemplate(op, dtype);
  if (tmpl < 0) return false;
  const ShapeTemplate& t = kShapeTemplates[tmpl];
  std::vector<long long> dims;
  for (int i = 0; i < t.num_dims; ++i) {
    auto it = named.find(t.dims[i]);
    if (it == named.end()) return false;
    dims.push_back(std::atoll(it->second.c_str()));
    named.erase(it);
  }
  return MakeShape(op, dims, dtype, named, out);
}

}  // namespace

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
  // Images made for this launch, and the fills the kernel waits for after
  // the caller's wait list.
  std::vector<cl_mem> images;
  std::vector<cl_event> waits(wait_events, wait_events + num_wait_events);
  const size_t caller_waits = waits.size();
  // Scratch buffers: the cache stays locked until the kernel is enqueued
  // and recorded as their last use, so that launches sharing one wait for
  // each other in the order they were enqueued.
  std::vector<Scratch*> scratch;
  std::unique_lock<std::mutex> scratch_lock;
  for (int a = 0; a < l.num_args; ++a) {
    if (l.args[a].kind == 's') {
      scratch_lock = std::unique_lock<std::mutex>(Scratches().mu);
      break;
    }
  }
  auto value = [&](long long v) { return l.ints != nullptr ? l.ints[v] : v; };
  for (int a = 0; a < l.num_args && err == CL_SUCCESS; ++a) {
    const Arg& arg = l.args[a];
    if (arg.kind == 's') {
      Scratch* s = nullptr;
      err = AcquireScratch(queue, context, l, a, static_cast<size_t>(arg.value),
                           &s);
      if (err != CL_SUCCESS) break;
      cl_mem buffer = s->buffer.get();
      err = clSetKernelArg(kernel, a, sizeof(cl_mem), &buffer);
      if (s->last_use != nullptr &&
          clRetainEvent(s->last_use.get()) == CL_SUCCESS) {
        waits.push_back(s->last_use.get());
      }
      scratch.push_back(s);
    } else if (arg.kind == 'i') {
      const cl_int v = static_cast<cl_int>(value(arg.value));
      err = clSetKernelArg(kernel, a, sizeof(v), &v);
    } else if (arg.kind == 'm' && (arg.when < 0 || value(arg.when) != 0)) {
      cl_mem image = nullptr;
      cl_event ready = nullptr;
      err = MakeImage(
          queue, buffers[arg.value], static_cast<size_t>(value(arg.rows)),
          static_cast<size_t>(value(arg.row_elements)), l.fp16,
          static_cast<cl_uint>(caller_waits),
          caller_waits == 0 ? nullptr : waits.data(), &image, &ready);
      if (image != nullptr) images.push_back(image);
      if (ready != nullptr) waits.push_back(ready);
      if (err == CL_SUCCESS) {
        err = clSetKernelArg(kernel, a, sizeof(cl_mem), &image);
      }
    } else if (arg.kind == 'b' || arg.kind == 'm') {
      err = clSetKernelArg(kernel, a, sizeof(cl_mem), &buffers[arg.value]);
    } else {
      err = clSetKernelArg(kernel, a, sizeof(float), &floats[arg.value]);
    }
  }
  if (err == CL_SUCCESS) {
    const bool local = l.local[0] != 0;
    cl_event done = nullptr;
    err = clEnqueueNDRangeKernel(
        queue, kernel, l.dims, nullptr, l.global, local ? l.local : nullptr,
        static_cast<cl_uint>(waits.size()),
        waits.empty() ? nullptr : waits.data(),
        event != nullptr || !scratch.empty() ? &done : nullptr);
    if (err == CL_SUCCESS) {
      // The launch is its scratch buffers' last use.
      for (Scratch* s : scratch) {
        if (clRetainEvent(done) == CL_SUCCESS) s->last_use.reset(done);
      }
      if (event != nullptr) {
        *event = done;
      } else if (done != nullptr) {
        clReleaseEvent(done);
      }
    }
  }
  clReleaseKernel(kernel);
  // Released now, freed by OpenCL once the commands using them end.
  for (size_t i = caller_waits; i < waits.size(); ++i) clReleaseEvent(waits[i]);
  for (cl_mem image : images) clReleaseMemObject(image);
  return err;
}

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
    const Attr& attr = t.attrs[a];
    auto it = attrs.find(attr.name);
    const std::string value = it == attrs.end() ? attr.values[0] : it->second;
    int v = 0;
    while (v < attr.num_values && value != attr.values[v]) ++v;
    if (v == attr.num_values) return false;
    out->vars[t.num_dims + a] = attr.numbers[v];
  }
  const int dtype_slot = t.num_dims + t.num_attrs;
  for (size_t d = 0; d < kNumDtypeValues; ++d) {
    const DtypeValues& values = kDtypeValues[d];
    if (dtype != values.name) continue;
    out->vars[dtype_slot] = values.fp16;
    out->vars[dtype_slot + 1] = values.element_bytes;
    return true;
  }
  return false;
}

const KernelEntry* FindGemmEntry(cl_device_id device, size_t m, size_t n,
                                 size_t k, const char** match) {
  const std::string workload =
      Canonicalize(("gemm M=" + std::to_string(m) + " N=" + std::to_string(n) +
                    " K=" + std::to_string(k) + " fp32")
                       .c_str());
  if (workload.empty()) return nullptr;
  const KernelEntry* e = FindEntry(device, workload.c_str(), match);
  if (e == nullptr || e->library >= 0 || e->num_buffers != 3 ||
      e->min_buffers != 3 || e->num_floats != 0) {
    return nullptr;
  }
  return e;
}

bool IsFp16(const char* workload) {
  return std::strstr(workload, " fp16") != nullptr;
}

cl_int RunLibraryEntry(cl_command_queue queue, const KernelEntry& e,
                       const cl_mem* buffers, const float* floats,
                       cl_event* event) {
  const bool fp16 = IsFp16(e.workload);
  const bool epilogue = e.source >= 0;
  cl_event call = nullptr;
  cl_int err =
      EnqueueLibraryCall(queue, CallOf(e), buffers, floats, fp16,
                         epilogue || event != nullptr ? &call : nullptr);
  if (err != CL_SUCCESS || !epilogue) {
    if (event != nullptr) *event = err == CL_SUCCESS ? call : nullptr;
    return err;
  }
  const std::string options = e.options;
  const Launch l{
      kSources[e.source], e.kernel,   &options, e.dims, e.global, e.local,
      ArgsOf(e),          e.num_args, nullptr,  fp16};
  err = Enqueue(queue, l, buffers, floats, 1, &call, event);
  clReleaseEvent(call);
  return err;
}

cl_int PrepareShape(cl_device_id device, const Shape& s, ShapeRun* out) {
  const ShapeTemplate& t = TemplateOf(s);
  const Pick pick = FindShape(device, s);
  std::vector<double> vars = VarsFor(s, KnobsOf(pick, s), Limits(device));
  if (t.check(vars.data()) != nullptr) return CL_INVALID_WORK_GROUP_SIZE;
  out->tmpl = &t;
  out->source = kSources[pick.entry ? pick.entry->source : t.default_source];
  out->launch = ShapeLaunch();
  out->fp16 = s.dtype == "fp16";
  t.launch(vars.data(), &out->launch);
  return CL_SUCCESS;
}

}  // namespace internal

std::string CanonicalWorkload(const char* workload) {
  return internal::Canonicalize(workload);
}

std::string DescribeRun(cl_device_id device, const char* workload) {
  const std::string canonical = internal::Canonicalize(workload);
  if (canonical.empty()) return "";
  const internal::KernelEntry* e =
      internal::FindEntry(device, canonical.c_str());
  if (e != nullptr) return internal::KeyOf(*e);
  internal::Shape s;
  if (!internal::ParseShape(canonical, &s)) return "";
  const internal::Pick pick = internal::FindShape(device, s);
  return pick.entry ? internal::kDevices[pick.entry->device].key : "";
}

RunEntry DescribeRunEntry(cl_device_id device, const char* workload) {
  RunEntry out;
  const std::string canonical = internal::Canonicalize(workload);
  if (canonical.empty()) return out;
  const internal::KernelEntry* e =
      internal::FindEntry(device, canonical.c_str());
  if (e == nullptr) return out;
  out.found = true;
  out.device_key = internal::KeyOf(*e);
  out.config = e->config;
  out.kernel = e->kernel;
  out.build_options = e->options;
  out.time_ns = e->time_ns;
  out.table = e->table != nullptr ? e->table : "";
  out.driver_revision = internal::RevisionOf(*e);
  out.driver_version = internal::DriverOf(*e);
  out.driver_match = out.driver_version == internal::DriverVersion(device)
                         ? "exact"
                         : "nearest";
  return out;
}

cl_int Run(cl_command_queue queue, const char* workload, const cl_mem* buffers,
           size_t num_buffers, const float* floats, size_t num_floats,
           cl_event* event) {
  cl_device_id device = nullptr;
  cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(device),
                                     &device, nullptr);
  if (err != CL_SUCCESS) return err;
  const std::string canonical = internal::Canonicalize(workload);
  if (canonical.empty()) return CL_INVALID_VALUE;
  if (const internal::KernelEntry* e =
          internal::FindEntry(device, canonical.c_str())) {
    if (num_buffers > static_cast<size_t>(e->num_buffers) ||
        num_buffers < static_cast<size_t>(e->min_buffers) ||
        num_floats != static_cast<size_t>(e->num_floats)) {
      return CL_INVALID_VALUE;
    }
    // Buffers left out (not read by the workload): null kernel arguments,
    // which OpenCL allows for __global pointers.
    std::vector<cl_mem> all(buffers, buffers + num_buffers);
    all.resize(static_cast<size_t>(e->num_buffers), nullptr);
    buffers = all.data();
    if (e->library >= 0)
      return internal::RunLibraryEntry(queue, *e, buffers, floats, event);
    const std::string options = e->options;
    return internal::Enqueue(queue, internal::LaunchOf(*e, options), buffers,
                             floats, 0, nullptr, event);
  }
  internal::Shape s;
  if (!internal::ParseShape(canonical, &s) ||
      num_buffers != static_cast<size_t>(internal::TemplateOf(s).num_buffers) ||
      num_floats != static_cast<size_t>(internal::TemplateOf(s).num_floats)) {
    return CL_INVALID_VALUE;
  }
  internal::ShapeRun run;
  err = internal::PrepareShape(device, s, &run);
  if (err != CL_SUCCESS) return err;
  return internal::Enqueue(queue, run.AsLaunch(), buffers, floats, 0, nullptr,
                           event);
}

GemmChoice DescribeGemm(cl_device_id device, int m, int n, int k) {
  GemmChoice c;
  c.device_match = "none";
  c.shape_match = "default";
  // An exact entry of the shape, as Gemm() runs it.
  const char* match = nullptr;
  if (const internal::KernelEntry* e = internal::FindGemmEntry(
          device, static_cast<size_t>(m), static_cast<size_t>(n),
          static_cast<size_t>(k), &match)) {
    c.device_key = internal::KeyOf(*e);
    c.device_match = match;
    c.shape_match = "exact";
    c.config = e->config;
    c.build_options = e->options;
    for (int d = 0; d < 2; ++d) {
      c.global[d] = e->global[d];
      c.local[d] = e->local[d];
    }
    return c;
  }
  internal::Shape s;
  if (!internal::MakeShape("gemm", {m, n, k}, "fp32", {}, &s)) return c;
  const internal::ShapeTemplate& t = internal::TemplateOf(s);
  const internal::Pick pick = internal::FindShape(device, s);
  const long long* knobs = internal::KnobsOf(pick, s);
  std::vector<double> vars =
      internal::VarsFor(s, knobs, internal::Limits(device));
  internal::ShapeLaunch launch;
  t.launch(vars.data(), &launch);
  c.device_key = pick.entry ? internal::kDevices[pick.entry->device].key : "";
  c.device_match = pick.device_match;
  c.shape_match = pick.shape_match;
  c.config = internal::ConfigText(t, knobs);
  c.build_options = launch.options;
  for (int d = 0; d < 2; ++d) {
    c.global[d] = launch.global[d];
    c.local[d] = launch.local[d];
  }
  return c;
}

void ReleaseCachedPrograms() {
  {
    internal::ProgramCache& cache = internal::Cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    for (auto& [key, program] : cache.programs) clReleaseProgram(program);
    cache.programs.clear();
  }
  internal::ScratchCache& scratch = internal::Scratches();
  std::lock_guard<std::mutex> lock(scratch.mu);
  scratch.buffers.clear();
}

void ReleaseScratchBuffers(cl_command_queue queue) {
  internal::ScratchCache& scratch = internal::Scratches();
  std::lock_guard<std::mutex> lock(scratch.mu);
  for (auto it = scratch.buffers.begin(); it != scratch.buffers.end();) {
    it = std::get<0>(it->first) == queue ? scratch.buffers.erase(it)
                                         : std::next(it);
  }
}

size_t CachedScratchBytes() {
  internal::ScratchCache& scratch = internal::Scratches();
  std::lock_guard<std::mutex> lock(scratch.mu);
  size_t bytes = 0;
  for (const auto& [key, s] : scratch.buffers) bytes += s.bytes;
  return bytes;
}

int NumTunedEntries() {
  return static_cast<int>(internal::kNumShapeEntries +
                          internal::kNumKernelEntries);
}

int NumTunedEntries(const char* op) {
  int n = 0;
  for (size_t i = 0; i < internal::kNumShapeEntries; ++i) {
    const internal::ShapeEntry& e = internal::kShapeEntries[i];
    n += std::string(internal::kShapeTemplates[e.shape_template].op) == op;
  }
  for (size_t i = 0; i < internal::kNumKernelEntries; ++i) {
    n += std::string(internal::kKernelEntries[i].op) == op;
  }
  return n;
}

}  // namespace tunefleet_tuned
