#include "cli/stop_signal.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace tunefleet::cli {

StopSignal::StopSignal(std::function<void()> on_signal)
    : on_signal_(std::move(on_signal)) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  watcher_ = std::thread([this] {
    const timespec tick = {0, 100 * 1000 * 1000};
    while (!done_.load()) {
      if (sigtimedwait(&signals_, nullptr, &tick) <= 0) continue;
      if (fired_.exchange(true)) {
        // The second Ctrl-C: the user will not wait for a clean stop.
        std::fprintf(stderr, "\ninterrupted again: quitting at once\n");
        std::_Exit(130);
      }
      std::function<void()> callback;
      {
        std::lock_guard<std::mutex> lock(mu_);
        callback = on_signal_;
      }
      if (callback) callback();
    }
  });
}

void StopSignal::Set(std::function<void()> on_signal) {
  std::lock_guard<std::mutex> lock(mu_);
  on_signal_ = std::move(on_signal);
}

StopSignal::~StopSignal() {
  done_.store(true);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace tunefleet::cli
