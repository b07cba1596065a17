# Sanitizer builds (deploy/sanitize.sh). -DTUNEFLEET_SANITIZE=ON compiles
# and links everything with AddressSanitizer and UndefinedBehaviorSanitizer.
option(TUNEFLEET_SANITIZE "Build with ASan and UBSan" OFF)
if(TUNEFLEET_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Fuzzing builds (deploy/fuzz.sh, tests/fuzz/): -DTUNEFLEET_FUZZ=ON with
# clang (CC=clang-14 CXX=clang++-14) instruments every tunefleet library for
# libFuzzer (coverage) and with ASan and UBSan, and adds the fuzz targets of
# tests/fuzz. Use a build dir of its own (build-fuzz): the option changes how
# everything is compiled. Set here, before the libraries are defined, so
# that their code is instrumented too.
option(TUNEFLEET_FUZZ "Build the libFuzzer targets of tests/fuzz (clang)" OFF)
if(TUNEFLEET_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TUNEFLEET_FUZZ needs clang: configure with "
                        "CC=clang-14 CXX=clang++-14")
  endif()
  if(TUNEFLEET_SANITIZE)
    message(FATAL_ERROR "TUNEFLEET_FUZZ already sanitizes; drop "
                        "TUNEFLEET_SANITIZE")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  # Executables other than the fuzz targets (which add -fsanitize=fuzzer)
  # still link: the sanitizer runtimes provide the coverage callbacks.
  add_link_options(-fsanitize=address,undefined)
endif()
