"""Mixed precision in the GPU check (scripts/gpu_check.py): traincc's
--precision bf16|fp16 trainers against PyTorch AMP on the same device.

Parity follows test/e2e/parity/mixed_precision.py: the packed trainer, a
PyTorch float64 run (the truth) and PyTorch's low-precision runs train the
same module from the same weights on the same micro-batches; the trainer
passes when its error against float64 is within FACTOR (4) times the larger
error of PyTorch's low-precision runs (or --amp-tolerance), and, with fp16's
dynamic loss scaling, when its scale and skip of every step equal
GradScaler's. PyTorch's low-precision runs:
  * AMP: torch.autocast(device, dtype), with GradScaler for fp16 (on CUDA;
    on the CPU only where PyTorch has CPU fp16 autocast and a CPU
    GradScaler, 2.4 and later; bf16 has CPU autocast since 1.10);
  * mixed_precision.py's EmulatedAutocast (convolutions and linear layers
    on operands and results rounded to the low type), with its
    GradScalerReference for fp16; this alone where PyTorch lacks AMP for
    the device (Debian's 1.13 on the CPU, fp16), which the rows then say.
The example CNN's step time at bf16/fp16 uses the same AMP (torch_amp).

gpu_prepare.py packs AMP_CONFIGS and the example CNN at each of PRECISIONS.
Only the standard library and numpy are imported at the top.
"""
import contextlib
import os
import sys

import numpy as np

import gpu_check as gc

PRECISIONS = ("bf16", "fp16")
# (name, model of parity.py's MODELS, precision, optimizer, lr, momentum,
# accumulation steps): runs of test/e2e/parity/mixed-precision.test, with
# its step count (AMP_STEPS) and so the same data (parity.make_data of
# batch x K x steps samples).
AMP_CONFIGS = [
    ("fashion-cnn-bf16", "fashion-cnn", "bf16", "sgd", 0.01, 0.9, 1),
    ("fashion-cnn-fp16", "fashion-cnn", "fp16", "sgd", 0.002, 0.9, 1),
    ("residual-adam-k2-bf16", "residual", "bf16", "adam", 0.01, 0.0, 2),
    ("residual-adam-k2-fp16", "residual", "fp16", "adam", 0.01, 0.0, 2),
]
AMP_STEPS = 6
# GradScaler's defaults, passed to traincc explicitly.
LOSS_SCALE_INIT = 65536.0
GROWTH_INTERVAL = 2000
FACTOR = 4.0


def config_dict(config):
    name, model, precision, opt, lr, momentum, accum = config
    return {"name": name, "model": model, "precision": precision,
            "optimizer": opt, "lr": lr, "momentum": momentum,
            "weight_decay": 0.0, "batch": gc.PARITY_BATCH, "accum": accum,
            "steps": AMP_STEPS, "bn_stats": "micro",
            "loss_scale": "dynamic" if precision == "fp16" else "none",
            "loss_scale_init": LOSS_SCALE_INIT,
            "growth_interval": GROWTH_INTERVAL}


def traincc_flags(cfg):
    """traincc's mixed-precision flags of a configuration."""
    flags = ["--precision", cfg["precision"], "--loss-scale",
             cfg["loss_scale"]]
    if cfg["loss_scale"] == "dynamic":
        flags += ["--loss-scale-init", repr(cfg["loss_scale_init"]),
                  "--loss-scale-growth-interval", str(cfg["growth_interval"])]
    return flags


# --- PyTorch AMP, or its emulation --------------------------------------------

def mixed_precision():
    """test/e2e/parity/mixed_precision.py (imports torch)."""
    sys.path.insert(0, gc.PARITY_DIR)
    import mixed_precision as mp
    return mp


class ReferenceScaler:
    """mixed_precision.GradScalerReference behind torch GradScaler's
    scale/step/update/get_scale."""

    def __init__(self, mp, init, interval):
        self.ref = mp.GradScalerReference(init, interval=interval)
        self.found = False

    def get_scale(self):
        return float(self.ref.scale)

    def scale(self, loss):
        return loss * float(self.ref.scale)

    def step(self, opt):
        params = [p for group in opt.param_groups for p in group["params"]]
        self.found = self.ref.unscale_(params)
        if not self.found:
            opt.step()

    def update(self):
        self.ref.update(self.found)


