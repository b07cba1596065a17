#!/usr/bin/env bash
# The .deb packages, checked and installed on this machine:
#
#   sudo deploy/packaging/test-debs.sh [BUILD_DIR]   # make-debs.sh BUILD_DIR first
#   sudo DEBS_DIR=DIR deploy/packaging/test-debs.sh  # the packages in DIR
#   TUNEFLEET_PACKAGING_TEST=1 ctest -L packaging    # the same, from ctest
#
# It INSTALLS INTO THIS SYSTEM (root, apt-get): the packages, the users
# tunefleet and tunefleet-agent, /etc/tunefleet, /var/lib/tunefleet; and
# purges and deletes all of it at the end, also on failure. So it refuses to
# start where any of these exists already. From ctest (--ctest) it is
# skipped (exit 77) unless TUNEFLEET_PACKAGING_TEST=1, and where it is not
# root or has no apt-get.
#
# 1. dpkg-deb: each package's files (exactly), architecture, Depends
#    (dpkg-shlibdeps'), conffiles, maintainer scripts, the binary's ELF type.
# 2. apt-get install ./tunefleet-*.deb: users and groups, /var/lib/tunefleet,
#    the tokens file, conffiles, units enabled; `systemd-analyze verify` on
#    the installed units; the binaries' --version.
# 3. The units' command lines, expanded from the shipped config files as
#    systemd does (${VAR}: one argument; $VAR: split), run as the units'
#    users (systemd is not PID 1 in a container): the agent's ExecCondition
#    skips with the shipped agent.conf; the server starts on its empty tokens
#    file and makes its database; tokens added and removed as root and a
#    reload (ExecReload: chown, SIGHUP) reach it; the agent, as tunefleet-agent, connects
#    and `tunefleet devices` lists it (where an OpenCL device exists).
# 4. apt-get remove keeps /var/lib/tunefleet/tunefleet.db, the config files
#    and the users; a reinstall finds them; apt-get purge deletes the config
#    files and the agent's user, keeps the database, its user and the tokens.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ctest_mode=0
if [ "${1:-}" = --ctest ]; then ctest_mode=1; shift; fi
build=$(realpath -m "${1:-$root/build}")

skip() { echo "test-debs: SKIPPED: $*"; exit 77; }
if [ "$ctest_mode" = 1 ]; then
  [ "${TUNEFLEET_PACKAGING_TEST:-0}" = 1 ] ||
    skip "installs packages into this system; run with TUNEFLEET_PACKAGING_TEST=1 (as root)"
  [ "$(id -u)" = 0 ] || skip "needs root"
  command -v apt-get >/dev/null || skip "needs apt-get"
fi

t_start=$(date +%s)
log() { echo "[test-debs +$(( $(date +%s) - t_start ))s] $*"; }
fail() { echo "test-debs: FAIL: $*" >&2; exit 1; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "  ok: $what"; else fail "$what"; fi
}
[ "$(id -u)" = 0 ] || fail "needs root (it installs the packages into this system)"
for tool in apt-get dpkg-deb file runuser setpriv python3; do
  command -v "$tool" >/dev/null || fail "$tool missing"
done
command -v systemd-analyze >/dev/null ||
  fail "systemd-analyze missing: apt-get install systemd (it need not run as PID 1)"

packages=(tunefleet-agent tunefleet-server tunefleet)
# Nothing of a real installation may be in the way: the cleanup deletes it.
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv "not-installed"; then
    fail "package $p is installed (or its config files are): this test would purge it"
  fi
done
for u in tunefleet tunefleet-agent; do
  ! getent passwd "$u" >/dev/null || fail "user $u exists: this test would delete it"
done
for d in /etc/tunefleet /var/lib/tunefleet /var/cache/tunefleet-agent; do
  [ ! -e "$d" ] || fail "$d exists: this test would delete it"
done
render_existed=0
getent group render >/dev/null && render_existed=1

