#!/usr/bin/env bash
# dpkg-shlibdeps for the packages of a cross build, answered from the
# sysroot's dpkg database (dpkg-shlibdeps itself looks up libraries in the
# host's database only, or in multiarch packages of the target architecture
# installed on the host). cmake/Packaging.cmake points CPack at it, through
# BUILD/packaging/dpkg-shlibdeps, in a cross build:
#
#   sysroot-shlibdeps.sh --sysroot DIR --arch DEBARCH [-lDIR]...
#       [--ignore-missing-info] -O FILE...
#
# prints "shlibs:Depends=..." as dpkg-shlibdeps -O does. For each library
# the ELF files need (readelf -d, NEEDED) it finds the file in the sysroot's
# library directories, the package that ships it (dpkg-query --admindir
# SYSROOT/var/lib/dpkg -S) and the dependency that package declares in its
# shlibs or symbols file; with a symbols file, the version is the highest
# one among the symbols the files use (as dpkg-shlibdeps does, without its
# (c++) and (regex) patterns, which only make a version lower). Libraries in
# a -l directory are the package's own and give no dependency.
# --version and --help answer what CPack asks.
# Checked against dpkg-shlibdeps on amd64 with --sysroot / (test-debs.sh).
set -euo pipefail

sysroot= arch= ignore_missing=0
private_dirs=() files=()
while [ $# -gt 0 ]; do
  case $1 in
    --version)
      echo "Debian dpkg-shlibdeps version 1.21.0 (tunefleet sysroot-shlibdeps)"
      exit 0 ;;
    --help)
      echo "usage: $0 --sysroot DIR --arch DEBARCH [-lDIR]... [--ignore-missing-info] -O FILE..."
      exit 0 ;;
    --sysroot) sysroot=${2%/}; shift ;;
    --arch) arch=$2; shift ;;
    -l*) private_dirs+=("${1#-l}") ;;
    --ignore-missing-info) ignore_missing=1 ;;
    -O) ;;
    -*) echo "sysroot-shlibdeps: ignoring option $1" >&2 ;;
    *) files+=("$1") ;;
  esac
  shift
done
die() { echo "sysroot-shlibdeps: $*" >&2; exit 1; }
[ -n "$arch" ] || die "--arch DEBARCH is required (arm64, amd64, ...)"
admindir=$sysroot/var/lib/dpkg
[ -d "$admindir/info" ] ||
  die "$admindir is not a dpkg database: --sysroot must be a Debian root file system"
multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null) ||
  die "unknown Debian architecture $arch"
search_dirs=("/lib/$multiarch" "/usr/lib/$multiarch" /lib /usr/lib)

