#!/usr/bin/env python3
"""Data-parallel training against one process and against PyTorch DDP.

For one model of test/e2e/parity/parity.py (or "mlp", a model without
BatchNorm): compile a replica trainer for micro-batch B and a single-process
trainer for the global micro-batch N x B from the same initial weights, train
N replicas (launched by mpirun or in a torchrun-style environment) and one
process on the same data with the same seed, and compare the step losses and
the final parameters and BatchNorm statistics.

* A model without BatchNorm must follow the single process's trajectory:
  the replicas' averaged gradients are that of the global micro-batch, up to
  the float32 rounding of another summation order (tolerance --tolerance,
  relative to the largest value). So must a model with BatchNorm under
  --sync-bn (trainers compiled with traincc --sync-bn, replicas run with
  --sync-bn): its statistics, forward and backward, are the global
  batch's, as PyTorch's SyncBatchNorm makes them; its BatchNorm running
  statistics are compared too.
* --val N adds N validation samples, which the replicas evaluate in shards:
  the epoch's val_loss and val_acc must be the single process's.
* --emulated-cuda FAKE_LIBCUDA runs the replicas on the CUDA path without
  a GPU: the replica trainer is compiled with --target cpu,cuda and its
  kernels for the CPU (parity.py's emulated_cuda), and the replicas train
  with --device cuda on the fake CUDA driver, averaging with the fake NCCL
  (--nccl) or, with --nccl none, through the host. Under --sync-bn their
  launch plans' collectives average the BatchNorm statistics between
  kernels; the reference is still one process on the CPU.
* A model with BatchNorm normalises each replica's slice with its own
  statistics (PyTorch DDP semantics), so its reference is a float64 PyTorch
  simulation of DDP: per step, the loss is the mean of the slices' losses,
  each slice's BatchNorm normalising with the slice's statistics, and the
  running statistics are rank 0's (DDP broadcasts rank 0's buffers). Its
  data is read in file order (--no-shuffle) so that the reference can slice
  it.

Prints the largest differences and exits 1 when one exceeds its tolerance.
Run with /usr/bin/python3 (Debian's torch and onnx).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "parity"))
import parity  # noqa: E402
from rendezvous_port import free_port  # noqa: E402


class MLP(nn.Module):
    """Linear-ReLU-Linear, no BatchNorm."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


MODELS = dict(parity.MODELS)
MODELS["mlp"] = (MLP, (20,), 5)

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to",
          "none"]


