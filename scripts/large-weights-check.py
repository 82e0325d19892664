#!/usr/bin/python3
"""Checks that traincc compiles and trains a model whose weights pass 2 GiB.

Too slow and too large for CI (a 2.6 GB weight, a 7.9 GB state arena under
SGD with momentum, about 8 GB of compile memory and 13 GB of trainer memory;
minutes on 2 cores), so it runs on demand, like vit_h_14 and regnet_y_128gf
in scripts/model-coverage.py, which it stands for in a minute or two. The
model is one Gemm with a 16384 x 40000 float32 weight, saved with ONNX
external data (protobuf stops at 2 GiB). It checks that:

  - the trainer links: its weights blob sits in .lrodata, out of the way of
    the code's 32-bit PC-relative references, and holds the weights only
    (the gradients and momentum, zeros, are not in the file);
  - the first step's loss is that of the ONNX weights (the runs of the
    initial state reach the arena), and both steps' losses are finite.

    scripts/large-weights-check.py [--traincc build/bin/traincc] [--workdir W]

Run with /usr/bin/python3 (Debian's onnx and numpy).
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS, COLS = 16384, 40000


def write_model(work):
    weight = np.random.default_rng(0).standard_normal((ROWS, COLS),
                                                      dtype=np.float32)
    weight *= 0.001
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"],
                          transB=1)],
        "big_linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", COLS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", ROWS])],
        [numpy_helper.from_array(weight, "fc.weight"),
         numpy_helper.from_array(np.zeros(ROWS, np.float32), "fc.bias")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, os.path.join(work, "big.onnx"),
              save_as_external_data=True, all_tensors_to_one_file=True,
              location="big.onnx.data")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, COLS)).astype(np.float32)
    y = rng.integers(0, ROWS, 4)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    # The first step's loss from the ONNX weights (float64 logits, a slice
    # of the weight's columns at a time).
    logits = np.zeros((2, ROWS))
    for at in range(0, COLS, 4000):
        logits += (x[:2, at:at + 4000].astype(np.float64) @
                   weight[:, at:at + 4000].T.astype(np.float64))
    logits -= logits.max(1, keepdims=True)
    return float(np.mean(np.log(np.exp(logits).sum(1)) -
                         logits[np.arange(2), y[:2]]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc",
                        default=os.path.join(ROOT, "build", "bin", "traincc"))
    parser.add_argument("--workdir")
    args = parser.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="large-weights-")
    os.makedirs(work, exist_ok=True)
    expected = write_model(work)
    trainer = os.path.join(work, "trainer")
    subprocess.run([args.traincc, os.path.join(work, "big.onnx"), "-o",
                    trainer, "--batch-size", "2", "--momentum", "0.9",
                    "--target", "cpu"], check=True)
    info = subprocess.run([trainer, "info"], check=True, capture_output=True,
                          text=True).stdout
    arena = next(int(line.split()[2]) for line in info.splitlines()
                 if line.startswith("state arena:"))
    log = os.path.join(work, "log.jsonl")
    subprocess.run([trainer, "train", "--train-x",
                    os.path.join(work, "x.npy"), "--train-y",
                    os.path.join(work, "y.npy"), "--max-steps", "2",
                    "--no-shuffle", "--log", log], check=True,
                   stdout=subprocess.DEVNULL)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    losses = [e["loss"] for e in map(json.loads, open(log))
              if e["event"] == "step"]
    size = os.path.getsize(trainer)
    print(f"weights {ROWS * COLS * 4 / 1e9:.2f} GB, state arena "
          f"{arena / 1e9:.2f} GB, trainer {size / 1e9:.2f} GB, "
          f"peak RSS of a child {peak:.1f} GiB")
    print(f"losses {losses}, first step from the ONNX weights: {expected}")
    ok = (len(losses) == 2 and all(map(math.isfinite, losses))
          and abs(losses[0] - expected) <= 1e-4 * abs(expected)
          and size < arena)
    print("large weights: ok" if ok else "large weights: FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
