# shellcheck shell=bash disable=SC2034  # sets CCACHE_LAUNCHER for the caller
# Sourced by deploy/build.sh, deploy/check-agent-only.sh and
# deploy/run-tests.sh (which hands ccache to the tests' CMake builds): sets
# CCACHE_LAUNCHER to CMake's compiler-launcher arguments, ccache where it is
# installed (deploy/install-deps.sh installs it when it can), else none
# (which also clears a launcher an earlier configure set).
# TUNEFLEET_CCACHE=0 turns it off. CCACHE_BASEDIR defaults to the checkout:
# paths under it are hashed relative to the build folder, so two build
# folders of one checkout with the same flags share their objects (the
# agent-only check's and the suite's: docs/BUILDING.md, "Time").
# CCACHE_ON is 1 when ccache is used, else 0.
CCACHE_ON=0
if [ "${TUNEFLEET_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  CCACHE_ON=1
  CCACHE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
    -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  # Depend mode: a miss is one compile (its -MD list of headers goes into
  # the cache), not a preprocessor run and then a compile.
  CCACHE_DEPEND=${CCACHE_DEPEND:-1}
  export CCACHE_BASEDIR CCACHE_DEPEND
else
  CCACHE_LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_C_COMPILER_LAUNCHER=)
fi
