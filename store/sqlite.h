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
#include <string>

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

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  int bind_error_ = SQLITE_OK;
};

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
