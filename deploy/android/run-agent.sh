#!/usr/bin/env bash
# Runs tunefleet-agent on an Android phone over adb, from the host the phone
# is plugged into: the agent and a restart loop under /data/local/tmp, the
# server reached through `adb reverse` on the phone's loopback.
#
#   bash deploy/android/run-agent.sh push [AGENT]   # default build-android/tunefleet-agent
#   bash deploy/android/run-agent.sh info [--opencl-library PATH|auto]
#       [--ld-library-path DIRS]
#   bash deploy/android/run-agent.sh start --port PORT --token-file FILE \
#       [--ca CA.pem] [--key KEY] [--name NAME] [--server HOST:PORT]
#       [--opencl-library PATH|auto] [--ld-library-path DIRS] [--stay-awake]
#       [-- MORE AGENT FLAGS]
#   bash deploy/android/run-agent.sh status | log [N] | stop
#
# start: pushes the token (and CA) beside the agent, `adb reverse tcp:PORT
#   tcp:PORT` (the phone's 127.0.0.1:PORT is the host's; --server HOST:PORT
#   dials a server the phone reaches itself instead, no reverse), and starts
#   the loop detached (setsid nohup): it runs the agent with --server
#   127.0.0.1:PORT --opencl-library /vendor/lib64/libOpenCL.so (auto: the
#   agent's own order) and starts it again 10 s after a signal ended it (a
#   crash, the low-memory killer) or it exited 0 unasked; any other exit
#   code is the agent refusing (token refused, no OpenCL, usage: agent.log
#   says why) and ends the loop. --stay-awake: `settings put global
#   stay_on_while_plugged_in 3` (screen on while on USB or AC power).
#   --ld-library-path: LD_LIBRARY_PATH for the agent (/vendor/lib64 where
#   the vendor's libOpenCL.so cannot find its own libraries).
# stop: ends the loop and the agent (TERM, then KILL after 15 s) and removes
#   the reverse.
# Environment: ADB (default adb), ANDROID_SERIAL (which phone, adb's own),
# TUNEFLEET_ANDROID_DIR (default /data/local/tmp/tunefleet, on the phone).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ADB=${ADB:-adb}
DIR=${TUNEFLEET_ANDROID_DIR:-/data/local/tmp/tunefleet}

die() { echo "run-agent.sh: error: $*" >&2; exit 1; }
log() { echo "run-agent.sh: $*" >&2; }
# One argument quoted for the phone's sh.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
phone() { "$ADB" shell "$*"; }

[ $# -ge 1 ] || { sed -n '2,30p' "$0"; exit 2; }
command=$1
shift
case "$command" in -h|--help) sed -n '2,30p' "$0"; exit 0 ;; esac
command -v "$ADB" >/dev/null ||
  die "$ADB missing: bash deploy/android/install-deps.sh (Debian's adb)"
state=$("$ADB" get-state 2>&1) ||
  die "no phone for adb ($state): plug it in, enable USB debugging" \
    "(Settings > About phone: tap Build number 7 times; then Developer" \
    "options > USB debugging), accept the host's key on the phone;" \
    "with several phones set ANDROID_SERIAL (adb devices)"
[ "$state" = device ] || die "adb says the phone is '$state' (unauthorized: accept the prompt on the phone)"

# The restart loop, run on the phone by its /system/bin/sh.
RUN_SH=$(cat <<'EOF'
#!/system/bin/sh
# tunefleet restart loop (deploy/android/run-agent.sh): runs tunefleet-agent
# with the arguments given, again 10 s after a signal ended it or it exited
# 0 unasked; stops on TERM or INT (run-agent.sh stop) and on any other exit
# code (the agent refused to run: agent.log says why).
cd "$(dirname "$0")" || exit 1
echo $$ > run.pid
stopping=""
child=""
trap 'stopping=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
while [ -z "$stopping" ]; do
  echo "run.sh: $(date) starting: tunefleet-agent $*" >> agent.log
  ./tunefleet-agent "$@" >> agent.log 2>&1 &
  child=$!
  echo "$child" > agent.pid
  wait "$child"
  rc=$?
  # wait returns early for the trapped signal; the agent's own end counts.
  while kill -0 "$child" 2>/dev/null; do wait "$child"; rc=$?; done
  child=""
  rm -f agent.pid
  echo "run.sh: $(date) tunefleet-agent exited $rc" >> agent.log
  [ -n "$stopping" ] && break
  if [ "$rc" -ne 0 ] && [ "$rc" -le 128 ]; then
    echo "run.sh: not restarting after exit $rc (see above)" >> agent.log
    break
  fi
  sleep 10
done
rm -f run.pid
EOF
)

