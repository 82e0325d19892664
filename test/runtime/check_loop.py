#!/usr/bin/env python3
# Checks the training-loop features of a test trainer's --log against
# PyTorch and against their definitions (test/runtime/*.test). Prints
# "OK ..." lines for FileCheck, or "FAIL: ..." and exits 1.
#   check_loop.py warmup-cosine LOG --lr F --warmup W --total T --min-lr M
#       the step lr sequence is torch LinearLR(start_factor=1/W,
#       total_iters=W-1) for W steps, then CosineAnnealingLR(T_max=T-W,
#       eta_min=M).
#   check_loop.py warmup-step LOG --lr F --warmup W --step-size N --gamma G
#       LinearLR warmup, then StepLR(step_size=N, gamma=G).
#   check_loop.py plateau LOG --lr F --metric val_acc|val_loss|train_loss
#       --patience P --factor F --cooldown C --threshold T --min-lr M
#       each epoch's steps use the lr of torch ReduceLROnPlateau (mode max
#       for val_acc, else min; threshold_mode 'rel') stepped with the
#       metrics of the epochs before; at least one reduction happened.
#   check_loop.py early-stop LOG --metric M --patience P --min-delta D
#       Keras EarlyStopping on the logged metric: the run stopped exactly
#       after the epoch the rule names, with the early_stop line it implies.
#   check_loop.py no-early-stop LOG --metric M --patience P --min-delta D
#       the rule never fired and the log has no early_stop line.
#   check_loop.py clip LOG ORIG.onnx TRAINED.onnx --lr F --clip C
#       one SGD step with clipping: the logged grad_norm is the pre-clip
#       norm (above C) and the parameters moved by at most lr * (C + weight
#       decay term) (no momentum yet on the first step).
#   check_loop.py param-change LOG ORIG.onnx TRAINED.onnx
#       a one-epoch run's param_change is the L2 norm of trained - original
#       per tensor; bn_stats summarises the exported running statistics.
import json
import math
import sys

import numpy as np


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def arg(args, name, kind=float, default=None):
    if name in args:
        return kind(args[args.index(name) + 1])
    if default is None:
        fail("missing " + name)
    return default


def step_lrs(lines):
    return [d["lr"] for d in lines if d["event"] == "step"]


def compare(got, want, rtol, what):
    if len(got) != len(want):
        fail("%s: %d steps in the log, %d expected" % (what, len(got),
                                                        len(want)))
    for i, (a, b) in enumerate(zip(got, want), 1):
        if abs(a - b) > rtol * max(abs(b), 1e-12):
            fail("%s: step %d lr %r, torch says %r" % (what, i, a, b))
    print("OK %s: %d step learning rates match torch" % (what, len(got)))


def torch_warmup(base, warmup):
    """The lrs of the first `warmup` steps: LinearLR from base/W to base."""
    import torch
    if warmup == 0:
        return []
    if warmup == 1:
        return [base]
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base)
    sched = torch.optim.lr_scheduler.LinearLR(
        opt, start_factor=1.0 / warmup, end_factor=1.0,
        total_iters=warmup - 1)
    lrs = []
    for _ in range(warmup):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def torch_main(base, count, make):
    import torch
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base)
    sched = make(opt)
    lrs = []
    for _ in range(count):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def check_warmup_cosine(log, args):
    import torch
    base, warmup = arg(args, "--lr"), arg(args, "--warmup", int)
    total, min_lr = arg(args, "--total", int), arg(args, "--min-lr")
    want = torch_warmup(base, warmup) + torch_main(
        base, total - warmup,
        lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(
            opt, T_max=total - warmup, eta_min=min_lr))
    compare(step_lrs(read_log(log)), want, 1e-9, "warmup+cosine")


def check_warmup_step(log, args):
    import torch
    base, warmup = arg(args, "--lr"), arg(args, "--warmup", int)
    size, gamma = arg(args, "--step-size", int), arg(args, "--gamma")
    got = step_lrs(read_log(log))
    want = torch_warmup(base, warmup) + torch_main(
        base, len(got) - warmup,
        lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=size,
                                                    gamma=gamma))
    compare(got, want, 1e-12, "warmup+step")
    if len(set(got[warmup:])) < 2:
        fail("the step schedule never decayed")


def epochs_with_steps(lines):
    """[(epoch line, [step lines of that epoch])]."""
    out, steps = [], []
    for d in lines:
        if d["event"] == "step":
            steps.append(d)
        elif d["event"] == "epoch":
            out.append((d, steps))
            steps = []
    return out


def check_plateau(log, args):
    import torch
    base, metric = arg(args, "--lr"), arg(args, "--metric", str)
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max" if metric == "val_acc" else "min",
        factor=arg(args, "--factor"), patience=arg(args, "--patience", int),
        threshold=arg(args, "--threshold"), threshold_mode="rel",
        cooldown=arg(args, "--cooldown", int), min_lr=arg(args, "--min-lr"))
    epochs = epochs_with_steps(read_log(log))
    reductions = 0
    for epoch, steps in epochs:
        want = opt.param_groups[0]["lr"]
        for s in steps:
            if s["lr"] != want:
                fail("epoch %d step %d: lr %r, torch says %r" %
                     (epoch["epoch"], s["step"], s["lr"], want))
        sched.step(epoch[metric])
        if opt.param_groups[0]["lr"] != want:
            reductions += 1
    if reductions == 0:
        fail("the learning rate was never reduced: the test proves nothing")
    print("OK plateau: %d epochs match torch ReduceLROnPlateau (%d "
          "reductions)" % (len(epochs), reductions))


