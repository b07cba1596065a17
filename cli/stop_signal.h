// Turns SIGINT and SIGTERM into a callback for the scope of an object, so
// a command can end its work cleanly (cancel its job, keep its records)
// instead of dying mid-write.
#ifndef TUNEFLEET_CLI_STOP_SIGNAL_H_
#define TUNEFLEET_CLI_STOP_SIGNAL_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace tunefleet::cli {

// Construct before any thread starts (threads inherit the blocked mask).
// `on_signal` runs at most once, on the watcher thread, for the first
// signal; a second signal ends the process at once (exit 130), for a user
// who does not want to wait for the clean stop. Not copyable.
class StopSignal {
 public:
  explicit StopSignal(std::function<void()> on_signal);
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // Whether a signal arrived.
  bool fired() const { return fired_.load(); }
  // Replaces the callback (e.g. once the thing to stop exists).
  void Set(std::function<void()> on_signal);

 private:
  sigset_t signals_;
  sigset_t previous_;
  std::atomic<bool> done_{false};
  std::atomic<bool> fired_{false};
  std::mutex mu_;
  std::function<void()> on_signal_;
  std::thread watcher_;
};

}  // namespace tunefleet::cli

#endif  // TUNEFLEET_CLI_STOP_SIGNAL_H_
