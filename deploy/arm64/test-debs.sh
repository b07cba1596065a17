#!/usr/bin/env bash
# The arm64 packages tunefleet-agent and tunefleet (the CLI), from the
# cross build, installed into the arm64 rootfs and removed again with the
# rootfs's own apt-get and dpkg, in a chroot under qemu-user (the
# maintainer scripts run there as on a board, but systemd does not run):
#
#   sudo bash deploy/arm64/test-debs.sh [--debs DIR] [--keep-work]
#
# 1. Packages: deploy/packaging/make-debs.sh build-arm64 (cross-builds the
#    agent and the CLI where they are out of date, then CPack) unless
#    --debs DIR holds them; dpkg-deb checks: files, Architecture arm64, the
#    binaries "ARM aarch64" and stripped, Depends from the sysroot's
#    shlibs/symbols, the conffile, the maintainer scripts.
# 2. The rootfs as an overlay (the cached .cache/arm64/rootfs is never
#    written: what the run changes goes to WORK/upper and is thrown away),
#    /proc, /sys and /dev bound in, /tmp a tmpfs.
#    `apt-get install /tmp/tunefleet-debs/*.deb` in the chroot, without
#    network (a network namespace of its own; every dependency is in the
#    rootfs already and its apt lists are empty).
# 3. Installed: dpkg -l; the unit in /lib/systemd/system and enabled
#    (multi-user.target.wants), no systemctl run (no /run/systemd/system);
#    the user and group tunefleet-agent, in video and render; agent.conf a
#    registered conffile; the unit's ExecCondition skips with the shipped
#    agent.conf; the installed binaries' --version, and the installed
#    /usr/bin/tunefleet-agent --info as tunefleet-agent (PoCL, aarch64).
# 4. apt-get remove keeps agent.conf and the user and masks the unit;
#    apt-get purge deletes agent.conf, the unit's state, the agent's cache,
#    user and group, and keeps what an administrator put in /etc/tunefleet
#    (the token, the CA). Then what the run left in the rootfs (the
#    overlay's upper directory) is listed: nothing of the packages but that.
#
# Options:
#   --debs DIR      the packages in DIR (tunefleet-agent_*_arm64.deb,
#                   tunefleet_*_arm64.deb) instead of making them
#   --keep-work     keep the work directory (logs, the overlay's upper dir)
#   --phase install|uninstall --root DIR
#                   one half only, in a root the caller mounted (with
#                   arm64_mount_root of common.sh; board-test.sh --packages):
#                   install (with --debs DIR) leaves the packages installed;
#                   uninstall removes and purges them
# Needs root (chroot, mounts), the rootfs (make-rootfs.sh), binfmt_misc for
# qemu-aarch64 and, without --debs, the cross build (build-agent.sh --cli).
# Exits non-zero with a message on the first failed check.
set -euo pipefail
source "$(dirname "$0")/common.sh"

all_args=("$@")
debs_dir="" keep_work=0 phase=all root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --debs) [ $# -ge 2 ] || arm64_die "--debs needs a directory"
            debs_dir=$(realpath -m "$2"); shift ;;
    --keep-work) keep_work=1 ;;
    --phase) [ $# -ge 2 ] || arm64_die "--phase needs install or uninstall"
             phase=$2; shift ;;
    --root) [ $# -ge 2 ] || arm64_die "--root needs a directory"
            root=$(realpath -m "$2"); shift ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) arm64_die "test-debs.sh: unknown argument $1 (--help)" ;;
  esac
  shift
done
case "$phase" in
  all) [ -z "$root" ] || arm64_die "--root goes with --phase install or uninstall" ;;
  install|uninstall)
    [ -n "$root" ] || arm64_die "--phase $phase needs --root DIR (a mounted root)"
    [ -e "$root/proc/self/exe" ] ||
      arm64_die "$root is not a mounted root (no /proc in it): arm64_mount_root"
    [ "$phase" = uninstall ] || [ -n "$debs_dir" ] ||
      arm64_die "--phase install needs --debs DIR" ;;
  *) arm64_die "--phase $phase: install or uninstall" ;;
