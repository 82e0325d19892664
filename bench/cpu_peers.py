#!/usr/bin/env python3
"""Training-step time and peak memory on the CPU: traincc vs its peers.

For each model (--model, default all) one run times, on the same threads,
data, initial weights, batch and optimizer (SGD, lr 0.01, momentum 0.9,
mean cross-entropy):

  traincc             the compiled trainer (compile time reported apart);
  pytorch 1.13        Debian's PyTorch, eager (/usr/bin/python3);
  pytorch X eager     a current PyTorch from PyPI, eager;
  pytorch X compile   the same, the model under torch.compile (Inductor),
                      compiled and warmed before timing, compile time apart;
  onnxruntime         ONNX Runtime on-device training (its artifacts from the
                      same ONNX), where the package installs.

Models: "cnn", the example CNN (examples/fashion_mnist/model.py, batch 64);
"resnet18", a CIFAR-10 ResNet-18 (3x32x32, 3x3 stem without max pooling,
batch 128); "mlp", 784-1024-1024-10 (batch 128). Each is built once with
torch.manual_seed(0) in Debian's PyTorch and exported, in training mode, to
the ONNX that traincc compiles and ONNX Runtime trains; its state_dict goes
to an .npz that both PyTorch versions load, so that every peer starts from
the same weights.

bench/setup-peers.sh installs the current PyTorch and onnxruntime-training
into virtual environments outside the clone ($TRAINCC_BENCH_VENV, default
~/.cache/traincc/bench-venv, and that path with -ort); this script runs it
first (reused: it installs only what is missing; --no-setup skips it). A
peer that is not installed is skipped with the reason printed.

Each peer runs in its own process, so that its peak resident memory is its
own (for torch.compile, the compiler's peak is included). PyTorch and ONNX
Runtime steps are timed one by one after warm-up, and the median is kept.
The trainer runs its whole loop in one process, so its step is the slope
between a short and a longer run (start-up and data loading cancel; a mean
over few steps, not a median), best of --repeats, as in
bench/cpu_train_step.py.
ONNX Runtime's generated SGD has no momentum: its step does slightly less.
"compile s" is traincc's compile, torch.compile's warm-up steps (its
compile, with a fresh Inductor cache, and first runs) and ONNX Runtime's
artifact generation and session set-up. The ratios traincc/peer follow.

Last, how close each peer comes to the machine: the step's FLOPs as
`traincc --report` counts them for the direct algorithms (a second compile
with --winograd-min-channels=0: micro_step and apply_step; a strided
convolution's data gradient counts only its real products; the trainer's
Winograd convolutions do fewer, so its rate is an effective one and may
pass the peak) per second of each peer's step, against a fused multiply-add probe (a C program built
with the system compiler: 12 independent chains of 512-bit FMAs, or
256-bit without AVX-512; best of 3 runs, times the threads). Then
traincc's micro_step by kernel class (convolution forward, data and filter
gradients, matmul, pooling, reductions, elementwise, copies, and the time
of the step call outside every kernel), from a second
trainer built with `traincc --profile-kernels`: each class's GFLOP/s
against the FMA probe, and the memory-bound classes' GB/s against a
memory probe (a triad over three 64 MiB arrays on the same threads).

Usage: /usr/bin/python3 bench/cpu_peers.py [--model cnn|resnet18|mlp|all]
           [--threads 2] [--steps S] [--quick] [--repeats R] [--no-setup]
           [--traincc PATH] [--wait SECONDS]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
from cpu_train_step import ROOT, best_step_times, make_data  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
VENV = os.environ.get("TRAINCC_BENCH_VENV", os.path.join(
    os.path.expanduser("~"), ".cache", "traincc", "bench-venv"))
LR, MOMENTUM = 0.01, 0.9

# batch, input shape, warm-up and timed steps of the PyTorch and ONNX
# Runtime peers, and the trainer's slope: from a `short`-step run to one
# `trainer_steps` longer. A ResNet-18 step at batch 128 takes seconds: its
# counts keep the whole run within about 10 minutes on 2 cores.
MODELS = {
    "cnn": dict(batch=64, shape=(1, 28, 28), warmup=3, steps=40, short=2,
                trainer_steps=20),
    "resnet18": dict(batch=128, shape=(3, 32, 32), warmup=2, steps=8,
                     short=1, trainer_steps=6),
    "mlp": dict(batch=128, shape=(1, 28, 28), warmup=3, steps=40, short=2,
                trainer_steps=20),
}


# --- the models (only ever called in a child that has torch) ---------------

def build_model(name):
    import torch
    from torch import nn

    torch.manual_seed(0)
    if name == "cnn":
        sys.path.insert(0, os.path.join(ROOT, "examples", "fashion_mnist"))
        from model import FashionCNN
        return FashionCNN()
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(),
                             nn.Linear(1024, 1024), nn.ReLU(),
                             nn.Linear(1024, 10))

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False),
                    nn.BatchNorm2d(cout))

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))

    class CifarResNet18(nn.Module):
        """ResNet-18 for 32x32 inputs: a 3x3 stride-1 stem and no max
        pooling, so the four stages see 32, 16, 8 and 4 pixels."""

        def __init__(self, num_classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [BasicBlock(cin, cout, stride),
                           BasicBlock(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x):
            x = self.layers(torch.relu(self.bn1(self.conv1(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    return CifarResNet18()


def child_export(name, onnx_path, weights_path):
    """Debian's PyTorch: the model in training mode to ONNX (as
    examples/fashion_mnist/export.py) and its state_dict to .npz."""
    import warnings

    import numpy as np
    import torch

    warnings.filterwarnings("ignore", message=".*Removing mutation from node")
    model = build_model(name)
    np.savez(weights_path, **{k: v.numpy()
                              for k, v in model.state_dict().items()})
    model.train()
    torch.onnx.export(
        model, torch.randn((2,) + MODELS[name]["shape"]), onnx_path,
        training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
        opset_version=15, input_names=["input"], output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    print(json.dumps({"trainable": trainable}))


def batches(x, y, batch):
    """The i-th batch, in order, as the trainer reads with --no-shuffle."""
    count = x.shape[0] // batch
    return lambda i: (x[(i % count) * batch:(i % count + 1) * batch],
                      y[(i % count) * batch:(i % count + 1) * batch])


def timed_steps(step, warmup, steps):
    """(seconds of the warm-up, median seconds of the steps after it)."""
    start = time.perf_counter()
    for i in range(warmup):
        step(i)
    warm = time.perf_counter() - start
    times = []
    for i in range(steps):
        start = time.perf_counter()
        step(warmup + i)
        times.append(time.perf_counter() - start)
    return warm, statistics.median(times)


def child_torch(name, mode, data, weights, threads, warmup, steps, cache):
    # Inductor's compile cache in a fresh folder: a cold compile each run.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    model = build_model(name)
    model.load_state_dict({k: torch.from_numpy(v)
                           for k, v in np.load(weights).items()})
    model.train()
    forward = torch.compile(model) if mode == "compile" else model
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    loss_fn = torch.nn.CrossEntropyLoss()
    batch = batches(torch.from_numpy(np.load(data[0])),
                    torch.from_numpy(np.load(data[1])), MODELS[name]["batch"])

    def step(i):
        x, y = batch(i)
        opt.zero_grad(set_to_none=True)
        loss_fn(forward(x), y).backward()
        opt.step()

    warm, median = timed_steps(step, warmup, steps)
    return {"step": median, "compile": warm if mode == "compile" else None,
            "version": torch.__version__.split("+")[0]}


def child_ort(name, onnx_path, trainable, data, threads, warmup, steps):
    import numpy as np
    import onnx
    import onnxruntime
    from onnxruntime.training import artifacts
    from onnxruntime.training.api import CheckpointState, Module, Optimizer

    onnxruntime.set_default_logger_severity(3)
    model = onnx.load(onnx_path)
    frozen = [t.name for t in model.graph.initializer
              if t.name not in trainable]
    out = os.path.join(os.path.dirname(onnx_path), "ort-" + name)
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    artifacts.generate_artifacts(
        model, requires_grad=trainable, frozen_params=frozen,
        loss=artifacts.LossType.CrossEntropyLoss,
        optimizer=artifacts.OptimType.SGD, artifact_directory=out)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    state = CheckpointState.load_checkpoint(os.path.join(out, "checkpoint"))
    # No eval model: the generated one keeps BatchNormalization's training
    # outputs with training_mode=0, which ORT's own checker rejects.
    module = Module(os.path.join(out, "training_model.onnx"), state, None,
                    device="cpu", session_options=options)
    opt = Optimizer(os.path.join(out, "optimizer_model.onnx"), module)
    opt.set_learning_rate(LR)
    module.train()
    prepare = time.perf_counter() - start
    batch = batches(np.load(data[0]), np.load(data[1]), MODELS[name]["batch"])

    def step(i):
        x, y = batch(i)
        module(x, y)
        opt.step()
        module.lazy_reset_grad()

    _, median = timed_steps(step, warmup, steps)
    return {"step": median, "compile": prepare,
            "version": onnxruntime.__version__}


def child_main(argv):
    kind, name = argv[0], argv[1]
    if kind == "export":
        child_export(name, argv[2], argv[3])
        return 0
    spec = json.loads(argv[2])
    data = spec["data"]
    if kind == "torch":
        result = child_torch(name, spec["mode"], data, spec["weights"],
                             spec["threads"], spec["warmup"], spec["steps"],
                             os.path.join(spec["work"], "inductor"))
    else:
        result = child_ort(name, spec["onnx"], spec["trainable"], data,
                           spec["threads"], spec["warmup"], spec["steps"])
    result["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("RESULT " + json.dumps(result))
    return 0


# --- the parent ------------------------------------------------------------

def run_child(python, kind, name, spec, threads):
    """The child's result dict, or the reason it gave none."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([python, os.path.abspath(__file__), "--child", kind,
                           name, json.dumps(spec)], env=env,
                          capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return "failed: " + (lines[-1] if lines else f"exit {proc.returncode}")


