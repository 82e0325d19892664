"""Data-parallel scaling in the GPU check (scripts/gpu_check.py): the example
CNN's training step on one GPU against all of the machine's GPUs.

One replica per GPU, started as torchrun starts them (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT): each trainer takes
GPU LOCAL_RANK and all-reduces its gradients through NCCL (libnccl.so.2 from
the loader's path, else the one of PyTorch's nvidia-nccl wheel, passed as
TRAINCC_LIBNCCL), or through the host where it finds none, which the row
then says. Each replica keeps the packed micro-batch of 64 (weak scaling:
the global batch grows with the replicas). The step time is the slope of
rank 0's epoch time between a short and a long run, as the single-GPU
timing's (gpu_check.time_trainer), whose `extra` steps it reuses.

The row: ms per step and samples/s alone and with N replicas, the speedup
in samples/s and the efficiency (speedup / N). With fewer than two GPUs it
is skipped with a line saying so. --device cpu --scaling-replicas N runs the
same logic with N CPU processes (a dry run on a machine without GPU).
Only the standard library is imported at the top.
"""
import glob
import os
import re
import socket
import statistics
import subprocess
import sys
import time

import gpu_check as gc

# Rank 0's line of a data-parallel run, with how the gradients travel.
DATA_PARALLEL = re.compile(r"^data-parallel: (\d+) replicas .*; gradients "
                           r"averaged (with [^;]*|in host memory[^;]*)", re.M)