esac
arm64_need_root test-debs.sh
for tool in dpkg-deb dpkg-query file python3 unshare chroot; do
  command -v "$tool" >/dev/null ||
    arm64_die "$tool missing (apt-get install dpkg file python3 util-linux coreutils)"
done
# The whole run in a mount namespace of its own: the overlay and the bound
# /proc, /sys, /dev vanish with it, whatever way it ends.
[ "$phase" = all ] && arm64_private_mounts "$0" "${all_args[@]+"${all_args[@]}"}"

t_start=$(arm64_now)
fail() { echo "arm64 test-debs: FAIL: $*" >&2; exit 1; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "  ok: $what"; else fail "$what"; fi
}
# A command in the chroot, with a clean environment.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"
}
# The same without any network: a network namespace of its own (only a
# loopback, down).
in_root_offline() {
  unshare --net -- chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"
}
status_of() {
  local s
  s=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' "$1" 2>/dev/null) || true
  echo "${s:-not-installed}"
}
gone() { ! status_of "$1" | grep -qv not-installed; }
# apt-get ARGS... in the chroot, offline; its output in $apt_log.
apt_n=0 apt_log=""
apt_in_root() {
  local log t0
  apt_n=$((apt_n + 1))
  log=$tmp/apt-$apt_n-$1.log
  apt_log=$log
  t0=$(arm64_now)
  if ! in_root_offline apt-get -y -o Dpkg::Use-Pty=0 "$@" >"$log" 2>&1; then
    cat "$log" >&2
    fail "apt-get $* in the chroot (log above)"
  fi
  { grep -v '^\(Reading\|Building\|(Reading\)' "$log" || true; } | sed 's/^/    /' | tail -n 20
  arm64_log "timing: apt-get $1 $(arm64_elapsed "$t0") s (in the chroot, under qemu)"
}
agent_user_ids() {  # "uid gid" of tunefleet-agent in the chroot, or nothing
  awk -F: '$1 == "tunefleet-agent" { print $3, $4 }' "$root/etc/passwd"
}

