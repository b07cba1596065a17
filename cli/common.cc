#include "cli/common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/printable.h"
#include "base/status_macros.h"
#include "client/rpc_error.h"
#include "contract/json.h"
#include "contract/names.h"
#include "kernels_templates/registry.h"
#include "kernels_templates/spec/spec_template.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {

namespace {
bool json_errors = false;  // SetJsonErrors
}  // namespace

void SetJsonErrors(bool on) { json_errors = on; }

int ReportError(const std::string& command, const absl::Status& status) {
  if (json_errors) {
    nlohmann::json j = contract::ErrorJson(status);
    j["command"] = command;
    std::fprintf(stderr, "%s\n", j.dump().c_str());
  } else {
    std::fprintf(stderr, "tunefleet %s: %s\n", command.c_str(),
                 std::string(status.message()).c_str());
  }
  return absl::IsInvalidArgument(status) || absl::IsNotFound(status)
             ? kExitBadInput
             : kExitFailed;
}

absl::Status FromGrpc(const grpc::Status& status,
                      const client::ServerConnection& server) {
  return client::RpcError(status, server.address, server.tls());
}

namespace {

// Characters of UTF-8 `text` (continuation bytes not counted).
size_t DisplayWidth(absl::string_view text) {
  size_t n = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& raw_rows,
                        const std::vector<bool>& right_aligned) {
  // Names and device strings come from agents and databases: escaped, so
  // that no cell can move the terminal's cursor or break its line.
  std::vector<std::vector<std::string>> rows = raw_rows;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = base::EscapeUnprintable(cell);
  }
  std::vector<size_t> width(header.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], DisplayWidth(row[i]));
    }
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  std::string out;
  auto append = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const absl::string_view cell =
          i < row.size() ? absl::string_view(row[i]) : absl::string_view();
      const std::string pad(width[i] - DisplayWidth(cell), ' ');
      const bool right = i < right_aligned.size() && right_aligned[i];
      const bool last = i + 1 == width.size();
      absl::StrAppend(&line, i > 0 ? "  " : "", right ? pad : "", cell,
                      !right && !last ? pad : "");
    }
    absl::StrAppend(&out, line, "\n");
  };
  append(header);
  for (const auto& row : rows) append(row);
  return out;
}

void AddConnectionFlags(CLI::App* cmd, client::ChannelFiles& files) {
  cmd->add_option("--token", files.token,
                  "access token (prefer --token-file: a command line is "
                  "visible to other users)")
      ->envname("TUNEFLEET_TOKEN");
  cmd->add_option("--token-file", files.token_file,
                  "file holding the access token (tunefleet token add)")
      ->envname("TUNEFLEET_TOKEN_FILE");
  cmd->add_option("--ca", files.ca_file,
                  "TLS: verify the server's certificate against this CA "
                  "(PEM); without it the connection is plaintext")
      ->envname("TUNEFLEET_CA");
  cmd->add_option("--client-cert", files.client_cert_file,
                  "TLS: client certificate (PEM), for a server started with "
                  "--client-ca");
  cmd->add_option("--client-key", files.client_key_file,
                  "TLS: the private key of --client-cert (PEM)");
  cmd->add_flag("--insecure", files.insecure,
                "send the token in plaintext to a --server that is not a "
                "loopback address (without it, a token and no --ca is "
                "refused there)");
}

CLI::Option* AddServerFlags(CLI::App* cmd, std::string& server,
                            client::ChannelFiles& connection,
                            const std::string& help) {
  CLI::Option* option = cmd->add_option("--server", server, help);
  AddConnectionFlags(cmd, connection);
  return option;
}

CLI::Option* AddDbOption(CLI::App* cmd, std::string& db,
                         const std::string& help) {
  return cmd->add_option("--db", db, help)->capture_default_str();
}

void AddOnnxInputOptions(CLI::App* cmd, std::string& onnx,
                         std::vector<std::string>& input_shapes) {
  cmd->add_option("--onnx", onnx, "ONNX model file")->required();
  cmd->add_option("--input-shape", input_shapes,
                  "dims of an input, NAME=D1,D2,... (repeat for several; "
                  "needed for inputs with dynamic dims)");
}

std::string JsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ContractJsonText(const google::protobuf::Message& message) {
  return JsonText(contract::ContractJson(message));
}

nlohmann::json ConfigJson(const tunefleet::v1::Config& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& k : config.knobs()) j[k.name()] = k.value();
  return j;
}

std::string ConfigText(const tunefleet::v1::Config& config) {
  std::string s;
  for (const auto& k : config.knobs()) {
    absl::StrAppend(&s, s.empty() ? "" : ",", k.name(), "=", k.value());
  }
  return s;
}

