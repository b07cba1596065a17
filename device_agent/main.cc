// tunefleet-agent: serves one OpenCL device of this machine to a
// tunefleet-server, or measures one config on it:
//   tunefleet-agent --server HOST:PORT [--key KEY] [--platform I]
//     [--device J] [--token-file F] [--ca CA.pem [--client-cert C.pem
//     --client-key K.pem]] [--insecure] [--binary-cache DIR |
//     --no-binary-cache]
//     [--prefetch auto|on|off] [--prefetch-threads N] [--replay]
//   tunefleet-agent --info
//   [--opencl-library PATH] before any of them: the OpenCL library to load
//   (else $TUNEFLEET_OPENCL_LIBRARY, else libOpenCL.so.1, libOpenCL.so and
//   the Android vendor paths; opencl/opencl_loader.h); exit 1 when
//   none loads.
//   tunefleet-agent measure --shape M=64,N=64,K=64 --config reference
// Serving exits 0 after SIGINT or SIGTERM, 1 when the server refuses the
// token (unknown, revoked or not of role agent) or the device cannot be
// served, and 2 for a usage error (a --server without a port, a missing
// token file, a token in plaintext to a non-loopback --server without
// --insecure, no such device).
#include <pthread.h>
#include <sys/prctl.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/flags.h"
#include "base/guarded_main.h"
#include "base/version.h"
#include "client/channel.h"
#include "contract/device_info_json.h"
#include "device_agent/agent.h"
#include "device_agent/child_process.h"
#include "device_agent/measure_command.h"
#include "device_agent/model_run_handler.h"
#include "device_agent/worker.h"
#include "logging/log.h"
#include "logging/log_flag.h"
#include "opencl/opencl.h"
#include "opencl/opencl_loader.h"

