#!/usr/bin/env bash
# The one command that sets up and runs every traincc test suite, from a
# fresh Debian 12 machine to a verdict:
#   1. scripts/install-deps.sh   (Debian packages; a no-op when present),
#      scripts/setup-framework-venvs.sh (TensorFlow, JAX: pip, outside the clone)
#   2. scripts/build.sh          (configure + build into build/)
#   3. lit: ninja -C build check-traincc (dialect, importer and e2e tests)
#   4. ctest --test-dir build    (only when unit tests are registered)
#   5. PyTorch parity figures    (two parity cases, printed)
#   6. test/fuzz/run-fuzz.sh     (only when present)
# Ends with one line "N passed, N failed" over all suites (lit tests and
# ctest tests counted one by one, the fuzz script as one) and exits non-zero
# on any failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${TRAINCC_BUILD_DIR:-$ROOT/build}"
cd "$ROOT"
START=$SECONDS
passed=0
failed=0

section() {
  echo "== $1 (at $((SECONDS - START)) s)"
}

finish() {
  echo "test.sh: $((SECONDS - START)) s"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

section "install dependencies"
if ! scripts/install-deps.sh; then
  failed=$((failed + 1))
  echo "test.sh: installing dependencies failed" >&2
  finish
fi

# TensorFlow, JAX and their exporters for test/e2e/frameworks (about a
# minute the first time, a no-op after); without them those tests are
# UNSUPPORTED, so a failure here fails nothing.
section "framework environments"
scripts/setup-framework-venvs.sh || echo "test.sh: some framework environments are missing" >&2

section "build"
if ! scripts/build.sh; then
  failed=$((failed + 1))
  echo "test.sh: the build failed" >&2
  finish
fi

LOG="$BUILD/test-logs"
mkdir -p "$LOG"

section "lit (check-traincc)"
scripts/build.sh check-traincc 2>&1 | tee "$LOG/lit.log"
lit_rc=${PIPESTATUS[0]}
# lit's summary: "  Passed           : 12 (100.00%)", one line per result kind.
read -r lit_pass lit_fail < <(awk -F: '
  /^Total Discovered Tests:/ { summary = 1 }
  summary && /^  [A-Za-z ]+: +[0-9]+ \(/ {
    label = $1; gsub(/^ +| +$/, "", label)
    n = $2; sub(/\(.*/, "", n); n += 0
    if (label ~ /^(Passed|Passed With Retry|Expectedly Failed)$/) p += n
    if (label ~ /^(Failed|Unresolved|Timed Out|Unexpectedly Passed)$/) f += n
  }
  END { print p + 0, f + 0 }' "$LOG/lit.log")
if [ "$lit_rc" -ne 0 ] && [ "$lit_fail" -eq 0 ]; then
  lit_fail=1 # lit or its dependencies failed before any test ran
fi
passed=$((passed + lit_pass))
failed=$((failed + lit_fail))

if [ -f "$BUILD/CTestTestfile.cmake" ] &&
   ctest --test-dir "$BUILD" -N 2>/dev/null | grep -q '^Total Tests: [1-9]'; then
  section "ctest"
  ctest --test-dir "$BUILD" --output-on-failure -j2 2>&1 | tee "$LOG/ctest.log"
  ctest_rc=${PIPESTATUS[0]}
  # "95% tests passed, 1 tests failed out of 20"
  read -r ct_fail ct_total < <(sed -n \
    's/^[0-9]*% tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' \
    "$LOG/ctest.log" | tail -n 1)
  ct_fail=${ct_fail:-0}
  ct_total=${ct_total:-0}
  if [ "$ctest_rc" -ne 0 ] && [ "$ct_fail" -eq 0 ]; then ct_fail=1; fi
  passed=$((passed + ct_total - ct_fail))
  failed=$((failed + ct_fail))
fi

# lit checks the parity tests but shows their output only on failure; print
# the measured errors of two of them here so that every run records them.
section "PyTorch parity figures (relative error vs a float64 PyTorch run)"
PARITY_CASES=("--model residual"
              "--model basic-conv-bn --optimizer adam --lr 0.01 --accum 4")
for case in "${PARITY_CASES[@]}"; do
  # shellcheck disable=SC2086
  if /usr/bin/python3 test/e2e/parity/parity.py --traincc "$BUILD/bin/traincc" \
       $case --workdir "$LOG/parity" 2>"$LOG/parity.err"; then
    passed=$((passed + 1))
  else
    cat "$LOG/parity.err" >&2
    failed=$((failed + 1))
  fi
done

if [ -f test/fuzz/run-fuzz.sh ]; then
  section "fuzz (test/fuzz/run-fuzz.sh)"
  if TRAINCC="$BUILD/bin/traincc" bash test/fuzz/run-fuzz.sh; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
fi

finish