tmp=$(mktemp -d /tmp/tunefleet-test-debs.XXXXXX)
chmod 755 "$tmp"  # apt's _apt user reads the packages
server_pid= agent_pid=
cleanup() {
  local rc=$?
  set +e
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv "not-installed"; then
      dpkg --purge "$p" >/dev/null 2>&1
    fi
  done
  rm -rf /var/lib/tunefleet /var/cache/tunefleet-agent /etc/tunefleet
  for u in tunefleet tunefleet-agent; do
    getent passwd "$u" >/dev/null && deluser --quiet --system "$u" >/dev/null 2>&1
    getent group "$u" >/dev/null && delgroup --quiet --system "$u" >/dev/null 2>&1
  done
  [ "$render_existed" = 0 ] && getent group render >/dev/null &&
    delgroup --quiet --system render >/dev/null 2>&1
  rm -f /etc/systemd/system/tunefleet-agent.service /etc/systemd/system/tunefleet-server.service
  rm -rf "$tmp"
  if [ "$rc" = 0 ]; then log "PASS (system cleaned up)"; else log "cleaned up after the failure"; fi
  exit "$rc"
}
trap cleanup EXIT

# --- the packages -----------------------------------------------------------
if [ -n "${DEBS_DIR:-}" ]; then
  debs=$(realpath "$DEBS_DIR")
  log "packages from $debs"
else
  log "making the packages from $build (make-debs.sh)"
  debs=$tmp/packages
  if [ "$ctest_mode" = 1 ]; then export NO_BUILD=1; fi  # ctest runs after the build
  "$root/deploy/packaging/make-debs.sh" "$build" "$debs" >"$tmp/make-debs.log" 2>&1 ||
    { cat "$tmp/make-debs.log" >&2; fail "make-debs.sh failed"; }
  chmod -R a+rX "$debs"
fi
arch=$(dpkg --print-architecture)
case $arch in
  amd64) elf="ELF 64-bit LSB .*x86-64" ;;
  arm64) elf="ELF 64-bit LSB .*ARM aarch64" ;;
  *) elf="ELF" ;;
esac
deb_of() {
  local f
  f=$(ls "$debs/$1"_*_"$arch".deb 2>/dev/null | head -n1)
  [ -n "$f" ] || fail "no $1 package for $arch in $debs"
  echo "$f"
}
agent_deb=$(deb_of tunefleet-agent)
server_deb=$(deb_of tunefleet-server)
cli_deb=$(deb_of tunefleet)
version=$(dpkg-deb -f "$cli_deb" Version)
upstream=${version%-*}

# check_deb DEB BINARY CONFFILE-OR-"" EXPECTED-FILE...
check_deb() {
  local deb=$1 binary=$2 conffile=$3; shift 3
  local name files expected depends
  name=$(dpkg-deb -f "$deb" Package)
  log "dpkg-deb checks: $(basename "$deb")"
  dpkg-deb -I "$deb" | sed 's/^/    /'
  dpkg-deb -c "$deb" | sed 's/^/    /'
  files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort)
  expected=$(printf '%s\n' "$@" | sort)
  check "$name: files are exactly: $*" [ "$files" = "$expected" ]
  check "$name: files owned by root" \
    [ -z "$(dpkg-deb -c "$deb" | awk '$2 != "root/root"')" ]
  check "$name: Architecture $arch" [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ]
  check "$name: Version $version" [ "$(dpkg-deb -f "$deb" Version)" = "$version" ]
  depends=$(dpkg-deb -f "$deb" Depends)
  check "$name: Depends names libc6, libstdc++6, libgrpc++ and libprotobuf (dpkg-shlibdeps)" \
    bash -c '[[ $1 == *"libc6 (>="* && $1 == *"libstdc++6"* && $1 == *"libgrpc++"* && $1 == *"libprotobuf"* ]]' _ "$depends"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$binary" >"$tmp/binary"
  check "$name: $binary is $elf ($(file -b "$tmp/binary" | cut -d, -f1-2))" \
    bash -c 'file -b "$1" | grep -Eq "$2"' _ "$tmp/binary" "$elf"
  check "$name: $binary is stripped" bash -c 'file -b "$1" | grep -q ", stripped"' _ "$tmp/binary"
  if [ -n "$conffile" ]; then
    check "$name: conffiles lists $conffile" \
      [ "$(dpkg-deb -I "$deb" conffiles)" = "$conffile" ]
    check "$name: Depends on adduser and init-system-helpers" \
      bash -c '[[ $1 == *adduser* && $1 == *init-system-helpers* ]]' _ "$depends"
    local scripts
    scripts=$(dpkg-deb --ctrl-tarfile "$deb" | tar -tvf - | awk '$6 ~ /(postinst|prerm|postrm)$/ { print $1 }' | sort -u)
    check "$name: postinst, prerm, postrm are there, mode 0755" \
      [ "$(dpkg-deb --ctrl-tarfile "$deb" | tar -tf - | grep -cE '(postinst|prerm|postrm)$')" = 3 -a "$scripts" = "-rwxr-xr-x" ]
    for s in postinst prerm postrm; do
      dpkg-deb --ctrl-tarfile "$deb" | tar -xO "./$s" >"$tmp/$s"
      check "$name: $s is valid sh (sh -n)" sh -n "$tmp/$s"
    done
  fi
}
check_deb "$agent_deb" /usr/bin/tunefleet-agent /etc/tunefleet/agent.conf \
  ./etc/tunefleet/agent.conf ./lib/systemd/system/tunefleet-agent.service \
  ./usr/bin/tunefleet-agent