def cpu_fp16_amp(torch):
    """Whether this PyTorch has CPU float16 autocast and a CPU GradScaler
    (1.13 has neither: its CPU autocast disables itself for float16)."""
    if not hasattr(getattr(torch, "amp", None), "GradScaler"):
        return False
    try:
        with torch.autocast("cpu", dtype=torch.float16):
            out = torch.nn.functional.linear(torch.ones(2, 2),
                                             torch.ones(2, 2))
        return out.dtype == torch.float16
    except Exception:  # noqa: BLE001
        return False


def torch_amp(torch, device_type, precision, emulate=False,
              init=LOSS_SCALE_INIT, interval=GROWTH_INTERVAL):
    """(autocast context factory, loss scaler or None, label) of PyTorch's
    mixed precision at `precision` on `device_type`; label None for fp32.
    Falls back to the emulation where PyTorch has no AMP (or emulate)."""
    if precision == "fp32":
        return contextlib.nullcontext, None, None
    mp = mixed_precision()
    low = mp.LOW_TYPES[precision]
    fp16 = precision == "fp16"
    if not emulate and (device_type == "cuda" or not fp16
                        or cpu_fp16_amp(torch)):
        scaler = None
        if fp16:
            kwargs = {"init_scale": init, "growth_interval": interval}
            if hasattr(getattr(torch, "amp", None), "GradScaler"):
                scaler = torch.amp.GradScaler(device_type, **kwargs)
            else:  # before 2.3
                scaler = torch.cuda.amp.GradScaler(**kwargs)
        label = (f"torch.autocast({device_type}, {str(low)[6:]})"
                 + (" + GradScaler" if fp16 else ""))
        return (lambda: torch.autocast(device_type, dtype=low)), scaler, label
    scaler = ReferenceScaler(mp, init, interval) if fp16 else None
    label = "emulated autocast" + (" + GradScalerReference" if fp16 else "")
    if not emulate:
        label += f" (PyTorch {torch.__version__.split('+')[0]} has no " \
                 f"{device_type} fp16 AMP)"
    return (lambda: mp.EmulatedAutocast(low)), scaler, label