# --- work directory, cleanup ------------------------------------------------
tmp=""
cleanup() {
  local rc=$?
  set +e
  if [ "$phase" = all ] && [ -n "$tmp" ]; then
    if ! arm64_unmount_root "$tmp"; then
      echo "arm64 test-debs: still mounted under $tmp; not deleting it" >&2
    elif [ "$rc" -ne 0 ] || [ "$keep_work" = 1 ]; then
      echo "arm64 test-debs: work directory kept: $tmp" >&2
    else
      rm -rf "$tmp"
    fi
  elif [ -n "$tmp" ]; then
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "arm64 test-debs: interrupted; cleaning up" >&2; exit 130' INT TERM
tmp=$(mktemp -d /tmp/tunefleet-arm64-debs.XXXXXX)
chmod 755 "$tmp"

# --- 1. the packages ----------------------------------------------------------
if [ "$phase" = all ]; then
  if [ -z "$debs_dir" ]; then
    bash "$(dirname "$0")/make-rootfs.sh" >/dev/null || fail "make-rootfs.sh"
    [ -f "$ARM64_BUILD_DIR/CMakeCache.txt" ] ||
      fail "no cross build in $ARM64_BUILD_DIR: bash deploy/arm64/build-agent.sh --cli"
    arm64_log "make-debs.sh $ARM64_BUILD_DIR (agent, cli)"
    t0=$(arm64_now)
    debs_dir=$tmp/debs
    "$TUNEFLEET_ROOT/deploy/packaging/make-debs.sh" --components agent,cli \
      "$ARM64_BUILD_DIR" "$debs_dir" >"$tmp/make-debs.out" 2>"$tmp/make-debs.log" ||
      { tail -n 30 "$tmp/make-debs.log" >&2; fail "make-debs.sh $ARM64_BUILD_DIR"; }
    arm64_log "timing: make-debs.sh $(arm64_elapsed "$t0") s"
  fi
fi
if [ "$phase" != uninstall ]; then
  agent_deb=$(ls "$debs_dir"/tunefleet-agent_*_arm64.deb 2>/dev/null | head -n1) || true
  cli_deb=$(ls "$debs_dir"/tunefleet_*_arm64.deb 2>/dev/null | head -n1) || true
  [ -n "$agent_deb" ] && [ -n "$cli_deb" ] ||
    fail "no tunefleet-agent_*_arm64.deb and tunefleet_*_arm64.deb in $debs_dir" \
      "(deploy/packaging/make-debs.sh $ARM64_BUILD_DIR)"
  version=$(dpkg-deb -f "$agent_deb" Version)
  upstream=${version%-*}
fi

if [ "$phase" = all ]; then
  # check_deb DEB BINARY EXPECTED-FILE...
  check_deb() {
    local deb=$1 binary=$2; shift 2
    local name files depends
    name=$(dpkg-deb -f "$deb" Package)
    arm64_log "dpkg-deb checks: $(basename "$deb")"
    dpkg-deb -f "$deb" Package Version Architecture Depends Recommends | sed 's/^/    /'
    files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort)
    check "$name: files are exactly: $*" [ "$files" = "$(printf '%s\n' "$@" | sort)" ]
    check "$name: files owned by root" \
      [ -z "$(dpkg-deb -c "$deb" | awk '$2 != "root/root"')" ]
    check "$name: Architecture arm64" [ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ]
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$binary" >"$tmp/binary"
    echo "    file: $binary: $(file -b "$tmp/binary")"
    check "$name: $binary is ELF 64-bit ARM aarch64, stripped" \
      bash -c 'file -b "$1" | grep -q "ELF 64-bit LSB .*ARM aarch64.*, stripped"' _ "$tmp/binary"
    depends=$(dpkg-deb -f "$deb" Depends)
    check "$name: Depends names libc6, libstdc++6, libgrpc++1.51, libprotobuf32" \
      bash -c '[[ $1 == *"libc6 (>="* && $1 == *"libstdc++6"* && $1 == *"libgrpc++1.51"* && $1 == *"libprotobuf32"* ]]' _ "$depends"
    # Every library the binary needs is covered: its package in the
    # sysroot's database is among the Depends.
    local lib pkg
    for lib in $(arm64_needed_libs "$tmp/binary"); do
      pkg=$(arm64_package_of "$lib")
      [ -n "$pkg" ] || fail "$name: no package of the rootfs ships $lib (NEEDED)"
      [[ ", $depends," == *", $pkg "* || ", $depends," == *", $pkg,"* ]] ||
        fail "$name: NEEDED $lib (package $pkg) is not in Depends: $depends"
    done
    echo "  ok: $name: every NEEDED library's package is in Depends"
  }
  check_deb "$agent_deb" /usr/bin/tunefleet-agent \
    ./etc/tunefleet/agent.conf ./lib/systemd/system/tunefleet-agent.service \
    ./usr/bin/tunefleet-agent
  check "tunefleet-agent: conffiles lists /etc/tunefleet/agent.conf" \
    [ "$(dpkg-deb -I "$agent_deb" conffiles)" = /etc/tunefleet/agent.conf ]
  check "tunefleet-agent: Depends adduser, init-system-helpers; Recommends an OpenCL library" \
    bash -c '[[ $1 == *adduser*init-system-helpers* && $2 == *libopencl1* ]]' _ \
    "$(dpkg-deb -f "$agent_deb" Depends)" "$(dpkg-deb -f "$agent_deb" Recommends)"
  for s in postinst prerm postrm; do
    dpkg-deb --ctrl-tarfile "$agent_deb" | tar -xO "./$s" >"$tmp/$s"
    check "tunefleet-agent: $s is valid sh, the same as deploy/packaging/agent/$s" \
      bash -c 'sh -n "$1" && cmp -s "$1" "$2"' _ "$tmp/$s" "$TUNEFLEET_ROOT/deploy/packaging/agent/$s"
  done
  check_deb "$cli_deb" /usr/bin/tunefleet ./usr/bin/tunefleet

  arm64_ensure_binfmt
  bash "$(dirname "$0")/make-rootfs.sh" >/dev/null || fail "make-rootfs.sh"
  arm64_mount_root "$tmp"
  root=$tmp/root
  arm64_log "the rootfs as an overlay at $root (changes in $tmp/upper)"
fi

