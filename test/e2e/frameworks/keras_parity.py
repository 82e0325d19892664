#!/usr/bin/env python3
"""Keras/TensorFlow parity of a compiled trainer.

A Keras CNN in NHWC (conv without bias -> BatchNorm -> ReLU -> max pool ->
conv with bias -> ReLU -> BatchNorm -> flatten -> dense) is exported with
keras_export.export_for_training (tf2onnx), compiled by traincc and trained
with plain SGD on fixed random data in file order; TensorFlow trains the
same model from the same weights on the same batches with a GradientTape
loop and keras.optimizers.SGD, in float32 and in float64. Keras's BatchNorm
conventions reach the trainer through the export: momentum 0.99 (ONNX's
momentum is Keras's, PyTorch's 0.01), epsilon 1e-3, and the running variance
updated with the biased batch variance (traincc's importer reads that from
the producer, tf2onnx). Prints the relative errors as
test/e2e/parity/parity.py does and exits 1 when one is out of tolerance.

Run with the TensorFlow environment of scripts/setup-framework-venvs.sh.
"""
import argparse
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# oneDNN's kernels reorder float sums; the reference is TensorFlow's own.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trainer_parity import (describe_export, initializer_source,  # noqa: E402,E501
                            judge, report_import, train_on_random_data)

SAMPLE = (12, 12, 3)
CLASSES = 10


def build(keras):
    inputs = keras.Input(SAMPLE)
    x = keras.layers.Conv2D(8, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.MaxPooling2D()(x)
    # A bias that BatchNorm does not cancel (before it, its gradient is
    # zero and its value rounding noise).
    x = keras.layers.Conv2D(8, 3, padding="same")(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Flatten()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inputs, outputs)


def build_upsampling(keras):
    """A decoder's upsampling in NHWC: UpSampling2D nearest (Keras 3 writes
    a repeat, tf2onnx an ONNX Tile on computed data) and bilinear (ONNX
    Resize, half_pixel), between convolutions and a BatchNorm."""
    inputs = keras.Input(SAMPLE)
    x = keras.layers.Conv2D(4, 3, strides=2, padding="same")(inputs)
    x = keras.layers.UpSampling2D(2)(x)
    x = keras.layers.Conv2D(4, 3, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = keras.layers.MaxPooling2D(4)(x)
    x = keras.layers.Flatten()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
    return keras.Model(inputs, outputs)


MODELS = {"cnn": build, "upsampling": build_upsampling}


def keras_reference(keras, tf, weights, x, y, args, dtype):
    """Trains a fresh model holding `weights` in `dtype` with a GradientTape
    loop and plain SGD; returns the step losses and the model."""
    keras.config.set_floatx(dtype)
    model = MODELS[args.model](keras)
    model.set_weights([w.astype(dtype) for w in weights])
    opt = keras.optimizers.SGD(learning_rate=args.lr)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for step in range(args.steps):
        i = step * args.batch
        xb = tf.constant(x[i:i + args.batch].astype(dtype))
        yb = tf.constant(y[i:i + args.batch])
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    keras.config.set_floatx("float32")
    return losses, model


def onnx_names(proto):
    """The ONNX initializer of each Keras weight, in model.weights order of
    the layers (conv kernel [, bias], BN gamma, beta, mean, variance, dense
    kernel, bias), with the layout change of conv kernels (HWIO -> OIHW).
    Read from the graph: Conv, BatchNormalization, MatMul and Add nodes in
    order."""
    inits = {i.name for i in proto.graph.initializer}
    source = initializer_source(proto)
    names = []
    for node in proto.graph.node:
        if node.op_type == "Conv":
            names.append(("param", source(node.input[1]), "conv"))
            if len(node.input) > 2 and node.input[2]:
                names.append(("param", source(node.input[2]), None))
        elif node.op_type == "BatchNormalization":
            names += [("param", source(node.input[1]), None),
                      ("param", source(node.input[2]), None),
                      ("stat", source(node.input[3]), None),
                      ("stat", source(node.input[4]), None)]
        elif node.op_type == "MatMul":
            names.append(("param", source(node.input[1]), None))
        elif node.op_type == "Add" and any(i in inits for i in node.input):
            names.append(("param", [i for i in node.input if i in inits][0],
                          None))
    return names


def state(model, names):
    """{ONNX name: (kind, value in ONNX layout)} of a Keras model."""
    weights = [w.numpy() for w in model.weights]
    if len(weights) != len(names):
        raise RuntimeError(f"{len(weights)} Keras weights, {len(names)} "
                           "ONNX initializers found")
    out = {}
    for (kind, name, layout), value in zip(names, weights):
        if layout == "conv":
            value = value.transpose(3, 2, 0, 1)
        out[name] = (kind, value)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--workdir")
    parser.add_argument("--model", choices=sorted(MODELS), default="cnn")
    parser.add_argument("--export", choices=["recipe", "default"],
                        default="recipe",
                        help="default: tf2onnx's defaults, compiled only "
                             "(prints traincc's messages)")
    args = parser.parse_args()

    import keras
    import tensorflow as tf
    from keras_export import export_for_training

    keras.utils.set_random_seed(0)
    model = MODELS[args.model](keras)
    weights = model.get_weights()
    work = args.workdir or tempfile.mkdtemp(prefix="keras-parity-")
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    if args.export == "default":
        import tf2onnx
        spec = (tf.TensorSpec((None,) + SAMPLE, tf.float32, name="input"),)
        tf2onnx.convert.from_keras(model, input_signature=spec,
                                   output_path=onnx_path)
        return report_import(args.traincc, onnx_path, args.batch)
    proto = export_for_training(model, onnx_path, SAMPLE)
    names = onnx_names(proto)
    describe_export(proto)
    x, y, ours = train_on_random_data(args.traincc, onnx_path, SAMPLE, CLASSES,
                                      args, work)
    ref = {}
    for dtype in ("float32", "float64"):
        losses, trained = keras_reference(keras, tf, weights, x, y, args,
                                          dtype)
        ref[dtype] = (losses, state(trained, names))
    return judge(f"parity keras {args.model} sgd steps={args.steps}", ours,
                 ref["float32"], ref["float64"], args.tolerance)


if __name__ == "__main__":
    sys.exit(main())
