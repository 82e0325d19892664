"""Writes N random 1x28x28 images and labels (x.npy, y.npy) into a folder."""
import sys

import numpy as np

folder, count = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
np.save(f"{folder}/x.npy", rng.random((count, 1, 28, 28), dtype=np.float32))
np.save(f"{folder}/y.npy", rng.integers(0, 10, count).astype(np.int64))
