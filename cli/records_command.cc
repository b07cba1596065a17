#include "cli/records_command.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/files.h"
#include "base/status_macros.h"
#include "bundle/bundle_file.h"
#include "cli/common.h"
#include "contract/json.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;  // BundleChunk.data, at most

// The bundle file of the server's records, as ExportRecords streams it.
absl::StatusOr<std::string> ExportFromServer(const RecordsOptions& o) {
  TUNEFLEET_ASSIGN_OR_RETURN(TuningClient tuning,
                             DialServer(o.server, o.connection));
  tunefleet::v1::ExportRecordsRequest request;
  request.set_device_key(o.device_key);
  request.set_op(o.op);
  grpc::ClientContext context;
  auto reader = tuning.stub->ExportRecords(&context, request);
  std::string file;
  tunefleet::v1::BundleChunk chunk;
  while (reader->Read(&chunk)) file += chunk.data();
  TUNEFLEET_RETURN_IF_ERROR(FromGrpc(reader->Finish(), tuning.server));
  return file;
}

absl::StatusOr<tunefleet::v1::ImportRecordsResponse> ImportToServer(
    const RecordsOptions& o, const std::string& file) {
  TUNEFLEET_ASSIGN_OR_RETURN(TuningClient tuning,
                             DialServer(o.server, o.connection));
  grpc::ClientContext context;
  tunefleet::v1::ImportRecordsResponse response;
  auto writer = tuning.stub->ImportRecords(&context, &response);
  tunefleet::v1::BundleChunk chunk;
  for (size_t at = 0; at < file.size(); at += kChunkBytes) {
    chunk.set_data(file.substr(at, kChunkBytes));
    if (!writer->Write(chunk)) break;  // Finish() says why
  }
  writer->WritesDone();
  TUNEFLEET_RETURN_IF_ERROR(FromGrpc(writer->Finish(), tuning.server));
  return response;
}

absl::StatusOr<std::string> Export(const RecordsOptions& o) {
  std::optional<bundle::SigningKey> key;
  if (!o.sign_key.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(key,
                               bundle::SigningKey::FromPemFile(o.sign_key));
  }
  if (o.server.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                               OpenDatabase(o.db));
    return bundle::ExportBundle(*store,
                                store::ExchangeFilter{o.device_key, o.op},
                                key ? &*key : nullptr);
  }
  TUNEFLEET_ASSIGN_OR_RETURN(std::string file, ExportFromServer(o));
  if (!key) return file;
  // The signature covers the header (size and digest): the server's file,
  // checked, gets this site's signature.
  TUNEFLEET_ASSIGN_OR_RETURN(bundle::VerifiedFile verified,
                             bundle::VerifyFile(file, nullptr));
  return bundle::EncodeFile(verified.content, &*key);
}

}  // namespace

RecordsCommands AddRecordsCommand(CLI::App& app, RecordsOptions& o) {
  RecordsCommands c;
  c.records = app.add_subcommand(
      "records",
      "Move tuning records between sites as record bundles (docs/BUNDLES.md)");
  c.records->require_subcommand(1);
  c.export_cmd = c.records->add_subcommand(
      "export",
      "Write the records of a database or server (with their devices, "
      "templates, jobs' reference times and provenance) to a bundle file");
  c.export_cmd->add_option("--db", o.db, "database file to read");
  c.export_cmd->add_option("--server", o.server,
                           "read from a tunefleet-server (ExportRecords)");
  AddConnectionFlags(c.export_cmd, o.connection);
  c.export_cmd->add_option("--device-key", o.device_key,
                           "only this device key's records");
  c.export_cmd->add_option("--op", o.op, "only this op's records (gemm, ...)");
  c.export_cmd->add_option("--out", o.out, "bundle file to write")->required();
  c.export_cmd->add_option(
      "--sign", o.sign_key,
      "sign with this Ed25519 private key (PEM; `openssl genpkey "
      "-algorithm ed25519 -out KEY.pem`)");
  c.export_cmd->add_flag("--json", o.json,
                         "print {\"out\", \"bytes\", \"signed\"} on stdout");
  c.import_cmd = c.records->add_subcommand(
      "import",
      "Verify a bundle file and merge its records into a database or "
      "server; a tampered, truncated or untrusted bundle changes nothing");
  c.import_cmd->add_option("file", o.file, "bundle file to read")->required();
  c.import_cmd->add_option("--db", o.db,
                           "database file to merge into (created if absent)");
  c.import_cmd->add_option("--server", o.server,
                           "merge into a tunefleet-server (ImportRecords)");
  AddConnectionFlags(c.import_cmd, o.connection);
  c.import_cmd->add_option(
      "--trust", o.trust,
      "accept only bundles signed by one of the Ed25519 public keys in "
      "this PEM file (`openssl pkey -in KEY.pem -pubout`)");
  c.import_cmd->add_flag("--json", o.json,
                         "print what was merged as JSON on stdout");
  return c;
}

