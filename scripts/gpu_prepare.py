#!/usr/bin/env python3
"""Packs what scripts/gpu-check.sh needs on a GPU machine without traincc.

Writes into OUT_DIR:
  parity/NAME/   for each of gpu_check.CONFIGS: model.onnx (exported by
                 test/e2e/parity/parity.py), init.npz (its initializers, so
                 that PyTorch starts from the trainer's weights without
                 onnx), x.npy/y.npy (parity.py's data for 10 steps) and
                 trainer.gz (traincc --target cpu,cuda, gzipped); the same
                 for each of gpu_check_amp.AMP_CONFIGS (--precision
                 bf16|fp16);
  sync-bn/       an MLP with BatchNorm for 2 replicas with --sync-bn and
                 for one process (scripts/gpu_check_sync_bn.py);
  fashion/trainer.gz  the example CNN (batch 64, SGD momentum 0.9);
  fashion-bf16/, fashion-fp16/  the example CNN at --precision bf16|fp16
                 (for the step time);
  fashion-mnist/ the dataset's four IDX files, gzipped as Debian ships them;
  manifest.json  the configurations, traincc flags and every file's size
                 and sha256.

Run with /usr/bin/python3 (Debian's torch and onnx); scripts/gpu-prepare.sh
builds traincc first.
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_check  # noqa: E402
import gpu_check_amp  # noqa: E402
import gpu_check_sync_bn  # noqa: E402

sys.path.insert(0, gpu_check.PARITY_DIR)
import parity  # noqa: E402

DATASET_FILES = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]


class Failed(Exception):
    pass


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise SystemExit(f"gpu-prepare: cannot run {cmd[0]}: {e}")
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        lines = [l.strip() for l in p.stderr.splitlines() if l.strip()]
        # traincc's error line and the linker's first complaint, if any.
        why = [l for l in lines if "error:" in l][:1] + \
            [l for l in lines if "undefined reference" in l][:1]
        raise Failed("; ".join(why or lines[-1:]) or
                     f"exit status {p.returncode}: {' '.join(cmd)}")
    return p.stdout


def gpu_program(trainer):
    """`trainer info`'s gpu program line (without it the pack is useless)."""
    info = run([trainer, "info"])
    for line in info.splitlines():
        if line.startswith("gpu program:"):
            return line[len("gpu program:"):].strip()
    raise Failed(f"{trainer} has no GPU program (is the CUDA toolkit's "
                 "ptxas installed?)")


def gzip_trainer(path):
    """Replaces the trainer by trainer.gz (a third of its size: the device
    tool carries 64 MiB, working tree included); gpu-check unpacks it."""
    with open(path, "rb") as src, gzip.GzipFile(path + ".gz", "wb", 9,
                                                 mtime=0) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path)
    return path + ".gz"


def pack_optional_trainer(out, folder, cmd, entry, label):
    """Compiles `cmd` (its trainer out/folder/trainer) into `entry`: its GPU
    program and the gzipped trainer's path, or the error that kept it out
    of the pack, which is not fatal."""
    trainer = os.path.join(out, folder, "trainer")
    try:
        run(cmd)
        entry["gpu_program"] = gpu_program(trainer)
        gzip_trainer(trainer)
        entry["trainer"] = folder + "/trainer.gz"
        print(f"gpu-prepare: {label}: {entry['gpu_program']}")
    except Failed as e:
        entry["error"] = f"not packed: {e}"
        shutil.rmtree(os.path.join(out, folder), ignore_errors=True)
        print(f"gpu-prepare: WARNING: {label} {entry['error']}")


