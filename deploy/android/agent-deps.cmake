# The Android build of tunefleet-agent configures the root CMakeLists.txt
# as the agent-only component (-DTUNEFLEET_COMPONENTS=agent,
# cmake/Components.cmake), which finds only what the agent needs. This
# file, read by its project() call
# (-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=deploy/android/agent-deps.cmake;
# CMake 3.24), sets a dependency provider that answers those calls:
#  - every call of tunefleet's own files goes through the component guard
#    (cmake/ComponentGuard.cmake): a package the agent does not need fails
#    the configure, naming it (the Android build has none of the server's
#    or the CLI's libraries); the calls are logged (component-guard.log,
#    which deploy/android/check-deps.sh compares with what build-agent.sh
#    provides);
#  - OpenCL: the Khronos headers in TUNEFLEET_OPENCL_INCLUDE_DIR and no
#    library: the agent loads libOpenCL.so at run time (opencl_loader.h),
#    so nothing may link one;
#  - gRPC: found as usual; a gRPC cross-built without its code generators
#    (gRPC_BUILD_CODEGEN=OFF) gets gRPC::grpc_cpp_plugin from the host
#    (TUNEFLEET_HOST_GRPC_CPP_PLUGIN, default: grpc_cpp_plugin on PATH), as
#    protoc is the host's (Protobuf_PROTOC_EXECUTABLE);
#  - everything else: find_package() as if there were no provider.

if(NOT TUNEFLEET_COMPONENTS STREQUAL "agent")
  message(FATAL_ERROR "agent-deps.cmake: the Android build is the agent "
    "alone: configure with -DTUNEFLEET_COMPONENTS=agent (it is "
    "'${TUNEFLEET_COMPONENTS}')")
endif()
set(TUNEFLEET_GUARD_NO_PROVIDER ON)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/ComponentGuard.cmake)

# tunefleet_android_stub(TARGET PACKAGE): an imported target whose link
# item is a library that does not exist, so a link that uses it fails with
# "unable to find library -ltunefleet-android-stub-PACKAGE" (OpenCL's:
# headers only, nothing may link it).
function(tunefleet_android_stub target package)
  if(NOT TARGET ${target})
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES
      "tunefleet-android-stub-${package}-is-not-built-for-android")
  endif()
endfunction()

# A macro, so that the <Package>_FOUND variables it sets reach the caller.
macro(tunefleet_android_provide_package method package)
  tunefleet_component_guard(${package})
  if("${package}" STREQUAL "OpenCL")
    if(NOT EXISTS "${TUNEFLEET_OPENCL_INCLUDE_DIR}/CL/cl.h")
      message(FATAL_ERROR "agent-deps: TUNEFLEET_OPENCL_INCLUDE_DIR="
        "'${TUNEFLEET_OPENCL_INCLUDE_DIR}' has no CL/cl.h (the Khronos "
        "headers; build-agent.sh copies opencl-c-headers' there)")
    endif()
    if(NOT TARGET OpenCL::OpenCL)
      tunefleet_android_stub(OpenCL::OpenCL OpenCL)
      set_target_properties(OpenCL::OpenCL PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${TUNEFLEET_OPENCL_INCLUDE_DIR}")
    endif()
    set(OpenCL_FOUND TRUE)
    set(OpenCL_INCLUDE_DIRS "${TUNEFLEET_OPENCL_INCLUDE_DIR}")
    message(STATUS "agent-deps: OpenCL headers only "
      "(${TUNEFLEET_OPENCL_INCLUDE_DIR}; the agent loads libOpenCL.so at run time)")
  else()
    find_package(${package} ${ARGN} BYPASS_PROVIDER)
    if("${package}" STREQUAL "gRPC" AND gRPC_FOUND AND
       NOT TARGET gRPC::grpc_cpp_plugin)
      if(NOT TUNEFLEET_HOST_GRPC_CPP_PLUGIN)
        find_program(TUNEFLEET_HOST_GRPC_CPP_PLUGIN grpc_cpp_plugin
                     NO_CMAKE_FIND_ROOT_PATH)
      endif()
      if(NOT EXISTS "${TUNEFLEET_HOST_GRPC_CPP_PLUGIN}")
        message(FATAL_ERROR "agent-deps: the host's grpc_cpp_plugin is "
          "needed (TUNEFLEET_HOST_GRPC_CPP_PLUGIN; apt-get install "
          "protobuf-compiler-grpc)")
      endif()
      add_executable(gRPC::grpc_cpp_plugin IMPORTED GLOBAL)
      set_target_properties(gRPC::grpc_cpp_plugin PROPERTIES
        IMPORTED_LOCATION "${TUNEFLEET_HOST_GRPC_CPP_PLUGIN}")
      message(STATUS "agent-deps: gRPC::grpc_cpp_plugin is the host's "
        "${TUNEFLEET_HOST_GRPC_CPP_PLUGIN}")
    endif()
  endif()
endmacro()

cmake_language(SET_DEPENDENCY_PROVIDER tunefleet_android_provide_package
               SUPPORTED_METHODS FIND_PACKAGE)