def peer_pythons(setup):
    """{peer kind: interpreter or the reason there is none}."""
    if setup:
        subprocess.run(["sh", os.path.join(ROOT, "bench", "setup-peers.sh")],
                       stdout=sys.stderr)
    found = {}
    for kind, python, probe in (
            ("torch", os.path.join(VENV, "bin", "python"), "import torch"),
            ("ort", os.path.join(VENV + "-ort", "bin", "python"),
             "import onnxruntime.training.api")):
        ok = os.path.exists(python) and subprocess.run(
            [python, "-c", probe], capture_output=True).returncode == 0
        found[kind] = python if ok else (
            f"not installed in {os.path.dirname(os.path.dirname(python))} "
            "(see bench/setup-peers.sh and its output)")
    return found


def bench_model(name, args, pythons):
    """[(peer, result dict or skip reason)] for one model."""
    cfg = MODELS[name]
    steps = args.steps or (2 if args.quick else cfg["steps"])
    # The trainer's slope needs a few steps even in a smoke test: over one
    # step, start-up noise decides it (a 14.7 ms CNN step read 4.9 ms).
    trainer_steps = args.steps or (min(4, cfg["trainer_steps"]) if args.quick
                                   else cfg["trainer_steps"])
    short = cfg["short"]
    warmup = 1 if args.quick else cfg["warmup"]
    work, data = make_data(f"bench-peers-{name}-",
                           max(steps + warmup + 1, trainer_steps + short),
                           cfg["batch"], cfg["shape"])
    try:
        return run_peers(name, args, pythons, work, data,
                         dict(steps=steps, trainer_steps=trainer_steps,
                              short=short, warmup=warmup))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_peers(name, args, pythons, work, data, plan):
    """bench_model's rows, its data and exports in `work`."""
    cfg = MODELS[name]
    steps, warmup = plan["steps"], plan["warmup"]
    onnx_path = os.path.join(work, name + ".onnx")
    weights = os.path.join(work, name + ".npz")
    export = subprocess.run([DEBIAN_PYTHON, os.path.abspath(__file__),
                             "--child", "export", name, onnx_path, weights],
                            check=True, capture_output=True, text=True)
    trainable = json.loads(export.stdout.strip().splitlines()[-1])["trainable"]
    rows = []

    trainer = os.path.join(work, "trainer")
    while not os.access(args.traincc, os.X_OK) and args.wait > 0:
        time.sleep(10)  # a rebuild in progress
        args.wait -= 10
    start = time.perf_counter()
    compiled = subprocess.run(
        [args.traincc, onnx_path, "--batch-size", str(cfg["batch"]),
         "--momentum", str(MOMENTUM), "--target", "cpu", "-o", trainer,
         "--report"],
        capture_output=True, text=True) if os.access(args.traincc, os.X_OK) \
        else None
    compile_s = time.perf_counter() - start
    if compiled is None:
        rows.append(("traincc", f"skipped: no {args.traincc}"))
    elif compiled.returncode != 0:
        lines = compiled.stderr.strip().splitlines()
        rows.append(("traincc", "compile failed: " +
                     (lines[0] if lines else str(compiled.returncode))))
    else:
        step, rss = best_step_times({"traincc": trainer}, data,
                                    plan["trainer_steps"], args.threads,
                                    args.repeats, plan["short"])["traincc"]
        # The FLOPs of the direct algorithms, the same count for every peer
        # (the trainer's Winograd convolutions multiply less).
        direct = subprocess.run(
            [args.traincc, onnx_path, "--batch-size", str(cfg["batch"]),
             "--momentum", str(MOMENTUM), "--target", "cpu",
             "--winograd-min-channels=0", "--report",
             "-o", os.path.join(work, "trainer-direct")],
            capture_output=True, text=True)
        rows.append(("traincc", {"step": step, "rss": rss,
                                 "compile": compile_s,
                                 "flops": step_flops(direct.stdout)
                                 if direct.returncode == 0 else None,
                                 "classes": kernel_classes(
                                     args, onnx_path, cfg, work, data,
                                     plan["trainer_steps"])}))

    spec = dict(data=data, weights=weights, onnx=onnx_path, work=work,
                trainable=trainable, threads=args.threads, warmup=warmup,
                steps=steps)
    result = run_child(DEBIAN_PYTHON, "torch", name, dict(spec, mode="eager"),
                       args.threads)
    rows.append((f"pytorch {result['version']} eager"
                 if isinstance(result, dict) else "pytorch 1.13 eager",
                 result))
    for mode in ("eager", "compile"):
        python = pythons["torch"]
        if not os.path.isabs(python):
            rows.append((f"pytorch (PyPI) {mode}", "skipped: " + python))
            continue
        # torch.compile's warm-up is its compile: one more step for it.
        result = run_child(python, "torch", name,
                           dict(spec, mode=mode, warmup=warmup + 1)
                           if mode == "compile" else dict(spec, mode=mode),
                           args.threads)
        label = (f"pytorch {result['version']} {mode}"
                 if isinstance(result, dict) else f"pytorch (PyPI) {mode}")
        rows.append((label, result))
    if not os.path.isabs(pythons["ort"]):
        rows.append(("onnxruntime training", "skipped: " + pythons["ort"]))
    else:
        result = run_child(pythons["ort"], "ort", name, spec, args.threads)
        rows.append((f"onnxruntime {result['version']} training"
                     if isinstance(result, dict) else "onnxruntime training",
                     result))
    return rows


