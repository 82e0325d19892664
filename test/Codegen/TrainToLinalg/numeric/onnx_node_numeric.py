#!/usr/bin/python3
"""Numerical check of traincc's Train -> linalg lowering on ONNX test data.

For each ONNX backend test (libonnx-testdata: data/node and
data/pytorch-converted) whose ops traincc imports and whose data is
float32, this script

  1. makes the graph inputs that traincc needs at compile time constants of
     their test values: non-float inputs (shapes, axes, indices, the
     training_mode flag) and float operands such as clip bounds become
     Constant nodes, BatchNorm parameters and running statistics become
     initializers (they are state); with --dtype it then retypes the model's
     float32 tensors to f64, f16 or bf16;
  2. imports it with `traincc --emit=train-mlir --print-weights`;
  3. replaces each `train.read_param` by an `arith.constant` of the
     parameter's initial value (parameter placement is a later pass);
  4. lowers with `traincc-opt --traincc-convert-train-to-linalg`;
  5. appends a `main` that calls the forward function on the test inputs
     (dense constants, exact hex) and prints each output's bit pattern;
  6. lowers to LLVM with upstream mlir-opt passes (one-shot bufferization,
     linalg to loops) and runs it with mlir-runner;
  7. compares with test_data_set_0/output_*.pb: for f32 within rtol 1e-4 /
     atol 1e-5 (|got - want| <= atol + rtol * |want|), NaN where NaN is
     expected, infinities exactly (see DTYPES for the others).

Prints a table (test, ops, max abs / rel error, result), a per-op summary,
the Train ops the passing tests exercised, the tests skipped and why, and
totals. Exit status 1 when a test mismatches or fails after import, or when
fewer than --min-passed tests pass. Import errors are listed but are the
importer's (test/e2e/onnx-conformance.test checks the importer).
Run with /usr/bin/python3 (Debian's onnx and numpy).
"""

import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "lib"))
from mlir_harness import Failure, run, run_main, short, tensor_shape  # noqa: E402

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
DEFAULT_LLVM_BIN = "/usr/lib/llvm-22/bin"
DEFAULT_LLVM_LIB = "/usr/lib/llvm-22/lib"
SUITES = ("node", "pytorch-converted")
DEFAULT_DOMAINS = ("", "ai.onnx")

# --dtype: the float type the model is retyped to before import (its float32
# tensors, values and constants), with the tolerance against the float32
# expected outputs: |got - want| <= atol * scale + rtol * |want|. f32 and f64
# use scale 1; for f16 and bf16 the inputs themselves are rounded, and that
# error propagates in proportion to the outputs' magnitude, so scale is
# max(1, max |want|) of the output.
DTYPES = {
    "f32": (onnx.TensorProto.FLOAT, 1e-4, 1e-5, False),
    "f64": (onnx.TensorProto.DOUBLE, 1e-4, 1e-5, False),
    "f16": (onnx.TensorProto.FLOAT16, 1e-2, 1e-2, True),
    "bf16": (onnx.TensorProto.BFLOAT16, 6e-2, 6e-2, True),
}


# --representative: a few tests per op and variant (grouped, depthwise, 1-D
# and 3-D convolution; padded, ceil-mode, dilated pooling; gemm attributes;
# broadcasting; negative-step slices ...), for the runs in other element
# types, which would otherwise repeat the whole float32 run.
REPRESENTATIVE = re.compile(
    r"/test_(conv_with_strides_padding|Conv1d_groups|Conv2d_depthwise_padded|"
    r"Conv2d_groups|Conv3d_dilated_strided|Conv2d_strided|"
    r"averagepool_2d_pads(_count_include_pad)?|averagepool_2d_ceil|"
    r"AvgPool3d_stride|maxpool_2d_pads|maxpool_2d_ceil|"
    r"MaxPool1d_stride_padding_dilation|MaxPool3d_stride_padding|"
    r"gemm_all_attributes|gemm_default_vector_bias|Linear|matmul_4d|"
    r"softmax_(axis_0|large_number)|logsoftmax_(axis_2|large_number)|"
    r"batchnorm_epsilon|BatchNorm2d_eval|globalaveragepool|sigmoid|tanh|"
    r"relu|leakyrelu|clip|add_bcast|sub_bcast|mul_bcast|div_bcast|"
    r"flatten_axis2|reshape_reordered_all_dims|transpose_all_permutations_3|"
    r"concat_3d_axis_1|slice_neg_steps|PixelShuffle)$")

