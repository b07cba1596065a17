// RAII wrappers over the SQLite C API: a connection and prepared statements.
// Every query tunefleet runs goes through a prepared statement with bound
// parameters; no SQL is built from values.
#ifndef TUNEFLEET_STORE_SQLITE_H_
#define TUNEFLEET_STORE_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet::store {

// A prepared statement. Bind() indices start at 1, column indices at 0.
// Move-only; finalized on destruction.
class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, absl::string_view value);
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, absl::string_view(value));
  }
  Statement& Bind(int index, const char* value) {
    return Bind(index, absl::string_view(value));
  }
  // Binary bytes as a BLOB (read back with Text()).
  Statement& BindBlob(int index, absl::string_view value);
  Statement& BindNull(int index);
  // `value`, or NULL where it is not positive (0 stands for "unset" in
  // the store's structs: an unknown time, no deadline).
  Statement& BindPositiveOrNull(int index, int64_t value) {
    return value > 0 ? Bind(index, value) : BindNull(index);
  }
  Statement& BindPositiveOrNull(int index, double value) {
    return value > 0 ? Bind(index, value) : BindNull(index);
  }
  // `value` as text, or NULL where it is empty.
  Statement& BindTextOrNull(int index, absl::string_view value) {
    return value.empty() ? BindNull(index) : Bind(index, value);
  }
  // Makes the statement ready to run again: rewinds it, clears its
  // bindings and any bind error (Database::Cached() calls it).
  void Reset();

  // Advances: true with a row to read, false when done. Errors:
  // RESOURCE_EXHAUSTED "database disk full: <path>: free space and retry"
  // when SQLite says the disk is full (SQLITE_FULL); INTERNAL with SQLite's
  // message otherwise (also for a failed Bind()).
  absl::StatusOr<bool> Step();
  // Runs to completion, ignoring rows.
  absl::Status Run();
  // Steps through every row, calling `row` on each.
  absl::Status ForEachRow(const std::function<void(const Statement&)>& row);
  // Steps through every row, collecting `read(row)` of each, in order.
  // Errors as Step's.
  template <typename Read>
  absl::StatusOr<
      std::vector<std::decay_t<std::invoke_result_t<Read&, const Statement&>>>>
  CollectRows(Read read) {
    std::vector<std::decay_t<std::invoke_result_t<Read&, const Statement&>>>
        out;
    absl::Status status =
        ForEachRow([&](const Statement& row) { out.push_back(read(row)); });
    if (!status.ok()) return status;
    return out;
  }

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;
  // Int(column) / Double(column), or `if_null` where the column is NULL.
  int64_t IntOr(int column, int64_t if_null) const {
    return IsNull(column) ? if_null : Int(column);
  }
  double DoubleOr(int column, double if_null) const {
    return IsNull(column) ? if_null : Double(column);
  }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  int bind_error_ = SQLITE_OK;
};

// `select` (SELECT .. FROM ..) WHERE `where`, newest first (ORDER BY
// `id_column` DESC), with at most `limit` rows (0: all).
std::string NewestFirstSql(absl::string_view select, absl::string_view where,
                           absl::string_view id_column, int64_t limit);

// The integer of a Database::FirstInt() result whose query must find a row
// (an id just inserted or computed). Errors: `first`'s; INTERNAL with the
// message `missing` where the query found no row.
absl::StatusOr<int64_t> FoundInt(absl::StatusOr<std::optional<int64_t>> first,
                                 absl::string_view missing);

// One SQLite connection. Not thread-safe: callers serialise use.
class Database {
 public:
  // Opens or creates the file; new files get mode 0600.
  // Errors: UNAVAILABLE naming the path and SQLite's reason.
  static absl::StatusOr<Database> Open(const std::string& path);

  // Errors: INTERNAL naming the SQL's first line and SQLite's message.
  absl::StatusOr<Statement> Prepare(absl::string_view sql);
  // Runs one or more statements without parameters (schema, pragmas).
  // Errors as Statement::Step's.
  absl::Status Exec(absl::string_view sql);
  // Prepares one statement and binds `args` to ?1, ?2, ... in order.
  // Errors: Prepare's; a failed Bind() shows in the statement's Step/Run.
  template <typename... Args>
  requires(sizeof...(Args) >
           0) absl::StatusOr<Statement> Prepare(absl::string_view sql,
                                                const Args&... args) {
    absl::StatusOr<Statement> s = Prepare(sql);
    int index = 0;
    if (s.ok()) (s->Bind(++index, args), ...);
    return s;
  }
  // Prepare(sql, args...) run to completion. Errors: Prepare's and
  // Statement::Run's.
  template <typename... Args>
  absl::Status Run(absl::string_view sql, const Args&... args) {
    absl::StatusOr<Statement> s = Prepare(sql, args...);
    if (!s.ok()) return s.status();
    return s->Run();
  }
  // The first column of the first row of Prepare(sql, args...) as an
  // integer; nullopt when there is no row. Errors: Prepare's and
  // Statement::Step's.
  template <typename... Args>
  absl::StatusOr<std::optional<int64_t>> FirstInt(absl::string_view sql,
                                                  const Args&... args) {
    absl::StatusOr<Statement> s = Prepare(sql, args...);
    if (!s.ok()) return s.status();
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) return row.status();
    if (!*row) return std::nullopt;
    return s->Int(0);
  }
  // A statement prepared once per connection and kept (keyed by its SQL
  // text) for the connection's life, reset and with its bindings cleared
  // on each call, so hot statements skip SQLite's parser. The pointer is
  // valid until the Database is destroyed or moved; like the connection it
  // is not thread-safe, and one SQL text has one statement: do not hold two
  // uses of the same SQL at once. Errors: Prepare's.
  absl::StatusOr<Statement*> Cached(absl::string_view sql);
  // Cached(sql) with `args` bound to ?1, ?2, ... in order.
  template <typename... Args>
  requires(sizeof...(Args) >
           0) absl::StatusOr<Statement*> Cached(absl::string_view sql,
                                                const Args&... args) {
    absl::StatusOr<Statement*> s = Cached(sql);
    int index = 0;
    if (s.ok()) ((*s)->Bind(++index, args), ...);
    return s;
  }
  // Cached(sql, args...) run to completion; the statement is reset after.
  template <typename... Args>
  absl::Status RunCached(absl::string_view sql, const Args&... args) {
    absl::StatusOr<Statement*> s = Cached(sql, args...);
    if (!s.ok()) return s.status();
    absl::Status run = (*s)->Run();
    (*s)->Reset();
    return run;
  }
  int64_t LastInsertId() const;
  int Changes() const;
  sqlite3* get() const { return db_.get(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
  // Declared after db_ so that the statements are finalized first.
  std::map<std::string, Statement, std::less<>> cached_;
};

// BEGIN IMMEDIATE .. COMMIT; rolls back unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  const absl::Status& status() const { return begin_; }
  absl::Status Commit();

 private:
  Database& db_;
  absl::Status begin_;
  bool done_ = false;
};

}  // namespace tunefleet::store

#endif  // TUNEFLEET_STORE_SQLITE_H_
