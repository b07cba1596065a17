#include "device_agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/printable.h"
#include "base/version.h"
#include "contract/device_info_revision.h"
#include "grpcpp/grpcpp.h"
#include "logging/log.h"

namespace tunefleet::device_agent {

using tunefleet::v1::AgentMessage;
using tunefleet::v1::Measurement;
using tunefleet::v1::ServerMessage;

namespace {

// A refusal no retry can change: the server does not accept the token
// (none, unknown, revoked) or its role may not connect.
bool IsTokenRefusal(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED;
}

}  // namespace

std::string RequestName(const tunefleet::v1::MeasureRequest& request) {
  if (request.trial_id() < 0) {
    return absl::StrCat("job ", -request.trial_id(), " reference");
  }
  return absl::StrCat("trial ", request.trial_id());
}

std::string DefaultAgentName() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, "-", getpid());
}

Agent::Agent(AgentOptions options, std::unique_ptr<MeasurementBackend> backend)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      sources_(options_.source_cache_bytes) {
  key_ = options_.device_key.empty()
             ? opencl::DefaultDeviceKey(backend_->device_info())
             : options_.device_key;
  if (options_.agent_name.empty()) options_.agent_name = DefaultAgentName();
}

Agent::~Agent() { Stop(); }

void Agent::Log(const std::string& line) const {
  if (options_.verbose) {
    // Lines quote the server's messages: escaped, so that a server cannot
    // forge lines of this log or drive the terminal showing it.
    logging::Info("[agent {}] {}", key_, base::EscapeUnprintable(line));
  }
}

void Agent::ClearSourceCache() {
  absl::MutexLock lock(&mu_);
  sources_.Clear();
}

void Agent::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

absl::Status Agent::Run() {
  auto channel = client::CreateServerChannel(options_.server, options_.channel);
  auto stub = tunefleet::v1::AgentService::NewStub(channel);
  std::mt19937_64 rng(std::random_device{}());
  absl::Duration backoff = options_.min_backoff;
  while (true) {
    const Session session = Serve(*stub);
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return absl::OkStatus();
    }
    const grpc::StatusCode code = session.status.error_code();
    if (IsTokenRefusal(code)) {
      return absl::Status(
          static_cast<absl::StatusCode>(code),
          absl::StrCat(
              "the server at ", options_.server,
              " refused this agent's token (",
              absl::StatusCodeToString(static_cast<absl::StatusCode>(code)),
              ": ", session.status.error_message(), ")"));
    }
    if (session.welcomed) backoff = options_.min_backoff;
    // Exponential backoff with jitter in [backoff/2, backoff].
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    const absl::Duration wait = backoff * jitter(rng);
    backoff = std::min(backoff * 2, options_.max_backoff);
    if (code == grpc::StatusCode::FAILED_PRECONDITION) {
      // Refused for now (another device serves the key): said even when not
      // verbose, since nothing else would tell the user; retried, since the
      // other agents may leave.
      logging::Warn(
          "[agent {}] the server at {} refused this agent: {}; retrying in {}",
          key_, options_.server,
          base::EscapeUnprintable(session.status.error_message()),
          absl::FormatDuration(absl::Trunc(wait, absl::Seconds(1))));
    }
    Log(absl::StrCat(
        "disconnected from ", options_.server, ": ",
        session.status.error_message().empty() ? "stream closed"
                                               : session.status.error_message(),
        "; reconnecting in ",
        absl::FormatDuration(absl::Trunc(wait, absl::Milliseconds(1)))));
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), wait);
    if (stopping_) return absl::OkStatus();
  }
}

bool Agent::Write(Stream* stream, const AgentMessage& message) {
  absl::MutexLock lock(&write_mu_);
  return stream->Write(message);
}