# Tests whose inputs do not survive rounding to a low-precision type, so that
# the float32 expected outputs do not apply: 10000 + small steps collapse to
# one value at f16's spacing of 8 (bf16: 64).
LOW_PRECISION_SKIPS = re.compile(r"_large_number$")

# Tests whose expected outputs follow another reading of the specification
# than traincc's, with the reason. Resize with align_corners and scales:
# ONNX's reference divides by scale * length - 1 (4 * 0.6 - 1 = 1.4), the
# specification's text, ONNX Runtime, PyTorch and TensorFlow by the output
# length minus one (floor(4 * 0.6) - 1 = 1), which traincc follows so that
# a PyTorch export trains as PyTorch does.
SPEC_READING_SKIPS = {
    "node/test_resize_downsample_scales_cubic_align_corners":
        "align_corners over the unrounded output length (ONNX reference only)",
    "node/test_resize_downsample_scales_linear_align_corners":
        "align_corners over the unrounded output length (ONNX reference only)",
}


def float_bytes(array, element):
    """Little-endian bytes of `array` as MLIR float type `element`; bf16
    rounds to nearest even."""
    if element == "bf16":
        bits = np.ascontiguousarray(array, dtype="<f4").view("<u4").astype(
            np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype("<u2").tobytes()
    dtype = {"f32": "<f4", "f64": "<f8", "f16": "<f2"}.get(element)
    if dtype is None:
        raise Failure("harness", "element type %s is not supported" % element)
    return np.ascontiguousarray(array, dtype=dtype).tobytes()


def retyped_tensor(tensor, elem_type):
    """A float32 TensorProto converted to `elem_type` (others unchanged)."""
    if tensor.data_type != onnx.TensorProto.FLOAT:
        return tensor
    array = numpy_helper.to_array(tensor)
    out = onnx.TensorProto()
    out.name = tensor.name
    out.dims.extend(array.shape)
    out.data_type = elem_type
    element = {onnx.TensorProto.DOUBLE: "f64", onnx.TensorProto.FLOAT16: "f16",
               onnx.TensorProto.BFLOAT16: "bf16",
               onnx.TensorProto.FLOAT: "f32"}[elem_type]
    out.raw_data = float_bytes(array, element)
    return out


def retype_model(model, elem_type):
    """Retypes every float32 value, initializer and constant of the model."""
    if elem_type == onnx.TensorProto.FLOAT:
        return
    graph = model.graph
    for value in list(graph.input) + list(graph.output) + list(
            graph.value_info):
        tensor_type = value.type.tensor_type
        if tensor_type.elem_type == onnx.TensorProto.FLOAT:
            tensor_type.elem_type = elem_type
    for index, tensor in enumerate(graph.initializer):
        graph.initializer[index].CopyFrom(retyped_tensor(tensor, elem_type))
    for node in graph.node:
        if node.op_type in ("Cast", "CastLike"):
            raise Skip("Cast in a retyped model")
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                attr.t.CopyFrom(retyped_tensor(attr.t, elem_type))
            elif (node.op_type == "Constant" and
                  attr.name in ("value_float", "value_floats")):
                raise Skip("float-attribute Constant in a retyped model")


# Graph inputs of these types become Constant nodes (compile-time values).
CONSTANT_INPUT_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                        onnx.TensorProto.BOOL)
# Float operands that traincc takes at compile time only, by op type (they
# become Constant nodes): dropout ratio, range bounds, Resize scales. Clip
# bounds stay graph inputs (train.maximum / train.minimum). BN parameters
# and running statistics become initializers instead: they are trainable
# parameters and state.
COMPILE_TIME_INPUTS = {
    "Dropout": (1, 2),
    "Pad": (2,),
    "Range": (0, 1, 2),
    # Region of interest and scales (Upsample-9, Resize-10: scales only).
    "Resize": (1, 2),
    "Upsample": (1,),
}


