#!/usr/bin/env bash
# Prepares the GPU check (scripts/gpu-check.sh) on a machine with traincc:
# builds traincc when needed, compiles the parity models of test/e2e/parity
# (fp32, and bf16/fp16 ones) and the Fashion-MNIST example (fp32, bf16,
# fp16) for --target cpu,cuda --gpu-arch sm_90 --cpu x86-64-v3 (the GPU
# machine's CPU may differ) and packs the trainers, their inputs, the
# dataset and manifest.json into OUT_DIR.
#   scripts/gpu-prepare.sh build/gpu-pack               # builds traincc
#   scripts/gpu-prepare.sh --traincc PATH OUT_DIR       # uses that traincc
# OUT_DIR is replaced when it holds an earlier pack (manifest.json). Keep it
# under build/ (ignored by git) and name it in the device tool's `carry`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TRAINCC_BUILD_DIR:-$ROOT/build}"
TRAINCC=""
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --traincc) TRAINCC="$2"; shift 2 ;;
    -h|--help)
      sed -n '2,11s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
if [ ${#ARGS[@]} -lt 1 ]; then
  echo "usage: scripts/gpu-prepare.sh [--traincc PATH] OUT_DIR [gpu_prepare.py options]" >&2
  exit 1
fi
if [ -z "$TRAINCC" ]; then
  "$ROOT/scripts/build.sh" traincc >/dev/null
  TRAINCC="$BUILD/bin/traincc"
fi
# Debian's interpreter has torch and onnx (for the ONNX export).
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 "$ROOT/scripts/gpu_prepare.py" --traincc "$TRAINCC" "${ARGS[@]}"
