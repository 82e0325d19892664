#!/usr/bin/env bash
# Builds the libFuzzer target over the ONNX import (importONNXBuffer plus the
# import pipeline) with clang, AddressSanitizer and coverage on the reader,
# imports once each single-op model with hostile values that
# gen-hostile-models.py writes, then fuzzes for a while from a seed corpus
# of small ONNX models. Exits non-zero when either finds a crash, a
# sanitizer report, a hang or a runaway allocation; the input that
# triggered it is left under build-fuzz/artifacts/.
#   test/fuzz/run-fuzz.sh [SECONDS] [libFuzzer flags...]   (default 30 s)
# Environment: FUZZ_CXX (default clang++), TRAINCC_FUZZ_BUILD_DIR (default
# build-fuzz/), TRAINCC_BUILD_DIR (main build, default build/).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MAIN_BUILD="${TRAINCC_BUILD_DIR:-$ROOT/build}"
FUZZ_BUILD="${TRAINCC_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
CXX="${FUZZ_CXX:-clang++}"
SECONDS_TO_RUN="${1:-30}"
shift || true
TESTDATA=/usr/share/libonnx-testdata/data

if ! command -v "$CXX" >/dev/null; then
  echo "run-fuzz: '$CXX' not found (install clang: scripts/install-deps.sh)" >&2
  exit 1
fi

# The target links what the main build's traincc links (g++-built; same
# libstdc++), except the reader, which it compiles itself, instrumented.
"$ROOT/scripts/build.sh" traincc
LIBS=$(ninja -C "$MAIN_BUILD" -t commands bin/traincc | tail -n 1 |
  tr ' ' '\n' | sed -n '/^-o$/,$p' | tail -n +3 |
  grep -E '\.(a|so)(\.[0-9]+)*$' | grep -v 'libTrainccONNXReader\.a' |
  sed "s|^lib/|$MAIN_BUILD/lib/|" | paste -sd ';')
if [ -z "$LIBS" ]; then
  echo "run-fuzz: cannot read traincc's libraries from $MAIN_BUILD" >&2
  exit 1
fi
cmake -S "$ROOT/test/fuzz" -B "$FUZZ_BUILD" -G Ninja \
  -DCMAKE_CXX_COMPILER="$CXX" -DTRAINCC_BUILD_DIR="$MAIN_BUILD" \
  -DTRAINCC_LINK_LIBS="$LIBS" >/dev/null
ninja -C "$FUZZ_BUILD" traincc-fuzz-import

# Seeds: ONNX's own small test models (every op at several opsets; the
# opset 1-6 ones exercise the version converter) and the reader's lit test
# models.
SEEDS="$FUZZ_BUILD/seeds"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
for model in "$TESTDATA"/*/*/model.onnx; do
  [ -f "$model" ] || continue
  [ "$(stat -c %s "$model")" -le 65536 ] || continue
  name="${model#"$TESTDATA"/}"
  cp "$model" "$SEEDS/$(dirname "$name" | tr / _).onnx"
done
for text in "$ROOT"/test/Import/ONNX/reader/*.textproto \
            "$ROOT"/test/Import/ONNX/reader/Inputs/*.textproto; do
  protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto \
    < "$text" > "$SEEDS/$(basename "$text" .textproto).onnx"
done

# Every op alone with hostile attribute and input values: byte mutations
# seldom make these, and models of opsets below 7 (the version converter's
# path) take tens of milliseconds each, so rather than seeding the fuzzer
# with them, each is imported once, again only when the target or the
# models changed since the last clean pass.
HOSTILE="$FUZZ_BUILD/hostile"
GENERATOR="$ROOT/test/fuzz/gen-hostile-models.py"
if [ ! -d "$HOSTILE" ] || [ "$GENERATOR" -nt "$HOSTILE" ]; then
  rm -rf "$HOSTILE" "$HOSTILE.tmp"
  /usr/bin/python3 "$GENERATOR" "$HOSTILE.tmp"
  mv "$HOSTILE.tmp" "$HOSTILE"
fi
mkdir -p "$FUZZ_BUILD/artifacts"
FLAGS=(-timeout=10 -rss_limit_mb=2048 -max_len=65536
       -artifact_prefix="$FUZZ_BUILD/artifacts/")
STAMP="$FUZZ_BUILD/hostile.passed"
if [ ! -f "$STAMP" ] || [ "$FUZZ_BUILD/traincc-fuzz-import" -nt "$STAMP" ] ||
   [ "$HOSTILE" -nt "$STAMP" ]; then
  echo "run-fuzz: importing each of $(ls "$HOSTILE" | wc -l) hostile models once"
  rm -f "$STAMP"
  status=0
  "$FUZZ_BUILD/traincc-fuzz-import" "${FLAGS[@]}" -runs=0 "$HOSTILE" \
    > "$FUZZ_BUILD/hostile.log" 2>&1 || status=$?
  grep -E '^#[0-9]+[[:space:]]+DONE|ERROR|SUMMARY|^ +#[0-9]+ ' \
    "$FUZZ_BUILD/hostile.log" || true
  if [ "$status" -ne 0 ]; then
    echo "run-fuzz: a hostile model made the import fail (exit $status);" \
      "the input is in $FUZZ_BUILD/artifacts/" >&2
    exit "$status"
  fi
  touch "$STAMP"
fi

CORPUS="$FUZZ_BUILD/corpus"
mkdir -p "$CORPUS"
echo "run-fuzz: $(ls "$SEEDS" | wc -l) seeds, fuzzing for $SECONDS_TO_RUN s"
# New inputs go to the first corpus folder; the seeds are read only.
status=0
"$FUZZ_BUILD/traincc-fuzz-import" "${FLAGS[@]}" \
  -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 \
  -dict="$ROOT/test/fuzz/onnx.dict" "$@" "$CORPUS" "$SEEDS" || status=$?
if [ "$status" -ne 0 ]; then
  echo "run-fuzz: the fuzzer found a problem (exit $status);" \
    "the input is in $FUZZ_BUILD/artifacts/" >&2
fi
exit "$status"
