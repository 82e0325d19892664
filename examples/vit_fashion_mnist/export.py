"""Exports the Fashion-MNIST example vision transformer to ONNX for traincc.

Run with Debian's interpreter (it has torch and onnx):
    /usr/bin/python3 examples/vit_fashion_mnist/export.py [-o vit.onnx]

Opset 17 keeps each nn.LayerNorm one LayerNormalization node (PyTorch 1.13
decomposes it at older opsets; traincc imports both); nn.GELU exports as
its Erf form (PyTorch 2.x at opset 20 writes a Gelu node, which traincc
imports too). Training mode and no constant folding keep the initial
weights as initializers; the batch axis is dynamic, and traincc fixes it
with --batch-size.
"""

import argparse
import os
import sys

import torch

# model.py sits next to this script; leave no __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import FashionViT  # noqa: E402


def export(model: torch.nn.Module, path: str, batch: int = 1) -> None:
    torch.onnx.export(
        model,
        torch.zeros(batch, 1, 28, 28),
        path,
        training=torch.onnx.TrainingMode.TRAINING,
        do_constant_folding=False,
        opset_version=17,
        input_names=["input"],
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-o", "--output",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "vit.onnx"),
        help="where to write the model (default: vit.onnx next to this "
             "script)")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = FashionViT()
    model.train()
    export(model, args.output)
    params = [p for p in model.parameters() if p.requires_grad]
    print("wrote %s: %d trainable parameters in %d tensors" % (
        args.output, sum(p.numel() for p in params), len(params)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
