#include "device_agent/worker.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "base/subprocess.h"
#include "device_agent/child_process.h"
#include "measure/measurer.h"

namespace tunefleet::device_agent {
namespace {

using tunefleet::internal::WorkerReply;
using tunefleet::internal::WorkerRequest;
using tunefleet::v1::Measurement;

constexpr int kWorkerIn = 3;   // the worker reads requests here
constexpr int kWorkerOut = 4;  // and writes replies here
constexpr uint32_t kMaxFrameBytes = 256u << 20;

bool WriteFrame(int fd, const google::protobuf::Message& m) {
  const std::string bytes = m.SerializeAsString();
  const uint32_t size = static_cast<uint32_t>(bytes.size());
  const char header[4] = {static_cast<char>(size), static_cast<char>(size >> 8),
                          static_cast<char>(size >> 16),
                          static_cast<char>(size >> 24)};
  return base::WriteAll(fd, absl::string_view(header, 4)) &&
         base::WriteAll(fd, bytes);
}

// Reads one length-prefixed message by `deadline`. Errors: base::ReadFull's
// (DEADLINE_EXCEEDED, OUT_OF_RANGE when the writer is gone), INTERNAL for
// a frame too large or not the message.
absl::Status ReadFrame(int fd, google::protobuf::Message* m,
                       base::Deadline deadline) {
  unsigned char header[4];
  TUNEFLEET_RETURN_IF_ERROR(base::ReadFull(fd, header, 4, deadline));
  const uint32_t size = header[0] | header[1] << 8 | header[2] << 16 |
                        static_cast<uint32_t>(header[3]) << 24;
  if (size > kMaxFrameBytes) return absl::InternalError("frame too large");
  std::string bytes(size, '\0');
  TUNEFLEET_RETURN_IF_ERROR(base::ReadFull(fd, bytes.data(), size, deadline));
  if (!m->ParseFromString(bytes)) return absl::InternalError("garbled frame");
  return absl::OkStatus();
}

Measurement Failed(Measurement::Error code, const std::string& message) {
  Measurement m;
  m.set_error(code);
  m.set_error_message(message);
  return m;
}

}  // namespace

int RunWorkerMain(int argc, char** argv) {
  int platform = 0, device = 0;
  if (std::optional<int> exit_code =
          StartChild(argc, argv, /*more_arguments=*/true, &platform, &device)) {
    return *exit_code;
  }
  measure::MeasurerOptions options;
  for (int i = 4; i + 1 < argc; i += 2) {
    const absl::string_view flag = argv[i], value = argv[i + 1];
    if (flag == "--binary-cache") {
      options.binary_cache_dir = std::string(value);
    } else if (flag == "--prefetch") {
      options.prefetch = measure::ParsePrefetch(value);
    } else if (flag == "--prefetch-threads") {
      if (!absl::SimpleAtoi(value, &options.prefetch_threads)) return 2;
    } else if (flag == "--replay") {
      options.replay = value != "off";
    } else {
      return 2;
    }
  }
  std::unique_ptr<measure::Measurer> measurer;
  std::string error;
  if (absl::StatusOr<opencl::ClDevice> d = opencl::OpenDevice(platform, device);
      !d.ok()) {
    error = std::string(d.status().message());
  } else if (auto m = measure::Measurer::Create(*std::move(d), options);
             !m.ok()) {
    error = std::string(m.status().message());
  } else {
    measurer = *std::move(m);
  }
  if (measurer != nullptr) {
    // Each phase of a trial is announced, for the agent to time it.
    measurer->SetPhaseListener([](measure::MeasurePhase phase) {
      WorkerReply note;
      note.set_phase(phase == measure::MeasurePhase::kRun
                         ? tunefleet::internal::PHASE_RUN
                         : tunefleet::internal::PHASE_BUILD);
      (void)WriteFrame(kWorkerOut, note);
    });
  }
  WorkerRequest request;
  while (ReadFrame(kWorkerIn, &request, base::Deadline::max()).ok()) {
    WorkerReply reply;
    if (measurer == nullptr) {
      reply.set_error(error);
    } else if (request.has_measure()) {
      for (const tunefleet::v1::KernelLaunch& launch : request.prefetch()) {
        measurer->Prefetch(launch);
      }
      *reply.mutable_measurement() = measurer->Measure(request.measure());
    } else {
      *reply.mutable_device_info() = measurer->device_info();
    }
    if (!WriteFrame(kWorkerOut, reply)) return 1;
  }
  return 0;
}

absl::StatusOr<std::unique_ptr<WorkerBackend>> WorkerBackend::Start(
    Options options) {
  // A write to a dead worker's pipe must fail with EPIPE, not kill the
  // agent.
  signal(SIGPIPE, SIG_IGN);
  auto backend = std::make_unique<WorkerBackend>(base::PassKey<WorkerBackend>(),
                                                 std::move(options));
  if (absl::Status s = backend->EnsureWorker(); !s.ok()) return s;
  // As the worker's Measurer decides: no point shipping sources it ignores.
  backend->prefetch_enabled_ = measure::PrefetchEnabled(
      backend->options_.measurer.prefetch, backend->info_);
  return backend;
}

absl::Status WorkerBackend::EnsureWorker() {
  if (worker_.running()) return absl::OkStatus();
  TUNEFLEET_RETURN_IF_ERROR(Spawn());
  WorkerRequest request;
  request.set_device_info(true);
  const Limits start{options_.start_timeout_ms, options_.start_timeout_ms};
  Reply reply = Call(request, start, /*start=*/false);
  if (!reply.reply.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "the measurement worker did not start within ",
        options_.start_timeout_ms, " ms: ", reply.reply.status().message()));
  }
  if (reply.reply->has_error()) {
    Reap(/*kill_first=*/true);
    return absl::UnavailableError(reply.reply->error());
  }
  info_ = reply.reply->device_info();
  return absl::OkStatus();
}

