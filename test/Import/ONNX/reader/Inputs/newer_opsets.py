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
    # Ops traincc does not import, new after opset 17 (Mish, CenterCropPad),
    # next to one that never changed (Erf): all listed by the legalisation,
    # none by the checker.
    models["unsupported"] = model(
        "unsupported",
        [helper.make_node("Mish", ["x"], ["g"], name="mish"),
         helper.make_node("CenterCropPad", ["x", "crop"], ["r"], name="crop"),
         helper.make_node("Erf", ["x"], ["e"], name="erf"),
         helper.make_node("Add", ["g", "e"], ["y"], name="add")],
        [tensor("x", ["N", 4])], [tensor("y", ["N", 4])], 20,
        [ints("crop", [2, 4])])
    # Resize-19, hidden from the checker: scales for the listed axes only
    # (Resize-18 `axes`) and half_pixel_symmetric coordinates (19); the
    # Relu after it gets its type from the legalised value.
    models["resize19"] = model(
        "resize19",
        [helper.make_node("Resize", ["x", "", "scales"], ["r"], name="resize",
                          mode="linear", axes=[2, 3],
                          coordinate_transformation_mode=
                          "half_pixel_symmetric"),
         helper.make_node("Relu", ["r"], ["y"], name="relu")],
        [tensor("x", ["N", 2, 3, 4])], [tensor("y", ["N", 2, 6, 6])], 19,
        [helper.make_tensor("scales", TensorProto.FLOAT, [2], [2.0, 1.5])])
    # Ops new in opsets 18..20 that traincc imports, hidden from the
    # checker and shape inference (which know opset 17): Gelu (tanh),
    # Split with num_outputs (uneven: 2, 2, 1), GroupNormalization, and
    # CastLike-19 feeding a LayerNormalization.
    models["newer_ops"] = model(
        "newer_ops",
        [helper.make_node("Gelu", ["x"], ["g"], name="gelu",
                          approximate="tanh"),
         helper.make_node("Split", ["g"], ["s0", "s1", "s2"], name="split",
                          axis=1, num_outputs=3),
         helper.make_node("Concat", ["s0", "s1", "s2"], ["c"], name="cat",
                          axis=1),
         helper.make_node("GroupNormalization", ["c", "gs", "gb"], ["n"],
                          name="group_norm", num_groups=5),
         helper.make_node("CastLike", ["n", "like"], ["l"], name="cast_like"),
         helper.make_node("LayerNormalization", ["l", "ls", "lb"], ["y"],
                          name="layer_norm")],
        [tensor("x", ["N", 5])], [tensor("y", ["N", 5])], 20,
        [helper.make_tensor("gs", TensorProto.FLOAT, [5], [1.0] * 5),
         helper.make_tensor("gb", TensorProto.FLOAT, [5], [0.0] * 5),
         helper.make_tensor("like", TensorProto.FLOAT, [1], [0.0]),
         helper.make_tensor("ls", TensorProto.FLOAT, [5], [1.0] * 5),
         helper.make_tensor("lb", TensorProto.FLOAT, [5], [0.0] * 5)])
    for name, proto in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(proto.SerializeToString())


if __name__ == "__main__":
    main()
