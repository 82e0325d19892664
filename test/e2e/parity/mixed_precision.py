#!/usr/bin/env python3
"""PyTorch parity of mixed-precision trainers (traincc --precision bf16|fp16).

For one model of parity.py: compile it with traincc at the given precision,
train a few optimizer steps, and compare the step losses, final parameters,
BatchNorm running statistics and the loss scaler's decisions with:
  - PyTorch float64 (the truth every run is measured against);
  - PyTorch's own autocast (torch.autocast("cpu", bfloat16); Debian's
    PyTorch 1.13 has no CPU float16 autocast and no CPU GradScaler), for bf16;
  - an emulated autocast: convolutions and linear layers take their inputs,
    weights and bias rounded to the low type and round their result to it
    (fp32 arithmetic in between, as tensor cores accumulate), everything else
    in fp32, with GradScaler driven by a transcription of its two CUDA
    kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_).
The trainer passes when its error against float64 is within FACTOR times the
largest error of the PyTorch low-precision runs (or --tolerance), and, with
loss scaling, when its sequence of scales and skipped steps equals
GradScaler's.

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
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import (MODELS, cls_copy, emulated_cuda,  # noqa: E402
                    make_data, prepare_model, rel_error)

LOW_TYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


class PlainMLP(nn.Module):
    """Linear-ReLU-Linear without normalisation: the first layer's weight
    gradient grows with the input, so large inputs overflow fp16 gradients
    (BatchNorm would cancel the input's scale)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


MODELS = dict(MODELS, mlp=(PlainMLP, (20,), 5))
# How far the trainer may be from float64 relative to PyTorch's own
# low-precision runs: the two round at the same places but accumulate in
# different orders, so their errors are alike, not equal.
FACTOR = 4.0


class EmulatedAutocast:
    """Within this context, conv1d/2d/3d and linear compute on operands
    rounded to `low` and round their result to it; the backward pass then
    rounds the same tensors autocast's does (the gradient of x.to(low) is
    the gradient cast back)."""

    NAMES = ("conv1d", "conv2d", "conv3d", "linear")

    def __init__(self, low):
        self.low = low
        self.saved = {}

    def __enter__(self):
        low = self.low

        def rounded(t):
            return t if t is None else t.to(low).float()

        def wrap(fn):
            def call(input, weight, bias=None, *args, **kwargs):
                out = fn(rounded(input), rounded(weight), rounded(bias),
                         *args, **kwargs)
                return out.to(low).float()
            return call

        for name in self.NAMES:
            self.saved[name] = getattr(F, name)
            setattr(F, name, wrap(self.saved[name]))
        return self

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(F, name, fn)


class GradScalerReference:
    """torch.cuda.amp.GradScaler's arithmetic on the CPU: the state is an f32
    scale and an integer growth tracker."""

    def __init__(self, init, growth=2.0, backoff=0.5, interval=2000):
        self.scale = np.float32(init)
        self.growth, self.backoff, self.interval = growth, backoff, interval
        self.tracker = 0

    def unscale_(self, params):
        """Divides every gradient by the scale; True when any scaled
        gradient holds inf or NaN."""
        inv = np.float32(1.0 / np.float64(self.scale))
        found = False
        for p in params:
            if p.grad is None:
                continue
            found |= not bool(torch.isfinite(p.grad).all())
            p.grad.mul_(float(inv))
        return found

    def update(self, found):
        if found:
            self.scale = np.float32(np.float64(self.scale) * self.backoff)
            self.tracker = 0
            return
        successful = self.tracker + 1
        if successful == self.interval:
            grown = np.float32(np.float64(self.scale) * self.growth)
            if np.isfinite(grown):
                self.scale = grown
            self.tracker = 0
        else:
            self.tracker = successful


def reference(model, x, y, args, dtype, mode):
    """Trains `model` like the trainer: K micro-batches per step in file
    order. mode: "exact" (dtype throughout), "autocast" (torch.autocast on
    the CPU) or "emulated" (EmulatedAutocast). Returns the step losses, the
    model, and the (scale, skipped) of every step under loss scaling."""
    model = model.to(dtype=dtype)
    model.train()
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr,
                              momentum=args.momentum)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = None
    if args.loss_scale_mode != "none" and mode == "emulated":
        scaler = GradScalerReference(args.loss_scale_init,
                                     interval=args.growth_interval)
    stats = [m for m in model.modules()
             if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    loss_fn = nn.CrossEntropyLoss()
    losses, decisions = [], []
    b, k = args.batch, args.accum
    low = LOW_TYPES[args.precision]
    for step in range(args.steps):
        opt.zero_grad()
        backup = [(m.running_mean.clone(), m.running_var.clone())
                  for m in stats]
        total = 0.0
        for m in range(k):
            i = (step * k + m) * b
            xb = torch.tensor(x[i:i + b], dtype=dtype)
            yb = torch.tensor(y[i:i + b])
            if mode == "autocast":
                with torch.autocast("cpu", dtype=low):
                    loss = loss_fn(model(xb), yb)
            elif mode == "emulated":
                with EmulatedAutocast(low):
                    loss = loss_fn(model(xb), yb)
            else:
                loss = loss_fn(model(xb), yb)
            scaled = loss * float(scaler.scale) if scaler else loss
            (scaled / k).backward()
            total += loss.item()
        skipped = False
        if scaler:
            used = float(scaler.scale)
            skipped = scaler.unscale_(model.parameters())
            if skipped:
                # traincc restores the running statistics of a skipped step.
                with torch.no_grad():
                    for module, (mean, var) in zip(stats, backup):
                        module.running_mean.copy_(mean)
                        module.running_var.copy_(var)
            scaler.update(skipped)
            decisions.append((used, skipped))
        if not skipped:
            opt.step()
        losses.append(total / k)
    return losses, model, decisions


def state_errors(trained, state, truth):
    """Largest relative errors of weights and of running statistics."""
    weights, running = 0.0, 0.0
    for name, value in truth.items():
        if name.endswith("num_batches_tracked"):
            continue
        err = rel_error(trained[name], value)
        if "running_" in name:
            running = max(running, err)
        else:
            weights = max(weights, err)
    return weights, running


def main():
    import onnx
    import onnx.numpy_helper

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--precision", choices=sorted(LOW_TYPES),
                        required=True)
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--optimizer", choices=["sgd", "adam"],
                        default="sgd")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--accum", type=int, default=1)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--loss-scale", default=None,
                        help="traincc's --loss-scale (default: by precision)")
    parser.add_argument("--loss-scale-init", type=float, default=65536.0)
    parser.add_argument("--growth-interval", type=int, default=2000)
    parser.add_argument("--input-scale", type=float, default=1.0,
                        help="multiply the data by this (large values make "
                             "fp16 gradients overflow)")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--decisions-only", action="store_true",
                        help="check the loss scaler's decisions and the "
                             "distance to the emulated autocast only (for "
                             "runs that skip steps)")
    parser.add_argument("--workdir")
    parser.add_argument("--emulated-cuda", metavar="FAKE_LIBCUDA",
                        help="train with --device cuda on this fake CUDA "
                             "driver, which runs traincc's CUDA kernels "
                             "(tensor cores included) compiled for the CPU")
    args = parser.parse_args()
    mode = args.loss_scale or ("dynamic" if args.precision == "fp16"
                               else "none")
    args.loss_scale_mode = mode
    if mode not in ("dynamic", "none"):
        parser.error("--loss-scale: dynamic or none")

    _, sample_shape, classes = MODELS[args.model]
    cls, model, work, onnx_path = prepare_model(
        MODELS, args.model, args.batch, args.workdir, "mixed-precision-")
    x, y = make_data(sample_shape, classes,
                     args.batch * args.accum * args.steps)
    x = (x * np.float32(args.input_scale)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)

    trainer = os.path.join(work, "trainer")
    compile_cmd = [args.traincc, onnx_path, "-o", trainer,
                   "--batch-size", str(args.batch),
                   "--accum-steps", str(args.accum),
                   "--optimizer", args.optimizer,
                   "--precision", args.precision,
                   "--loss-scale", mode,
                   "--loss-scale-init", repr(args.loss_scale_init),
                   "--loss-scale-growth-interval", str(args.growth_interval)]
    if args.optimizer == "sgd":
        compile_cmd += ["--momentum", str(args.momentum)]
    device, env = [], None
    if args.emulated_cuda:
        compile_cmd, device, env = emulated_cuda(compile_cmd, trainer, work,
                                                 args.emulated_cuda)
    else:
        compile_cmd += ["--target", "cpu"]
    subprocess.run(compile_cmd, check=True)
    log = os.path.join(work, "run.jsonl")
    exported = os.path.join(work, "trained.onnx")
    subprocess.run([trainer, "train", "--train-x", os.path.join(work, "x.npy"),
                    "--train-y", os.path.join(work, "y.npy"), "--no-shuffle",
                    "--max-steps", str(args.steps), "--lr", str(args.lr),
                    "--log", log, "--export", exported, "--threads", "1",
                    "--no-fold-bn"] + device,
                   check=True, stdout=subprocess.DEVNULL, env=env)
    steps = [json.loads(line) for line in open(log)
             if json.loads(line)["event"] == "step"]
    ours = [s["loss"] for s in steps]
    our_decisions = [(s["loss_scale"], s["skipped"]) for s in steps]
    trained = {init.name: onnx.numpy_helper.to_array(init)
               for init in onnx.load(exported).graph.initializer}

    ref64, model64, _ = reference(cls_copy(model, cls), x, y, args,
                                  torch.float64, "exact")
    emu, model_emu, ref_decisions = reference(cls_copy(model, cls), x, y,
                                              args, torch.float32, "emulated")
    runs = [("emulated", emu, model_emu)]
    if args.precision == "bf16":
        amp, model_amp, _ = reference(cls_copy(model, cls), x, y, args,
                                      torch.float32, "autocast")
        runs.insert(0, ("torch autocast", amp, model_amp))

    truth = {k: v.detach().numpy() for k, v in model64.state_dict().items()}
    ours_w, ours_s = state_errors(trained, None, truth)
    rows = [("step losses", rel_error(ours, ref64),
             [rel_error(losses, ref64) for _, losses, _ in runs]),
            ("parameters", ours_w,
             [state_errors({k: v.detach().float().numpy() for k, v in
                            m.state_dict().items()}, None, truth)[0]
              for _, _, m in runs]),
            ("BN running stats", ours_s,
             [state_errors({k: v.detach().float().numpy() for k, v in
                            m.state_dict().items()}, None, truth)[1]
              for _, _, m in runs])]

    print(f"mixed precision parity {args.model} precision={args.precision} "
          f"loss-scale={mode} optimizer={args.optimizer} K={args.accum} "
          f"steps={args.steps} (relative error vs PyTorch float64)")
    header = "".join(f" {name:>15}" for name, _, _ in runs)
    print(f"  {'quantity':18} {'traincc':>10}{header}")
    failed = False
    emu_state = {k: v.detach().float().numpy()
                 for k, v in model_emu.state_dict().items()}
    versus = (rel_error(ours, emu), state_errors(trained, None, emu_state)[0])
    if args.decisions_only:
        # Skipped steps make float64 (which never skips) a different
        # trajectory; the emulated autocast skips the same steps.
        ok = max(versus) <= args.tolerance
        failed |= not ok
        print(f"  traincc vs emulated autocast: step losses {versus[0]:.2e}, "
              f"parameters {versus[1]:.2e} {'ok' if ok else 'FAIL'}")
    else:
        for name, ours_err, theirs in rows:
            ok = ours_err <= max(args.tolerance, FACTOR * max(theirs))
            failed |= not ok
            cells = "".join(f" {err:15.2e}" for err in theirs)
            print(f"  {name:18} {ours_err:10.2e}{cells} "
                  f"{'ok' if ok else 'FAIL'}")
        print(f"  traincc vs emulated autocast: step losses {versus[0]:.2e}, "
              f"parameters {versus[1]:.2e}")
        print(f"  losses traincc: {[round(v, 5) for v in ours]}")
        print(f"  losses torch64: {[round(v, 5) for v in ref64]}")
    if mode == "dynamic":
        # Both sides as f32, whatever digits the log printed.
        same = ([(np.float32(s), k) for s, k in our_decisions] ==
                [(np.float32(s), k) for s, k in ref_decisions])
        failed |= not same
        skipped = sum(k for _, k in our_decisions)
        print(f"  loss scaler: {skipped} of {len(our_decisions)} steps "
              f"skipped, final scale {our_decisions[-1][0] if our_decisions else 0:g}; "
              f"scales and skips {'equal' if same else 'DIFFER from'} "
              f"GradScaler's")
        if not same:
            print(f"    traincc:    {our_decisions}")
            print(f"    GradScaler: {ref_decisions}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
