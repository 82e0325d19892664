"""SyncBatchNorm in the GPU check (scripts/gpu_check.py): the CUDA steps'
replica collectives (traincc --sync-bn) on a real device.

gpu_prepare.py packs (pack()) parity.py's MLP with BatchNorm1d twice from
the same initial weights: for micro-batch 8 compiled with --sync-bn (the
replicas' trainer, whose GPU launch plans carry collectives) and for the
global micro-batch 16 (one process), both --target cpu,cuda, with the data
of 6 optimizer steps.

check_sync_bn() trains 2 replicas of the first with --sync-bn, started as
torchrun starts them, and one process of the second, all on --device; the
step losses must agree to float32 rounding of another summation order
(relative 1e-4, as test/e2e/distributed/data_parallel.py). With 2 or more
GPUs each replica takes its own and averages with NCCL; on one GPU both
replicas share it and average through the host (NCCL refuses two ranks on
one device), which the row says. --device cpu runs the same on the CPU
steps (a dry run). Only the standard library is imported at the top.
"""
import json
import os

import gpu_check as gc
import gpu_check_scaling as scaling

MODEL = "mlp-bn"
BATCH, REPLICAS, STEPS, LR, MOMENTUM, SEED = 8, 2, 6, 0.05, 0.9, 7
TOLERANCE = 1e-4


def pack(out, target, traincc, run, gpu_program, gzip_trainer):
    """Writes sync-bn/ into the pack; returns its manifest entry. `run`,
    `gpu_program` and `gzip_trainer` are gpu_prepare.py's."""
    import numpy as np
    import torch
    import parity
    d = os.path.join(out, "sync-bn")
    os.makedirs(d)
    cls, sample_shape, classes = parity.MODELS[MODEL]
    entry = {"model": MODEL, "replicas": REPLICAS, "batch": BATCH,
             "steps": STEPS, "lr": LR, "seed": SEED}
    for name, batch, flags in (("replica", BATCH, ["--sync-bn"]),
                               ("single", BATCH * REPLICAS, [])):
        torch.manual_seed(0)
        onnx_path = os.path.join(d, f"{name}.onnx")
        parity.export(cls(), sample_shape, batch, onnx_path)
        trainer = os.path.join(d, f"{name}-trainer")
        cmd = [traincc, onnx_path, "-o", trainer, "--batch-size", str(batch),
               "--optimizer", "sgd", "--momentum", str(MOMENTUM)] + flags + \
            target
        run(cmd)
        entry[f"{name}_gpu_program"] = gpu_program(trainer)
        gzip_trainer(trainer)
        os.remove(onnx_path)
        entry[f"{name}_trainer"] = f"sync-bn/{name}-trainer.gz"
    # A trailing partial global batch that both runs drop.
    global_batch = BATCH * REPLICAS
    x, y = parity.make_data(sample_shape, classes,
                            global_batch * STEPS + global_batch // 2)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)
    entry["x"], entry["y"] = "sync-bn/x.npy", "sync-bn/y.npy"
    return entry


def losses(path):
    with open(path) as f:
        return [r["loss"] for r in map(json.loads, f)
                if r.get("event") == "step"]


def check_sync_bn(report, pack, manifest, args, deadline):
    """The SyncBatchNorm row: results["sync_bn"]."""
    res = {}
    report.results["sync_bn"] = res
    entry = manifest.get("sync_bn")
    if not entry:
        res["skipped"] = "not in the pack (an older gpu-prepare)"
        report.say(f"== sync-bn: skipped, {res['skipped']}")
        return
    replicas = entry["replicas"]
    env = {}
    if args.device == "cuda" and scaling.gpu_count(report) < replicas:
        env = {"CUDA_VISIBLE_DEVICES": ",".join(["0"] * replicas),
               "TRAINCC_LIBNCCL": "/nonexistent/libnccl.so.2"}
        res["devices"] = f"{replicas} replicas on GPU 0"
    else:
        nccl = scaling.nccl_library()
        if nccl:
            env["TRAINCC_LIBNCCL"] = nccl
        res["devices"] = (f"one GPU per replica" if args.device == "cuda"
                          else f"{replicas} CPU processes")
    report.say(f"== sync-bn: {entry['model']}, {replicas} replicas x "
               f"micro-batch {entry['batch']} --sync-bn ({res['devices']}) "
               f"against one process with micro-batch "
               f"{replicas * entry['batch']} (--device {args.device})")
    try:
        work = os.path.join(report.scratch, "sync-bn")
        os.makedirs(work, exist_ok=True)
        common = ["train", "--train-x", os.path.join(pack, entry["x"]),
                  "--train-y", os.path.join(pack, entry["y"]), "--epochs",
                  "1", "--lr", str(entry["lr"]), "--seed", str(entry["seed"]),
                  "--device", args.device]
        replica = gc.trainer_path(report, pack, entry["replica_trainer"])
        single = gc.trainer_path(report, pack, entry["single_trainer"])
        out = scaling.run_replicas(
            report, [replica] + common +
            ["--sync-bn", "--log", os.path.join(work, "replicas.jsonl")],
            replicas, env, deadline.timeout(180))
        line = gc.first_line(out, r"^data-parallel: \d+ replicas")
        res["gradients"] = line.split("gradients averaged ")[-1].split(
            ";")[0]
        if "(--sync-bn)" not in line:
            raise RuntimeError("rank 0 did not say its BatchNorm statistics "
                               "are the global batch's")
        rc, _, err = gc.run_logged(
            report, [single] + common +
            ["--log", os.path.join(work, "single.jsonl")],
            deadline.timeout(120))
        if rc != 0:
            raise RuntimeError("one process: " + (gc.first_line(err, "error")
                                                  or f"exit status {rc}"))
        ours = losses(os.path.join(work, "replicas.jsonl"))
        ref = losses(os.path.join(work, "single.jsonl"))
        if len(ours) != len(ref) or not ref:
            raise RuntimeError(f"{len(ours)} replica steps against "
                               f"{len(ref)} of one process")
        scale = max(max(abs(v) for v in ref), 1e-12)
        res["steps"] = len(ref)
        res["max_rel"] = max(abs(a - b) for a, b in zip(ours, ref)) / scale
        res["ok"] = res["max_rel"] <= TOLERANCE
    except Exception as e:  # noqa: BLE001 - one failed stage, reported
        res["error"] = str(e)
        report.fail("sync-bn", str(e))
        return
    report.say(f"  step losses: largest relative difference "
               f"{res['max_rel']:.2e} over {res['steps']} steps "
               f"({'ok' if res['ok'] else 'FAIL'}); gradients averaged "
               f"{res['gradients']}")
    if not res["ok"]:
        report.fail("sync-bn", f"relative difference {res['max_rel']:.2e} "
                               f"over {TOLERANCE:g}")


def table_lines(res, args):
    """The SyncBatchNorm row of gpu_check.py's final table."""
    if res is None:
        return []
    if "skipped" in res:
        return [f"sync-bn: skipped, {res['skipped']}"]
    if "error" in res:
        return [f"sync-bn: FAIL {res['error'][:80]}"]
    return [f"sync-bn, {res['devices']} (--device {args.device}): step "
            f"losses within {res['max_rel']:.1e} of one process over "
            f"{res['steps']} steps {'ok' if res['ok'] else 'FAIL'}; "
            f"gradients averaged {res['gradients']}"]