class Skip(Exception):
    """A test that is not for this check, with the reason."""


class Result:
    def __init__(self, name, ops):
        self.name = name
        self.ops = ops
        self.status = None  # "pass", "mismatch", "fail", "skip"
        self.stage = ""
        self.message = ""
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.train_ops = set()


def load_tensor(path):
    proto = onnx.TensorProto()
    try:
        with open(path, "rb") as f:
            proto.ParseFromString(f.read())
        return proto.name, numpy_helper.to_array(proto)
    except Exception:  # sequences and optionals are not TensorProtos
        raise Skip("test value %s is not a plain tensor"
                   % os.path.basename(path))


def load_test_data(directory, graph_names):
    """Test values by graph name ('input_3.pb' holds the 4th name when the
    file does not say)."""
    values = {}
    for index, name in enumerate(graph_names):
        path = os.path.join(directory, "input_%d.pb" % index)
        if os.path.exists(path):
            stored, array = load_tensor(path)
            values[stored or name] = array
    return values


def op_types(graph):
    types = set()
    for node in graph.node:
        types.add(node.op_type if node.domain in DEFAULT_DOMAINS
                  else node.domain + ":" + node.op_type)
        for attr in node.attribute:
            if attr.type in (onnx.AttributeProto.GRAPH,
                             onnx.AttributeProto.GRAPHS):
                types.add("<subgraph>")
    return types


