# Cross-compiles tunefleet for aarch64 Linux (RK3588-class boards running
# Debian/Ubuntu) with Debian's cross compiler (crossbuild-essential-arm64)
# against an arm64 Debian sysroot, e.g. the one deploy/arm64/make-rootfs.sh
# makes:
#
#   cmake -S . -B build-arm64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DTUNEFLEET_SYSROOT=$PWD/.cache/arm64/rootfs
#
# TUNEFLEET_SYSROOT (cache variable or environment variable): the arm64
# root filesystem with the -dev packages of deploy/arm64/common.sh. Its
# absolute library symlinks must be relative, and the programs its CMake
# exports name (grpc_cpp_plugin, xgboost) must exist in it; make-rootfs.sh
# does both. protoc comes from the host (protobuf-compiler), the gRPC
# plugin through the sysroot's link to the host's grpc_cpp_plugin; their
# version must match the sysroot's libprotobuf-dev (both Debian 12).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT TUNEFLEET_SYSROOT AND DEFINED ENV{TUNEFLEET_SYSROOT})
  set(TUNEFLEET_SYSROOT "$ENV{TUNEFLEET_SYSROOT}")
endif()
if(NOT TUNEFLEET_SYSROOT)
  message(FATAL_ERROR "aarch64-linux-gnu.cmake: set TUNEFLEET_SYSROOT to an "
    "arm64 root filesystem (bash deploy/arm64/make-rootfs.sh makes one)")
endif()
if(NOT EXISTS "${TUNEFLEET_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "aarch64-linux-gnu.cmake: ${TUNEFLEET_SYSROOT} is not an "
    "arm64 Debian root filesystem (no usr/lib/aarch64-linux-gnu)")
endif()
set(TUNEFLEET_SYSROOT "${TUNEFLEET_SYSROOT}" CACHE PATH
    "arm64 root filesystem to build against")
# try_compile() projects re-read this file: hand the sysroot on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TUNEFLEET_SYSROOT)

set(CMAKE_SYSROOT "${TUNEFLEET_SYSROOT}")
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries, headers and CMake packages from the sysroot only; programs
# (protoc) from the host.
set(CMAKE_FIND_ROOT_PATH "${TUNEFLEET_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# pkg-config (FindOpenSSL, gRPC's dependencies) reads the sysroot's .pc
# files.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${TUNEFLEET_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${TUNEFLEET_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${TUNEFLEET_SYSROOT}/usr/share/pkgconfig")

