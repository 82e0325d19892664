#!/usr/bin/python3
"""Which torchvision classification models traincc compiles and trains.

For each model: export it with test/e2e/torchvision/export_torchvision.py
(random weights, 10 classes, training mode, opset 15), compile it with
`traincc M.onnx --batch-size B --target T`, train two optimizer steps on
random data on the CPU (`--max-steps 2`, one thread per core) and record

  compile s    wall time of the compile
  compile MiB  the compiler's peak resident memory
  CUDA         with --target cpu,cuda: "ok" when the CUDA trainer builds
               (ptxas accepts the PTX), else why not (the CPU-only
               compile is then retried, so that training is still tried)
  step s       the trainer's epoch seconds over its two steps, per step
  peak MiB     the largest resident set of the training process (ru_maxrss)
  losses       the two step losses, which must be finite
  load         the 1-minute load average at the end of the compile and of
               training, the larger (the times are loose on a busy machine)

and print a Markdown table, one row per model; a model that fails gets a row
saying at which stage and why (for the compiler: every unsupported op it
names, or its first error). CI runs it on squeezenet1_1
(test/e2e/torchvision/model-coverage.test); the whole list takes hours on
2 cores and runs on demand, resumable with --results:

    scripts/model-coverage.py --models resnet18,squeezenet1_1 [--out FILE]
        [--target cpu,cuda] [--results FILE.jsonl] [--not-run MODEL=WHY]
        [--train-memory-limit GIB [--reuse-trainers]] [--table-only]
        [--readme]

Without --models every classification model torchvision lists is tried.
--table-only runs nothing: the table of the --results rows, a model without
one listed as not run (with its parameter count, or --not-run's reason).
--readme writes the table into README.md's generated block "coverage".
--train-memory-limit trains only the trainers whose static memory plan fits
(a shared machine); --reuse-trainers trains those kept by such a run later.
`--target cuda` alone only adds the CUDA column to --results' rows.
Run with /usr/bin/python3 (Debian's torch, torchvision and numpy).
"""

import argparse
import importlib.util
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


def note_load(row):
    """Keeps the largest 1-minute load average seen during the row's runs."""
    row["load"] = max(row.get("load", 0.0), os.getloadavg()[0])


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


def try_model(name, args, work, earlier):
    row = {"model": name}
    onnx_path = os.path.join(work, name + ".onnx")
    size = IMAGE_SIZE.get(name, 224)
    code = 0
    if not (args.reuse_exports and os.path.exists(onnx_path)):
        code, text, _, _ = run([args.export_python, EXPORTER, name, "--mode",
                                "train", "--image-size", str(size), "-o",
                                onnx_path], args.timeout)
    if code != 0:
        row["error"] = "export: " + why(text)
        return row
    trainer = os.path.join(work, name + ".trainer")
    compile_cmd = [args.traincc, onnx_path, "-o", trainer, "--batch-size",
                   str(args.batch_size)]
    if args.target == "cuda":
        # The CUDA check alone (no GPU here): the trainer builds, its PTX
        # through ptxas.
        code, text, seconds, _ = run(compile_cmd + ["--target", "cuda"],
                                     args.timeout)
        row["cuda"] = ("ok" if code == 0 else
                       "timed out" if code == -1 else why(text))
        row["cuda_compile"] = seconds
        if os.path.exists(trainer):
            os.remove(trainer)
        return row
    kept = (args.reuse_trainers and os.path.exists(trainer)
            and earlier.get("error", "").startswith("not trained:"))
    if kept:
        # Compiled by an earlier run that stopped at --train-memory-limit.
        row.update((key, earlier[key]) for key in
                   ("load", "compile", "compile_peak", "cuda")
                   if key in earlier)
    else:
        code, text, seconds, peak = run(
            compile_cmd + ["--target", args.target], args.timeout)
        note_load(row)
        row["compile"] = seconds
        row["compile_peak"] = peak
        if code != 0 and args.target != "cpu":
            # Tell a failure of the CUDA path (or its ptxas) from one of the
            # model: the CPU-only compile decides whether training is tried.
            row["cuda"] = ("timed out" if code == -1 else why(text))
            code, text, seconds, peak = run(
                compile_cmd + ["--target", "cpu"], args.timeout)
            row["compile"] = seconds
            row["compile_peak"] = peak
        elif args.target != "cpu":
            row["cuda"] = "ok"
        if code != 0:
            row["error"] = ("compile timed out" if code == -1
                            else "compile: " + why(text))
            # The model's failure, not the CUDA path's.
            row.pop("cuda", None)
            return row
    if args.train_memory_limit:
        # What the trainer will allocate, from its static memory plan: on a
        # shared machine, a model past the limit is compiled but not trained.
        _, text, _, _ = run([trainer, "info"], args.timeout)
        planned = re.search(r"memory plan \(cpu\):.* peak (\d+) bytes", text)
        if planned:
            row["plan"] = int(planned.group(1)) / 2**20
            if row["plan"] > args.train_memory_limit * 1024:
                row["error"] = (f"not trained: its memory plan needs "
                                f"{row['plan'] / 1024:.1f} GiB, past "
                                f"--train-memory-limit "
                                f"{args.train_memory_limit:g} GiB")
                return row  # the trainer stays, for a larger machine
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
         "--no-shuffle", "--device", "cpu", "--log", log], args.timeout)
    note_load(row)
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