WorkerBackend::~WorkerBackend() { Reap(/*kill_first=*/true); }

absl::Status WorkerBackend::Spawn() {
  int requests[2], replies[2];
  if (pipe2(requests, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  base::UniqueFd request_read(requests[0]), request_write(requests[1]);
  if (pipe2(replies, O_CLOEXEC) != 0) return absl::InternalError("pipe");
  base::UniqueFd reply_read(replies[0]), reply_write(replies[1]);
  std::vector<std::string> args = {options_.executable, kWorkerFlag,
                                   std::to_string(options_.platform),
                                   std::to_string(options_.device)};
  const measure::MeasurerOptions& m = options_.measurer;
  if (!m.binary_cache_dir.empty()) {
    args.insert(args.end(), {"--binary-cache", m.binary_cache_dir});
  }
  args.insert(args.end(),
              {"--prefetch", measure::PrefetchName(m.prefetch),
               "--prefetch-threads", std::to_string(m.prefetch_threads),
               "--replay", m.replay ? "on" : "off"});
  base::Subprocess::Options spawn;
  spawn.fds = {{kWorkerIn, request_read.get()},
               {kWorkerOut, reply_write.get()}};
  TUNEFLEET_ASSIGN_OR_RETURN(worker_, base::Subprocess::Spawn(args, spawn));
  to_worker_ = std::move(request_write);
  from_worker_ = std::move(reply_read);
  ++restarts_;
  return absl::OkStatus();
}

std::string WorkerBackend::Reap(bool kill_first) {
  to_worker_.Reset();
  from_worker_.Reset();
  if (!worker_.running()) return "";
  if (kill_first) return worker_.Kill().ToString();
  absl::StatusOr<base::ExitStatus> status = worker_.Wait();
  return status.ok() ? status->ToString()
                     : std::string(status.status().message());
}

WorkerBackend::Reply WorkerBackend::Call(const WorkerRequest& request,
                                         const Limits& limits, bool start) {
  Reply out;
  if (absl::Status s = start ? EnsureWorker() : absl::OkStatus(); !s.ok()) {
    out.phase = Phase::kStart;
    out.reply = s;
    return out;
  }
  bool written = WriteFrame(to_worker_.get(), request);
  if (!written && start) {
    // The worker was gone before the request reached it, so nothing of it
    // ran: a fresh worker takes it. PR_SET_PDEATHSIG kills a worker when
    // the thread that started it ends, e.g. the measurement thread of an
    // agent connection that has since closed.
    Reap(/*kill_first=*/false);
    if (absl::Status s = EnsureWorker(); !s.ok()) {
      out.phase = Phase::kStart;
      out.reply = s;
      return out;
    }
    written = WriteFrame(to_worker_.get(), request);
  }
  // The build phase's limit from the request on; each phase the worker
  // announces starts its own.
  out.phase = Phase::kBuild;
  double limit_ms = limits.build_ms;
  base::Deadline deadline = base::DeadlineIn(limit_ms);
  WorkerReply reply;
  absl::Status read = absl::UnavailableError("cannot write to the worker");
  while (written) {
    read = ReadFrame(from_worker_.get(), &reply, deadline);
    if (!read.ok() || reply.reply_case() != WorkerReply::kPhase) break;
    const bool run = reply.phase() == tunefleet::internal::PHASE_RUN;
    out.phase = run ? Phase::kRun : Phase::kBuild;
    limit_ms = run ? limits.run_ms : limits.build_ms;
    deadline = base::DeadlineIn(limit_ms);
  }
  if (read.ok()) {
    out.reply = std::move(reply);
    return out;
  }
  if (absl::IsDeadlineExceeded(read)) {
    const std::string how = Reap(/*kill_first=*/true);
    out.reply = absl::DeadlineExceededError(
        absl::StrCat("no answer within ", limit_ms, " ms ",
                     out.phase == Phase::kRun ? "of running kernels"
                                              : "of building programs",
                     "; worker killed (", how, ")"));
    return out;
  }
  const std::string how = Reap(/*kill_first=*/false);
  out.reply = absl::UnavailableError(absl::StrCat("the worker died: ", how));
  return out;
}

void WorkerBackend::Prefetch(const tunefleet::v1::MeasureRequest& next) {
  if (!prefetch_enabled_) return;
  if (skip_next_prefetch_) {
    skip_next_prefetch_ = false;
    return;
  }
  // Only what a build needs travels: source and options.
  for (const tunefleet::v1::KernelLaunch* launch :
       {&next.kernel(), &next.verification().reference()}) {
    if (launch->source().empty()) continue;
    tunefleet::v1::KernelLaunch& out = prefetch_.emplace_back();
    out.set_source(launch->source());
    out.set_build_options(launch->build_options());
  }
}

tunefleet::v1::Measurement WorkerBackend::Measure(
    const tunefleet::v1::MeasureRequest& request) {
  const Limits limits{options_.build_timeout_ms,
                      request.timing().timeout_ms() > 0
                          ? request.timing().timeout_ms()
                          : options_.default_timeout_ms};
  WorkerRequest call;
  *call.mutable_measure() = request;
  for (tunefleet::v1::KernelLaunch& launch : prefetch_) {
    *call.add_prefetch() = std::move(launch);
  }
  prefetch_.clear();
  Reply reply = Call(call, limits);
  if (!reply.reply.ok() && reply.phase != Phase::kStart &&
      absl::IsUnavailable(reply.reply.status()) && call.prefetch_size() > 0) {
    // The crash may have been the background build's: measure this trial
    // alone in a fresh worker, and the prefetched one alone after it.
    call.clear_prefetch();
    skip_next_prefetch_ = true;
    prefetch_.clear();
    reply = Call(call, limits);
  }
  if (reply.reply.ok() && reply.reply->has_measurement()) {
    return reply.reply->measurement();
  }
  if (reply.reply.ok()) {
    return Failed(Measurement::RUNTIME_ERROR, reply.reply->has_error()
                                                  ? reply.reply->error()
                                                  : "empty worker reply");
  }
  const std::string message(reply.reply.status().message());
  // Each phase has its own limit and its own code: a worker that does not
  // start is the device's trouble, a build past its limit the config's
  // compile, only kernels running past timeout_ms a TIMEOUT. The next
  // trial starts a fresh worker (Call() spawns on demand).
  if (reply.phase == Phase::kStart) {
    return Failed(Measurement::DEVICE_LOST, message);
  }
  if (absl::IsDeadlineExceeded(reply.reply.status())) {
    return Failed(reply.phase == Phase::kRun ? Measurement::TIMEOUT
                                             : Measurement::COMPILE_ERROR,
                  message);
  }
  return Failed(
      Measurement::RUNTIME_ERROR,
      absl::StrCat(message, " during the trial; a new worker starts"));
}

}  // namespace tunefleet::device_agent