def attribute(node, name, default=None):
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def prepare_model(model, test_dir):
    """Checks that the test is for this harness and turns compile-time graph
    inputs into constants (step 1). Returns (model, float data inputs
    {name: array}, expected outputs [(name, array)], names of outputs not
    to compare {name: reason})."""
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    data_dir = os.path.join(test_dir, "test_data_set_0")
    values = load_test_data(data_dir, [v.name for v in inputs])
    outputs = []
    for index, value in enumerate(graph.output):
        path = os.path.join(data_dir, "output_%d.pb" % index)
        if not os.path.exists(path):
            raise Skip("no expected value for output %d" % index)
        stored, array = load_tensor(path)
        outputs.append((value.name, array))

    # traincc imports float32 models (as the importer's conformance test
    # does); other data types are not for this check.
    for name, array in outputs:
        if array.dtype != np.float32:
            raise Skip("output is %s, not float32" % array.dtype)

    # Inputs that traincc needs at compile time: non-float ones (shapes,
    # axes, indices, flags; see below) and these float operands.
    constant_inputs, state_inputs, unchecked = set(), set(), {}
    consumed = {name for node in graph.node for name in node.input}
    graph_outputs = {value.name for value in graph.output}
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            training = attribute(node, "training_mode", 0)
            # Opset 14+ training mode: outputs 1 and 2 (updated running
            # statistics) are checked; Y, normalised with the batch
            # statistics, is not what the forward function (the evaluation
            # graph, running statistics) computes, so it must be a graph
            # output that nothing else reads.
            if (training and model_opset(model) >= 14 and
                    node.output[0] in graph_outputs and
                    node.output[0] not in consumed):
                unchecked[node.output[0]] = (
                    "training-mode Y (batch statistics; the forward "
                    "function normalises with running statistics)")
            elif len(node.output) > 1 or training:
                raise Skip("training-mode BatchNormalization (outputs batch "
                           "statistics)")
            state_inputs.update(node.input[1:5])
        positions = COMPILE_TIME_INPUTS.get(node.op_type, ())
        constant_inputs.update(node.input[i] for i in positions
                               if i < len(node.input))
        if node.op_type == "Dropout":
            ratio = attribute(node, "ratio", 0.5)
            if len(node.input) > 1 and node.input[1]:
                ratio_value = values.get(node.input[1])
                if ratio_value is not None:
                    ratio = float(ratio_value)
            training = len(node.input) > 2 and node.input[2] and bool(
                values.get(node.input[2], np.array(False)))
            if training and ratio != 0:
                raise Skip("training-mode Dropout (random mask)")
    data_inputs, constants, state = {}, [], set()
    for value in inputs:
        array = values.get(value.name)
        if array is None:
            raise Skip("no test value for input '%s'" % value.name)
        elem_type = value.type.tensor_type.elem_type
        if elem_type not in CONSTANT_INPUT_TYPES + (onnx.TensorProto.FLOAT,):
            raise Skip("input is %s, not float32"
                       % onnx.TensorProto.DataType.Name(elem_type))
        if value.name in state_inputs:
            # BN parameters and statistics are state: initializers.
            graph.initializer.append(numpy_helper.from_array(array, value.name))
            state.add(value.name)
        elif value.name in constant_inputs or elem_type != onnx.TensorProto.FLOAT:
            constants.append(onnx.helper.make_node(
                "Constant", [], [value.name], name="input_" + value.name,
                value=numpy_helper.from_array(array, value.name)))
        else:
            data_inputs[value.name] = array
    # Constants go first so that the graph stays topologically sorted. A new
    # initializer stays a graph input where the IR version (< 4) wants it.
    nodes = constants + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [v for v in graph.input
            if v.name in data_inputs or v.name in initializers or
            (v.name in state and model.ir_version < 4)]
    del graph.input[:]
    graph.input.extend(kept)
    if len(unchecked) == len(outputs):
        raise Skip("no output to compare")
    return model, data_inputs, outputs, unchecked


def model_opset(model):
    return next((o.version for o in model.opset_import
                 if o.domain in DEFAULT_DOMAINS), 0)


# A Train op (not one of the dialect's attributes such as train.name).
TRAIN_OP_RE = re.compile(r'(?:^|=)\s*"?train\.(\w+)', re.M)
PARAM_RE = re.compile(r'^\s*train\.param (@\S+) \w+ : (tensor<[^>]*>)(?: = (.*))?$')
READ_RE = re.compile(r'^(\s*)(%\S+) = train\.read_param (@\S+) : (tensor<[^>]*>)\s*$')
ARG_RE = re.compile(r'%(arg\d+): (tensor<[^>]*>)(?: \{train\.name = "((?:[^"\\]|\\.)*)"\})?')
RESULT_RE = re.compile(r'(tensor<[^>]*>)(?: \{train\.name = "((?:[^"\\]|\\.)*)"\})?')


def inline_params(text):
    """Replaces parameter reads by constants of their initial values."""
    params, lines = {}, []
    for line in text.splitlines():
        match = PARAM_RE.match(line)
        if match:
            if match.group(3) is None:
                raise Failure("import", "parameter %s has no initial value"
                              % match.group(1))
            params[match.group(1)] = match.group(3).strip()
            continue
        lines.append(line)
    out = []
    for line in lines:
        match = READ_RE.match(line)
        if match:
            indent, result, symbol, type_ = match.groups()
            if symbol not in params:
                raise Failure("import", "read of unknown parameter " + symbol)
            line = "%s%s = arith.constant %s : %s" % (
                indent, result, params[symbol], type_)
        out.append(line)
    return "\n".join(out) + "\n"