# --- 2, 3. install ------------------------------------------------------------
install_phase() {
  local t0 p
  for p in tunefleet-agent tunefleet; do
    gone "$p" || fail "$p is already in the rootfs ($(status_of "$p"))"
  done
  [ ! -e "$root/etc/tunefleet/agent.conf" ] || fail "$root/etc/tunefleet/agent.conf exists"
  # apt's sandbox user (_apt) reads the packages.
  install -d -m 755 "$root/tmp/tunefleet-debs"
  install -m 644 "$agent_deb" "$cli_deb" "$root/tmp/tunefleet-debs/"
  arm64_log "apt-get install $(basename "$agent_deb") $(basename "$cli_deb") (in the chroot, offline)"
  apt_in_root install "/tmp/tunefleet-debs/$(basename "$agent_deb")" \
    "/tmp/tunefleet-debs/$(basename "$cli_deb")"
  rm -rf "$root/tmp/tunefleet-debs"
  in_root dpkg -l tunefleet-agent tunefleet | grep '^[a-z][a-z] ' | sed 's/^/    /'
  for p in tunefleet-agent tunefleet; do
    check "$p: install ok installed" [ "$(status_of "$p")" = "install ok installed" ]
  done
  check "postinst said what to set in agent.conf" grep -q "set TUNEFLEET_SERVER" "$apt_log"
  # The scripts call deb-systemd-invoke and systemctl only where
  # /run/systemd/system exists; the rootfs has no systemctl at all.
  check "no maintainer script tried systemctl or failed (systemd does not run in the chroot)" \
    bash -c '! grep -v "then: systemctl restart" "$1" |
      grep -Eiq "systemctl|not found|Could not execute|warning|error|^E:"' _ "$apt_log"
  check "/lib/systemd/system/tunefleet-agent.service in place (the shipped unit)" \
    cmp -s "$root/lib/systemd/system/tunefleet-agent.service" \
      "$TUNEFLEET_ROOT/deploy/packaging/agent/tunefleet-agent.service"
  check "the unit enabled: multi-user.target.wants/tunefleet-agent.service" \
    [ "$(readlink "$root/etc/systemd/system/multi-user.target.wants/tunefleet-agent.service")" = \
      /lib/systemd/system/tunefleet-agent.service ]
  echo "    passwd: $(grep '^tunefleet-agent:' "$root/etc/passwd")"
  check "user tunefleet-agent: system (uid < 1000), /nonexistent, nologin" \
    bash -c 'awk -F: '\''$1 == "tunefleet-agent" && $3 < 1000 && $6 == "/nonexistent" && $7 == "/usr/sbin/nologin" { ok = 1 } END { exit !ok }'\'' "$1"' _ "$root/etc/passwd"
  check "group tunefleet-agent is the user's" \
    [ "$(awk -F: '$1 == "tunefleet-agent" { print $3 }' "$root/etc/group")" = "$(agent_user_ids | cut -d' ' -f2)" ]
  local groups
  groups=$(in_root id -nG tunefleet-agent)
  check "tunefleet-agent is in video and render ($groups)" \
    bash -c 'tr " " "\n" <<<"$1" | grep -qx video && tr " " "\n" <<<"$1" | grep -qx render' _ "$groups"
  check "/etc/tunefleet/agent.conf: the shipped one, registered as a conffile" \
    bash -c 'cmp -s "$1/etc/tunefleet/agent.conf" "$2" &&
      dpkg-query --admindir="$1/var/lib/dpkg" -W -f="\${Conffiles}" tunefleet-agent |
        grep -q "^ /etc/tunefleet/agent.conf "' _ "$root" "$TUNEFLEET_ROOT/deploy/packaging/agent/agent.conf"
  check "/usr/bin/tunefleet-agent --version (installed, under qemu)" \
    [ "$(in_root /usr/bin/tunefleet-agent --version)" = "tunefleet-agent $upstream" ]
  check "/usr/bin/tunefleet --version (installed, under qemu)" \
    [ "$(in_root /usr/bin/tunefleet --version)" = "tunefleet $upstream" ]

  # The unit's ExecCondition with the shipped agent.conf, in the chroot.
  local unit=$root/lib/systemd/system/tunefleet-agent.service cond rc
  cond=$(sed -n "s/^ExecCondition=\/bin\/sh -c '\(.*\)'$/\1/p" "$unit" | sed 's/\$\$/$/g')
  [ -n "$cond" ] || fail "no ExecCondition=/bin/sh -c '...' in the unit"
  set +e
  (unit_load_env "$root/etc/tunefleet/agent.conf"
   in_root TUNEFLEET_SERVER="$TUNEFLEET_SERVER" /bin/sh -c "$cond") 2>"$tmp/cond.err"
  rc=$?
  set -e
  check "ExecCondition skips (exit 1) with the shipped agent.conf: $(cat "$tmp/cond.err")" [ "$rc" = 1 ]

  # The installed agent's --info, as its user with the unit's cache
  # (CacheDirectory=tunefleet-agent: made here as systemd would).
  install -d -m 0700 -o "$(agent_user_ids | cut -d' ' -f1)" \
    -g "$(agent_user_ids | cut -d' ' -f2)" "$root/var/cache/tunefleet-agent"
  t0=$(arm64_now)
  in_root setpriv --reuid=tunefleet-agent --regid=tunefleet-agent --init-groups \
    --reset-env -- /usr/bin/env XDG_CACHE_HOME=/var/cache/tunefleet-agent \
    /usr/bin/tunefleet-agent --info >"$tmp/info.json" 2>"$tmp/info.err" ||
    { cat "$tmp/info.err" >&2; fail "/usr/bin/tunefleet-agent --info as tunefleet-agent"; }
  python3 - "$tmp/info.json" <<'PY' || fail "tunefleet-agent --info: $(head -c 300 "$tmp/info.json")"
import json, sys
i = json.load(open(sys.argv[1]))
get = lambda *names: next((i[n] for n in names if n in i), "")
print("    --info: " + ", ".join(f"{k}={get(k, c)!r}" for k, c in [
    ("vendor", "vendor"), ("device_name", "deviceName"), ("device_type", "deviceType"),
    ("device_version", "deviceVersion"), ("compute_units", "computeUnits")]))
if get("device_type", "deviceType") != "CPU": sys.exit("not PoCL's CPU device")
if "aarch64" not in get("device_version", "deviceVersion"): sys.exit("not aarch64")
PY
  echo "  ok: /usr/bin/tunefleet-agent --info as tunefleet-agent (groups $groups), under qemu: PoCL, aarch64 ($(arm64_elapsed "$t0") s)"
}

