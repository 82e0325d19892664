#!/usr/bin/env python3
# Helpers of test/e2e/trained-weights.test:
#   trained_weights.py subset DIR N_TRAIN N_VAL
#       the first N_TRAIN Fashion-MNIST training images and the first N_VAL
#       test images as the trainer's .npy inputs (float32 [N,1,28,28] in
#       [0,1], as --dataset fashion-mnist feeds them) and int64 labels:
#       DIR/{x,y,val-x,val-y}.npy
#   trained_weights.py ort MODEL.onnx X.npy OUT.npy
#       the model's first output under ONNX Runtime (run with %ort_python:
#       it needs only numpy and onnxruntime)
#   trained_weights.py compare A.npy B.npy TOL
#       same shape and dtype, max |A - B| < TOL
import gzip
import os
import sys

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(os.path.join(FASHION, path)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def subset(out, n_train, n_val):
    for prefix, split, n in [("", "train", n_train), ("val-", "t10k", n_val)]:
        images = idx(split + "-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
        labels = idx(split + "-labels-idx1-ubyte.gz", 8)
        np.save(os.path.join(out, prefix + "x.npy"),
                (images[:n].astype(np.float32) / np.float32(255)))
        np.save(os.path.join(out, prefix + "y.npy"), labels[:n].astype(np.int64))


def ort(model, x_path, out):
    import onnxruntime
    session = onnxruntime.InferenceSession(
        model, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    result = session.run(None, {name: np.load(x_path)})[0]
    np.save(out, result)
    print("onnxruntime %s: %s %s" % (onnxruntime.__version__, result.dtype,
                                      list(result.shape)))


def compare(a_path, b_path, tol):
    a, b = np.load(a_path), np.load(b_path)
    if a.shape != b.shape or a.dtype != b.dtype:
        sys.exit("FAIL: %s %s against %s %s" % (a.dtype, a.shape, b.dtype,
                                                 b.shape))
    worst = float(np.max(np.abs(a.astype(np.float64) - b)))
    if not worst < tol:
        sys.exit("FAIL: max abs difference %g, not below %g" % (worst, tol))
    print("OK %d outputs agree (max abs difference below %g)" % (a.size, tol))


def main():
    args = sys.argv[1:]
    if args[0] == "subset":
        subset(args[1], int(args[2]), int(args[3]))
    elif args[0] == "ort":
        ort(args[1], args[2], args[3])
    elif args[0] == "compare":
        compare(args[1], args[2], float(args[3]))
    else:
        sys.exit("unknown command " + args[0])


if __name__ == "__main__":
    main()