def forward_signature(text):
    """[(arg, type, name)], [(type, name)] of @forward."""
    for line in text.splitlines():
        if "func.func @forward(" in line:
            head, _, results = line.partition(") -> ")
            args = ARG_RE.findall(head)
            results = results.rstrip(" {")
            return args, RESULT_RE.findall(results)
    raise Failure("import", "no @forward function in the imported module")


def hex_constant(array, type_):
    shape, element = tensor_shape(type_)
    if tuple(array.shape) != shape:
        raise Failure("import", "input of shape %s imported as %s"
                      % (list(array.shape), type_))
    data = float_bytes(array, element)
    if not data:
        return "arith.constant dense<> : " + type_
    return 'arith.constant dense<"0x%s"> : %s' % (data.hex().upper(), type_)


def build_main(args, results, inputs_by_name, input_order):
    """The main function: constants in, forward, bit patterns printed."""
    lines = ["  func.func @main() {"]
    operands = []
    for index, (arg, type_, name) in enumerate(args):
        name = name or input_order[index]
        if name not in inputs_by_name:
            raise Failure("import", "forward argument '%s' is not a test input"
                          % name)
        value = "%%in%d" % index
        lines.append("    %s = %s" % (value, hex_constant(inputs_by_name[name],
                                                            type_)))
        operands.append(value)
    result_types = [t for t, _ in results]
    call = "    %%out:%d = func.call @forward(%s) : (%s) -> (%s)" % (
        len(results), ", ".join(operands), ", ".join(t for _, t, _ in args),
        ", ".join(result_types))
    lines.append(call)
    for index, type_ in enumerate(result_types):
        shape, element = tensor_shape(type_)
        if 0 in shape:
            continue  # nothing to print (the printer mishandles size 0)
        dims = "".join("%dx" % d for d in shape)
        value = "%%out#%d" % index
        if element in ("f16", "bf16"):
            lines.append("    %%w%d = arith.extf %s : %s to tensor<%sf32>"
                         % (index, value, type_, dims))
            value, type_, element = "%%w%d" % index, "tensor<%sf32>" % dims, "f32"
        bits = "i64" if element == "f64" else "i32"
        int_tensor = "tensor<%s%s>" % (dims, bits)
        memref = "memref<%s%s>" % (dims, bits)
        lines += [
            "    %%b%d = arith.bitcast %s : %s to %s" % (index, value, type_,
                                                        int_tensor),
            "    %%m%d = bufferization.to_buffer %%b%d : %s to %s"
            % (index, index, int_tensor, memref),
            "    %%u%d = memref.cast %%m%d : %s to memref<*x%s>"
            % (index, index, memref, bits),
            "    func.call @printMemref%s(%%u%d) : (memref<*x%s>) -> ()"
            % (bits.upper(), index, bits),
        ]
    lines += ["    return", "  }",
              "  func.func private @printMemrefI32(memref<*xi32>) "
              "attributes {llvm.emit_c_interface}",
              "  func.func private @printMemrefI64(memref<*xi64>) "
              "attributes {llvm.emit_c_interface}"]
    return "\n".join(lines) + "\n"


def parse_printed(stdout, results):
    """The printed bit patterns, as arrays of the result types."""
    text = stdout.decode("utf-8", "replace")
    chunks = text.split("Unranked Memref")[1:]
    printed = [r for r in results if 0 not in tensor_shape(r[0])[0]]
    if len(chunks) != len(printed):
        raise Failure("run", "expected %d printed outputs, got %d"
                      % (len(printed), len(chunks)))
    chunks.reverse()
    arrays = []
    for type_, _ in results:
        shape, element = tensor_shape(type_)
        if 0 in shape:
            arrays.append(np.zeros(shape, np.float32))
            continue
        chunk = chunks.pop()
        _, _, data = chunk.partition("data =")
        ints = [int(v) for v in re.findall(r"-?\d+", data)]
        if element == "f64":
            array = np.array(ints, dtype=np.int64).view(np.float64)
        else:
            array = np.array(ints, dtype=np.int64).astype(np.uint32).view(
                np.float32)
        if array.size != int(np.prod(shape, dtype=np.int64)):
            raise Failure("run", "printed %d values for %s" % (array.size,
                                                               type_))
        arrays.append(array.reshape(shape))
    return arrays