# --- 4. remove, purge -----------------------------------------------------------
uninstall_phase() {
  local admin_files f
  # What an administrator put in /etc/tunefleet (kept by remove and purge).
  admin_files=$(cd "$root/etc/tunefleet" 2>/dev/null && find . -type f ! -name agent.conf | sort) || true
  arm64_log "apt-get remove tunefleet-agent tunefleet (in the chroot, offline)"
  apt_in_root remove tunefleet-agent tunefleet
  check "tunefleet-agent: config-files state (agent.conf stays)" \
    [ "$(status_of tunefleet-agent)" = "deinstall ok config-files" ]
  check "tunefleet (no conffiles): gone" gone tunefleet
  check "binaries and unit file gone" \
    [ ! -e "$root/usr/bin/tunefleet-agent" -a ! -e "$root/usr/bin/tunefleet" -a \
      ! -e "$root/lib/systemd/system/tunefleet-agent.service" ]
  check "remove keeps /etc/tunefleet/agent.conf" [ -f "$root/etc/tunefleet/agent.conf" ]
  check "remove keeps the user tunefleet-agent" [ -n "$(agent_user_ids)" ]
  check "remove masks the unit (as dh_installsystemd)" \
    [ "$(readlink "$root/etc/systemd/system/tunefleet-agent.service")" = /dev/null ]

  arm64_log "apt-get purge tunefleet-agent (in the chroot, offline)"
  apt_in_root purge tunefleet-agent
  check "tunefleet-agent: purged" gone tunefleet-agent
  check "purge deletes /etc/tunefleet/agent.conf" [ ! -e "$root/etc/tunefleet/agent.conf" ]
  check "purge deletes the user and group tunefleet-agent (also from video, render)" \
    bash -c '! grep -q "tunefleet-agent" "$1"/etc/{passwd,group,shadow,gshadow}' _ "$root"
  check "purge deletes the agent's cache /var/cache/tunefleet-agent" \
    [ ! -e "$root/var/cache/tunefleet-agent" ]
  check "purge leaves no unit links, masks or deb-systemd-helper state" \
    [ -z "$(find "$root/etc/systemd" "$root/var/lib/systemd" -name '*tunefleet*' 2>/dev/null)" ]
  if [ -n "$admin_files" ]; then
    for f in $admin_files; do
      check "purge keeps /etc/tunefleet/${f#./} (an administrator's file)" \
        [ -f "$root/etc/tunefleet/${f#./}" ]
    done
  fi
  echo "    dpkg -l 'tunefleet*' after purge: $(in_root dpkg -l 'tunefleet*' 2>&1 | tail -n1)"
}