def parameter_count(name):
    """The model's trainable parameters as exported (10 classes)."""
    spec = importlib.util.spec_from_file_location("export_torchvision",
                                                  EXPORTER)
    exporter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exporter)
    model = exporter.build(name)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def table(rows, args):
    cuda = any("cuda" in r for r in rows)
    head = "| model | compile s | compile MiB |" + (" CUDA |" if cuda else "")
    lines = [head + " step s | peak MiB | losses | load | result |",
             "|---|---:|---:|" + ("---|" if cuda else "") +
             "---:|---:|---|---:|---|"]
    for r in rows:
        fmt = lambda key, spec: (format(r[key], spec) if key in r else "-")
        losses = ", ".join(f"{v:.3f}" for v in r.get("losses", []))
        if "not_run" in r:
            result = "not run: " + cell(r["not_run"])
        else:
            result = ("trains" if "losses" in r and "error" not in r
                      else cell(r.get("error", "not run on the CPU")))
        cuda_cell = ""
        if cuda:
            cuda_cell = " " + cell(r.get("cuda", "-"), 100) + " |"
        lines.append(f"| {r['model']} | {fmt('compile', '.0f')} | "
                     f"{fmt('compile_peak', '.0f')} |{cuda_cell} "
                     f"{fmt('step', '.2f')} | {fmt('peak', '.0f')} | "
                     f"{losses or '-'} | {fmt('load', '.1f')} | {result} |")
    ok = sum("losses" in r and "error" not in r for r in rows)
    ptx = sum(r.get("cuda") == "ok" for r in rows)
    lines.append("")
    summary = (f"{ok} of {len(rows)} models train (batch {args.batch_size}, "
               f"CPU target, {os.cpu_count()} threads)")
    if cuda:
        summary += f"; {ptx} compile for CUDA too (ptxas accepts the PTX)"
    lines.append(summary + ".")
    return "\n".join(lines)


