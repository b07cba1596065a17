# CPACK_PROJECT_CONFIG_FILE of a cross build (cmake/Packaging.cmake): CPackDeb
# runs this build's packaging/dpkg-shlibdeps (sysroot-shlibdeps.sh, which
# reads the sysroot's dpkg database) where it would run the host's
# dpkg-shlibdeps.
if(CPACK_GENERATOR STREQUAL "DEB" AND CPACK_TUNEFLEET_SHLIBDEPS)
  set(SHLIBDEPS_EXECUTABLE "${CPACK_TUNEFLEET_SHLIBDEPS}")
endif()
