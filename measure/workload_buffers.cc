#include "measure/workload_buffers.h"

#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"

namespace tunefleet::measure {
namespace {

using tunefleet::v1::BufferSpec;

bool SameSpecs(const std::vector<BufferSpec>& a,
               const google::protobuf::RepeatedPtrField<BufferSpec>& b) {
  if (a.size() != static_cast<size_t>(b.size())) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

absl::Status CheckSpecs(
    const google::protobuf::RepeatedPtrField<BufferSpec>& specs,
    uint64_t budget, uint64_t* total_bytes) {
  std::set<std::string> names;
  uint64_t total = 0;
  for (const BufferSpec& s : specs) {
    if (s.name().empty() || !names.insert(s.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer name '", s.name(), "' is empty or repeated"));
    }
    if (ElementBytes(s.dtype()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", s.name(), " has unsupported dtype ", s.dtype()));
    }
    if (s.elements() == 0 ||
        s.elements() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", s.name(), " has ", s.elements(),
                       " elements; expected 1 .. 2^32-1"));
    }
    total += s.elements() * ElementBytes(s.dtype());
  }
  if (total > budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffers need ", total, " bytes, over the agent's ",
                     budget, "-byte budget for workload buffers"));
  }
  *total_bytes = total;
  return absl::OkStatus();
}

// An element of value `value` in the buffer's dtype, as fill pattern bytes.
std::vector<unsigned char> Pattern(tunefleet::v1::Dtype dtype,
                                   uint32_t f32_bits, uint16_t f16_bits) {
  std::vector<unsigned char> p(ElementBytes(dtype));
  if (p.size() == 2) {
    std::memcpy(p.data(), &f16_bits, 2);
  } else {
    std::memcpy(p.data(), &f32_bits, 4);
  }
  return p;
}

}  // namespace

size_t ElementBytes(tunefleet::v1::Dtype dtype) {
  if (dtype == tunefleet::v1::DTYPE_FP32) return 4;
  if (dtype == tunefleet::v1::DTYPE_FP16) return 2;
  return 0;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: normalise the mantissa.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | ((112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

WorkloadBuffers::WorkloadBuffers(cl_context context, cl_command_queue queue,
                                 cl_kernel fill_float, cl_kernel fill_half,
                                 uint64_t byte_budget, size_t max_workloads)
    : context_(context),
      queue_(queue),
      fill_float_(fill_float),
      fill_half_(fill_half),
      byte_budget_(byte_budget),
      max_workloads_(max_workloads) {}

absl::StatusOr<WorkloadState*> WorkloadBuffers::Get(
    const std::string& key,
    const google::protobuf::RepeatedPtrField<BufferSpec>& specs) {
  // A workload may come with other buffers (another template's scratch,
  // say): each set is a state of its own, so jobs of two templates on one
  // shape do not reallocate each other's buffers in turn.
  for (auto it = states_.begin(); it != states_.end(); ++it) {
    if (it->key == key && SameSpecs(it->specs, specs)) {
      states_.splice(states_.begin(), states_, it);
      return &states_.front();
    }
  }
  uint64_t bytes = 0;
  if (absl::Status s = CheckSpecs(specs, byte_budget_, &bytes); !s.ok()) {
    return s;
  }
  // Evict least recently used workloads until the new one fits.
  uint64_t used = 0;
  for (const WorkloadState& s : states_) used += s.bytes;
  while (!states_.empty() &&
         (states_.size() >= max_workloads_ || used + bytes > byte_budget_)) {
    used -= states_.back().bytes;
    states_.pop_back();
  }
  WorkloadState state;
  state.key = key;
  state.specs.assign(specs.begin(), specs.end());
  state.bytes = bytes;
  for (const BufferSpec& spec : specs) {
    cl_int err = CL_SUCCESS;
    const size_t bytes = spec.elements() * ElementBytes(spec.dtype());
    opencl::ClMem mem(
        clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err));
    if (err != CL_SUCCESS) {
      return absl::ResourceExhaustedError(
          absl::StrCat("clCreateBuffer(", spec.name(), ", ", bytes,
                       " bytes): ", opencl::ClErrorName(err)));
    }
    state.buffers.emplace(spec.name(), std::move(mem));
  }
  states_.push_front(std::move(state));
  if (absl::Status s = Refill(states_.front()); !s.ok()) {
    states_.pop_front();
    return s;
  }
  return &states_.front();
}

absl::Status WorkloadBuffers::Reserve(WorkloadState& state, uint64_t bytes) {
  if (state.bytes + bytes > byte_budget_) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", state.key, " needs ", state.bytes + bytes,
                     " bytes with its images, over the agent's ", byte_budget_,
                     "-byte budget for workload buffers"));
  }
  uint64_t used = 0;
  for (const WorkloadState& s : states_) used += s.bytes;
  while (used + bytes > byte_budget_ && !states_.empty() &&
         &states_.back() != &state) {
    used -= states_.back().bytes;
    states_.pop_back();
  }
  state.bytes += bytes;
  return absl::OkStatus();
}

