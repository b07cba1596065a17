#!/usr/bin/env bash
# The board test: an arm64 tunefleet-agent, cross-built, runs under
# qemu-user in the arm64 Debian rootfs (a chroot with /proc, /sys and /dev
# bound in, PoCL as its OpenCL device) and serves an amd64 tunefleet-server
# on 127.0.0.1 with a token; `tunefleet tune --server` tunes a small GEMM
# and a small conv2d to the end. Checked: both jobs end done with every
# trial measured OK and verified, in the server's SQLite database, and
# `tunefleet devices --json` lists the agent's device as an Arm CPU (PoCL).
#
#   sudo bash deploy/arm64/board-test.sh [--from-scratch] [--cli]
#
#   --from-scratch  remove the cached rootfs tarball, the rootfs, PoCL's
#                   kernel cache and build-arm64/ first (a fresh clone)
#   --cli           also cross-build the arm64 tunefleet CLI and run it in
#                   the chroot against the server (`devices`)
#   TRIALS=N        trials per job (default 8)
#   KEEP_WORK=1     keep the work directory (logs, database, tokens)
#
# Steps (each timed): make-rootfs.sh, build-agent.sh, the amd64 server and
# CLI from build/ (cmake --build under flock /tmp/build.lock, only the two
# targets), then the test. PoCL's kernel cache (.cache/arm64/pocl-kcache)
# is kept between runs. Exits non-zero with a message on any failure;
# processes and mounts are cleaned up on every exit. Needs root.
set -euo pipefail
source "$(dirname "$0")/common.sh"
arm64_need_root board-test.sh

from_scratch=0
cli_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --from-scratch) from_scratch=1 ;;
    --cli) cli_args=(--cli) ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) arm64_die "board-test.sh: unknown argument $1" ;;
  esac
  shift
done
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
  # The chroot's mounts live in the agent's own mount namespace and went
  # with it; anything left in ours (an older run) is unmounted here.
  local m
  for m in $(arm64_mounts_under "$ARM64_ROOTFS"); do
    umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  if [ -n "$work" ] && [ -d "$work" ]; then
    if [ "$rc" -ne 0 ]; then
      for log in server.log agent.log; do
        [ -f "$work/$log" ] || continue
        echo "--- last lines of $log" >&2
        tail -n 25 "$work/$log" >&2
      done
    fi
    if [ "$rc" -ne 0 ] || [ "${KEEP_WORK:-0}" = 1 ]; then
      echo "board-test: work directory kept: $work" >&2
    else
      rm -rf "$work"
    fi
  fi
  [ -d "$ARM64_ROOTFS/mnt/board-test" ] &&
    [ -z "$(arm64_mounts_under "$ARM64_ROOTFS/mnt/board-test")" ] &&
    rmdir "$ARM64_ROOTFS/mnt/board-test" 2>/dev/null
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

t0=$(arm64_now)
bash "$(dirname "$0")/make-rootfs.sh" >/dev/null || fail "make-rootfs.sh"
t_rootfs=$(arm64_elapsed "$t0")

t0=$(arm64_now)
agent_bin=$(bash "$(dirname "$0")/build-agent.sh" "${cli_args[@]}") ||
  fail "build-agent.sh"
t_build=$(arm64_elapsed "$t0")
file -L "$agent_bin" | grep -q 'ARM aarch64' || fail "$agent_bin is not aarch64"

# --- the amd64 server and CLI ---------------------------------------------
t0=$(arm64_now)
if [ ! -f "$HOST_BUILD/CMakeCache.txt" ]; then
  cmake -S "$TUNEFLEET_ROOT" -B "$HOST_BUILD" >/dev/null || fail "configure $HOST_BUILD"
fi
(cd "$HOST_BUILD" && flock /tmp/build.lock cmake --build . -j2 \
   --target tunefleet-server tunefleet >/dev/null) ||
  fail "building tunefleet-server and tunefleet in $HOST_BUILD"
t_host=$(arm64_elapsed "$t0")
server_bin=$HOST_BUILD/server/tunefleet-server
cli=$HOST_BUILD/cli/tunefleet
command -v sqlite3 >/dev/null || fail "sqlite3 missing (deploy/install-deps.sh)"