int RunRecordsExport(const RecordsOptions& o) {
  if (o.db.empty() == o.server.empty()) {
    return ReportError("records export", absl::InvalidArgumentError(
                                             "give one of --db and --server"));
  }
  absl::StatusOr<std::string> file = Export(o);
  if (!file.ok()) return ReportError("records export", file.status());
  if (absl::Status s = base::WriteFileAtomically(o.out, *file); !s.ok()) {
    return ReportError("records export", s);
  }
  const bool signed_file = !o.sign_key.empty();
  if (o.json) {
    std::cout << nlohmann::json{{"out", o.out},
                                {"bytes", file->size()},
                                {"signed", signed_file}}
                     .dump()
              << "\n";
  } else {
    std::fprintf(stderr, "tunefleet records export: wrote %s (%zu bytes, %s)\n",
                 o.out.c_str(), file->size(),
                 signed_file ? "signed" : "unsigned");
  }
  return kExitOk;
}

int RunRecordsImport(const RecordsOptions& o) {
  if (o.db.empty() == o.server.empty()) {
    return ReportError("records import", absl::InvalidArgumentError(
                                             "give one of --db and --server"));
  }
  absl::StatusOr<std::string> file = base::ReadWholeFile(o.file, "bundle file");
  if (!file.ok()) return ReportError("records import", file.status());
  std::optional<bundle::TrustedKeys> trust;
  if (!o.trust.empty()) {
    absl::StatusOr<bundle::TrustedKeys> keys =
        bundle::TrustedKeys::FromPemFile(o.trust);
    if (!keys.ok()) return ReportError("records import", keys.status());
    trust = *std::move(keys);
  }
  tunefleet::v1::ImportRecordsResponse r;
  if (o.server.empty()) {
    // Verified before the database is opened or created: a refused bundle
    // leaves no file behind.
    if (absl::StatusOr<bundle::VerifiedFile> v =
            bundle::VerifyFile(*file, trust ? &*trust : nullptr);
        !v.ok()) {
      return ReportError("records import", v.status());
    }
    absl::StatusOr<std::unique_ptr<store::Store>> store =
        store::Store::Open(o.db);
    if (!store.ok()) return ReportError("records import", store.status());
    absl::StatusOr<bundle::ImportResult> result =
        bundle::ImportBundle(**store, *file, trust ? &*trust : nullptr);
    if (!result.ok()) return ReportError("records import", result.status());
    const store::MergeSummary& m = result->merged;
    r.set_devices_added(m.devices_added);
    r.set_templates_added(m.templates_added);
    r.set_jobs_added(m.jobs_added);
    r.set_trials_added(m.trials_added);
    r.set_trials_present(m.trials_present);
    r.set_references_lowered(m.references_lowered);
    r.set_content_sha256(result->sha256_hex);
    r.set_signer_public_key(result->signer_key_hex);
  } else {
    // Checked here too, so a refused file never travels.
    if (absl::StatusOr<bundle::VerifiedFile> v =
            bundle::VerifyFile(*file, trust ? &*trust : nullptr);
        !v.ok()) {
      return ReportError("records import", v.status());
    }
    absl::StatusOr<tunefleet::v1::ImportRecordsResponse> response =
        ImportToServer(o, *file);
    if (!response.ok()) {
      return ReportError("records import", response.status());
    }
    r = *std::move(response);
  }
  if (o.json) {
    std::cout << contract::ContractJson(r).dump() << "\n";
  } else {
    std::fprintf(
        stderr,
        "tunefleet records import: %s: %lld new measurements, %lld already "
        "here; %lld jobs, %lld devices, %lld templates added; %s\n",
        o.file.c_str(), static_cast<long long>(r.trials_added()),
        static_cast<long long>(r.trials_present()),
        static_cast<long long>(r.jobs_added()),
        static_cast<long long>(r.devices_added()),
        static_cast<long long>(r.templates_added()),
        r.signer_public_key().empty()
            ? "unsigned"
            : absl::StrCat("signed by ", r.signer_public_key()).c_str());
  }
  return kExitOk;
}

}  // namespace tunefleet::cli
