#!/bin/sh
# Installs the frameworks whose exports test/e2e/frameworks trains, each in
# a virtual environment outside the clone, reused when it already imports
# what it needs (a second run is a no-op):
#
#   $TRAINCC_TF_VENV  (default ~/.cache/traincc/tf-venv):  tensorflow-cpu,
#                     tf2onnx, onnx (Keras 3 with TensorFlow's backend);
#   $TRAINCC_JAX_VENV (default ~/.cache/traincc/jax-venv): jax (CPU), flax,
#                     optax, jax2onnx, onnx;
#   the current-PyTorch environment of bench/setup-peers.sh
#   ($TRAINCC_BENCH_VENV, default ~/.cache/traincc/bench-venv), when it
#   exists: onnx and onnxscript, which torch.onnx.export needs and PyTorch
#   does not install. PyTorch itself is not installed here (its PyPI wheel
#   is several GB); the tests that need it are skipped without it.
#
# The versions are pinned to those the tests were measured with on Debian
# 12's Python 3.11; about 1 minute on a fresh machine (20 s for TensorFlow,
# 35 s for JAX, wheels only). Each part that fails is reported and skipped;
# lit then marks the tests that need it UNSUPPORTED.
#
# Usage: sh scripts/setup-framework-venvs.sh
set -u

PY=${TRAINCC_FRAMEWORK_PYTHON:-/usr/bin/python3}
CACHE=$HOME/.cache/traincc
TF_VENV=${TRAINCC_TF_VENV:-$CACHE/tf-venv}
JAX_VENV=${TRAINCC_JAX_VENV:-$CACHE/jax-venv}
TORCH_VENV=${TRAINCC_BENCH_VENV:-$CACHE/bench-venv}

TF_PACKAGES="tensorflow-cpu==2.21.0 tf2onnx==1.17.0 onnx==1.23.2"
JAX_PACKAGES="jax==0.10.2 flax==0.12.8 optax==0.2.8 jax2onnx==0.17.1 onnx==1.23.2"
TORCH_PACKAGES="onnx==1.23.2 onnxscript==0.7.2"

status=0

# setup NAME VENV MODULES PACKAGES (MODULES: found without importing them,
# which takes TensorFlow seconds)
setup() {
  if [ -x "$2/bin/python" ] && "$2/bin/python" -c "
import importlib.util, sys
sys.exit(any(importlib.util.find_spec(m) is None for m in '$3'.split()))" \
       2>/dev/null; then
    echo "setup-framework-venvs: $1 present in $2"
    return 0
  fi
  echo "setup-framework-venvs: installing $1 into $2"
  mkdir -p "$(dirname "$2")"
  if { [ -x "$2/bin/python" ] || "$PY" -m venv "$2"; } &&
     "$2/bin/pip" install --quiet --disable-pip-version-check $4; then
    return 0
  fi
  echo "setup-framework-venvs: $1 did not install" >&2
  status=1
}

setup "TensorFlow and tf2onnx" "$TF_VENV" "tensorflow tf2onnx onnx" \
  "$TF_PACKAGES"
setup "JAX, Flax, optax and jax2onnx" "$JAX_VENV" \
  "jax flax optax jax2onnx onnx" "$JAX_PACKAGES"
if [ -x "$TORCH_VENV/bin/python" ] &&
   "$TORCH_VENV/bin/python" -c "import torch" 2>/dev/null; then
  setup "torch.onnx's exporter packages" "$TORCH_VENV" \
    "torch onnx onnxscript" "$TORCH_PACKAGES"
else
  echo "setup-framework-venvs: no current PyTorch in $TORCH_VENV" \
       "(sh bench/setup-peers.sh installs one); its tests are skipped"
fi
exit $status