const BufferSpec* WorkloadBuffers::FindSpec(const WorkloadState& state,
                                            const std::string& name) {
  for (const BufferSpec& s : state.specs) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

absl::Status WorkloadBuffers::FillUniform(cl_mem mem, const BufferSpec& spec) {
  cl_kernel kernel =
      spec.dtype() == tunefleet::v1::DTYPE_FP16 ? fill_half_ : fill_float_;
  const cl_uint n = static_cast<cl_uint>(spec.elements());
  const cl_uint seed = spec.seed();
  cl_int err = clSetKernelArg(kernel, 0, sizeof(cl_mem), &mem);
  err |= clSetKernelArg(kernel, 1, sizeof(cl_uint), &n);
  err |= clSetKernelArg(kernel, 2, sizeof(cl_uint), &seed);
  if (err != CL_SUCCESS) return opencl::ClError("fill kernel arguments", err);
  const size_t global = spec.elements();
  err = clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, nullptr, 0,
                               nullptr, nullptr);
  if (err != CL_SUCCESS) return opencl::ClError("fill kernel launch", err);
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::FillPattern(cl_mem mem, const BufferSpec& spec,
                                          uint32_t f32_bits,
                                          uint16_t f16_bits) {
  const std::vector<unsigned char> pattern =
      Pattern(spec.dtype(), f32_bits, f16_bits);
  const cl_int err = clEnqueueFillBuffer(
      queue_, mem, pattern.data(), pattern.size(), 0,
      spec.elements() * pattern.size(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return opencl::ClError("clEnqueueFillBuffer", err);
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::Refill(WorkloadState& state) {
  for (const BufferSpec& spec : state.specs) {
    cl_mem mem = state.buffers.at(spec.name()).get();
    const bool zero = spec.output() || spec.fill() == BufferSpec::ZERO ||
                      spec.fill() == BufferSpec::FILL_UNSPECIFIED;
    absl::Status s =
        zero ? FillPattern(mem, spec, 0, 0) : FillUniform(mem, spec);
    if (!s.ok()) return s;
  }
  cl_int err = clFinish(queue_);
  if (err != CL_SUCCESS)
    return opencl::ClError("clFinish after filling inputs", err);
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::PoisonOutputs(WorkloadState& state) {
  for (const BufferSpec& spec : state.specs) {
    if (!spec.output()) continue;
    // Quiet NaNs of fp32 and fp16.
    absl::Status s = FillPattern(state.buffers.at(spec.name()).get(), spec,
                                 0x7fc00000u, 0x7e00u);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> WorkloadBuffers::Read(
    WorkloadState& state, const std::string& name) {
  auto it = state.buffers.find(name);
  const BufferSpec* spec = nullptr;
  for (const BufferSpec& s : state.specs) {
    if (s.name() == name) spec = &s;
  }
  if (it == state.buffers.end() || spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no buffer ", name));
  }
  const size_t bytes = ElementBytes(spec->dtype());
  std::vector<unsigned char> raw(spec->elements() * bytes);
  cl_int err = clEnqueueReadBuffer(queue_, it->second.get(), CL_TRUE, 0,
                                   raw.size(), raw.data(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return opencl::ClError("clEnqueueReadBuffer", err);
  std::vector<float> host(spec->elements());
  if (bytes == 2) {
    for (size_t i = 0; i < host.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, raw.data() + 2 * i, 2);
      host[i] = HalfToFloat(h);
    }
  } else {
    std::memcpy(host.data(), raw.data(), raw.size());
  }
  return host;
}

}  // namespace tunefleet::measure
