#!/usr/bin/env python3
"""JAX/Flax parity of a compiled trainer.

A Flax NNX CNN in NHWC (conv without bias -> BatchNorm -> ReLU -> max pool
-> conv with bias -> ReLU -> BatchNorm -> flatten -> linear) is exported
with jax2onnx (to_onnx with a symbolic batch 'B', opset 21), compiled by
traincc and trained with plain SGD on fixed random data in file order; Flax
trains the same model from the same weights on the same batches with
optax.sgd, in float32 and in float64. Flax's BatchNorm conventions reach
the trainer through the export: momentum 0.99 (ONNX's momentum is Flax's,
PyTorch's 0.01), epsilon 1e-5, and the running variance updated with the
biased batch variance (traincc's importer reads that from the producer,
jax2onnx). Prints the relative errors as test/e2e/parity/parity.py does
and exits 1 when one is out of tolerance.

Run with the JAX environment of scripts/setup-framework-venvs.sh.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trainer_parity import (describe_export, initializer_source,  # noqa: E402,E501
                            judge, train_on_random_data)

SAMPLE = (12, 12, 3)
CLASSES = 10


def make_model_class(nnx):
    class CNN(nnx.Module):
        def __init__(self, dtype, rngs):
            kw = dict(dtype=dtype, param_dtype=dtype, rngs=rngs)
            self.conv1 = nnx.Conv(3, 8, (3, 3), padding="SAME",
                                  use_bias=False, **kw)
            self.bn1 = nnx.BatchNorm(8, **kw)
            # A bias that BatchNorm does not cancel.
            self.conv2 = nnx.Conv(8, 8, (3, 3), padding="SAME", **kw)
            self.bn2 = nnx.BatchNorm(8, **kw)
            self.head = nnx.Linear(8 * 6 * 6, CLASSES, **kw)

        def __call__(self, x):
            x = nnx.relu(self.bn1(self.conv1(x)))
            x = nnx.max_pool(x, window_shape=(2, 2), strides=(2, 2))
            x = self.bn2(nnx.relu(self.conv2(x)))
            return self.head(x.reshape(x.shape[0], -1))

        def in_graph_order(self):
            """(layer, [(kind, variable name, layout)]) in the order the
            export's Conv, BatchNormalization and Gemm nodes appear."""
            conv = [("param", "kernel", "conv")]
            norm = [("param", "scale", None), ("param", "bias", None),
                    ("stat", "mean", None), ("stat", "var", None)]
            return [(self.conv1, conv), (self.bn1, norm),
                    (self.conv2, conv + [("param", "bias", None)]),
                    (self.bn2, norm),
                    (self.head, [("param", "kernel", None),
                                 ("param", "bias", None)])]
    return CNN


def onnx_names(proto):
    """The initializers of the Conv, BatchNormalization and Gemm nodes'
    weights, node by node in graph order."""
    source = initializer_source(proto)
    return [[source(i) for i in node.input[1:] if i]
            for node in proto.graph.node
            if node.op_type in ("Conv", "BatchNormalization", "Gemm")]


def state(model, names):
    """{ONNX name: (kind, value in ONNX layout)} of a Flax model."""
    out = {}
    layers = model.in_graph_order()
    if len(layers) != len(names):
        raise RuntimeError(f"{len(layers)} Flax layers, {len(names)} ONNX "
                           "nodes with weights")
    for (layer, variables), node_inputs in zip(layers, names):
        for (kind, attr, layout), name in zip(variables, node_inputs):
            value = np.asarray(getattr(layer, attr).get_value())
            if layout == "conv":
                value = value.transpose(3, 2, 0, 1)  # HWIO -> OIHW
            out[name] = (kind, value)
    return out


def flax_reference(nnx, optax, jnp, CNN, initial, x, y, args, dtype):
    """Trains a fresh model holding `initial` (an nnx state) in `dtype`
    with optax.sgd; returns the step losses and the model."""
    model = CNN(dtype, nnx.Rngs(0))
    nnx.update(model, jax_tree_cast(initial, dtype))
    model.train()
    optimizer = nnx.Optimizer(model, optax.sgd(args.lr), wrt=nnx.Param)

    def loss_fn(model, xb, yb):
        logits = model(xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits,
                                                               yb).mean()

    @nnx.jit
    def train_step(model, optimizer, xb, yb):
        loss, grads = nnx.value_and_grad(loss_fn)(model, xb, yb)
        optimizer.update(model, grads)
        return loss

    losses = []
    for step in range(args.steps):
        i = step * args.batch
        xb = jnp.asarray(x[i:i + args.batch], dtype=dtype)
        yb = jnp.asarray(y[i:i + args.batch])
        losses.append(float(train_step(model, optimizer, xb, yb)))
    return losses, model


def jax_tree_cast(tree, dtype):
    import jax
    return jax.tree.map(lambda a: a.astype(dtype), tree)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--workdir")
    args = parser.parse_args()

    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    import optax
    from flax import nnx
    from jax2onnx import to_onnx

    CNN = make_model_class(nnx)
    model = CNN(jnp.float32, nnx.Rngs(0))
    initial = nnx.state(model)
    work = args.workdir or tempfile.mkdtemp(prefix="flax-parity-")
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    # The recipe: the model in evaluation form (BatchNorm with its running
    # statistics, which jax2onnx writes as BatchNormalization), a symbolic
    # batch axis, an opset traincc reads.
    model.eval()
    proto = to_onnx(model, [("B",) + SAMPLE], opset=21)
    import onnx
    onnx.save(proto, onnx_path)
    names = onnx_names(proto)
    describe_export(proto)
    x, y, ours = train_on_random_data(args.traincc, onnx_path, SAMPLE, CLASSES,
                                      args, work)
    ref = {}
    for name, dtype in (("float32", jnp.float32), ("float64", jnp.float64)):
        losses, trained = flax_reference(nnx, optax, jnp, CNN, initial, x, y,
                                         args, dtype)
        ref[name] = (losses, state(trained, names))
    return judge(f"parity flax optax.sgd steps={args.steps}", ours,
                 ref["float32"], ref["float64"], args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
