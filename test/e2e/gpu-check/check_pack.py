#!/usr/bin/env python3
"""Checks a pack of scripts/gpu-prepare.sh: manifest.json lists every file
with its size and sha256, nothing else is there, the whole stays under the
device tool's 64 MiB (the working tree travels too: --limit-mib), and each
packed trainer's `trainer info` has a GPU program, and the mixed-precision
ones (parity_amp, fashion_amp) the manifest's precision and loss scaling.
Prints one line per trainer for FileCheck."""
import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
import gpu_check  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("pack")
    p.add_argument("--limit-mib", type=float, default=64)
    args = p.parse_args()
    manifest = json.load(open(os.path.join(args.pack, "manifest.json")))
    on_disk = {os.path.relpath(os.path.join(d, n), args.pack)
               for d, _, names in os.walk(args.pack) for n in names
               if n not in ("manifest.json", ".gpu-pack")}
    listed = set(manifest["files"])
    if on_disk != listed:
        sys.exit(f"FAIL: not listed {sorted(on_disk - listed)}, "
                 f"missing {sorted(listed - on_disk)}")
    total = 0
    for rel, info in manifest["files"].items():
        path = os.path.join(args.pack, rel)
        data = open(path, "rb").read()
        if len(data) != info["bytes"]:
            sys.exit(f"FAIL: {rel} has {len(data)} bytes, manifest "
                     f"{info['bytes']}")
        if hashlib.sha256(data).hexdigest() != info["sha256"]:
            sys.exit(f"FAIL: {rel}: sha256 differs from the manifest")
        total += len(data)
    total += os.path.getsize(os.path.join(args.pack, "manifest.json"))
    if total != manifest["total_bytes"] + os.path.getsize(
            os.path.join(args.pack, "manifest.json")):
        sys.exit("FAIL: total_bytes is not the sum of the files")
    if total >= args.limit_mib * 2**20:
        sys.exit(f"FAIL: the pack is {total / 2**20:.1f} MiB, not under "
                 f"{args.limit_mib:g} MiB")
    print(f"pack: {len(listed)} files, under {args.limit_mib:g} MiB, "
          f"gpu_arch {manifest['gpu_arch']}, cpu {manifest['cpu']}")
    amp = manifest.get("parity_amp", [])
    entries = [(c["name"], c.get("trainer"), c.get("error"), None)
               for c in manifest["parity"]]
    entries += [(c["name"], c.get("trainer"), c.get("error"), c)
                for c in amp]
    entries.append(("fashion", manifest["fashion"]["trainer"], None, None))
    for precision, e in sorted(manifest.get("fashion_amp", {}).items()):
        entries.append((f"fashion-{precision}", e.get("trainer"),
                        e.get("error"), dict(e, loss_scale="dynamic"
                                             if precision == "fp16" else
                                             "none")))
    for key, folder, *_ in gpu_check.FASHION_VARIANTS:
        if key in manifest:
            e = manifest[key]
            entries.append((folder, e.get("trainer"), e.get("error"), None))
    tmp = tempfile.mkdtemp(prefix="check-pack-")
    for name, rel, error, cfg in entries:
        if error:
            print(f"{name}: {error}")
            continue
        if rel not in listed:
            sys.exit(f"FAIL: {name}'s trainer {rel} is not in the pack")
        trainer = os.path.join(tmp, name)
        with open(trainer, "wb") as f:
            f.write(gzip.open(os.path.join(args.pack, rel)).read())
        os.chmod(trainer, 0o755)
        info = subprocess.run([trainer, "info"], capture_output=True,
                              text=True, check=True)
        line = [l for l in info.stdout.splitlines()
                if l.startswith("gpu program:")]
        mixed = ""
        if cfg:
            got = {k: v.strip() for k, _, v in (
                l.partition(":") for l in info.stdout.splitlines()
                if l.startswith(("precision:", "loss scaling:")))}
            scaling = got.get("loss scaling", "?").split()[0]
            if (got.get("precision"), scaling) != (cfg["precision"],
                                                   cfg["loss_scale"]):
                sys.exit(f"FAIL: {name}: precision {got.get('precision')}, "
                         f"loss scaling {scaling}; the manifest says "
                         f"{cfg['precision']}, {cfg['loss_scale']}")
            mixed = (f"precision {got['precision']}, loss scaling "
                     f"{got['loss scaling']}; ")
        print(f"{name}: {mixed}{line[0] if line else 'no gpu program'}")
    shutil.rmtree(tmp)
    for rel in ("x.npy", "y.npy", "init.npz", "model.onnx"):
        for c in manifest["parity"] + amp:
            if not c.get("error") and c["dir"] + "/" + rel not in listed:
                sys.exit(f"FAIL: {c['name']} has no {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
