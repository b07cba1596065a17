#!/usr/bin/env bash
# Generates the Python stubs of tunefleet's public protos into OUT_DIR:
#   OUT_DIR/tunefleet/v1/{common,agent,tuning}_pb2.py and *_pb2_grpc.py
# (package tunefleet.v1; use them with PYTHONPATH=OUT_DIR). Generated code
# is never committed: generate it into a build or temp folder.
#
# Usage: examples/python/generate.sh OUT_DIR
#
# The compiler: Debian's python3-grpc-tools (grpc_tools.protoc), what a
# Python integrator installs; where it is missing, Debian's protoc
# (protobuf-compiler) with its gRPC Python plugin (grpc_python_plugin,
# protobuf-compiler-grpc), the packages the C++ build uses. Debian 12's
# grpc_tools bundles protoc 3.5.1: the protos keep to options it knows.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
proto_root=$(cd "$here/../../proto" && pwd)  # the import root: tunefleet/v1/...
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"

protos=("$proto_root"/tunefleet/v1/*.proto)
plugin=$(command -v grpc_python_plugin || true)
if "$python" -c 'import grpc_tools.protoc' 2>/dev/null; then
  "$python" -m grpc_tools.protoc -I "$proto_root" \
    --python_out="$out" --grpc_python_out="$out" "${protos[@]}"
elif command -v protoc >/dev/null 2>&1 && [ -n "$plugin" ]; then
  protoc -I "$proto_root" --plugin=protoc-gen-grpc_python="$plugin" \
    --python_out="$out" --grpc_python_out="$out" "${protos[@]}"
else
  echo "$0: no proto compiler: need protoc and grpc_python_plugin" \
       "(protobuf-compiler, protobuf-compiler-grpc) or python3-grpc-tools;" \
       "run deploy/install-deps.sh" >&2
  exit 1
fi
echo "generated $(ls "$out"/tunefleet/v1/*.py | wc -l) files in $out/tunefleet/v1"