namespace tunefleet::device_agent {
namespace {

// Everything the serving mode's flags set.
struct ServeFlags {
  AgentOptions agent;
  client::ChannelFiles channel;
  WorkerBackend::Options worker;
  bool info_only = false;
  bool no_binary_cache = false;
  bool replay = false;
  bool exit_with_parent = false;
  std::string prefetch = "auto";
  std::string opencl_library;  // --opencl-library; empty: the default order
  logging::Level log_level = logging::Level::kInfo;
};

void AddConnectionFlags(CLI::App& app, ServeFlags& f) {
  app.add_option("--server", f.agent.server,
                 "tunefleet-server address HOST:PORT");
  app.add_option("--key", f.agent.device_key,
                 "device key (default: derived from the device name)");
  app.add_option("--name", f.agent.agent_name,
                 "agent name in records (default: HOSTNAME-PID)");
  app.add_option("--token", f.channel.token,
                 "access token of role agent (prefer --token-file: a command "
                 "line is visible to other users)")
      ->envname("TUNEFLEET_TOKEN");
  app.add_option("--token-file", f.channel.token_file,
                 "file holding the access token (tunefleet token add)")
      ->envname("TUNEFLEET_TOKEN_FILE");
  app.add_option("--ca", f.channel.ca_file,
                 "TLS: verify the server's certificate against this CA (PEM); "
                 "without it the connection is plaintext")
      ->envname("TUNEFLEET_CA");
  app.add_option("--client-cert", f.channel.client_cert_file,
                 "TLS: this agent's certificate (PEM), for a server started "
                 "with --client-ca");
  app.add_option("--client-key", f.channel.client_key_file,
                 "TLS: the private key of --client-cert (PEM)");
  app.add_flag("--insecure", f.channel.insecure,
               "send the token in plaintext to a --server that is not a "
               "loopback address (without it, a token and no --ca is "
               "refused there)");
  base::AddRangeOption(&app, "--max-in-flight", f.agent.max_in_flight,
                       "measure requests queued on this agent", 1, 64);
  app.add_option("--source-cache-bytes", f.agent.source_cache_bytes,
                 "bytes of kernel sources kept by hash, so that the server "
                 "sends each source once per connection (0: none kept; the "
                 "server then sends every request whole)")
      ->capture_default_str();
  app.add_flag("--exit-with-parent", f.exit_with_parent,
               "end when the process that started this one ends (the "
               "embedded default of `tunefleet tune` uses it)");
}

void AddDeviceFlags(CLI::App& app, ServeFlags& f) {
  // Every option of these shows its default in --help (not the measure
  // command's, added after).
  app.option_defaults()->always_capture_default();
  app.add_option(
      "--opencl-library", f.opencl_library,
      absl::StrCat(
          "the OpenCL library to load: a path, or a name for the dynamic "
          "linker (e.g. /vendor/lib64/libOpenCL.so on a phone); "
          "default: $",
          opencl::kOpenClLibraryEnv, " if set, else the first of ",
          absl::StrJoin(opencl::DefaultOpenClLibraries(), ", "),
          " that loads. Exit 1 when it cannot be loaded"));
  app.add_option("--platform", f.worker.platform,
                 "OpenCL platform index (clinfo -l)");
  app.add_option("--device", f.worker.device,
                 "OpenCL device index on the platform");
  app.add_flag("--info", f.info_only,
               "print the device info as JSON and exit (no --server needed)");
  app.add_option("--timeout-ms", f.worker.default_timeout_ms,
                 "deadline of a trial's kernels running, for a request that "
                 "sets none; past it the worker process is killed (TIMEOUT)");
  app.add_option("--build-timeout-ms", f.worker.build_timeout_ms,
                 "limit of a trial's program builds (and a new workload's "
                 "buffers), apart from --timeout-ms; past it the worker is "
                 "killed and the trial is a COMPILE_ERROR")
      ->check(CLI::Range(1.0, 3600000.0));
  app.add_option("--worker-start-timeout-ms", f.worker.start_timeout_ms,
                 "limit of starting the measurement worker (opening the "
                 "device), also after a crash or a timeout; past it the trial "
                 "waiting for it is DEVICE_LOST")
      ->check(CLI::Range(1.0, 3600000.0));
  measure::MeasurerOptions& m = f.worker.measurer;
  m.binary_cache_dir = opencl::DefaultBinaryCacheDir();
  app.add_option("--binary-cache", m.binary_cache_dir,
                 "directory of built program binaries, kept across runs and "
                 "keyed by SHA-256 of device, driver, platform version, build "
                 "options and source (default: $XDG_CACHE_HOME/tunefleet/"
                 "binaries, else ~/.cache/tunefleet/binaries)");
  app.add_flag("--no-binary-cache", f.no_binary_cache,
               "build every program from source once per worker process");
  app.add_option("--prefetch", f.prefetch,
                 "build the next queued trial's program in the background "
                 "while this one is measured: auto (on unless the device is "
                 "a CPU, whose cores the build would take from the kernel "
                 "being timed), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--prefetch-threads", m.prefetch_threads,
                 "background build threads when prefetching; with "
                 "--max-in-flight N the N-1 queued trials build side by side")
      ->check(CLI::Range(1, 64));
  app.add_flag("--replay", f.replay,
               "where the device has cl_khr_command_buffer, record a timing "
               "round's launches once and replay them (times then include "
               "the gaps between launches; default: one enqueue per launch)");
  logging::AddLogLevelFlag(app, &f.log_level);
  app.option_defaults()->always_capture_default(false);
}

int Fail(const absl::Status& status, int code) {
  logging::Error("tunefleet-agent: {}", std::string(status.message()));
  return code;
}

int PrintInfo(const ServeFlags& f) {
  absl::StatusOr<opencl::ClDevice> opened =
      opencl::OpenDevice(f.worker.platform, f.worker.device);
  if (!opened.ok()) return Fail(opened.status(), 2);
  std::cout << contract::DeviceInfoToJson(
      opencl::QueryDeviceInfo(opened->platform, opened->device));
  return 0;
}

// `refusal` (Agent::Run()'s UNAUTHENTICATED or PERMISSION_DENIED) with
// what to do about it.
absl::Status WithTokenAdvice(const absl::Status& refusal) {
  constexpr absl::string_view kMakeOne =
      "`tunefleet token add --tokens TOKENS_FILE --role agent` on the "
      "server's machine makes one";
  if (absl::IsPermissionDenied(refusal)) {
    return absl::Status(
        refusal.code(),
        absl::StrCat(refusal.message(),
                     ": give this agent a token of role agent with "
                     "--token-file FILE; ",
                     kMakeOne));
  }
  return absl::Status(
      refusal.code(),
      absl::StrCat(refusal.message(),
                   ": check --token-file (or --token, TUNEFLEET_TOKEN_FILE, "
                   "TUNEFLEET_TOKEN); the token must be in the server's "
                   "tokens file, not revoked, and of role agent; ",
                   kMakeOne));
}

// Serves until SIGINT or SIGTERM, or until the server refuses the token.
int Serve(ServeFlags& f) {
  if (f.agent.server.empty()) {
    return Fail(absl::InvalidArgumentError("--server HOST:PORT is required"),
                2);
  }
  // A missing port or a scheme is refused here, not dialled (gRPC would
  // pick port 443, or retry an unreachable address forever), and so is a
  // token in plaintext to another machine without --insecure.
  absl::StatusOr<client::ServerConnection> connection =
      client::ConnectionTo(f.agent.server, f.channel);
  if (!connection.ok()) return Fail(connection.status(), 2);
  f.agent.server = std::move(connection->address);
  f.agent.channel = std::move(connection->channel);
  // The stop signals are taken by a sigwait thread (below), so they are
  // blocked before any thread (gRPC's included) starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (f.exit_with_parent) prctl(PR_SET_PDEATHSIG, SIGTERM);
  // Kernels run in a supervised worker process: a hang or a crash costs a
  // trial, not the agent.
  auto backend = WorkerBackend::Start(f.worker);
  if (!backend.ok()) {
    return Fail(backend.status(),
                absl::IsUnavailable(backend.status()) ? 2 : 1);
  }
  const std::string name = (*backend)->device_info().device_name();
  // Model plans the server sends run in processes of their own, on the
  // same device as the trials.
  f.agent.run_model = [handler = ModelRunHandler({.platform = f.worker.platform,
                                                  .device = f.worker.device})](
                          const tunefleet::v1::RunModelRequest& request) {
    return handler.Run(request);
  };
  Agent agent(f.agent, *std::move(backend));
  std::thread([&agent, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    agent.Stop();
  }).detach();
  const measure::MeasurerOptions& m = f.worker.measurer;
  logging::Info("tunefleet-agent: device '{}', key '{}', server {} ({})", name,
                agent.device_key(), f.agent.server,
                f.agent.channel.ca_pem.empty() ? "plaintext" : "TLS");
  logging::Info("tunefleet-agent: program binaries {}; prefetch {}; replay {}",
                m.binary_cache_dir.empty()
                    ? "built per worker (no binary cache)"
                    : "cached in " + m.binary_cache_dir,
                f.prefetch, m.replay ? "where cl_khr_command_buffer" : "off");
  if (absl::Status ended = agent.Run(); !ended.ok()) {
    return Fail(WithTokenAdvice(ended), 1);
  }
  return 0;
}

// The agent, its `measure` command or one of its child processes (the
// worker, a model run); returns the exit code.
int RunAgent(int argc, char** argv) {
  if (IsChildInvocation(argc, argv, kWorkerFlag)) {
    return RunWorkerMain(argc, argv);
  }
  if (IsChildInvocation(argc, argv, kModelRunFlag)) {
    return RunModelRunMain(argc, argv);
  }

  CLI::App app{
      "tunefleet-agent: measures kernel configurations on one OpenCL device "
      "for a tunefleet-server. It dials out to the server, so boards behind "
      "NAT work, and reconnects with backoff. `tunefleet-agent measure` "
      "measures one config here, with no server."};
  app.set_version_flag(
      "--version", std::string("tunefleet-agent ") + tunefleet::base::kVersion);
  app.require_subcommand(0, 1);
  ServeFlags flags;
  AddConnectionFlags(app, flags);
  AddDeviceFlags(app, flags);
  MeasureOptions measure;
  CLI::App* measure_cmd = AddMeasureCommand(app, measure);
  CLI11_PARSE(app, argc, argv);
  tunefleet::logging::Setup(flags.log_level);
  // OpenCL is loaded here, so that a missing library is one clear error
  // naming every path tried, not a failing clGetPlatformIDs later.
  if (absl::Status cl = tunefleet::opencl::LoadOpenCL(flags.opencl_library);
      !cl.ok()) {
    return Fail(cl, 1);
  }
  // The worker processes (re-executions of this binary) load the same one.
  if (!flags.opencl_library.empty()) {
    setenv(tunefleet::opencl::kOpenClLibraryEnv, flags.opencl_library.c_str(),
           1);
  }
  if (*measure_cmd) return RunMeasure(measure);
  if (flags.no_binary_cache) flags.worker.measurer.binary_cache_dir.clear();
  flags.worker.measurer.replay = flags.replay;
  flags.worker.measurer.prefetch =
      tunefleet::measure::ParsePrefetch(flags.prefetch);
  if (flags.info_only) return PrintInfo(flags);
  return Serve(flags);
}

}  // namespace
}  // namespace tunefleet::device_agent

int main(int argc, char** argv) {
  return tunefleet::base::GuardedMain(
      [&] { return tunefleet::device_agent::RunAgent(argc, argv); },
      [](const char* what) {
        return tunefleet::device_agent::Fail(
            absl::InternalError(absl::StrCat("unexpected: ", what)), 1);
      });
}
