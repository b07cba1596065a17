#include "server/record_bundles.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "auth/grpc_status.h"
#include "bundle/bundle_file.h"

namespace tunefleet::server {

grpc::Status RecordBundles::Export(
    const tunefleet::v1::ExportRecordsRequest& request,
    grpc::ServerWriterInterface<tunefleet::v1::BundleChunk>* writer) const {
  store::ExchangeFilter filter{request.device_key(), request.op()};
  absl::StatusOr<std::string> file =
      bundle::ExportBundle(*store_, filter, /*key=*/nullptr);
  if (!file.ok()) return auth::ToGrpc(file.status());
  tunefleet::v1::BundleChunk chunk;
  for (size_t at = 0; at < file->size(); at += kBundleChunkBytes) {
    chunk.set_data(file->substr(at, kBundleChunkBytes));
    if (!writer->Write(chunk)) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "the client stopped reading the bundle");
    }
  }
  return grpc::Status::OK;
}

grpc::Status RecordBundles::Import(
    grpc::ServerReaderInterface<tunefleet::v1::BundleChunk>* reader,
    tunefleet::v1::ImportRecordsResponse* response) const {
  std::string file;
  tunefleet::v1::BundleChunk chunk;
  while (reader->Read(&chunk)) {
    if (static_cast<int64_t>(file.size() + chunk.data().size()) >
        bundle::kMaxBundleBytes) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("record bundle larger than ",
                                       bundle::kMaxBundleBytes, " bytes"));
    }
    file += chunk.data();
  }
  absl::StatusOr<bundle::ImportResult> result =
      bundle::ImportBundle(*store_, file, trust_.get());
  if (!result.ok()) return auth::ToGrpc(result.status());
  const store::MergeSummary& m = result->merged;
  response->set_devices_added(m.devices_added);
  response->set_templates_added(m.templates_added);
  response->set_jobs_added(m.jobs_added);
  response->set_trials_added(m.trials_added);
  response->set_trials_present(m.trials_present);
  response->set_references_lowered(m.references_lowered);
  response->set_content_sha256(result->sha256_hex);
  response->set_signer_public_key(result->signer_key_hex);
  return grpc::Status::OK;
}

}  // namespace tunefleet::server
