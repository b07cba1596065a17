# shellcheck shell=bash
# Sourced, not run: systemd's view of a unit, for running its command where
# systemd does not run (a chroot, a test). Used by test-debs.sh and
# deploy/arm64/common.sh.

# unit_load_env FILE: its NAME=value lines exported, as systemd reads an
# EnvironmentFile= (comments and blank lines skipped, one level of quotes
# removed). Returns 1, naming the line, on a line that is not NAME=value.
unit_load_env() {
  local line name value
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $line =~ ^[[:space:]]*(#|;|$) ]] && continue
    if ! [[ $line =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
      echo "$1: bad line (expected NAME=value): $line" >&2
      return 1
    fi
    name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
    value=${value%"${value##*[![:space:]]}"}
    if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
      value=${BASH_REMATCH[1]}
    fi
    export "$name=$value"
  done <"$1"
}

# unit_argv UNIT KEY: the command of KEY= (its first line without a -/+
# prefix) into the array ARGV, ${VAR} expanded to one argument and $VAR
# split on white space, as systemd does. Returns 1 when UNIT has no KEY=.
unit_argv() {
  local line word name
  line=$(sed -n "s/^$2=//p" "$1" | grep -v '^[-+]' | head -n1)
  if [ -z "$line" ]; then
    echo "no $2= in $1" >&2
    return 1
  fi
  ARGV=()
  set -f
  for word in $line; do
    if [[ $word =~ ^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$ ]]; then
      name=${BASH_REMATCH[1]}; ARGV+=("${!name-}")
    elif [[ $word =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
      name=${BASH_REMATCH[1]}
      # Split on white space, as systemd does.
      # shellcheck disable=SC2206
      ARGV+=(${!name-})
    else
      ARGV+=("$word")
    fi
  done
  set +f
}
