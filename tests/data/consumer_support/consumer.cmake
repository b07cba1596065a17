# For the consumer projects under tests/data/ (each its own CMake project,
# built against an installed emitted library by BuildEmittedLibrary in
# tests/support/command_runner.h): include() this after project().
find_package(tunefleet_tuned CONFIG REQUIRED)
set(CONSUMER_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR})

# add_consumer(NAME SOURCE...): the program NAME, C++17, linked with
# tunefleet::tuned the way an application would, and seeing the headers of
# tests/data/consumer_support/.
function(add_consumer name)
  add_executable(${name} ${ARGN})
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_link_libraries(${name} PRIVATE tunefleet::tuned)
  target_include_directories(${name} PRIVATE ${CONSUMER_SUPPORT_DIR})
endfunction()
