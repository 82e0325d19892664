#!/usr/bin/env python3
"""GPU check of traincc's CUDA trainers, run from a pack of prebuilt trainers.

scripts/gpu-prepare.sh builds the pack on a machine with traincc (the GPU
machine has none); scripts/gpu-check.sh runs `check` on the GPU machine:

  * parity: each packed parity trainer (test/e2e/parity's models) trains for
    a few steps with --device cuda, and PyTorch trains the same module from
    the same initial weights on the same micro-batches on the GPU, in float32
    (TF32 off) and float64. Step losses, final weights and BatchNorm running
    statistics are compared; the trainer's --device cpu run must agree with
    its --device cuda run too.
  * Fashion-MNIST: the example CNN trains one epoch with --device cuda
    (scripts/run-example.sh's recipe) and reports the test accuracy.
  * step time of the example CNN (batch 64): the trainer, PyTorch eager and
    torch.compile.
  * mixed precision (scripts/gpu_check_amp.py): bf16/fp16 trainers
    (traincc --precision) against PyTorch AMP on the same device, and the
    example CNN's step time at bf16/fp16 against PyTorch AMP.
  * data-parallel scaling (scripts/gpu_check_scaling.py): the example CNN's
    step on one GPU against one replica on each of the machine's GPUs
    (skipped, with a line saying so, on a machine with one GPU);
  * SyncBatchNorm (scripts/gpu_check_sync_bn.py): 2 replicas of an MLP
    with BatchNorm trained with --sync-bn against one process with the
    global batch (one GPU each with NCCL, or both on one GPU through the
    host).

A failed stage is recorded and the others still run; the exit status is 1
when anything failed. Full logs go to --out; a short table is printed last.
Only the standard library and numpy are imported at the top: `prepare`
(scripts/gpu_prepare.py) shares CONFIGS, and torch is imported by the
stages that use it.
"""
import argparse
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    sys.exit(f"gpu-check: {sys.executable} has no numpy; run with a python3 "
             "that has numpy and torch (scripts/gpu-check.sh: set PYTHON)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARITY_DIR = os.path.join(ROOT, "test", "e2e", "parity")
EXAMPLE_DIR = os.path.join(ROOT, "examples", "fashion_mnist")

# The parity configurations packed and checked: (name, model of parity.py's
# MODELS, optimizer, lr, momentum, weight decay, accumulation steps,
# bn-stats), each one of test/e2e/parity/parity.test's runs.
CONFIGS = [
    ("basic-conv-bn", "basic-conv-bn", "sgd", 0.05, 0.9, 0.0, 1, "micro"),
    ("residual", "residual", "sgd", 0.05, 0.9, 0.0, 1, "micro"),
    ("mlp-bn", "mlp-bn", "sgd", 0.05, 0.9, 0.0, 1, "micro"),
    ("fashion-cnn", "fashion-cnn", "sgd", 0.001, 0.9, 0.0, 1, "micro"),
    ("residual-adam-k4", "residual", "adam", 0.01, 0.0, 0.0, 4, "micro"),
    ("mlp-bn-k4-bnstep", "mlp-bn", "sgd", 0.05, 0.9, 0.0, 4, "step"),
]
PARITY_BATCH = 8
PARITY_STEPS = 10
# The example: scripts/run-example.sh's recipe.
FASHION_BATCH = 64
FASHION_LR = 0.01
FASHION_MOMENTUM = 0.9
# The example compiled other ways, each timed beside the default at fp32:
# (manifest key, pack folder, extra traincc flags, short name, table row,
# ratio label).
FASHION_VARIANTS = [
    ("fashion_o1", "fashion-O1", ["-O1"], "-O1",
     "fp32 -O1 (LLVM and ptxas -O1)", "-O1/-O3"),
    # BatchNorm's backward sums in kernels of their own, as before
    # traincc-fuse-sums-into-producers joined the CUDA path.
    ("fashion_sums_apart", "fashion-sums-apart",
     ["--sums-in-producers=false"], "sums apart",
     "fp32 BN backward sums apart", "apart/default"),
]
# One full epoch of the example reaches far more; less means a broken step.
FASHION_MIN_ACCURACY = 0.80
# Messages of a trainer that cannot use CUDA (runtime/lib/exec/CudaDriver.cpp).
NO_CUDA = re.compile(r"no CUDA device|cannot load the CUDA driver|"
                     r"CUDA unusable|CUDA_ERROR_NO_DEVICE")


def config_dict(config):
    name, model, opt, lr, momentum, wd, accum, bn_stats = config
    return {"name": name, "model": model, "optimizer": opt, "lr": lr,
            "momentum": momentum, "weight_decay": wd, "batch": PARITY_BATCH,
            "accum": accum, "steps": PARITY_STEPS, "bn_stats": bn_stats}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def rel_error(a, b):
    """max |a - b| / max |b| (test/e2e/parity/parity.py's measure)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


# --- Reading ONNX initializers, with or without the onnx package ----------

def _varint(buf, pos):
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of a protobuf message; value is an
    int for varints, bytes for length-delimited fields."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire} is not supported")
        yield field, wire, value


def _tensor(buf):
    """Name and array of a float32 onnx.TensorProto."""
    name, dims, dtype, raw, floats = "", [], 1, None, []
    for field, wire, value in _fields(buf):
        if field == 1:  # dims: packed or one by one
            if wire == 2:
                pos = 0
                while pos < len(value):
                    d, pos = _varint(value, pos)
                    dims.append(d)
            else:
                dims.append(value)
        elif field == 2:
            dtype = value
        elif field == 4:  # float_data
            if wire == 2:
                floats.extend(struct.unpack(f"<{len(value) // 4}f", value))
            else:
                floats.append(struct.unpack("<f", value)[0])
        elif field == 8:
            name = value.decode()
        elif field == 9:
            raw = value
    if dtype != 1:
        return name, None  # not float32: no weight of the parity models
    data = (np.frombuffer(raw, dtype="<f4") if raw is not None
            else np.array(floats, dtype=np.float32))
    return name, data.reshape(dims).astype(np.float32)


def read_initializers(path, reader="auto"):
    """{name: array} of an ONNX model's float32 initializers."""
    if reader in ("auto", "onnx"):
        try:
            import onnx
            import onnx.numpy_helper
        except ImportError:
            if reader == "onnx":
                raise
        else:
            return {i.name: onnx.numpy_helper.to_array(i)
                    for i in onnx.load(path).graph.initializer}
    with open(path, "rb") as f:
        model = f.read()
    out = {}
    for field, _, graph in _fields(model):
        if field != 7:  # ModelProto.graph
            continue
        for gfield, _, init in _fields(graph):
            if gfield == 5:  # GraphProto.initializer
                name, value = _tensor(init)
                if value is not None:
                    out[name] = value
    return out


def tf32_off(torch):
    """Plain float32 in PyTorch's matrix products and convolutions. Where
    the fp32_precision API exists (2.9+) only it is used: mixing it with the
    legacy allow_tf32 flags raises errors in later PyTorch."""
    try:  # 1.13 raises on unknown attributes here, not AttributeError
        new_api = isinstance(torch.backends.cuda.matmul.fp32_precision, str)
    except Exception:  # noqa: BLE001
        new_api = False
    if new_api:
        torch.backends.fp32_precision = "ieee"
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
        torch.backends.cudnn.rnn.fp32_precision = "ieee"
        return "fp32_precision ieee"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return "allow_tf32 False"


# --- Logging and results ----------------------------------------------------

class Report:
    """The log file, results.json and the failures so far."""

    def __init__(self, out):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.log = open(os.path.join(out, "gpu-check.log"), "w")
        self.results = {"parity": [], "parity_amp": [], "fashion": None,
                        "timing": None, "timing_amp": {}, "scaling": None,
                        "environment": {}, "failures": []}

    def say(self, text):
        try:
            print(text, flush=True)
        except OSError:  # a closed stdout: the log still has it
            pass
        self.log.write(text + "\n")
        self.log.flush()

    def write(self, text):
        self.log.write(text if text.endswith("\n") else text + "\n")
        self.log.flush()

    def fail(self, what, why):
        self.results["failures"].append(f"{what}: {why}")
        self.say(f"FAIL {what}: {why}")

    def save(self):
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(self.results, f, indent=1, default=str)


class Deadline:
    """The script's time budget: each stage gets what is left."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def timeout(self, most, reserve=5.0):
        return max(0.0, min(most, self.left() - reserve))


def run_logged(report, cmd, timeout, env=None):
    """Runs cmd, appending its output to the log. Returns (rc, stdout,
    stderr); rc None when it timed out or could not start."""
    report.write("$ " + " ".join(cmd))
    if timeout <= 1:
        report.write("  (skipped: time budget spent)")
        return None, "", "skipped: the time budget is spent"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout
        report.write(out or "")
        report.write(f"  (timed out after {timeout:.0f} s)")
        return None, out or "", f"timed out after {timeout:.0f} s"
    except OSError as e:
        report.write(f"  (could not start: {e})")
        return None, "", f"could not start: {e}"
    report.write(p.stdout)
    report.write(p.stderr)
    report.write(f"  (exit status {p.returncode})")
    return p.returncode, p.stdout, p.stderr


def first_line(text, pattern=None):
    for line in text.splitlines():
        if line.strip() and (pattern is None or re.search(pattern, line)):
            return line.strip()
    return ""


def trainer_path(report, pack, rel):
    """A runnable copy of the pack's trainer `rel` (gzipped in the pack to
    fit the device tool's carry: unpacked once into the scratch folder)."""
    if not rel.endswith(".gz"):
        return os.path.join(pack, rel)
    dest = os.path.join(report.scratch, "bin", rel[:-len(".gz")])
    if not os.path.exists(dest):
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with gzip.open(os.path.join(pack, rel)) as src, \
                open(dest + ".part", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(dest + ".part", 0o755)
        os.rename(dest + ".part", dest)
    return dest


# --- Parity -----------------------------------------------------------------

def train_parity(report, cfg, pdir, device, steps, deadline, tag, reader):
    """Trains the packed trainer; returns (losses, state, step events) or
    raises RuntimeError with the reason."""
    work = os.path.join(report.scratch, f"{cfg['name']}-{tag}")
    os.makedirs(work, exist_ok=True)
    log, exported = os.path.join(work, "run.jsonl"), os.path.join(
        work, "trained.onnx")
    cmd = [trainer_path(report, report.pack, cfg["trainer"]), "train",
           "--train-x", os.path.join(pdir, "x.npy"),
           "--train-y", os.path.join(pdir, "y.npy"), "--no-shuffle",
           "--max-steps", str(steps), "--lr", str(cfg["lr"]),
           "--log", log, "--export", exported, "--device", device,
           # The parameters by name, BatchNorm included (not folded).
           "--no-fold-bn"]
    rc, out, err = run_logged(report, cmd, deadline.timeout(90))
    if rc != 0:
        why = first_line(err, NO_CUDA) or first_line(err) or f"exit {rc}"
        raise RuntimeError(f"trainer --device {device}: {why}")
    report.write(f"  {first_line(out, r'^device:')}")
    events = [json.loads(line) for line in open(log)]
    events = [e for e in events if e["event"] == "step"]
    losses = [e["loss"] for e in events]
    if len(losses) != steps:
        raise RuntimeError(f"trainer --device {device} logged {len(losses)} "
                           f"steps, not {steps}")
    return losses, read_initializers(exported, reader), events


def compare_states(ours, ref):
    """Largest relative errors of trainable weights and BN running stats."""
    weights, stats, missing = 0.0, 0.0, []
    for name, value in ref.items():
        if name.endswith("num_batches_tracked"):
            continue
        if name not in ours:
            missing.append(name)
            continue
        err = rel_error(ours[name], value)
        if "running_" in name:
            stats = max(stats, err)
        else:
            weights = max(weights, err)
    return weights, stats, missing


def parity_inputs(cfg, pdir, steps):
    """parity.py's module class, the packed initial weights, data and
    parity.torch_reference's arguments of a configuration."""
    sys.path.insert(0, PARITY_DIR)
    import parity
    args = argparse.Namespace(
        optimizer=cfg["optimizer"], lr=cfg["lr"], momentum=cfg["momentum"],
        weight_decay=cfg["weight_decay"], batch=cfg["batch"],
        accum=cfg["accum"], steps=steps, bn_stats=cfg["bn_stats"])
    return (parity.MODELS[cfg["model"]][0],
            np.load(os.path.join(pdir, "init.npz")),
            np.load(os.path.join(pdir, "x.npy")),
            np.load(os.path.join(pdir, "y.npy")), args)


def initial_module(torch, cls, init):
    """A module of `cls` holding the packed initial weights."""
    torch.manual_seed(0)
    module = cls()
    state = module.state_dict()
    for name in state:
        if not name.endswith("num_batches_tracked"):
            state[name] = torch.tensor(init[name])
    module.load_state_dict(state)
    return module


def numpy_state(module):
    return {k: v.detach().double().cpu().numpy()
            for k, v in module.state_dict().items()}


def torch_parity(cfg, pdir, device, steps):
    """PyTorch's losses and final state dicts in float32 and float64."""
    import torch
    cls, init, x, y, args = parity_inputs(cfg, pdir, steps)
    import parity  # on the path now
    out = {}
    for dtype in (torch.float32, torch.float64):
        losses, trained = parity.torch_reference(
            initial_module(torch, cls, init), x, y, args, dtype, device)
        out[dtype] = (losses, numpy_state(trained))
    return out[torch.float32], out[torch.float64]


def check_parity(report, pack, cfg, args, deadline):
    name = cfg["name"]
    pdir = os.path.join(pack, cfg["dir"])
    steps = min(args.steps, cfg["steps"])
    row = {"name": name, "steps": steps, "ok": False}
    report.results["parity"].append(row)
    report.say(f"== parity {name}: {steps} steps --device {args.device}")
    if cfg.get("error"):
        row["error"] = cfg["error"]
        report.fail(f"parity {name}", cfg["error"])
        return
    try:
        ours, ours_state, _ = train_parity(report, cfg, pdir, args.device,
                                           steps, deadline, args.device,
                                           args.onnx_reader)
    except Exception as e:  # noqa: BLE001 - recorded, the check goes on
        row["error"] = str(e)
        report.fail(f"parity {name}", str(e))
        return
    try:
        if deadline.left() < 10:
            raise RuntimeError("skipped: the time budget is spent")
        (ref32, state32), (ref64, state64) = torch_parity(
            cfg, pdir, args.torch_device, steps)
    except Exception as e:  # noqa: BLE001
        row["error"] = f"PyTorch reference: {e}"
        report.fail(f"parity {name}", row["error"])
        return
    w32, s32, missing = compare_states(ours_state, state32)
    w64, s64, _ = compare_states(ours_state, state64)
    tw, ts, _ = compare_states(state32, state64)
    row.update({
        "vs_fp32": {"loss": rel_error(ours, ref32), "weights": w32, "bn": s32},
        "vs_fp64": {"loss": rel_error(ours, ref64), "weights": w64, "bn": s64},
        "torch_fp32_vs_fp64": {"loss": rel_error(ref32, ref64),
                               "weights": tw, "bn": ts},
        "losses": {"traincc": ours, "torch_fp32": ref32, "torch_fp64": ref64},
    })
    # Within the tolerance of PyTorch float32, or as close to float64 as a
    # few times PyTorch's own float32 error (test/e2e/parity's rule: deep
    # nets amplify rounding).
    tol = args.tolerance
    bad = [f"{q} {row['vs_fp32'][q]:.1e}" for q in ("loss", "weights", "bn")
           if not (row["vs_fp32"][q] <= tol or row["vs_fp64"][q] <= max(
               tol, 4 * row["torch_fp32_vs_fp64"][q]))]
    if missing:
        bad.append("missing in export: " + ", ".join(missing))
    limit = max(tol, 4 * max(row["torch_fp32_vs_fp64"].values()))
    row["limit"] = limit
    if args.device == "cuda":
        try:
            cpu, cpu_state, _ = train_parity(report, cfg, pdir, "cpu", steps,
                                             deadline, "cpu", args.onnx_reader)
            cw, cs, _ = compare_states(ours_state, cpu_state)
            row["cuda_vs_cpu"] = max(rel_error(ours, cpu), cw, cs)
            if not row["cuda_vs_cpu"] <= limit:
                bad.append(f"cuda vs cpu {row['cuda_vs_cpu']:.2e}")
        except Exception as e:  # noqa: BLE001
            row["cuda_vs_cpu_error"] = str(e)
            bad.append(f"--device cpu run: {e}")
    for q in ("loss", "weights", "bn"):
        report.say(f"  {q:8} vs torch fp32 {row['vs_fp32'][q]:.2e}  vs fp64 "
                   f"{row['vs_fp64'][q]:.2e}  (torch fp32 vs fp64 "
                   f"{row['torch_fp32_vs_fp64'][q]:.2e})")
    report.say(f"  losses traincc: {[round(v, 6) for v in ours]}")
    report.say(f"  losses torch32: {[round(v, 6) for v in ref32]}")
    row["ok"] = not bad
    if bad:
        row["error"] = "; ".join(bad)
        report.fail(f"parity {name}", row["error"])


# --- Fashion-MNIST ---------------------------------------------------------

def check_fashion(report, pack, manifest, args, deadline):
    fm = manifest["fashion"]
    res = {"ok": False}
    report.results["fashion"] = res
    report.say(f"== fashion-mnist: 1 epoch --device {args.device}"
               + (f" (--max-steps {args.fashion_max_steps})"
                  if args.fashion_max_steps else ""))
    if not fm.get("dataset"):
        res["error"] = "the pack has no Fashion-MNIST files"
        report.fail("fashion-mnist", res["error"])
        return
    log = os.path.join(report.out, "fashion-train.jsonl")
    try:
        trainer = trainer_path(report, pack, fm["trainer"])
    except (OSError, EOFError) as e:
        res["error"] = f"cannot unpack {fm['trainer']}: {e}"
        report.fail("fashion-mnist", res["error"])
        return
    cmd = [trainer, "train", "--dataset",
           "fashion-mnist:" + os.path.join(pack, fm["dataset"]),
           "--epochs", "1", "--lr", str(fm["lr"]), "--log", log,
           "--device", args.device]
    if args.fashion_max_steps:
        cmd += ["--max-steps", str(args.fashion_max_steps)]
    t0 = time.monotonic()
    rc, out, err = run_logged(report, cmd, deadline.timeout(args.fashion_timeout))
    res["wall_s"] = time.monotonic() - t0
    if rc != 0:
        res["error"] = first_line(err, NO_CUDA) or first_line(err) or f"exit {rc}"
        report.fail("fashion-mnist", res["error"])
        return
    res["device"] = first_line(out, r"^device:")
    epochs = [json.loads(line) for line in open(log)
              if '"event":"epoch"' in line]
    if not epochs or "val_acc" not in epochs[-1]:
        res["error"] = "no validated epoch in the log"
        report.fail("fashion-mnist", res["error"])
        return
    last = epochs[-1]
    res.update({k: last.get(k) for k in ("train_loss", "val_loss", "val_acc",
                                         "seconds")})
    report.say(f"  {res['device']}")
    report.say(f"  val_acc {last['val_acc']:.4f}, val_loss "
               f"{last['val_loss']:.4f}, epoch {last['seconds']:.1f} s")
    res["ok"] = bool(args.fashion_max_steps) or (
        last["val_acc"] >= FASHION_MIN_ACCURACY)
    if not res["ok"]:
        res["error"] = (f"val_acc {last['val_acc']:.4f} < "
                        f"{FASHION_MIN_ACCURACY} after one epoch")
        report.fail("fashion-mnist", res["error"])


# --- Step time -------------------------------------------------------------

# "3 steps (1 skipped: inf/NaN gradients), 2.79s" under loss scaling.
EPOCH_LINE = re.compile(r"epoch 1(?:/\d+)?: .*?(\d+) steps(?: \([^)]*\))?, "
                        r"([0-9.]+)s")


def trainer_epoch_seconds(report, trainer, data, steps, device, deadline):
    """The epoch time the trainer prints (2 decimals; without --log, which
    copies the state to the host every step)."""
    cmd = [trainer, "train", "--train-x", data[0], "--train-y", data[1],
           "--no-shuffle", "--max-steps", str(steps), "--lr",
           str(FASHION_LR), "--device", device]
    rc, out, err = run_logged(report, cmd, deadline.timeout(120))
    if rc != 0:
        raise RuntimeError(first_line(err, NO_CUDA) or first_line(err)
                           or f"exit {rc}")
    m = EPOCH_LINE.search(out)
    if not m or int(m.group(1)) != steps:
        raise RuntimeError(f"no 'epoch 1: ... {steps} steps, S s' line")
    return float(m.group(2))


def time_trainer(report, pack, entry, args, deadline):
    """Per-step time of the pack's trainer entry["trainer"]: the slope
    between runs of `short` and `short + L` steps (start-up, graph capture
    and warm-up cancel); the median of --timing-repeats such pairs."""
    if entry is None or entry.get("error"):
        raise RuntimeError(entry["error"] if entry else
                           "the pack has no such trainer (an older pack?)")
    trainer = trainer_path(report, pack, entry["trainer"])
    short = args.timing_short
    # Fixed L, or L chosen from a first run so that the long run lasts
    # about --timing-target seconds (the printed time has 2 decimals).
    first = None
    if args.timing_steps:
        extra = args.timing_steps
    else:
        probe = make_timing_data(report, short + 1)
        first = trainer_epoch_seconds(report, trainer, probe, short,
                                      args.device, deadline)
        per_step = max(first / short, 1e-5)
        # At most 2000 steps: their random data is 400 MB of .npy.
        extra = int(min(max(args.timing_target / per_step, 50), 2000))
    data = make_timing_data(report, short + extra + 1)
    slopes = []
    for _ in range(args.timing_repeats):
        t_short = trainer_epoch_seconds(report, trainer, data, short,
                                        args.device, deadline)
        t_long = trainer_epoch_seconds(report, trainer, data, short + extra,
                                       args.device, deadline)
        slopes.append((t_long - t_short) / extra)
    report.write(f"  trainer step slopes (s): {slopes}")
    return {"ms": statistics.median(slopes) * 1e3,
            "slopes_ms": [s * 1e3 for s in slopes], "short": short,
            "extra": extra, "first_run_s": first}


def make_timing_data(report, batches):
    """Random images and labels for `batches` batches of 64 (not zeros:
    zeros can run faster than real data)."""
    path = os.path.join(report.scratch, f"timing-{batches}")
    data = (path + "-x.npy", path + "-y.npy")
    if not os.path.exists(data[1]):
        rng = np.random.default_rng(0)
        n = FASHION_BATCH * batches
        np.save(data[0], rng.random((n, 1, 28, 28), dtype=np.float32))
        np.save(data[1], rng.integers(0, 10, n).astype(np.int64))
    return data


def torch_timing_main(argv):
    """Child process: times PyTorch training steps of the example CNN and
    prints one JSON line."""
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--mode", choices=["eager", "compile"], default="eager")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--precision", choices=["fp32", "bf16", "fp16"],
                   default="fp32")
    a = p.parse_args(argv)
    import torch
    import gpu_check_amp
    tf32 = tf32_off(torch)
    sys.path.insert(0, EXAMPLE_DIR)
    from model import FashionCNN
    dev = torch.device(a.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("PyTorch sees no CUDA device")
    torch.manual_seed(0)
    model = FashionCNN().to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=FASHION_LR,
                          momentum=FASHION_MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()
    # fp32, or PyTorch AMP (where PyTorch lacks it: the emulation).
    autocast, scaler, reference = gpu_check_amp.torch_amp(torch, dev.type,
                                                          a.precision)
    net = model
    if a.mode == "compile":
        if not hasattr(torch, "compile"):
            raise SystemExit(f"torch {torch.__version__} has no torch.compile")
        net = torch.compile(model)
    # Several resident batches, used in turn.
    xs = torch.rand(8, FASHION_BATCH, 1, 28, 28, device=dev)
    ys = torch.randint(0, 10, (8, FASHION_BATCH), device=dev)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def step(i):
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = loss_fn(net(xs[i % 8]), ys[i % 8])
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()

    t0 = time.perf_counter()
    step(0)
    sync()
    first = time.perf_counter() - t0
    for i in range(1, a.warmup):
        step(i)
    sync()
    times = []
    for i in range(a.steps):
        sync()
        t0 = time.perf_counter()
        step(i)
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({
        "mode": a.mode, "torch": torch.__version__, "device": str(dev),
        "tf32": tf32, "precision": a.precision, "reference": reference,
        "ms": statistics.median(times) * 1e3,
        "p10_ms": times[len(times) // 10] * 1e3,
        "p90_ms": times[(len(times) * 9) // 10] * 1e3,
        "first_step_s": first, "steps": a.steps, "warmup": a.warmup}))
    return 0


def time_torch(report, args, mode, deadline, precision="fp32"):
    cmd = [sys.executable, os.path.abspath(__file__), "torch-timing",
           "--device", args.torch_device, "--mode", mode,
           "--warmup", str(args.torch_warmup), "--steps", str(args.torch_steps),
           "--precision", precision]
    most = args.compile_timeout if mode == "compile" else 120
    rc, out, err = run_logged(report, cmd, deadline.timeout(most))
    if rc != 0:
        last = [l for l in err.splitlines() if l.strip()]
        raise RuntimeError(last[-1].strip() if last else f"exit {rc}")
    return json.loads(out.strip().splitlines()[-1])


def check_timing(report, pack, manifest, args, deadline, precision="fp32"):
    """Step time of the example CNN at `precision`: fp32 (results' timing),
    or bf16/fp16 (timing_amp), the trainer of `traincc --precision` against
    PyTorch AMP."""
    res = {}
    if precision == "fp32":
        report.results["timing"] = res
        entry, tag = manifest["fashion"], ""
    else:
        report.results["timing_amp"][precision] = res
        entry, tag = manifest.get("fashion_amp", {}).get(precision), \
            " " + precision
    report.say(f"== step time{tag}: fashion CNN, batch {FASHION_BATCH}, "
               f"--device {args.device}")
    stages = [("traincc", lambda: time_trainer(report, pack, entry, args,
                                               deadline)),
              ("eager", lambda: time_torch(report, args, "eager", deadline,
                                           precision))]
    if not args.no_compile:
        stages.append(("compile", lambda: time_torch(
            report, args, "compile", deadline, precision)))
    # The same CNN compiled other ways (-O1 for quick iterations; the
    # BatchNorm sums apart): what each costs here.
    for key, _, _, short, _, _ in FASHION_VARIANTS:
        if precision == "fp32" and key in manifest:
            stages.append((f"traincc {short}",
                           lambda e=manifest[key]: time_trainer(
                               report, pack, e, args, deadline)))
    for name, fn in stages:
        try:
            res[name] = fn()
            ref = res[name].get("reference")
            report.say(f"  {name}: {res[name]['ms']:.3f} ms/step"
                       + (f" (PyTorch {ref})" if ref else ""))
        except Exception as e:  # noqa: BLE001
            res[name] = {"error": str(e)}
            report.fail(f"step time {name}{tag}", str(e))


# --- Main ---------------------------------------------------------------------

def verify_pack(report, pack, manifest):
    bad = []
    for rel, info in manifest["files"].items():
        path = os.path.join(pack, rel)
        if not os.path.isfile(path):
            bad.append(f"{rel} missing")
        elif os.path.getsize(path) != info["bytes"]:
            bad.append(f"{rel} has {os.path.getsize(path)} bytes, not "
                       f"{info['bytes']}")
        elif sha256(path) != info["sha256"]:
            bad.append(f"{rel} has another sha256")
    for b in bad:
        report.fail("pack", b)
    return not bad


def environment(report, args):
    env = report.results["environment"]
    env["python"] = sys.version.split()[0]
    try:
        import torch
        env["torch"] = torch.__version__
        env["torch_cuda"] = torch.cuda.is_available()
        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
        env["tf32"] = tf32_off(torch)
    except Exception as e:  # noqa: BLE001
        env["torch_error"] = str(e)
        report.fail("environment", f"import torch: {e}")
    if shutil.which("nvidia-smi"):
        try:
            env["nvidia_smi"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                 "clocks.sm,clocks.mem", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:  # noqa: BLE001
            env["nvidia_smi"] = f"failed: {e}"
    report.say(f"environment: {json.dumps(env)}")


# What the dynamic loader says when a trainer cannot start at all: a pack
# built on a newer distribution (glibc/libstdc++ symbol versions), a
# missing library, another architecture.
LOADER_ERROR = re.compile(
    r"version `[A-Z]+_[0-9.]+' not found|error while loading shared "
    r"libraries|cannot execute binary file|Exec format error|"
    r"required file not found")


def loader_problem(report, pack, manifest):
    """None when the packed trainers start here (`trainer info --device
    cpu`), else why not, reported with what to do; nothing can run then."""
    try:
        cmd = [trainer_path(report, pack, manifest["fashion"]["trainer"]),
               "info", "--device", "cpu"]
    except (OSError, EOFError, KeyError):
        return None  # cuda_unusable() and the stages report it
    rc, out, err = run_logged(report, cmd, 60)
    if rc == 0:
        return None
    line = first_line(err, LOADER_ERROR) or first_line(out, LOADER_ERROR)
    if not line:
        return None
    have = platform.libc_ver()[1] or "unknown"
    need = re.search(r"GLIBC_([0-9.]+)' not found", line)
    advice = ("rebuild the pack (scripts/gpu-prepare.sh) on a distribution "
              "no newer than this machine's, e.g. in a container of its OS "
              "image")
    if need:
        advice += f", or run the check where glibc is {need.group(1)} or newer"
    report.fail("pack", f"the packed trainers do not start on this machine: "
                f"{line} (the pack was built with glibc "
                f"{manifest.get('glibc', '?')}, this machine has glibc {have}); "
                f"{advice}")
    return "skipped: the packed trainers do not start here (see above)"


def cuda_unusable(report, pack, manifest):
    """None when the packed trainers see a usable CUDA device (`trainer
    info`'s device line), else why not; the CUDA stages are then skipped."""
    try:
        cmd = [trainer_path(report, pack, manifest["fashion"]["trainer"]),
               "info"]
    except (OSError, EOFError) as e:
        report.fail("cuda", f"cannot unpack the example's trainer: {e}")
        return "skipped: the example's trainer does not unpack"
    rc, out, err = run_logged(report, cmd, 60)
    device = first_line(out, r"^device:")
    report.results["environment"]["trainer_device"] = device or err.strip()
    report.say(f"trainer info: {device or err.strip()}")
    if rc == 0 and device.startswith("device: cuda"):
        return None
    why = device or first_line(err) or f"trainer info: exit {rc}"
    report.fail("cuda", f"the trainers find no usable CUDA device: {why}")
    return "skipped: no usable CUDA device"


def fmt(v, spec=".1e"):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def table(report, args, manifest):
    r = report.results
    env = r["environment"]
    lines = [f"gpu-check --device {args.device}: PyTorch "
             f"{env.get('torch', '?')} on {env.get('gpu', 'no GPU')}; pack "
             f"{manifest.get('gpu_arch', '?')}"]
    if args.device == "cuda" and "trainer_device" in env:
        lines.append(f"trainer {env['trainer_device']}")
    if r["parity"]:
        lines.append("parity: max rel. error of the trainer vs PyTorch fp32 "
                     f"(TF32 off) on {args.torch_device}; limit "
                     f"{args.tolerance:g}, or vs fp64 within max(limit, 4x "
                     "PyTorch fp32's)")
        lines.append(f"  {'config':18} {'steps':>5} {'loss':>8} "
                     f"{'weights':>8} {'BN':>8} {'vs fp64':>8} "
                     f"{'cuda=cpu':>8}  result")
    for row in r["parity"]:
        v32 = row.get("vs_fp32", {})
        v64 = max(row["vs_fp64"].values()) if "vs_fp64" in row else None
        result = "ok" if row["ok"] else "FAIL " + row.get("error", "")[:60]
        lines.append(f"  {row['name']:18} {row['steps']:5} "
                     f"{fmt(v32.get('loss')):>8} {fmt(v32.get('weights')):>8} "
                     f"{fmt(v32.get('bn')):>8} {fmt(v64):>8} "
                     f"{fmt(row.get('cuda_vs_cpu')):>8}  {result}")
    import gpu_check_amp
    lines += gpu_check_amp.table_lines(r["parity_amp"], args)
    fm = r["fashion"]
    if fm is not None:
        what = (f"{args.fashion_max_steps} steps" if args.fashion_max_steps
                else "1 epoch")
        if "val_acc" in fm:
            lines.append(f"fashion-mnist {what}: test accuracy "
                         f"{fm['val_acc']:.4f}, epoch {fm['seconds']:.1f} s  "
                         f"{'ok' if fm['ok'] else 'FAIL'}")
        else:
            lines.append(f"fashion-mnist {what}: FAIL "
                         f"{fm.get('error', '')[:80]}")
    timing = ([("fp32", r["timing"])] if r["timing"] is not None else []) + \
        list(r["timing_amp"].items())
    if timing:
        lines.append(f"step time, fashion CNN batch {FASHION_BATCH} (ms, "
                     "median; bf16/fp16: PyTorch AMP; ratios traincc/PyTorch)")
    fp32_ms = (r["timing"] or {}).get("traincc", {}).get("ms")
    for precision, t in timing:
        ms = {k: t.get(k, {}).get("ms") for k in ("traincc", "eager", "compile")}
        cells = "  ".join(f"{k} {fmt(v, '.3f')}" for k, v in ms.items())
        ratios = [f"traincc/{k} {ms['traincc'] / ms[k]:.2f}x" for k in
                  ("eager", "compile") if ms["traincc"] and ms.get(k)]
        if precision != "fp32" and fp32_ms and ms["traincc"]:
            ratios.append(f"traincc fp32/{precision} "
                          f"{fp32_ms / ms['traincc']:.2f}x")
        refs = {t[k].get("reference") for k in ("eager", "compile")
                if k in t and t[k].get("reference")}
        parts = [precision, cells] + ratios
        if refs:
            parts.append(f"[{'/'.join(sorted(refs))}]")
        if any("error" in v for v in t.values()):
            parts.append("FAIL")
        lines.append("  " + "  ".join(parts))
        for _, _, _, short, row, ratio_label in FASHION_VARIANTS:
            variant_ms = t.get(f"traincc {short}", {}).get("ms")
            if variant_ms:
                ratio = (f"  {ratio_label} {variant_ms / ms['traincc']:.2f}x"
                         if ms["traincc"] else "")
                lines.append(f"  {row}  traincc "
                             f"{fmt(variant_ms, '.3f')}{ratio}")
    import gpu_check_scaling
    lines += gpu_check_scaling.table_lines(r.get("scaling"), args)
    import gpu_check_sync_bn
    lines += gpu_check_sync_bn.table_lines(r.get("sync_bn"), args)
    n = len(r["failures"])
    lines.append(f"gpu-check: {'PASS' if n == 0 else f'FAIL ({n} failures)'}"
                 f"; logs in {report.out}")
    return lines


def check_main(argv):
    p = argparse.ArgumentParser(prog="gpu-check.sh",
                                description=__doc__.splitlines()[0])
    p.add_argument("pack", help="the folder scripts/gpu-prepare.sh wrote")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="where the trainers and PyTorch run (cpu: a dry run "
                        "of this script's logic on a machine without GPU)")
    p.add_argument("--out", default=os.environ.get("OUT") or "gpu-check-out",
                   help="folder of the logs (default $OUT, else ./gpu-check-out)")
    p.add_argument("--configs", help="comma-separated parity configurations, "
                   "fp32 and mixed precision (default: all in the pack)")
    p.add_argument("--precisions", default="fp32,bf16,fp16",
                   help="the precisions whose parity and step-time stages "
                        "run (default fp32,bf16,fp16)")
    p.add_argument("--steps", type=int, default=PARITY_STEPS)
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--amp-tolerance", type=float, default=1e-3,
                   help="the least limit of the bf16/fp16 parity rows (as "
                        "test/e2e/parity/mixed_precision.py's --tolerance)")
    p.add_argument("--onnx-reader", choices=["auto", "onnx", "builtin"],
                   default="auto")
    p.add_argument("--no-fashion", action="store_true")
    p.add_argument("--fashion-max-steps", type=int, default=0,
                   help="stop the epoch after this many steps (dry runs)")
    p.add_argument("--fashion-timeout", type=float, default=150)
    p.add_argument("--no-timing", action="store_true")
    p.add_argument("--timing-short", type=int, default=20)
    p.add_argument("--timing-steps", type=int, default=0,
                   help="extra steps of the long timing run (default: "
                        "about --timing-target seconds' worth)")
    p.add_argument("--timing-target", type=float, default=2.5)
    p.add_argument("--timing-repeats", type=int, default=3)
    p.add_argument("--torch-warmup", type=int, default=20)
    p.add_argument("--torch-steps", type=int, default=200)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--no-scaling", action="store_true",
                   help="leave out the 1-GPU-vs-all-GPUs scaling row")
    p.add_argument("--no-sync-bn", action="store_true",
                   help="leave out the SyncBatchNorm row (2 replicas with "
                        "--sync-bn against one process)")
    p.add_argument("--scaling-replicas", type=int, default=0,
                   help="replicas of the scaling row (default: one per GPU; "
                        "with --device cpu, CPU processes, a dry run)")
    p.add_argument("--compile-timeout", type=float, default=150)
    p.add_argument("--budget", type=float, default=420,
                   help="seconds for the whole check (default 420)")
    p.add_argument("--torch-device", choices=["cuda", "cpu"],
                   help="where PyTorch runs (default: --device; cpu with "
                        "--device cuda tests the check on an emulated GPU)")
    args = p.parse_args(argv)
    args.torch_device = args.torch_device or args.device
    args.precisions = [q for q in ("fp32", "bf16", "fp16")
                       if q in args.precisions.split(",")]
    import gpu_check_amp

    deadline = Deadline(args.budget)
    report = Report(os.path.abspath(args.out))
    report.scratch = tempfile.mkdtemp(prefix="gpu-check-")
    pack = os.path.abspath(args.pack)
    report.pack = pack
    lines = []
    try:
        with open(os.path.join(pack, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        report.fail("pack", f"cannot read manifest.json: {e}")
        manifest = None
    try:
        if manifest is not None:
            report.results["pack"] = {k: manifest.get(k) for k in (
                "gpu_arch", "cpu", "total_bytes", "traincc")}
            verify_pack(report, pack, manifest)
            environment(report, args)
            wanted = args.configs.split(",") if args.configs else None
            amp = manifest.get("parity_amp", [])
            for unknown in set(wanted or []) - {
                    c["name"] for c in manifest["parity"] + amp}:
                report.fail("parity", f"no configuration {unknown} in the pack")
            configs = [c for c in manifest["parity"] + amp
                       if (wanted is None or c["name"] in wanted)
                       and c.get("precision", "fp32") in args.precisions]
            skip = loader_problem(report, pack, manifest)
            if args.device == "cuda" and not skip:
                skip = cuda_unusable(report, pack, manifest)
            for cfg in configs:
                check = check_parity
                if cfg.get("precision"):
                    check = gpu_check_amp.check_parity_amp
                if skip:
                    report.results["parity_amp" if cfg.get("precision")
                                   else "parity"].append(
                        {"name": cfg["name"], "steps": 0, "ok": False,
                         "precision": cfg.get("precision", "fp32"),
                         "error": cfg.get("error") or skip})
                    continue
                check(report, pack, cfg, args, deadline)
                report.save()
            if not args.no_fashion and not skip:
                check_fashion(report, pack, manifest, args, deadline)
                report.save()
            for precision in [] if args.no_timing or skip else args.precisions:
                check_timing(report, pack, manifest, args, deadline, precision)
                report.save()
            if not (args.no_timing or args.no_scaling or skip):
                import gpu_check_scaling
                gpu_check_scaling.check_scaling(report, pack, manifest, args,
                                                deadline)
                report.save()
            if not (args.no_sync_bn or skip):
                import gpu_check_sync_bn
                if manifest.get("sync_bn", {}).get("error"):
                    report.fail("sync-bn", manifest["sync_bn"]["error"])
                else:
                    gpu_check_sync_bn.check_sync_bn(report, pack, manifest,
                                                    args, deadline)
                report.save()
        lines = table(report, args, manifest or {})
    except Exception as e:  # noqa: BLE001 - a bug here must not hide results
        import traceback
        report.write(traceback.format_exc())
        report.fail("gpu-check", f"internal error: {e!r}")
        lines = table(report, args, manifest or {})
    finally:
        report.save()
        shutil.rmtree(report.scratch, ignore_errors=True)
    with open(os.path.join(report.out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    report.say("")
    for line in lines:
        report.say(line)
    return 1 if report.results["failures"] else 0


def main():
    # scripts/gpu_check_amp.py imports this module by name.
    sys.modules.setdefault("gpu_check", sys.modules[__name__])
    if len(sys.argv) > 1 and sys.argv[1] == "torch-timing":
        return torch_timing_main(sys.argv[2:])
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        return check_main(sys.argv[2:])
    print("usage: gpu_check.py check PACK [options] | torch-timing [options]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
