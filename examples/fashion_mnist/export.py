"""Exports the Fashion-MNIST example CNN to ONNX for traincc.

Run with Debian's interpreter (it has torch and onnx):
    /usr/bin/python3 examples/fashion_mnist/export.py [-o cnn.onnx]

The export is in training mode (BatchNorm exported with training_mode=1,
no constant folding) so that it keeps what traincc needs to train: the
initial weights as initializers and BatchNorm running statistics as state.
The batch axis is dynamic; traincc fixes it with --batch-size.
"""

import argparse
import os
import sys
import warnings

import torch

# model.py sits next to this script; leave no __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import FashionCNN  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-o", "--output",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "cnn.onnx"),
        help="where to write the model (default: cnn.onnx next to this script)")
    args = parser.parse_args()

    # Training-mode export drops BatchNorm's num_batches_tracked update and
    # says so; traincc keeps its own step count, so the warning is noise.
    warnings.filterwarnings("ignore", message=".*Removing mutation from node")
    torch.manual_seed(0)
    model = FashionCNN()
    model.train()
    example = torch.randn(1, 1, 28, 28)
    torch.onnx.export(
        model,
        example,
        args.output,
        training=torch.onnx.TrainingMode.TRAINING,
        do_constant_folding=False,
        opset_version=15,
        input_names=["input"],
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
    )
    params = [p for p in model.parameters() if p.requires_grad]
    state = [t for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)
             for t in (m.running_mean, m.running_var)]
    print("wrote %s: %d trainable parameters in %d tensors, BatchNorm state "
          "%d values in %d tensors" % (
              args.output, sum(p.numel() for p in params), len(params),
              sum(t.numel() for t in state), len(state)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