Agent::Session Agent::Serve(tunefleet::v1::AgentService::Stub& stub) {
  Session session;
  grpc::ClientContext context;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return session;
    context_ = &context;
    queue_.clear();
  }
  std::unique_ptr<Stream> stream = stub.Connect(&context);
  AgentMessage hello;
  auto* h = hello.mutable_hello();
  h->set_device_key(key_);
  *h->mutable_device() = backend_->device_info();
  h->set_agent_name(options_.agent_name);
  // Hello.token stays empty: the token travels in call metadata (channel.h).
  h->set_max_in_flight(options_.max_in_flight);
  h->set_agent_version(base::kVersion);
  h->set_device_info_revision(contract::kDeviceInfoRevision);
  h->set_source_cache(options_.source_cache_bytes > 0);
  h->set_model_runs(static_cast<bool>(options_.run_model));

  std::thread measure_thread, heartbeat_thread;
  // One per model run; joined when the connection ends (a run still going
  // then finishes, or reaches its timeout, first).
  std::vector<std::thread> model_threads;
  if (Write(stream.get(), hello)) {
    ServerMessage msg;
    while (stream->Read(&msg)) {
      if (msg.has_welcome() && !session.welcomed) {
        session.welcomed = true;
        Log(absl::StrCat("connected to ", options_.server, " as ",
                         msg.welcome().agent_id()));
        {
          absl::MutexLock lock(&mu_);
          connected_ = true;
        }
        measure_thread = std::thread([&] { MeasureLoop(stream.get()); });
        // The server sets the pace: it drops agents silent for a few beats.
        const uint32_t beat_ms = msg.welcome().heartbeat_interval_ms();
        const absl::Duration beat =
            beat_ms > 0 ? absl::Milliseconds(beat_ms) : options_.heartbeat;
        heartbeat_thread =
            std::thread([&, beat] { HeartbeatLoop(stream.get(), beat); });
      } else if (msg.has_batch()) {
        // Requests naming a source this agent lacks are answered at once;
        // the server resends them whole.
        std::vector<AgentMessage> unknown;
        {
          absl::MutexLock lock(&mu_);
          for (auto& r : *msg.mutable_batch()->mutable_requests()) {
            const std::vector<std::string> missing = sources_.Resolve(&r);
            if (missing.empty()) {
              queue_.push_back(std::move(r));
              continue;
            }
            Measurement& m = *unknown.emplace_back().mutable_measurement();
            m.set_error(Measurement::SOURCE_UNKNOWN);
            m.set_error_message(
                absl::StrCat("source(s) not in the agent's cache: ",
                             absl::StrJoin(missing, ", ")));
            m.set_trial_id(r.trial_id());
            m.set_attempt(r.attempt());
          }
        }
        for (const AgentMessage& m : unknown) {
          Log(absl::StrCat("trial ", m.measurement().trial_id(), ": ",
                           m.measurement().error_message(),
                           "; the server resends it"));
          Write(stream.get(), m);
        }
      } else if (msg.has_run_model() && options_.run_model) {
        Log(absl::StrCat(
            "model run ", msg.run_model().run_id(), ": ",
            msg.run_model().plan().size() + msg.run_model().weights().size(),
            " bytes of plan and weights, ", msg.run_model().runs(), " runs",
            msg.run_model().device_buffer_runs()
                ? " (and as many with device buffers)"
                : ""));
        model_threads.emplace_back(
            [this, &stream, request = std::move(*msg.mutable_run_model())] {
              AgentMessage out;
              *out.mutable_model_result() = options_.run_model(request);
              const tunefleet::v1::RunModelResult& r = out.model_result();
              Log(absl::StrCat("model run ", request.run_id(), ": ",
                               r.error().empty() ? "done" : r.error()));
              Write(stream.get(), out);
            });
      } else if (msg.has_cancel()) {
        absl::MutexLock lock(&mu_);
        for (int64_t id : msg.cancel().trial_ids()) {
          std::erase_if(queue_, [id](const tunefleet::v1::MeasureRequest& r) {
            return r.trial_id() == id;
          });
          hinted_ = std::min(hinted_, queue_.size());
        }
      }
    }
  }
  {
    absl::MutexLock lock(&mu_);
    connected_ = false;
    queue_.clear();
  }
  if (measure_thread.joinable()) measure_thread.join();
  for (std::thread& t : model_threads) t.join();
  if (heartbeat_thread.joinable()) heartbeat_thread.join();
  session.status = stream->Finish();
  absl::MutexLock lock(&mu_);
  context_ = nullptr;
  return session;
}

void Agent::MeasureLoop(Stream* stream) {
  while (true) {
    tunefleet::v1::MeasureRequest request;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !connected_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (!connected_) return;
      request = std::move(queue_.front());
      queue_.pop_front();
      hinted_ = hinted_ > 0 ? hinted_ - 1 : 0;
      // The queued trials' programs build while this one is measured.
      for (; hinted_ < queue_.size(); ++hinted_) {
        backend_->Prefetch(queue_[hinted_]);
      }
    }
    AgentMessage out;
    Measurement& m = *out.mutable_measurement();
    m = backend_->Measure(request);
    m.set_trial_id(request.trial_id());
    m.set_attempt(request.attempt());
    Log(absl::StrCat(
        RequestName(request), ": ", Measurement::Error_Name(m.error()),
        m.times_ns_size() ? absl::StrCat(" ", m.times_ns(0) / 1e6, " ms")
                          : ""));
    if (!Write(stream, out)) return;
  }
}

void Agent::HeartbeatLoop(Stream* stream, absl::Duration interval) {
  while (true) {
    AgentMessage beat;
    {
      absl::MutexLock lock(&mu_);
      auto disconnected = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !connected_;
      };
      mu_.AwaitWithTimeout(absl::Condition(&disconnected), interval);
      if (!connected_) return;
      beat.mutable_heartbeat()->set_queued(queue_.size());
    }
    beat.mutable_heartbeat()->set_unix_ms(absl::ToUnixMillis(absl::Now()));
    if (!Write(stream, beat)) return;
  }
}

}  // namespace tunefleet::device_agent
