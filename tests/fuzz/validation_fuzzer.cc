// libFuzzer target: request validation (validation/validation.h). The
// first byte picks what the rest is read as:
//   0: a SubmitJobRequest protobuf, checked as JobManager::Prepare checks it
//      (minus store and registry), then its workload run through the
//      template's descriptor (buffers, launches, FLOPs) as a job would;
//   1: an agent's Hello;  2: an agent's Measurement;
//   3: QueryRecords, WatchJob, CancelJob and ListJobs requests;
//   4: a Config against the gemm template's space;
//   5: a canonical workload string ("gemm M=8 N=8 K=8 fp32").
// Nothing may crash, leak or hit undefined behaviour; refusals are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/timing_policy.h"
#include "google/protobuf/stubs/logging.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "kernels_templates/workload.h"
#include "tests/support/device_limits.h"
#include "trial/trial_request.h"
#include "validation/validation.h"

namespace {

using namespace tunefleet;  // NOLINT: a fuzz target's brevity

templates::DeviceLimits FuzzDevice() {
  // Work-groups of up to 256, 32 KiB of local memory, 4 compute units.
  templates::DeviceLimits l = tunefleet::testing::GpuLimits(256, 32, 4);
  l.max_clock_mhz = 1000;
  l.preferred_vector_width_float = 4;
  return l;
}

// What a job does with a checked task: buffers, FLOPs, the reference
// launch and the launch of the first config that passes the constraints.
void RunTask(const templates::KernelTemplate& t, const templates::Workload& w) {
  const templates::DeviceLimits limits = FuzzDevice();
  if (!t.CheckWorkload(w, limits).ok()) return;
  if (!validation::ValidateTask(t, w).ok()) return;
  (void)t.Flops(w);
  (void)t.Bytes(w);
  (void)t.ReferenceLaunch(w);
  templates::KnobValues config;
  for (const templates::Knob& k : t.knobs()) config.push_back(k.values.front());
  if (t.CheckConfig(config, w, limits).ok()) {
    tunefleet::v1::MeasureRequest r = trial::BuildMeasureRequest(
        t, w, config, 1, contract::DefaultTimingPolicy());
    (void)r.ByteSizeLong();
    (void)t.DerivedFeatures(config, w, limits);
  }
}

void Submit(const tunefleet::v1::SubmitJobRequest& request) {
  if (!validation::ValidateSubmitJobRequest(request).ok()) return;
  (void)validation::ValidateTimingPolicy(request);
  // A user's template is parsed, not registered: registering would make
  // one input's outcome depend on the inputs before it.
  std::unique_ptr<templates::SpecTemplate> spec;
  if (request.has_template_spec()) {
    auto parsed = templates::SpecTemplate::Parse(
        request.template_spec().spec(), request.template_spec().format(),
        request.template_spec().source());
    if (!parsed.ok()) return;
    spec = *std::move(parsed);
  }
  absl::StatusOr<templates::Workload> w =
      trial::WorkloadFromProto(request.workload());
  if (!w.ok()) return;
  if (spec != nullptr) {
    if (spec->op() == w->op()) RunTask(*spec, *w);
    return;
  }
  auto t = templates::FindTemplateFor(*w, request.template_name());
  if (t.ok()) RunTask(**t, *w);
}

void Config(const tunefleet::v1::Config& config) {
  auto t = templates::FindTemplate("gemm", "");
  if (!t.ok()) return;
  absl::StatusOr<templates::KnobValues> v =
      validation::ValidateConfig(**t, config);
  if (!v.ok()) return;
  auto w = templates::Workload::Parse("gemm", "M=33,N=17,K=9");
  if ((*t)->CheckConfig(*v, *w, FuzzDevice()).ok()) (void)(*t)->Launch(*v, *w);
}

// Runs `check` on the bytes read as a Message, when they parse as one.
template <typename Message, typename Check>
void CheckIfParsed(const char* bytes, int n, Check check) {
  Message m;
  if (m.ParseFromArray(bytes, n)) (void)check(m);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in string fields is a refusal, not news.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t kind = data[0];
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  const int n = static_cast<int>(size - 1);
  switch (kind % 6) {
    case 0: {
      tunefleet::v1::SubmitJobRequest r;
      if (r.ParseFromArray(bytes, n)) Submit(r);
      break;
    }
    case 1: {
      tunefleet::v1::Hello h;
      if (h.ParseFromArray(bytes, n)) {
        if (validation::ValidateHello(h).ok()) {
          (void)trial::LimitsFromDeviceInfo(h.device());
        }
      }
      break;
    }
    case 2: {
      tunefleet::v1::Measurement r;
      if (r.ParseFromArray(bytes, n)) {
        (void)validation::CheckedMeasurement(r);
      }
      break;
    }
    case 3:
      CheckIfParsed<tunefleet::v1::QueryRecordsRequest>(
          bytes, n, validation::ValidateQueryRecordsRequest);
      CheckIfParsed<tunefleet::v1::WatchJobRequest>(
          bytes, n, validation::ValidateWatchJobRequest);
      CheckIfParsed<tunefleet::v1::CancelJobRequest>(
          bytes, n, validation::ValidateCancelJobRequest);
      CheckIfParsed<tunefleet::v1::ListJobsRequest>(
          bytes, n, validation::ValidateListJobsRequest);
      break;
    case 4: {
      tunefleet::v1::Config c;
      if (c.ParseFromArray(bytes, n)) Config(c);
      break;
    }
    case 5: {
      absl::StatusOr<templates::Workload> w =
          templates::Workload::ParseCanonical(std::string(bytes, n));
      if (w.ok()) {
        auto t = templates::FindTemplateFor(*w, "");
        if (t.ok()) RunTask(**t, *w);
      }
      break;
    }
  }
  return 0;
}
