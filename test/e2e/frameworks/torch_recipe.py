#!/usr/bin/env python3
"""The PyTorch export recipe, for the installed PyTorch (Debian's 1.13 or a
current 2.x), against PyTorch's own training.

--export recipe (default): the README's recipe (the TorchScript exporter in
training mode without constant folding, a dynamic batch axis; dynamo=False
from PyTorch 2.0, where the new exporter is the default) writes model
`--model` of test/e2e/parity/parity.py; traincc compiles it and trains it
for a few plain-SGD steps, and the trajectory is judged against float64 and
float32 PyTorch runs as parity.py does.
--export default: torch.onnx.export(model, (x,), path) with nothing else,
compiled at another batch size; prints traincc's messages (the tests check
the warning and the error that name the recipes).
"""
import argparse
import copy
import os
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "parity"))
import parity  # noqa: E402
from trainer_parity import judge, report_import, run_trainer  # noqa: E402

MAJOR = int(torch.__version__.split(".")[0])


def export_for_training(model, x, path):
    """The recipe. Tracing in training mode runs the model once on `x`,
    which moves BatchNorm's running statistics: a copy is exported, and
    returned (the file holds its state)."""
    model = copy.deepcopy(model)
    extra = {"dynamo": False} if MAJOR >= 2 else {}
    torch.onnx.export(model.train(), (x,), path, **extra,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["input"],
                      dynamic_axes={"input": {0: "batch"}})
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--model", default="residual",
                        choices=sorted(parity.MODELS))
    parser.add_argument("--export", choices=["recipe", "default"],
                        default="recipe")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--workdir")
    args = parser.parse_args()

    torch.manual_seed(0)
    cls, sample_shape, classes = parity.MODELS[args.model]
    model = cls()
    work = args.workdir or tempfile.mkdtemp(prefix="torch-recipe-")
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    print(f"torch {torch.__version__}, export {args.export}")

    if args.export == "default":
        model.eval()
        torch.onnx.export(model, (torch.zeros((4,) + sample_shape),),
                          onnx_path)
        return report_import(args.traincc, onnx_path, args.batch)

    exported = export_for_training(
        model, torch.zeros((args.batch,) + sample_shape), onnx_path)
    initial = exported.state_dict()
    x, y = parity.make_data(sample_shape, classes, args.batch * args.steps)
    ours = run_trainer(args.traincc, onnx_path, x, y, args.batch, args.steps,
                       args.lr, work)
    settings = argparse.Namespace(optimizer="sgd", lr=args.lr, momentum=0.0,
                                  weight_decay=0.0, bn_stats="micro",
                                  batch=args.batch, accum=1, steps=args.steps)
    ref = {}
    for dtype in (torch.float32, torch.float64):
        fresh = cls()
        fresh.load_state_dict(initial)
        losses, trained = parity.torch_reference(fresh, x, y, settings, dtype)
        ref[dtype] = (losses, {
            name: ("stat" if "running_" in name else "param",
                   value.detach().numpy())
            for name, value in trained.state_dict().items()
            if not name.endswith("num_batches_tracked")})
    return judge(f"parity {args.model} torch {torch.__version__} recipe sgd "
                 f"steps={args.steps}", ours, ref[torch.float32],
                 ref[torch.float64], args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
