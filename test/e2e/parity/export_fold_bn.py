#!/usr/bin/env python3
"""Helpers of export-fold-bn.test (BatchNorm folded into convolutions).

  export_fold_bn.py nodes MODEL.onnx
      onnx.checker, then the op types of the main graph, one line, and
      whether a BatchNormalization reads a Conv's output (run with %python:
      Debian's onnx)
  export_fold_bn.py ort MODEL.onnx X.npy OUT.npy
      the model's first output under ONNX Runtime (run with %ort_python)
  export_fold_bn.py compare NAME A.npy B.npy TOL
      same shape, max |A - B| / max |B| <= TOL; prints the figure
"""
import sys

import numpy as np


def nodes(path):
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model)
    graph = model.graph
    print("OK checker")
    print("ops: " + " ".join(n.op_type for n in graph.node))
    conv_outputs = {o for n in graph.node if n.op_type == "Conv"
                    for o in n.output}
    after_conv = [n.name for n in graph.node
                  if n.op_type == "BatchNormalization"
                  and n.input[0] in conv_outputs]
    print(f"BatchNormalization after Conv: {len(after_conv)}")


def ort(model, x_path, out):
    import onnxruntime
    session = onnxruntime.InferenceSession(
        model, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    np.save(out, session.run(None, {name: np.load(x_path)})[0])


def compare(name, a_path, b_path, tol):
    a, b = np.load(a_path), np.load(b_path)
    if a.shape != b.shape:
        sys.exit(f"FAIL {name}: shapes {a.shape} and {b.shape}")
    err = float(np.max(np.abs(a.astype(np.float64) - b)) /
                np.max(np.abs(b.astype(np.float64))))
    print(f"{'OK' if err <= tol else 'FAIL'} {name}: max relative "
          f"difference {err:.2e} (limit {tol:g})")
    sys.exit(0 if err <= tol else 1)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "nodes":
        nodes(*args)
    elif cmd == "ort":
        ort(*args)
    elif cmd == "compare":
        compare(args[0], args[1], args[2], float(args[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
