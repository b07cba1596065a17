#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js (npm's onnxruntime-node, CPU execution
# provider) into the git-ignored .cache/ort, the oracle the model tests
# compare tunefleet's outputs with (tests/support/ort_run.mjs,
# docs/ORT_ORACLE.md). Prints the directory that holds its node_modules.
# Idempotent: an install of the pinned version is kept.
#
# Downloads: the npm packages only. The package bundles the CPU runtime
# (libonnxruntime.so) for every platform; its postinstall script
# (script/install.js) downloads one thing, the CUDA execution provider
# (libonnxruntime_providers_{cuda,shared,tensorrt}.so) for linux/x64 from
# NuGet. DirectML and WebGPU are bundled (Windows only), nothing else is
# fetched. Scripts are not run at all (--ignore-scripts), and the install
# flags say skip as well, for anyone who runs script/install.js later.
# The other platforms' binaries are deleted after the install (~200 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
# 1.30.0: the newest release when this was written (a N-API 6 addon;
# tried on Node.js 20.20, Debian 12).
VERSION=${ORT_NODE_VERSION:-1.30.0}
DIR=.cache/ort
PKG=$DIR/node_modules/onnxruntime-node
PLATFORM=$(node -p 'process.platform + "/" + process.arch' 2>/dev/null || true)
BINDING=$PKG/bin/napi-v6/$PLATFORM/onnxruntime_binding.node

installed_version() {
  node -p "require('./$PKG/package.json').version" 2>/dev/null || true
}

if [ -n "$PLATFORM" ] && [ -f "$BINDING" ] &&
   [ "$(installed_version)" = "$VERSION" ]; then
  echo "$DIR"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm >&2
  PLATFORM=$(node -p 'process.platform + "/" + process.arch')
  BINDING=$PKG/bin/napi-v6/$PLATFORM/onnxruntime_binding.node
fi

# A fresh directory beside the old one, renamed into place when complete,
# so an interrupted install never leaves a half one behind.
mkdir -p .cache
TMP=$(mktemp -d .cache/ort.tmp.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
echo '{"private": true, "description": "tunefleet ORT oracle cache"}' \
  > "$TMP/package.json"
if ! (cd "$TMP" &&
   ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
   npm install --loglevel=error --no-audit --no-fund --ignore-scripts \
     --save-exact "onnxruntime-node@$VERSION" >&2); then
  echo "fetch-ort: npm install onnxruntime-node@$VERSION failed (offline?)" >&2
  exit 1
fi
# Keep this platform's binaries only.
for d in "$TMP"/node_modules/onnxruntime-node/bin/napi-v6/*/*; do
  case "$d" in */bin/napi-v6/$PLATFORM) ;; *) rm -rf "$d" ;; esac
done
find "$TMP"/node_modules/onnxruntime-node/bin -type d -empty -delete
# The runtime must load here, or the install is no use.
(cd "$TMP" && node -e "require('onnxruntime-node')" >&2)
rm -rf "$DIR"
mv "$TMP" "$DIR"
trap - EXIT
echo "fetch-ort: onnxruntime-node $VERSION in $DIR" >&2
echo "$DIR"