def launch(args, trainer, train_args, timeout, base_env=None):
    """Runs N replicas of `trainer train_args` (in `base_env`, default the
    current environment); returns their exit codes and rank 0's output."""
    n = args.replicas
    base_env = base_env or os.environ
    if args.launcher == "mpirun":
        env = dict(base_env, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        done = subprocess.run(MPIRUN + ["-np", str(n), trainer] + train_args,
                              env=env, capture_output=True, text=True,
                              timeout=timeout)
        return [done.returncode], done.stdout + done.stderr
    port = str(free_port())
    procs = []
    for rank in range(n):
        env = dict(base_env, RANK=str(rank), WORLD_SIZE=str(n),
                   LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port)
        procs.append(subprocess.Popen([trainer] + train_args, env=env,
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outputs = [p.communicate(timeout=timeout)[0] for p in procs]
    return [p.returncode for p in procs], outputs[0] + "".join(outputs[1:])


def read_run(log, export):
    import onnx
    import onnx.numpy_helper
    records = [json.loads(line) for line in open(log)]
    losses = [r["loss"] for r in records if r["event"] == "step"]
    weights = {init.name: onnx.numpy_helper.to_array(init)
               for init in onnx.load(export).graph.initializer}
    for r in records:
        if r["event"] == "epoch" and "val_loss" in r:
            weights["val_loss"] = np.array([r["val_loss"]])
            weights["val_acc"] = np.array([r["val_acc"]])
    return losses, weights


def ddp_reference(model, x, y, args, dtype):
    """PyTorch DDP over N replicas, simulated in one process: per optimizer
    step K micro-steps, each the mean of N slice losses whose BatchNorm
    statistics are the slice's own; rank 0's slice alone updates the running
    statistics (momentum 0 for the others), as DDP's broadcast of rank 0's
    buffers leaves them."""
    model = model.to(dtype=dtype)
    model.train()
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [bn.momentum for bn in bns]
    opt = torch.optim.SGD(model.parameters(), lr=args.lr,
                          momentum=args.momentum)
    loss_fn = nn.CrossEntropyLoss()
    b, n, k = args.batch, args.replicas, args.accum
    losses = []
    for step in range(args.steps):
        opt.zero_grad()
        total = 0.0
        for m in range(k):
            first = (step * k + m) * n * b
            for r in range(n):
                for bn, momentum in zip(bns, momenta):
                    bn.momentum = momentum if r == 0 else 0.0
                i = first + r * b
                xb = torch.tensor(x[i:i + b], dtype=dtype)
                yb = torch.tensor(y[i:i + b])
                loss = loss_fn(model(xb), yb) / (n * k)
                loss.backward()
                total += loss.item()
        opt.step()
        losses.append(total)
    return losses, {k: v.detach().numpy()
                    for k, v in model.state_dict().items()
                    if not k.endswith("num_batches_tracked")}


def max_rel(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


def max_abs(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) -
                               np.asarray(b, np.float64))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--launcher", choices=["mpirun", "env"],
                        default="mpirun")
    parser.add_argument("--batch", type=int, default=8,
                        help="the replica's micro-batch")
    parser.add_argument("--accum", type=int, default=1)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--sync-bn", action="store_true",
                        help="SyncBatchNorm: compare with one process")
    parser.add_argument("--bucket-mb", default=None,
                        help="the replicas' --bucket-mb")
    parser.add_argument("--val", type=int, default=0,
                        help="validation samples (sharded over replicas)")
    parser.add_argument("--emulated-cuda", metavar="FAKE_LIBCUDA",
                        help="replicas on the fake CUDA driver, running "
                             "traincc's kernels compiled for the CPU")
    parser.add_argument("--nccl", default="none",
                        help="with --emulated-cuda: the NCCL library "
                             "(TRAINCC_LIBNCCL), or none (host memory)")
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    work = args.workdir
    cls, sample_shape, classes = MODELS[args.model]
    has_bn = any(isinstance(m, nn.modules.batchnorm._BatchNorm)
                 for m in cls().modules())
    trainers = {}
    initial = None
    replica_env, device = None, []
    for batch in (args.batch, args.batch * args.replicas):
        _, model, _, onnx_path = parity.prepare_model(
            MODELS, args.model, batch, os.path.join(work, f"b{batch}"), "")
        initial = initial or model
        trainers[batch] = os.path.join(work, f"trainer-b{batch}")
        compile_cmd = [args.traincc, onnx_path, "-o", trainers[batch],
                       "--batch-size", str(batch), "--optimizer", "sgd",
                       "--momentum", str(args.momentum)] + (
                           ["--sync-bn"] if args.sync_bn else [])
        if args.emulated_cuda and batch == args.batch:
            compile_cmd, device, replica_env = parity.emulated_cuda(
                compile_cmd, trainers[batch], os.path.join(work, f"b{batch}"),
                args.emulated_cuda)
            replica_env["TRAINCC_LIBNCCL"] = (
                args.nccl if args.nccl != "none"
                else os.path.join(work, "no-libnccl.so.2"))
        else:
            compile_cmd += ["--target", "cpu"]
        subprocess.run(compile_cmd, check=True)

    # A trailing partial global batch that both runs must drop.
    global_batch = args.batch * args.replicas
    n = global_batch * args.accum * args.steps + global_batch // 2
    x, y = parity.make_data(sample_shape, classes, n)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    if args.val:
        rng = np.random.default_rng(11)
        vx = rng.standard_normal((args.val,) + sample_shape).astype(
            np.float32)
        vy = rng.integers(0, classes, args.val).astype(np.int64)
        np.save(os.path.join(work, "vx.npy"), vx)
        np.save(os.path.join(work, "vy.npy"), vy)

    def train_args(name):
        return ["train", "--train-x", os.path.join(work, "x.npy"),
                "--train-y", os.path.join(work, "y.npy"),
                "--epochs", "1", "--lr", str(args.lr),
                "--accum-steps", str(args.accum), "--seed", "7",
                "--log", os.path.join(work, name + ".jsonl"),
                "--export", os.path.join(work, name + ".onnx"),
                "--no-fold-bn", "--threads", "1"] + (
                    ["--no-shuffle"] if has_bn else []) + (
                    ["--val-x", os.path.join(work, "vx.npy"),
                     "--val-y", os.path.join(work, "vy.npy")]
                    if args.val else [])

    replica_args = train_args("replicas") + (
        ["--sync-bn"] if args.sync_bn else []) + (
        ["--bucket-mb", args.bucket_mb] if args.bucket_mb else []) + device

    codes, output = launch(args, trainers[args.batch], replica_args,
                           timeout=120, base_env=replica_env)
    if any(codes):
        print(output)
        print(f"data-parallel run failed: exit codes {codes}")
        return 1
    ours, ours_weights = read_run(os.path.join(work, "replicas.jsonl"),
                                  os.path.join(work, "replicas.onnx"))
    # How the emulated device's replicas averaged (NCCL or the host).
    for line in output.splitlines() if args.emulated_cuda else []:
        if line.startswith("data-parallel:"):
            print(line)
    print(f"data-parallel {args.model}: {args.replicas} replicas "
          f"({args.launcher}) x micro-batch {args.batch}, K={args.accum}, "
          f"{len(ours)} steps" + (", --sync-bn" if args.sync_bn else "") +
          (f", {args.val} validation samples" if args.val else "") +
          (f", {args.bucket_mb} MiB buckets" if args.bucket_mb else ""))

    rows = []
    if not has_bn or args.sync_bn:
        subprocess.run([trainers[global_batch]] + train_args("single"),
                       check=True, stdout=subprocess.DEVNULL)
        ref, ref_weights = read_run(os.path.join(work, "single.jsonl"),
                                    os.path.join(work, "single.onnx"))
        print(f"  against one process with micro-batch {global_batch} "
              f"(max abs / relative difference)")
        rows.append(("step losses", max_abs(ours, ref), max_rel(ours, ref),
                     args.tolerance))
        for name, value in sorted(ref_weights.items()):
            rows.append((name, max_abs(ours_weights[name], value),
                         max_rel(ours_weights[name], value), args.tolerance))
    else:
        ref, ref_state = ddp_reference(parity.cls_copy(initial, cls), x, y,
                                       args, torch.float64)
        ref32, ref32_state = ddp_reference(parity.cls_copy(initial, cls), x,
                                           y, args, torch.float32)
        print("  against PyTorch DDP simulated in float64 (max abs / "
              "relative difference; tolerance: --tolerance or 4x PyTorch "
              "float32's own)")
        rows.append(("step losses", max_abs(ours, ref), max_rel(ours, ref),
                     max(args.tolerance, 4 * max_rel(ref32, ref))))
        for name, value in sorted(ref_state.items()):
            if name not in ours_weights:
                print(f"missing in export: {name}")
                return 1
            rows.append((name, max_abs(ours_weights[name], value),
                         max_rel(ours_weights[name], value),
                         max(args.tolerance,
                             4 * max_rel(ref32_state[name], value))))
    failed = False
    for name, absolute, relative, tolerance in rows:
        ok = relative <= tolerance
        failed |= not ok
        print(f"  {name:24} {absolute:10.2e} {relative:10.2e} "
              f"{'ok' if ok else 'FAIL'}")
    print(f"  largest relative difference {max(r[2] for r in rows):.2e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
