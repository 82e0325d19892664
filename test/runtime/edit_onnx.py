#!/usr/bin/env python3
# Rewrites the initializers of an ONNX model for the --weights tests
# (test/runtime/weights*.test):
#   edit_onnx.py IN OUT float-data         every float initializer stored in
#                                          float_data instead of raw_data
#   edit_onnx.py IN OUT shape NAME D0,D1.. NAME replaced by zeros of that shape
#   edit_onnx.py IN OUT double NAME        NAME stored as float64
#   edit_onnx.py IN OUT external NAME      NAME's data in an external file
#   edit_onnx.py IN OUT duplicate NAME     a second initializer called NAME
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def find(model, name):
    for t in model.graph.initializer:
        if t.name == name:
            return t
    sys.exit("no initializer " + name)


def main():
    src, dst, op, *args = sys.argv[1:]
    model = onnx.load(src)
    if op == "float-data":
        for t in model.graph.initializer:
            if t.data_type == TensorProto.FLOAT:
                values = numpy_helper.to_array(t).ravel()
                t.ClearField("raw_data")
                t.float_data[:] = values.tolist()
    elif op == "shape":
        shape = [int(d) for d in args[1].split(",")]
        find(model, args[0]).CopyFrom(numpy_helper.from_array(
            np.zeros(shape, dtype=np.float32), args[0]))
    elif op == "double":
        t = find(model, args[0])
        t.CopyFrom(numpy_helper.from_array(
            numpy_helper.to_array(t).astype(np.float64), args[0]))
    elif op == "external":
        t = find(model, args[0])
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", "weights.bin"
    elif op == "duplicate":
        model.graph.initializer.append(find(model, args[0]))
    else:
        sys.exit("unknown edit " + op)
    with open(dst, "wb") as f:
        f.write(model.SerializeToString())


if __name__ == "__main__":
    main()
