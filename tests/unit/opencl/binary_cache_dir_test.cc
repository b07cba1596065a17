// Unit tests of DefaultBinaryCacheDir: where the agent keeps program
// binaries when no --binary-cache is given, on a board (HOME) and on a
// phone's adb shell (HOME=/, TMPDIR=/data/local/tmp).
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "opencl/program_cache.h"

namespace tunefleet::opencl {
namespace {

// Sets XDG_CACHE_HOME, HOME and TMPDIR (nullptr: unset) for one call.
std::string DirWith(const char* xdg, const char* home, const char* tmp) {
  const char* names[] = {"XDG_CACHE_HOME", "HOME", "TMPDIR"};
  const char* values[] = {xdg, home, tmp};
  for (int i = 0; i < 3; ++i) {
    if (values[i] == nullptr) {
      unsetenv(names[i]);
    } else {
      setenv(names[i], values[i], 1);
    }
  }
  return DefaultBinaryCacheDir();
}

TEST(DefaultBinaryCacheDir, PrefersXdgThenHomeThenTmpdir) {
  EXPECT_EQ(DirWith("/x", "/home/u", "/t"), "/x/tunefleet/binaries");
  EXPECT_EQ(DirWith(nullptr, "/home/u", "/t"),
            "/home/u/.cache/tunefleet/binaries");
  EXPECT_EQ(DirWith("relative", "/home/u", nullptr),
            "/home/u/.cache/tunefleet/binaries");
}

TEST(DefaultBinaryCacheDir, AnAdbShellUsesTmpdir) {
  const std::string tmp =
      absl::StrCat("/data/local/tmp/tunefleet-", geteuid(), "/binaries");
  EXPECT_EQ(DirWith(nullptr, "/", "/data/local/tmp"), tmp);
  EXPECT_EQ(DirWith(nullptr, "", "/data/local/tmp"), tmp);
  EXPECT_EQ(DirWith(nullptr, nullptr, nullptr), "");
}

}  // namespace
}  // namespace tunefleet::opencl
