// Pieces the tunefleet subcommands share: exit codes, error reporting,
// dialing the server, and turning records into JSON and text.
#ifndef TUNEFLEET_CLI_COMMON_H_
#define TUNEFLEET_CLI_COMMON_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/channel.h"
#include "contract/json.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "store/store.h"
#include "tunefleet/v1/tuning.grpc.pb.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::cli {

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;    // the work failed (job, device, I/O)
inline constexpr int kExitBadInput = 2;  // the request was wrong

// Prints "tunefleet <command>: <message>" to stderr and returns the exit
// code for the status (kExitBadInput for INVALID_ARGUMENT and NOT_FOUND).
// After SetJsonErrors(true) (a command run with --json) it prints one line
// of JSON instead: contract::ErrorJson ({"error": MESSAGE, "code":
// "NOT_FOUND"}) with "command": COMMAND.
int ReportError(const std::string& command, const absl::Status& status);
// Whether ReportError writes JSON; main() sets it when --json is given.
void SetJsonErrors(bool on);

// A call's status to `server` as the user should read it
// (client::RpcError: no server there, TLS on one side only, token advice).
// Use this wherever an RPC failure reaches the user.
absl::Status FromGrpc(const grpc::Status& status,
                      const client::ServerConnection& server);

// A TuningService stub on a channel to `server`, the connection FromGrpc
// names in its errors.
struct TuningClient {
  client::ServerConnection server;
  std::unique_ptr<tunefleet::v1::TuningService::Stub> stub;
};

// Dials the tunefleet-server at `address` (HOST:PORT) with the connection
// flags' `files` (AddConnectionFlags). Errors: client::ConnectionTo's.
absl::StatusOr<TuningClient> DialServer(const std::string& address,
                                        const client::ChannelFiles& files);

// The pages of a list call (QueryRecords, ListJobs) to `server`: calls
// `rpc` on `stub` with `request`, hands each response to `on_page`, and
// calls again with the response's next_page_token until a response has
// none or `on_page` returns false (no more wanted). Each call has
// `deadline` (absl::InfiniteDuration(): none). Errors: the calls'
// (FromGrpc); INTERNAL when the server sends the same page token again
// (`method` names the call).
template <typename Request, typename Response, typename OnPage>
absl::Status ForEachPage(
    tunefleet::v1::TuningService::Stub& stub,
    grpc::Status (tunefleet::v1::TuningService::Stub::*rpc)(
        grpc::ClientContext*, const Request&, Response*),
    absl::string_view method, const client::ServerConnection& server,
    Request request, absl::Duration deadline, OnPage on_page) {
  while (true) {
    Response response;
    grpc::ClientContext context;
    if (deadline != absl::InfiniteDuration()) {
      context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    }
    absl::Status status =
        FromGrpc((stub.*rpc)(&context, request, &response), server);
    if (!status.ok()) return status;
    const bool more = on_page(response);
    if (response.next_page_token().empty() || !more) {
      return absl::OkStatus();
    }
    if (response.next_page_token() == request.page_token()) {
      return absl::InternalError(
          absl::StrCat(method, ": the server sent the same page token again"));
    }
    request.set_page_token(response.next_page_token());
  }
}

// Text laid out in columns, each as wide as its widest cell (header
// included, counted in UTF-8 characters) and two spaces apart, so long
// device keys and workloads never shift the columns after them. Columns
// whose `right_aligned` entry is true are right-aligned (numbers); the last
// column is not padded. One line per row, each ending in '\n'.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::vector<bool>& right_aligned = {});

// Adds the connection flags every command with --server takes: --token,
// --token-file, --ca, --client-cert, --client-key, --insecure (also read from
// TUNEFLEET_TOKEN, TUNEFLEET_TOKEN_FILE and TUNEFLEET_CA). `files` must
// outlive parsing.
void AddConnectionFlags(CLI::App* cmd, client::ChannelFiles& files);

