#include "device_agent/measure_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "contract/timing_policy.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "kernels_templates/task.h"
#include "measure/measurer.h"
#include "nlohmann/json.hpp"
#include "opencl/build_inspect.h"
#include "trial/trial_request.h"

namespace tunefleet::device_agent {

CLI::App* AddMeasureCommand(CLI::App& app, MeasureOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "build, verify and time one config on this machine's OpenCL device");
  cmd->add_option("--op", o.op, "op (default: gemm, or a spec template's)");
  cmd->add_option("--shape", o.shape, "shape, e.g. M=512,N=512,K=512")
      ->required();
  cmd->add_option("--template", o.template_name,
                  "template name, or a template spec file (.toml/.json)");
  cmd->add_option("--config", o.config,
                  "knob values KNOB=V,...; 'reference' for the naive kernel")
      ->required();
  cmd->add_option("--platform", o.platform, "OpenCL platform index");
  cmd->add_option("--device", o.device, "OpenCL device index");
  cmd->add_flag("--json", o.json, "print a JSON object on stdout");
  cmd->add_flag("--inspect", o.inspect,
                "also build the kernel once more and print the compiler's "
                "log, resource use (private/local bytes, work-group limit) "
                "and, for PTX, counts of vector loads, spills and FMAs");
  cmd->add_option("--binary-out", o.binary_out,
                  "write the program binary the driver returns (PTX on "
                  "NVIDIA) to this file");
  cmd->add_option("--extra-options", o.extra_options,
                  "appended to the template's build options, e.g. "
                  "-cl-nv-maxrregcount=128 (NVIDIA) or -cl-fast-relaxed-math");
  return cmd;
}

namespace {

nlohmann::json BuildReportJson(const opencl::BuildReport& r,
                               const opencl::PtxCounts& p) {
  return {{"options", r.options},
          {"build_log", r.build_log},
          {"binary_bytes", r.binary.size()},
          {"work_group_size", r.work_group_size},
          {"private_mem_bytes", r.private_mem_bytes},
          {"local_mem_bytes", r.local_mem_bytes},
          {"preferred_multiple", r.preferred_multiple},
          {"compile_ms", r.compile_ms},
          {"ptx",
           {{"ld_shared_v4", p.shared_loads_v4},
            {"ld_shared_v2", p.shared_loads_v2},
            {"ld_shared", p.shared_loads},
            {"ld_global_v4", p.global_loads_v4},
            {"ld_global", p.global_loads},
            {"local_accesses", p.local_accesses},
            {"fma", p.fmas},
            {"barriers", p.barriers}}}};
}

void PrintBuildReport(const opencl::BuildReport& r,
                      const opencl::PtxCounts& p) {
  std::cout << absl::StrFormat(
      "build: %.0f ms, work-group limit %d, private %d B, local %d B, "
      "preferred multiple %d, binary %d B\n",
      r.compile_ms, r.work_group_size, r.private_mem_bytes, r.local_mem_bytes,
      r.preferred_multiple, r.binary.size());
  if (p.fmas > 0) {
    std::cout << absl::StrFormat(
        "ptx: ld.shared v4 %d, v2 %d, scalar %d; ld.global v4 %d, other %d; "
        "local (spill) %d; fma %d; barriers %d\n",
        p.shared_loads_v4, p.shared_loads_v2, p.shared_loads, p.global_loads_v4,
        p.global_loads, p.local_accesses, p.fmas, p.barriers);
  }
  if (!r.build_log.empty()) std::cout << "build log:\n" << r.build_log << "\n";
}

// Builds the request's kernel on its own context for --inspect and
// --binary-out; the JSON report, or null when neither was asked.
absl::StatusOr<nlohmann::json> InspectKernel(
    const MeasureOptions& o, const tunefleet::v1::KernelLaunch& launch) {
  if (!o.inspect && o.binary_out.empty()) return nlohmann::json();
  auto device = opencl::OpenDevice(o.platform, o.device);
  if (!device.ok()) return device.status();
  auto report = opencl::InspectBuild(
      *device, launch.source(), launch.build_options(), launch.kernel_name());
  if (!report.ok()) return report.status();
  if (!o.binary_out.empty()) {
    std::ofstream out(o.binary_out, std::ios::binary);
    out.write(report->binary.data(),
              static_cast<std::streamsize>(report->binary.size()));
    if (!out.good()) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write ", o.binary_out));
    }
  }
  if (!o.inspect) return nlohmann::json();
  const opencl::PtxCounts counts = opencl::CountPtx(report->binary);
  if (!o.json) PrintBuildReport(*report, counts);
  return BuildReportJson(*report, counts);
}

