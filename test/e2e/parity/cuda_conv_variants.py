#!/usr/bin/env python3
"""CPU against emulated CUDA for convolution variants.

The parity models have plain 2-D convolutions. This trains small models with
a grouped, dilated and strided Conv2d, a strided Conv1d, a Conv3d and a 1x1
Conv2d (each followed by ReLU and a linear head) for one epoch of 4 steps,
once with the trainer's CPU code and once with its CUDA kernels run by the
fake CUDA driver (traincc's kernels compiled for the CPU, --emit=cuda-
emulation), and compares the exported weights. Both trainers come from the
same compile; only the kernels differ, so the weights agree to rounding.
The test prints how many tiled GEMM kernels (two shared-memory buffers) the
PTX has: 7 when the convolution's forward and filter gradient (micro_step),
its forward (eval_step) and the head's three matmuls are all tiled.

With --precision bf16|fp16 the trainers are mixed precision: their
convolutions and matmuls take bf16/fp16 operands and accumulate in f32, and
on the GPU the tiled ones run on the tensor cores (mma.sync); the test also
prints how many kernels of the PTX use mma.sync. The emulation computes each
mma.sync exactly (f32 products summed in a fixed order), the CPU code in the
op's loop order, so the weights agree to float rounding of the sums (and the
low-precision roundings that follow them): give a larger --tolerance.

Prints one line per variant and exits 1 when a relative difference exceeds
--tolerance. Run with /usr/bin/python3.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper


class ConvHead(nn.Module):
    def __init__(self, conv, features, classes=10):
        super().__init__()
        self.conv = conv
        self.head = nn.Linear(features, classes)

    def forward(self, x):
        return self.head(torch.flatten(torch.relu(self.conv(x)), 1))


def variants():
    """name -> (the convolution's constructor, the sample shape)."""
    return {
        "conv2d-groups-dilated-strided": (
            lambda: nn.Conv2d(16, 32, 3, stride=2, padding=2, dilation=2,
                              groups=4),
            (16, 17, 17)),
        "conv1d-strided": (lambda: nn.Conv1d(24, 40, 5, stride=2, padding=1),
                           (24, 50)),
        "conv3d": (lambda: nn.Conv3d(8, 16, 3, padding=1), (8, 6, 7, 5)),
        "conv2d-1x1": (lambda: nn.Conv2d(48, 20, 1), (48, 9, 9)),
        # Two convolutions: the second one's data gradient is tiled too
        # (11 tiled kernels in all).
        "conv2d-stacked": (
            lambda: nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 16, 3, padding=1)),
            (8, 10, 10)),
    }


def weights(path):
    return {t.name: numpy_helper.to_array(t)
            for t in onnx.load(path).graph.initializer}


def check(name, make_conv, shape, args):
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    conv = make_conv()
    with torch.no_grad():
        features = conv(torch.zeros((1,) + shape)).numel()
    model = ConvHead(conv, features)
    model.train()
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, torch.zeros((8,) + shape), onnx_path,
                      input_names=["input"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=15)
    rng = np.random.default_rng(0)
    x, y = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(x, rng.standard_normal((32,) + shape).astype(np.float32))
    np.save(y, rng.integers(0, 10, 32).astype(np.int64))

    trainer = os.path.join(work, "trainer")
    compile_cmd = [args.traincc, onnx_path, "--target", "cpu,cuda"]
    if args.precision:
        compile_cmd += ["--precision", args.precision]
    subprocess.run(compile_cmd + ["-o", trainer], check=True)
    subprocess.run(compile_cmd + ["--emit=cuda-emulation", "-o",
                                  trainer + ".o"], check=True)
    subprocess.run(["c++", "-shared", trainer + ".o", "-o", trainer + ".so"],
                   check=True)
    # Counted without fusion: traincc-fuse-gpu-launches may merge a tiled
    # kernel with others into one entry.
    ptx = subprocess.run(compile_cmd + ["--emit=ptx", "--no-fuse", "-o", "-"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    # A tiled GEMM kernel stages both inputs: two shared-memory buffers.
    kernels = ptx.split(".entry ")[1:]
    tiled = sum(1 for k in kernels
                if len(re.findall(r"^\s*\.shared", k, re.M)) == 2)
    tensor_core = sum(1 for k in kernels if "mma.sync" in k)
    # The tensor-core kernels' PTX (forward and gradients) must assemble
    # for the GPUs that have mma.sync m16n8k16 with bf16: sm_80 and sm_90.
    assembled = ""
    if args.precision and args.ptxas:
        for arch in ("sm_80", "sm_90"):
            arch_ptx = os.path.join(work, arch + ".ptx")
            subprocess.run(compile_cmd + ["--emit=ptx", "--gpu-arch=" + arch,
                                          "-o", arch_ptx], check=True)
            subprocess.run([args.ptxas, "-arch=" + arch, arch_ptx, "-o",
                            arch_ptx + ".cubin"], check=True)
        assembled = "ptxas sm_80 sm_90 ok, "

    env = dict(os.environ, TRAINCC_LIBCUDA=args.fake_libcuda,
               TRAINCC_FAKE_CUDA_CC="10.0",
               TRAINCC_FAKE_CUDA_EMULATION=trainer + ".so")
    exported = {}
    for device in ("cpu", "cuda"):
        path = os.path.join(work, device + ".onnx")
        subprocess.run([trainer, "train", "--train-x", x, "--train-y", y,
                        "--no-shuffle", "--epochs", "1", "--lr", "0.05",
                        "--device", device, "--export", path],
                       check=True, env=env, stdout=subprocess.DEVNULL)
        exported[device] = weights(path)
    worst = max(
        float(np.max(np.abs(exported["cpu"][k] - exported["cuda"][k])) /
              (float(np.max(np.abs(exported["cpu"][k]))) + 1e-12))
        for k in exported["cpu"])
    ok = worst <= args.tolerance
    cores = (f"tensor-core kernels {tensor_core}, {assembled}"
             if args.precision else "")
    print(f"{name}: tiled GEMM kernels {tiled}, {cores}largest "
          f"relative weight difference {worst:.2e} "
          f"{'ok' if ok else 'FAIL'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc", required=True)
    parser.add_argument("--fake-libcuda", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--precision", choices=["bf16", "fp16"],
                        help="compile mixed-precision trainers")
    parser.add_argument("--ptxas",
                        help="with --precision: assemble the PTX with this "
                        "ptxas for sm_80 and sm_90")
    parser.add_argument("--only", action="append",
                        help="check only this variant (repeatable)")
    args = parser.parse_args()
    results = [check(name, make_conv, shape, args)
               for name, (make_conv, shape) in variants().items()
               if not args.only or name in args.only]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