def write_readme_block(text):
    path = os.path.join(ROOT, "README.md")
    with open(path) as f:
        readme = f.read()
    block = re.compile(r"(<!-- BEGIN GENERATED: coverage -->\n).*?"
                       r"(<!-- END GENERATED: coverage -->)", re.S)
    if not block.search(readme):
        sys.exit("model-coverage: README.md has no generated block coverage")
    readme = block.sub(lambda m: m.group(1) + text + "\n" + m.group(2),
                       readme)
    with open(path, "w") as f:
        f.write(readme)


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
    parser.add_argument("--target", default="cpu",
                        help="traincc --target for the compile: cpu, or "
                        "cpu,cuda to check the CUDA path too (a failure of "
                        "the CUDA compile gets a CPU-only retry, and the "
                        "table a CUDA column); training runs on the CPU")
    parser.add_argument("--export-python", default=sys.executable,
                        help="the Python (with torch, torchvision and onnx) "
                        "that exports the models; e.g. a current PyTorch's "
                        "for swin_v2_*, which PyTorch 1.13 cannot export")
    parser.add_argument("--train-memory-limit", type=float, metavar="GIB",
                        help="train only a trainer whose static memory plan "
                        "(trainer info) needs at most GIB GiB")
    parser.add_argument("--workdir", help="keep the files here")
    parser.add_argument("--reuse-exports", action="store_true",
                        help="compile the --workdir's MODEL.onnx of an "
                        "earlier run instead of exporting again")
    parser.add_argument("--reuse-trainers", action="store_true",
                        help="train the --workdir's MODEL.trainer of an "
                        "earlier run that stopped at --train-memory-limit "
                        "instead of compiling again")
    parser.add_argument("--out", help="also write the table to this file")
    parser.add_argument("--results", action="append", default=[],
                        help="append each model's row to this JSON-lines "
                        "file as it finishes; models already in it are not "
                        "tried again (resume a long run). Repeatable: rows "
                        "are read from every file (a later row of a model "
                        "replaces an earlier one) and appended to the first")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: the table of the --results rows")
    parser.add_argument("--readme", action="store_true",
                        help="also write the table into README.md's block "
                        "between <!-- BEGIN GENERATED: coverage --> and "
                        "<!-- END GENERATED: coverage -->")
    parser.add_argument("--not-run", action="append", default=[],
                        metavar="MODEL=REASON", help="list MODEL in the table "
                        "as not run, for REASON (repeatable)")
    args = parser.parse_args()

    models = args.models.split(",") if args.models else all_models()
    work = args.workdir or tempfile.mkdtemp(prefix="model-coverage-")
    os.makedirs(work, exist_ok=True)
    # Rows of earlier runs, merged per model (a --target cuda run adds the
    # CUDA column to a --target cpu run's rows).
    done = {}
    for results in args.results:
        if not os.path.exists(results):
            continue
        for line in open(results):
            row = json.loads(line)
            earlier = done.get(row["model"], {})
            if "cuda_compile" in row:  # a --target cuda row: its column
                done[row["model"]] = dict(earlier, cuda=row["cuda"],
                                          cuda_compile=row["cuda_compile"])
            else:  # a newer CPU row replaces the earlier one
                done[row["model"]] = row
    produces = "cuda" if args.target != "cpu" else "compile"
    skipped = dict(item.split("=", 1) for item in args.not_run)
    rows = []
    for name in models:
        if name in skipped:
            rows.append({"model": name, "not_run": skipped[name]})
            continue
        earlier = done.get(name, {})
        if args.table_only:
            if not earlier:
                millions = parameter_count(name) / 1e6
                earlier = {"model": name, "not_run": "not reached "
                           f"({millions:.0f}M parameters)"}
            rows.append(earlier)
            continue
        retrain = (args.reuse_trainers and
                   earlier.get("error", "").startswith("not trained:"))
        if ((produces in earlier and not retrain)
                or earlier.get("error", "").startswith("export:")):
            rows.append(earlier)
            continue
        row = try_model(name, args, work, earlier)
        rows.append(row if retrain else dict(earlier, **row))
        if args.results:
            with open(args.results[0], "a") as f:
                f.write(json.dumps(row) + "\n")
        print(f"{name}: {row.get('error', row.get('cuda', 'trains'))}",
              file=sys.stderr,
              flush=True)
    text = table(rows, args)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    if args.readme:
        write_readme_block(text)
    # 1 unless every model trains (and builds for CUDA); --table-only
    # only reports.
    return 0 if args.table_only or all(
        "error" not in r and "not_run" not in r
        and r.get("cuda", "ok") == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
