// The tuning records `tunefleet emit` and `tunefleet run` build from, as
// the emitter's RecordSource: a tunefleet-server's (--server) or a
// database file's (--db), opened by OpenRecordSource() as `jobs` and
// `query` open theirs with OpenDataSource() (cli/server_source.h).
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
#include "cli/server_source.h"
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

// The records of `flags`: the server's (MakeServerRecords, flags.page_size
// per page) when flags.server is set, else those of the database file
// flags.db, opened with OpenDatabase (which refuses to create it) and owned
// by the source. Errors: client::ConnectionTo's, OpenDatabase's.
absl::StatusOr<std::unique_ptr<emitter::RecordSource>> OpenRecordSource(
    const SourceFlags& flags);

// A source without records (no database yet): every key is unknown, so a
// model plan runs every layer's naive kernel.
std::unique_ptr<emitter::RecordSource> MakeEmptyRecords();

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_SERVER_RECORDS_H_
