# tunefleet's components, and which dependencies and folders each needs:
# the one place that says it (docs/BUILDING.md). The root CMakeLists.txt
# builds the components named in TUNEFLEET_COMPONENTS and finds only their
# dependencies; scripts ask this file for the Debian packages of a set of
# components (script mode, at the end: the arm64 rootfs, the agent-only
# check of CI, the Android build's list check).
#
# Components (-DTUNEFLEET_COMPONENTS=agent, a list with ";" or ",";
# default "all" = agent;server;cli):
#   agent   tunefleet-agent, what runs on boards and phones
#   server  tunefleet-server
#   cli     the tunefleet CLI; builds the server's libraries and the agent
#           too (`tunefleet tune` without --server runs both beside it)
#   tests   tests/ (TUNEFLEET_BUILD_TESTS): every component above, GTest
#   bench   bench/ (TUNEFLEET_BUILD_BENCH): the cli's
# tests and bench are built only where the components they need are
# selected (an agent-only build has neither).
include_guard(GLOBAL)
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  cmake_minimum_required(VERSION 3.25)
endif()

set(TUNEFLEET_ALL_COMPONENTS agent server cli)
# What a component builds besides itself.
set(TUNEFLEET_COMPONENT_IMPLIES_cli agent server)
set(TUNEFLEET_COMPONENT_IMPLIES_tests agent server cli)
set(TUNEFLEET_COMPONENT_IMPLIES_bench agent server cli)

# tunefleet_dependency(<CMake package name> FOR <component>...
#   [OPTIONAL] [IF <variable>]
#   [FIND <find_package arguments>... | PKG_CONFIG <prefix> <module>]
#   [DEB <package>...] [HOST <package>...])
# FIND: find_package(<name> <arguments> [REQUIRED]); PKG_CONFIG:
# pkg_check_modules(<prefix> [REQUIRED] IMPORTED_TARGET GLOBAL <module>)
# (target PkgConfig::<prefix>); neither: the folder that uses it finds it.
# OPTIONAL: not REQUIRED (<name>_FOUND / <prefix>_FOUND tell); IF: looked
# for only where the variable is true. DEB: the Debian 12 packages of the
# target's architecture (headers, libraries: what a sysroot needs); HOST:
# packages of the build machine (code generators, files embedded).
function(tunefleet_dependency name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "OPTIONAL" "IF"
                        "FOR;FIND;PKG_CONFIG;DEB;HOST")
  if(NOT ARG_FOR)
    message(FATAL_ERROR "tunefleet_dependency(${name}): FOR <component>... missing")
  endif()
  set_property(GLOBAL APPEND PROPERTY TUNEFLEET_DEPENDENCIES ${name})
  foreach(key FOR FIND PKG_CONFIG DEB HOST IF OPTIONAL)
    set_property(GLOBAL PROPERTY TUNEFLEET_DEP_${name}_${key} "${ARG_${key}}")
  endforeach()
endfunction()

# tunefleet_folder(<folder> FOR <component>...): a library folder and the
# components that build it, in add_subdirectory() order.
function(tunefleet_folder folder)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "FOR")
  set_property(GLOBAL APPEND PROPERTY TUNEFLEET_FOLDERS ${folder})
  set_property(GLOBAL PROPERTY TUNEFLEET_FOLDER_${folder}_FOR "${ARG_FOR}")
endfunction()

# --- the table ------------------------------------------------------------
# Dependency       used by            how found                          Debian 12
tunefleet_dependency(Threads       FOR agent server FIND Threads)
tunefleet_dependency(absl          FOR agent server FIND absl CONFIG     DEB libabsl-dev)
tunefleet_dependency(Protobuf      FOR agent server FIND Protobuf        DEB libprotobuf-dev
                                                                         HOST protobuf-compiler)
tunefleet_dependency(gRPC          FOR agent server FIND gRPC CONFIG     DEB libgrpc++-dev
                                                                         HOST protobuf-compiler-grpc)
# base/ (hashes: libcrypto), auth/ (TLS: libssl).
tunefleet_dependency(OpenSSL       FOR agent server FIND OpenSSL         DEB libssl-dev)
# kernels_templates/: the template specs (expressions, TOML, JSON).
tunefleet_dependency(muparser      FOR agent server FIND muparser CONFIG DEB libmuparser-dev)
tunefleet_dependency(tomlplusplus  FOR agent server FIND tomlplusplus CONFIG
                                                                         DEB libtomlplusplus-dev)
