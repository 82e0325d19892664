#!/usr/bin/env python3
"""A tiny text classifier for the token-id tests: nn.Embedding(20, 8), mean
over the sequence of 6 ids, nn.Linear(8, 3), exported in training mode.

  token_model.py DIR          writes DIR/model.onnx, DIR/model.pt (its
                              weights), DIR/model-int32.onnx (an int32
                              input), and data: ids.npy (int64 [10,6]),
                              ids32.npy (the same as int32), y.npy (int64),
                              and bad inputs: high.npy (an id of 20),
                              negative.npy (an id of -1), float.npy
  token_model.py --check DIR PRED.npy
                              compares predict's outputs on ids.npy with
                              the PyTorch module (the compiled-in weights)

Run with /usr/bin/python3 (Debian's torch).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, ids):
        return self.head(self.emb(ids).mean(1))


def main(argv):
    if argv[0] == "--check":
        work, pred = argv[1], argv[2]
        model = Classifier()
        model.load_state_dict(torch.load(os.path.join(work, "model.pt")))
        ids = torch.tensor(np.load(os.path.join(work, "ids.npy")))
        want = model(ids).detach().numpy()
        got = np.load(pred)
        err = float(np.max(np.abs(got - want)))
        print(f"{'OK' if err < 1e-5 else 'MISMATCH'} {len(got)} predictions, "
              f"max abs error {err:.1e}")
        return 0 if err < 1e-5 else 1
    work = argv[0]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    model = Classifier()
    torch.save(model.state_dict(), os.path.join(work, "model.pt"))
    torch.onnx.export(model, torch.zeros((4, 6), dtype=torch.int64),
                      os.path.join(work, "model.onnx"),
                      input_names=["ids"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=15)
    # The same model with an int32 input, which the trainer does not feed.
    import onnx
    proto = onnx.load(os.path.join(work, "model.onnx"))
    proto.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.INT32
    onnx.save(proto, os.path.join(work, "model-int32.onnx"))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 20, (10, 6)).astype(np.int64)
    np.save(os.path.join(work, "ids.npy"), ids)
    np.save(os.path.join(work, "ids32.npy"), ids.astype(np.int32))
    np.save(os.path.join(work, "y.npy"), rng.integers(0, 3, 10).astype(np.int64))
    high = ids.copy()
    high[7, 4] = 20
    np.save(os.path.join(work, "high.npy"), high)
    negative = ids.copy()
    negative[2, 0] = -1
    np.save(os.path.join(work, "negative.npy"), negative)
    np.save(os.path.join(work, "float.npy"), ids.astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
