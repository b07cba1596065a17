// Bridges kernel templates (plain C++) and the wire contract (proto/): turns
// a (template, workload, config) into the MeasureRequest an agent runs, and
// converts workloads, configs and device limits between the two.
#ifndef TUNEFLEET_TRIAL_TRIAL_REQUEST_H_
#define TUNEFLEET_TRIAL_TRIAL_REQUEST_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::trial {

// Everything an agent needs to measure `config` of `tmpl` on `workload`.
// Image arguments become KernelArg.image, a library template's call
// KernelLaunch.library (with its epilogue kernel, if any, in the launch).
tunefleet::v1::MeasureRequest BuildMeasureRequest(
    const templates::KernelTemplate& tmpl, const templates::Workload& workload,
    const templates::KnobValues& config, int64_t trial_id,
    const tunefleet::v1::TimingPolicy& timing);

// A request that times the template's naive reference kernel itself (the
// speed baseline); it verifies against itself.
tunefleet::v1::MeasureRequest BuildReferenceRequest(
    const templates::KernelTemplate& tmpl, const templates::Workload& workload,
    int64_t trial_id, const tunefleet::v1::TimingPolicy& timing);

// The limits templates check, read from an agent's DeviceInfo.
templates::DeviceLimits LimitsFromDeviceInfo(
    const tunefleet::v1::DeviceInfo& info);

// The wire's dtype of a template dtype, and back (DTYPE_UNSPECIFIED reads
// as fp32).
tunefleet::v1::Dtype DtypeToProto(templates::Dtype dtype);
templates::Dtype DtypeFromProto(tunefleet::v1::Dtype dtype);

tunefleet::v1::Workload WorkloadToProto(const templates::Workload& workload);

// Errors: INVALID_ARGUMENT from Workload::Create, naming the bad field.
absl::StatusOr<templates::Workload> WorkloadFromProto(
    const tunefleet::v1::Workload& workload);

// The median of a measurement's per-repeat times (ns): the time a trial is
// ranked and recorded by; 0 for none.
double MedianNs(const google::protobuf::RepeatedField<double>& times_ns);

tunefleet::v1::Config ConfigToProto(const templates::KernelTemplate& tmpl,
                                    const templates::KnobValues& config);

}  // namespace tunefleet::trial

#endif  // TUNEFLEET_TRIAL_TRIAL_REQUEST_H_
