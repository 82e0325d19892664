#!/bin/sh
# Installs the peers of bench/cpu_peers.py into virtual environments outside
# the clone, reused across runs (only what is missing is installed):
#
#   $TRAINCC_BENCH_VENV      (default ~/.cache/traincc/bench-venv):
#                            a current PyTorch (eager and torch.compile) and
#                            numpy;
#   $TRAINCC_BENCH_VENV-ort: onnxruntime-training (its own environment: it
#                            clashes with the inference-only onnxruntime
#                            package and wants an older onnx).
#
# PyTorch comes from the CPU wheel index where it is reachable (about 200 MB)
# and from PyPI otherwise (that wheel carries the CUDA libraries: several
# GB). Each part that fails to install is reported and skipped; the bench then
# prints why its peer is missing. The tests never call this.
#
# Usage: sh bench/setup-peers.sh          (prints the two interpreters' paths)
# The environments are made with $TRAINCC_BENCH_PYTHON (default Debian's
# /usr/bin/python3).
set -u

VENV=${TRAINCC_BENCH_VENV:-$HOME/.cache/traincc/bench-venv}
ORT_VENV=$VENV-ort
PY=${TRAINCC_BENCH_PYTHON:-/usr/bin/python3}
CPU_INDEX=https://download.pytorch.org/whl/cpu

make_venv() {  # folder [venv flags]
  [ -x "$1/bin/python" ] || "$PY" -m venv ${2:-} "$1" || return 1
}

status=0

if make_venv "$VENV" && "$VENV/bin/python" -c "import torch, numpy" 2>/dev/null
then
  echo "setup-peers: torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') already in $VENV"
elif [ -x "$VENV/bin/python" ]; then
  echo "setup-peers: installing torch into $VENV"
  # pip retries an unreachable index for minutes: ask it once, briefly.
  if "$PY" -c "import urllib.request as u; u.urlopen('$CPU_INDEX/torch/', timeout=10)" \
       2>/dev/null; then
    "$VENV/bin/pip" install --quiet torch --index-url "$CPU_INDEX" &&
      "$VENV/bin/pip" install --quiet numpy
  else
    echo "setup-peers: the PyTorch CPU index is unreachable; using PyPI (CUDA wheel, several GB)"
    "$VENV/bin/pip" install --quiet torch numpy
  fi || { echo "setup-peers: torch did not install" >&2; status=1; }
else
  echo "setup-peers: cannot create $VENV" >&2; status=1
fi

# onnxruntime.training imports torch (for its ORTModule optimizers) even
# where only its on-device API is used: this environment sees the system's
# packages, and so Debian's torch, rather than download a second PyTorch.
if make_venv "$ORT_VENV" --system-site-packages &&
   "$ORT_VENV/bin/python" -c "import onnxruntime.training.api, onnx" 2>/dev/null
then
  echo "setup-peers: onnxruntime-training already in $ORT_VENV"
elif [ -x "$ORT_VENV/bin/python" ]; then
  echo "setup-peers: installing onnxruntime-training into $ORT_VENV"
  # The -cpu package first (the plain one may carry CUDA kernels). Its last
  # release (1.19, 2024) runs models up to IR version 10, and its artifact
  # generator writes the IR version of the installed onnx: an onnx of its
  # time.
  "$ORT_VENV/bin/pip" install --quiet onnxruntime-training-cpu "onnx<1.17" ||
    "$ORT_VENV/bin/pip" install --quiet onnxruntime-training "onnx<1.17" ||
    { echo "setup-peers: onnxruntime-training did not install" >&2; status=1; }
else
  echo "setup-peers: cannot create $ORT_VENV" >&2; status=1
fi

echo "torch: $VENV/bin/python"
echo "onnxruntime-training: $ORT_VENV/bin/python"
exit $status
