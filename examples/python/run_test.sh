#!/usr/bin/env bash
# The Python client against real binaries (ctest: python_client_test):
# generates the stubs into a temp dir, starts tunefleet-server on a free
# loopback port with a tokens file and a tunefleet-agent on this machine's
# OpenCL device (PoCL here), runs tunefleet_client.py, and checks what it
# received with check_run.py. Server and agent end with the script.
#
# Usage: run_test.sh SERVER_BIN AGENT_BIN CLI_BIN
# TUNEFLEET_KEEP_TEST_DIRS=1 keeps the temp dir (logs, database, stubs).
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 tunefleet-server tunefleet-agent tunefleet" >&2
  exit 2
fi
server_bin=$1 agent_bin=$2 cli_bin=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=/usr/bin/python3  # Debian's python, where python3-grpcio installs
key=python-client-test
agent_name=py-agent-1

# Not a skip: without grpcio this test fails and says how to get it.
if ! "$python" -c 'import grpc, google.protobuf' 2>/dev/null; then
  echo "FAIL: $python cannot import grpc: install python3-grpcio" \
       "(run deploy/install-deps.sh)" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tf_python_client.XXXXXX")
server_pid="" agent_pid=""
cleanup() {
  local rc=$?
  for pid in $agent_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in $agent_pid $server_pid; do
    wait "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ]; then
    for log in server agent; do
      if [ -f "$tmp/$log.log" ]; then
        echo "--- last lines of $log.log"
        tail -n 20 "$tmp/$log.log"
      fi
    done
  fi
  if [ -n "${TUNEFLEET_KEEP_TEST_DIRS:-}" ]; then
    echo "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. The stubs, into the temp dir (never into the source tree).
bash "$here/generate.sh" "$tmp/gen"
export PYTHONPATH="$tmp/gen" PYTHONDONTWRITEBYTECODE=1

# 2. Tokens: one of role agent, one of role tuner for the client.
"$cli_bin" token add --role agent --name agents --tokens "$tmp/tokens.txt" \
  >"$tmp/agent.token"
"$cli_bin" token add --role tuner --name py-client --tokens "$tmp/tokens.txt" \
  >"$tmp/tuner.token"

# 3. The server on any free port; its log names the port it got. `timeout`
# bounds both processes should this script be killed before its trap runs.
timeout -k 5 900 "$server_bin" --listen 127.0.0.1:0 --db "$tmp/tunefleet.db" \
  --tokens "$tmp/tokens.txt" --heartbeat-ms 500 >"$tmp/server.log" 2>&1 &
server_pid=$!
address=""
for _ in $(seq 300); do
  address=$(sed -n 's/.*tunefleet-server: listening on \([^ ]*\) .*/\1/p' \
    "$tmp/server.log" | head -n 1)
  [ -n "$address" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "FAIL: tunefleet-server exited" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$address" ]; then
  echo "FAIL: tunefleet-server did not say where it listens within 30 s" >&2
  exit 1
fi
echo "server on $address"

# 4. An agent on the first OpenCL device, with a binary cache of its own.
timeout -k 5 900 "$agent_bin" --server "$address" --key "$key" \
  --name "$agent_name" --token-file "$tmp/agent.token" \
  --binary-cache "$tmp/binaries" >"$tmp/agent.log" 2>&1 &
agent_pid=$!

# 5. The client: waits for the agent's key, tunes, watches, pages records.
"$python" "$here/tunefleet_client.py" --server "$address" \
  --token-file "$tmp/tuner.token" --device-key "$key" --wait-s 60 \
  --op gemm --shape M=64,N=64,K=64 --trials 8 --strategy random --seed 7 \
  --page-size 3 --timeout-s 300 --json "$tmp/summary.json"

# 6. What it received, checked against the server.
"$python" "$here/check_run.py" "$tmp/summary.json" --server "$address" \
  --token-file "$tmp/tuner.token" --device-key "$key" \
  --agent-name "$agent_name"
