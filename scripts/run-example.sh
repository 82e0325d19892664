#!/usr/bin/env bash
# The main job: installs dependencies, builds traincc, (re)exports the
# example Fashion-MNIST CNN when its sources changed, imports it (printing
# the model report: inputs, outputs, op counts, parameters; writing the
# Train IR), compiles it into a CPU trainer and trains it for one epoch on
# Fashion-MNIST, printing the test accuracy; all under build/examples/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TRAINCC_BUILD_DIR:-$ROOT/build}"
EXAMPLE=examples/fashion_mnist
MODEL=$EXAMPLE/cnn.onnx
OUT_DIR="$BUILD/examples/fashion_mnist"
BATCH=64
# `scripts/run-example.sh [--epochs E] [TRAINER FLAGS...]`: more epochs, and
# any other `trainer train` flags (README: the 3-epoch figure's recipe).
EPOCHS=1
LR=0.01
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) EPOCHS="${2:?--epochs needs a value}"; shift 2 ;;
    --lr) LR="${2:?--lr needs a value}"; shift 2 ;;
    -h|--help)
      echo "usage: scripts/run-example.sh [--epochs E] [--lr F] [trainer train flags...]"
      exit 0 ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done
cd "$ROOT"
mkdir -p "$OUT_DIR"
# Paths as printed: relative to the repository root when inside it.
show() { echo "${1#"$ROOT"/}"; }

# Runs a step quietly, showing its output only when it fails.
quiet() {
  local log="$OUT_DIR/step.log"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "run-example: failed: $*" >&2
    exit 1
  fi
}

echo "[1/6] dependencies"
quiet scripts/install-deps.sh
echo "[2/6] build traincc"
quiet scripts/build.sh traincc

# Re-export only when the model's sources differ from those it was exported
# from (their hashes are recorded beside it): file times say nothing on a
# fresh clone, where every file is new.
STAMP=$EXAMPLE/cnn.onnx.sources.sha256
sources_hash() { sha256sum "$EXAMPLE/model.py" "$EXAMPLE/export.py"; }
if [ ! -f "$MODEL" ] || [ ! -f "$STAMP" ] ||
   [ "$(sources_hash)" != "$(cat "$STAMP")" ]; then
  echo "[3/6] export $MODEL (PyTorch)"
  quiet /usr/bin/python3 "$EXAMPLE/export.py" -o "$MODEL"
  sources_hash >"$STAMP"
else
  echo "[3/6] $MODEL is up to date"
fi

TRAINCC="$BUILD/bin/traincc"
IR="$OUT_DIR/cnn.train.mlir"
echo "[4/6] traincc $MODEL --batch-size $BATCH --emit=train-mlir --report -o $(show "$IR")"
echo
"$TRAINCC" "$MODEL" --batch-size "$BATCH" --emit=train-mlir --report -o "$IR" || {
  echo "run-example: traincc failed on $MODEL" >&2
  exit 1
}
echo

TRAINER="$OUT_DIR/trainer"
echo "[5/6] traincc $MODEL --batch-size $BATCH --momentum 0.9 -o $(show "$TRAINER")"
"$TRAINCC" "$MODEL" --batch-size "$BATCH" --momentum 0.9 -o "$TRAINER" || {
  echo "run-example: traincc could not compile the trainer" >&2
  exit 1
}
echo
LOG="$OUT_DIR/train.jsonl"
echo "[6/6] $(show "$TRAINER") train --dataset fashion-mnist --epochs $EPOCHS --lr $LR${EXTRA[*]:+ ${EXTRA[*]}} --log $(show "$LOG")"
echo "      ($EPOCHS epoch(s) of 937 steps, about 3 minutes each on 2 cores)"
"$TRAINER" train --dataset fashion-mnist --epochs "$EPOCHS" --lr "$LR" \
  ${EXTRA[@]+"${EXTRA[@]}"} --log "$LOG" || {
  echo "run-example: training failed" >&2
  exit 1
}
echo
echo "Train IR: $(show "$IR") ($(wc -l <"$IR") lines)"
echo "Trainer:  $(show "$TRAINER"); log: $(show "$LOG")"
grep '"event":"epoch"' "$LOG" | tail -n 1 |
  sed "s/.*\"val_acc\":\([0-9.]*\).*/Fashion-MNIST test accuracy after $EPOCHS epoch(s): \1/"