case "$phase" in
  install) install_phase ;;
  uninstall) uninstall_phase ;;
  all)
    install_phase
    # As an administrator would: the agent's token and the server's CA.
    echo "stand-in token" >"$tmp/agent.token"
    install -m 0640 -o 0 -g "$(agent_user_ids | cut -d' ' -f2)" "$tmp/agent.token" \
      "$root/etc/tunefleet/agent.token"
    install -m 0644 /dev/null "$root/etc/tunefleet/ca.pem"
    sed -i 's/^TUNEFLEET_SERVER=$/TUNEFLEET_SERVER=board-host:7878/' \
      "$root/etc/tunefleet/agent.conf"
    # Remove and install again: the edited conffile is kept, the unit
    # unmasked and enabled again.
    arm64_log "apt-get remove tunefleet-agent, then install it again (in the chroot, offline)"
    apt_in_root remove tunefleet-agent >/dev/null
    install -d -m 755 "$root/tmp/tunefleet-debs"
    install -m 644 "$agent_deb" "$root/tmp/tunefleet-debs/"
    apt_in_root install "/tmp/tunefleet-debs/$(basename "$agent_deb")" >/dev/null
    rm -rf "$root/tmp/tunefleet-debs"
    check "reinstalled: install ok installed" \
      [ "$(status_of tunefleet-agent)" = "install ok installed" ]
    check "reinstall keeps the edited agent.conf (TUNEFLEET_SERVER=board-host:7878)" \
      grep -qx 'TUNEFLEET_SERVER=board-host:7878' "$root/etc/tunefleet/agent.conf"
    check "reinstall unmasks the unit and it is enabled" \
      [ ! -L "$root/etc/systemd/system/tunefleet-agent.service" -a \
        -L "$root/etc/systemd/system/multi-user.target.wants/tunefleet-agent.service" ]
    uninstall_phase
    rm -f "$root/etc/tunefleet/agent.token" "$root/etc/tunefleet/ca.pem"
    rmdir "$root/etc/tunefleet"
    # What the run left in the rootfs: the overlay's upper directory (a
    # deletion shows as a character device 0/0, a whiteout).
    arm64_log "left in the rootfs after purge (the overlay's upper dir; the cached tree is untouched):"
    (cd "$tmp/upper" && find . ! -type d | sort) >"$tmp/left.txt"
    paste -sd' ' "$tmp/left.txt" | fold -s -w 96 | sed 's/^/    /'
    check "nothing of the packages left (no path naming tunefleet)" \
      [ -z "$(grep -i tunefleet "$tmp/left.txt" | grep -v '^./var/log/')" ]
    check "dpkg's status and /etc/passwd are as before the install" \
      bash -c 'cmp -s "$1/var/lib/dpkg/status" "$2/var/lib/dpkg/status" &&
               cmp -s "$1/etc/passwd" "$2/etc/passwd"' _ "$root" "$ARM64_ROOTFS"
    check "/etc/group as before but for the group render postinst made (kept, as udev's on a board)" \
      bash -c 'diff <(grep -v "^render:" "$1/etc/group") "$2/etc/group" >/dev/null &&
               grep -q "^render:x:[0-9]*:$" "$1/etc/group"' _ "$root" "$ARM64_ROOTFS"
    ;;
esac
arm64_log "PASS ($phase, $(arm64_elapsed "$t_start") s)"