absl::StatusOr<TuningClient> DialServer(const std::string& address,
                                        const client::ChannelFiles& files) {
  TUNEFLEET_ASSIGN_OR_RETURN(client::ServerConnection server,
                             client::ConnectionTo(address, files));
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(server));
  return TuningClient{std::move(server), std::move(stub)};
}

absl::StatusOr<JobOutcome> RunJob(
    const client::ServerConnection& server,
    const tunefleet::v1::SubmitJobRequest& request,
    const std::function<void(const tunefleet::v1::SubmitJobResponse&)>&
        on_submitted,
    const std::function<void(const tunefleet::v1::JobProgress&)>& on_progress) {
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(server));
  JobOutcome outcome;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    TUNEFLEET_RETURN_IF_ERROR(FromGrpc(
        stub->SubmitJob(&context, request, &outcome.submitted), server));
  }
  if (on_submitted) on_submitted(outcome.submitted);
  absl::StatusOr<tunefleet::v1::JobProgress> last =
      WatchJob(server, outcome.submitted.job_id(), on_progress);
  if (!last.ok()) return last.status();
  outcome.last = *std::move(last);
  return outcome;
}

absl::StatusOr<tunefleet::v1::JobProgress> WatchJob(
    const client::ServerConnection& server, int64_t job_id,
    const std::function<void(const tunefleet::v1::JobProgress&)>& on_progress) {
  auto stub = tunefleet::v1::TuningService::NewStub(client::Dial(server));
  grpc::ClientContext context;
  tunefleet::v1::WatchJobRequest watch;
  watch.set_job_id(job_id);
  auto reader = stub->WatchJob(&context, watch);
  tunefleet::v1::JobProgress progress, last;
  bool any = false;
  while (reader->Read(&progress)) {
    if (on_progress) on_progress(progress);
    last = progress;
    any = true;
  }
  const grpc::Status finished = reader->Finish();
  switch (finished.error_code()) {
    case grpc::StatusCode::OK:
      break;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      // Once the stream carried progress, the server was there: a broken
      // transport now means it went away, not that it was never reachable.
      if (any) return LostJobError(server, job_id, finished.error_message());
      return FromGrpc(finished, server);
    default:
      return FromGrpc(finished, server);
  }
  if (!any || !contract::IsFinalJobState(last.state())) {
    return LostJobError(server, job_id,
                        "the server ended the stream before the job ended: "
                        "shutting down, or a job of an earlier run it did "
                        "not resume?");
  }
  return last;
}

absl::Status LostJobError(const client::ServerConnection& server,
                          int64_t job_id, absl::string_view cause) {
  const std::string flags = absl::StrCat(" --server ", server.address,
                                         server.tls() ? " --ca ..." : "");
  return absl::UnavailableError(absl::StrCat(
      "lost the connection to tunefleet-server at ", server.address,
      " during job ", job_id, " (", cause,
      "). The server keeps the job and goes on with it when it is back: "
      "follow it with `tunefleet watch ",
      job_id, flags, "`, or list it with `tunefleet jobs", flags, "`"));
}

absl::StatusOr<std::optional<tunefleet::v1::TemplateSpec>> LoadTemplateSpec(
    const std::string& template_arg) {
  if (!absl::EndsWith(template_arg, ".toml") &&
      !absl::EndsWith(template_arg, ".json")) {
    return std::nullopt;
  }
  absl::StatusOr<std::unique_ptr<templates::SpecTemplate>> loaded =
      templates::SpecTemplate::Load(template_arg);
  if (!loaded.ok()) return loaded.status();
  tunefleet::v1::TemplateSpec spec;
  spec.set_spec((*loaded)->spec_text());
  spec.set_format((*loaded)->spec_format());
  spec.set_source(std::string((*loaded)->source()));
  absl::StatusOr<const templates::KernelTemplate*> registered =
      templates::RegisterSpecTemplate(spec.spec(), spec.format(),
                                      spec.source());
  if (!registered.ok()) return registered.status();
  return spec;
}

std::string ResolveOp(const std::string& op_flag,
                      const std::optional<tunefleet::v1::TemplateSpec>& spec) {
  if (!op_flag.empty()) return op_flag;
  if (spec) {
    auto t = templates::SpecTemplate::Parse(spec->spec(), spec->format(),
                                            spec->source());
    if (t.ok()) return std::string((*t)->op());
  }
  return "gemm";
}

absl::StatusOr<std::unique_ptr<store::Store>> OpenDatabase(
    const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("no database at ", path,
                     " (run `tunefleet tune` first, or pass --db)"));
  }
  return store::Store::Open(path);
}

}  // namespace tunefleet::cli
