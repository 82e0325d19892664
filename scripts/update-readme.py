#!/usr/bin/python3
"""Regenerates the parts of README.md that traincc itself knows.

    scripts/update-readme.py [--traincc build/bin/traincc] [--check]

Blocks between `<!-- BEGIN GENERATED: KEY -->` and `<!-- END GENERATED: KEY -->`:
  help         the "traincc options" section of `traincc --help`
  example      what scripts/run-example.sh prints (its report from traincc)
  ops          the op types of `traincc --list-ops`
  tests        what scripts/test.sh runs: the lit tests of the build (lit
               --show-tests), the ctest suites, the parity figures, the fuzzer
  gradient-cases  the number of gradient-check cases (test/Transforms/
               gradient-check/Inputs)
  conformance  the table and totals of test/e2e/onnx_conformance.py
               (rewritten only without --check: it takes a while and its
               figures are a record of a run, not a contract)

The block "coverage" (the torchvision table) is left alone here: the run
behind it takes hours, and scripts/model-coverage.py --readme writes it.

--check compares every block but conformance with the built traincc and exits 1
(printing a diff) when README.md is out of date; a lit test runs it.
"""

import argparse
import difflib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BLOCK = re.compile(r"(<!-- BEGIN GENERATED: (\S+) -->\n)(.*?)(<!-- END GENERATED: \2 -->)",
                   re.S)


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    out = proc.stdout.decode()
    if proc.returncode not in (0, 1) or not out:
        sys.exit("update-readme: %s failed:\n%s" %
                 (" ".join(cmd), proc.stderr.decode()))
    return proc.returncode, out


def help_block(traincc):
    # Every option section but LLVM's generic one (--help, --version).
    _, out = run([traincc, "--help"])
    sections, current = [], None
    for line in out.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = [] if line not in ("OPTIONS:", "Generic Options:") else None
            if current is not None:
                sections.append(current)
        if current is not None:
            current.append(line.rstrip())
    if not sections:
        sys.exit("update-readme: no option sections in traincc --help")
    text = "\n\n".join("\n".join(section).strip() for section in sections)
    return "```\n$ traincc --help\n...\n%s\n```\n" % text


def example_block(traincc):
    # Mirrors scripts/run-example.sh, whose steps around traincc print fixed
    # text; the report and the IR size come from traincc (the trainer is not
    # compiled here: its lines are fixed text too).
    model = "examples/fashion_mnist/cnn.onnx"
    ir = "build/examples/fashion_mnist/cnn.train.mlir"
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "cnn.train.mlir")
        code, report = run([traincc, os.path.join(ROOT, model), "--batch-size",
                            "64", "--report", "--emit=train-mlir", "-o", out_path])
        if code != 0:
            sys.exit("update-readme: traincc failed on %s" % model)
        with open(out_path) as f:
            lines = sum(1 for _ in f)
    trainer = "build/examples/fashion_mnist/trainer"
    log = "build/examples/fashion_mnist/train.jsonl"
    return "\n".join([
        "```",
        "$ scripts/run-example.sh",
        "[1/6] dependencies",
        "[2/6] build traincc",
        "[3/6] %s is up to date" % model,
        "[4/6] traincc %s --batch-size 64 --emit=train-mlir --report -o %s" % (model, ir),
        "",
        report.rstrip(),
        "",
        "[5/6] traincc %s --batch-size 64 --momentum 0.9 -o %s" % (model, trainer),
        "",
        "[6/6] %s train --dataset fashion-mnist --epochs 1 --lr 0.01 --log %s"
        % (trainer, log),
        "      (1 epoch(s) of 937 steps, about 3 minutes each on 2 cores)",
        "device: cpu (CUDA unusable: ...)",
        "training on 60000 samples: 937 optimizer steps per epoch, each 1 "
        "micro-batch of 64; validating on 10000 samples",
        "epoch 1/1: train_loss ..., val_loss ..., val_acc ..., 937 steps, ...s",
        "",
        "Train IR: %s (%d lines)" % (ir, lines),
        "Trainer:  %s; log: %s" % (trainer, log),
        "Fashion-MNIST test accuracy after 1 epoch(s): ...",
        "```",
        "(The figures measured with this command are under Measured results.)",
        ""])