check_deb "$server_deb" /usr/bin/tunefleet-server /etc/tunefleet/server.conf \
  ./etc/tunefleet/server.conf ./lib/systemd/system/tunefleet-server.service \
  ./usr/bin/tunefleet-server
check_deb "$cli_deb" /usr/bin/tunefleet "" ./usr/bin/tunefleet
check "tunefleet-server: Depends libsqlite3 and libxgboost" \
  bash -c '[[ $1 == *libsqlite3* && $1 == *libxgboost* ]]' _ "$(dpkg-deb -f "$server_deb" Depends)"
check "tunefleet-agent: Depends or Recommends an OpenCL library" \
  bash -c '[[ $1 == *libopencl1* ]]' _ "$(dpkg-deb -f "$agent_deb" Depends Recommends)"

# --- install ---------------------------------------------------------------
log "apt-get install $agent_deb $server_deb $cli_deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y "$agent_deb" "$server_deb" "$cli_deb" \
  >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "apt-get install failed"; }
sed 's/^/    /' "$tmp/install.log" | tail -n 12
for p in "${packages[@]}"; do
  check "$p is installed" [ "$(dpkg-query -W -f='${Status}' "$p")" = "install ok installed" ]
done
check "postinst said what to set in agent.conf" grep -q "set TUNEFLEET_SERVER" "$tmp/install.log"
check "user tunefleet (system, home /var/lib/tunefleet, nologin)" \
  bash -c 'getent passwd tunefleet | grep -Eq "^tunefleet:x:[0-9]+:[0-9]+:[^:]*:/var/lib/tunefleet:/usr/sbin/nologin$"'
check "user tunefleet-agent (system, nologin)" \
  bash -c 'getent passwd tunefleet-agent | grep -q ":/usr/sbin/nologin$"'
check "uids of system users (< 1000)" \
  [ "$(id -u tunefleet)" -lt 1000 -a "$(id -u tunefleet-agent)" -lt 1000 ]
check "tunefleet-agent is in groups video and render ($(id -nG tunefleet-agent))" \
  bash -c 'id -nG tunefleet-agent | tr " " "\n" | grep -qx video && id -nG tunefleet-agent | tr " " "\n" | grep -qx render'
check "/var/lib/tunefleet: tunefleet:tunefleet 750" \
  [ "$(stat -c '%U:%G %a' /var/lib/tunefleet)" = "tunefleet:tunefleet 750" ]
check "/etc/tunefleet/tokens: empty, tunefleet:tunefleet 600" \
  [ "$(stat -c '%U:%G %a %s' /etc/tunefleet/tokens)" = "tunefleet:tunefleet 600 0" ]
check "conffiles registered" bash -c \
  'dpkg-query -W -f="\${Conffiles}" tunefleet-agent | grep -q "/etc/tunefleet/agent.conf " &&
   dpkg-query -W -f="\${Conffiles}" tunefleet-server | grep -q "/etc/tunefleet/server.conf "'
