// GuardedMain: a program's main() that no exception leaves. tunefleet's own
// code returns absl::Status, but third-party libraries (CLI11,
// nlohmann-json, the standard library) throw; one that no caller turned
// into a status is a bug, and is reported by the program's own error path
// (its log, its JSON error) rather than by std::terminate's abort. Header
// only: the binaries' main() functions call it.
//
//   int main(int argc, char** argv) {
//     return GuardedMain([&] { return RunProgram(argc, argv); },
//                        [](const char* what) { /* report */ return 1; });
//   }
#ifndef TUNEFLEET_BASE_GUARDED_MAIN_H_
#define TUNEFLEET_BASE_GUARDED_MAIN_H_

#include <exception>

namespace tunefleet::base {

// Returns run()'s exit code; when run() throws, report(what) is called with
// the exception's what() ("an unknown exception" for one that is not a
// std::exception) and its return value is the exit code. `report` must not
// throw (std::terminate if it does).
template <typename Run, typename Report>
int GuardedMain(Run run, Report report) noexcept {
  try {
    return run();
  } catch (const std::exception& e) {
    return report(e.what());
  } catch (...) {
    return report("an unknown exception");
  }
}

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_GUARDED_MAIN_H_
