// Command-line helpers over CLI11 (header only: the binaries that parse
// flags link CLI11 themselves).
#ifndef TUNEFLEET_BASE_FLAGS_H_
#define TUNEFLEET_BASE_FLAGS_H_

#include <string>

#include "CLI/CLI.hpp"

namespace tunefleet::base {

// Adds the option `name` bound to `value` (which must outlive parsing),
// its default shown in --help; a value outside [min, max] is refused with
// CLI11's range message.
template <typename T, typename Bound>
CLI::Option* AddRangeOption(CLI::App* app, const std::string& name, T& value,
                            const std::string& help, Bound min, Bound max) {
  return app->add_option(name, value, help)
      ->capture_default_str()
      ->check(CLI::Range(min, max));
}

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_FLAGS_H_
