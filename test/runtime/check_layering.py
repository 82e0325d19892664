#!/usr/bin/env python3
# Checks the layers of the trainer runtime (runtime/CMakeLists.txt):
#   support < formats < data < exec < distributed < loop < commands
# Every source and header lives in the folder of its layer, under
# RUNTIME/include/traincc/runtime/<layer>/ or RUNTIME/lib/<layer>/, and
# includes runtime headers of its own layer or lower ones only, so that
# e.g. the data layer can be used without the command line.
# traincc/runtime/ModelABI.h (the C contract with generated code) belongs
# to no layer and may be included by any.
#   check_layering.py RUNTIME
# Prints "OK: ..." or one "PATH:LINE: error: ..." line per violation (and
# exits 1).
import os
import re
import sys

LAYERS = ["support", "formats", "data", "exec", "distributed", "loop",
          "commands"]
RANK = {name: rank for rank, name in enumerate(LAYERS)}
CONTRACT = "traincc/runtime/ModelABI.h"
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]')
SOURCE_SUFFIXES = (".h", ".cpp", ".inc", ".def")


def layer_of_include(name, including_dir):
    """The layer an included path belongs to, "" for the C contract, None
    for a header outside the runtime (system, zlib)."""
    if name == CONTRACT:
        return ""
    parts = name.split("/")
    if name.startswith("traincc/runtime/"):
        return parts[2] if len(parts) > 3 else "?"
    # Library-private headers: "support/ByteOrder.h" (runtime/lib is on the
    # include path), or a file next to the including one.
    if parts[0] in RANK and len(parts) > 1:
        return parts[0]
    if os.path.exists(os.path.join(including_dir, name)):
        return os.path.basename(including_dir)
    return None


def main(runtime):
    roots = [os.path.join(runtime, "include", "traincc", "runtime"),
             os.path.join(runtime, "lib")]
    errors = []
    files = 0
    for root in roots:
        if not os.path.isdir(root):
            errors.append(f"{root}: error: no such folder")
            continue
        for dirpath, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, name)
                if path == os.path.join(roots[0], "ModelABI.h"):
                    continue
                layer = os.path.relpath(path, root).split(os.sep)[0]
                if layer not in RANK:
                    errors.append(f"{path}:1: error: not in a layer folder "
                                  f"({', '.join(LAYERS)})")
                    continue
                files += 1
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        included = match.group(1)
                        target = layer_of_include(included, dirpath)
                        if target is None or target == "":
                            continue
                        if target not in RANK:
                            errors.append(f"{path}:{number}: error: "
                                          f"{included} is in no layer folder")
                        elif RANK[target] > RANK[layer]:
                            errors.append(
                                f"{path}:{number}: error: layer {layer} "
                                f"includes {included} of the higher layer "
                                f"{target}")
    for error in errors:
        print(error)
    if errors:
        return 1
    print(f"OK: {files} files in layers {' < '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_layering.py RUNTIME")
    sys.exit(main(sys.argv[1]))
