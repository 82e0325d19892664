#!/usr/bin/env python3
# Writes the .npy files the trainer tests read into folder OUT:
#   x.npy y.npy       N learnable samples: float32 [N,1,28,28] images whose
#                     brightest 78-pixel band is the int64 label
#   val-x.npy val-y.npy   the same kind of data, other samples
#   t.npy val-t.npy   float32 [N,10] one-hot targets for the MSE model
# and bad inputs for the error tests:
#   x-int64.npy       the images as int64 (labels passed by mistake)
#   x-wrong-shape.npy float32 [N,5]
#   y-float.npy       float labels
#   y-out-of-range.npy  a label 10 for a 10-class model
#   y-short.npy       N-1 labels
#   truncated.npy     x.npy cut in the middle of the data
#   x-nan.npy         an input that is NaN
#   t-wrong-shape.npy float32 [N,3] targets
#   make_data.py OUT [N]
import os
import sys

import numpy as np


def samples(n, seed):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 10, size=n).astype(np.int64)
    x = rng.uniform(0, 1, size=(n, 784)).astype(np.float32)
    for i, label in enumerate(y):
        x[i, label * 78:(label + 1) * 78] += 0.3
    return x.reshape(n, 1, 28, 28), y


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.makedirs(out, exist_ok=True)
    x, y = samples(n, 1)
    vx, vy = samples(37, 2)
    save = lambda name, a: np.save(os.path.join(out, name), a)
    save("x.npy", x)
    save("y.npy", y)
    save("val-x.npy", vx)
    save("val-y.npy", vy)
    save("t.npy", np.eye(10, dtype=np.float32)[y])
    save("val-t.npy", np.eye(10, dtype=np.float32)[vy])
    save("t-wrong-shape.npy", np.zeros((n, 3), dtype=np.float32))
    save("x-int64.npy", (x * 255).astype(np.int64))
    save("x-wrong-shape.npy", np.zeros((n, 5), dtype=np.float32))
    save("y-float.npy", y.astype(np.float32))
    bad = y.copy()
    bad[3] = 10
    save("y-out-of-range.npy", bad)
    save("y-short.npy", y[:-1])
    nan = x.copy()
    nan[2, 0, 0, 0] = np.nan
    save("x-nan.npy", nan)
    with open(os.path.join(out, "x.npy"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.npy"), "wb") as f:
        f.write(data[:len(data) // 2])


if __name__ == "__main__":
    main()