# --- the test -------------------------------------------------------------
t_test0=$(arm64_now)
arm64_ensure_binfmt
work=$(mktemp -d /tmp/tunefleet-board-test.XXXXXX)
chmod 755 "$work"

# The arm64 binaries, into the rootfs.
install -D -m 755 "$agent_bin" "$ARM64_ROOTFS/opt/tunefleet/bin/tunefleet-agent"
if [ ${#cli_args[@]} -gt 0 ]; then
  install -D -m 755 "$ARM64_BUILD_DIR/cli/tunefleet" \
    "$ARM64_ROOTFS/opt/tunefleet/bin/tunefleet"
fi

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
  address=$(sed -n 's/^tunefleet-server: listening on \([^ ]*\) .*/\1/p' \
            "$work/server.log" 2>/dev/null || true)
  [ -n "$address" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "tunefleet-server exited"
  sleep 0.1
done
[ -n "$address" ] || fail "tunefleet-server did not start listening"
arm64_log "server on $address (pid $server_pid)"
export TUNEFLEET_TOKEN_FILE=$work/tuner.token

# The agent: its own session (so that the cleanup ends it and its worker)
# and its own mount namespace (so that the chroot's mounts vanish with it).
mkdir -p "$ARM64_ROOTFS/mnt/board-test" "$ARM64_ROOTFS/var/cache/pocl" \
         "$ARM64_POCL_CACHE"
setsid unshare --mount --propagation private -- bash -c '
  set -e
  r=$1; shift
  mount --rbind /proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  mount --bind "$1" "$r/mnt/board-test"; shift
  mount --bind "$1" "$r/var/cache/pocl"; shift
  exec chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin \
    POCL_CACHE_DIR=/var/cache/pocl "$@"' board-chroot \
  "$ARM64_ROOTFS" "$work" "$ARM64_POCL_CACHE" \
  /opt/tunefleet/bin/tunefleet-agent --server "$address" \
    --token-file /mnt/board-test/agent.token --name board-arm64 \
    --binary-cache /mnt/board-test/agent-binaries \
  > "$work/agent.log" 2>&1 &
agent_pid=$!

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
if j.get("trials") != trials: die(f"{j.get('trials')} trials, not {trials}")
errors = {k: v for k, v in (j.get("errors") or {}).items() if k != "OK"}
if errors or (j.get("errors") or {}).get("OK") != trials:
    die(f"not every trial OK: {j.get('errors')}")
if j.get("state") != "done": die(f"state {j.get('state')}")
if not j.get("best") or j["best"].get("time_ms", 0) <= 0: die("no best record")
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
print(b["time_ms"], "ms", b["config"])' "$work/tune-$name.json")"
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
if d["vendor"] != "ARM": sys.exit(f"vendor {d['vendor']}, not ARM: {d}")
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

if [ ${#cli_args[@]} -gt 0 ]; then
  # The arm64 CLI, in the chroot, against the same server.
  out=$(unshare --mount --propagation private -- bash -c '
    r=$1; w=$2; shift 2
    mount --rbind /proc "$r/proc" && mount --bind "$w" "$r/mnt/board-test" &&
    chroot "$r" /usr/bin/env -i HOME=/root "$@"' board-cli \
    "$ARM64_ROOTFS" "$work" /opt/tunefleet/bin/tunefleet devices \
    --server "$address" --token-file /mnt/board-test/tuner.token --json) ||
    fail "the arm64 tunefleet devices"
  grep -q "\"$key\"" <<<"$out" || fail "the arm64 CLI does not list $key"
  arm64_log "the arm64 tunefleet CLI lists $key"
fi
t_test=$(arm64_elapsed "$t_test0")

echo "board-test: PASSED (device key $key, $TRIALS trials per job)"
echo "board-test: timing: rootfs ${t_rootfs} s, cross build ${t_build} s," \
  "host build ${t_host} s, test ${t_test} s, total $(arm64_elapsed "$t_start") s"
