#!/usr/bin/python3
"""Writes small models in the forms that opsets 18..21 introduced, for
newer-opsets.test: python3 newer_opsets.py OUT_DIR. Debian's onnx 1.12
has no schemas for these opsets, so the models are built with
onnx.helper alone and never checked here (traincc's checker run is the
test)."""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model(name, nodes, inputs, outputs, opset, initializers=(), ir=10):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    result = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    result.ir_version = ir
    return result


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def main():
    out = sys.argv[1]
    x = tensor("x", ["N", 3, 4, 4])
    models = {}
    for opset in (18, 19, 20, 21):
        # Reduce* axes as inputs (a Constant node and an initializer), Pad
        # with axes, Split with num_outputs, AveragePool with dilations 1,
        # Cast with saturate.
        nodes = [
            helper.make_node("Constant", [], ["axes_hw"], name="axes_hw",
                             value=numpy_helper.from_array(
                                 np.array([2, 3], dtype=np.int64))),
            helper.make_node("Pad", ["x", "pads", "", "pad_axes"], ["p"],
                             name="pad", mode="reflect"),
            helper.make_node("AveragePool", ["p"], ["a"], name="pool",
                             kernel_shape=[2, 2], dilations=[1, 1]),
            helper.make_node("ReduceMean", ["a", "axes_hw"], ["m"],
                             name="mean", keepdims=0),
            helper.make_node("ReduceMax", ["a", "axis1"], ["mx"], name="max"),
            helper.make_node("ReduceMax", ["mx"], ["all"], name="max_all",
                             keepdims=0),
            helper.make_node("Cast", ["m"], ["c"], name="cast",
                             to=TensorProto.FLOAT, saturate=1),
            helper.make_node("Add", ["c", "all"], ["y"], name="add"),
        ]
        inits = [ints("pads", [1, 1, 1, 1]), ints("pad_axes", [-2, -1]),
                 ints("axis1", [1])]
        models["opset%d" % opset] = model(
            "newer", nodes, [x], [tensor("y", ["N", 3])], opset, inits)
    # A non-constant axes input.
    models["dynamic_axes"] = model(
        "dynamic_axes",
        [helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean")],
        [x, helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [tensor("y", ["N", 3, 4, 4])], 18)
    # Pad in wrap mode (opset 19).
    models["wrap"] = model(
        "wrap",
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                          mode="wrap")],
        [x], [tensor("y", ["N", 3, 6, 6])], 19,
        [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])])
    # Ops traincc does not import, new (Gelu) or changed (Split with
    # num_outputs) after opset 17, next to one that never changed (Erf):
    # all listed by the legalisation, none by the checker.
    models["unsupported"] = model(
        "unsupported",
        [helper.make_node("Gelu", ["x"], ["g"], name="gelu"),
         helper.make_node("Split", ["x"], ["s0", "s1"], name="split", axis=1,
                          num_outputs=2),
         helper.make_node("Erf", ["x"], ["e"], name="erf"),
         helper.make_node("Add", ["g", "e"], ["y"], name="add")],
        [tensor("x", ["N", 4])], [tensor("y", ["N", 4])], 20)
    for name, proto in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(proto.SerializeToString())


if __name__ == "__main__":
    main()