def ops_block(traincc):
    _, out = run([traincc, "--list-ops"])
    ops = [line.strip() for line in out.splitlines() if line.strip()]
    return "%d op types (`traincc --list-ops`):\n%s.\n" % (
        len(ops), ", ".join("`%s`" % op for op in ops))


def build_dir(traincc):
    """The build folder of a traincc binary (BUILD/bin/traincc)."""
    path = shutil.which(traincc) or traincc
    return os.path.dirname(os.path.dirname(os.path.realpath(path)))


def tests_block(traincc):
    build = build_dir(traincc)
    _, out = run(["/usr/lib/llvm-22/bin/lit", "--show-tests",
                  os.path.join(build, "test")])
    lit_tests = sum(1 for line in out.splitlines()
                    if line.startswith("  traincc :: "))
    _, out = run(["ctest", "--test-dir", build, "-N"])
    match = re.search(r"^Total Tests: (\d+)", out, re.M)
    ctest_suites = int(match.group(1)) if match else 0
    with open(os.path.join(ROOT, "scripts", "test.sh")) as f:
        cases = re.search(r"^PARITY_CASES=\((.*?)\)", f.read(), re.S | re.M)
    parity = len(re.findall(r'"[^"]*"', cases.group(1))) if cases else 0
    fuzz = 1 if os.path.exists(os.path.join(ROOT, "test", "fuzz",
                                            "run-fuzz.sh")) else 0
    total = lit_tests + ctest_suites + parity + fuzz
    return (
        "`scripts/test.sh` runs %d suites and counts each in its closing line\n"
        "\"N passed, N failed\": %d lit tests (`ninja -C build check-traincc`),\n"
        "%d GoogleTest suite%s of the runtime (ctest), %d PyTorch parity figures\n"
        "and the import fuzzer (`test/fuzz/run-fuzz.sh`, 30 s). It exits\n"
        "non-zero on any failure; CI runs it through `.ci/run`.\n"
        % (total, lit_tests, ctest_suites, "" if ctest_suites == 1 else "s",
           parity))


def gradient_cases_block(traincc):
    folder = os.path.join(ROOT, "test", "Transforms", "gradient-check")
    spec = importlib.util.spec_from_file_location(
        "gradient_check", os.path.join(folder, "gradient_check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = module.discover_cases(os.path.join(folder, "Inputs"))
    return ("  %d cases over all forward ops and their attribute variants.\n"
            % len(cases))


def conformance_block(traincc):
    script = os.path.join(ROOT, "test", "e2e", "onnx_conformance.py")
    xfail = os.path.join(ROOT, "test", "e2e", "onnx-conformance.xfail")
    code, out = run([sys.executable, script, "--traincc", traincc,
                     "--xfail", xfail])
    table = [l for l in out.splitlines() if l.startswith("|")]
    totals_start = next(i for i, l in enumerate(out.splitlines())
                        if l.startswith("models found:"))
    lines = out.splitlines()
    totals = []
    for line in lines[totals_start:]:
        if not line.strip():
            break
        totals.append(line)
    errors = [l for l in lines if l.startswith("error checks")]
    text = "\n".join(table) + "\n\n```\n" + "\n".join(totals + errors) + "\n```\n"
    if code != 0:
        text += "\n**The last run had unexpected failures.**\n"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc", default=os.path.join(ROOT, "build", "bin", "traincc"))
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a block but conformance is out of date")
    args = parser.parse_args()

    with open(README) as f:
        old = f.read()
    makers = {"help": help_block, "example": example_block, "ops": ops_block,
              "tests": tests_block, "gradient-cases": gradient_cases_block}
    if not args.check:
        makers["conformance"] = conformance_block

    def replace(match):
        key = match.group(2)
        if key not in makers:
            return match.group(0)
        return match.group(1) + makers[key](args.traincc) + match.group(4)

    new = BLOCK.sub(replace, old)
    found = {m.group(2) for m in BLOCK.finditer(old)}
    missing = sorted(set(makers) - found)
    if missing:
        sys.exit("update-readme: README.md has no generated block for %s" %
                 ", ".join(missing))
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), "README.md",
                "README.md (from traincc)"))
            print("README.md is out of date: run scripts/update-readme.py",
                  file=sys.stderr)
            return 1
        print("README.md is up to date")
        return 0
    if new != old:
        with open(README, "w") as f:
            f.write(new)
        print("update-readme: README.md updated")
    else:
        print("update-readme: README.md already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
