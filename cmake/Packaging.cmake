# .deb packages with CPack (DEB generator), one per install component:
#   agent  -> tunefleet-agent   /usr/bin/tunefleet-agent, its systemd unit,
#                               /etc/tunefleet/agent.conf (conffile)
#   server -> tunefleet-server  /usr/bin/tunefleet-server, its systemd unit,
#                               /etc/tunefleet/server.conf (conffile)
#   cli    -> tunefleet         /usr/bin/tunefleet
# The binaries' install() rules are in server/, device_agent/ and cli/; the
# units, config files and maintainer scripts in deploy/packaging/.
# deploy/packaging/make-debs.sh [BUILD_DIR [OUT_DIR]] makes the packages from
# a build directory; deploy/packaging/test-debs.sh installs and checks them.
#
# The architecture is the target's (CMAKE_SYSTEM_PROCESSOR), not the host's:
# a cross build (cmake/toolchains/aarch64-linux-gnu.cmake) makes arm64
# packages. Depends: comes from dpkg-shlibdeps on the packaged binaries; in a
# cross build it reads the sysroot's dpkg database instead
# (deploy/packaging/sysroot-shlibdeps.sh), which needs CMAKE_SYSROOT to be a
# Debian root file system.

set(TUNEFLEET_PACKAGING_DIR ${CMAKE_SOURCE_DIR}/deploy/packaging)

# cpack (and `make install`) must not build the whole project, tests
# included, serially first: make-debs.sh builds the three binaries.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# The files beside the binaries. EXCLUDE_FROM_ALL: a plain `cmake --install`
# installs the binaries only; these come with a component install (what CPack
# does), at absolute paths whatever the prefix.
# Only those of the components configured (TUNEFLEET_COMPONENTS).
# Each: <component>/tunefleet-<component>.service and <component>.conf.
foreach(component agent server)
  string(TOUPPER ${component} upper)
  if(TUNEFLEET_WITH_${upper})
    install(FILES ${TUNEFLEET_PACKAGING_DIR}/${component}/tunefleet-${component}.service
            DESTINATION /lib/systemd/system COMPONENT ${component}
            EXCLUDE_FROM_ALL)
    install(FILES ${TUNEFLEET_PACKAGING_DIR}/${component}/${component}.conf
            DESTINATION /etc/tunefleet COMPONENT ${component} EXCLUDE_FROM_ALL)
  endif()
endforeach()

# Debian's name for the target architecture.
string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _tunefleet_processor)
if(_tunefleet_processor MATCHES "^(x86_64|amd64)$")
  set(_tunefleet_deb_arch amd64)
elseif(_tunefleet_processor MATCHES "^(aarch64|arm64)$")
  set(_tunefleet_deb_arch arm64)
elseif(_tunefleet_processor MATCHES "^armv?7")
  set(_tunefleet_deb_arch armhf)
elseif(_tunefleet_processor MATCHES "^(i[3-6]86|x86)$")
  set(_tunefleet_deb_arch i386)
elseif(_tunefleet_processor MATCHES "^riscv64$")
  set(_tunefleet_deb_arch riscv64)
else()
  set(_tunefleet_deb_arch ${_tunefleet_processor})
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tunefleet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR tunefleet)
# The Maintainer: field; -DCPACK_PACKAGE_CONTACT="Name <mail>" sets a real one.
if(NOT CPACK_PACKAGE_CONTACT)
  set(CPACK_PACKAGE_CONTACT "tunefleet maintainers <tunefleet@localhost>")
endif()
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPackDeb would put it above every
# package's own summary (the first line of CPACK_DEBIAN_<C>_DESCRIPTION).
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# The packages of the components configured (TUNEFLEET_COMPONENTS).
set(CPACK_COMPONENTS_ALL "")
foreach(_tunefleet_component agent server cli)
  string(TOUPPER ${_tunefleet_component} _tunefleet_upper)
  if(TUNEFLEET_WITH_${_tunefleet_upper})
    list(APPEND CPACK_COMPONENTS_ALL ${_tunefleet_component})
  endif()
endforeach()
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)

