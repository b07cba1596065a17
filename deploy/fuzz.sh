#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-14 (ASan + UBSan,
# -DTUNEFLEET_FUZZ=ON) in build-fuzz and runs each for a bounded time,
# starting from its seed corpus: the text seeds in tests/fuzz/corpus/<target>
# and the binary ones make_fuzz_seeds writes to
# build-fuzz/tests/fuzz/seeds/<target>. Prints the
# executions per target; exits non-zero when a target crashed, leaked, hit
# undefined behaviour or timed out (the reproducer lands in
# build-fuzz/fuzz-artifacts/; once fixed, add it as a regression input
# named crash-<what>: a text file in the corpus, or a binary one built by
# tests/fuzz/make_fuzz_seeds.cc).
#
#   bash deploy/fuzz.sh [SECONDS_PER_TARGET (60)] [TARGET...]
#
# Targets: validation_fuzzer spec_fuzzer toml_spec_fuzzer
# kernel_source_fuzzer onnx_fuzzer table_fuzzer npy_fuzzer http_fuzzer
# bundle_fuzzer.
# Environment: BUILD_DIR (build-fuzz), JOBS (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(validation_fuzzer spec_fuzzer toml_spec_fuzzer kernel_source_fuzzer
    onnx_fuzzer table_fuzzer npy_fuzzer http_fuzzer bundle_fuzzer)
fi
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-$(nproc)}

CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD_DIR" -DTUNEFLEET_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEFLEET_BUILD_BENCH=OFF >/dev/null
nice cmake --build "$BUILD_DIR" --target "${TARGETS[@]}" make_fuzz_seeds \
  -j "$JOBS"

# New inputs go to a scratch corpus in the build dir; the seeds in the
# repository stay as they are.
ARTIFACTS=$ROOT/$BUILD_DIR/fuzz-artifacts
mkdir -p "$ARTIFACTS"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS_EXTRA:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
summary=()
for t in "${TARGETS[@]}"; do
  work=$ROOT/$BUILD_DIR/fuzz-corpus/$t
  log=$ROOT/$BUILD_DIR/fuzz-$t.log
  mkdir -p "$work"
  echo "== $t: ${SECONDS_PER_TARGET} s"
  rc=0
  seeds=("$ROOT/$BUILD_DIR/tests/fuzz/seeds/$t")
  [ -d "tests/fuzz/corpus/$t" ] && seeds+=("tests/fuzz/corpus/$t")
  "$ROOT/$BUILD_DIR/tests/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$ARTIFACTS/$t-" "$work" "${seeds[@]}" \
    >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' \
    "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  if [ $rc -ne 0 ]; then
    failed=1
    runs="FAILED (exit $rc): $(grep -m1 -E 'ERROR|runtime error|deadly' "$log" || true)"
  fi
  summary+=("$(printf '%-18s %s, %s, corpus %s files' "$t" "${runs:-no stats}" \
    "${cov:-cov ?}" "$(ls "$work" | wc -l)")")
done
echo
echo "fuzz.sh: ${SECONDS_PER_TARGET} s per target (logs: $BUILD_DIR/fuzz-*.log)"
printf '%s\n' "${summary[@]}"
ls "$ARTIFACTS" | sed 's/^/artifact: /' || true
exit $failed
