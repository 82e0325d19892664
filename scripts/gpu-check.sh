#!/usr/bin/env bash
# The GPU check of traincc's CUDA trainers, run on the GPU machine from a
# pack that scripts/gpu-prepare.sh wrote (bench/gpu/README.md says how):
# PyTorch parity of the parity models with --device cuda (and cuda vs cpu),
# of bf16/fp16 trainers against PyTorch AMP (scripts/gpu_check_amp.py),
# one Fashion-MNIST epoch of the example CNN, and its training-step time at
# fp32, bf16 and fp16 against PyTorch eager and torch.compile (AMP for
# bf16/fp16), and on a machine with several GPUs its step on one GPU against
# one replica per GPU (NCCL). Logs go to $OUT (else --out); a short table is
# printed last; exit status 1 when anything failed.
#   scripts/gpu-check.sh PACK_DIR [--out DIR] [--device cuda|cpu] [...]
# --device cpu runs the same logic on the CPU (a dry run without GPU);
# scripts/gpu_check.py check --help lists every option.
# Needs a python3 with torch and numpy: $PYTHON, else python3 on PATH.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
  [ $# -ge 1 ]; exit
fi
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ -n "${PYTHON:-}" ]; then
  exec "$PYTHON" "$ROOT/scripts/gpu_check.py" check "$@"
fi
exec /usr/bin/env python3 "$ROOT/scripts/gpu_check.py" check "$@"
