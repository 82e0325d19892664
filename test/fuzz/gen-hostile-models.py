#!/usr/bin/python3
"""Writes single-node ONNX models with hostile values, one op at a time.

For every default-domain op schema of opsets 1 to 17 (each version), it
writes the op with plain inputs, with inputs of unexpected ranks, with its
integer inputs as constants of hostile values (0, -1, INT64_MIN,
INT64_MAX), and with each integer attribute set to such values in turn.
libonnx 1.12's shape inference divides by or indexes with some of them
unchecked (see InferenceShield in ModelLoader.cpp); run-fuzz.sh adds these
models to the fuzzer's seeds, so every one of them is imported once per run
and mutated from there.
    gen-hostile-models.py OUTPUT_DIR
Needs python3-onnx (/usr/bin/python3 on Debian).
"""
import os
import sys

from onnx import TensorProto as T
from onnx import defs
from onnx import helper as h

MIN, MAX = -(2**63), 2**63 - 1
HOSTILE_INTS = [0, -1, MIN, MAX]
HOSTILE_LISTS = [[0, 0], [-1, -1], [MIN, MIN], [MAX, MAX], [0, 0, 0, 0],
                 [MAX, MAX, MAX, MAX], [1, 1, MIN, MAX]]
TYPES = {'tensor(float)': T.FLOAT, 'tensor(int64)': T.INT64,
         'tensor(int32)': T.INT32, 'tensor(bool)': T.BOOL}
AttrType = defs.OpSchema.AttrType


def input_type(schema, formal):
    allowed = [formal.typeStr]
    for constraint in schema.type_constraints:
        if constraint.type_param_str == formal.typeStr:
            allowed = list(constraint.allowed_type_strs)
    for preferred in TYPES:
        if preferred in allowed:
            return TYPES[preferred]
    return None


def required_attributes(schema):
    """Plain values for required attributes; None when one cannot be made."""
    values = {}
    for name, attr in schema.attributes.items():
        if not attr.required:
            continue
        if attr.type == AttrType.INTS:
            values[name] = [1, 1]
        elif attr.type == AttrType.INT:
            values[name] = 1
        elif attr.type == AttrType.FLOAT:
            values[name] = 1.0
        elif attr.type == AttrType.FLOATS:
            values[name] = [1.0, 1.0]
        elif attr.type == AttrType.STRING:
            values[name] = 'ij->ij'
        elif attr.type == AttrType.TENSOR:
            values[name] = h.make_tensor('t', T.FLOAT, [], [1.0])
        else:
            return None
    return values


def make_model(schema, attrs, int_values, ranks=None, required_only=False):
    """int_values: (values, dims) for integer inputs, or None for plain;
    ranks: the rank of each input (default 4), all as graph inputs;
    required_only: leave out the trailing optional inputs."""
    base = required_attributes(schema)
    if base is None:
        return None
    base.update(attrs)
    inputs, initializers, names = [], [], []
    formals = list(schema.inputs)
    while required_only and formals and \
            formals[-1].option == defs.OpSchema.FormalParameterOption.Optional:
        formals.pop()
    for index, formal in enumerate(formals):
        elem = input_type(schema, formal)
        if elem is None:
            return None
        name = 'in%d' % index
        names.append(name)
        if ranks is not None:
            rank = ranks[min(index, len(ranks) - 1)]
            inputs.append(h.make_tensor_value_info(name, elem, [3] * rank))
        elif elem in (T.INT64, T.INT32) and int_values is not None:
            values, dims = int_values
            if elem == T.INT32:
                values = [max(-2**31, min(2**31 - 1, v)) for v in values]
            initializers.append(h.make_tensor(name, elem, dims, values))
        else:
            inputs.append(h.make_tensor_value_info(name, elem, [2, 4, 4, 4]))
    outputs = ['out%d' % index for index in range(len(schema.outputs))]
    if not outputs:
        return None
    node = h.make_node(schema.name, names, outputs, **base)
    graph = h.make_graph(
        [node], 'hostile', inputs,
        [h.make_tensor_value_info(outputs[0], T.FLOAT, [1])], initializers)
    model = h.make_model(graph, opset_imports=[
        h.make_opsetid('', schema.since_version)])
    # Opsets below 7 take the version converter path of the loader.
    model.ir_version = 8
    return model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    count = 0

    def write(model, tag):
        nonlocal count
        if model is None:
            return
        path = os.path.join(out, '%05d_%s.onnx' % (count, tag))
        with open(path, 'wb') as f:
            f.write(model.SerializeToString())
        count += 1

    for schema in defs.get_all_schemas_with_history():
        if schema.domain != '' or schema.since_version > 17:
            continue
        tag = '%s_v%d' % (schema.name, schema.since_version)
        write(make_model(schema, {}, None), tag)
        for value in HOSTILE_INTS:
            write(make_model(schema, {}, ([value], [])), tag + '_scalar')
            write(make_model(schema, {}, ([value] * 4, [4])), tag + '_vector')
        # Inputs of unexpected ranks: some inference functions index the
        # dimensions of an input unchecked.
        for ranks in ([0], [1], [2], [5], [4, 1], [1, 4], [4, 0]):
            for required_only in (False, True):
                write(make_model(schema, {}, None, ranks, required_only),
                      tag + '_rank' + '_'.join(map(str, ranks)) +
                      ('_required' if required_only else ''))
        for name, attr in schema.attributes.items():
            values = (HOSTILE_INTS if attr.type == AttrType.INT else
                      HOSTILE_LISTS if attr.type == AttrType.INTS else [])
            for value in values:
                write(make_model(schema, {name: value}, None),
                      tag + '_' + name)
    print('%d models in %s' % (count, out))


if __name__ == '__main__':
    main()