def gpu_count(report):
    """The GPUs the trainers can use: CUDA_VISIBLE_DEVICES, else
    nvidia-smi's list, else PyTorch's count; 0 when none answers."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        # CUDA reads the list up to its first invalid entry ("-1": none).
        count = 0
        for entry in visible.split(","):
            entry = entry.strip()
            if not entry or entry.startswith("-"):
                break
            count += 1
        return count
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                             text=True, timeout=30).stdout
        count = len(re.findall(r"^GPU \d+:", out, re.M))
        if count:
            return count
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        import torch
        return torch.cuda.device_count()
    except Exception:  # noqa: BLE001 - no torch, no CUDA: no GPUs known
        report.write("scaling: neither nvidia-smi nor PyTorch counts GPUs")
        return 0


def nccl_library():
    """TRAINCC_LIBNCCL for the replicas: None when the loader finds
    libnccl.so.2 itself (or TRAINCC_LIBNCCL is set), else the copy in a
    Python package (PyTorch's CUDA wheels depend on nvidia-nccl)."""
    if os.environ.get("TRAINCC_LIBNCCL"):
        return None
    try:
        import ctypes
        ctypes.CDLL("libnccl.so.2")
        return None
    except OSError:
        pass
    for entry in sys.path:
        found = glob.glob(os.path.join(entry, "nvidia", "nccl", "lib",
                                       "libnccl.so.2"))
        if found:
            return found[0]
    return None


def count(n, what):
    """"1 GPU", "2 GPUs", "2 processes"."""
    return f"{n} {what}" + ("" if n == 1 else "es" if what.endswith("s")
                            else "s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_replicas(report, cmd, replicas, env, timeout):
    """Rank 0's output of `replicas` processes of `cmd`; raises with the
    first failing rank's error line."""
    port = str(free_port())
    report.write(f"$ {replicas} x (RANK=r WORLD_SIZE={replicas} "
                 f"MASTER_PORT={port}) " + " ".join(cmd))
    procs = []
    for rank in range(replicas):
        procs.append(subprocess.Popen(
            cmd, env=dict(os.environ, RANK=str(rank),
                          WORLD_SIZE=str(replicas), LOCAL_RANK=str(rank),
                          LOCAL_WORLD_SIZE=str(replicas),
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **env),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    end = time.monotonic() + timeout
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(
                timeout=max(1.0, end - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            for q in procs:
                q.communicate()
            raise RuntimeError(f"{replicas} replicas timed out after "
                               f"{timeout:.0f} s")
    for rank, (p, out) in enumerate(zip(procs, outputs)):
        report.write(f"-- rank {rank} (exit status {p.returncode})\n{out}")
        if p.returncode != 0:
            raise RuntimeError(f"rank {rank}: " + (gc.first_line(out, r"error")
                                                   or gc.first_line(out)
                                                   or "failed"))
    return outputs[0]


def replicas_epoch_seconds(report, trainer, data, steps, args, replicas,
                           deadline, nccl):
    """Rank 0's epoch time of `replicas` processes training `steps`
    optimizer steps, and how their gradients were averaged."""
    cmd = [trainer, "train", "--train-x", data[0], "--train-y", data[1],
           "--no-shuffle", "--max-steps", str(steps), "--lr",
           str(gc.FASHION_LR), "--device", args.device]
    timeout = deadline.timeout(180)
    if timeout <= 1:
        raise RuntimeError("the time budget is spent")
    output = run_replicas(report, cmd, replicas,
                          {"TRAINCC_LIBNCCL": nccl} if nccl else {}, timeout)
    group = DATA_PARALLEL.search(output)
    if not group or int(group.group(1)) != replicas:
        raise RuntimeError(f"rank 0 did not train as one of {replicas} "
                           "replicas (no 'data-parallel: ...' line)")
    m = gc.EPOCH_LINE.search(output)
    if not m or int(m.group(1)) != steps:
        raise RuntimeError(f"no 'epoch 1: ... {steps} steps, S s' line from "
                           "rank 0")
    return float(m.group(2)), group.group(2)


def time_replicas(report, trainer, args, deadline, replicas, alone):
    """Per-step time of `replicas` processes, as gpu_check.time_trainer
    measures one: the median slope over --timing-repeats (short, short +
    extra) pairs, with the single run's `extra`."""
    short, extra = alone["short"], alone["extra"]
    data = gc.make_timing_data(report, (short + extra + 1) * replicas)
    nccl = nccl_library()
    slopes = []
    for _ in range(args.timing_repeats):
        t_short, path = replicas_epoch_seconds(report, trainer, data, short,
                                               args, replicas, deadline, nccl)
        t_long, _ = replicas_epoch_seconds(report, trainer, data,
                                           short + extra, args, replicas,
                                           deadline, nccl)
        slopes.append((t_long - t_short) / extra)
    report.write(f"  {replicas} replicas: step slopes (s): {slopes}")
    return {"ms": statistics.median(slopes) * 1e3,
            "slopes_ms": [s * 1e3 for s in slopes], "gradients": path,
            "nccl": "NCCL" in path, "nccl_library": nccl}


def check_scaling(report, pack, manifest, args, deadline):
    """The scaling row: results["scaling"]."""
    res = {}
    report.results["scaling"] = res
    if args.device == "cuda":
        replicas = args.scaling_replicas or gpu_count(report)
        what = "GPU"
    else:
        replicas = args.scaling_replicas
        what = "process"
    res["replicas"] = replicas
    if replicas < 2:
        res["skipped"] = (f"this machine has {count(replicas, 'GPU')}; "
                          "the row needs "
                          "2 or more" if args.device == "cuda" else
                          "--device cpu runs it only with --scaling-replicas "
                          "2 or more")
        report.say(f"== scaling: skipped, {res['skipped']}")
        return
    report.say(f"== scaling: fashion CNN, batch {gc.FASHION_BATCH} per "
               f"replica, 1 {what} against {count(replicas, what)} "
               f"(--device {args.device})")
    try:
        entry = manifest["fashion"]
        alone = (report.results.get("timing") or {}).get("traincc", {})
        if "ms" not in alone:
            alone = gc.time_trainer(report, pack, entry, args, deadline)
        trainer = gc.trainer_path(report, pack, entry["trainer"])
        many = time_replicas(report, trainer, args, deadline, replicas, alone)
    except Exception as e:  # noqa: BLE001 - one failed stage, reported
        res["error"] = str(e)
        report.fail("scaling", str(e))
        return
    if alone["ms"] <= 0 or many["ms"] <= 0:
        res["error"] = ("no step time: a long run was not slower than its "
                        "short one (more --timing-steps)")
        report.fail("scaling", res["error"])
        return
    res["one"], res["many"] = alone, many
    res["speedup"] = replicas * alone["ms"] / many["ms"]
    res["efficiency"] = res["speedup"] / replicas
    res["what"] = what
    report.say(f"  1: {alone['ms']:.3f} ms/step; {replicas}: "
               f"{many['ms']:.3f} ms/step; gradients averaged "
               f"{many['gradients']}")


def table_lines(res, args):
    """The scaling row of gpu_check.py's final table."""
    if res is None:
        return []
    if "skipped" in res:
        return [f"scaling: skipped, {res['skipped']}"]
    if "error" in res:
        return [f"scaling: FAIL {res['error'][:80]}"]
    n, what = res["replicas"], res["what"]
    batch = gc.FASHION_BATCH
    one, many = res["one"]["ms"], res["many"]["ms"]
    return [f"scaling, fashion CNN batch {batch} per replica "
            f"(--device {args.device}): 1 {what} {one:.3f} ms/step "
            f"({batch / one * 1e3:.0f} samples/s), {count(n, what)} "
            f"{many:.3f} ms/step ({n * batch / many * 1e3:.0f} samples/s): "
            f"{res['speedup']:.2f}x, efficiency {res['efficiency']:.2f}"
            + ("" if res["many"]["nccl"] or args.device == "cpu" else
               "  [no NCCL: gradients through the host]")]
