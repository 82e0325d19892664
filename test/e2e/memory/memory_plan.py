"""Checks a trainer's static memory plan against what it really uses.

CPU: the peak resident size (VmHWM, polled from /proc while the trainer
trains) of trainers compiled for two micro-batch sizes. What does not
depend on the batch (the runtime's code, libc, the loaded kernels) cancels
in the difference, which must be within 5% of the difference of the plans
that `trainer info` prints (state, workspace, one micro-batch of data).
CUDA: the most device bytes allocated at once, counted by the fake CUDA
driver running traincc's kernels emulated on the CPU, must be within 5% of
the CUDA plan.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "parity"))
import parity  # noqa: E402


class ResidualNet(nn.Module):
    """conv-BN-ReLU stem, two residual blocks of conv-BN-ReLU-conv-BN plus
    the skip connection, global average pooling, a linear head."""

    def __init__(self, width=16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, width, 3, padding=1),
                                  nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Conv2d(width, width, 3, padding=1),
                          nn.BatchNorm2d(width), nn.ReLU(),
                          nn.Conv2d(width, width, 3, padding=1),
                          nn.BatchNorm2d(width)) for _ in range(2))
        self.head = nn.Linear(width, 10)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = torch.relu(x + block(x))
        return self.head(x.mean(dim=(2, 3)))


def model_path(name, batch, work):
    if name == "cnn":
        return os.path.join(os.path.dirname(__file__), "..", "..", "..",
                            "examples", "fashion_mnist", "cnn.onnx")
    torch.manual_seed(0)
    path = os.path.join(work, f"residual{batch}.onnx")
    parity.export(ResidualNet(), (1, 28, 28), batch, path)
    return path


def plan_peak(trainer, target):
    info = subprocess.run([trainer, "info"], check=True, capture_output=True,
                          text=True).stdout
    match = re.search(r"memory plan \(" + target + r"\):.* peak (\d+) bytes",
                      info)
    if not match:
        sys.exit(f"no {target} memory plan in `info`:\n{info}")
    return int(match.group(1))


def peak_rss(args, env=None):
    """The trainer's VmHWM, polled until it exits (the plan is allocated
    once, at the start, so the last samples hold the peak)."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, env=env)
    peak = 0
    while process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as status:
                match = re.search(r"VmHWM:\s+(\d+) kB", status.read())
            if match:
                peak = max(peak, int(match.group(1)) * 1024)
        except OSError:
            pass
        time.sleep(0.002)
    if process.returncode != 0:
        sys.exit(f"{args} failed ({process.returncode})")
    return peak


def verdict(measured, planned):
    ratio = measured / planned
    return f"ratio {ratio:.3f}: " + ("within 5%" if abs(ratio - 1) <= 0.05
                                     else "NOT within 5%")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traincc", required=True)
    parser.add_argument("--model", choices=["cnn", "residual"], required=True)
    parser.add_argument("--batches", type=int, nargs=2, default=[8, 128])
    parser.add_argument("--fake-libcuda")
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    small, large = args.batches

    data = []
    for name, n in (("x", 2 * large), ("y", 2 * large)):
        path = os.path.join(args.workdir, f"{name}.npy")
        rng = np.random.default_rng(0)
        np.save(path, rng.random((n, 1, 28, 28), dtype=np.float32)
                if name == "x" else rng.integers(0, 10, n, dtype=np.int64))
        data.append(path)
    train = ["train", "--train-x", data[0], "--train-y", data[1],
             "--max-steps", "2", "--threads", "1"]

    peaks = {}
    for batch in (small, large):
        trainer = os.path.join(args.workdir, f"trainer{batch}")
        report = subprocess.run(
            [args.traincc, model_path(args.model, batch, args.workdir),
             "--batch-size", str(batch), "--target", "cpu", "-O1", "--report",
             "-o", trainer], check=True, capture_output=True,
            text=True).stdout
        reported = re.search(r"memory plan \(cpu\).*?peak .*?\((\d+) bytes\)",
                             report, re.S)
        peaks[batch] = (plan_peak(trainer, "cpu"),
                        peak_rss([trainer] + train))
        if batch == large:
            print(report[report.index("memory plan (cpu)"):], end="")
            print("--report and info agree:",
                  "yes" if reported and int(reported.group(1)) ==
                  peaks[batch][0] else "no")
    planned = peaks[large][0] - peaks[small][0]
    measured = peaks[large][1] - peaks[small][1]
    print(f"cpu {args.model}: plan {peaks[large][0]} bytes at batch {large}, "
          f"growth from batch {small}: planned {planned}, measured "
          f"{measured}, {verdict(measured, planned)}")

    if args.fake_libcuda:
        work = os.path.join(args.workdir, "cuda")
        os.makedirs(work, exist_ok=True)
        trainer = os.path.join(work, "trainer")
        compile_cmd, device, env = parity.emulated_cuda(
            [args.traincc, model_path(args.model, small, work),
             "--batch-size", str(small), "-O1", "-o", trainer], trainer, work,
            args.fake_libcuda)
        subprocess.run(compile_cmd, check=True)
        stats = os.path.join(work, "stats.txt")
        # The fake driver appends: a rerun must not read an older run's.
        if os.path.exists(stats):
            os.remove(stats)
        env["TRAINCC_FAKE_CUDA_STATS"] = stats
        subprocess.run([trainer] + train[:-2] + device, check=True, env=env,
                       stdout=subprocess.DEVNULL)
        with open(stats) as f:
            allocated = int(re.search(r"peak device bytes: (\d+)",
                                      f.read()).group(1))
        planned = plan_peak(trainer, "cuda")
        print(f"cuda {args.model}: plan {planned} bytes at batch {small}, "
              f"allocated {allocated}, {verdict(allocated, planned)}")


if __name__ == "__main__":
    main()
