// TuningService.ExportRecords and ImportRecords (docs/BUNDLES.md): record
// bundles streamed as the file's bytes, exported from and merged into the
// server's database by bundle/bundle_file.h.
#ifndef TUNEFLEET_SERVER_RECORD_BUNDLES_H_
#define TUNEFLEET_SERVER_RECORD_BUNDLES_H_

#include <memory>

#include "bundle/keys.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/sync_stream.h"
#include "store/store.h"
#include "tunefleet/v1/tuning.pb.h"

namespace tunefleet::server {

// Bytes of a BundleChunk the server sends, at most: 1 MiB.
inline constexpr size_t kBundleChunkBytes = size_t{1} << 20;

// Thread-safe (the store is). `store` must outlive it.
class RecordBundles {
 public:
  // `trust`: when not null, an import must be signed by one of its keys.
  RecordBundles(store::Store* store,
                std::shared_ptr<const bundle::TrustedKeys> trust)
      : store_(store), trust_(std::move(trust)) {}

  // Writes the bundle of `request`'s records in chunks. NOT_FOUND when no
  // record matches; the store's errors.
  grpc::Status Export(
      const tunefleet::v1::ExportRecordsRequest& request,
      grpc::ServerWriterInterface<tunefleet::v1::BundleChunk>* writer) const;
  // Reads every chunk, then verifies and merges the file (bundle::
  // ImportBundle). RESOURCE_EXHAUSTED past bundle::kMaxBundleBytes; the
  // import's errors (nothing written).
  grpc::Status Import(
      grpc::ServerReaderInterface<tunefleet::v1::BundleChunk>* reader,
      tunefleet::v1::ImportRecordsResponse* response) const;

 private:
  store::Store* store_;
  std::shared_ptr<const bundle::TrustedKeys> trust_;
};

}  // namespace tunefleet::server

#endif  // TUNEFLEET_SERVER_RECORD_BUNDLES_H_