# $1 (a path inside the sysroot, as seen from it) with its symbolic links
# resolved inside the sysroot, also the absolute ones.
resolve_in_sysroot() {
  local path=$1 target i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    [ -L "$sysroot$path" ] || break
    target=$(readlink "$sysroot$path")
    case $target in
      /*) path=$target ;;
      *) path=$(dirname "$path")/$target ;;
    esac
  done
  realpath -m -s "$path"
}

# The package of the sysroot that ships $1 (tried also through /usr-merge
# aliases and with links resolved), or nothing.
owner_of() {
  local path=$1 real candidates=() c pkg
  real=$(resolve_in_sysroot "$path")
  for c in "$path" "$real"; do
    candidates+=("$c")
    case $c in
      /usr/*) candidates+=("${c#/usr}") ;;
      *) candidates+=("/usr$c") ;;
    esac
  done
  for c in "${candidates[@]}"; do
    pkg=$(dpkg-query --admindir="$admindir" -S "$c" 2>/dev/null | head -n1) || true
    if [ -n "$pkg" ]; then
      echo "${pkg%%:*}"  # "libfoo1:arm64: /usr/lib/..." -> libfoo1
      return
    fi
  done
}

# The control file of package $1 named $2 (shlibs, symbols), if any.
info_file() {
  local f
  for f in "$admindir/info/$1:$arch.$2" "$admindir/info/$1.$2"; do
    if [ -f "$f" ]; then echo "$f"; return 0; fi
  done
  return 0
}

# The highest of the Debian versions on stdin (dpkg --compare-versions).
max_version() {
  local max= v
  while read -r v; do
    [ -n "$v" ] || continue
    if [ -z "$max" ] || dpkg --compare-versions "$v" gt "$max"; then max=$v; fi
  done
  echo "$max"
}

# The symbols the files use: "name@VERSION", unversioned ones as name@Base.
used_symbols=$(mktemp)
trap 'rm -f "$used_symbols"' EXIT
needed=() elf_files=()
for f in "${files[@]}"; do
  readelf -h "$f" >/dev/null 2>&1 && elf_files+=("$f")  # else not ELF
done
for f in "${elf_files[@]+"${elf_files[@]}"}"; do
  while read -r lib; do needed+=("$lib"); done < <(
    readelf -d -W "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
done
for f in "${elf_files[@]+"${elf_files[@]}"}"; do
  readelf --dyn-syms -W "$f" |
    awk '$7 == "UND" && NF >= 8 { s = $8; if (s !~ /@/) s = s "@Base"; print s }'
done | sort -u > "$used_symbols"

deps=()
for soname in $(printf '%s\n' "${needed[@]+"${needed[@]}"}" | sort -u); do
  private=0
  for d in "${private_dirs[@]+"${private_dirs[@]}"}"; do
    [ -e "$d/$soname" ] && private=1
  done
  [ "$private" = 1 ] && continue
  path=
  for d in "${search_dirs[@]}"; do
    if [ -e "$sysroot$d/$soname" ]; then path=$d/$soname; break; fi
  done
  [ -n "$path" ] || die "cannot find $soname in $sysroot (${search_dirs[*]})"
  pkg=$(owner_of "$path")
  if [ -z "$pkg" ]; then
    [ "$ignore_missing" = 1 ] ||
      die "no package of $sysroot ships $path (needed: $soname)"
    echo "sysroot-shlibdeps: warning: no package ships $path; no dependency for it" >&2
    continue
  fi
  dep=
  symbols=$(info_file "$pkg" symbols)
  if [ -n "$symbols" ] && awk -v so="$soname" '
       /^[^ |*#]/ && $1 == so { found = 1 } END { exit !found }' "$symbols"; then
    # The block of $soname: its header "SONAME TEMPLATE", "| TEMPLATE" lines
    # (alternative templates 1, 2, ...), "* FIELD: value" lines and
    # " SYMBOL VERSION [TEMPLATE-ID]" lines. Version 0: any version.
    block=$(awk -v so="$soname" '/^[^ |*#]/ { inside = ($1 == so) } inside' "$symbols")
    # "ID VERSION" for each symbol of the block the files use.
    used=$(printf '%s\n' "$block" | awk '/^ / {
          sym = $1
          if (sym ~ /^\(/) {
            if (sym ~ /^\((c\+\+|regex|symver)/) next
            sub(/^\([^)]*\)/, "", sym)
          }
          print sym, $2, ($3 == "" ? 0 : $3) }' |
        awk 'NR == FNR { u[$1] = 1; next } ($1 in u) { print $3, $2 }' \
          "$used_symbols" -)
    # The main template always (as dpkg-shlibdeps), an alternative one where
    # a used symbol names it; each with the highest version of its symbols.
    for id in $( (echo 0; printf '%s\n' "$used" | awk 'NF { print $1 }') | sort -un); do
      minver=$(printf '%s\n' "$used" | awk -v id="$id" '$1 == id && $2 != "0" { print $2 }' |
               sort -u | max_version)
      if [ -n "$minver" ]; then repl=" (>= $minver)"; else repl=""; fi
      dep+=${dep:+, }$(printf '%s\n' "$block" | awk -v id="$id" -v r="$repl" '
        NR == 1 { n = 0; $1 = ""; t[0] = substr($0, 2) }
        /^\| / { t[++n] = substr($0, 3) }
        END { x = t[id]; gsub(/ ?#MINVER#/, r, x); print x }')
    done
  elif shlibs=$(info_file "$pkg" shlibs) && [ -n "$shlibs" ]; then
    # "LIBNAME SOVERSION DEPENDENCY": libfoo.so.1 or libfoo-1.so.
    if [[ $soname =~ ^(.*)\.so\.(.*)$ ]]; then
      name=${BASH_REMATCH[1]} version=${BASH_REMATCH[2]}
    elif [[ $soname =~ ^(.*)-([0-9][^-]*)\.so$ ]]; then
      name=${BASH_REMATCH[1]} version=${BASH_REMATCH[2]}
    else
      name=${soname%.so} version=
    fi
    dep=$(awk -v n="$name" -v v="$version" '
      $1 !~ /:$/ && $1 == n && $2 == v { $1 = ""; $2 = ""; print substr($0, 3); exit }' "$shlibs")
  fi
  if [ -z "$dep" ]; then
    [ "$ignore_missing" = 1 ] ||
      die "$pkg declares no dependency for $soname (no shlibs or symbols entry)"
    dep=$pkg
  fi
  deps+=("$dep")
done

# One entry per package: where several name the same package alone with a
# version, the highest version.
printf 'shlibs:Depends='
printf '%s\n' "${deps[@]+"${deps[@]}"}" | sed 's/, */\n/g' | awk '
  {
    if ($0 !~ /\|/ && match($0, /^[^ ]+ \(>= [^)]+\)$/)) {
      p = $1; v = $0; sub(/^[^(]*\(>= /, "", v); sub(/\)$/, "", v)
      if (!(p in ver)) order[++n] = p
      ver[p] = ver[p] " " v
    } else if (!($0 in seen)) { seen[$0] = 1; order[++n] = $0 }
  }
  END { for (i = 1; i <= n; i++) print order[i] "\t" ver[order[i]] }' |
  while IFS=$'\t' read -r p versions; do
    if [ -n "$versions" ]; then
      echo "$p (>= $(printf '%s\n' $versions | max_version))"
    else
      echo "$p"
    fi
  done | sort -u | paste -sd, - | sed 's/,/, /g'
