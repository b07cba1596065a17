# A CMake dependency provider that holds the build to its components
# (cmake/Components.cmake): every find_package() that tunefleet's own
# CMake files make must be a dependency of a selected component in the
# table, and is logged. Read by the root project() call:
#
#   cmake -S . -B build-agent-only -DTUNEFLEET_COMPONENTS=agent \
#     -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=cmake/ComponentGuard.cmake
#
# deploy/check-agent-only.sh (CI) and deploy/arm64/build-agent.sh use it;
# deploy/android/agent-deps.cmake calls tunefleet_component_guard() from its
# own provider (CMake allows one), with TUNEFLEET_GUARD_NO_PROVIDER set.
# A find_package() made by a package's own config file (gRPC's finds
# c-ares, re2, ZLIB, ...) is that package's business: logged, allowed.
#
# The log, one line a call: "<package> <project|dependency> <calling file>",
# goes to TUNEFLEET_GUARD_LOG (default <build>/component-guard.log):
# deploy/android/check-deps.sh compares it with what the Android build
# provides.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/Components.cmake)

if(NOT TUNEFLEET_GUARD_LOG)
  set(TUNEFLEET_GUARD_LOG "${CMAKE_BINARY_DIR}/component-guard.log")
endif()
file(WRITE "${TUNEFLEET_GUARD_LOG}" "")
if(NOT DEFINED TUNEFLEET_COMPONENTS)
  set(TUNEFLEET_COMPONENTS all)
endif()
# Tests and bench as the root CMakeLists.txt adds them (their options
# default to ON there).
set(_tf_tests ON)
set(_tf_bench ON)
if(DEFINED TUNEFLEET_BUILD_TESTS)
  set(_tf_tests ${TUNEFLEET_BUILD_TESTS})
endif()
if(DEFINED TUNEFLEET_BUILD_BENCH)
  set(_tf_bench ${TUNEFLEET_BUILD_BENCH})
endif()
tunefleet_select_components(TUNEFLEET_GUARD_COMPONENTS "${TUNEFLEET_COMPONENTS}"
                            ${_tf_tests} ${_tf_bench} QUIET)
tunefleet_dependencies_of(TUNEFLEET_GUARD_ALLOWED "${TUNEFLEET_GUARD_COMPONENTS}")
# PkgConfig finds the pkg-config tool for the table's PKG_CONFIG entries.
list(APPEND TUNEFLEET_GUARD_ALLOWED PkgConfig)
message(STATUS "component guard: ${TUNEFLEET_COMPONENTS}: find_package() of "
               "tunefleet's own files limited to their dependencies")

# tunefleet_component_guard(<package>): fails the configure where a CMake
# file of tunefleet (not a package's config) finds a package that no
# selected component needs; logs every call. CMAKE_CURRENT_LIST_FILE is the
# file that called find_package().
function(tunefleet_component_guard package)
  set(caller "${CMAKE_CURRENT_LIST_FILE}")
  file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${caller}")
  set(from dependency)
  if(NOT rel MATCHES "^\\.\\.(/|$)" AND NOT IS_ABSOLUTE "${rel}")
    set(from project)
  endif()
  # Not tunefleet's though under its tree: a sysroot (the arm64 rootfs in
  # .cache/), the build directory.
  foreach(other "${CMAKE_SOURCE_DIR}/.cache" ${CMAKE_SYSROOT}
                ${CMAKE_FIND_ROOT_PATH} "${CMAKE_BINARY_DIR}")
    file(RELATIVE_PATH in_other "${other}" "${caller}")
    file(RELATIVE_PATH source_in_other "${other}" "${CMAKE_SOURCE_DIR}")
    if(NOT in_other MATCHES "^\\.\\.(/|$)" AND NOT IS_ABSOLUTE "${in_other}" AND
       (source_in_other MATCHES "^\\.\\.(/|$)" OR IS_ABSOLUTE "${source_in_other}"))
      set(from dependency)
    endif()
  endforeach()
  file(APPEND "${TUNEFLEET_GUARD_LOG}" "${package} ${from} ${caller}\n")
  if(from STREQUAL "project" AND NOT package IN_LIST TUNEFLEET_GUARD_ALLOWED)
    get_property(for GLOBAL PROPERTY TUNEFLEET_DEP_${package}_FOR)
    string(REPLACE ";" ", " components "${TUNEFLEET_GUARD_COMPONENTS}")
    if(for)
      string(REPLACE ";" ", " for "${for}")
      string(CONCAT why "${package} is a dependency of: ${for} "
        "(cmake/Components.cmake); find it only where those are built")
    else()
      string(CONCAT why "${package} is in no component's list: add it to "
        "the table in cmake/Components.cmake, for the components that need "
        "it, and let tunefleet_find_dependencies() find it")
    endif()
    message(FATAL_ERROR "component guard: find_package(${package}) in ${rel} "
      "while configuring the components ${components} "
      "(TUNEFLEET_COMPONENTS=${TUNEFLEET_COMPONENTS}). ${why}. "
      "docs/BUILDING.md, \"Components\".")
  endif()
endfunction()

if(NOT TUNEFLEET_GUARD_NO_PROVIDER)
  # A macro, so that the <Package>_FOUND variables reach the caller.
  macro(tunefleet_component_guard_provider method package)
    tunefleet_component_guard(${package})
    find_package(${package} ${ARGN} BYPASS_PROVIDER)
  endmacro()
  cmake_language(SET_DEPENDENCY_PROVIDER tunefleet_component_guard_provider
                 SUPPORTED_METHODS FIND_PACKAGE)
endif()
