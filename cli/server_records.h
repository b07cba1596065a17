// The tuning records of a tunefleet-server as the emitter's RecordSource
// (`tunefleet emit --server`, `tunefleet run --server`).
#ifndef TUNEFLEET_CLI_SERVER_RECORDS_H_
#define TUNEFLEET_CLI_SERVER_RECORDS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/channel.h"
#include "emitter/emitter.h"
#include "tunefleet/v1/tuning.grpc.pb.h"

namespace tunefleet::cli {

// The records of the server at `server`, read through its TuningService:
// ListDevices, QueryRecords (best_only) and ListJobs, every page of each
// (`page_size` per page; 0: the server's default for records, 1000 jobs).
// The server sends no template sources: those of this build's templates
// stand in.
std::unique_ptr<emitter::RecordSource> MakeServerRecords(
    const client::ServerConnection& server, uint32_t page_size);

// A source without records (no database yet): every key is unknown, so a
// model plan runs every layer's naive kernel.
std::unique_ptr<emitter::RecordSource> MakeEmptyRecords();

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_SERVER_RECORDS_H_
