#!/usr/bin/env bash
# Installs every Debian package traincc needs to build and test, then ONNX
# Runtime (not a Debian package) with pip into a virtual environment outside
# the clone: $TRAINCC_ORT_VENV, default ~/.cache/traincc/ort-venv (the tests
# run it as %ort_python). Idempotent: packages already present are skipped
# and a venv that imports onnxruntime is left alone, so a second run is a
# no-op.
set -euo pipefail

PKGS=(
  cmake ninja-build ccache g++ git pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libprotobuf-dev protobuf-compiler libonnx-dev
  python3-torch python3-onnx python3-torchvision python3-numpy python3-venv
  libonnx-testdata dataset-fashion-mnist
  libgtest-dev libgmock-dev zlib1g-dev
  clang clang-14 libclang-rt-14-dev
  # Data-parallel tests: mpirun and libmpi.so.40, which trainers dlopen.
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime, for the test that runs a trainer's --export through it
# (test/e2e/trained-weights.test). Debian's numpy is not visible in the
# venv, so numpy comes from pip too.
VENV=${TRAINCC_ORT_VENV:-$HOME/.cache/traincc/ort-venv}
if "$VENV/bin/python" -c 'import onnxruntime, numpy' 2>/dev/null; then
  echo "install-deps: onnxruntime present in $VENV"
else
  echo "install-deps: installing onnxruntime into $VENV"
  mkdir -p "$(dirname "$VENV")"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check onnxruntime numpy
fi
