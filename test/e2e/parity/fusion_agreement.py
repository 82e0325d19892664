#!/usr/bin/env python3
"""Trains a parity model twice, compiled with fusion (the default) and with
--no-fuse, from the same initial weights on the same data, and checks that
the two runs agree: step losses and trained weights (BatchNorm running
statistics included) within a relative tolerance (default 1e-5, the
infinity norm of the difference over that of the unfused value).

Fusion must not change what a step computes, only where it happens (which
kernels, which passes over memory); float rounding may differ where a fused
kernel lets LLVM contract a multiply and an add. With --emulated-cuda both
trainers run the CUDA path on the fake driver (the GPU launch fusion of
traincc-fuse-gpu-launches included).

Prints one line per quantity and exits 1 if any differs by more."""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import MODELS, emulated_cuda, make_data, prepare_model  # noqa: E402


def train(args, onnx_path, work, x_path, y_path, fuse):
    """Compiles and runs one trainer; returns its step losses and its
    exported weights by name."""
    os.makedirs(work, exist_ok=True)
    trainer = os.path.join(work, "trainer")
    compile_cmd = [args.traincc, onnx_path, "-o", trainer,
                   "--batch-size", str(args.batch), "--momentum", "0.9"]
    if not fuse:
        compile_cmd.append("--no-fuse")
    else:
        compile_cmd += args.fused_flag
    device, env = [], None
    if args.emulated_cuda:
        compile_cmd, device, env = emulated_cuda(compile_cmd, trainer, work,
                                                 args.emulated_cuda)
    subprocess.run(compile_cmd, check=True)
    log = os.path.join(work, "run.jsonl")
    exported = os.path.join(work, "trained.onnx")
    subprocess.run([trainer, "train", "--train-x", x_path, "--train-y", y_path,
                    "--no-shuffle", "--max-steps", str(args.steps),
                    "--lr", str(args.lr), "--log", log, "--export", exported,
                    "--threads", "1", "--no-fold-bn"] + device,
                   check=True, stdout=subprocess.DEVNULL, env=env)
    losses = [json.loads(line)["loss"] for line in open(log)
              if json.loads(line)["event"] == "step"]
    weights = {init.name: onnx.numpy_helper.to_array(init)
               for init in onnx.load(exported).graph.initializer}
    return np.array(losses, dtype=np.float64), weights


def relative(a, b, floor=1e-12):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), floor))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--workdir")
    parser.add_argument("--fused-flag", action="append", default=[],
                        metavar="FLAG",
                        help="one more traincc flag for the fused trainer "
                             "(repeatable), e.g. --recompute")
    parser.add_argument("--emulated-cuda", metavar="FAKE_LIBCUDA",
                        help="run both trainers on the fake CUDA driver")
    args = parser.parse_args()

    cls, _, work, onnx_path = prepare_model(MODELS, args.model, args.batch,
                                            args.workdir, "fusion-")
    _, sample_shape, classes = MODELS[args.model]
    x, y = make_data(sample_shape, classes, args.batch * args.steps,
                     getattr(cls, "vocab", None))
    x_path, y_path = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(x_path, x)
    np.save(y_path, y)

    fused_losses, fused = train(args, onnx_path, os.path.join(work, "fused"),
                                x_path, y_path, fuse=True)
    plain_losses, plain = train(args, onnx_path,
                                os.path.join(work, "no-fuse"), x_path, y_path,
                                fuse=False)
    if len(fused_losses) != args.steps or len(plain_losses) != args.steps:
        print(f"expected {args.steps} steps, got {len(fused_losses)} fused "
              f"and {len(plain_losses)} unfused")
        return 1
    if sorted(fused) != sorted(plain):
        print("the two exports name different initializers")
        return 1
    rows = [("step losses", relative(fused_losses, plain_losses))]
    weights = max(relative(fused[n], plain[n]) for n in plain
                  if "running_" not in n)
    stats = [relative(fused[n], plain[n]) for n in plain if "running_" in n]
    rows.append(("parameters", weights))
    if stats:
        rows.append(("BN running stats", max(stats)))

    print(f"fused vs --no-fuse {args.model} steps={args.steps} "
          f"(relative difference, tolerance {args.tolerance:.0e})")
    failed = False
    for name, err in rows:
        ok = err <= args.tolerance
        failed |= not ok
        print(f"  {name:18} {err:10.2e} {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
