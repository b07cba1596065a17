// A tuning-record database on a file of its own for one test: named after
// the test binary's process and the running test, removed (with its -wal,
// -shm and -openers files) before it is opened and when the test ends. A real
// SQLite file, not a mock.
#ifndef TUNEFLEET_TESTS_SUPPORT_TEMP_STORE_H_
#define TUNEFLEET_TESTS_SUPPORT_TEMP_STORE_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "gtest/gtest.h"
#include "store/store.h"

namespace tunefleet::testing {

// Removes a database file and the files SQLite and the store keep beside it
// (-wal, -shm, -openers); missing files are no error.
inline void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-openers"}) {
    std::error_code ignored;
    std::filesystem::remove(path + suffix, ignored);
  }
}

class TempStore {
 public:
  // Opens a fresh database whose file name starts with `prefix`. A failure
  // to open fails the test (store() is then null).
  explicit TempStore(const std::string& prefix)
      : path_(::testing::TempDir() + "/" + prefix + "_" +
              std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() +
              ".db") {
    RemoveFiles();
    auto store = store::Store::Open(path_);
    EXPECT_TRUE(store.ok()) << store.status();
    if (store.ok()) store_ = *std::move(store);
  }
  ~TempStore() {
    store_.reset();
    RemoveFiles();
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  store::Store* store() { return store_.get(); }
  // Closes the database (its file stays until the test ends).
  void Close() { store_.reset(); }
  const std::string& path() const { return path_; }

 private:
  void RemoveFiles() { RemoveDatabaseFiles(path_); }

  std::string path_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_TEMP_STORE_H_
