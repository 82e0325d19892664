#!/usr/bin/env python3
"""Training-step time and peak memory: traincc trainer vs PyTorch, on the CPU.

Compiles examples/fashion_mnist/cnn.onnx (batch 64, SGD momentum 0.9) twice,
fused (the default) and with --no-fuse, then times optimizer steps of both
trainers and of PyTorch eager on the same model, data and thread count in
one run, and prints the ratios. Each side runs in its own process so that
peak resident memory is its own. Step time is the slope between a short and
a long run, which cancels start-up and data loading; the trainers' runs
alternate and the best of --repeats is kept, so that a busy moment of the
machine does not land on one side only.

Usage: /usr/bin/python3 bench/cpu_train_step.py [--threads T] [--steps S]
                                                  [--repeats R]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 64




def make_data(prefix, steps, batch=BATCH, shape=(1, 28, 28)):
    """Random images of `shape` and labels for `steps` batches (and a few
    spare) in a new temporary folder; returns the folder and the two .npy
    paths."""
    work = tempfile.mkdtemp(prefix=prefix)
    rng = np.random.default_rng(0)
    n = batch * (steps + 8)
    data = (os.path.join(work, "x.npy"), os.path.join(work, "y.npy"))
    np.save(data[0], rng.random((n,) + tuple(shape), dtype=np.float32))
    np.save(data[1], rng.integers(0, 10, n).astype(np.int64))
    return work, data


def best_step_times(trainers, data, steps, threads, repeats, short_steps=2):
    """{name: (seconds per step, peak RSS KiB)} of each trainer: the slope
    between a `short_steps`-step and a (short_steps + steps)-step run, best
    of `repeats`, the trainers alternating so that a busy moment does not
    land on one."""
    best = {name: (float("inf"), 0) for name in trainers}
    for _ in range(repeats):
        for name, trainer in trainers.items():
            short, _ = run_trainer(trainer, data, short_steps, threads)
            long, rss = run_trainer(trainer, data, short_steps + steps,
                                    threads)
            step = (long - short) / steps
            if step < best[name][0]:
                best[name] = (step, rss)
    return best


def run_trainer(trainer, data, steps, threads):
    cmd = [trainer, "train", "--train-x", data[0], "--train-y", data[1],
           "--no-shuffle", "--max-steps", str(steps), "--lr", "0.01",
           "--threads", str(threads)]
    # A small Python parent per run, so that the peak resident size it
    # reports for its children is the trainer's alone.
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter();"
               " subprocess.run(sys.argv[1:], check=True,"
               " stdout=subprocess.DEVNULL);"
               " print(time.perf_counter() - t,"
               " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run(["/usr/bin/python3", "-c", wrapper] + cmd, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1])


TORCH_CHILD = r"""
import sys, time, resource, numpy as np, torch
sys.path.insert(0, sys.argv[1])
from model import FashionCNN
steps, threads = int(sys.argv[2]), int(sys.argv[3])
# "fp32", or "bf16": torch.autocast on the CPU (PyTorch AMP).
precision = sys.argv[6] if len(sys.argv) > 6 else "fp32"
torch.set_num_threads(threads)
torch.manual_seed(0)
x = torch.from_numpy(np.load(sys.argv[4])); y = torch.from_numpy(np.load(sys.argv[5]))
model = FashionCNN(); model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
def step(i):
    j = (i * 64) % (x.shape[0] - 63)
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16,
                        enabled=precision == "bf16"):
        loss = loss_fn(model(x[j:j+64]), y[j:j+64])
    loss.backward(); opt.step()
for i in range(3): step(i)
start = time.perf_counter()
for i in range(steps): step(i)
print(time.perf_counter() - start)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def run_torch(data, steps, threads, precision="fp32"):
    out = subprocess.run(
        ["/usr/bin/python3", "-c", TORCH_CHILD,
         os.path.join(ROOT, "examples", "fashion_mnist"), str(steps),
         str(threads), data[0], data[1], precision],
        check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]) / steps, int(out[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--traincc", default=os.path.join(ROOT, "build", "bin",
                                                          "traincc"))
    parser.add_argument("--cpu", default="native",
                        help="traincc --cpu (default: native, as traincc)")
    args = parser.parse_args()

    work, data = make_data("bench-", args.steps)
    trainers = {}
    for name, flags in (("traincc", []), ("traincc --no-fuse", ["--no-fuse"])):
        trainers[name] = os.path.join(work, "trainer" + "".join(flags))
        subprocess.run([args.traincc, os.path.join(ROOT, "examples",
                                                   "fashion_mnist", "cnn.onnx"),
                        "-o", trainers[name], "--batch-size", str(BATCH),
                        "--momentum", "0.9", "--target", "cpu", "--cpu",
                        args.cpu] + flags, check=True)

    best = best_step_times(trainers, data, args.steps, args.threads,
                           args.repeats)
    theirs, theirs_rss = run_torch(data, args.steps, args.threads)

    print(f"fashion-mnist CNN, batch {BATCH}, SGD momentum, {args.threads} "
          f"thread(s), --cpu {args.cpu}, best of {args.repeats}")
    print(f"{'':20} {'step ms':>10} {'peak MiB':>10}")
    for name, (step, rss) in best.items():
        print(f"{name:20} {step * 1e3:10.1f} {rss / 1024:10.1f}")
    print(f"{'pytorch eager':20} {theirs * 1e3:10.1f} {theirs_rss / 1024:10.1f}")
    ours, ours_rss = best["traincc"]
    unfused = best["traincc --no-fuse"][0]
    print(f"ratio fused/unfused: time {ours / unfused:.2f}x")
    print(f"ratio traincc/pytorch: time {ours / theirs:.2f}x, "
          f"peak memory {ours_rss / theirs_rss:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
