#!/usr/bin/env bash
# Installs every Debian package traincc needs to build and test. Idempotent:
# packages already present are skipped, so a second run is a no-op.
set -euo pipefail

PKGS=(
  cmake ninja-build ccache g++ git pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libprotobuf-dev protobuf-compiler libonnx-dev
  python3-torch python3-onnx python3-torchvision python3-numpy
  libonnx-testdata dataset-fashion-mnist
  libgtest-dev libgmock-dev zlib1g-dev
  clang clang-14 libclang-rt-14-dev
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
