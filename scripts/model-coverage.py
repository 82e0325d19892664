#!/usr/bin/python3
"""Which torchvision classification models traincc compiles and trains.

For each model: export it with test/e2e/torchvision/export_torchvision.py
(random weights, 10 classes, training mode, opset 15), compile it with
`traincc M.onnx --batch-size B --target cpu`, train two optimizer steps on
random data (`--max-steps 2`, one thread per core) and record

  compile s    wall time of the compile
  step s       the trainer's epoch seconds over its two steps, per step
  peak MiB     the largest resident set of the training process (ru_maxrss)
  losses       the two step losses, which must be finite

and print a Markdown table, one row per model; a model that fails gets a row
saying at which stage and why (for the compiler: every unsupported op it
names, or its first error). Not part of CI: compiles take 30-400 s each.

    scripts/model-coverage.py --models resnet18,squeezenet1_1 [--out FILE]

Without --models every classification model torchvision lists is tried.
Run with /usr/bin/python3 (Debian's torch, torchvision and numpy).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPORTER = os.path.join(ROOT, "test", "e2e", "torchvision",
                        "export_torchvision.py")
# Models whose stem needs larger images than the default 224.
IMAGE_SIZE = {"inception_v3": 299}


def all_models():
    import torchvision
    names = torchvision.models.list_models(module=torchvision.models)
    return sorted(names)


def run(cmd, timeout):
    """Runs `cmd`; returns (exit status, output, seconds, peak RSS in MiB).
    The peak is this child's own (wait4), not the maximum over children."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                status = -1
                break
            time.sleep(0.05)
        seconds = time.monotonic() - start
        out.seek(0)
        text = out.read().decode(errors="replace")
    code = -1 if status == -1 else os.waitstatus_to_exitcode(status)
    return code, text, seconds, usage.ru_maxrss / 1024.0


def why(text):
    """The reason a traincc or trainer run failed, in one line."""
    unsupported = re.search(r"unsupported ONNX ops: (.*)", text)
    if unsupported:
        return "unsupported ops: " + unsupported.group(1).strip()
    # A Python exception (the exporter's): its last line says why.
    raised = re.findall(r"^[\w.]+(?:Error|Exception): (.*)$", text, re.M)
    if raised:
        return raised[-1].strip()
    for line in text.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"


def cell(text, limit=160):
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def try_model(name, args, work):
    row = {"model": name}
    onnx_path = os.path.join(work, name + ".onnx")
    size = IMAGE_SIZE.get(name, 224)
    code, text, _, _ = run([sys.executable, EXPORTER, name, "--mode", "train",
                            "--image-size", str(size), "-o", onnx_path],
                           args.timeout)
    if code != 0:
        row["error"] = "export: " + why(text)
        return row
    trainer = os.path.join(work, name + ".trainer")
    code, text, seconds, _ = run(
        [args.traincc, onnx_path, "-o", trainer, "--batch-size",
         str(args.batch_size), "--target", "cpu"], args.timeout)
    row["compile"] = seconds
    if code != 0:
        row["error"] = ("compile timed out" if code == -1
                        else "compile: " + why(text))
        return row
    rng = np.random.default_rng(0)
    n = 2 * args.batch_size
    x = rng.standard_normal((n, 3, size, size)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    log = os.path.join(work, name + ".jsonl")
    code, text, _, peak = run(
        [trainer, "train", "--train-x", os.path.join(work, "x.npy"),
         "--train-y", os.path.join(work, "y.npy"), "--max-steps", "2",
         "--no-shuffle", "--log", log], args.timeout)
    if code != 0:
        row["error"] = "train: " + why(text)
        return row
    events = [json.loads(line) for line in open(log)]
    losses = [e["loss"] for e in events if e["event"] == "step"]
    epochs = [e for e in events if e["event"] == "epoch"]
    row["peak"] = peak
    row["losses"] = losses
    if epochs and losses:
        row["step"] = sum(e["seconds"] for e in epochs) / len(losses)
    if len(losses) != 2 or not all(math.isfinite(v) for v in losses):
        row["error"] = f"train: step losses {losses} (expected 2 finite)"
    os.remove(trainer)
    return row


def table(rows, args):
    lines = [f"| model | compile s | step s | peak MiB | losses | result |",
             "|---|---:|---:|---:|---|---|"]
    for r in rows:
        fmt = lambda key, spec: (format(r[key], spec) if key in r else "-")
        losses = ", ".join(f"{v:.3f}" for v in r.get("losses", []))
        result = "trains" if "error" not in r else cell(r["error"])
        lines.append(f"| {r['model']} | {fmt('compile', '.0f')} | "
                     f"{fmt('step', '.2f')} | {fmt('peak', '.0f')} | "
                     f"{losses or '-'} | {result} |")
    ok = sum("error" not in r for r in rows)
    lines.append("")
    lines.append(f"{ok} of {len(rows)} models train (batch "
                 f"{args.batch_size}, CPU target, {os.cpu_count()} threads).")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated torchvision model "
                        "names (default: every classification model)")
    parser.add_argument("--traincc",
                        default=os.path.join(ROOT, "build", "bin", "traincc"))
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds allowed to each export, compile and "
                        "training run")
    parser.add_argument("--workdir", help="keep the files here")
    parser.add_argument("--out", help="also write the table to this file")
    args = parser.parse_args()

    models = args.models.split(",") if args.models else all_models()
    work = args.workdir or tempfile.mkdtemp(prefix="model-coverage-")
    os.makedirs(work, exist_ok=True)
    rows = []
    for name in models:
        row = try_model(name, args, work)
        rows.append(row)
        print(f"{name}: {row.get('error', 'trains')}", file=sys.stderr,
              flush=True)
    text = table(rows, args)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
