#!/usr/bin/env python3
"""PyTorch loading a trainer's --export gives the trainer's eval outputs.

For one parity model (parity.py's MODELS, built and exported the same way):
train the compiled trainer for a few steps with validation data, export the
trained model twice (two runs on one thread, bit-identical): with
--no-fold-bn, whose initializers are PyTorch's state_dict, and as by
default, with every BatchNorm after a Conv folded into it; check that
  * onnx.checker accepts both exports, and the default one has no
    BatchNormalization reading a Conv;
  * the PyTorch module, given the unfolded export's initializers by name
    (BatchNorm running statistics included) and put in eval mode,
    reproduces the trainer's own evaluation of those weights: the val_loss
    and val_acc the trainer logged for its last epoch;
  * its outputs equal, sample by sample, `trainer predict` of a trainer
    compiled from the folded export (whose initial state is the exported
    weights);
  * onnxruntime, where installed (Debian has none), runs the export to the
    same outputs.
Prints the largest relative errors (max |a - b| / max |b|) and exits 1 when
one exceeds --tolerance.

Run with /usr/bin/python3 (Debian's torch and onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import torch
import torch.nn.functional as F

from parity import MODELS, export, rel_error


def load_exported(cls, exported):
    """A fresh `cls` module holding the export's initializers, eval mode."""
    inits = {i.name: onnx.numpy_helper.to_array(i)
             for i in exported.graph.initializer}
    module = cls()
    state = module.state_dict()
    for name in state:
        if name.endswith("num_batches_tracked"):
            continue
        if name not in inits:
            raise SystemExit(f"FAIL: {name} is not an initializer of the "
                             "export")
        if inits[name].shape != tuple(state[name].shape):
            raise SystemExit(f"FAIL: {name} has shape {inits[name].shape}, "
                             f"PyTorch {tuple(state[name].shape)}")
        state[name] = torch.tensor(inits[name])
    module.load_state_dict(state)
    return module.eval()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--workdir")
    args = parser.parse_args()

    torch.manual_seed(0)
    cls, sample_shape, classes = MODELS[args.model]
    work = args.workdir or tempfile.mkdtemp(prefix="export-parity-")
    os.makedirs(work, exist_ok=True)
    path = lambda name: os.path.join(work, name)
    export(cls(), sample_shape, args.batch, path("model.onnx"))

    rng = np.random.default_rng(2)
    n = args.batch * args.steps
    np.save(path("x.npy"),
            rng.standard_normal((n,) + sample_shape).astype(np.float32))
    np.save(path("y.npy"), rng.integers(0, classes, n).astype(np.int64))
    # Not a multiple of the batch: the last evaluation batch is padded.
    m = 3 * args.batch - 3
    xe = rng.standard_normal((m,) + sample_shape).astype(np.float32)
    ye = rng.integers(0, classes, m).astype(np.int64)
    np.save(path("xe.npy"), xe)
    np.save(path("ye.npy"), ye)

    subprocess.run([args.traincc, path("model.onnx"), "-o", path("trainer"),
                    "--batch-size", str(args.batch), "--momentum", "0.9"],
                   check=True)
    for export_path, extra in [("trained.onnx", []),
                               ("unfolded.onnx", ["--no-fold-bn"])]:
        subprocess.run([path("trainer"), "train", "--train-x", path("x.npy"),
                        "--train-y", path("y.npy"), "--val-x", path("xe.npy"),
                        "--val-y", path("ye.npy"), "--max-steps",
                        str(args.steps), "--lr", str(args.lr), "--log",
                        path("run.jsonl"), "--export", path(export_path),
                        "--threads", "1"] + extra,
                       check=True, stdout=subprocess.DEVNULL)

    exported = onnx.load(path("unfolded.onnx"))
    onnx.checker.check_model(exported)
    folded = onnx.load(path("trained.onnx"))
    onnx.checker.check_model(folded)
    print(f"export-parity {args.model}: {args.steps} steps, {m} eval samples")
    print("  OK onnx.checker")
    conv_outputs = {o for n in folded.graph.node if n.op_type == "Conv"
                    for o in n.output}
    norms = [n for n in folded.graph.node if n.op_type == "BatchNormalization"]
    after_conv = sum(n.input[0] in conv_outputs for n in norms)
    print(f"  BatchNormalization after Conv: {after_conv} of {len(norms)}")

    module = load_exported(cls, exported)
    with torch.no_grad():
        ours32 = module(torch.tensor(xe)).numpy()
        ours64 = module.double()(torch.tensor(xe, dtype=torch.float64))
        ours64 = ours64.numpy()
    torch_fp32 = rel_error(ours32, ours64)

    rows = []
    # 1. The trainer's own evaluation of its trained weights (last epoch).
    epoch = [json.loads(l) for l in open(path("run.jsonl"))
             if json.loads(l)["event"] == "epoch"][-1]
    loss = F.cross_entropy(torch.tensor(ours32), torch.tensor(ye)).item()
    acc = float(np.mean(np.argmax(ours32, axis=1) == ye))
    rows.append(("val_loss", rel_error([epoch["val_loss"]], [loss])))
    if epoch["val_acc"] != acc:
        print(f"  FAIL val_acc: trainer {epoch['val_acc']}, PyTorch {acc}")
        return 1
    print(f"  OK val_acc {acc} equal")

    # 2. predict with a trainer compiled from the export.
    subprocess.run([args.traincc, path("trained.onnx"), "-o",
                    path("exported-trainer"), "--batch-size", str(args.batch)],
                   check=True)
    subprocess.run([path("exported-trainer"), "predict", "--x", path("xe.npy"),
                    "-o", path("pred.npy"), "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    pred = np.load(path("pred.npy"))
    if pred.shape != ours32.shape:
        print(f"  FAIL predict shape {pred.shape}, PyTorch {ours32.shape}")
        return 1
    rows.append(("predict outputs", rel_error(pred, ours32)))

    # 3. Any ONNX runtime, where one is installed.
    try:
        import onnxruntime
    except ImportError:
        print("  onnxruntime is not installed: its check is skipped")
    else:
        session = onnxruntime.InferenceSession(path("trained.onnx"))
        outs = [session.run(None, {"input": xe[i:i + args.batch]})[0]
                for i in range(0, m - args.batch + 1, args.batch)]
        rows.append(("onnxruntime", rel_error(np.concatenate(outs),
                                              ours32[:len(outs) * args.batch])))

    print(f"  {'quantity':16} {'max rel err':>11}  (PyTorch fp32 vs fp64: "
          f"{torch_fp32:.2e}, limit {args.tolerance:g})")
    failed = False
    for name, err in rows:
        ok = err <= args.tolerance
        failed |= not ok
        print(f"  {name:16} {err:11.2e}  {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
