#include "store/sqlite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet::store {
namespace {

// SQLite's failure `rc` as a status: SQLITE_FULL (the disk or the
// filesystem's quota is full) is RESOURCE_EXHAUSTED naming the database
// file, so that callers up to the gRPC client see a cause they can act on;
// anything else is INTERNAL with SQLite's message.
absl::Status SqliteError(sqlite3* db, int rc, absl::string_view message) {
  if ((rc & 0xff) == SQLITE_FULL) {
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    return absl::ResourceExhaustedError(
        absl::StrCat("database disk full: ", file && *file ? file : "(memory)",
                     ": free space and retry (", message, ")"));
  }
  return absl::InternalError(absl::StrCat("sqlite: ", message));
}

// Keeps a failed bind's `rc` in `*bind_error`: the statement's Step or Run
// reports it.
void KeepBindError(int rc, int* bind_error) {
  if (rc != SQLITE_OK) *bind_error = rc;
}

// Binds a copy of `value`'s bytes with `bind` (sqlite3_bind_text or
// sqlite3_bind_blob); SQLite's result code.
template <typename BindBytes>
int BindCopy(BindBytes bind, sqlite3_stmt* stmt, int index,
             absl::string_view value) {
  return bind(stmt, index, value.data(), static_cast<int>(value.size()),
              SQLITE_TRANSIENT);
}

}  // namespace

Statement& Statement::Bind(int index, int64_t value) {
  KeepBindError(sqlite3_bind_int64(stmt_.get(), index, value), &bind_error_);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  KeepBindError(sqlite3_bind_double(stmt_.get(), index, value), &bind_error_);
  return *this;
}

Statement& Statement::Bind(int index, absl::string_view value) {
  KeepBindError(BindCopy(sqlite3_bind_text, stmt_.get(), index, value),
                &bind_error_);
  return *this;
}

Statement& Statement::BindBlob(int index, absl::string_view value) {
  KeepBindError(BindCopy(sqlite3_bind_blob, stmt_.get(), index, value),
                &bind_error_);
  return *this;
}

Statement& Statement::BindNull(int index) {
  KeepBindError(sqlite3_bind_null(stmt_.get(), index), &bind_error_);
  return *this;
}

void Statement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_error_ = SQLITE_OK;
}

absl::StatusOr<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return absl::InternalError(
        absl::StrCat("binding a parameter: ", sqlite3_errstr(bind_error_)));
  }
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sqlite3_errmsg(db_));
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

absl::Status Statement::ForEachRow(
    const std::function<void(const Statement&)>& row) {
  while (true) {
    absl::StatusOr<bool> more = Step();
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    row(*this);
  }
}

int64_t Statement::Int(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double Statement::Double(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text),
                                       static_cast<size_t>(size));
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

std::string NewestFirstSql(absl::string_view select, absl::string_view where,
                           absl::string_view id_column, int64_t limit) {
  return absl::StrCat(select, " WHERE ", where, " ORDER BY ", id_column,
                      " DESC", limit > 0 ? absl::StrCat(" LIMIT ", limit) : "");
}

absl::StatusOr<int64_t> FoundInt(absl::StatusOr<std::optional<int64_t>> first,
                                 absl::string_view missing) {
  if (!first.ok()) return first.status();
  if (!first->has_value()) return absl::InternalError(missing);
  return **first;
}

absl::StatusOr<Database> Database::Open(const std::string& path) {
  // Create the file with mode 0600 first, so records are never readable
  // by other users, not even for an instant.
  if (path != ":memory:" && access(path.c_str(), F_OK) != 0) {
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
    if (fd < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot create database ", path, ": ", strerror(errno)));
    }
    close(fd);
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Database db;
  db.db_.reset(raw);
  if (rc != SQLITE_OK) {
    return absl::UnavailableError(
        absl::StrCat("cannot open database ", path, ": ",
                     raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

absl::StatusOr<Statement> Database::Prepare(absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(
      db_.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    std::string first_line(*absl::StrSplit(sql, '\n').begin());
    return absl::InternalError(absl::StrCat("preparing '", first_line,
                                            "': ", sqlite3_errmsg(db_.get())));
  }
  return Statement(db_.get(), stmt);
}

absl::StatusOr<Statement*> Database::Cached(absl::string_view sql) {
  if (auto it = cached_.find(sql); it != cached_.end()) {
    it->second.Reset();
    return &it->second;
  }
  absl::StatusOr<Statement> prepared = Prepare(sql);
  if (!prepared.ok()) return prepared.status();
  auto [it, inserted] = cached_.emplace(std::string(sql), *std::move(prepared));
  return &it->second;
}

absl::Status Database::Exec(absl::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc =
      sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    absl::Status s =
        SqliteError(db_.get(), rc, error ? error : sqlite3_errstr(rc));
    sqlite3_free(error);
    return s;
  }
  return absl::OkStatus();
}

int64_t Database::LastInsertId() const {
  return sqlite3_last_insert_rowid(db_.get());
}

int Database::Changes() const { return sqlite3_changes(db_.get()); }

// The three statements are cached: a transaction per group commit and per
// batch of new trials would otherwise parse them each time.
Transaction::Transaction(Database& db) : db_(db) {
  begin_ = db_.RunCached("BEGIN IMMEDIATE");
  done_ = !begin_.ok();
}

Transaction::~Transaction() {
  if (!done_) (void)db_.RunCached("ROLLBACK");
}

absl::Status Transaction::Commit() {
  if (!begin_.ok()) return begin_;
  absl::Status s = db_.RunCached("COMMIT");
  if (s.ok()) done_ = true;
  return s;
}

}  // namespace tunefleet::store
