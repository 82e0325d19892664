"""Writes a linear classifier with a 2048x2048 weight (16 MiB) as ONNX:
large enough that the trainer's size shows what its image holds."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
width = 2048
weight = (rng.standard_normal((width, width)) * 0.01).astype(np.float32)
bias = np.zeros(width, np.float32)
graph = helper.make_graph(
    [helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"], transB=1)],
    "wide_linear",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", width])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", width])],
    [numpy_helper.from_array(weight, "fc.weight"),
     numpy_helper.from_array(bias, "fc.bias")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
