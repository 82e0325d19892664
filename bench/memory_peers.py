#!/usr/bin/env python3
"""Training memory on the CPU: the trainer's static plan against PyTorch.

For each model (--model cnn|resnet18|all, as in bench/cpu_peers.py: the
example CNN at batch 64, a CIFAR-10 ResNet-18 at batch 128; the same
weights, SGD with momentum 0.9, mean cross-entropy):

  traincc     the memory plan `traincc --report` prints (state, workspace,
              one micro-batch of data: everything the trainer allocates for
              the model; test/e2e/memory checks it against the trainer's
              resident size, within 5%), and the peak resident size of the
              trainer training on random data (VmHWM, polled; it includes
              the runtime's code and data pipeline);
  pytorch     PyTorch eager (Debian's 1.13, and the current PyPI one where
              bench/setup-peers.sh installed it): the growth of the resident
              size over three training steps (VmHWM after, VmRSS before,
              the peak reset through /proc/self/clear_refs) plus the bytes
              of the parameters and buffers, which were resident before.
              Process overhead (the interpreter, libtorch) is not counted.
              With the current PyTorch also torch.compile: one compiling
              step first (the compiler's own memory is not counted), then
              the same measure, its momentum buffers added.
  --recompute the plan with cheap forward values recomputed in the
              backward pass (what --memory-budget may choose).

Then the largest batch each fits in --budget (default 1GiB): memory is
affine in the batch, so a line through two batch sizes (the model's and
twice it) gives it, for both. traincc's own `--memory-budget` then picks the
micro-batch for an effective batch of --effective-batch (the largest
divisor that fits) and its accumulation steps.

Usage: /usr/bin/python3 bench/memory_peers.py [--model cnn|resnet18|all]
           [--budget 1GiB] [--effective-batch 4096] [--threads 2]
           [--traincc PATH]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
from cpu_peers import DEBIAN_PYTHON, MODELS, VENV, build_model  # noqa: E402
from cpu_train_step import ROOT, make_data  # noqa: E402

UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def parse_size(text):
    match = re.fullmatch(r"([0-9.]+)\s*(KiB|MiB|GiB)?", text)
    if not match:
        sys.exit(f"--budget: a size such as 1GiB or 512MiB, not {text!r}")
    return int(float(match.group(1)) * UNITS.get(match.group(2), 1))


def mib(n):
    return f"{n / 2**20:8.1f} MiB"


# --- PyTorch (a child process per run) --------------------------------------

def status(field):
    with open("/proc/self/status") as f:
        return int(re.search(field + r":\s+(\d+) kB", f.read()).group(1)) * 1024


def child_torch(name, batch, threads, compiled=False):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = build_model(name)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    shape = MODELS[name]["shape"]
    x = torch.rand((batch,) + tuple(shape))
    y = torch.randint(0, 10, (batch,))
    weights = sum(t.numel() * t.element_size()
                  for t in list(model.parameters()) + list(model.buffers()))
    if compiled:
        # One step compiles (its memory, the compiler's, is not counted);
        # the momentum buffers it creates are, like eager's, added below.
        step = torch.compile(model)
        opt.zero_grad(set_to_none=True)
        loss_fn(step(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        model = step
        weights += sum(p.numel() * p.element_size()
                       for p in opt.param_groups[0]["params"])
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current resident size
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    growth = status("VmHWM") - before
    print("RESULT " + json.dumps({"bytes": growth + weights,
                                  "version": torch.__version__.split("+")[0]}))


def run_torch(python, name, batch, threads, compiled=False):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([python, os.path.abspath(__file__), "--child", name,
                           str(batch), str(threads)] +
                          (["compiled"] if compiled else []), env=env,
                          capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return "failed: " + (lines[-1] if lines else f"exit {proc.returncode}")


# --- traincc -----------------------------------------------------------------

def plan_peak(traincc, onnx, batch, work, flags=()):
    """The CPU plan's peak from --report (the step functions lowered to LLVM
    IR: the plan is made on the way, no machine code needed)."""
    out = subprocess.run([traincc, onnx, "--batch-size", str(batch),
                          "--momentum", "0.9", "--target", "cpu", "--report",
                          "--emit=llvm", "-o",
                          os.path.join(work, "kernels.ll")] + list(flags),
                         check=True, capture_output=True, text=True).stdout
    return int(re.search(r"memory plan \(cpu\).*?peak .*?\((\d+) bytes\)",
                         out, re.S).group(1))


def trainer_rss(traincc, onnx, batch, work, threads):
    """VmHWM of the trainer training two steps on random data."""
    trainer = os.path.join(work, "trainer")
    subprocess.run([traincc, onnx, "--batch-size", str(batch), "--momentum",
                    "0.9", "--target", "cpu", "-o", trainer], check=True)
    _, data = make_data("bench-memory-", 4, batch, MODELS_SHAPE[0])
    proc = subprocess.Popen([trainer, "train", "--train-x", data[0],
                             "--train-y", data[1], "--max-steps", "2",
                             "--threads", str(threads)],
                            stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                peak = max(peak, int(re.search(r"VmHWM:\s+(\d+) kB",
                                               f.read()).group(1)) * 1024)
        except (OSError, AttributeError):
            pass
        time.sleep(0.005)
    shutil.rmtree(os.path.dirname(data[0]), ignore_errors=True)
    return peak


MODELS_SHAPE = [None]


def largest_batch(budget, at):
    """The largest batch under `budget` on the line through {batch: bytes}."""
    (b1, m1), (b2, m2) = sorted(at.items())
    slope = (m2 - m1) / (b2 - b1)
    return int((budget - (m1 - slope * b1)) // slope)


def bench(name, args, pythons):
    cfg = MODELS[name]
    MODELS_SHAPE[0] = cfg["shape"]
    batch = cfg["batch"]
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    onnx = os.path.join(work, name + ".onnx")
    subprocess.run([DEBIAN_PYTHON, os.path.join(ROOT, "bench", "cpu_peers.py"),
                    "--child", "export", name, onnx,
                    os.path.join(work, name + ".npz")], check=True,
                   capture_output=True)
    plans = {b: plan_peak(args.traincc, onnx, b, work)
             for b in (batch, 2 * batch)}
    recomputed = {b: plan_peak(args.traincc, onnx, b, work, ["--recompute"])
                  for b in (batch, 2 * batch)}
    rss = trainer_rss(args.traincc, onnx, batch, work, args.threads)
    rows = [("traincc plan", plans[batch], largest_batch(args.budget, plans)),
            ("traincc plan --recompute", recomputed[batch],
             largest_batch(args.budget, recomputed)),
            ("traincc trainer VmHWM", rss, None)]
    runs = [(label, python, False) for label, python in pythons]
    if len(pythons) > 1:  # torch.compile: the current PyTorch only
        runs.append((pythons[-1][0] + " compile", pythons[-1][1], True))
    for label, python, compiled in runs:
        at = {b: run_torch(python, name, b, args.threads, compiled)
              for b in (batch, 2 * batch)}
        if any(isinstance(r, str) for r in at.values()):
            rows.append((label, next(r for r in at.values()
                                     if isinstance(r, str)), None))
            continue
        version = at[batch]["version"]
        sizes = {b: r["bytes"] for b, r in at.items()}
        rows.append((f"pytorch {version} " +
                     ("torch.compile" if compiled else "eager"), sizes[batch],
                     largest_batch(args.budget, sizes)))
    budget = subprocess.run(
        [args.traincc, onnx, "--batch-size", str(args.effective_batch),
         "--momentum", "0.9", "--memory-budget", f"{args.budget}",
         "--target", "cpu",
         "--emit=llvm", "-o", os.path.join(work, "budget.ll")],
        capture_output=True, text=True)
    choice = (budget.stderr.strip().splitlines() or ["(no output)"])[-1]

    print(f"\n{name}, batch {batch}, {args.threads} threads")
    print(f"  {'':26} {'memory':>12}  largest batch in {mib(args.budget).strip()}")
    plan = rows[0][1]
    for label, value, largest in rows:
        if isinstance(value, str):
            print(f"  {label:26} {value}")
            continue
        ratio = f"  (x{value / plan:.2f} the plan)" if label != rows[0][0] \
            else ""
        print(f"  {label:26} {mib(value)}  "
              f"{largest if largest is not None else '':>8}{ratio}")
    print(f"  --memory-budget {mib(args.budget).strip()} with batch "
          f"{args.effective_batch}: {choice}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_torch(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                    compiled=sys.argv[5:] == ["compiled"])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["cnn", "resnet18", "all"],
                        default="all")
    parser.add_argument("--budget", default="1GiB")
    parser.add_argument("--effective-batch", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--traincc", default=os.path.join(ROOT, "build", "bin",
                                                          "traincc"))
    parser.add_argument("--work", default=os.path.join(
        os.path.expanduser("~"), ".cache", "traincc", "bench-memory"))
    args = parser.parse_args()
    args.budget = parse_size(args.budget)
    pythons = [("pytorch (Debian)", DEBIAN_PYTHON)]
    venv_python = os.path.join(VENV, "bin", "python")
    if os.path.exists(venv_python):
        pythons.append(("pytorch (PyPI)", venv_python))
    for name in (["cnn", "resnet18"] if args.model == "all"
                 else [args.model]):
        bench(name, args, pythons)
    return 0


if __name__ == "__main__":
    sys.exit(main())
