// Whether the test binary (and so the tunefleet binaries of its build) is
// built with AddressSanitizer (deploy/sanitize.sh): ASan reserves terabytes
// of address space for its shadow memory, so a `ulimit -v` cap makes an
// instrumented process abort at start, and its allocator keeps freed memory
// in quarantine, so RSS does not fall back after a free.
#ifndef TUNEFLEET_TESTS_SUPPORT_SANITIZERS_H_
#define TUNEFLEET_TESTS_SUPPORT_SANITIZERS_H_

namespace tunefleet::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace tunefleet::testing

#endif  // TUNEFLEET_TESTS_SUPPORT_SANITIZERS_H_