set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_tunefleet_deb_arch})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # NAME_VERSION-RELEASE_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
if(CMAKE_CROSSCOMPILING)
  # dpkg-shlibdeps finds libraries in the host's dpkg database only (or in
  # multiarch packages of the target's architecture installed on the host);
  # sysroot-shlibdeps.sh asks the sysroot's.
  set(_tunefleet_deb_sysroot "${CMAKE_SYSROOT}")
  if(NOT _tunefleet_deb_sysroot AND CMAKE_FIND_ROOT_PATH)
    list(GET CMAKE_FIND_ROOT_PATH 0 _tunefleet_deb_sysroot)
  endif()
  if(_tunefleet_deb_sysroot AND EXISTS "${_tunefleet_deb_sysroot}/var/lib/dpkg/status")
    configure_file(${TUNEFLEET_PACKAGING_DIR}/dpkg-shlibdeps.in
                   ${CMAKE_BINARY_DIR}/packaging/dpkg-shlibdeps @ONLY
                   FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
                                    GROUP_READ GROUP_EXECUTE
                                    WORLD_READ WORLD_EXECUTE)
    set(CPACK_TUNEFLEET_SHLIBDEPS ${CMAKE_BINARY_DIR}/packaging/dpkg-shlibdeps)
    set(CPACK_PROJECT_CONFIG_FILE ${TUNEFLEET_PACKAGING_DIR}/cpack-cross.cmake)
  else()
    message(WARNING "Packaging: the sysroot '${_tunefleet_deb_sysroot}' is not "
            "a Debian root file system (no var/lib/dpkg/status): the "
            "${_tunefleet_deb_arch} packages get no library Depends.")
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  endif()
endif()

set(CPACK_DEBIAN_AGENT_PACKAGE_NAME tunefleet-agent)
set(CPACK_DEBIAN_AGENT_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.54~)")
# An OpenCL library: the ICD loader (with the drivers' ICDs), or a vendor's
# libOpenCL.so (boards, phones); clinfo lists the platforms and devices
# (--platform, --device).
set(CPACK_DEBIAN_AGENT_PACKAGE_RECOMMENDS "ocl-icd-libopencl1 | libopencl1")
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS "clinfo")
set(CPACK_DEBIAN_AGENT_DESCRIPTION
    "tunefleet device agent (systemd service)
Serves one OpenCL device of this machine (a GPU of a board or phone, or a
CPU) to a tunefleet-server: builds, verifies and times the kernels the
server sends, in a supervised worker process. The service runs as the user
tunefleet-agent (groups video and render); it is enabled on install and
starts once /etc/tunefleet/agent.conf names a server.")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA
    ${TUNEFLEET_PACKAGING_DIR}/agent/conffiles
    ${TUNEFLEET_PACKAGING_DIR}/agent/postinst
    ${TUNEFLEET_PACKAGING_DIR}/agent/prerm
    ${TUNEFLEET_PACKAGING_DIR}/agent/postrm)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME tunefleet-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.54~)")
# `tunefleet token add` manages the server's tokens file.
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS tunefleet)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "tunefleet server (systemd service)
The tuning daemon: device agents dial in, clients submit and watch tuning
jobs and query records over gRPC, with bearer tokens and TLS. Everything is
stored in a SQLite database under /var/lib/tunefleet, which removing (and
purging) the package keeps. The service runs as the user tunefleet.")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${TUNEFLEET_PACKAGING_DIR}/server/conffiles
    ${TUNEFLEET_PACKAGING_DIR}/server/postinst
    ${TUNEFLEET_PACKAGING_DIR}/server/prerm
    ${TUNEFLEET_PACKAGING_DIR}/server/postrm)

set(CPACK_DEBIAN_CLI_PACKAGE_NAME tunefleet)
# `tunefleet tune` without --server starts tunefleet-agent from its own
# directory (the embedded default).
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS tunefleet-agent)
set(CPACK_DEBIAN_CLI_DESCRIPTION
    "command-line client of the tunefleet auto-tuner
Tunes kernels and models (tune, watch, jobs, cancel), queries tuning
records and emits a tuned library, manages the server's tokens. Without
--server, `tunefleet tune` runs a server and tunefleet-agent of its own on
this machine (package tunefleet-agent).")

include(CPack)

# ctest -L packaging: deploy/packaging/test-debs.sh installs the packages
# into this system (as root, with apt-get) and purges them again, so it is
# skipped (exit 77) unless TUNEFLEET_PACKAGING_TEST=1:
#   cd build && sudo TUNEFLEET_PACKAGING_TEST=1 ctest -L packaging --output-on-failure
if(TUNEFLEET_WITH_TESTS AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME packaging_debs
           COMMAND ${TUNEFLEET_PACKAGING_DIR}/test-debs.sh --ctest ${CMAKE_BINARY_DIR})
  set_tests_properties(packaging_debs PROPERTIES
    LABELS packaging SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
