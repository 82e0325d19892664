#!/usr/bin/env python3
"""Trains one step of a convolution whose outputs have a mean far from zero
(about 1000) and a spread of about 1, followed by a training BatchNorm
whose running statistics take the batch's (momentum 0 in ONNX terms), and
compares the BatchNorm's variance with a float64 reference computed here
from the same weights and data: fused (the variance's squares summed in the
convolution's epilogue as partial moments), with --no-fuse (two passes),
and fused with one and two threads (which must agree bit for bit). With
--emulated-cuda the trainers run the CUDA path on the fake driver (the
tiled convolution's epilogue moments).

E[x^2] - mean^2 in f32 would lose every digit here (x^2 ~ 1e6, whose f32
rounding step is ~0.06 against a variance of ~1).

Prints the relative errors and exits 1 if one exceeds the tolerance."""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import emulated_cuda  # noqa: E402

BATCH = 8
CHANNELS = 8


class LargeMeanConvBN(nn.Module):
    """Conv2d(3, 8, 3) without padding (every output sees a full window,
    so the mean does not drift at the borders) -> BatchNorm2d -> ReLU ->
    linear head."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, CHANNELS, 3, bias=False)
        self.bn = nn.BatchNorm2d(CHANNELS, momentum=1.0)
        self.head = nn.Linear(CHANNELS * 14 * 14, 10)

    def forward(self, x):
        return self.head(torch.flatten(torch.relu(self.bn(self.conv(x))), 1))


def compile_trainer(args, onnx_path, work, extra):
    """The trainer's path, its device flags and its environment."""
    os.makedirs(work, exist_ok=True)
    trainer = os.path.join(work, "trainer")
    compile_cmd = [args.traincc, onnx_path, "-o", trainer, "--batch-size",
                   str(BATCH)] + extra
    device, env = [], None
    if args.emulated_cuda:
        compile_cmd, device, env = emulated_cuda(compile_cmd, trainer, work,
                                                 args.emulated_cuda)
    subprocess.run(compile_cmd, check=True)
    return trainer, device, env


def train(compiled, x_path, y_path, threads):
    """One step on `threads` threads; the exported weights by name."""
    trainer, device, env = compiled
    exported = f"{trainer}-{threads}.onnx"
    subprocess.run([trainer, "train", "--train-x", x_path, "--train-y", y_path,
                    "--no-shuffle", "--max-steps", "1", "--lr", "0.001",
                    "--export", exported, "--no-fold-bn",
                    "--threads", str(threads)] + device,
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return {init.name: onnx.numpy_helper.to_array(init)
            for init in onnx.load(exported).graph.initializer}


def running(weights, suffix):
    names = [n for n in weights if n.endswith(suffix)]
    assert len(names) == 1, names
    return weights[names[0]].astype(np.float64)


def relative(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--workdir")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--emulated-cuda", metavar="FAKE_LIBCUDA",
                        help="run the trainers on the fake CUDA driver")
    args = parser.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="bn-variance-")
    os.makedirs(work, exist_ok=True)

    torch.manual_seed(0)
    model = LargeMeanConvBN()
    # Weights near 1/27 (the mean of a window), inputs 1000 +- 5: outputs
    # 1000 +- about 1 in every channel.
    with torch.no_grad():
        model.conv.weight.copy_(1.0 / 27 + 0.01 * torch.randn_like(
            model.conv.weight))
    onnx_path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, torch.zeros(BATCH, 3, 16, 16), onnx_path,
                      input_names=["input"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=15)
    rng = np.random.default_rng(1)
    x = (1000 + 5 * rng.standard_normal((BATCH, 3, 16, 16))).astype(np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int64)
    x_path, y_path = os.path.join(work, "x.npy"), os.path.join(work, "y.npy")
    np.save(x_path, x)
    np.save(y_path, y)

    conv = torch.nn.functional.conv2d(
        torch.from_numpy(x).double(), model.conv.weight.detach().double())
    out = conv.numpy().transpose(1, 0, 2, 3).reshape(CHANNELS, -1)
    count = out.shape[1]
    mean = out.mean(axis=1)
    variance = ((out - mean[:, None]) ** 2).sum(axis=1) / (count - 1)
    print(f"conv output: mean {mean.min():.1f}..{mean.max():.1f}, "
          f"std {np.sqrt(variance).min():.2f}..{np.sqrt(variance).max():.2f}")

    trainer = compile_trainer(args, onnx_path, os.path.join(work, "fused"),
                              [])
    fused = train(trainer, x_path, y_path, 1)
    threaded = train(trainer, x_path, y_path, 2)
    plain = train(compile_trainer(args, onnx_path,
                                  os.path.join(work, "no-fuse"),
                                  ["--no-fuse"]), x_path, y_path, 1)
    same = all(np.array_equal(fused[n], threaded[n]) for n in fused)
    print(f"fused, 1 and 2 threads: {'identical' if same else 'DIFFERENT'}")
    rows = [
        ("fused mean", relative(running(fused, "running_mean"), mean)),
        ("fused variance", relative(running(fused, "running_var"), variance)),
        ("no-fuse variance",
         relative(running(plain, "running_var"), variance)),
        ("fused vs no-fuse",
         relative(running(fused, "running_var"),
                  running(plain, "running_var"))),
    ]
    failed = False
    print(f"relative difference from the float64 reference "
          f"(tolerance {args.tolerance:.0e}):")
    for name, err in rows:
        ok = err <= args.tolerance
        failed |= not ok
        print(f"  {name:18} {err:10.2e} {'ok' if ok else 'FAIL'}")
    return 1 if failed or not same else 0


if __name__ == "__main__":
    sys.exit(main())
