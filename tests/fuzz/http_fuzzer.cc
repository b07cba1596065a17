// libFuzzer target: raw HTTP requests to the web dashboard's server
// (dashboard/http_server.h), as a client would send them on one
// connection (keep-alive: several requests may follow each other): request
// line, headers and body through cpp-httplib's parser, then the checks of
// every request (Host, state changes: dashboard/request_guard.h), the
// token check and the API's routing and parameters, over an in-memory
// data source with one job. Nothing may crash, leak or hit undefined
// behaviour; every answer is an HTTP/1.1 response; no API call answers
// 200 without a token, and none from a Host that is not the dashboard's.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "auth/tokens.h"
#include "dashboard/http_server.h"
#include "data_source/data_source.h"

namespace {

using tunefleet::v1::JobProgress;

// The reader and tuner tokens the fuzz server accepts (the seeds use them).
constexpr char kReader[] = "reader-token-for-fuzzing-0123456789abcdef";
constexpr char kTuner[] = "tuner-token-for-fuzzing-0123456789abcdef";

class OneJob final : public tunefleet::data_source::DataSource {
 public:
  OneJob() {
    job_.set_job_id(1);
    job_.set_state(tunefleet::v1::JOB_STATE_RUNNING);
    job_.set_workload_key("gemm M=64 N=64 K=64 fp32");
    job_.set_trials_total(10);
    job_.set_trials_done(1);
    record_.set_trial_id(7);
    record_.set_job_id(1);
    record_.set_time_ns(1000);
    auto* knob = record_.mutable_config()->add_knobs();
    knob->set_name("MWG");
    knob->set_value(16);
  }
  absl::StatusOr<tunefleet::data_source::FleetView> Fleet() override {
    return tunefleet::data_source::FleetView{};
  }
  absl::StatusOr<std::vector<JobProgress>> Jobs(int64_t limit) override {
    if (limit == 0) return std::vector<JobProgress>{};
    return std::vector<JobProgress>{job_};
  }
  absl::StatusOr<JobProgress> Job(int64_t id) override {
    if (id != 1) return absl::NotFoundError("no such job");
    return job_;
  }
  absl::StatusOr<std::vector<tunefleet::v1::TuningRecord>> Trials(
      int64_t id, int64_t after, int64_t limit) override {
    if (id != 1) return absl::NotFoundError("no such job");
    std::vector<tunefleet::v1::TuningRecord> out;
    if (after < record_.trial_id() && limit > 0) out.push_back(record_);
    return out;
  }
  bool CanCancel() const override { return true; }
  absl::StatusOr<JobProgress> Cancel(int64_t id) override {
    if (id != 1) return absl::NotFoundError("no such job");
    return absl::FailedPreconditionError("job 1 already ended");
  }

 private:
  JobProgress job_;
  tunefleet::v1::TuningRecord record_;
};

tunefleet::dashboard::HttpServer* Server() {
  static OneJob* source = new OneJob();
  static tunefleet::dashboard::HttpServer* server = [] {
    auto tokens = std::make_shared<tunefleet::auth::TokenSet>();
    (void)tokens->Add(tunefleet::auth::TokenEntry::ForToken(
        kReader, tunefleet::auth::Role::kReader, "reader"));
    (void)tokens->Add(tunefleet::auth::TokenEntry::ForToken(
        kTuner, tunefleet::auth::Role::kTuner, "tuner"));
    tunefleet::dashboard::HttpOptions options;
    options.listen = "127.0.0.1:8080";
    options.tokens = tokens;
    options.hosts = {"dash.example"};
    options.metrics_text = [] { return std::string("# TYPE up gauge\n"); };
    auto made = tunefleet::dashboard::HttpServer::ForTest(options, source);
    if (!made.ok()) std::abort();
    return made->release();
  }();
  return server;
}

// The status codes of the answers in `out`, in order: each answer's status
// line, then its headers, then a body of its Content-Length (a body may
// hold any text, "HTTP/1.1 " too), or none (the answer to HEAD, which
// states the length of the body it leaves out): the next answer starts
// where a status line starts. -1 for a status line that is not one; stops
// where it cannot tell the end of an answer (no Content-Length, or neither
// end followed by a status line).
std::vector<int> Statuses(const std::string& out) {
  std::vector<int> codes;
  size_t at = 0;
  while (at < out.size()) {
    if (out.compare(at, 9, "HTTP/1.1 ") != 0 || out.size() < at + 12) {
      codes.push_back(-1);
      break;
    }
    int code = 0;
    for (size_t i = at + 9; i < at + 12; ++i) {
      if (out[i] < '0' || out[i] > '9') {
        code = -1;
        break;
      }
      code = code * 10 + (out[i] - '0');
    }
    codes.push_back(code);
    const size_t head_end = out.find("\r\n\r\n", at);
    if (code < 0 || head_end == std::string::npos) break;
    const std::string head = out.substr(at, head_end - at);
    const size_t cl = head.find("\r\nContent-Length: ");
    if (cl == std::string::npos) break;
    const size_t with_body =
        head_end + 4 + std::strtoull(head.c_str() + cl + 18, nullptr, 10);
    auto answer_at = [&out](size_t i) {
      return i == out.size() ||
             (i < out.size() && out.compare(i, 9, "HTTP/1.1 ") == 0);
    };
    if (answer_at(with_body)) {
      at = with_body;
    } else if (answer_at(head_end + 4)) {
      at = head_end + 4;  // HEAD: no body
    } else {
      break;
    }
  }
  return codes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  const std::string out = Server()->ServeForTest(raw);
  if (!out.empty() && !absl::StartsWith(out, "HTTP/1.1 ")) {
    std::fprintf(stderr, "an answer that is not HTTP/1.1:\n%s\n",
                 out.substr(0, 200).c_str());
    std::abort();
  }
  // Without either token anywhere in the input, no API call can succeed.
  const bool has_token = raw.find(kReader) != std::string::npos ||
                         raw.find(kTuner) != std::string::npos;
  if (!has_token && out.find("\"workload_key\"") != std::string::npos) {
    std::fprintf(stderr, "job data answered without a token:\n%s\n",
                 raw.substr(0, 400).c_str());
    std::abort();
  }
  for (int code : Statuses(out)) {
    if (code < 100 || code > 599) {
      std::fprintf(stderr, "status %d in the answer:\n%s\n", code,
                   out.substr(0, 400).c_str());
      std::abort();
    }
  }
  return 0;
}
