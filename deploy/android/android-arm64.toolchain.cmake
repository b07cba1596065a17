# Android arm64-v8a with the Android NDK: a thin wrapper around the NDK's
# own build/cmake/android.toolchain.cmake that fixes what tunefleet-agent
# needs. deploy/android/build-agent.sh uses it for the dependencies and for
# the agent:
#
#   cmake -S . -B build-android \
#     -DCMAKE_TOOLCHAIN_FILE=deploy/android/android-arm64.toolchain.cmake \
#     -DANDROID_NDK=/path/to/ndk -DTUNEFLEET_ANDROID_PREFIX=/path/to/prefix
#
# ANDROID_NDK (cache or environment variable): the NDK's root, r23 or later.
# ANDROID_ABI: arm64-v8a, always.
# ANDROID_PLATFORM: android-28 unless set, and never lower. API 28
#   (Android 9) is the first whose bionic has posix_spawn(),
#   posix_spawnattr_*() and posix_spawn_file_actions_*(), with which
#   base/subprocess.cc starts the agent's measurement worker; the NDK
#   declares them only from API 28 on, so a lower level does not compile.
#   Everything else the agent and its libraries call (pipe2, prctl,
#   sigwait, pthread_sigmask, dlopen, gethostname, getauxval) is older.
# ANDROID_STL: c++_static, always: libc++ is linked into the binary, so
#   /data/local/tmp gets one file and no libc++_shared.so.
# TUNEFLEET_ANDROID_PREFIX: where build-agent.sh installed the agent's
#   dependencies; searched for libraries, headers and CMake packages besides
#   the NDK's sysroot, and for pkg-config files instead of the host's.
#   Programs (protoc, grpc_cpp_plugin) are the host's.

if(NOT ANDROID_NDK AND DEFINED ENV{ANDROID_NDK})
  set(ANDROID_NDK "$ENV{ANDROID_NDK}")
endif()
if(NOT ANDROID_NDK)
  message(FATAL_ERROR "android-arm64.toolchain.cmake: set ANDROID_NDK (cache "
    "or environment variable) to the Android NDK's root directory, r23 or "
    "later (the one holding source.properties)")
endif()
if(NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  message(FATAL_ERROR "android-arm64.toolchain.cmake: ANDROID_NDK="
    "${ANDROID_NDK} is not an Android NDK (no build/cmake/android.toolchain.cmake)")
endif()
set(ANDROID_NDK "${ANDROID_NDK}" CACHE PATH "The Android NDK's root directory")

set(ANDROID_ABI arm64-v8a)
if(NOT ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-28)
endif()
string(REGEX REPLACE "^android-" "" _tunefleet_api "${ANDROID_PLATFORM}")
if(NOT _tunefleet_api MATCHES "^[0-9]+$" OR _tunefleet_api LESS 28)
  message(FATAL_ERROR "android-arm64.toolchain.cmake: ANDROID_PLATFORM="
    "${ANDROID_PLATFORM}: tunefleet-agent needs android-28 or later "
    "(posix_spawn is in bionic from API 28 on)")
endif()
set(ANDROID_PLATFORM "android-${_tunefleet_api}")
set(ANDROID_STL c++_static)
# try_compile() projects read this file again: hand the settings on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
     ANDROID_NDK ANDROID_PLATFORM TUNEFLEET_ANDROID_PREFIX)

include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")

# The dependencies' prefix, and nothing of the host's but its programs
# (whichever of its two toolchain files the NDK used, and whatever it set).
if(TUNEFLEET_ANDROID_PREFIX)
  list(APPEND CMAKE_FIND_ROOT_PATH "${TUNEFLEET_ANDROID_PREFIX}")
  list(APPEND CMAKE_PREFIX_PATH "${TUNEFLEET_ANDROID_PREFIX}")
  set(ENV{PKG_CONFIG_LIBDIR} "${TUNEFLEET_ANDROID_PREFIX}/lib/pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "")
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
