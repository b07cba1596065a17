#include "cli/measure_command.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "cli/common.h"
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
  return cmd;
}

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
                                {"max_rel_error", m.max_rel_error()}}
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
