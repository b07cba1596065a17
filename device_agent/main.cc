// tunefleet-agent: serves one OpenCL device of this machine to a
// tunefleet-server. Usage: tunefleet-agent --server HOST:PORT [--key KEY]
// [--platform I] [--device J] [--token-file F] [--ca CA.pem [--client-cert
// C.pem --client-key K.pem]] [--binary-cache DIR | --no-binary-cache]
// [--prefetch auto|on|off] [--prefetch-threads N] [--replay].
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "device_agent/agent.h"
#include "device_agent/channel.h"
#include "device_agent/opencl.h"
#include "device_agent/worker.h"
#include "google/protobuf/util/json_util.h"

int main(int argc, char** argv) {
  if (tunefleet::agent::IsWorkerInvocation(argc, argv)) {
    return tunefleet::agent::RunWorkerMain(argc, argv);
  }
  // SIGINT/SIGTERM are taken by a sigwait thread (below), so they must be
  // blocked before any thread (gRPC's included) starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  CLI::App app{
      "tunefleet-agent: measures kernel configurations on one OpenCL device "
      "for a tunefleet-server. It dials out to the server, so boards behind "
      "NAT work, and reconnects with backoff."};
  tunefleet::agent::AgentOptions options;
  int platform = 0, device = 0;
  bool info_only = false;
  double timeout_ms = 120000;
  app.add_option("--server", options.server,
                 "tunefleet-server address HOST:PORT")
      ->required();
  app.add_option("--key", options.device_key,
                 "device key (default: derived from the device name)");
  app.add_option("--platform", platform, "OpenCL platform index (clinfo -l)")
      ->capture_default_str();
  app.add_option("--device", device, "OpenCL device index on the platform")
      ->capture_default_str();
  app.add_option("--name", options.agent_name,
                 "agent name in records (default: HOSTNAME-PID)");
  tunefleet::agent::ChannelFiles channel;
  app.add_option("--token", channel.token,
                 "access token of role agent (prefer --token-file: a command "
                 "line is visible to other users)")
      ->envname("TUNEFLEET_TOKEN");
  app.add_option("--token-file", channel.token_file,
                 "file holding the access token (tunefleet token add)")
      ->envname("TUNEFLEET_TOKEN_FILE");
  app.add_option("--ca", channel.ca_file,
                 "TLS: verify the server's certificate against this CA (PEM); "
                 "without it the connection is plaintext")
      ->envname("TUNEFLEET_CA");
  app.add_option("--client-cert", channel.client_cert_file,
                 "TLS: this agent's certificate (PEM), for a server started "
                 "with --client-ca");
  app.add_option("--client-key", channel.client_key_file,
                 "TLS: the private key of --client-cert (PEM)");
  app.add_option("--max-in-flight", options.max_in_flight,
                 "measure requests queued on this agent")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--info", info_only,
               "print the device info as JSON and exit (no --server needed)");
  app.get_option("--server")->required(false);
  app.add_option("--timeout-ms", timeout_ms,
                 "deadline of a trial whose request sets none; past it the "
                 "worker process is killed (TIMEOUT)")
      ->capture_default_str();
  tunefleet::agent::MeasurerOptions measurer;
  measurer.binary_cache_dir = tunefleet::agent::DefaultBinaryCacheDir();
  bool no_binary_cache = false, replay = false;
  std::string prefetch = "auto";
  app.add_option("--binary-cache", measurer.binary_cache_dir,
                 "directory of built program binaries, kept across runs and "
                 "keyed by SHA-256 of device, driver, platform version, build "
                 "options and source (default: $XDG_CACHE_HOME/tunefleet/"
                 "binaries, else ~/.cache/tunefleet/binaries)")
      ->capture_default_str();
  app.add_flag("--no-binary-cache", no_binary_cache,
               "build every program from source once per worker process");
  app.add_option("--prefetch", prefetch,
                 "build the next queued trial's program in the background "
                 "while this one is measured: auto (on unless the device is "
                 "a CPU, whose cores the build would take from the kernel "
                 "being timed), on, off")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--prefetch-threads", measurer.prefetch_threads,
                 "background build threads when prefetching; with "
                 "--max-in-flight N the N-1 queued trials build side by side")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_flag("--replay", replay,
               "where the device has cl_khr_command_buffer, record a timing "
               "round's launches once and replay them (times then include "
               "the gaps between launches; default: one enqueue per launch)");
  CLI11_PARSE(app, argc, argv);
  if (no_binary_cache) measurer.binary_cache_dir.clear();
  measurer.replay = replay;
  measurer.prefetch = tunefleet::agent::ParsePrefetch(prefetch);

  if (info_only) {
    absl::StatusOr<tunefleet::agent::ClDevice> opened =
        tunefleet::agent::OpenDevice(platform, device);
    if (!opened.ok()) {
      std::fprintf(stderr, "tunefleet-agent: %s\n",
                   std::string(opened.status().message()).c_str());
      return 2;
    }
    std::string json;
    google::protobuf::util::JsonPrintOptions print;
    print.add_whitespace = true;
    (void)google::protobuf::util::MessageToJsonString(
        tunefleet::agent::QueryDeviceInfo(opened->platform, opened->device),
        &json, print);
    std::cout << json;
    return 0;
  }
  if (options.server.empty()) {
    std::fprintf(stderr, "tunefleet-agent: --server HOST:PORT is required\n");
    return 2;
  }
  absl::StatusOr<tunefleet::agent::ChannelOptions> loaded =
      tunefleet::agent::LoadChannelOptions(channel);
  if (!loaded.ok()) {
    std::fprintf(stderr, "tunefleet-agent: %s\n",
                 std::string(loaded.status().message()).c_str());
    return 2;
  }
  options.channel = *std::move(loaded);
  // Kernels run in a supervised worker process: a hang or a crash costs a
  // trial, not the agent.
  tunefleet::agent::WorkerBackend::Options worker;
  worker.platform = platform;
  worker.device = device;
  worker.default_timeout_ms = timeout_ms;
  worker.measurer = measurer;
  auto backend = tunefleet::agent::WorkerBackend::Start(worker);
  if (!backend.ok()) {
    std::fprintf(stderr, "tunefleet-agent: %s\n",
                 std::string(backend.status().message()).c_str());
    return absl::IsUnavailable(backend.status()) ? 2 : 1;
  }
  const std::string name = (*backend)->device_info().device_name();
  tunefleet::agent::Agent agent(options, *std::move(backend));
  std::thread([&agent, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    agent.Stop();
  }).detach();
  std::fprintf(stderr,
               "tunefleet-agent: device '%s', key '%s', server %s (%s)\n",
               name.c_str(), agent.device_key().c_str(), options.server.c_str(),
               options.channel.ca_pem.empty() ? "plaintext" : "TLS");
  std::fprintf(stderr,
               "tunefleet-agent: program binaries %s; prefetch %s; replay %s\n",
               measurer.binary_cache_dir.empty()
                   ? "built per worker (no binary cache)"
                   : ("cached in " + measurer.binary_cache_dir).c_str(),
               prefetch.c_str(),
               measurer.replay ? "where cl_khr_command_buffer" : "off");
  agent.Run();
  return 0;
}
