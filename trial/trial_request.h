// Bridges kernel templates (plain C++) and the wire contract (proto/): turns
// a (template, workload, config) into the MeasureRequest an agent runs, and
// converts workloads, configs and device limits between the two.
#ifndef TUNEFLEET_TRIAL_TRIAL_REQUEST_H_
#define TUNEFLEET_TRIAL_TRIAL_REQUEST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kernels_templates/kernel_template.h"
#include "kernels_templates/workload.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::trial {

// KernelLaunch.source_hash of `source`: its 64-bit FNV-1a as 16 hex digits
// (base/hash.h), the key agents cache sources under (Hello.source_cache).
std::string SourceHash(absl::string_view source);

// Everything an agent needs to measure `config` of `tmpl` on `workload`.
// Image arguments become KernelArg.image, a library template's call
// KernelLaunch.library (with its epilogue kernel, if any, in the launch).
tunefleet::v1::MeasureRequest BuildMeasureRequest(
    const templates::KernelTemplate& tmpl, const templates::Workload& workload,
    const templates::KnobValues& config, int64_t trial_id,
    const tunefleet::v1::TimingPolicy& timing);

// Sources left out of requests, by their KernelLaunch.source_hash.
using SourceTexts = std::map<std::string, std::string, std::less<>>;

// A request whose launches may name their sources by hash alone
// (KernelLaunch.source empty, source_hash set), and the texts of those
// sources, shared by the requests of a job: the sender fills a source in
// only where the agent lacks it (server/agent_session.h), so the text is
// not copied per trial.
struct LeanRequest {
  tunefleet::v1::MeasureRequest request;
  std::shared_ptr<const SourceTexts> sources;  // never null
};

// Fills in the sources of `request`'s kernel and reference launches that
// name theirs by hash alone, from `sources`; a hash not there stays as it
// is.
void FillSources(const SourceTexts& sources,
                 tunefleet::v1::MeasureRequest* request);

// The provenance hash of what an agent builds for `launch` (issue 39,
// docs/BUNDLES.md): SHA-256 (FIPS 180-4) as 64 lowercase hex digits over
// "tunefleet-kernel-v1\0" SOURCE "\0" BUILD_OPTIONS "\0" LIBRARY "\0"
// ROUTINE, SOURCE being the launch's OpenCL C text (from `sources` by its
// source_hash where the launch names it by hash alone; "" for a library
// call without an epilogue). Two trials with the same hash ran the same
// program.
std::string KernelSha256(const tunefleet::v1::KernelLaunch& launch,
                         const SourceTexts* sources = nullptr);

// Builds the MeasureRequests of one job: what is the same for every trial
// of (template, workload, timing) -- the workload key, the buffers, the
// verification with its reference key (an FNV-1a hash of the reference
// source) and the timing policy -- is built once, so a trial costs only
// its kernel launch, and the kernel source's hash is computed once per
// distinct source (a template's source is usually the same for every
// config; the knobs go in build options). Equivalent to
// BuildMeasureRequest(). Thread-safe; `tmpl` must outlive it.
class MeasureRequestBuilder {
 public:
  MeasureRequestBuilder(const templates::KernelTemplate& tmpl,
                        templates::Workload workload,
                        const tunefleet::v1::TimingPolicy& timing);

  // The request for `config` under `trial_id`.
  tunefleet::v1::MeasureRequest Build(const templates::KnobValues& config,
                                      int64_t trial_id) const;
  // The same request with its sources left out (named by hash) and held
  // in LeanRequest::sources; FillSources() of the two gives Build()'s.
  LeanRequest BuildLean(const templates::KnobValues& config,
                        int64_t trial_id) const;

 private:
  // SourceHash(source), remembered for the first kMaxHashedSources
  // distinct sources (compared by content), whose texts are then in
  // sources_ (`kept` true).
  std::string HashOf(absl::string_view source, bool* kept = nullptr) const;

  static constexpr size_t kMaxHashedSources = 16;
  const templates::KernelTemplate& tmpl_;
  const templates::Workload workload_;
  mutable absl::Mutex mu_;
  // (source, its hash).
  mutable std::vector<std::pair<std::string, std::string>> hashes_
      ABSL_GUARDED_BY(mu_);
  // Every field but trial_id and kernel.
  tunefleet::v1::MeasureRequest shared_;
  // shared_ without the reference's source text.
  tunefleet::v1::MeasureRequest shared_lean_;
  // The reference's and the remembered kernel sources' texts; replaced
  // (copy on write) when a kernel source is added.
  mutable std::shared_ptr<const SourceTexts> sources_ ABSL_GUARDED_BY(mu_);
};

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
// `op`, when set and of the workload's op, is used in place of the
// registered ops (a user template's new op before its job is accepted).
absl::StatusOr<templates::Workload> WorkloadFromProto(
    const tunefleet::v1::Workload& workload,
    const templates::OpSpec* op = nullptr);

// The median of a measurement's per-repeat times (ns): the time a trial is
// ranked and recorded by; 0 for none.
double MedianNs(const google::protobuf::RepeatedField<double>& times_ns);

tunefleet::v1::Config ConfigToProto(const templates::KernelTemplate& tmpl,
                                    const templates::KnobValues& config);

}  // namespace tunefleet::trial

#endif  // TUNEFLEET_TRIAL_TRIAL_REQUEST_H_