case "$command" in
  push)
    agent=${1:-$ROOT/build-android/tunefleet-agent}
    [ -f "$agent" ] ||
      die "$agent missing: ANDROID_NDK=... bash deploy/android/build-agent.sh"
    phone "mkdir -p $(q "$DIR")"
    "$ADB" push "$agent" "$DIR/tunefleet-agent" >&2
    tmp=$(mktemp)
    printf '%s\n' "$RUN_SH" > "$tmp"
    "$ADB" push "$tmp" "$DIR/run.sh" >&2
    rm -f "$tmp"
    phone "chmod 755 $(q "$DIR/tunefleet-agent") $(q "$DIR/run.sh")"
    log "pushed to $DIR (then: run-agent.sh info, run-agent.sh start ...)"
    ;;

  info)
    lib=/vendor/lib64/libOpenCL.so env="HOME=$(q "$DIR")"
    while [ $# -gt 0 ]; do
      case "$1" in
        --opencl-library) lib=${2:?--opencl-library PATH|auto}; shift ;;
        --ld-library-path) env+=" LD_LIBRARY_PATH=$(q "${2:?--ld-library-path DIRS}")"; shift ;;
        *) die "info: unknown argument $1 (see --help)" ;;
      esac
      shift
    done
    args="--info"
    [ "$lib" = auto ] || args="--opencl-library $(q "$lib") --info"
    phone "cd $(q "$DIR") && $env ./tunefleet-agent $args"
    ;;

  start)
    port="" server="" token="" ca="" lib=/vendor/lib64/libOpenCL.so ldpath=""
    stay=0 agent_args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --port) port=${2:?--port PORT}; shift ;;
        --server) server=${2:?--server HOST:PORT}; shift ;;
        --token-file) token=${2:?--token-file FILE}; shift ;;
        --ca) ca=${2:?--ca CA.pem}; shift ;;
        --key|--name) agent_args+=("$1" "${2:?$1 VALUE}"); shift ;;
        --opencl-library) lib=${2:?--opencl-library PATH|auto}; shift ;;
        --ld-library-path) ldpath=${2:?--ld-library-path DIRS}; shift ;;
        --stay-awake) stay=1 ;;
        --) shift; agent_args+=("$@"); break ;;
        *) die "start: unknown argument $1 (see --help)" ;;
      esac
      shift
    done
    [ -n "$port" ] || [ -n "$server" ] || die "start: --port PORT (the host's server) or --server HOST:PORT"
    [ -n "$token" ] || die "start: --token-file FILE (tunefleet token add --role agent)"
    [ -f "$token" ] || die "start: $token: no such file"
    [ -z "$ca" ] || [ -f "$ca" ] || die "start: $ca: no such file"
    [[ -z "$port" || "$port" =~ ^[0-9]+$ ]] || die "start: --port $port: a number"
    phone "test -x $(q "$DIR/tunefleet-agent") && test -f $(q "$DIR/run.sh")" ||
      die "no agent in $DIR on the phone: run-agent.sh push"
    if phone "cd $(q "$DIR") && test -f run.pid && kill -0 \$(cat run.pid) 2>/dev/null"; then
      die "already running on the phone (run-agent.sh status; run-agent.sh stop first)"
    fi

    "$ADB" push "$token" "$DIR/agent.token" >&2
    phone "chmod 600 $(q "$DIR/agent.token")"
    args=(--token-file "$DIR/agent.token" --binary-cache "$DIR/binaries")
    if [ -n "$ca" ]; then
      "$ADB" push "$ca" "$DIR/ca.pem" >&2
      args+=(--ca "$DIR/ca.pem")
    fi
    [ "$lib" = auto ] || args+=(--opencl-library "$lib")
    if [ -z "$server" ]; then
      "$ADB" reverse "tcp:$port" "tcp:$port" >/dev/null
      log "adb reverse tcp:$port tcp:$port (the phone's 127.0.0.1:$port is this host's)"
      server=127.0.0.1:$port
      phone "echo $port > $(q "$DIR/run.port")"
    fi
    args+=(--server "$server" ${agent_args[@]+"${agent_args[@]}"})
    if [ "$stay" = 1 ]; then
      phone "settings put global stay_on_while_plugged_in 3"
      log "screen stays on while plugged in (undo: adb shell settings put global stay_on_while_plugged_in 0)"
    fi
    quoted=""
    for a in "${args[@]}"; do quoted+=" $(q "$a")"; done
    env="HOME=$(q "$DIR") TMPDIR=$(q "$DIR")"
    [ -z "$ldpath" ] || env+=" LD_LIBRARY_PATH=$(q "$ldpath")"
    # Detached: its own session (setsid, where toybox has it), no terminal
    # and none of adb's descriptors (else `adb shell` waits for it), so it
    # outlives this adb shell and a USB disconnect. Only the last command
    # goes to the background (";", not "&&": a backgrounded list would be a
    # subshell holding adb's output open).
    phone "cd $(q "$DIR") || exit 1; s=\$(command -v setsid || true);
           $env \$s nohup sh ./run.sh$quoted > /dev/null 2>&1 < /dev/null &"
    sleep 3
    phone "tail -n 5 $(q "$DIR/agent.log")" >&2 || true
    phone "test -f $(q "$DIR/run.pid")" ||
      die "the agent did not keep running: its log is above (run-agent.sh" \
        "log; run-agent.sh stop removes the reverse)"
    log "started (run-agent.sh status | log | stop)"
    ;;

  status)
    if phone "cd $(q "$DIR") && test -f run.pid && kill -0 \$(cat run.pid) 2>/dev/null"; then
      echo "loop: running (pid $(phone "cat $(q "$DIR/run.pid")" | tr -d '\r'))"
      if phone "cd $(q "$DIR") && test -f agent.pid && kill -0 \$(cat agent.pid) 2>/dev/null"; then
        echo "agent: running (pid $(phone "cat $(q "$DIR/agent.pid")" | tr -d '\r'))"
      else
        echo "agent: not running (the loop restarts it in 10 s)"
      fi
    else
      echo "loop: not running"
    fi
    echo "reverse: $("$ADB" reverse --list | tr '\n' ' ')"
    phone "tail -n 3 $(q "$DIR/agent.log") 2>/dev/null" || true
    ;;

  log)
    phone "tail -n $(q "${1:-50}") $(q "$DIR/agent.log")"
    ;;

  stop)
    port=$(phone "cat $(q "$DIR/run.port") 2>/dev/null" | tr -d '\r' || true)
    if phone "cd $(q "$DIR") && test -f run.pid && kill -TERM \$(cat run.pid) 2>/dev/null"; then
      for _ in $(seq 30); do
        phone "test -f $(q "$DIR/run.pid")" || break
        sleep 0.5
      done
      if phone "test -f $(q "$DIR/run.pid")"; then
        log "the loop did not end within 15 s: KILL"
        phone "cd $(q "$DIR") && for f in agent.pid run.pid; do test -f \$f && kill -KILL \$(cat \$f); done; rm -f agent.pid run.pid" || true
      fi
      log "stopped"
    else
      log "not running"
    fi
    if [[ "$port" =~ ^[0-9]+$ ]]; then
      "$ADB" reverse --remove "tcp:$port" 2>/dev/null || true
      phone "rm -f $(q "$DIR/run.port")"
      log "adb reverse tcp:$port removed"
    fi
    ;;

  *) die "unknown command $command (push, info, start, status, log, stop)" ;;
esac
