"""Checks --recompute: cheap forward values computed again in the backward
pass shrink the static memory plan, leave the training trajectory
unchanged, and let --memory-budget keep a micro-batch that would not fit
otherwise.

Compiles the model at one micro-batch with and without --recompute, prints
both plans' saved activations and peaks (from --report), trains both for a
few steps on the same random data and compares the step losses and the
exported weights, then asks for a budget halfway between the two peaks.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from memory_plan import model_path  # noqa: E402


def plan(report):
    section = report[report.index("memory plan (cpu)"):]
    saved = re.search(r"saved activations .*", section).group(0)
    peak = int(re.search(r"peak .*?\((\d+) bytes\)", section).group(1))
    return saved.split(None, 2)[2].strip(), peak


def weights(path):
    return {t.name: numpy_helper.to_array(t)
            for t in onnx.load(path).graph.initializer}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traincc", required=True)
    parser.add_argument("--model", choices=["cnn", "residual"], required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    model = model_path(args.model, args.batch, args.workdir)

    rng = np.random.default_rng(0)
    x = os.path.join(args.workdir, "x.npy")
    y = os.path.join(args.workdir, "y.npy")
    np.save(x, rng.random((4 * args.batch, 1, 28, 28), dtype=np.float32))
    np.save(y, rng.integers(0, 10, 4 * args.batch, dtype=np.int64))

    peaks, logs, exports = {}, {}, {}
    for name, flags in (("saved", []), ("recomputed", ["--recompute"])):
        trainer = os.path.join(args.workdir, name)
        report = subprocess.run(
            [args.traincc, model, "--batch-size", str(args.batch), "--target",
             "cpu", "-O1", "--report", "-o", trainer] + flags, check=True,
            capture_output=True, text=True).stdout
        saved, peaks[name] = plan(report)
        line = re.search(r"recomputed in the backward pass.*", report)
        print(f"{name}: saved activations {saved}, peak {peaks[name]} bytes")
        if line:
            print(line.group(0))
        logs[name] = os.path.join(args.workdir, name + ".jsonl")
        exports[name] = os.path.join(args.workdir, name + ".onnx")
        subprocess.run([trainer, "train", "--train-x", x, "--train-y", y,
                        "--max-steps", "3", "--no-shuffle", "--threads", "1",
                        "--log", logs[name], "--export", exports[name]],
                       check=True, stdout=subprocess.DEVNULL)
    print("plan smaller with --recompute:",
          "yes" if peaks["recomputed"] < peaks["saved"] else "no")

    steps = {name: [line for line in open(path) if '"event":"step"' in line]
             for name, path in logs.items()}
    same_steps = steps["saved"] == steps["recomputed"]
    a, b = weights(exports["saved"]), weights(exports["recomputed"])
    same_weights = all(np.array_equal(a[k], b[k]) for k in a)
    if same_steps and same_weights:
        print("trajectory: bit-identical")
    else:
        worst = max(float(np.max(np.abs(a[k] - b[k]) /
                                 (np.abs(a[k]) + 1e-6))) for k in a)
        print(f"trajectory: differs, largest relative weight difference "
              f"{worst:.2e}: " +
              ("within fp32 rounding" if worst < 1e-4 else "TOO LARGE"))

    budget = (peaks["saved"] + peaks["recomputed"]) // 2
    choice = subprocess.run(
        [args.traincc, model, "--batch-size", str(args.batch), "--target",
         "cpu", "-O1", "--memory-budget", str(budget), "-o",
         os.path.join(args.workdir, "budgeted")], check=True,
        capture_output=True, text=True).stderr
    print(choice.strip())


if __name__ == "__main__":
    main()
