// Device buffers of the workloads an agent is measuring, generated on the
// device from seeds, the images kernels read them through (image_args.h)
// and the cached reference output of each. Trials of the same workload
// reuse them all.
#ifndef TUNEFLEET_MEASURE_WORKLOAD_BUFFERS_H_
#define TUNEFLEET_MEASURE_WORKLOAD_BUFFERS_H_

#include <list>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "measure/image_args.h"
#include "opencl/opencl.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::measure {

// Bytes per element of a buffer dtype (fp32: 4, fp16: 2); 0 if unknown.
size_t ElementBytes(tunefleet::v1::Dtype dtype);

// IEEE 754 binary16 to binary32, exactly (subnormals, infinities, NaNs).
float HalfToFloat(uint16_t half);

// The buffers of one workload, their images and its reference outputs
// (host copies).
struct WorkloadState {
  std::string key;
  std::vector<tunefleet::v1::BufferSpec> specs;
  std::map<std::string, opencl::ClMem> buffers;
  // Made on first use by a launch (Measurer); destroyed before the buffers.
  std::map<ImageKey, WorkloadImage> images;
  uint64_t bytes = 0;         // device bytes of the buffers and images
  std::string reference_key;  // empty until the reference has run
  std::map<std::string, std::vector<float>> reference_outputs;
};

// Keeps the few most recently used workloads within a byte budget. Not
// thread-safe: owned by one measurement thread.
class WorkloadBuffers {
 public:
  // `fill_float` and `fill_half` are tunefleet_fill_uniform and
  // tunefleet_fill_uniform_half of fill.cl, owned by the caller.
  WorkloadBuffers(cl_context context, cl_command_queue queue,
                  cl_kernel fill_float, cl_kernel fill_half,
                  uint64_t byte_budget, size_t max_workloads);

  // The state for `key` with these buffer specs: reused when present with
  // the same specs, else allocated and filled (a state of the same key with
  // other specs stays, least recently used first out). Errors: INVALID_ARGUMENT
  // for bad specs (zero elements, unknown dtype, duplicate names, over budget),
  // RESOURCE_EXHAUSTED / INTERNAL when allocation or filling fails.
  absl::StatusOr<WorkloadState*> Get(
      const std::string& key,
      const google::protobuf::RepeatedPtrField<tunefleet::v1::BufferSpec>&
          specs);

  // Counts `bytes` more device memory (an image) to `state`, the most
  // recently used workload, evicting least recently used others until all
  // fit the budget. Errors: INVALID_ARGUMENT when `state` alone would be
  // over the budget (nothing is evicted then).
  absl::Status Reserve(WorkloadState& state, uint64_t bytes);

  // The spec of buffer `name` of `state`, or null.
  static const tunefleet::v1::BufferSpec* FindSpec(const WorkloadState& state,
                                                   const std::string& name);

  // Regenerates the inputs of `state` from their seeds (after a kernel that
  // may have scribbled on them). Errors: INTERNAL on a CL failure.
  absl::Status Refill(WorkloadState& state);

  // Fills every output buffer with quiet NaNs, so a kernel that skips an
  // element cannot pass verification with a stale value.
  absl::Status PoisonOutputs(WorkloadState& state);

  // Copies an output buffer to the host as floats (fp16 buffers are
  // converted). Errors: INTERNAL on a CL failure.
  absl::StatusOr<std::vector<float>> Read(WorkloadState& state,
                                          const std::string& name);

 private:
  absl::Status FillUniform(cl_mem mem, const tunefleet::v1::BufferSpec& spec);
  // Fills with one value, given as its fp32 and fp16 bit patterns.
  absl::Status FillPattern(cl_mem mem, const tunefleet::v1::BufferSpec& spec,
                           uint32_t f32_bits, uint16_t f16_bits);

  cl_context context_;
  cl_command_queue queue_;
  cl_kernel fill_float_;
  cl_kernel fill_half_;
  uint64_t byte_budget_;
  size_t max_workloads_;
  std::list<WorkloadState> states_;  // most recently used first
};

}  // namespace tunefleet::measure

#endif  // TUNEFLEET_MEASURE_WORKLOAD_BUFFERS_H_