// The workload and template a measure command names: --template is a
// template name (empty: the first that runs the workload) or a spec file
// (.toml, .json), registered in this process. --op defaults to the spec's
// op, else gemm.
absl::StatusOr<templates::Task> ResolveTask(const MeasureOptions& o) {
  const templates::KernelTemplate* spec_template = nullptr;
  if (absl::EndsWith(o.template_name, ".toml") ||
      absl::EndsWith(o.template_name, ".json")) {
    TUNEFLEET_ASSIGN_OR_RETURN(spec_template,
                               templates::RegisterSpecFile(o.template_name));
  }
  const std::string op =
      !o.op.empty()
          ? o.op
          : (spec_template ? std::string(spec_template->op()) : "gemm");
  TUNEFLEET_ASSIGN_OR_RETURN(templates::Workload workload,
                             templates::Workload::Parse(op, o.shape));
  const std::string name =
      spec_template ? std::string(spec_template->name()) : o.template_name;
  TUNEFLEET_ASSIGN_OR_RETURN(const templates::KernelTemplate* tmpl,
                             templates::FindTemplateFor(workload, name));
  return templates::Task{std::move(workload), tmpl};
}

// The trial's request: the config (or the naive reference kernel) under the
// default timing policy, --extra-options appended to its build options.
absl::StatusOr<tunefleet::v1::MeasureRequest> MeasureRequestFor(
    const MeasureOptions& o, const templates::Task& task,
    const templates::DeviceLimits& limits) {
  tunefleet::v1::MeasureRequest request;
  if (o.config == "reference") {
    request = trial::BuildReferenceRequest(*task.tmpl, task.workload, 1,
                                           contract::DefaultTimingPolicy());
  } else {
    TUNEFLEET_ASSIGN_OR_RETURN(templates::KnobValues config,
                               task.tmpl->ParseConfig(o.config));
    TUNEFLEET_RETURN_IF_ERROR(
        task.tmpl->CheckConfig(config, task.workload, limits));
    request = trial::BuildMeasureRequest(*task.tmpl, task.workload, config, 1,
                                         contract::DefaultTimingPolicy());
  }
  if (!o.extra_options.empty()) {
    absl::StrAppend(request.mutable_kernel()->mutable_build_options(), " ",
                    o.extra_options);
  }
  return request;
}

void PrintMeasurement(const MeasureOptions& o, const templates::Task& task,
                      const tunefleet::v1::Measurement& m,
                      const nlohmann::json& build) {
  const double ns = trial::MedianNs(m.times_ns());
  const double gflops = ns > 0 ? task.tmpl->Flops(task.workload) / ns : 0;
  const std::string error = tunefleet::v1::Measurement::Error_Name(m.error());
  if (o.json) {
    std::cout << nlohmann::json{{"workload", task.workload.Canonical()},
                                {"config", o.config},
                                {"error", error},
                                {"message", m.error_message()},
                                {"time_ms", ns / 1e6},
                                {"gflops", gflops},
                                {"times_ns", m.times_ns()},
                                {"number", m.number()},
                                {"compile_ms", m.compile_ms()},
                                {"max_rel_error", m.max_rel_error()},
                                {"pack_ms", m.pack_ns() / 1e6},
                                {"build", build}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << absl::StrFormat("%s: %s", task.workload.Canonical(), error);
  if (m.error() == tunefleet::v1::Measurement::OK) {
    std::cout << absl::StrFormat(
        ", %.4f ms, %.2f GFLOP/s (compile %.0f ms, max rel error %.2g)",
        ns / 1e6, gflops, m.compile_ms(), m.max_rel_error());
    if (m.pack_ns() > 0) {
      std::cout << absl::StrFormat(
          "; of the time, %.4f ms made its images from buffers",
          m.pack_ns() / 1e6);
    }
  }
  std::cout << "\n";
  if (!m.error_message().empty()) std::cout << m.error_message() << "\n";
}

// Prints "tunefleet measure: <message>" and returns the exit code: 2 for
// bad input (INVALID_ARGUMENT, NOT_FOUND), else 1.
int ReportError(const absl::Status& status) {
  std::fprintf(stderr, "tunefleet measure: %s\n",
               std::string(status.message()).c_str());
  return absl::IsInvalidArgument(status) || absl::IsNotFound(status) ? 2 : 1;
}

}  // namespace

int RunMeasure(const MeasureOptions& o) {
  absl::StatusOr<templates::Task> task = ResolveTask(o);
  if (!task.ok()) return ReportError(task.status());
  absl::StatusOr<opencl::ClDevice> device =
      opencl::OpenDevice(o.platform, o.device);
  if (!device.ok()) return ReportError(device.status());
  absl::StatusOr<std::unique_ptr<measure::Measurer>> measurer =
      measure::Measurer::Create(*std::move(device));
  if (!measurer.ok()) return ReportError(measurer.status());
  absl::StatusOr<tunefleet::v1::MeasureRequest> request = MeasureRequestFor(
      o, *task, trial::LimitsFromDeviceInfo((*measurer)->device_info()));
  if (!request.ok()) return ReportError(request.status());
  absl::StatusOr<nlohmann::json> inspected =
      InspectKernel(o, request->kernel());
  if (!inspected.ok()) return ReportError(inspected.status());
  const tunefleet::v1::Measurement m = (*measurer)->Measure(*request);
  PrintMeasurement(o, *task, m, *inspected);
  return m.error() == tunefleet::v1::Measurement::OK ? 0 : 1;
}

}  // namespace tunefleet::device_agent
