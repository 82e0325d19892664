#!/usr/bin/python3
"""Rewrites examples/fashion_mnist/cnn.onnx as current PyTorch would write
it at opset 20 and IR version 10, using the opset-18 forms, for
opset20-cnn.test: python3 restamp_cnn.py IN.onnx OUT.onnx.

- The second convolution's padding becomes a Pad node with an `axes` input
  (its pads cover H and W only) in front of an unpadded Conv: the same
  function.
- A squeeze-and-excite style gate after the last MaxPool, x * sigmoid(
  ReduceMean(x) - ReduceMax(x)) over H and W, with both axes given as
  inputs (a Constant node and an initializer).
Also writes 8 random 1x28x28 samples and labels next to OUT, as x.npy and
y.npy."""

import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    model = onnx.load(sys.argv[1])
    graph = model.graph
    nodes = list(graph.node)
    convs = [n for n in nodes if n.op_type == "Conv"]
    pools = [n for n in nodes if n.op_type == "MaxPool"]
    conv = convs[1]
    for attr in conv.attribute:
        if attr.name == "pads":
            del attr.ints[:]
            attr.ints.extend([0, 0, 0, 0])
    pad = helper.make_node("Pad", [conv.input[0], "pads_hw", "", "axes_hw"],
                           ["padded"], name="/features/Pad")
    conv.input[0] = "padded"
    graph.initializer.extend([
        numpy_helper.from_array(np.array([1, 1, 1, 1], np.int64), "pads_hw"),
        numpy_helper.from_array(np.array([2, 3], np.int64), "axes_hw")])

    pooled = pools[-1].output[0]
    gate = [
        helper.make_node("Constant", [], ["se_axes"], name="/se/Constant",
                         value=numpy_helper.from_array(
                             np.array([-2, -1], np.int64))),
        helper.make_node("ReduceMean", [pooled, "se_axes"], ["se_mean"],
                         name="/se/ReduceMean", keepdims=1),
        helper.make_node("ReduceMax", [pooled, "axes_hw"], ["se_max"],
                         name="/se/ReduceMax", keepdims=1),
        helper.make_node("Sub", ["se_mean", "se_max"], ["se_diff"],
                         name="/se/Sub"),
        helper.make_node("Sigmoid", ["se_diff"], ["se_gate"],
                         name="/se/Sigmoid"),
        helper.make_node("Mul", [pooled, "se_gate"], ["se_out"],
                         name="/se/Mul"),
    ]
    for node in nodes:
        if node is not pools[-1]:
            for index, name in enumerate(node.input):
                if name == pooled:
                    node.input[index] = "se_out"
    rebuilt = []
    for node in nodes:
        if node is conv:
            rebuilt.append(pad)
        rebuilt.append(node)
        if node is pools[-1]:
            rebuilt.extend(gate)
    del graph.node[:]
    graph.node.extend(rebuilt)
    del graph.value_info[:]
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 20))
    model.ir_version = 10
    onnx.save(model, sys.argv[2])

    folder = os.path.dirname(os.path.abspath(sys.argv[2]))
    rng = np.random.default_rng(0)
    np.save(os.path.join(folder, "x.npy"),
            rng.random((8, 1, 28, 28), dtype=np.float32))
    np.save(os.path.join(folder, "y.npy"),
            rng.integers(0, 10, 8).astype(np.int64))


if __name__ == "__main__":
    main()