for u in tunefleet-agent tunefleet-server; do
  check "$u.service enabled (multi-user.target.wants)" \
    [ -L /etc/systemd/system/multi-user.target.wants/$u.service ]
done
log "systemd-analyze verify --man=no (systemd $(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), PID 1 is $(ps -o comm= -p 1))"
set +e
verify_out=$(systemd-analyze verify --man=no /lib/systemd/system/tunefleet-agent.service \
  /lib/systemd/system/tunefleet-server.service 2>&1)
verify_rc=$?
set -e
[ -z "$verify_out" ] || echo "$verify_out" | sed 's/^/    /'
check "systemd-analyze verify: exit 0, no messages" [ "$verify_rc" = 0 -a -z "$verify_out" ]
check "/usr/bin/tunefleet-server --version" \
  [ "$(/usr/bin/tunefleet-server --version)" = "tunefleet-server $upstream" ]
check "/usr/bin/tunefleet-agent --version" \
  [ "$(/usr/bin/tunefleet-agent --version)" = "tunefleet-agent $upstream" ]
check "/usr/bin/tunefleet --version" [ "$(/usr/bin/tunefleet --version)" = "tunefleet $upstream" ]

# --- the units' command lines, as systemd would run them ---------------------
# unit_load_env and unit_argv (unit-command.sh).
source "$(dirname "$0")/unit-command.sh"
agent_unit=/lib/systemd/system/tunefleet-agent.service
server_unit=/lib/systemd/system/tunefleet-server.service

log "agent unit: ExecCondition with the shipped agent.conf"
cond=$(sed -n "s/^ExecCondition=\/bin\/sh -c '\(.*\)'$/\1/p" "$agent_unit" | sed 's/\$\$/$/g')
[ -n "$cond" ] || fail "no ExecCondition=/bin/sh -c '...' in $agent_unit"
set +e
(unit_load_env /etc/tunefleet/agent.conf; sh -c "$cond") 2>"$tmp/cond.err"; cond_rc=$?
set -e
check "skips (exit 1) while TUNEFLEET_SERVER is empty: $(cat "$tmp/cond.err")" [ "$cond_rc" = 1 ]
check "passes once TUNEFLEET_SERVER is set" \
  bash -c '(export TUNEFLEET_SERVER=h:1; sh -c "$1")' _ "$cond"

# start_server: ExecStart from the shipped server.conf, as tunefleet, on a
# free port; sets server_pid and port.
start_server() {
  (
    unit_load_env /etc/tunefleet/server.conf
    export TUNEFLEET_LISTEN=127.0.0.1:0
    unit_argv "$server_unit" ExecStart
    printf '    %q' "${ARGV[@]}"; echo
    umask 077
    cd /
    # setpriv execs in place (runuser would stay between, and not pass
    # SIGHUP on); --reset-env: HOME, USER, PATH... of the user, as systemd.
    exec setpriv --reuid=tunefleet --regid=tunefleet --init-groups --reset-env -- "${ARGV[@]}"
  ) >"$tmp/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q "listening on" "$tmp/server.log" && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.2
  done
  sed 's/^/    /' "$tmp/server.log"
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\) .*/\1/p' "$tmp/server.log")
}
stop_server() {
  kill -TERM "$server_pid"
  set +e; wait "$server_pid"; server_rc=$?; set -e
  server_pid=
  check "the server exits 0 on SIGTERM" [ "$server_rc" = 0 ]
}

log "server unit: ExecStart from the shipped server.conf, as tunefleet (listening on port 0)"
start_server
check "the server started on the empty tokens file (port $port)" [ -n "$port" ]
check "/var/lib/tunefleet/tunefleet.db made, tunefleet 600" \
  [ "$(stat -c '%U %a' /var/lib/tunefleet/tunefleet.db)" = "tunefleet 600" ]
(umask 077; /usr/bin/tunefleet token add --role agent --name test-agent \
  --tokens /etc/tunefleet/tokens >"$tmp/agent.token")
