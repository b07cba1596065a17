// The plan format (docs/MODEL_PLAN.md): a model plan (model_plan.h) as two
// files, the plan (steps, tensors, sources, memory plan) and its weights
// (every constant's floats), each with a header and a checksum. Plain
// C++17 (copied into emitted libraries); integers and floats are
// little-endian, whatever the host.
//
// Decoding refuses, with a message saying which:
// - a file that is not a plan (or weights) file: kPlanNotAPlan;
// - a file of another format version: kPlanVersion;
// - a file shorter than its header says (a truncated copy): kPlanTruncated;
// - a checksum that does not match, or indices out of range: kPlanCorrupt;
// - a plan of another model (SHA-256 of the ONNX bytes): kPlanOtherModel;
// - a plan of another device key: kPlanOtherDevice;
// - weights of another plan: kPlanWeightsMismatch.
#ifndef TUNEFLEET_MODEL_RUNTIME_PLAN_FORMAT_H_
#define TUNEFLEET_MODEL_RUNTIME_PLAN_FORMAT_H_

#include <cstdint>
#include <string>

#include "model_plan.h"

namespace tunefleet_tuned {

// Status codes of plans and models (Model's calls return them, as cl_int,
// beside OpenCL's own codes). 0 is success.
inline constexpr int32_t kPlanUnreadable = -3001;   // the file cannot be read
inline constexpr int32_t kPlanNotAPlan = -3002;     // wrong magic bytes
inline constexpr int32_t kPlanVersion = -3003;      // another format version
inline constexpr int32_t kPlanTruncated = -3004;    // shorter than its length
inline constexpr int32_t kPlanCorrupt = -3005;      // checksum or contents
inline constexpr int32_t kPlanOtherModel = -3006;   // another model's plan
inline constexpr int32_t kPlanOtherDevice = -3007;  // another device key
inline constexpr int32_t kPlanWeightsMismatch =
    -3008;  // another plan's weights

// What a decoded plan must match; an empty field is not checked.
struct PlanExpectations {
  std::string model_sha256;  // 64 hex digits (any case)
  std::string device_key;
};

// The 64-bit FNV-1a hash of `size` bytes (the files' checksum).
uint64_t Fnv1a64(const void* data, size_t size);

// The two files of `plan`: *plan_file (everything but the weights blob)
// and *weights_file (plan.weights with its own header).
void EncodePlan(const Plan& plan, std::string* plan_file,
                std::string* weights_file);

// The header of a plan file alone (for choosing among plans and for
// messages); checks magic, version, length and checksum. Returns 0 or a
// code above with the reason in *error.
int32_t DecodePlanHeader(const std::string& plan_file, PlanHeader* out,
                         std::string* error);

// The plan of the two files, checked as the header of this file says, with
// `weights_file` checked against the plan. Returns 0 or a code above with
// the reason in *error ("plan file: format version 2; this runtime reads
// version 1: emit the plan again").
int32_t DecodePlan(const std::string& plan_file,
                   const std::string& weights_file,
                   const PlanExpectations& expect, Plan* out,
                   std::string* error);

// Reads a whole file into *out. Returns 0, or kPlanUnreadable with the
// reason in *error.
int32_t ReadWholeFile(const std::string& path, std::string* out,
                      std::string* error);

}  // namespace tunefleet_tuned

#endif  // TUNEFLEET_MODEL_RUNTIME_PLAN_FORMAT_H_