def keras_stop_epoch(values, patience, min_delta, maximize):
    """(stop epoch or None, best epoch, best) under Keras EarlyStopping."""
    best, best_epoch, wait = -math.inf if maximize else math.inf, 0, 0
    for epoch, v in enumerate(values, 1):
        improved = v - min_delta > best if maximize else v + min_delta < best
        if improved:
            best, best_epoch, wait = v, epoch, 0
        else:
            wait += 1
            if wait >= patience:
                return epoch, best_epoch, best
    return None, best_epoch, best


def check_early_stop(log, args, expect_stop):
    metric = arg(args, "--metric", str)
    lines = read_log(log)
    values = [d[metric] for d in lines if d["event"] == "epoch"]
    stop, best_epoch, best = keras_stop_epoch(
        values, arg(args, "--patience", int), arg(args, "--min-delta"),
        metric == "val_acc")
    events = [d for d in lines if d["event"] == "early_stop"]
    if not expect_stop:
        if stop is not None or events:
            fail("early stopping fired (rule: epoch %r, log: %r)" %
                 (stop, events))
        print("OK no early stop in %d epochs" % len(values))
        return
    if stop is None:
        fail("the rule never fires on %r" % values)
    if stop != len(values):
        fail("stopped after epoch %d, the rule says %d" % (len(values), stop))
    want = {"event": "early_stop", "epoch": stop, "best_epoch": best_epoch,
            "best": best, "monitor": metric}
    if lines[-1] != want:
        fail("last line %r, expected %r" % (lines[-1], want))
    print("OK stopped after epoch %d, best %s at epoch %d" %
          (stop, metric, best_epoch))


def initializers(path):
    import onnx
    from onnx import numpy_helper
    return {t.name: numpy_helper.to_array(t).astype(np.float64)
            for t in onnx.load(path).graph.initializer}


def check_clip(log, args):
    orig, trained = initializers(args[1]), initializers(args[2])
    lr, clip = arg(args, "--lr"), arg(args, "--clip")
    steps = [d for d in read_log(log) if d["event"] == "step"]
    if len(steps) != 1:
        fail("expected one step, got %d" % len(steps))
    norm = steps[0]["grad_norm"]
    if not norm > 10 * clip:
        fail("grad_norm %r is not the pre-clip norm (clip %r)" % (norm, clip))
    # SGD: delta = -lr * (g + wd * w); |g| <= clip after clipping.
    decay = math.sqrt(sum(float(np.sum((5e-4 * w) ** 2))
                          for w in orig.values()))
    change = math.sqrt(sum(float(np.sum((trained[n] - orig[n]) ** 2))
                           for n in orig if not n.startswith("bn.running")))
    bound = lr * (clip + decay) * (1 + 1e-5)
    if change > bound:
        fail("parameters moved by %g, more than lr * (clip + decay) = %g" %
             (change, bound))
    if change < lr * (clip - decay) * (1 - 1e-3):
        fail("parameters moved by %g, too little for a clipped step" % change)
    print("OK grad_norm %.4g is pre-clip; the step moved the parameters by "
          "%.4g <= %.4g" % (norm, change, bound))


def check_param_change(log, args):
    orig, trained = initializers(args[1]), initializers(args[2])
    epochs = [d for d in read_log(log) if d["event"] == "epoch"]
    if len(epochs) != 1:
        fail("expected one epoch, got %d" % len(epochs))
    changes = epochs[0]["param_change"]
    want_names = sorted(n for n in orig if not n.startswith("bn.running"))
    if sorted(changes) != want_names:
        fail("param_change keys %s, expected %s" % (sorted(changes),
                                                     want_names))
    for name, value in changes.items():
        want = float(np.linalg.norm(trained[name] - orig[name]))
        if abs(value - want) > 1e-6 * max(want, 1e-12):
            fail("param_change[%s] = %r, the export says %r" %
                 (name, value, want))
    bn = epochs[0]["bn_stats"]
    running = sorted(n for n in trained if n.startswith("bn.running"))
    if sorted(bn) != running:
        fail("bn_stats keys %s, expected %s" % (sorted(bn), running))
    for name in running:
        v = trained[name]
        want = {"mean": float(np.mean(v)), "max_abs": float(np.max(np.abs(v)))}
        for key in want:
            if abs(bn[name][key] - want[key]) > 1e-6 * max(abs(want[key]), 1):
                fail("bn_stats[%s][%s] = %r, the export says %r" %
                     (name, key, bn[name][key], want[key]))
    print("OK param_change of %d tensors and bn_stats of %d match the export"
          % (len(changes), len(running)))


def main():
    args = sys.argv[1:]
    check = args[0]
    args = args[1:]
    if check == "warmup-cosine":
        check_warmup_cosine(args[0], args)
    elif check == "warmup-step":
        check_warmup_step(args[0], args)
    elif check == "plateau":
        check_plateau(args[0], args)
    elif check == "early-stop":
        check_early_stop(args[0], args, True)
    elif check == "no-early-stop":
        check_early_stop(args[0], args, False)
    elif check == "clip":
        check_clip(args[0], args)
    elif check == "param-change":
        check_param_change(args[0], args)
    else:
        fail("unknown check " + check)


if __name__ == "__main__":
    main()