(umask 077; /usr/bin/tunefleet token add --role reader --name test-reader \
  --tokens /etc/tunefleet/tokens >"$tmp/reader.token")
check "token add as root keeps the tokens file tunefleet's, 600" \
  [ "$(stat -c '%U %a' /etc/tunefleet/tokens)" = "tunefleet 600" ]
/usr/bin/tunefleet token add --role tuner --name test-extra --tokens /etc/tunefleet/tokens >/dev/null
/usr/bin/tunefleet token remove --name test-extra --tokens /etc/tunefleet/tokens
echo "    after token remove as root: $(stat -c '%U:%G %a' /etc/tunefleet/tokens) (the unit's chown fixes the owner)"
# ExecReload: the chown ("+", as root), then SIGHUP.
reload_chown=$(sed -n 's/^ExecReload=-+//p' "$server_unit")
[ -n "$reload_chown" ] || fail "no ExecReload=-+... in $server_unit"
(unit_load_env /etc/tunefleet/server.conf; eval "set -- $reload_chown"; "$@")
kill -HUP "$server_pid"
for _ in $(seq 50); do grep -q "reloaded" "$tmp/server.log" && break; sleep 0.1; done
check "reload: $(grep reloaded "$tmp/server.log" || echo none)" grep -q "reloaded 2 token(s)" "$tmp/server.log"
check "ExecReload made the tokens file tunefleet's again" \
  [ "$(stat -c '%U:%G %a' /etc/tunefleet/tokens)" = "tunefleet:tunefleet 600" ]

install -m 0640 -o root -g tunefleet-agent "$tmp/agent.token" /etc/tunefleet/agent.token
# CacheDirectory=tunefleet-agent: what systemd makes.
install -d -m 0700 -o tunefleet-agent -g tunefleet-agent /var/cache/tunefleet-agent
cache_env=$(sed -n 's/^Environment=XDG_CACHE_HOME=//p' "$agent_unit")
check "the agent unit sets XDG_CACHE_HOME=/var/cache/tunefleet-agent" \
  [ "$cache_env" = /var/cache/tunefleet-agent ]
if (cd / && XDG_CACHE_HOME=$cache_env runuser -u tunefleet-agent -- \
      /usr/bin/tunefleet-agent --info >"$tmp/info.json" 2>"$tmp/info.err"); then
  log "agent unit: ExecStart from the shipped agent.conf, as tunefleet-agent, to 127.0.0.1:$port (plaintext)"
  (
    unit_load_env /etc/tunefleet/agent.conf
    export TUNEFLEET_SERVER=127.0.0.1:$port TUNEFLEET_CA= XDG_CACHE_HOME=$cache_env
    export TUNEFLEET_DEVICE_KEY=packaged-test-key
    unit_argv "$agent_unit" ExecStart
    printf '    %q' "${ARGV[@]}"; echo
    umask 077
    cd /
    exec setpriv --reuid=tunefleet-agent --regid=tunefleet-agent --init-groups \
      --reset-env -- env XDG_CACHE_HOME="$XDG_CACHE_HOME" "${ARGV[@]}"
  ) >"$tmp/agent.log" 2>&1 &
  agent_pid=$!
  listed=0
  for _ in $(seq 120); do
    # Parsed, not matched as text: the listing's fields may come in any
    # order, with the whole device in between.
    if /usr/bin/tunefleet devices --json --server "127.0.0.1:$port" \
         --token-file "$tmp/reader.token" >"$tmp/devices.txt" 2>&1 &&
       python3 -c 'import json, sys
sys.exit(not any(d.get("device_key") == "packaged-test-key" and d.get("connected_agents") == 1
                 for d in json.load(open(sys.argv[1]))))' "$tmp/devices.txt" 2>/dev/null; then
      listed=1; break
    fi
    kill -0 "$agent_pid" 2>/dev/null || break
    sleep 0.5
  done
  sed 's/^/    /' "$tmp/agent.log" | tail -n 5
  sed 's/^/    /' "$tmp/devices.txt"
  check "tunefleet devices lists the packaged agent under TUNEFLEET_DEVICE_KEY" [ "$listed" = 1 ]
  kill -TERM "$agent_pid"
  set +e; wait "$agent_pid"; agent_rc=$?; set -e
  agent_pid=
  check "the agent exits 0 on SIGTERM" [ "$agent_rc" = 0 ]