tunefleet_dependency(nlohmann_json FOR agent server FIND nlohmann_json CONFIG
                                                                         DEB nlohmann-json3-dev)
tunefleet_dependency(CLI11         FOR agent server FIND CLI11 CONFIG    DEB libcli11-dev)
# logging/: the daemons' log (spdlog, built on fmt: its config finds fmt).
tunefleet_dependency(spdlog        FOR agent server FIND spdlog CONFIG   DEB libspdlog-dev
                                                                             libfmt-dev)
# opencl/: the headers; tunefleet-agent loads libOpenCL at run time
# (opencl_loader.h), tests and benchmarks link it.
tunefleet_dependency(OpenCL        FOR agent        FIND OpenCL          DEB ocl-icd-opencl-dev
                                                                             opencl-headers)
# search_space/ (recorded tables, gzip); the agent gets zlib through gRPC only.
tunefleet_dependency(ZLIB          FOR server       FIND ZLIB            DEB zlib1g-dev)
# cost_model/: the XGBoost ranking model.
tunefleet_dependency(xgboost       FOR server       FIND xgboost CONFIG  DEB libxgboost-dev)
# store/: the tuning-record database.
tunefleet_dependency(SQLite3       FOR server       FIND SQLite3         DEB libsqlite3-dev)
# dashboard/: the HTTP server (cpp-httplib, built with OpenSSL) and Chart.js,
# embedded at build time (dashboard/CMakeLists.txt finds the file).
tunefleet_dependency(cpp-httplib   FOR server       PKG_CONFIG CPP_HTTPLIB cpp-httplib
                                                                         DEB libcpp-httplib-dev)
tunefleet_dependency(Chart.js      FOR server                            HOST libjs-chart.js)
# metrics/: /metrics (prometheus-cpp's core only).
tunefleet_dependency(prometheus-cpp FOR server      FIND prometheus-cpp CONFIG COMPONENTS core
                                                                         DEB prometheus-cpp-dev)
# tunefleet-server's allocator, where found (TUNEFLEET_JEMALLOC, root
# CMakeLists.txt).
tunefleet_dependency(jemalloc      FOR server OPTIONAL IF TUNEFLEET_FIND_JEMALLOC
                                   PKG_CONFIG JEMALLOC jemalloc          DEB libjemalloc-dev)
# onnx_import/: the tuning tasks of an ONNX model (the CLI only).
tunefleet_dependency(ONNX          FOR cli          FIND ONNX CONFIG     DEB libonnx-dev)
tunefleet_dependency(GTest         FOR tests        FIND GTest CONFIG    DEB libgtest-dev
                                                                             libgmock-dev)
# bench/gemm_vs_clblast, where found (bench/CMakeLists.txt finds it).
tunefleet_dependency(CLBlast       FOR bench OPTIONAL                    DEB libclblast-dev)

# Folder             built for
tunefleet_folder(base              FOR agent server)
tunefleet_folder(logging           FOR agent server)
tunefleet_folder(kernel_policy     FOR agent server)
tunefleet_folder(proto             FOR agent server)
tunefleet_folder(contract          FOR agent server)
tunefleet_folder(kernels_templates FOR agent server)
tunefleet_folder(data_source       FOR server)
tunefleet_folder(cost_model        FOR server)
tunefleet_folder(trial             FOR agent server)
tunefleet_folder(search_space      FOR server)
tunefleet_folder(search            FOR server)
tunefleet_folder(client            FOR agent)
tunefleet_folder(auth              FOR server)
tunefleet_folder(metrics           FOR server)
tunefleet_folder(validation        FOR server)
tunefleet_folder(store             FOR server)
tunefleet_folder(transfer          FOR server)
tunefleet_folder(bundle            FOR server)
tunefleet_folder(onnx_import       FOR cli)
tunefleet_folder(model_runtime     FOR agent)
tunefleet_folder(emitter           FOR cli)
tunefleet_folder(plan_builder      FOR cli)
tunefleet_folder(progress          FOR server)
tunefleet_folder(dashboard         FOR server)
tunefleet_folder(server            FOR server)
tunefleet_folder(library_backends  FOR agent)
tunefleet_folder(opencl            FOR agent)
tunefleet_folder(measure           FOR agent)
tunefleet_folder(model_run         FOR agent)
tunefleet_folder(model_run_remote  FOR agent)
tunefleet_folder(device_agent      FOR agent)
tunefleet_folder(cli               FOR cli)

# --- functions ------------------------------------------------------------

