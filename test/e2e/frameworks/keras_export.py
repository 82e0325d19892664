"""Exports a Keras 3 model (TensorFlow backend) to ONNX with what trains.

tf2onnx's defaults write an inference graph: TensorFlow's constant folding
(grappler) folds BatchNormalization into the convolutions and drops zero
biases, Keras 3 computes BatchNormalization as separate arithmetic that
tf2onnx does not turn back into a BatchNormalization node, and tf2onnx's own
optimizers fuse Conv+BatchNormalization and merge initializers that happen
to hold equal values (a BatchNorm's zero beta and zero running mean become
one tensor). export_for_training() turns all three off for one export and
writes Keras's BatchNorm momentum into the ONNX nodes (ONNX's momentum is
Keras's: running = momentum * running + (1 - momentum) * batch).

This is the recipe of the README's "Exporting models for training"; the
tests in this folder use it.
"""
import contextlib

import onnx
import tensorflow as tf
import tf2onnx
import tf2onnx.tf_loader


@contextlib.contextmanager
def _fused_batch_norm():
    """Keras 3 BatchNormalization over the last axis of a 4-d input as
    FusedBatchNormV3 (inference form), which tf2onnx converts to ONNX
    BatchNormalization; other inputs keep Keras's arithmetic."""
    import keras.src.backend.tensorflow.nn as keras_nn
    original = keras_nn.batch_normalization

    def fused(x, mean, variance, axis, offset=None, scale=None,
              epsilon=1e-3):
        if len(x.shape) == 4 and axis in (-1, 3) and offset is not None \
                and scale is not None:
            y, _, _ = tf.compat.v1.nn.fused_batch_norm(
                x, scale, offset, mean, variance, epsilon=epsilon,
                data_format="NHWC", is_training=False)
            return y
        return original(x, mean, variance, axis, offset, scale, epsilon)

    keras_nn.batch_normalization = fused
    try:
        yield
    finally:
        keras_nn.batch_normalization = original


@contextlib.contextmanager
def _without_grappler():
    """TensorFlow's constant folding off (it folds BatchNorm into the
    convolutions and drops zero biases)."""
    original = tf2onnx.tf_loader.tf_optimize
    tf2onnx.tf_loader.tf_optimize = lambda inputs, outputs, graph: graph
    try:
        yield
    finally:
        tf2onnx.tf_loader.tf_optimize = original


def export_for_training(model, path, sample_shape, opset=17):
    """Writes `model` (a Keras model taking one [batch, *sample_shape]
    input) to `path` with a dynamic batch axis, BatchNormalization nodes
    carrying Keras's momentum and epsilon, and every weight an initializer.
    Returns the ModelProto."""
    import keras
    spec = (tf.TensorSpec((None,) + tuple(sample_shape), tf.float32,
                          name="input"),)
    with _fused_batch_norm(), _without_grappler():
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec,
                                              opset=opset, optimizers={})
    momenta = [layer.momentum for layer in model.layers
               if isinstance(layer, keras.layers.BatchNormalization)]
    norms = [node for node in proto.graph.node
             if node.op_type == "BatchNormalization"]
    if len(norms) != len(momenta):
        raise RuntimeError(f"{len(momenta)} Keras BatchNormalization layers "
                           f"but {len(norms)} ONNX BatchNormalization nodes")
    for node, momentum in zip(norms, momenta):
        for attr in list(node.attribute):
            if attr.name == "momentum":
                node.attribute.remove(attr)
        node.attribute.append(onnx.helper.make_attribute("momentum",
                                                         float(momentum)))
    onnx.save(proto, path)
    return proto
