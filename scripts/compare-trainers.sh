#!/usr/bin/env bash
# Checks that a change leaves traincc's output bit-identical: two traincc
# builds compile the example CNN, and their step MLIR, LLVM IR, PTX and the
# trainer's generated descriptor, kernel object and initial state must be
# byte-identical, their trainers must log bit-identical losses over 50
# steps, and their exported ONNX must be byte-identical. For refactors that
# promise no behaviour change.
#
#   scripts/compare-trainers.sh OLD_TRAINCC NEW_TRAINCC   # two built traincc
#   scripts/compare-trainers.sh --base REF [NEW_TRAINCC]  # build REF first
#
# --base builds git revision REF in a worktree under build/compare/ (ccache
# makes that quick when REF is close to the current tree). NEW_TRAINCC
# defaults to build/bin/traincc. Prints one line per check and ends with
# "N passed, N failed"; exits non-zero when anything differs.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() {
  echo "usage: $0 OLD_TRAINCC NEW_TRAINCC | $0 --base REF [NEW_TRAINCC]" >&2
  exit 2
}

if [ "${1:-}" = "--base" ]; then
  [ $# -ge 2 ] || usage
  ref=$2
  rev=$(git -C "$ROOT" rev-parse --verify --quiet "$ref^{commit}") || {
    echo "compare-trainers: '$ref' is not a git revision" >&2
    exit 2
  }
  base="$ROOT/build/compare/$rev"
  if [ ! -d "$base/src" ]; then
    mkdir -p "$base"
    git -C "$ROOT" worktree add --detach "$base/src" "$rev" >/dev/null || exit 1
  fi
  echo "compare-trainers: building $ref ($rev) in $base/build"
  CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}" \
    TRAINCC_BUILD_DIR="$base/build" "$base/src/scripts/build.sh" \
    traincc >"$base/build.log" 2>&1 || {
    tail -n 30 "$base/build.log" >&2
    echo "compare-trainers: building $ref failed" >&2
    exit 1
  }
  old="$base/build/bin/traincc"
  new="${3:-$ROOT/build/bin/traincc}"
else
  [ $# -eq 2 ] || usage
  old=$1
  new=$2
fi
for tool in "$old" "$new"; do
  [ -x "$tool" ] || { echo "compare-trainers: '$tool' is not executable" >&2; exit 2; }
done

MODEL="$ROOT/examples/fashion_mnist/cnn.onnx"
WORK="$ROOT/build/compare/run"
rm -rf "$WORK"
mkdir -p "$WORK/old" "$WORK/new"
passed=0
failed=0
check() { # NAME FILE: the old and new FILE must be byte-identical
  if cmp -s "$WORK/old/$2" "$WORK/new/$2"; then
    echo "same      $1"
    passed=$((passed + 1))
  else
    echo "DIFFERENT $1 ($WORK/old/$2 vs $WORK/new/$2)"
    failed=$((failed + 1))
  fi
}

COMPILE=("$MODEL" --batch-size 64 --momentum 0.9 --target cpu)
TRAIN=(train --dataset fashion-mnist --max-steps 50 --lr 0.01 --threads 2)
for side in old new; do
  tc=$old
  [ $side = new ] && tc=$new
  dir="$WORK/$side"
  "$tc" "${COMPILE[@]}" --emit=step-mlir --print-weights -o "$dir/step.mlir" &&
    "$tc" "${COMPILE[@]}" --emit=llvm -o "$dir/kernels.ll" &&
    "$tc" "$MODEL" --batch-size 64 --momentum 0.9 --emit=ptx -o "$dir/kernels.ptx" &&
    TRAINCC_KEEP_TEMPS=1 "$tc" "${COMPILE[@]}" -o "$dir/trainer" 2>"$dir/compile.err" || {
    cat "$dir/compile.err" >&2
    echo "compare-trainers: $tc failed to compile the example" >&2
    exit 1
  }
  # The trainer's generated descriptor, kernel object and initial state.
  kept=$(sed -n 's/^traincc: kept intermediate files in //p' "$dir/compile.err")
  for file in model.cpp kernels.o state.bin; do
    cp "$kept/$file" "$dir/$file" 2>/dev/null || : >"$dir/$file.missing"
  done
  rm -rf "$kept"
  "$dir/trainer" "${TRAIN[@]}" --log "$dir/run.jsonl" \
    --export "$dir/trained.onnx" >"$dir/train.out" 2>&1 || {
    cat "$dir/train.out" >&2
    echo "compare-trainers: the $side trainer failed" >&2
    exit 1
  }
  # Losses, learning rates and metrics, without wall-clock fields.
  sed -E 's/,"seconds":[^,}]*//' "$dir/run.jsonl" >"$dir/run.nt.jsonl"
done

check "step functions (--emit=step-mlir)" step.mlir
check "CPU kernels (--emit=llvm)" kernels.ll
check "CUDA kernels (--emit=ptx)" kernels.ptx
check "trainer descriptor (generated model.cpp)" model.cpp
check "trainer kernel object" kernels.o
check "trainer initial state" state.bin
check "50-step training log (losses, lr, validation)" run.nt.jsonl
check "exported ONNX" trained.onnx
echo "losses compared: $(grep -c '"event":"step"' "$WORK/new/run.jsonl") steps"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
