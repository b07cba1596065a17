#include "device_agent/model_run_handler.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/subprocess.h"
#include "device_agent/child_process.h"
#include "kernel_policy/build_options.h"
#include "kernel_policy/source_check.h"
#include "model_run/model_runner.h"
#include "model_run_remote/run_messages.h"
#include "model_runtime/plan_format.h"

namespace tunefleet::device_agent {
namespace {

constexpr int kRequestFd = 3;  // the model-run process reads here
constexpr int kResultFd = 4;   // and writes here
constexpr uint32_t kDefaultTimeoutMs = 600000;

tunefleet::v1::RunModelResult Failed(absl::StatusCode code,
                                     const std::string& message) {
  return model_run_remote::ToProto(absl::Status(code, message));
}

// A plan's kernels are a tuner's code, as a trial's are: the agent compiles
// them only under the policy it applies to trials (kernel_policy/: no
// #include, no file-reading pragma, build options from the allow-list).
// The plan is decoded here only for its sources; the runner checks the
// rest (model, key, version, weights) with the runtime's messages.
absl::Status CheckPlanPolicy(const model_run::RunRequest& run) {
  tunefleet_tuned::Plan plan;
  std::string error;
  if (tunefleet_tuned::DecodePlan(run.plan_file, run.weights_file,
                                  {run.model_sha256, run.device_key}, &plan,
                                  &error) != 0) {
    return absl::OkStatus();  // refused by the runner, with its message
  }
  for (size_t i = 0; i < plan.sources.size(); ++i) {
    if (static_cast<int32_t>(i) == plan.image_pack_source) continue;
    if (absl::Status s = kernel_policy::CheckKernelSource(plan.sources[i]);
        !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan source ", i, ": ", s.message()));
    }
  }
  for (const tunefleet_tuned::PlanStep& step : plan.steps) {
    for (const tunefleet_tuned::PlanCommand& c : step.commands) {
      if (c.kind != tunefleet_tuned::PlanCommand::kKernel) continue;
      if (absl::Status s = kernel_policy::CheckBuildOptions(c.build_options);
          !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("plan kernel ", c.kernel_name, ": ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

int RunModelRunMain(int argc, char** argv) {
  int platform = 0, device = 0;
  if (std::optional<int> exit_code = StartChild(
          argc, argv, /*more_arguments=*/false, &platform, &device)) {
    return *exit_code;
  }
  absl::StatusOr<std::string> bytes =
      base::ReadToEof(kRequestFd, base::Deadline::max());
  tunefleet::v1::RunModelRequest request;
  if (!bytes.ok() || !request.ParseFromString(*bytes)) return 2;
  tunefleet::v1::RunModelResult result;
  absl::StatusOr<model_run::RunRequest> run =
      model_run_remote::FromProto(request);
  if (!run.ok()) {
    result = model_run_remote::ToProto(run.status());
  } else if (absl::Status policy = CheckPlanPolicy(*run); !policy.ok()) {
    result = model_run_remote::ToProto(policy);
  } else {
    absl::StatusOr<std::unique_ptr<model_run::ModelRunner>> runner =
        model_run::OpenLocalRunner(platform, device);
    if (!runner.ok()) {
      result = model_run_remote::ToProto(absl::UnavailableError(
          absl::StrCat("cannot open OpenCL device ", device, " of platform ",
                       platform, ": ", runner.status().message())));
    } else {
      result = model_run_remote::ToProto((*runner)->Run(*run));
    }
  }
  result.set_run_id(request.run_id());
  return base::WriteAll(kResultFd, result.SerializeAsString()) ? 0 : 1;
}

tunefleet::v1::RunModelResult ModelRunHandler::Run(
    const tunefleet::v1::RunModelRequest& request) const {
  tunefleet::v1::RunModelResult result = [&] {
    int requests[2], results[2];
    if (pipe2(requests, O_CLOEXEC) != 0) {
      return Failed(absl::StatusCode::kInternal, "pipe");
    }
    base::UniqueFd request_read(requests[0]), request_write(requests[1]);
    if (pipe2(results, O_CLOEXEC) != 0) {
      return Failed(absl::StatusCode::kInternal, "pipe");
    }
    base::UniqueFd result_read(results[0]), result_write(results[1]);
    base::Subprocess::Options spawn;
    spawn.fds = {{kRequestFd, request_read.get()},
                 {kResultFd, result_write.get()}};
    absl::StatusOr<base::Subprocess> child = base::Subprocess::Spawn(
        {options_.executable, kModelRunFlag, std::to_string(options_.platform),
         std::to_string(options_.device)},
        spawn);
    if (!child.ok()) {
      return Failed(absl::StatusCode::kUnavailable,
                    absl::StrCat("the model-run process did not start: ",
                                 child.status().message()));
    }
    // Only the child holds these ends now: its exit ends our reads.
    request_read.Reset();
    result_write.Reset();
    const uint32_t timeout_ms =
        request.timeout_ms() > 0 ? request.timeout_ms() : kDefaultTimeoutMs;
    const base::Deadline deadline = base::DeadlineIn(timeout_ms);
    // A child that died early leaves the write short (EPIPE: SIGPIPE is
    // ignored by the agent); its exit status then says why.
    (void)base::WriteAll(request_write.get(), request.SerializeAsString());
    request_write.Reset();
    absl::StatusOr<std::string> bytes =
        base::ReadToEof(result_read.get(), deadline);
    if (!bytes.ok()) {
      const base::ExitStatus how = child->Kill();
      return absl::IsDeadlineExceeded(bytes.status())
                 ? Failed(absl::StatusCode::kDeadlineExceeded,
                          absl::StrCat("the model run did not finish within ",
                                       timeout_ms,
                                       " ms; its process was "
                                       "killed (",
                                       how.ToString(), ")"))
                 : Failed(absl::StatusCode::kUnavailable,
                          absl::StrCat("reading the model run's result: ",
                                       bytes.status().message()));
    }
    absl::StatusOr<base::ExitStatus> exit = child->Wait(deadline);
    if (!exit.ok()) {
      child->Kill();
      return Failed(absl::StatusCode::kDeadlineExceeded,
                    "the model-run process did not exit after its result");
    }
    tunefleet::v1::RunModelResult r;
    if (!exit->success() || !r.ParseFromString(*bytes) || bytes->empty()) {
      return Failed(
          absl::StatusCode::kUnavailable,
          absl::StrCat("the model-run process ended with ", exit->ToString(),
                       exit->signaled ? " (a driver or kernel crash?)" : "",
                       " without a result; the agent goes on"));
    }
    return r;
  }();
  result.set_run_id(request.run_id());
  return result;
}

}  // namespace tunefleet::device_agent