# tunefleet_resolve_components(<out> <requested>): the requested components
# ("all", or a list with ";" or ","), checked, with what they imply, in the
# order of TUNEFLEET_ALL_COMPONENTS (then tests, bench).
function(tunefleet_resolve_components out requested)
  string(REPLACE "," ";" requested "${requested}")
  string(STRIP "${requested}" requested)
  if(requested STREQUAL "" OR requested STREQUAL "all")
    set(requested ${TUNEFLEET_ALL_COMPONENTS})
  endif()
  set(known ${TUNEFLEET_ALL_COMPONENTS} tests bench)
  set(selected "")
  foreach(c IN LISTS requested)
    string(STRIP "${c}" c)
    if(NOT c IN_LIST known)
      string(REPLACE ";" ", " names "${known}")
      message(FATAL_ERROR "TUNEFLEET_COMPONENTS: unknown component '${c}' "
        "(known: ${names}, or all)")
    endif()
    list(APPEND selected ${c} ${TUNEFLEET_COMPONENT_IMPLIES_${c}})
  endforeach()
  set(ordered "")
  foreach(c IN LISTS known)
    if(c IN_LIST selected)
      list(APPEND ordered ${c})
    endif()
  endforeach()
  set(${out} "${ordered}" PARENT_SCOPE)
endfunction()

# tunefleet_select_components(<out> <requested> <build tests> <build
# bench> [QUIET]): the components to build: the requested ones resolved,
# with tests and bench where their options are on and the components they
# need are selected (else a status line says why not).
function(tunefleet_select_components out requested build_tests build_bench)
  tunefleet_resolve_components(selected "${requested}")
  foreach(extra tests bench)
    set(missing ${TUNEFLEET_COMPONENT_IMPLIES_${extra}})
    list(REMOVE_ITEM missing ${selected})
    if((extra STREQUAL "tests" AND NOT build_tests) OR
       (extra STREQUAL "bench" AND NOT build_bench))
      list(REMOVE_ITEM selected ${extra})
    elseif(missing)
      list(REMOVE_ITEM selected ${extra})
      if(NOT "QUIET" IN_LIST ARGN)
        string(REPLACE ";" ", " missing "${missing}")
        message(STATUS "${extra}/ is not built: it needs the components "
                       "${missing} too")
      endif()
    elseif(NOT extra IN_LIST selected)
      list(APPEND selected ${extra})
    endif()
  endforeach()
  set(${out} "${selected}" PARENT_SCOPE)
endfunction()

# tunefleet_components_need(<out> <components> <FOR list>): true where one
# of the components is in the FOR list.
function(tunefleet_components_need out components for)
  set(need FALSE)
  foreach(c IN LISTS components)
    if(c IN_LIST for)
      set(need TRUE)
    endif()
  endforeach()
  set(${out} ${need} PARENT_SCOPE)
endfunction()

# tunefleet_needed_entries(<out> <list> <prefix> <components>): the entries
# of the global property <list> (in its order) whose global property
# <prefix>_<entry>_FOR names one of the components.
function(tunefleet_needed_entries out list prefix components)
  get_property(entries GLOBAL PROPERTY ${list})
  set(result "")
  foreach(e IN LISTS entries)
    get_property(for GLOBAL PROPERTY ${prefix}_${e}_FOR)
    tunefleet_components_need(need "${components}" "${for}")
    if(need)
      list(APPEND result ${e})
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# tunefleet_dependencies_of(<out> <components>): the dependencies (CMake
# package names) that the components need, in table order.
function(tunefleet_dependencies_of out components)
  tunefleet_needed_entries(result TUNEFLEET_DEPENDENCIES TUNEFLEET_DEP
                           "${components}")
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# tunefleet_find_dependencies(<components>): finds what the components
# need, as the table says (called by the root CMakeLists.txt). Sets
# TUNEFLEET_FOUND_DEPENDENCIES.
macro(tunefleet_find_dependencies components)
  tunefleet_dependencies_of(_tf_deps "${components}")
  foreach(_tf_dep IN LISTS _tf_deps)
    get_property(_tf_find GLOBAL PROPERTY TUNEFLEET_DEP_${_tf_dep}_FIND)
    get_property(_tf_pc GLOBAL PROPERTY TUNEFLEET_DEP_${_tf_dep}_PKG_CONFIG)
    get_property(_tf_if GLOBAL PROPERTY TUNEFLEET_DEP_${_tf_dep}_IF)
    get_property(_tf_optional GLOBAL PROPERTY TUNEFLEET_DEP_${_tf_dep}_OPTIONAL)
    set(_tf_required REQUIRED)
    if(_tf_optional)
      set(_tf_required "")
    endif()
    if(_tf_if AND NOT ${_tf_if})
      continue()
    endif()
    if(_tf_find)
      list(POP_FRONT _tf_find _tf_name)
      find_package(${_tf_name} ${_tf_required} ${_tf_find})
    elseif(_tf_pc)
      list(GET _tf_pc 0 _tf_prefix)
      list(GET _tf_pc 1 _tf_module)
      find_package(PkgConfig REQUIRED)
      pkg_check_modules(${_tf_prefix} ${_tf_required} IMPORTED_TARGET GLOBAL
                        ${_tf_module})
    endif()
  endforeach()
  set(TUNEFLEET_FOUND_DEPENDENCIES ${_tf_deps})
