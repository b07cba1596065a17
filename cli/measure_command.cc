#include "cli/measure_command.h"

#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "device_agent/build_inspect.h"
#include "device_agent/measurer.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "server/store.h"
#include "server/trial_request.h"

namespace tunefleet::cli {

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

nlohmann::json BuildReportJson(const agent::BuildReport& r,
                               const agent::PtxCounts& p) {
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

void PrintBuildReport(const agent::BuildReport& r, const agent::PtxCounts& p) {
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
  auto device = agent::OpenDevice(o.platform, o.device);
  if (!device.ok()) return device.status();
  auto report = agent::InspectBuild(
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
  const agent::PtxCounts counts = agent::CountPtx(report->binary);
  if (!o.json) PrintBuildReport(*report, counts);
  return BuildReportJson(*report, counts);
}

}  // namespace

int RunMeasure(const MeasureOptions& o) {
  auto spec = LoadTemplateSpec(o.template_name);
  if (!spec.ok()) return ReportError("measure", spec.status());
  auto workload = templates::Workload::Parse(ResolveOp(o.op, *spec), o.shape);
  if (!workload.ok()) return ReportError("measure", workload.status());
  std::string name = o.template_name;
  if (*spec) {
    auto t = templates::SpecTemplate::Parse((*spec)->spec(), (*spec)->format(),
                                            (*spec)->source());
    if (t.ok()) name = std::string((*t)->name());
  }
  auto tmpl = templates::FindTemplateFor(*workload, name);
  if (!tmpl.ok()) return ReportError("measure", tmpl.status());
  auto device = agent::OpenDevice(o.platform, o.device);
  if (!device.ok()) return ReportError("measure", device.status());
  auto measurer = agent::Measurer::Create(*std::move(device));
  if (!measurer.ok()) return ReportError("measure", measurer.status());
  const templates::DeviceLimits limits =
      server::LimitsFromDeviceInfo((*measurer)->device_info());

  tunefleet::v1::MeasureRequest request;
  if (o.config == "reference") {
    request = server::BuildReferenceRequest(**tmpl, *workload, 1,
                                            server::DefaultTimingPolicy());
  } else {
    auto config = (*tmpl)->ParseConfig(o.config);
    if (!config.ok()) return ReportError("measure", config.status());
    if (absl::Status s = (*tmpl)->CheckConfig(*config, *workload, limits);
        !s.ok()) {
      return ReportError("measure", s);
    }
    request = server::BuildMeasureRequest(**tmpl, *workload, *config, 1,
                                          server::DefaultTimingPolicy());
  }
  if (!o.extra_options.empty()) {
    absl::StrAppend(request.mutable_kernel()->mutable_build_options(), " ",
                    o.extra_options);
  }
  absl::StatusOr<nlohmann::json> inspected = InspectKernel(o, request.kernel());
  if (!inspected.ok()) return ReportError("measure", inspected.status());
  const tunefleet::v1::Measurement m = (*measurer)->Measure(request);
  const double ns = server::MedianNs(m.times_ns());
  const double gflops = ns > 0 ? (*tmpl)->Flops(*workload) / ns : 0;
  const std::string error = tunefleet::v1::Measurement::Error_Name(m.error());
  if (o.json) {
    std::cout << nlohmann::json{{"workload", workload->Canonical()},
                                {"config", o.config},
                                {"error", error},
                                {"message", m.error_message()},
                                {"time_ms", ns / 1e6},
                                {"gflops", gflops},
                                {"times_ns", m.times_ns()},
                                {"number", m.number()},
                                {"compile_ms", m.compile_ms()},
                                {"max_rel_error", m.max_rel_error()},
                                {"build", *inspected}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << absl::StrFormat("%s: %s", workload->Canonical(), error);
    if (m.error() == tunefleet::v1::Measurement::OK) {
      std::cout << absl::StrFormat(
          ", %.4f ms, %.2f GFLOP/s (compile %.0f ms, max rel error %.2g)",
          ns / 1e6, gflops, m.compile_ms(), m.max_rel_error());
    }
    std::cout << "\n";
    if (!m.error_message().empty()) std::cout << m.error_message() << "\n";
  }
  return m.error() == tunefleet::v1::Measurement::OK ? kExitOk : kExitFailed;
}

}  // namespace tunefleet::cli
