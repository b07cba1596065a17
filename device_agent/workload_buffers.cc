#include "device_agent/workload_buffers.h"

#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"

namespace tunefleet::agent {
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
    if (s.dtype() != "fp32") {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer ", s.name(), " has unsupported dtype '", s.dtype(), "'"));
    }
    if (s.elements() == 0 ||
        s.elements() > std::numeric_limits<uint32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer ", s.name(), " has ", s.elements(),
                       " elements; expected 1 .. 2^32-1"));
    }
    total += s.elements() * sizeof(float);
  }
  if (total > budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffers need ", total, " bytes, over the agent's ",
                     budget, "-byte budget for workload buffers"));
  }
  *total_bytes = total;
  return absl::OkStatus();
}

}  // namespace

WorkloadBuffers::WorkloadBuffers(cl_context context, cl_command_queue queue,
                                 cl_kernel fill_kernel, uint64_t byte_budget,
                                 size_t max_workloads)
    : context_(context),
      queue_(queue),
      fill_kernel_(fill_kernel),
      byte_budget_(byte_budget),
      max_workloads_(max_workloads) {}

absl::StatusOr<WorkloadState*> WorkloadBuffers::Get(
    const std::string& key,
    const google::protobuf::RepeatedPtrField<BufferSpec>& specs) {
  for (auto it = states_.begin(); it != states_.end(); ++it) {
    if (it->key != key) continue;
    if (SameSpecs(it->specs, specs)) {
      states_.splice(states_.begin(), states_, it);
      return &states_.front();
    }
    states_.erase(it);  // same key, other buffers: rebuild below
    break;
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
    ClMem mem(clCreateBuffer(context_, CL_MEM_READ_WRITE,
                             spec.elements() * sizeof(float), nullptr, &err));
    if (err != CL_SUCCESS) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "clCreateBuffer(", spec.name(), ", ", spec.elements() * sizeof(float),
          " bytes): ", ClErrorName(err)));
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

absl::Status WorkloadBuffers::FillUniform(cl_mem mem, uint64_t elements,
                                          uint32_t seed) {
  const cl_uint n = static_cast<cl_uint>(elements);
  cl_int err = clSetKernelArg(fill_kernel_, 0, sizeof(cl_mem), &mem);
  err |= clSetKernelArg(fill_kernel_, 1, sizeof(cl_uint), &n);
  err |= clSetKernelArg(fill_kernel_, 2, sizeof(cl_uint), &seed);
  if (err != CL_SUCCESS) return ClError("fill kernel arguments", err);
  const size_t global = elements;
  err = clEnqueueNDRangeKernel(queue_, fill_kernel_, 1, nullptr, &global,
                               nullptr, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return ClError("fill kernel launch", err);
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::Refill(WorkloadState& state) {
  for (const BufferSpec& spec : state.specs) {
    cl_mem mem = state.buffers.at(spec.name()).get();
    if (spec.output() || spec.fill() == BufferSpec::ZERO ||
        spec.fill() == BufferSpec::FILL_UNSPECIFIED) {
      const float zero = 0.0f;
      cl_int err = clEnqueueFillBuffer(queue_, mem, &zero, sizeof(zero), 0,
                                       spec.elements() * sizeof(float), 0,
                                       nullptr, nullptr);
      if (err != CL_SUCCESS) return ClError("clEnqueueFillBuffer", err);
    } else if (absl::Status s = FillUniform(mem, spec.elements(), spec.seed());
               !s.ok()) {
      return s;
    }
  }
  cl_int err = clFinish(queue_);
  if (err != CL_SUCCESS) return ClError("clFinish after filling inputs", err);
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::PoisonOutputs(WorkloadState& state) {
  const uint32_t nan_bits = 0x7fc00000u;  // quiet NaN
  float nan;
  std::memcpy(&nan, &nan_bits, sizeof(nan));
  for (const BufferSpec& spec : state.specs) {
    if (!spec.output()) continue;
    cl_int err = clEnqueueFillBuffer(
        queue_, state.buffers.at(spec.name()).get(), &nan, sizeof(nan), 0,
        spec.elements() * sizeof(float), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return ClError("poisoning outputs", err);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> WorkloadBuffers::Read(
    WorkloadState& state, const std::string& name) {
  auto it = state.buffers.find(name);
  if (it == state.buffers.end()) {
    return absl::InvalidArgumentError(absl::StrCat("no buffer ", name));
  }
  uint64_t elements = 0;
  for (const BufferSpec& spec : state.specs) {
    if (spec.name() == name) elements = spec.elements();
  }
  std::vector<float> host(elements);
  cl_int err = clEnqueueReadBuffer(queue_, it->second.get(), CL_TRUE, 0,
                                   elements * sizeof(float), host.data(), 0,
                                   nullptr, nullptr);
  if (err != CL_SUCCESS) return ClError("clEnqueueReadBuffer", err);
  return host;
}

}  // namespace tunefleet::agent
