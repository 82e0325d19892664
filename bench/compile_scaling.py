#!/usr/bin/env python3
"""Compile time and compiler memory against model size (issue 18).

Compiles two families of torchvision models of growing size, exported in
training mode by Debian's PyTorch (batch 2, 224x224, 10 classes, as
test/e2e/torchvision/export_torchvision.py does), with
`traincc M.onnx --batch-size 2 --target cpu` (and, with --cuda, also
`--target cpu,cuda`), and prints per model the ONNX node count, compile
wall seconds, CPU seconds (user + system, all threads) and peak resident
MB. Then, per family and over all models, the exponent b of a least-squares
fit seconds ~ a * nodes^b: b <= 1.1 is what issue 18 asks (compile time at
most linear in the model).

Families: ResNet-18/34/50/101, and MobileNetV2 at width multipliers 0.5,
0.75, 1.0 and 1.4 (the same depth at growing widths: kernel count stays,
shapes change), plus regnet_y_400mf alone.

With --torch-compile and a current PyTorch in $TRAINCC_BENCH_VENV (default
~/.cache/traincc/bench-venv, made by bench/setup-peers.sh), the same models'
training step (SGD, cross-entropy) is also timed under torch.compile
(Inductor, a fresh cache): the first step's seconds less an eager step's,
on the same threads.

Exports are cached in --work (default ~/.cache/traincc/compile-scaling).

Usage: /usr/bin/python3 bench/compile_scaling.py [--models a,b,...]
           [--cuda] [--torch-compile] [--traincc PATH] [--jobs N]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBIAN_PYTHON = "/usr/bin/python3"

# name -> (family, torchvision constructor, keyword arguments)
MODELS = {
    "resnet18": ("resnet", "resnet18", {}),
    "resnet34": ("resnet", "resnet34", {}),
    "resnet50": ("resnet", "resnet50", {}),
    "resnet101": ("resnet", "resnet101", {}),
    "mobilenet_v2_0.5": ("mobilenet_v2", "mobilenet_v2", {"width_mult": 0.5}),
    "mobilenet_v2_0.75": ("mobilenet_v2", "mobilenet_v2",
                          {"width_mult": 0.75}),
    "mobilenet_v2_1.0": ("mobilenet_v2", "mobilenet_v2", {"width_mult": 1.0}),
    "mobilenet_v2_1.4": ("mobilenet_v2", "mobilenet_v2", {"width_mult": 1.4}),
    "regnet_y_400mf": ("regnet", "regnet_y_400mf", {}),
}

EXPORT = r"""
import sys, warnings, torch, torchvision
constructor, kwargs, out = sys.argv[1], eval(sys.argv[2]), sys.argv[3]
warnings.filterwarnings("ignore")
torch.manual_seed(0)
model = getattr(torchvision.models, constructor)(num_classes=10, **kwargs)
model.train()
torch.onnx.export(model, torch.randn(2, 3, 224, 224), out,
                  training=torch.onnx.TrainingMode.TRAINING,
                  do_constant_folding=False, opset_version=15,
                  input_names=["input"], output_names=["logits"],
                  dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
"""

TORCH_COMPILE = r"""
import os, sys, time, torch, torchvision
constructor, kwargs, threads = sys.argv[1], eval(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(0)
model = getattr(torchvision.models, constructor)(num_classes=10, **kwargs)
model.train()
x, y = torch.randn(2, 3, 224, 224), torch.randint(0, 10, (2,))
def step(m, opt):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(m(x), y).backward()
    opt.step()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step(model, opt)
start = time.perf_counter(); step(model, opt); eager = time.perf_counter() - start
compiled = torch.compile(model)
start = time.perf_counter(); step(compiled, opt); first = time.perf_counter() - start
print("%.3f %.3f" % (first - eager, eager))
"""


def onnx_nodes(path):
    out = subprocess.run(
        [DEBIAN_PYTHON, "-c",
         "import onnx, sys; print(len(onnx.load(sys.argv[1], "
         "load_external_data=False).graph.node))", path],
        check=True, capture_output=True, text=True)
    return int(out.stdout)


def export(name, work):
    path = os.path.join(work, name + ".onnx")
    if not os.path.exists(path):
        _, constructor, kwargs = MODELS[name]
        subprocess.run([DEBIAN_PYTHON, "-c", EXPORT, constructor, repr(kwargs),
                        path + ".tmp"], check=True)
        os.replace(path + ".tmp", path)
    return path


def compile_once(traincc, model, target, jobs):
    """(wall s, CPU s of all threads, peak resident MB) of one compile."""
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "time")
        cmd = ["/usr/bin/time", "-o", stats, "-f", "%e %U %S %M", traincc,
               model, "--batch-size", "2", "--target", target,
               "-o", os.path.join(tmp, "trainer")]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError("traincc failed on %s:\n%s" %
                               (model, result.stderr[-2000:]))
        wall, user, system, kb = open(stats).read().split()[-4:]
    return float(wall), float(user) + float(system), int(kb) / 1024


def fit_exponent(points):
    """b of log(s) = log(a) + b log(n), least squares; None for < 2 points."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(s) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--traincc",
                        default=os.path.join(ROOT, "build", "bin", "traincc"))
    parser.add_argument("--work", default=os.path.expanduser(
        "~/.cache/traincc/compile-scaling"))
    parser.add_argument("--cuda", action="store_true",
                        help="also compile for cpu,cuda (needs ptxas)")
    parser.add_argument("--jobs", type=int, default=0,
                        help="traincc --jobs (default: every core)")
    parser.add_argument("--torch-compile", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error("unknown models: %s (known: %s)" %
                     (", ".join(unknown), ", ".join(MODELS)))
    os.makedirs(args.work, exist_ok=True)
    venv_python = os.path.join(os.environ.get(
        "TRAINCC_BENCH_VENV", os.path.expanduser("~/.cache/traincc/bench-venv")),
        "bin", "python")

    rows = []
    for name in names:
        path = export(name, args.work)
        nodes = onnx_nodes(path)
        wall, cpu, mb = compile_once(args.traincc, path, "cpu", args.jobs)
        row = {"model": name, "family": MODELS[name][0], "nodes": nodes,
               "wall": wall, "cpu": cpu, "mb": mb}
        if args.cuda:
            row["both"] = compile_once(args.traincc, path, "cpu,cuda",
                                       args.jobs)[0]
        if args.torch_compile and os.path.exists(venv_python):
            _, constructor, kwargs = MODELS[name]
            out = subprocess.run(
                [venv_python, "-c", TORCH_COMPILE, constructor, repr(kwargs),
                 str(args.threads)],
                capture_output=True, text=True,
                env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp()))
            row["torch_compile"] = (float(out.stdout.split()[0])
                                    if out.returncode == 0 else None)
        rows.append(row)
        print("%-18s %5d nodes  %6.1f s  %6.1f cpu s  %6.0f MB%s%s" % (
            name, nodes, wall, cpu, row["mb"],
            "  cpu,cuda %.1f s" % row["both"] if "both" in row else "",
            ("  torch.compile %.1f s" % row["torch_compile"]
             if row.get("torch_compile") else "")), flush=True)

    print()
    header = "| model | ONNX nodes | compile s | CPU s | peak MB |"
    rule = "|---|---|---|---|---|"
    if args.cuda:
        header += " cpu,cuda s | ratio |"
        rule += "---|---|"
    if args.torch_compile:
        header += " torch.compile s |"
        rule += "---|"
    print(header)
    print(rule)
    for row in rows:
        line = "| %s | %d | %.1f | %.1f | %.0f |" % (
            row["model"], row["nodes"], row["wall"], row["cpu"], row["mb"])
        if args.cuda:
            line += " %.1f | %.2f |" % (row["both"], row["both"] / row["wall"])
        if args.torch_compile:
            tc = row.get("torch_compile")
            line += " %s |" % ("%.1f" % tc if tc else "n/a")
        print(line)
    print()
    families = sorted({row["family"] for row in rows})
    for family in families + ["all"]:
        points = [(r["nodes"], r["wall"]) for r in rows
                  if family == "all" or r["family"] == family]
        b = fit_exponent(points)
        if b is not None:
            print("exponent (seconds ~ nodes^b), %s: b = %.2f over %d models"
                  % (family, b, len(points)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
