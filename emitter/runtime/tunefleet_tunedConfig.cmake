# find_package(tunefleet_tuned) support: provides tunefleet::tuned.
include(CMakeFindDependencyMacro)
find_dependency(OpenCL)
include("${CMAKE_CURRENT_LIST_DIR}/tunefleet_tunedTargets.cmake")
