# ctest -L board: the board test (deploy/arm64/board-test.sh), an arm64
# tunefleet-agent under qemu-user in the arm64 rootfs serving this build's
# tunefleet-server, tuning a GEMM and a conv2d to the end:
#   board_arm64           the cross-built agent and CLI (--cli)
#   board_arm64_packages  the agent and CLI from their arm64 .debs, installed
#                         into the rootfs with apt-get, run as the unit
#                         would, then removed and purged (--packages)
# It needs root, binfmt_misc, qemu-user-static, the cross compiler and (for
# the first rootfs) Debian's mirrors (bash deploy/arm64/install-deps.sh), and
# takes about 15 s and 30 s warm, minutes the first time (rootfs, cross
# build of build-arm64/, PoCL's kernel cache), so it is opt-in like
# packaging_debs: skipped (exit 77) unless TUNEFLEET_BOARD_TEST=1 and root.
#   cd build && sudo TUNEFLEET_BOARD_TEST=1 ctest -L board --output-on-failure
# `CI_STEPS=board bash .ci/run` runs board-test.sh --packages where the
# machine allows it; a longer check, not in CI's default steps
# (.ci/run, deploy/arm64/ci-board-test.sh; docs/BUILDING.md).
# The server and CLI are this build's (TUNEFLEET_HOST_BUILD); both tests use
# build-arm64/ and .cache/arm64/, so they never run beside each other.
if(TUNEFLEET_WITH_TESTS AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME board_arm64
           COMMAND ${CMAKE_SOURCE_DIR}/deploy/arm64/board-test.sh --ctest --cli)
  add_test(NAME board_arm64_packages
           COMMAND ${CMAKE_SOURCE_DIR}/deploy/arm64/board-test.sh --ctest --packages)
  set_tests_properties(board_arm64 board_arm64_packages PROPERTIES
    LABELS board
    SKIP_RETURN_CODE 77
    TIMEOUT 1800
    RUN_SERIAL TRUE
    ENVIRONMENT "TUNEFLEET_HOST_BUILD=${CMAKE_BINARY_DIR}")
endif()