def compare(got, want, tolerance):
    """(ok, max abs error, max rel error) under |g - w| <= atol + rtol |w|."""
    rtol, atol = tolerance
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    nan_ok = np.array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    inf_ok = np.array_equal(got[~finite & ~np.isnan(want)],
                            want[~finite & ~np.isnan(want)])
    diff = np.abs(got[finite] - want[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    rel = diff / np.maximum(np.abs(want[finite]), atol)
    max_rel = float(rel.max()) if rel.size else 0.0
    close = bool(np.all(diff <= atol + rtol * np.abs(want[finite])))
    if not np.all(np.isfinite(got[finite])):
        close = False
    return close and nan_ok and inf_ok, max_abs, max_rel


def check_test(test_dir, name, tools, options):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    result = Result(name, sorted(op_types(model.graph)))
    try:
        unsupported = set(result.ops) - tools["supported"]
        if unsupported:
            raise Skip("unsupported ops: " + ", ".join(sorted(unsupported)))
        if DTYPES[options.dtype][3] and LOW_PRECISION_SKIPS.search(name):
            raise Skip("inputs are not representable in %s" % options.dtype)
        if name in SPEC_READING_SKIPS:
            raise Skip(SPEC_READING_SKIPS[name])
        model, inputs, outputs, unchecked = prepare_model(model, test_dir)
        retype_model(model, DTYPES[options.dtype][0])
        size = sum(a.size for a in inputs.values()) + sum(
            a.size for _, a in outputs)
        if size > options.max_elements:
            raise Skip("%d input and output elements (limit %d)"
                       % (size, options.max_elements))
        with tempfile.TemporaryDirectory(prefix="traincc-numeric-") as work:
            if options.keep:
                work = os.path.join(options.keep, name.replace("/", "_"))
                os.makedirs(work, exist_ok=True)
            model_path = os.path.join(work, "model.onnx")
            onnx.save(model, model_path)
            code, out, err = run([tools["traincc"], model_path,
                                  "--emit=train-mlir", "--print-weights",
                                  "-o", "-"], options.timeout)
            if code != 0:
                raise Failure("import", short(err, 6))
            imported = out.decode()
            result.train_ops = set(TRAIN_OP_RE.findall(imported)) - {
                "param", "read_param"}
            forward = inline_params(imported)
            code, lowered, err = run([tools["traincc-opt"],
                                      "--traincc-convert-train-to-linalg"],
                                     options.timeout, forward.encode())
            if code != 0:
                raise Failure("lower", short(err, 6))
            lowered = lowered.decode()
            if TRAIN_OP_RE.search(lowered):
                raise Failure("lower", "Train ops left after lowering")
            args, results = forward_signature(imported)
            graph_inputs = [v.name for v in model.graph.input
                            if v.name in inputs]
            module_end = lowered.rstrip().rfind("}")
            full = lowered[:module_end] + build_main(
                args, results, inputs, graph_inputs) + "}\n"
            if options.keep:
                with open(os.path.join(work, "full.mlir"), "w") as f:
                    f.write(full)
            out = run_main(full, tools, options.timeout, lines=6)
            got = parse_printed(out, results)
        if len(got) != len(outputs):
            raise Failure("import", "%d outputs imported, %d expected"
                          % (len(got), len(outputs)))
        ok = True
        for (output_name, want), value in zip(outputs, got):
            if tuple(value.shape) != tuple(want.shape):
                raise Failure("import", "output '%s' has shape %s, expected %s"
                              % (output_name, list(value.shape),
                                 list(want.shape)))
            if output_name in unchecked:
                continue
            _, rtol, atol, scaled = DTYPES[options.dtype]
            if scaled and want.size:
                atol *= max(1.0, float(np.nanmax(np.abs(np.where(
                    np.isfinite(want), want, 0)))))
            close, max_abs, max_rel = compare(value, want, (rtol, atol))
            ok &= close
            result.max_abs = max(result.max_abs, max_abs)
            result.max_rel = max(result.max_rel, max_rel)
        result.status = "pass" if ok else "mismatch"
    except Skip as skip:
        result.status, result.message = "skip", str(skip)
    except Failure as failure:
        result.status, result.stage = "fail", failure.stage
        result.message = str(failure)
    except Exception:  # a harness bug: report it with the test, go on
        result.status, result.stage = "fail", "harness"
        result.message = short(traceback.format_exc(), 12)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc", required=True)
    parser.add_argument("--traincc-opt", required=True)
    parser.add_argument("--llvm-bin", default=DEFAULT_LLVM_BIN,
                        help="folder of mlir-opt and mlir-runner")
    parser.add_argument("--llvm-lib", default=DEFAULT_LLVM_LIB,
                        help="folder of the MLIR runner utility libraries")
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="f32",
                        help="float type to retype the models to (default: "
                             "%(default)s)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120,
                        help="seconds per tool run (default: %(default)s)")
    parser.add_argument("--max-elements", type=int, default=2000000,
                        help="skip tests with more input and output "
                             "elements (default: %(default)s)")
    parser.add_argument("--filter", default="",
                        help="only tests whose name matches this regex")
    parser.add_argument("--representative", action="store_true",
                        help="only a few tests per op and variant")
    parser.add_argument("--min-passed", type=int, default=1,
                        help="fail when fewer tests pass (guards against a "
                             "harness that silently checks nothing)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep every test's files under DIR")
    options = parser.parse_args()

    proc = subprocess.run([options.traincc, "--list-ops"],
                          stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        sys.exit("onnx_node_numeric: '%s --list-ops' failed" % options.traincc)
    tools = {
        "traincc": options.traincc,
        "traincc-opt": options.traincc_opt,
        "mlir-opt": os.path.join(options.llvm_bin, "mlir-opt"),
        "mlir-runner": os.path.join(options.llvm_bin, "mlir-runner"),
        "runtime-libs": [os.path.join(options.llvm_lib, lib) for lib in (
            "libmlir_c_runner_utils.so", "libmlir_runner_utils.so")],
        "supported": set(proc.stdout.decode().split()),
    }
    tests = []
    for suite in SUITES:
        for path in sorted(glob.glob(os.path.join(options.data, suite, "*",
                                                  "model.onnx"))):
            name = os.path.relpath(os.path.dirname(path), options.data)
            if re.search(options.filter, name) and (
                    not options.representative or
                    REPRESENTATIVE.search(name)):
                tests.append((os.path.dirname(path), name))
    if not tests:
        sys.exit("onnx_node_numeric: no tests under %s" % options.data)

    # Run copies of traincc's tools: a rebuild in the same tree while this
    # runs must not pull them from under the workers.
    with tempfile.TemporaryDirectory(prefix="traincc-numeric-tools-") as bin_dir:
        for tool in ("traincc", "traincc-opt"):
            copy = os.path.join(bin_dir, tool)
            shutil.copy2(tools[tool], copy)
            tools[tool] = copy
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=options.jobs) as pool:
            results = list(pool.map(
                lambda t: check_test(t[0], t[1], tools, options), tests))

    report(results, options)
    lowering_problems = [r for r in results
                         if r.status == "mismatch" or
                         (r.status == "fail" and r.stage != "import")]
    passed = sum(r.status == "pass" for r in results)
    if passed < options.min_passed:
        print("error: %d tests passed, fewer than --min-passed %d"
              % (passed, options.min_passed))
        return 1
    return 1 if lowering_problems else 0


def report(results, options):
    checked = [r for r in results if r.status != "skip"]
    print("ONNX numerical check: traincc import -> traincc-convert-train-to-"
          "linalg -> mlir-opt -> mlir-runner")
    _, rtol, atol, scaled = DTYPES[options.dtype]
    print("element type %s; tolerance: |got - want| <= %g%s + %g |want|"
          % (options.dtype, atol, " * max(1, max |want|)" if scaled else "",
             rtol))
    print()
    width = max([len(r.name) for r in checked] + [4])
    row = "| %-*s | %-28s | %-9s | %-9s | %-12s |"
    print(row % (width, "test", "ops", "max abs", "max rel", "result"))
    print(row.replace(" ", "-").replace("%-*s", "%s").replace(
        "%-28s", "%s").replace("%-9s", "%s").replace("%-12s", "%s") % (
        "-" * width, "-" * 28, "-" * 9, "-" * 9, "-" * 12))
    for r in checked:
        if r.status == "fail":
            errors = ("-", "-")
            verdict = ("import-error" if r.stage == "import"
                       else "FAIL:" + r.stage)
        else:
            errors = ("%.2e" % r.max_abs, "%.2e" % r.max_rel)
            verdict = "pass" if r.status == "pass" else "MISMATCH"
        print(row % (width, r.name, ",".join(r.ops)[:28], errors[0],
                     errors[1], verdict))

    problems = [r for r in checked if r.status != "pass"]
    if problems:
        print()
        print("failures (import errors are the importer's: they do not fail "
              "this check):")
        for r in problems:
            if r.status == "fail":
                print("  %s: failed at %s:" % (r.name, r.stage))
                print(r.message)
            else:
                print("  %s: mismatch (max abs %.3e, max rel %.3e)"
                      % (r.name, r.max_abs, r.max_rel))

    # Per ONNX op type: tests checked, passed, worst errors among passes.
    per_op = collections.OrderedDict()
    for r in checked:
        for op in r.ops:
            entry = per_op.setdefault(op, [0, 0, 0.0, 0.0])
            entry[0] += 1
            if r.status == "pass":
                entry[1] += 1
                entry[2] = max(entry[2], r.max_abs)
                entry[3] = max(entry[3], r.max_rel)
    print()
    print("| %-18s | %-7s | %-6s | %-9s | %-9s |" % (
        "ONNX op", "checked", "passed", "max abs", "max rel"))
    for op, (count, ok, max_abs, max_rel) in sorted(per_op.items()):
        print("| %-18s | %7d | %6d | %9.2e | %9.2e |" % (op, count, ok,
                                                         max_abs, max_rel))

    passed = [r for r in checked if r.status == "pass"]
    covered = collections.Counter(op for r in passed for op in r.train_ops)
    print()
    print("Train ops in passing tests (imported IR, after canonicalisation):")
    print("  " + ", ".join("%s %d" % item for item in sorted(covered.items())))

    skipped = [r for r in results if r.status == "skip"]
    reasons = collections.Counter(
        "unsupported ops" if r.message.startswith("unsupported ops")
        else r.message for r in skipped)
    print()
    print("skipped (not for this check):")
    for reason, count in sorted(reasons.items(), key=lambda x: -x[1]):
        print("  %4d  %s" % (count, reason))
    for r in skipped:
        if not r.message.startswith("unsupported"):
            print("        %s: %s" % (r.name, r.message))

    print()
    print("tests found: %d" % len(results))
    print("checked: %d" % len(checked))
    print("passed: %d" % len(passed))
    print("mismatched: %d" % sum(r.status == "mismatch" for r in checked))
    print("failed: %d" % sum(r.status == "fail" and r.stage != "import"
                             for r in checked))
    print("import errors: %d" % sum(r.status == "fail" and r.stage == "import"
                                    for r in checked))
    print("skipped: %d" % len(skipped))


if __name__ == "__main__":
    sys.exit(main())