def pack_parity(cfg, out, target_flags, traincc):
    import onnx
    import onnx.numpy_helper
    import torch
    d = os.path.join(out, cfg["dir"])
    os.makedirs(d)
    cls, sample_shape, classes = parity.MODELS[cfg["model"]]
    # As parity.py: seed 0, then the module's initial weights.
    torch.manual_seed(0)
    model = cls()
    onnx_path = os.path.join(d, "model.onnx")
    parity.export(model, sample_shape, cfg["batch"], onnx_path)
    inits = {i.name: onnx.numpy_helper.to_array(i)
             for i in onnx.load(onnx_path).graph.initializer}
    weights = {}
    for name in model.state_dict():
        if name.endswith("num_batches_tracked"):
            continue
        if name not in inits:
            raise SystemExit(f"gpu-prepare: {name} is not an initializer of "
                             f"{onnx_path}")
        weights[name] = inits[name]
    np.savez(os.path.join(d, "init.npz"), **weights)
    n = cfg["batch"] * cfg["accum"] * cfg["steps"]
    x, y = parity.make_data(sample_shape, classes, n)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)
    cmd = [traincc, onnx_path, "-o", os.path.join(d, "trainer"),
           "--batch-size", str(cfg["batch"]),
           "--accum-steps", str(cfg["accum"]),
           "--optimizer", cfg["optimizer"],
           "--weight-decay", str(cfg["weight_decay"]),
           "--bn-stats", cfg["bn_stats"]] + target_flags
    if cfg["optimizer"] == "sgd":
        cmd += ["--momentum", str(cfg["momentum"])]
    if cfg.get("precision"):
        cmd += gpu_check_amp.traincc_flags(cfg)
    cfg["traincc_args"] = ["model.onnx", "-o", "trainer"] + cmd[4:]
    run(cmd)
    cfg["gpu_program"] = gpu_program(os.path.join(d, "trainer"))
    gzip_trainer(os.path.join(d, "trainer"))
    cfg["trainer"] = cfg["dir"] + "/trainer.gz"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--traincc", required=True)
    p.add_argument("--gpu-arch", default="sm_90")
    p.add_argument("--cpu", default="x86-64-v3",
                   help="traincc --cpu: the GPU machine's CPU may differ")
    p.add_argument("--dataset-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--limit-mib", type=float, default=54,
                   help="fail when the pack is larger (the working tree, "
                        "about 3 MiB, travels too: 64 MiB in all)")
    args = p.parse_args()

    out = os.path.abspath(args.out)
    # .gpu-pack marks a folder this script wrote (even partly): only such a
    # folder is replaced.
    marker = ".gpu-pack"
    if os.path.isdir(out) and os.listdir(out):
        if not os.path.isfile(os.path.join(out, marker)):
            raise SystemExit(f"gpu-prepare: {out} is not empty and was not "
                             "written by gpu-prepare; not overwriting it")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, marker), "w").close()
    warnings.filterwarnings("ignore")
    target = ["--target", "cpu,cuda", "--gpu-arch", args.gpu_arch,
              "--cpu", args.cpu]

    # A configuration traincc cannot compile stays in the manifest with its
    # error (gpu-check.sh reports it as failed); the others are packed.
    configs, amp_configs = [], []
    for cfg in ([gpu_check.config_dict(c) for c in gpu_check.CONFIGS]
                + [gpu_check_amp.config_dict(c)
                   for c in gpu_check_amp.AMP_CONFIGS]):
        cfg["dir"] = "parity/" + cfg["name"]
        try:
            pack_parity(cfg, out, target, args.traincc)
            print(f"gpu-prepare: parity {cfg['name']}: {cfg['gpu_program']}")
        except Failed as e:
            cfg["error"] = f"not packed: {e}"
            shutil.rmtree(os.path.join(out, cfg["dir"]), ignore_errors=True)
            print(f"gpu-prepare: WARNING: parity {cfg['name']} {cfg['error']}")
        (amp_configs if cfg.get("precision") else configs).append(cfg)

    try:
        sync_bn = gpu_check_sync_bn.pack(out, target, args.traincc, run,
                                         gpu_program, gzip_trainer)
        print(f"gpu-prepare: sync-bn {sync_bn['model']}: "
              f"{sync_bn['replica_gpu_program']}")
    except Failed as e:
        sync_bn = {"error": f"not packed: {e}"}
        shutil.rmtree(os.path.join(out, "sync-bn"), ignore_errors=True)
        print(f"gpu-prepare: WARNING: sync-bn {sync_bn['error']}")

    example = os.path.join(gpu_check.EXAMPLE_DIR, "cnn.onnx")
    os.makedirs(os.path.join(out, "fashion"))
    cmd = [args.traincc, example, "-o", os.path.join(out, "fashion", "trainer"),
           "--batch-size", str(gpu_check.FASHION_BATCH),
           "--momentum", str(gpu_check.FASHION_MOMENTUM)] + target
    try:
        run(cmd)
    except Failed as e:
        raise SystemExit(f"gpu-prepare: the example CNN: {e}")
    fashion = {"trainer": "fashion/trainer.gz", "batch": gpu_check.FASHION_BATCH,
               "lr": gpu_check.FASHION_LR,
               "momentum": gpu_check.FASHION_MOMENTUM,
               "traincc_args": ["examples/fashion_mnist/cnn.onnx", "-o",
                                "fashion/trainer"] + cmd[4:],
               "gpu_program": None}
    try:
        fashion["gpu_program"] = gpu_program(os.path.join(out, "fashion",
                                                          "trainer"))
    except Failed as e:
        raise SystemExit(f"gpu-prepare: the example CNN: {e}")
    gzip_trainer(os.path.join(out, "fashion", "trainer"))
    print(f"gpu-prepare: fashion CNN: {fashion['gpu_program']}")
    # The example compiled other ways (gpu_check.FASHION_VARIANTS: -O1,
    # the BatchNorm sums apart), so that its GPU step time shows what each
    # costs.
    variants = {}
    for key, folder, flags, short, _, _ in gpu_check.FASHION_VARIANTS:
        variant = {"traincc_args": fashion["traincc_args"][:2] +
                   [folder + "/trainer"] + fashion["traincc_args"][3:] +
                   flags}
        os.makedirs(os.path.join(out, folder))
        pack_optional_trainer(
            out, folder, [args.traincc, example, "-o",
                          os.path.join(out, folder, "trainer")] +
            cmd[4:] + flags, variant, f"fashion CNN {short}")
        variants[key] = variant
    # The example at bf16/fp16 (GradScaler's dynamic loss scaling for fp16,
    # traincc's default): one that does not compile is recorded, not fatal.
    fashion_amp = {}
    for precision in gpu_check_amp.PRECISIONS:
        d = "fashion-" + precision
        os.makedirs(os.path.join(out, d))
        cmd = [args.traincc, example, "-o", os.path.join(out, d, "trainer"),
               "--batch-size", str(gpu_check.FASHION_BATCH),
               "--momentum", str(gpu_check.FASHION_MOMENTUM),
               "--precision", precision] + target
        entry = {"precision": precision,
                 "traincc_args": ["examples/fashion_mnist/cnn.onnx", "-o",
                                  d + "/trainer"] + cmd[4:]}
        pack_optional_trainer(out, d, cmd, entry, f"fashion CNN {precision}")
        fashion_amp[precision] = entry
    missing = [f for f in DATASET_FILES
               if not os.path.isfile(os.path.join(args.dataset_dir, f))]
    if missing:
        raise SystemExit(f"gpu-prepare: {args.dataset_dir} lacks "
                         f"{', '.join(missing)} (Debian: "
                         "apt-get install dataset-fashion-mnist)")
    os.makedirs(os.path.join(out, "fashion-mnist"))
    for f in DATASET_FILES:
        shutil.copyfile(os.path.join(args.dataset_dir, f),
                        os.path.join(out, "fashion-mnist", f))
    fashion["dataset"] = "fashion-mnist"

    files = {}
    for dirpath, _, names in os.walk(out):
        for name in sorted(names):
            if name == marker:
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, out)
            files[rel] = {"bytes": os.path.getsize(path),
                          "sha256": gpu_check.sha256(path)}
    total = sum(f["bytes"] for f in files.values())
    # The trainers need this glibc or newer where they run (gpu_check.py
    # names it when they do not start).
    manifest = {"format": 1, "traincc": args.traincc,
                "gpu_arch": args.gpu_arch, "cpu": args.cpu,
                "glibc": platform.libc_ver()[1],
                "parity": configs, "parity_amp": amp_configs,
                "fashion": fashion, "fashion_amp": fashion_amp,
                **variants,
                "sync_bn": sync_bn,
                "files": dict(sorted(files.items())), "total_bytes": total}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    mib = total / 2**20
    print(f"gpu-prepare: {len(files)} files, {mib:.1f} MiB in {out}")
    if mib > args.limit_mib:
        raise SystemExit(f"gpu-prepare: the pack is {mib:.1f} MiB, over "
                         f"--limit-mib {args.limit_mib:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
