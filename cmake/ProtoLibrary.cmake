# tunefleet_proto_library(<target> PROTOS <file.proto>... [GRPC <file.proto>...]
#                         [DEPS <target>...])
# A static library of the Protobuf messages (and, for the files listed
# under GRPC, the gRPC stubs) generated from .proto files of the current
# folder. Paths are resolved from the repository root, so a file imports
# "tunefleet/v1/common.proto" and its generated header is included as
# "<folder>/<stem>.pb.h".
function(tunefleet_proto_library target)
  cmake_parse_arguments(ARG "" "" "PROTOS;GRPC;DEPS" ${ARGN})
  set(srcs)
  foreach(p ${ARG_PROTOS})
    get_filename_component(stem ${p} NAME_WE)
    get_filename_component(abs ${CMAKE_CURRENT_SOURCE_DIR}/${p} ABSOLUTE)
    get_filename_component(abs_dir ${abs} DIRECTORY)
    set(root ${CMAKE_SOURCE_DIR})
    if(abs MATCHES "^${CMAKE_SOURCE_DIR}/proto/")
      set(root ${CMAKE_SOURCE_DIR}/proto)
    endif()
    file(RELATIVE_PATH rel_dir ${root} ${abs_dir})
    set(gen ${CMAKE_BINARY_DIR}/${rel_dir})
    set(outs ${gen}/${stem}.pb.cc ${gen}/${stem}.pb.h)
    set(grpc_args)
    if(p IN_LIST ARG_GRPC)
      list(APPEND outs ${gen}/${stem}.grpc.pb.cc ${gen}/${stem}.grpc.pb.h)
      set(grpc_args --grpc_out=${CMAKE_BINARY_DIR}
          --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
    endif()
    add_custom_command(
      OUTPUT ${outs}
      COMMAND protobuf::protoc
        --proto_path=${CMAKE_SOURCE_DIR}/proto
        --proto_path=${CMAKE_SOURCE_DIR}
        --cpp_out=${CMAKE_BINARY_DIR}
        ${grpc_args}
        ${abs}
      DEPENDS ${abs}
      COMMENT "protoc ${rel_dir}/${p}")
    list(APPEND srcs ${outs})
  endforeach()
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} PUBLIC ${CMAKE_BINARY_DIR})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf ${ARG_DEPS})
  if(ARG_GRPC)
    target_link_libraries(${target} PUBLIC gRPC::grpc++)
  endif()
  # Generated code is not ours to lint.
  target_compile_options(${target} PRIVATE -w)
  # protoc gives every .pb.cc the same file-local tables (schemas,
  # file_default_instances): one file a translation unit.
  set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
endfunction()
