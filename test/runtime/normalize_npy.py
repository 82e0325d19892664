#!/usr/bin/env python3
# Writes OUT.npy = (IN.npy - MEAN) / STD in float32, the way torchvision's
# Normalize computes it (tests of the trainer's --normalize).
#   normalize_npy.py IN.npy OUT.npy MEAN STD
import sys

import numpy as np

x = np.load(sys.argv[1])
mean, std = np.float32(sys.argv[3]), np.float32(sys.argv[4])
np.save(sys.argv[2], ((x - mean) / std).astype(np.float32))
