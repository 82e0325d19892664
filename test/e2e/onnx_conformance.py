#!/usr/bin/python3
"""ONNX conformance of traincc's importer.

Goes over ONNX's own backend test models (libonnx-testdata: data/node and
data/pytorch-converted), and imports with `traincc --emit=train-mlir` every
model whose op types are all in traincc's supported set (`traincc
--list-ops`) and whose graph inputs and outputs are all float32 tensors
(traincc trains float models). Prints a table (op type | models | imported),
totals, and the error of every failure. Then checks that errors are errors:
a few models with unsupported ops must make traincc exit 1 and name every
unsupported op type.

--xfail FILE lists considered models known not to import (with a reason);
they are reported as expected failures. Exit status 1 when a considered model
fails to import and is not listed, when a listed model imports or is not
considered (the list must stay exact), when an error check fails, or when
fewer than --min-considered models are considered. Run with /usr/bin/python3
(Debian's onnx package).
"""

import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

import onnx

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted")
DEFAULT_DOMAINS = ("", "ai.onnx")


class Model:
    """What the conformance run needs to know about one test model."""

    def __init__(self, path, data_dir):
        self.path = path
        self.name = os.path.relpath(os.path.dirname(path), data_dir)
        proto = onnx.load(path, load_external_data=False)
        self.opset = next((o.version for o in proto.opset_import
                           if o.domain in DEFAULT_DOMAINS), None)
        self.op_types = set()
        self.has_subgraphs = False
        self._collect_ops(proto.graph)
        initializers = {t.name for t in proto.graph.initializer}
        values = [v for v in proto.graph.input if v.name not in initializers]
        values += list(proto.graph.output)
        self.float_io = all(
            v.type.HasField("tensor_type") and
            v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
            for v in values)

    def _collect_ops(self, graph):
        for node in graph.node:
            if node.domain in DEFAULT_DOMAINS:
                self.op_types.add(node.op_type)
            else:
                self.op_types.add(node.domain + ":" + node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    self.has_subgraphs = True
                    self._collect_ops(attr.g)
                for sub in attr.graphs:
                    self.has_subgraphs = True
                    self._collect_ops(sub)


def run_traincc(traincc, path, timeout):
    """Imports `path`; returns (exit code, stderr), the code None when
    traincc did not run to its end (timeout, cannot start)."""
    try:
        proc = subprocess.run(
            [traincc, path, "--emit=train-mlir", "-o", os.devnull],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    except OSError as error:
        return None, "cannot run %s: %s" % (traincc, error)
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def describe_exit(code):
    if code is None:
        return "did not run to the end"
    if code < 0:
        return "killed by signal %d (crash)" % -code
    return "exit %d" % code


def supported_ops(traincc):
    proc = subprocess.run([traincc, "--list-ops"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        sys.exit("onnx_conformance: '%s --list-ops' failed: %s" %
                 (traincc, proc.stderr.decode(errors="replace").strip()))
    return {line.strip() for line in proc.stdout.decode().splitlines()
            if line.strip()}


def pick_error_models(models, supported, count):
    """Float models whose top-level graph holds unsupported default-domain
    ops: first those with several unsupported types, then single ones."""
    candidates = [m for m in models
                  if m.float_io and not m.has_subgraphs and
                  all(":" not in op for op in m.op_types) and
                  m.op_types - supported]
    several = [m for m in candidates if len(m.op_types - supported) > 1]
    single = [m for m in candidates if len(m.op_types - supported) == 1 and
              m.op_types & supported]
    picked, seen = [], set()
    for group, limit in ((several, (count + 1) // 2), (single, count)):
        for model in group:
            key = frozenset(model.op_types - supported)
            if len(picked) >= limit:
                break
            if key not in seen:
                seen.add(key)
                picked.append(model)
    return picked


def read_xfail(path):
    """Model name -> reason, from lines "suite/name reason" ('#' comments)."""
    entries = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, _, reason = line.partition(" ")
                entries[name] = reason.strip()
    return entries


def short_error(text, lines=8):
    out = text.strip().splitlines()
    if len(out) > lines:
        out = out[:lines] + ["... (%d more lines)" % (len(out) - lines)]
    return "\n".join("    " + line for line in out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc", required=True, help="traincc binary")
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help="libonnx-testdata data folder (default: %(default)s)")
    parser.add_argument("-j", "--jobs", type=int, default=2,
                        help="parallel imports (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds per import (default: %(default)s)")
    parser.add_argument("--error-checks", type=int, default=6,
                        help="models with unsupported ops to check (default: %(default)s)")
    parser.add_argument("--min-considered", type=int, default=0,
                        help="fail when fewer models are considered (guards "
                             "against an empty supported set)")
    parser.add_argument("--xfail", metavar="FILE",
                        help="models expected to fail, one per line with a reason")
    args = parser.parse_args()
    xfail = read_xfail(args.xfail) if args.xfail else {}

    supported = supported_ops(args.traincc)
    paths = []
    for suite in SUITES:
        paths += sorted(glob.glob(os.path.join(args.data, suite, "*", "model.onnx")))
    if not paths:
        sys.exit("onnx_conformance: no models under %s" % args.data)
    models = [Model(p, args.data) for p in paths]

    considered, unsupported, non_float = [], [], []
    for model in models:
        if model.op_types - supported:
            unsupported.append(model)
        elif not model.float_io:
            non_float.append(model)
        else:
            considered.append(model)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(
            lambda m: run_traincc(args.traincc, m.path, args.timeout), considered))
        error_models = pick_error_models(models, supported, args.error_checks)
        error_results = list(pool.map(
            lambda m: run_traincc(args.traincc, m.path, args.timeout), error_models))

    per_op = collections.OrderedDict((op, [0, 0]) for op in sorted(supported))
    failures, expected, unexpected_passes = [], [], []
    for model, (code, err) in zip(considered, results):
        for op in model.op_types:
            per_op[op][0] += 1
            per_op[op][1] += code == 0
        if code != 0 and model.name in xfail:
            expected.append((model, code, err))
        elif code != 0:
            failures.append((model, code, err))
        elif model.name in xfail:
            unexpected_passes.append(model.name)
    considered_names = {m.name for m in considered}
    stale = sorted(n for n in xfail if n not in considered_names)

    print("ONNX conformance: traincc --emit=train-mlir on %s/{%s}/*/model.onnx"
          % (args.data, ",".join(SUITES)))
    print("Considered: models whose op types are all supported and whose graph")
    print("inputs and outputs are all float32 tensors (traincc trains float models).")
    print()
    width = max([len("op type")] + [len(op) for op in per_op])
    print("| %-*s | models | imported |" % (width, "op type"))
    print("|%s|--------|----------|" % ("-" * (width + 2)))
    for op, (total, ok) in per_op.items():
        print("| %-*s | %6d | %8d |" % (width, op, total, ok))
    print()
    imported = len(considered) - len(failures) - len(expected)
    print("models found:                        %d" % len(models))
    print("models considered:                   %d" % len(considered))
    print("  imported:                          %d" % imported)
    print("  failed, expected (--xfail list):   %d" % len(expected))
    print("  failed:                            %d" % len(failures))
    print("skipped, unsupported ops:            %d" % len(unsupported))
    print("skipped, non-float32 inputs/outputs: %d" % len(non_float))
    by_opset = collections.Counter(m.opset for m in considered)
    print("considered by opset:                 %s" % ", ".join(
        "%s: %d" % (v, n) for v, n in sorted(by_opset.items(), key=lambda x: x[0] or 0)))

    if expected:
        print()
    for model, code, err in expected:
        first = err.strip().splitlines()[0] if err.strip() else describe_exit(code)
        print("expected failure %s (%s): %s" % (model.name, xfail[model.name], first))
    for name in unexpected_passes:
        print("UNEXPECTED PASS %s: imports now, remove it from the --xfail list"
              % name, file=sys.stderr)
    for name in stale:
        print("STALE XFAIL %s: not a considered model, remove it from the "
              "--xfail list" % name, file=sys.stderr)

    # Failures go to stderr: a lit run pipes stdout into FileCheck and shows
    # stderr when the test fails.
    for model, code, err in failures:
        print("FAILED %s (%s; ops: %s)\n%s" % (
            model.name, describe_exit(code), ", ".join(sorted(model.op_types)),
            short_error(err)), file=sys.stderr)

    wrong = []
    for model, (code, err) in zip(error_models, error_results):
        missing = [op for op in sorted(model.op_types - supported)
                   if not re.search(r"\b%s\b" % re.escape(op), err)]
        if code != 1 or missing:
            wrong.append((model, code, err, missing))
    print()
    print("error checks (models with unsupported ops must exit 1 and name every "
          "unsupported op): %d checked, %d wrong" % (len(error_models), len(wrong)))
    for model in error_models:
        print("  %s: unsupported %s" % (model.name,
                                        ", ".join(sorted(model.op_types - supported))))
    for model, code, err, missing in wrong:
        print("WRONG ERROR %s (%s%s)\n%s" % (
            model.name, describe_exit(code),
            "; does not name " + ", ".join(missing) if missing else "",
            short_error(err)), file=sys.stderr)

    sys.stdout.flush()
    status = 1 if failures or wrong or unexpected_passes or stale else 0
    if len(considered) < args.min_considered:
        print("only %d models considered, expected at least %d" %
              (len(considered), args.min_considered), file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