endmacro()

# tunefleet_folders_of(<out> <components>): the folders the components
# build, in add_subdirectory() order.
function(tunefleet_folders_of out components)
  tunefleet_needed_entries(result TUNEFLEET_FOLDERS TUNEFLEET_FOLDER
                           "${components}")
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# tunefleet_packages_of(<out> <components> DEB|HOST [REQUIRED_ONLY]): the
# Debian packages of the components' dependencies.
function(tunefleet_packages_of out components kind)
  tunefleet_dependencies_of(deps "${components}")
  set(result "")
  foreach(d IN LISTS deps)
    get_property(optional GLOBAL PROPERTY TUNEFLEET_DEP_${d}_OPTIONAL)
    if(optional AND "REQUIRED_ONLY" IN_LIST ARGN)
      continue()
    endif()
    get_property(pkgs GLOBAL PROPERTY TUNEFLEET_DEP_${d}_${kind})
    list(APPEND result ${pkgs})
  endforeach()
  list(REMOVE_DUPLICATES result)
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# --- script mode: what the scripts ask -------------------------------------
#   cmake -DCOMPONENTS=agent -DQUERY=deb -P cmake/Components.cmake
# QUERY: components (the resolved list), dependencies (CMake package
# names), folders, deb (the target's packages; REQUIRED_ONLY=ON leaves the
# optional ones out), host (the build machine's), table (every dependency:
# name, components, optional, deb, host; tab-separated). One item a line.
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT DEFINED QUERY)
    message(FATAL_ERROR "Components.cmake: -DQUERY=components|dependencies|"
      "folders|deb|host|table [-DCOMPONENTS=agent,...] -P cmake/Components.cmake")
  endif()
  if(NOT DEFINED COMPONENTS)
    set(COMPONENTS all)
  endif()
  tunefleet_resolve_components(_tf_components "${COMPONENTS}")
  set(_tf_flags "")
  if(REQUIRED_ONLY)
    set(_tf_flags REQUIRED_ONLY)
  endif()
  if(QUERY STREQUAL "components")
    set(_tf_out ${_tf_components})
  elseif(QUERY STREQUAL "dependencies")
    tunefleet_dependencies_of(_tf_out "${_tf_components}")
  elseif(QUERY STREQUAL "folders")
    tunefleet_folders_of(_tf_out "${_tf_components}")
  elseif(QUERY STREQUAL "deb")
    tunefleet_packages_of(_tf_out "${_tf_components}" DEB ${_tf_flags})
  elseif(QUERY STREQUAL "host")
    tunefleet_packages_of(_tf_out "${_tf_components}" HOST ${_tf_flags})
  elseif(QUERY STREQUAL "table")
    get_property(_tf_deps GLOBAL PROPERTY TUNEFLEET_DEPENDENCIES)
    set(_tf_out "")
    foreach(_tf_dep IN LISTS _tf_deps)
      set(_tf_line "${_tf_dep}")
      foreach(_tf_key FOR OPTIONAL DEB HOST)
        get_property(_tf_v GLOBAL PROPERTY TUNEFLEET_DEP_${_tf_dep}_${_tf_key})
        string(REPLACE ";" "," _tf_v "${_tf_v}")
        string(APPEND _tf_line "\t${_tf_v}")
      endforeach()
      list(APPEND _tf_out "${_tf_line}")
    endforeach()
  else()
    message(FATAL_ERROR "Components.cmake: unknown QUERY '${QUERY}'")
  endif()
  if(_tf_out)
    list(JOIN _tf_out "\n" _tf_out)
    execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${_tf_out}")
  endif()
endif()