def kernel_classes(args, onnx_path, cfg, work, data, steps):
    """The micro_step's time by kernel class from a second trainer built
    with `traincc --profile-kernels` ({class: (ms, GFLOP/s, GB/s)}), or a
    reason string. Apart from the timed trainer: the timers add two calls
    per kernel."""
    trainer = os.path.join(work, "trainer-profiled")
    compiled = subprocess.run(
        [args.traincc, onnx_path, "--batch-size", str(cfg["batch"]),
         "--momentum", str(MOMENTUM), "--target", "cpu", "-o", trainer,
         "--profile-kernels"], capture_output=True, text=True)
    if compiled.returncode != 0:
        return "the profiled trainer did not compile"
    ran = subprocess.run(
        [trainer, "train", "--train-x", data[0], "--train-y", data[1],
         "--no-shuffle", "--max-steps", str(max(steps, 3)), "--lr", "0.01",
         "--threads", str(args.threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    classes, in_micro = {}, False
    for line in ran.stderr.splitlines():
        if line.startswith("micro_step:"):
            in_micro = True
        elif not line.startswith(" "):
            in_micro = False
        elif in_micro and "slowest kernels" in line:
            in_micro = False
        elif in_micro and line.strip().startswith("outside kernels:"):
            # "  outside kernels: 0.286 ms per call (0.0% of ...)": the
            # step call's time that no kernel timer saw.
            classes["outside kernels"] = (float(line.split()[2]), 0.0, 0.0)
        elif in_micro:
            # "  conv forward   2   412.345  25.6%  145.2  5.6"
            fields = line.split()
            if len(fields) >= 6 and fields[-3].endswith("%"):
                name = " ".join(fields[:-5])
                classes[name] = (float(fields[-4]), float(fields[-2]),
                                 float(fields[-1]))
    return classes or "the profiled trainer printed no kernel times"


def step_flops(report):
    """FLOPs of one optimizer step (micro_step + apply_step) from
    `traincc --report`'s totals, or None."""
    total, found = 0.0, set()
    units = {"FLOP": 1, "KFLOP": 1e3, "MFLOP": 1e6, "GFLOP": 1e9,
             "TFLOP": 1e12}
    for line in report.splitlines():
        for step in ("micro_step", "apply_step"):
            if line.startswith(step + ":") and "FLOP" in line:
                value, unit = line.rsplit(",", 1)[1].split()
                total += float(value) * units[unit.upper()]
                found.add(step)
    return total if found == {"micro_step", "apply_step"} else None


def run_c_probe(source, argument_lists, flags=()):
    """Builds C `source` with the system compiler (-O2 -march=native) and
    runs it once per argument list: the first number each run prints, or
    a reason string if it cannot be built."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return "no C compiler"
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "probe.c"), "w") as f:
            f.write(source)
        exe = os.path.join(work, "probe")
        built = subprocess.run([compiler, "-O2", "-march=native", *flags,
                                os.path.join(work, "probe.c"), "-o", exe],
                               capture_output=True, text=True)
        if built.returncode != 0:
            return "the probe did not build"
        return [float(subprocess.run([exe, *arguments], capture_output=True,
                                     text=True, check=True).stdout.split()[0])
                for arguments in argument_lists]


def fma_peak():
    """GFLOP/s of one core running independent 512-bit (else 256-bit)
    fused multiply-adds, from a C probe built with the system compiler;
    (None, reason) if it cannot be built."""
    source = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#ifdef __AVX512F__
typedef __m512 V;
#define FMA _mm512_fmadd_ps
#define SET _mm512_set1_ps
#define LANES 16
#else
typedef __m256 V;
#define FMA _mm256_fmadd_ps
#define SET _mm256_set1_ps
#define LANES 8
#endif
int main(void) {
  V a[12], b = SET(1.0000001f), c = SET(1e-7f);
  for (int i = 0; i < 12; ++i) a[i] = SET((float)i);
  long iters = 50000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long it = 0; it < iters; ++it) {
    // Unrolled: twelve independent chains in registers.
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = FMA(a[i], b, c);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += ((float *)&a[i])[0];
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%f %d %g\n", iters * 12.0 * LANES * 2 / s / 1e9, LANES, sink);
  return 0;
}
"""
    # Best of 3: the machine may be shared.
    runs = run_c_probe(source, [[], [], []])
    if isinstance(runs, str):
        return None, runs
    return max(runs), None


def memory_bandwidth(threads):
    """GB/s of a triad a[i] = b[i] + s * c[i] over three 64 MiB float arrays
    on `threads` threads (12 bytes moved per element), from a C probe built
    with the system compiler; (None, reason) if it cannot be built."""
    source = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
enum { N = 16 << 20 };
static float *a, *b, *c;
static int threads;
static void *triad(void *arg) {
  long t = (long)arg, begin = N / threads * t,
       end = t + 1 == threads ? N : N / threads * (t + 1);
  for (long i = begin; i < end; ++i) a[i] = b[i] + 1.5f * c[i];
  return 0;
}
int main(int argc, char **argv) {
  threads = atoi(argv[1]);
  a = malloc(4L * N); b = malloc(4L * N); c = malloc(4L * N);
  for (long i = 0; i < N; ++i) { a[i] = 0; b[i] = 1; c[i] = 2; }
  double best = 1e30;
  for (int r = 0; r < 10; ++r) {
    pthread_t id[64];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long t = 0; t < threads; ++t) pthread_create(&id[t], 0, triad, (void *)t);
    for (int t = 0; t < threads; ++t) pthread_join(id[t], 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    if (s < best) best = s;
  }
  printf("%f %g\n", 12.0 * N / best / 1e9, a[N / 2]);
  return 0;
}
"""
    runs = run_c_probe(source, [[str(min(threads, 64))]], ["-pthread"])
    if isinstance(runs, str):
        return None, runs
    return runs[0], None


def print_kernel_classes(results, threads, peak, bandwidth):
    """traincc's micro_step by kernel class (`--profile-kernels`): FLOP
    rates against the FMA probe, byte rates against the triad probe."""
    print("\ntraincc's micro_step by kernel class (a trainer built with "
          "--profile-kernels; GFLOP/s against the FMA probe, GB/s against "
          "the memory probe)")
    if bandwidth:
        print(f"  memory probe (triad, {threads} thread(s)): "
              f"{bandwidth:.1f} GB/s")
    for name, rows in results:
        ours = dict(rows).get("traincc")
        classes = ours.get("classes") if isinstance(ours, dict) else None
        if not isinstance(classes, dict):
            print(f"  {name:9} ({classes or 'no kernel times'})")
            continue
        total = sum(ms for ms, _, _ in classes.values())
        for kind, (ms, gflops, gbs) in classes.items():
            if kind == "outside kernels":
                share = "thread hand-offs, the step's own scalar code"
            elif kind.startswith("conv") or kind == "matmul":
                share = (f"{100 * gflops / (peak * threads):5.1f}% of FMA "
                         "peak" if peak else "")
            else:
                share = (f"{100 * gbs / bandwidth:5.1f}% of memory probe"
                         if bandwidth else "")
            print(f"  {name:9} {kind:22} {ms:9.3f} ms ({100 * ms / total:4.1f}%)"
                  f" {gflops:7.1f} GFLOP/s {gbs:7.1f} GB/s  "
                  f"{share}")


def print_model(name, rows, threads):
    cfg = MODELS[name]
    print(f"\n{name}: batch {cfg['batch']}, input {'x'.join(map(str, cfg['shape']))}"
          f", SGD lr {LR} momentum {MOMENTUM}, {threads} thread(s)")
    print(f"  {'':30} {'step ms':>9} {'images/s':>9} {'peak MiB':>9} "
          f"{'compile s':>9}")
    for peer, r in rows:
        if not isinstance(r, dict):
            print(f"  {peer:30} {r}")
            continue
        comp = f"{r['compile']:9.1f}" if r.get("compile") is not None else ""
        print(f"  {peer:30} {r['step'] * 1e3:9.1f} "
              f"{cfg['batch'] / r['step']:9.1f} {r['rss'] / 1024:9.1f} {comp}")
    sys.stdout.flush()


def print_machine_fraction(results, threads, peak, reason):
    """Each peer's step FLOPs (traincc's count of the direct algorithms)
    per second against the probe's fused multiply-add peak on the same
    threads."""
    print("\nhow close to the machine: the step's FLOPs as `traincc "
          "--report --winograd-min-channels=0` counts them (direct "
          "convolutions), per second of each peer's step; traincc's "
          "Winograd convolutions do fewer, so its rate is effective")
    if peak is None:
        print(f"  (no FMA probe: {reason})")
        return
    print(f"  FMA probe: {peak:.1f} GFLOP/s per core, {peak * threads:.1f} "
          f"on {threads} thread(s)")
    for name, rows in results:
        ours = dict(rows).get("traincc")
        flops = ours.get("flops") if isinstance(ours, dict) else None
        if not flops:
            print(f"  {name:9} (no FLOP count)")
            continue
        for peer, r in rows:
            if isinstance(r, dict):
                rate = flops / r["step"] / 1e9
                print(f"  {name:9} {peer:30} {rate:7.1f} GFLOP/s "
                      f"{100 * rate / (peak * threads):5.1f}% of peak "
                      f"({flops / 1e9:.1f} GFLOP per step)")


def print_ratios(results):
    """traincc/peer time and peak memory, one line per model and peer."""
    print("\nratios traincc/peer (time x, peak memory x; below 1: traincc "
          "better)")
    for name, rows in results:
        ours = dict(rows).get("traincc")
        for peer, r in rows[1:]:
            if isinstance(ours, dict) and isinstance(r, dict):
                cell = (f"{ours['step'] / r['step']:6.2f}x time "
                        f"{ours['rss'] / r['rss']:6.2f}x memory")
            else:
                cell = "   n/a"
            print(f"  {name:9} {peer:30} {cell}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child_main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS) + ["all"],
                        default="all")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=0,
                        help="steps timed per peer (default: per model)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 2 steps after 1 warm-up per "
                        "peer, the trainer's slope over at most 4 steps; "
                        "figures are indicative only")
    parser.add_argument("--repeats", type=int, default=1,
                        help="trainer runs, best kept (default 1)")
    parser.add_argument("--no-setup", action="store_true",
                        help="do not run bench/setup-peers.sh")
    parser.add_argument("--traincc", default=os.path.join(ROOT, "build", "bin",
                                                          "traincc"))
    parser.add_argument("--wait", type=int, default=0, metavar="SECONDS",
                        help="wait this long for a missing --traincc to "
                        "appear (a rebuild in progress)")
    args = parser.parse_args()

    pythons = peer_pythons(not args.no_setup)
    names = list(MODELS) if args.model == "all" else [args.model]
    results = []
    for name in names:
        rows = bench_model(name, args, pythons)
        print_model(name, rows, args.threads)
        results.append((name, rows))
    print_ratios(results)
    peak, reason = fma_peak()
    print_machine_fraction(results, args.threads, peak, reason)
    bandwidth, _ = memory_bandwidth(args.threads)
    print_kernel_classes(results, args.threads, peak, bandwidth)
    if args.quick:
        print("(--quick: a few steps per peer; the figures are indicative "
              "only, not for bench/RESULTS.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
