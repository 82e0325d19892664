#!/usr/bin/env bash
# Configures (first time only) and builds traincc into build/ with Ninja and
# ccache. Idempotent: when everything is up to date it returns in about a
# second. Extra arguments are Ninja targets (default: everything).
#   scripts/build.sh                  # traincc, traincc-opt, libraries
#   scripts/build.sh check-traincc    # build and run the lit tests
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TRAINCC_BUILD_DIR:-$ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22

for tool in cmake ninja; do
  if ! command -v "$tool" >/dev/null; then
    echo "build: '$tool' not found; run scripts/install-deps.sh first" >&2
    exit 1
  fi
done

# Several builds of one tree at once corrupt Ninja's state: builds into the
# default build/ take the lock that everyone working in this tree shares
# (flock is in util-linux, always present on Debian).
LOCK=()
if [ "$BUILD" = "$ROOT/build" ] && command -v flock >/dev/null; then
  LOCK=(flock /tmp/traincc-build.lock)
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  echo "build: configuring $BUILD"
  mkdir -p "$BUILD"
  LAUNCHER=()
  if command -v ccache >/dev/null; then
    LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  "${LOCK[@]}" cmake -S "$ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit" \
    "${LAUNCHER[@]}" >"$BUILD/configure.log" 2>&1 || {
    cat "$BUILD/configure.log" >&2
    echo "build: cmake configuration failed" >&2
    exit 1
  }
fi

# Ninja re-runs cmake by itself when a CMakeLists.txt changed.
"${LOCK[@]}" ninja -C "$BUILD" "$@"