// Adds --server HOST:PORT (`help` says what it is for) and, after it, the
// connection flags (AddConnectionFlags). Returns the --server option (to
// mark it required, or excluding another). Both must outlive parsing.
CLI::Option* AddServerFlags(CLI::App* cmd, std::string& server,
                            client::ChannelFiles& connection,
                            const std::string& help);

// Adds --db FILE (`help`), its default shown in --help. `db` must outlive
// parsing.
CLI::Option* AddDbOption(CLI::App* cmd, std::string& db,
                         const std::string& help);

// Adds what a command that imports an ONNX model takes: --onnx FILE
// (required) and --input-shape NAME=D1,D2,... (repeatable). Both must
// outlive parsing.
void AddOnnxInputOptions(CLI::App* cmd, std::string& onnx,
                         std::vector<std::string>& input_shapes);

// `j` as `--json` prints it: indented by 2, bytes that are not UTF-8
// replaced by U+FFFD rather than refused.
std::string JsonText(const nlohmann::json& j);
// Knob values as {"MWG": 64, ...}.
nlohmann::json ConfigJson(const tunefleet::v1::Config& config);
// The text of a contract message, or of a list of them, as `--json` prints
// it (contract::ContractJson, docs/JSON.md): indented by 2, bytes that are
// not UTF-8 replaced by U+FFFD rather than refused.
std::string ContractJsonText(const google::protobuf::Message& message);
template <typename Message>
std::string ContractJsonText(const std::vector<Message>& messages) {
  nlohmann::json list = nlohmann::json::array();
  for (const Message& m : messages) list.push_back(contract::ContractJson(m));
  return JsonText(list);
}
// "MWG=64,NWG=64,..."
std::string ConfigText(const tunefleet::v1::Config& config);
// A submitted job and its final progress.
struct JobOutcome {
  tunefleet::v1::SubmitJobResponse submitted;
  tunefleet::v1::JobProgress last;
};

// Submits a job to the server and watches it to its end,
// calling `on_progress` for every update (and `on_submitted` once, when the
// job is accepted). Errors: the server's refusal of the request (FromGrpc),
// or WatchJob's.
absl::StatusOr<JobOutcome> RunJob(
    const client::ServerConnection& server,
    const tunefleet::v1::SubmitJobRequest& request,
    const std::function<void(const tunefleet::v1::SubmitJobResponse&)>&
        on_submitted,
    const std::function<void(const tunefleet::v1::JobProgress&)>& on_progress);

// Streams a job's progress from the server until the job ends, calling
// `on_progress` for each update. Returns the last progress. Errors:
// NOT_FOUND for an unknown job; UNAVAILABLE (LostJobError) when the
// connection breaks or the server ends the stream before the job ends;
// else FromGrpc's.
absl::StatusOr<tunefleet::v1::JobProgress> WatchJob(
    const client::ServerConnection& server, int64_t job_id,
    const std::function<void(const tunefleet::v1::JobProgress&)>& on_progress);

// The connection to `server` was lost while following job `job_id`
// (`cause`: what gRPC said): UNAVAILABLE saying so, that the server keeps
// the job, and how to follow it once the server is back (`tunefleet watch
// JOB`, `tunefleet jobs`).
absl::Status LostJobError(const client::ServerConnection& server,
                          int64_t job_id, absl::string_view cause);

// When `template_arg` is a spec file (.toml or .json), loads it and the
// OpenCL source it names, registers its op and template in this process
// and returns what a job request carries; nullopt for a template name.
// Errors: the spec's (NOT_FOUND, INVALID_ARGUMENT naming the field).
absl::StatusOr<std::optional<tunefleet::v1::TemplateSpec>> LoadTemplateSpec(
    const std::string& template_arg);

// The op a command runs: --op when given, else the spec template's op,
// else gemm.
std::string ResolveOp(const std::string& op_flag,
                      const std::optional<tunefleet::v1::TemplateSpec>& spec);

// Opens an existing database file for the commands that read one; refuses
// to create it. Errors: NOT_FOUND naming the path when there is no file;
// store::Store::Open's.
absl::StatusOr<std::unique_ptr<store::Store>> OpenDatabase(
    const std::string& path);

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_COMMON_H_