else
  log "no OpenCL device for tunefleet-agent here ($(head -c 200 "$tmp/info.err")): agent connection not checked"
fi
stop_server

# --- remove, reinstall, purge ------------------------------------------------
log "apt-get remove ${packages[*]}"
DEBIAN_FRONTEND=noninteractive apt-get remove -y "${packages[@]}" >"$tmp/remove.log" 2>&1 ||
  { cat "$tmp/remove.log" >&2; fail "apt-get remove failed"; }
for p in tunefleet-agent tunefleet-server; do
  check "$p: config-files state (its conffile stays)" \
    [ "$(dpkg-query -W -f='${Status}' "$p")" = "deinstall ok config-files" ]
done
check "tunefleet (no conffiles): gone" \
  bash -c '! dpkg-query -W -f="\${Status}" tunefleet 2>/dev/null | grep -qv not-installed'
check "binaries gone" [ ! -e /usr/bin/tunefleet-server -a ! -e /usr/bin/tunefleet-agent -a ! -e /usr/bin/tunefleet ]
check "remove keeps /var/lib/tunefleet/tunefleet.db" [ -s /var/lib/tunefleet/tunefleet.db ]
check "remove keeps the config files and tokens" \
  [ -f /etc/tunefleet/server.conf -a -f /etc/tunefleet/agent.conf -a -s /etc/tunefleet/tokens ]
check "remove keeps the users" \
  bash -c 'getent passwd tunefleet >/dev/null && getent passwd tunefleet-agent >/dev/null'
check "remove masks the units (as dh_installsystemd)" \
  [ "$(readlink /etc/systemd/system/tunefleet-server.service)" = /dev/null ]

log "apt-get install $server_deb again"
DEBIAN_FRONTEND=noninteractive apt-get install -y "$server_deb" >"$tmp/reinstall.log" 2>&1 ||
  { cat "$tmp/reinstall.log" >&2; fail "reinstall failed"; }
check "reinstall unmasks the unit" [ ! -L /etc/systemd/system/tunefleet-server.service ]
check "reinstall keeps the database and the tokens" \
  [ -s /var/lib/tunefleet/tunefleet.db -a "$(grep -c test- /etc/tunefleet/tokens)" = 2 ]
log "the reinstalled server on the kept database"
start_server
check "it starts (port $port)" [ -n "$port" ]
stop_server

log "apt-get purge ${packages[*]}"
DEBIAN_FRONTEND=noninteractive apt-get purge -y "${packages[@]}" >"$tmp/purge.log" 2>&1 ||
  { cat "$tmp/purge.log" >&2; fail "apt-get purge failed"; }
grep -i "tunefleet" "$tmp/purge.log" | grep -v "^\(Removing\|Purging\)" | sed 's/^/    /' || true
for p in "${packages[@]}"; do
  check "$p: purged" bash -c \
    '! dpkg-query -W -f="\${Status}" "$1" 2>/dev/null | grep -qv not-installed' _ "$p"
done
check "purge deletes the config files" [ ! -e /etc/tunefleet/server.conf -a ! -e /etc/tunefleet/agent.conf ]
check "purge keeps /var/lib/tunefleet/tunefleet.db and says so" \
  bash -c '[ -s /var/lib/tunefleet/tunefleet.db ] && grep -q "purge keeps /var/lib/tunefleet" "$1"' _ "$tmp/purge.log"
check "purge keeps the user tunefleet (owner of the database)" \
  bash -c 'getent passwd tunefleet >/dev/null'
check "purge deletes the user and group tunefleet-agent" \
  bash -c '! getent passwd tunefleet-agent >/dev/null && ! getent group tunefleet-agent >/dev/null'
check "purge keeps the tokens file with tokens in it" [ -s /etc/tunefleet/tokens ]
check "no unit links or masks left" \
  [ -z "$(find /etc/systemd/system -name 'tunefleet*' 2>/dev/null)" ]
