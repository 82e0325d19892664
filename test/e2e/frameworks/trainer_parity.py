"""What the framework parity tests share: train an exported model with a
compiled trainer and judge it against the framework's own training.

The judgement is test/e2e/parity/parity.py's: each quantity (step losses,
parameters, BatchNorm running statistics) is compared with a float64 run of
the framework, and the trainer passes when its relative error is within the
tolerance (1e-4) or within 4 times the framework's own float32 error,
whichever is larger. Needs only numpy and onnx, so that it runs in each
framework's virtual environment.
"""
import json
import os
import subprocess

import numpy as np
import onnx
import onnx.numpy_helper


def run_trainer(traincc, onnx_path, x, y, batch, steps, lr, work):
    """Compiles `onnx_path` for micro-batch `batch` with plain SGD, trains
    it for `steps` steps on (x, y) in file order on one thread, and returns
    the step losses and the trained initializers by name."""
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    trainer = os.path.join(work, "trainer")
    subprocess.run([traincc, onnx_path, "-o", trainer, "--target", "cpu",
                    "--batch-size", str(batch), "--optimizer", "sgd",
                    "--momentum", "0"], check=True)
    log = os.path.join(work, "run.jsonl")
    exported = os.path.join(work, "trained.onnx")
    subprocess.run([trainer, "train",
                    "--train-x", os.path.join(work, "x.npy"),
                    "--train-y", os.path.join(work, "y.npy"),
                    "--no-shuffle", "--max-steps", str(steps),
                    "--lr", str(lr), "--log", log, "--export", exported,
                    "--threads", "1", "--no-fold-bn"],
                   check=True, stdout=subprocess.DEVNULL)
    losses = [json.loads(line)["loss"] for line in open(log)
              if json.loads(line)["event"] == "step"]
    trained = {init.name: onnx.numpy_helper.to_array(init)
               for init in onnx.load(exported).graph.initializer}
    return losses, trained


def initializer_source(proto):
    """A function from a value name to the initializer it comes from,
    through the Identity and Transpose nodes exporters leave between an
    initializer and its user."""
    inits = {i.name for i in proto.graph.initializer}
    producers = {o: n for n in proto.graph.node for o in n.output}

    def source(name):
        while name not in inits:
            node = producers[name]
            assert node.op_type in ("Identity", "Transpose"), node.op_type
            name = node.input[0]
        return name

    return source


def report_import(traincc, onnx_path, batch):
    """Imports the model (--emit=onnx-mlir) and prints traincc's messages
    and exit code: what a default export gets."""
    result = subprocess.run(
        [traincc, onnx_path, "--emit=onnx-mlir", "-o", os.devnull,
         "--batch-size", str(batch)],
        stderr=subprocess.PIPE, text=True)
    print(result.stderr, end="")
    print(f"exit code {result.returncode}")
    return 0


def describe_export(proto):
    """Prints the export's node count and its Transposes (NHWC layouts)."""
    transposes = sum(n.op_type == "Transpose" for n in proto.graph.node)
    print(f"exported: {len(proto.graph.node)} nodes, {transposes} Transpose")


def train_on_random_data(traincc, onnx_path, sample, classes, args, work):
    """Random inputs and labels for args.steps batches (seed 1) and the
    trainer's (losses, state) on them: (x, y, ours)."""
    rng = np.random.default_rng(1)
    n = args.batch * args.steps
    x = rng.standard_normal((n,) + sample).astype(np.float32)
    y = rng.integers(0, classes, n).astype(np.int64)
    ours = run_trainer(traincc, onnx_path, x, y, args.batch, args.steps,
                       args.lr, work)
    return x, y, ours


def rel_error(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-12))


def judge(title, ours, ref32, ref64, tolerance=1e-4):
    """Prints the table of relative errors and returns 0 when every row
    passes. Each argument after the title is (losses, {name: (kind, array)})
    with kind "param" or "stat"; the names are the ONNX initializers."""
    losses, values = ours
    losses32, values32 = ref32
    losses64, values64 = ref64
    rows = [("step losses", rel_error(losses, losses64),
             rel_error(losses32, losses64))]
    worst = {"param": [0.0, 0.0], "stat": [0.0, 0.0]}
    for name, (kind, value64) in values64.items():
        if name not in values:
            print(f"missing in the trainer's export: {name}")
            return 1
        err = rel_error(values[name], value64)
        fw_err = rel_error(values32[name][1], value64)
        if err > max(tolerance, 4 * fw_err):
            print(f"  {name}: {err:.2e} (framework float32: {fw_err:.2e})")
        worst[kind][0] = max(worst[kind][0], err)
        worst[kind][1] = max(worst[kind][1], fw_err)
    rows.append(("parameters", *worst["param"]))
    rows.append(("BN running stats", *worst["stat"]))
    print(f"{title} (relative error vs a float64 run of the framework)")
    print(f"  {'quantity':18} {'traincc':>10} {'fw fp32':>10}")
    failed = False
    for name, err, fw_err in rows:
        ok = err <= max(tolerance, 4 * fw_err)
        failed |= not ok
        print(f"  {name:18} {err:10.2e} {fw_err:10.2e} {'ok' if ok else 'FAIL'}")
    print(f"  losses traincc: {[round(v, 6) for v in losses]}")
    print(f"  losses fw64:    {[round(v, 6) for v in losses64]}")
    return 1 if failed else 0
