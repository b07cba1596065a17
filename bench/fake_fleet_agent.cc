#include "bench/fake_fleet_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/version.h"
#include "contract/device_info_revision.h"
#include "device_agent/backend.h"

namespace tunefleet::bench {

using tunefleet::v1::AgentMessage;

FakeFleetAgent::FakeFleetAgent(tunefleet::v1::AgentService::Stub* stub,
                               tunefleet::v1::Hello hello,
                               size_t source_cache_bytes, bool batch_results)
    : batch_results_(batch_results), sources_(source_cache_bytes) {
  hello.set_source_cache(source_cache_bytes > 0);
  stub->async()->Connect(&context_, this);
  AgentMessage first;
  *first.mutable_hello() = std::move(hello);
  out_.push_back(std::move(first));
}

// StartWrite() runs outside mu_: gRPC may run a reaction on the calling
// thread. out_.front() stays put (a deque keeps its elements in place on
// push_back) until its OnWriteDone().
void FakeFleetAgent::Start() {
  AgentMessage* first = nullptr;
  {
    absl::MutexLock lock(&mu_);
    writing_ = true;
    first = &out_.front();
  }
  StartWrite(first);
  StartRead(&in_);
  StartCall();
}

void FakeFleetAgent::Write(AgentMessage message) {
  AgentMessage* next = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (reading_done_ || done_) return;
    out_.push_back(std::move(message));
    if (writing_) return;
    writing_ = true;
    next = &out_.front();
  }
  StartWrite(next);
}

void FakeFleetAgent::OnWriteDone(bool ok) {
  AgentMessage* next = nullptr;
  {
    absl::MutexLock lock(&mu_);
    out_.pop_front();
    if (!ok) out_.clear();
    if (out_.empty()) {
      writing_ = false;
      return;
    }
    next = &out_.front();
  }
  StartWrite(next);
}

void FakeFleetAgent::OnReadDone(bool ok) {
  if (!ok) {
    absl::MutexLock lock(&mu_);
    reading_done_ = true;
    return;
  }
  if (in_.has_welcome()) {
    absl::MutexLock lock(&mu_);
    heartbeat_ms_ = std::max(1u, in_.welcome().heartbeat_interval_ms());
    result_batches_ = in_.welcome().result_batches();
  } else if (in_.has_batch()) {
    bool batch = false;
    {
      absl::MutexLock lock(&mu_);
      batch = batch_results_ && result_batches_;
    }
    // FakeBackend's answer (1..2 ms by trial id), at once; SOURCE_UNKNOWN
    // for a request naming a source this agent does not hold.
    AgentMessage batched;
    int64_t misses = 0;
    for (tunefleet::v1::MeasureRequest& r :
         *in_.mutable_batch()->mutable_requests()) {
      AgentMessage one;
      tunefleet::v1::Measurement* m =
          batch ? batched.mutable_measurements()->add_measurements()
                : one.mutable_measurement();
      if (!sources_.Resolve(&r).empty()) {
        m->set_error(tunefleet::v1::Measurement::SOURCE_UNKNOWN);
        ++misses;
      } else {
        m->set_error(tunefleet::v1::Measurement::OK);
        const double t =
            1e6 * (1.0 + static_cast<double>(r.trial_id() % 97) / 97);
        for (int i = 0; i < 3; ++i) m->add_times_ns(t);
        m->set_number(1);
      }
      m->set_trial_id(r.trial_id());
      m->set_attempt(r.attempt());
      if (!batch) Write(std::move(one));
    }
    if (batch) Write(std::move(batched));
    if (misses > 0) {
      absl::MutexLock lock(&mu_);
      source_misses_ += misses;
    }
  }
  StartRead(&in_);
}

void FakeFleetAgent::OnDone(const grpc::Status&) {
  absl::MutexLock lock(&mu_);
  done_ = true;
}

void FakeFleetAgent::Beat() {
  {
    absl::MutexLock lock(&mu_);
    if (heartbeat_ms_ == 0) return;
  }
  AgentMessage beat;
  beat.mutable_heartbeat()->set_unix_ms(absl::ToUnixMillis(absl::Now()));
  Write(std::move(beat));
}

int64_t FakeFleetAgent::source_misses() {
  absl::MutexLock lock(&mu_);
  return source_misses_;
}

bool FakeFleetAgent::welcomed() {
  absl::MutexLock lock(&mu_);
  return heartbeat_ms_ > 0;
}

uint32_t FakeFleetAgent::heartbeat_interval_ms() {
  absl::MutexLock lock(&mu_);
  return heartbeat_ms_;
}

void FakeFleetAgent::Cancel() { context_.TryCancel(); }

void FakeFleetAgent::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&done_));
}

FakeFleet::FakeFleet(const std::string& address, const std::string& device_key,
                     int agents, int channels,
                     const FakeFleetOptions& options) {
  for (int c = 0; c < std::max(1, channels); ++c) {
    grpc::ChannelArguments args;
    // Distinct arguments: a channel (and TCP connection) of its own.
    args.SetInt("tunefleet.bench_channel", c);
    channels_.push_back(grpc::CreateCustomChannel(
        address, grpc::InsecureChannelCredentials(), args));
    stubs_.push_back(tunefleet::v1::AgentService::NewStub(channels_.back()));
  }
  const tunefleet::v1::DeviceInfo device =
      device_agent::FakeBackend::FakeDevice("bench/fleet_load");
  for (int i = 0; i < agents; ++i) {
    tunefleet::v1::Hello hello;
    hello.set_device_key(device_key);
    *hello.mutable_device() = device;
    hello.set_agent_name(absl::StrCat(device_key, "-", i));
    hello.set_max_in_flight(options.max_in_flight);
    hello.set_agent_version(base::kVersion);
    hello.set_device_info_revision(contract::kDeviceInfoRevision);
    agents_.push_back(std::make_unique<FakeFleetAgent>(
        stubs_[i % stubs_.size()].get(), std::move(hello),
        options.source_cache_bytes, options.batch_results));
  }
  for (auto& a : agents_) a->Start();
  beats_ = std::thread([this] { BeatLoop(); });
}

void FakeFleet::BeatLoop() {
  while (true) {
    uint32_t interval_ms = 0;
    for (auto& a : agents_) {
      interval_ms = std::max(interval_ms, a->heartbeat_interval_ms());
    }
    {
      absl::MutexLock lock(&mu_);
      const absl::Duration wait = interval_ms > 0
                                      ? absl::Milliseconds(interval_ms)
                                      : absl::Milliseconds(50);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait)) return;
    }
    for (auto& a : agents_) a->Beat();
  }
}

void FakeFleet::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  beats_.join();
  for (auto& a : agents_) a->Cancel();
  for (auto& a : agents_) a->Wait();
}

int64_t FakeFleet::source_misses() {
  int64_t n = 0;
  for (auto& a : agents_) n += a->source_misses();
  return n;
}

FakeFleet::~FakeFleet() { Stop(); }

}  // namespace tunefleet::bench
