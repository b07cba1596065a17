# The Android build of tunefleet-agent configures the root CMakeLists.txt as
# it is, which find_package()s every dependency of the server, the CLI and
# the tests too. This file, read by its project() call
# (-DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=deploy/android/agent-deps.cmake;
# CMake 3.24), sets a dependency provider that answers those calls:
#  - xgboost, ONNX, SQLite3: not built for Android (only the server and the
#    CLI link them): stub targets that fail the link of anything that uses
#    them, naming the package (only tunefleet-agent is built);
#  - OpenCL: the Khronos headers in TUNEFLEET_OPENCL_INCLUDE_DIR and no
#    library: the agent loads libOpenCL.so at run time (opencl_loader.h),
#    so nothing may link one;
#  - gRPC: found as usual; a gRPC cross-built without its code generators
#    (gRPC_BUILD_CODEGEN=OFF) gets gRPC::grpc_cpp_plugin from the host
#    (TUNEFLEET_HOST_GRPC_CPP_PLUGIN, default: grpc_cpp_plugin on PATH), as
#    protoc is the host's (Protobuf_PROTOC_EXECUTABLE), and a stub for
#    gRPC::grpc++_reflection, which such a gRPC lacks and only the server
#    links;
#  - everything else: find_package() as if there were no provider.
# A package the root CMakeLists.txt starts to need for the server or the
# CLI only goes into the stub list below.

set(TUNEFLEET_ANDROID_STUBS xgboost ONNX SQLite3)

# tunefleet_android_stub(TARGET PACKAGE): an imported target whose link
# item is a library that does not exist, so a link that uses it fails with
# "unable to find library -ltunefleet-android-stub-PACKAGE".
function(tunefleet_android_stub target package)
  if(NOT TARGET ${target})
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES
      "tunefleet-android-stub-${package}-is-not-built-for-android")
  endif()
endfunction()

# A macro, so that the <Package>_FOUND variables it sets reach the caller.
macro(tunefleet_android_provide_package method package)
  if("${package}" IN_LIST TUNEFLEET_ANDROID_STUBS)
    if("${package}" STREQUAL "xgboost")
      tunefleet_android_stub(xgboost::xgboost xgboost)
    elseif("${package}" STREQUAL "ONNX")
      tunefleet_android_stub(onnx ONNX)
      tunefleet_android_stub(onnx_proto ONNX)
    elseif("${package}" STREQUAL "SQLite3")
      tunefleet_android_stub(SQLite::SQLite3 SQLite3)
    endif()
    set(${package}_FOUND TRUE)
    message(STATUS "agent-deps: ${package} stubbed (not built for Android)")
  elseif("${package}" STREQUAL "OpenCL")
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
       NOT TARGET gRPC::grpc++_reflection)
      tunefleet_android_stub(gRPC::grpc++_reflection gRPC-reflection)
      message(STATUS "agent-deps: gRPC::grpc++_reflection stubbed (server only)")
    endif()
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
