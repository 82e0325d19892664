#!/usr/bin/env python3
"""Mixed-precision training steps on the CPU: traincc fp32, bf16 and fp16
trainers vs PyTorch eager fp32 and PyTorch autocast bf16, in one run.

The example CNN (examples/fashion_mnist/cnn.onnx, batch 64, SGD momentum
0.9) is compiled once per precision; step time is the slope between a short
and a long run (start-up and data loading cancel), best of --repeats, each
run in its own process so that its peak resident memory is its own.
Debian's PyTorch 1.13 has no float16 autocast on the CPU, so fp16 has no
PyTorch row. Methods as bench/cpu_train_step.py.

Usage: /usr/bin/python3 bench/cpu_mixed_precision.py [--threads T]
                                                     [--steps S] [--repeats R]
"""
import argparse
import os
import subprocess
import sys

from cpu_train_step import BATCH, ROOT, best_step_times, make_data, run_torch

PRECISIONS = ("fp32", "bf16", "fp16")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--traincc", default=os.path.join(ROOT, "build", "bin",
                                                          "traincc"))
    args = parser.parse_args()

    work, data = make_data("bench-mp-", args.steps)
    trainers = {}
    for precision in PRECISIONS:
        trainers[precision] = os.path.join(work, "trainer-" + precision)
        subprocess.run([args.traincc, os.path.join(ROOT, "examples",
                                                   "fashion_mnist", "cnn.onnx"),
                        "-o", trainers[precision], "--batch-size", str(BATCH),
                        "--momentum", "0.9", "--target", "cpu",
                        "--precision", precision], check=True)

    best = best_step_times(trainers, data, args.steps, args.threads,
                           args.repeats)
    torch_rows = {p: run_torch(data, args.steps, args.threads, p)
                  for p in ("fp32", "bf16")}

    print(f"fashion-mnist CNN, batch {BATCH}, SGD momentum, {args.threads} "
          f"thread(s), best of {args.repeats}")
    print(f"{'precision':10} {'traincc ms':>11} {'MiB':>7} {'pytorch ms':>11} "
          f"{'MiB':>7} {'time ratio':>11} {'memory ratio':>13}")
    for precision in PRECISIONS:
        ours, ours_rss = best[precision]
        theirs = torch_rows.get(precision)
        if theirs:
            print(f"{precision:10} {ours * 1e3:11.1f} {ours_rss / 1024:7.1f} "
                  f"{theirs[0] * 1e3:11.1f} {theirs[1] / 1024:7.1f} "
                  f"{ours / theirs[0]:10.2f}x {ours_rss / theirs[1]:12.2f}x")
        else:
            print(f"{precision:10} {ours * 1e3:11.1f} {ours_rss / 1024:7.1f} "
                  f"{'n/a':>11} {'':>7} {'':>11} {'':>13}")
    fp32 = best["fp32"][0]
    for precision in PRECISIONS[1:]:
        print(f"traincc {precision}/fp32: time {best[precision][0] / fp32:.2f}x,"
              f" peak memory {best[precision][1] / best['fp32'][1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
