#!/usr/bin/python3
"""Exports a torchvision model to ONNX and prints PyTorch's own figures for
it, for lit tests that compare them with `traincc --report`.

    export_torchvision.py MODEL --mode train|eval|eval-bn -o OUT.onnx

Modes:
  train    model.train(), training=TRAINING: BatchNormalization nodes in
           training mode, running statistics as initializers.
  eval     model.eval(), training=EVAL: PyTorch folds every BatchNorm into
           the Conv before it, so the export holds the folded model; the
           expected parameter count is that of the model after
           torch.fx.experimental.optimization.fuse (PyTorch's own Conv-BN
           folding), with no BatchNorm state.
  eval-bn  model.eval(), training=PRESERVE: BatchNormalization nodes kept in
           inference mode (training_mode=0), which traincc imports as
           trainable BN: same parameters and BN state as PyTorch's module.

Every BatchNorm gets random affine parameters and running statistics (as in
a trained model): a fresh model's are all ones and zeros, and an eval export
merges initializers with equal values into one tensor (tying weights that
are independent in PyTorch).

Printed lines (prefix "pytorch:"): trainable parameters (elements, tensors),
BatchNorm state (running mean and variance: values, tensors), and the
output shape for the export's example batch.
"""

import argparse
import inspect
import sys
import warnings

import torch
import torchvision
from torch.fx.experimental.optimization import fuse

MODES = {
    "train": torch.onnx.TrainingMode.TRAINING,
    "eval": torch.onnx.TrainingMode.EVAL,
    "eval-bn": torch.onnx.TrainingMode.PRESERVE,
}


def batch_norms(model):
    return [m for m in model.modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]


def build(name):
    """The model with 10 classes, in the form PyTorch 1.13 can export in
    training mode: no auxiliary classifiers (googlenet and inception_v3 put
    an AdaptiveAvgPool2d to 4x4 of a 14x14 map there, which the exporter
    refuses, and return a tuple in training mode), and no stochastic depth
    (efficientnet, convnext, swin, maxvit: its per-sample bernoulli draw has
    no exporter)."""
    extra = {}
    if name in ("googlenet", "inception_v3"):
        extra = {"aux_logits": False, "init_weights": True}
    model = getattr(torchvision.models, name)(num_classes=10, **extra)
    # Some builders fix the rate themselves (swin_t passes 0.2), so it is
    # turned off on the modules rather than through the builder.
    for module in model.modules():
        if isinstance(module, torchvision.ops.StochasticDepth):
            module.p = 0.0
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a torchvision classification model's "
                        "constructor name (resnet18, mobilenet_v2, ...)")
    parser.add_argument("--mode", choices=sorted(MODES), default="train")
    parser.add_argument("--batch", type=int, default=2,
                        help="example batch size (the batch axis is dynamic)")
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    if not callable(getattr(torchvision.models, args.model, None)):
        parser.error(f"torchvision.models has no model '{args.model}'")

    # Training-mode export drops BatchNorm's num_batches_tracked update and
    # says so; traincc keeps its own step count.
    warnings.filterwarnings("ignore", message=".*Removing mutation from node")
    torch.manual_seed(0)
    model = build(args.model)
    with torch.no_grad():
        for bn in batch_norms(model):
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.1)
            bn.running_mean.normal_(0.0, 0.1)
            bn.running_var.uniform_(0.5, 1.5)
    model.train(args.mode == "train")

    example = torch.randn(args.batch, 3, args.image_size, args.image_size)
    # PyTorch 2.9 and later default to the torch.export-based exporter,
    # which ignores `training` and writes opset 18 at least; the TorchScript
    # exporter keeps training mode and opset 15 (swin_v2 exports there only:
    # PyTorch 1.13 has no aten::zero).
    legacy = ({"dynamo": False} if "dynamo" in
              inspect.signature(torch.onnx.export).parameters else {})
    torch.onnx.export(
        model, example, args.output,
        training=MODES[args.mode],
        do_constant_folding=False,
        opset_version=15,
        input_names=["input"],
        output_names=["logits"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
        **legacy)

    reference = fuse(model) if args.mode == "eval" else model
    params = [p for p in reference.parameters() if p.requires_grad]
    state = [t for bn in batch_norms(reference)
             for t in (bn.running_mean, bn.running_var)]
    with torch.no_grad():
        shape = tuple(model(example).shape)
    print("pytorch: %s %s export" % (args.model, args.mode))
    print("pytorch: trainable parameters: %d in %d tensors" %
          (sum(p.numel() for p in params), len(params)))
    print("pytorch: BatchNorm state: %d values in %d tensors" %
          (sum(t.numel() for t in state), len(state)))
    print("pytorch: output shape: %s" % "x".join(map(str, shape)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