def train_low(torch, module, x, y, cfg, steps, device, emulate):
    """Trains `module` (float32) like the trainer under PyTorch's mixed
    precision: K micro-batches per step in file order, loss/K each, the
    loss scaled under fp16. Returns (losses, state, [(scale, skipped)] of
    every step under loss scaling, label)."""
    dev = torch.device(device)
    module = module.to(dev).train()
    if cfg["optimizer"] == "sgd":
        opt = torch.optim.SGD(module.parameters(), lr=cfg["lr"],
                              momentum=cfg["momentum"],
                              weight_decay=cfg["weight_decay"])
    else:
        opt = torch.optim.Adam(module.parameters(), lr=cfg["lr"],
                               weight_decay=cfg["weight_decay"])
    autocast, scaler, label = torch_amp(
        torch, dev.type, cfg["precision"], emulate, cfg["loss_scale_init"],
        cfg["growth_interval"])
    if cfg["loss_scale"] != "dynamic":
        scaler = None
    stats = [m for m in module.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    loss_fn = torch.nn.CrossEntropyLoss()
    losses, decisions = [], []
    b, k = cfg["batch"], cfg["accum"]
    for step in range(steps):
        opt.zero_grad()
        backup = [(m.running_mean.clone(), m.running_var.clone())
                  for m in stats]
        total = 0.0
        for m in range(k):
            i = (step * k + m) * b
            xb = torch.tensor(x[i:i + b], device=dev)
            yb = torch.tensor(y[i:i + b], device=dev)
            with autocast():
                loss = loss_fn(module(xb), yb)
            (scaler.scale(loss / k) if scaler else loss / k).backward()
            total += loss.item()
        if scaler:
            used = scaler.get_scale()
            scaler.step(opt)  # skips opt.step() on inf/NaN gradients
            scaler.update()
            skipped = scaler.get_scale() < used  # backoff, only on skips
            if skipped:
                # traincc restores the running statistics of a skipped step.
                with torch.no_grad():
                    for layer, (mean, var) in zip(stats, backup):
                        layer.running_mean.copy_(mean)
                        layer.running_var.copy_(var)
            decisions.append((used, bool(skipped)))
        else:
            opt.step()
        losses.append(total / k)
    return losses, gc.numpy_state(module), decisions, label


def torch_amp_parity(cfg, pdir, device, steps):
    """PyTorch's float64 run and low-precision runs: {"fp64": (losses,
    state), "runs": [(label, losses, state, decisions)]}, AMP first."""
    import torch
    cls, init, x, y, args = gc.parity_inputs(cfg, pdir, steps)
    import parity  # on the path now
    losses, trained = parity.torch_reference(
        gc.initial_module(torch, cls, init), x, y, args, torch.float64, device)
    out = {"fp64": (losses, gc.numpy_state(trained)), "runs": []}
    for emulate in (False, True):
        losses, state, decisions, label = train_low(
            torch, gc.initial_module(torch, cls, init), x, y, cfg, steps,
            device, emulate)
        out["runs"].append((label, losses, state, decisions))
        if label.startswith("emulated"):
            break  # no AMP here: the emulation was the first run
    return out


# --- The check ------------------------------------------------------------------

def errors_vs(losses, state, truth):
    """Relative errors of losses, weights and BN statistics vs float64."""
    w, s, missing = gc.compare_states(state, truth[1])
    return {"loss": gc.rel_error(losses, truth[0]), "weights": w, "bn": s}, \
        missing


def decisions_of(events):
    return [(float(np.float32(e.get("loss_scale", 0.0))), bool(e["skipped"]))
            for e in events]


def same_decisions(a, b):
    """Both sides as float32, whatever digits the log printed."""
    return [(np.float32(s), k) for s, k in a] == \
        [(np.float32(s), k) for s, k in b]


def check_parity_amp(report, pack, cfg, args, deadline):
    name, precision = cfg["name"], cfg["precision"]
    pdir = os.path.join(pack, cfg["dir"])
    steps = min(args.steps, cfg["steps"])
    row = {"name": name, "precision": precision, "steps": steps,
           "ok": False}
    report.results["parity_amp"].append(row)
    report.say(f"== parity {name}: {steps} steps --precision {precision} "
               f"--device {args.device}")
    if cfg.get("error"):
        row["error"] = cfg["error"]
        report.fail(f"parity {name}", cfg["error"])
        return
    try:
        ours, ours_state, events = gc.train_parity(
            report, cfg, pdir, args.device, steps, deadline, args.device,
            args.onnx_reader)
    except Exception as e:  # noqa: BLE001 - recorded, the check goes on
        row["error"] = str(e)
        report.fail(f"parity {name}", str(e))
        return
    try:
        if deadline.left() < 10:
            raise RuntimeError("skipped: the time budget is spent")
        ref = torch_amp_parity(cfg, pdir, args.torch_device, steps)
    except Exception as e:  # noqa: BLE001
        row["error"] = f"PyTorch reference: {e}"
        report.fail(f"parity {name}", row["error"])
        return
    vs64, missing = errors_vs(ours, ours_state, ref["fp64"])
    runs = [(label, errors_vs(losses, state, ref["fp64"])[0], decisions)
            for label, losses, state, decisions in ref["runs"]]
    row.update({
        "reference": runs[0][0], "vs_fp64": vs64,
        "torch_vs_fp64": {label: errs for label, errs, _ in runs},
        "losses": {"traincc": ours, "torch_fp64": ref["fp64"][0],
                   **{label: losses for label, losses, _, _ in ref["runs"]}},
    })
    # The largest error of PyTorch's low-precision runs, by quantity.
    row["ref"] = {q: max(errs[q] for _, errs, _ in runs) for q in vs64}
    tol = args.amp_tolerance
    bad = [f"{q} {vs64[q]:.1e} > {FACTOR:g}x {row['ref'][q]:.1e}"
           for q in vs64 if not vs64[q] <= max(tol, FACTOR * row["ref"][q])]
    if missing:
        bad.append("missing in export: " + ", ".join(missing))
    limit = max(tol, FACTOR * max(row["ref"].values()))
    row["limit"] = limit
    for q in ("loss", "weights", "bn"):
        theirs = "  ".join(f"{label} {errs[q]:.2e}" for label, errs, _ in runs)
        report.say(f"  {q:8} vs fp64: traincc {vs64[q]:.2e}  {theirs}")
    report.say(f"  losses traincc: {[round(v, 5) for v in ours]}")
    report.say(f"  losses torch64: {[round(v, 5) for v in ref['fp64'][0]]}")
    if cfg["loss_scale"] == "dynamic":
        mine, theirs = decisions_of(events), runs[0][2]
        row["scaler"] = {"traincc": mine, "torch": theirs,
                         "equal": same_decisions(mine, theirs)}
        what = ("GradScaler's (emulated: GradScalerReference)"
                if runs[0][0].startswith("emulated") else "GradScaler's")
        skipped = sum(k for _, k in mine)
        report.say(f"  loss scaler: {skipped} of {len(mine)} steps skipped, "
                   f"final scale {mine[-1][0] if mine else 0:g}; scales and "
                   f"skips {'equal' if row['scaler']['equal'] else 'DIFFER from'}"
                   f" {what}")
        if not row["scaler"]["equal"]:
            report.say(f"    traincc:    {mine}")
            report.say(f"    GradScaler: {theirs}")
            bad.append("loss scales/skips differ from GradScaler's")
    if args.device == "cuda":
        try:
            cpu, cpu_state, cpu_events = gc.train_parity(
                report, cfg, pdir, "cpu", steps, deadline, "cpu",
                args.onnx_reader)
            cw, cs, _ = gc.compare_states(ours_state, cpu_state)
            row["cuda_vs_cpu"] = max(gc.rel_error(ours, cpu), cw, cs)
            if not row["cuda_vs_cpu"] <= limit:
                bad.append(f"cuda vs cpu {row['cuda_vs_cpu']:.2e}")
            if not same_decisions(decisions_of(events),
                                  decisions_of(cpu_events)):
                bad.append("cuda and cpu loss scales/skips differ")
        except Exception as e:  # noqa: BLE001
            row["cuda_vs_cpu_error"] = str(e)
            bad.append(f"--device cpu run: {e}")
    row["ok"] = not bad
    if bad:
        row["error"] = "; ".join(bad)
        report.fail(f"parity {name}", row["error"])


def table_lines(rows, args):
    """The mixed-precision rows of gpu_check.py's final table."""
    if not rows:
        return []
    fmt = gc.fmt
    lines = [f"mixed-precision parity on {args.device}: rel. error vs PyTorch "
             f"fp64 of the trainer and (ref) of PyTorch's low-precision runs "
             f"on {args.torch_device}; limit max({args.amp_tolerance:g}, "
             f"{FACTOR:g}x ref)",
             f"  {'config':22} {'steps':>5} {'loss':>8} {'ref':>8} "
             f"{'weights':>8} {'ref':>8} {'BN':>8} {'ref':>8} "
             f"{'cuda=cpu':>8} {'scaler':>6}  result  [PyTorch reference]"]
    for row in rows:
        v, ref = row.get("vs_fp64", {}), row.get("ref", {})
        scaler = row.get("scaler")
        scaler = "-" if scaler is None else (
            "equal" if scaler["equal"] else "DIFFER")
        result = "ok" if row["ok"] else "FAIL " + row.get("error", "")[:60]
        label = f"  [{row['reference']}]" if row.get("reference") else ""
        lines.append(f"  {row['name']:22} {row['steps']:5} "
                     f"{fmt(v.get('loss')):>8} {fmt(ref.get('loss')):>8} "
                     f"{fmt(v.get('weights')):>8} {fmt(ref.get('weights')):>8} "
                     f"{fmt(v.get('bn')):>8} {fmt(ref.get('bn')):>8} "
                     f"{fmt(row.get('cuda_vs_cpu')):>8} {scaler:>6}  "
                     f"{result}{label}")
    return lines
