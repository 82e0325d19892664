#!/usr/bin/python3
"""Gradient check: traincc's gradient rules and their lowering against
float64 central finite differences of the loss.

Each case is a small float64 module (`module @name { train.param ...
func.func @forward ... }`) in the case files (chunks split by `// -----`).
For each case this script

  1. runs the real training-step passes, `traincc-opt --traincc-append-loss
     --traincc-explicit-training-mode --traincc-autodiff`, which emit
     `@micro_step(inputs..., target, grad_scale, seed) -> loss` ending in one
     `train.accumulate @<param>.grad, %g` per trainable parameter;
  2. rewrites @micro_step's text so that it can be called with chosen
     parameter values and returns the gradients: every `train.read_param @p`
     reads a new trailing argument instead, each accumulate's value is
     returned after the loss, and running-statistics updates (state, for a
     later pass) are dropped;
  3. lowers it with `traincc-opt --traincc-convert-train-to-linalg` and adds a
     `main` that calls it once at the base point (printing the loss and the
     gradients) and once per perturbation p +- eps * v (printing the losses):
     one mlir-runner program per case;
  4. compares each parameter's gradient g with the central differences
     (L(p + eps v) - L(p - eps v)) / (2 eps): per element (v = unit vectors)
     for parameters of at most --max-elementwise elements, else along
     --directions random unit directions (g . v against the difference).

The error of a parameter is max |analytic - numeric| / max(max |numeric|,
--floor) over its elements (or directions): relative to the size of its
gradient, so that elements whose gradient is ~0 do not divide by ~0, and
absolute (1e-8 at the defaults) for a gradient that is truly ~0 (a conv
bias before BatchNorm), where only rounding noise (~1e-10) is left. A case
fails when a parameter's error exceeds --tolerance, or when a gradient is
identically zero (the check could not see an error there). Values are
random (seeded by case name), away from kinks: data and parameters are
standard normal unless a parameter has an initial value in the module,
which is used instead.

A case may also hold `train.onnx_node` ops (ONNX ops that import as
compositions of Train ops): it is then legalised first
(--traincc-legalize-onnx), so the check covers the import too.

Comment directives in a case: `// gradcheck: loss=mse` (append-loss's loss
option; default auto), `// gradcheck: bn-stats=step` (explicit-training-
mode's; default micro), `// gradcheck: dtypes=f64,f32` (the --dtype runs
that check the case; default all).

With --dtype f32, f16 or bf16 the cases are retyped instead, and their
gradients compared with the f64 gradients at the same values (drawn
representable in that type): the lowering's conversions and f32
accumulation for narrow types, within each type's precision.

Two exact checks that finite differences cannot make (f64 runs only): the
lowered train.dropout_mask against a numpy reference of its documented
counter-based hash, bit for bit; and train.max_pool_backward on inputs full
of ties (and -inf, and padding) against PyTorch's max_pool2d backward.

Prints a table (case | worst parameter | its gradient size | checks |
evaluations | max rel error | result) and totals; exit status 1 on any
failure. Run with /usr/bin/python3 (numpy, torch).
"""

import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import sys
import tempfile
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))
from mlir_harness import Failure, run, run_main, short, tensor_shape  # noqa: E402

DEFAULT_LLVM_BIN = "/usr/lib/llvm-22/bin"
DEFAULT_LLVM_LIB = "/usr/lib/llvm-22/lib"

# Largest error per --dtype: f64 against finite differences; the others
# against f64 gradients, where inputs rounded to the type and its rounding
# through forward and backward pass add up (f16 and bf16 accumulate in f32).
TOLERANCES = {"f64": 1e-6, "f32": 1e-4, "f16": 5e-2, "bf16": 2e-1}

MODULE_RE = re.compile(r"^\s*module @(\w+)", re.M)
DIRECTIVE_RE = re.compile(r"//\s*gradcheck:\s*([\w-]+)=(\S+)")
PARAM_RE = re.compile(
    r"^\s*train\.param (@\S+) (\w+) : (tensor<[^>]*>)(?: = (.*))?$")
READ_RE = re.compile(
    r"^(\s*)(%\S+) = train\.read_param (@\S+) : (tensor<[^>]*>)\s*$")
ACCUMULATE_RE = re.compile(
    r"^\s*train\.accumulate (@\S+\.grad\"?), (%\S+) scale %\S+ : "
    r"(tensor<[^>]*>)\s*$")
RETURN_RE = re.compile(r"^(\s*)return (%\S+) : (tensor<[^>]*>)\s*$")
ARG_RE = re.compile(
    r'%(arg\d+): ([^,{)]+?)(?: \{train\.name = "([^"]*)"\})?(?=,|\))')


# One checked parameter: its error, how many elements or directions were
# compared, the loss evaluations they took, and the gradient's size
# (max |numeric|, or max |f64 gradient|).
Row = collections.namedtuple(
    "Row", "param error note checks evaluations scale")


def as_f64(type_):
    """A float tensor type with f64 elements."""
    return re.sub(r"(f16|bf16|f32|f64)>$", "f64>", type_)


def quantize(array, element):
    """`array` (float64) rounded to MLIR float type `element` and back."""
    array = np.asarray(array, dtype=np.float64)
    if element == "f32":
        return array.astype(np.float32).astype(np.float64)
    if element == "f16":
        return array.astype(np.float16).astype(np.float64)
    if element == "bf16":
        data = np.frombuffer(element_bytes(array, "bf16"), dtype="<u2")
        wide = (data.astype(np.uint32) << 16).view(np.float32)
        return wide.astype(np.float64).reshape(array.shape)
    return array


def element_bytes(array, element):
    """Little-endian bytes of `array` as MLIR type `element` (bf16 rounded
    to nearest even from f32)."""
    if element == "bf16":
        bits = np.ascontiguousarray(array, dtype="<f4").view("<u4").astype(
            np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(
            "<u2").tobytes()
    dtype = {"f64": "<f8", "f32": "<f4", "f16": "<f2", "i64": "<i8"}[element]
    return np.ascontiguousarray(array, dtype=dtype).tobytes()


def hex_constant(array, type_):
    shape, element = tensor_shape(type_)
    data = element_bytes(np.asarray(array).reshape(shape), element)
    return 'arith.constant dense<"0x%s"> : %s' % (data.hex().upper(), type_)


def parse_dense(text, shape):
    """The value of a printed `dense<...>` initial value (nested lists or a
    splat of numbers)."""
    body = text.strip()
    if not body.startswith("dense<") or not body.endswith(">"):
        raise Failure("harness", "cannot read initial value " + body)
    body = body[len("dense<"):-1]
    numbers = [float(v) for v in re.findall(
        r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", body)]
    if len(numbers) == 1:
        return np.full(shape, numbers[0])
    return np.array(numbers, dtype=np.float64).reshape(shape)


def split_cases(path):
    """(name, text, directives) of every chunk of a case file."""
    with open(path) as f:
        chunks = re.split(r"^// -----\s*$", f.read(), flags=re.M)
    cases = []
    for chunk in chunks:
        match = MODULE_RE.search(chunk)
        if not match:
            continue
        cases.append((match.group(1), chunk,
                      dict(DIRECTIVE_RE.findall(chunk))))
    return cases


def discover_cases(folder, dtype="f64", name_filter=""):
    """(name, text, directives) of every case in `folder` checked in
    `dtype` whose name matches `name_filter` (scripts/update-readme.py
    counts them for the README)."""
    cases = []
    for path in sorted(glob.glob(os.path.join(folder, "*.mlir"))):
        for name, text, directives in split_cases(path):
            dtypes = directives.get("dtypes", ",".join(TOLERANCES)).split(",")
            if re.search(name_filter, name) and dtype in dtypes:
                cases.append((name, text, directives))
    return cases


def function_text(module, name):
    """The lines of `func.func @name` in a printed module."""
    lines = module.splitlines()
    for start, line in enumerate(lines):
        if line.lstrip().startswith("func.func @%s(" % name):
            indent = line[:len(line) - len(line.lstrip())]
            for end in range(start + 1, len(lines)):
                if lines[end] == indent + "}":
                    return lines[start:end + 1]
    raise Failure("autodiff", "no @%s in the training module" % name)


def param_of_gradient(symbol):
    """@w for @w.grad, @"a.b" for @"a.b.grad"."""
    if symbol.endswith('.grad"'):
        return symbol[:-len('.grad"')] + '"'
    if symbol.endswith(".grad"):
        return symbol[:-len(".grad")]
    raise Failure("autodiff", "unexpected gradient buffer " + symbol)


def make_callable(module):
    """Step 2: @micro_step with parameters as trailing arguments, returning
    (loss, gradients...). Returns (text, arguments [(name, type, role)],
    parameters [(symbol, type, kind, initial)], gradients [(symbol, type)])."""
    params = {}
    for line in module.splitlines():
        match = PARAM_RE.match(line)
        if match:
            params[match.group(1)] = (match.group(3), match.group(2),
                                      match.group(4))
    lines = function_text(module, "micro_step")
    header = lines[0]
    args = [(a, t.strip(), role) for a, t, role in ARG_RE.findall(
        header.partition("(")[2].rpartition(") ->")[0] + ")")]
    used, gradients, body = [], [], []
    for line in lines[1:-1]:
        match = READ_RE.match(line)
        if match:
            indent, result, symbol, type_ = match.groups()
            if symbol not in used:
                used.append(symbol)
            line = "%s%s = tensor.cast %%gc_p%d : %s to %s" % (
                indent, result, used.index(symbol), type_, type_)
        elif ACCUMULATE_RE.match(line):
            symbol, value, type_ = ACCUMULATE_RE.match(line).groups()
            gradients.append((param_of_gradient(symbol), value, type_))
            continue
        elif re.match(r"\s*train\.(accumulate|bn_running_update) ", line):
            # Other state (BatchNorm statistics): not this check's business.
            continue
        else:
            match = RETURN_RE.match(line)
            if match:
                indent, loss, loss_type = match.groups()
                line = "%sreturn %s : %s" % (
                    indent, ", ".join([loss] + [g[1] for g in gradients]),
                    ", ".join([loss_type] + [g[2] for g in gradients]))
        body.append(line)
    if not gradients:
        raise Failure("autodiff", "no parameter gradients accumulated")
    parameters = []
    for symbol in used:
        if symbol not in params:
            raise Failure("autodiff", "read of unknown parameter " + symbol)
        type_, kind, initial = params[symbol]
        parameters.append((symbol, type_, kind, initial))
    signature = header.partition("(")[2].rpartition(") ->")[0]
    extra = ", ".join("%%gc_p%d: %s" % (i, p[1])
                      for i, p in enumerate(parameters))
    # The result may carry attributes (a name): keep its type only.
    loss_type = re.search(r"tensor<[^>]*>",
                          header.rpartition(") -> ")[2]).group(0)
    results = ", ".join([loss_type] + [g[2] for g in gradients])
    text = "module {\n  func.func @micro_step(%s%s%s) -> (%s) {\n%s\n  }\n}\n" % (
        signature, ", " if signature and extra else "", extra, results,
        "\n".join(body))
    return text, args, parameters, [(g[0], g[2]) for g in gradients]


def print_lines(value, type_, index):
    """Prints a float64 tensor's bit patterns (exact) as i64."""
    shape, _ = tensor_shape(type_)
    dims = "".join("%dx" % d for d in shape)
    int_type, memref = "tensor<%si64>" % dims, "memref<%si64>" % dims
    return [
        "    %%pb%d = arith.bitcast %s : %s to %s" % (index, value, type_,
                                                    int_type),
        "    %%pm%d = bufferization.to_buffer %%pb%d : %s to %s"
        % (index, index, int_type, memref),
        "    %%pu%d = memref.cast %%pm%d : %s to memref<*xi64>"
        % (index, index, memref),
        "    func.call @printMemrefI64(%%pu%d) : (memref<*xi64>) -> ()" % index,
    ]


def build_main(args, arg_values, parameters, base, perturbed, gradients,
               loss_type):
    """Step 3: one call at the base point, then for each parameter i one
    loop over `perturbed[i]` (an array [count, shape...] of values for it,
    the others at the base point); prints the gradients, then every loss,
    base first. One call site per parameter keeps the program small."""
    lines = ["  func.func @main() {"]
    operands = []
    for index, ((_, type_, _), value) in enumerate(zip(args, arg_values)):
        lines.append("    %%a%d = %s" % (index, value))
        operands.append("%%a%d" % index)
    for index, (_, type_, _, _) in enumerate(parameters):
        lines.append("    %%p%d = %s" % (index, hex_constant(base[index],
                                                             type_)))
    arg_types = ", ".join([t for _, t, _ in args] + [p[1] for p in parameters])
    result_types = ", ".join([loss_type] + [g[1] for g in gradients])
    results = 1 + len(gradients)
    count = 1 + sum(len(values) for values in perturbed.values())
    losses_type = "tensor<%dxf64>" % count
    base_params = ["%%p%d" % i for i in range(len(parameters))]

    def call(tag, params):
        lines.append("    %%r%s:%d = func.call @micro_step(%s) : (%s) -> (%s)"
                     % (tag, results, ", ".join(operands + params), arg_types,
                        result_types))

    lines.append("    %c0 = arith.constant 0 : index")
    lines.append("    %c1 = arith.constant 1 : index")
    lines.append("    %%empty = tensor.empty() : %s" % losses_type)
    call("b", base_params)
    loss_element = tensor_shape(loss_type)[1]

    def extract_loss(tag, indent):
        # The loss as an f64 scalar.
        lines.append("%s%%l%s = tensor.extract %%r%s#0[] : %s"
                     % (indent, tag, tag, loss_type))
        if loss_element == "f64":
            return "%%l%s" % tag
        lines.append("%s%%lw%s = arith.extf %%l%s : %s to f64"
                     % (indent, tag, tag, loss_element))
        return "%%lw%s" % tag

    loss = extract_loss("b", "    ")
    lines.append("    %%losses0 = tensor.insert %s into %%empty[%%c0] : %s"
                 % (loss, losses_type))
    offset, last = 1, "%losses0"
    for index, values in perturbed.items():
        type_ = parameters[index][1]
        shape, _ = tensor_shape(type_)
        rank = len(shape)
        all_type = "tensor<%dx%s" % (len(values), type_[len("tensor<"):])
        lines.append("    %%all%d = %s" % (index, hex_constant(values,
                                                               all_type)))
        lines.append("    %%n%d = arith.constant %d : index"
                     % (index, len(values)))
        lines.append("    %%o%d = arith.constant %d : index" % (index, offset))
        lines.append("    %%losses%d = scf.for %%j%d = %%c0 to %%n%d step %%c1 "
                     "iter_args(%%acc%d = %s) -> (%s) {"
                     % (index + 1, index, index, index, last, losses_type))
        lines.append("      %%q%d = tensor.extract_slice %%all%d[%%j%d%s] "
                     "[1%s] [1%s] : %s to %s"
                     % (index, index, index, ", 0" * rank,
                        "".join(", %d" % d for d in shape), ", 1" * rank,
                        all_type, type_))
        params = list(base_params)
        params[index] = "%%q%d" % index
        call("%d" % index, params)
        loss = extract_loss("%d" % index, "      ")
        lines.append("      %%at%d = arith.addi %%j%d, %%o%d : index"
                     % (index, index, index))
        lines.append("      %%next%d = tensor.insert %s into %%acc%d[%%at%d]"
                     " : %s" % (index, loss, index, index, losses_type))
        lines.append("      scf.yield %%next%d : %s" % (index, losses_type))
        lines.append("    }")
        offset += len(values)
        last = "%%losses%d" % (index + 1)
    printed = 0
    for index, (_, type_) in enumerate(gradients):
        value = "%%rb#%d" % (index + 1)
        wide = as_f64(type_)
        if wide != type_:
            lines.append("    %%gw%d = arith.extf %s : %s to %s"
                         % (index, value, type_, wide))
            value, type_ = "%%gw%d" % index, wide
        lines += print_lines(value, type_, printed)
        printed += 1
    lines += print_lines(last, losses_type, printed)
    lines += ["    return", "  }",
              "  func.func private @printMemrefI64(memref<*xi64>) "
              "attributes {llvm.emit_c_interface}"]
    return "\n".join(lines) + "\n"


def parse_printed(stdout, types):
    text = stdout.decode("utf-8", "replace")
    chunks = text.split("Unranked Memref")[1:]
    if len(chunks) != len(types):
        raise Failure("run", "expected %d printed tensors, got %d"
                      % (len(types), len(chunks)))
    arrays = []
    for chunk, type_ in zip(chunks, types):
        shape, _ = tensor_shape(type_)
        data = chunk.partition("data =")[2]
        ints = [int(v) for v in re.findall(r"-?\d+", data)]
        array = np.array(ints, dtype=np.int64).view(np.float64)
        if array.size != int(np.prod(shape, dtype=np.int64)):
            raise Failure("run", "printed %d values for %s"
                          % (array.size, type_))
        arrays.append(array.reshape(shape))
    return arrays


def lower_and_run(module_text, main_text, tools, options, work, tag):
    """Lowers a Train module with traincc-opt, adds `main_text` (upstream
    dialects only) to it, takes it to LLVM with mlir-opt and runs main with
    mlir-runner; returns stdout."""
    path = os.path.join(work, tag + ".mlir")
    with open(path, "w") as f:
        f.write(module_text)
    code, lowered, err = run([tools["traincc-opt"], path,
                              "--traincc-convert-train-to-linalg"],
                             options.timeout)
    if code != 0:
        raise Failure("lower", short(err))
    lowered = lowered.decode()
    if re.search(r"\btrain\.(?!name)", lowered):
        raise Failure("lower", "Train ops left after lowering")
    program = lowered[:lowered.rstrip().rfind("}")] + main_text + "}\n"
    with open(os.path.join(work, tag + "-linalg.mlir"), "w") as f:
        f.write(program)
    return run_main(program, tools, options.timeout)


def run_printing(module, main, value, type_, tools, options, tag):
    """Ends `main` (the opening of @main, which defines `value`) by printing
    `value` : `type_`, lowers and runs it with the Train `module`, and
    returns the printed tensor."""
    main += "\n".join(print_lines(value, type_, 0))
    main += ("\n    return\n  }\n"
             "  func.func private @printMemrefI64(memref<*xi64>) "
             "attributes {llvm.emit_c_interface}\n")
    with tempfile.TemporaryDirectory(prefix="traincc-gradcheck-") as work:
        out = lower_and_run(module, main, tools, options, work, tag)
    return parse_printed(out, [type_])[0]


def evaluate(text, directives, tools, options, seed, work, finite_differences,
             values_type="f64"):
    """Steps 1-3 for one case module: the gradients at random values (from
    `seed`, exactly representable in `values_type`) and, with
    `finite_differences`, the losses at every perturbation. Returns
    (gradients [(symbol, f64 array)], losses, checks [(gradient index,
    parameter index, directions)], base parameter values)."""
    rng = np.random.default_rng(seed)
    path = os.path.join(work, "case.mlir")
    with open(path, "w") as f:
        f.write(text)
    loss = directives.get("loss", "auto")
    bn_stats = directives.get("bn-stats", "micro")
    # Cases of ONNX ops that import as compositions of Train ops (HardSwish,
    # Pad) are written as train.onnx_node and legalised first.
    legalize = (["--traincc-legalize-onnx"] if "train.onnx_node" in text
                else [])
    code, out, err = run([tools["traincc-opt"], path] + legalize + [
                          "--traincc-append-loss=loss=" + loss,
                          "--traincc-explicit-training-mode=bn-stats=" +
                          bn_stats, "--traincc-autodiff"],
                         options.timeout)
    if code != 0:
        raise Failure("autodiff", short(err))
    training = out.decode()
    callable_text, args, parameters, gradients = make_callable(training)

    # Data, target, grad_scale (1: accumulate's scale is not applied here)
    # and seed.
    arg_values = []
    for _, type_, role in args:
        if type_ == "f32":
            arg_values.append("arith.constant 1.0 : f32")
        elif type_ == "i64":
            arg_values.append("arith.constant %d : i64" % options.dropout_seed)
        elif type_.endswith("xi64>"):
            # Class labels for the [N, C] logits, @eval_step's first result.
            shape, _ = tensor_shape(type_)
            eval_header = function_text(training, "eval_step")[0]
            logits = re.search(r"\) -> \(?(tensor<[^>]*>)", eval_header)
            classes = tensor_shape(logits.group(1))[0][1]
            arg_values.append(hex_constant(
                rng.integers(0, classes, size=shape), type_))
        else:
            shape, _ = tensor_shape(type_)
            arg_values.append(hex_constant(
                quantize(rng.standard_normal(shape), values_type), type_))
    base = []
    for symbol, type_, kind, initial in parameters:
        shape, _ = tensor_shape(type_)
        if initial is not None:
            base.append(quantize(parse_dense(initial, shape), values_type))
        else:
            base.append(quantize(rng.standard_normal(shape), values_type))

    # Perturbations of every trainable parameter with a gradient:
    # p + eps v, p - eps v for each direction v, in that order.
    checks = []
    perturbed = {}
    for grad_index, (symbol, type_) in enumerate(gradients):
        param_index = [p[0] for p in parameters].index(symbol)
        size = base[param_index].size
        if size <= options.max_elementwise:
            directions = np.eye(size)
        else:
            directions = rng.standard_normal((options.directions, size))
            directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        checks.append((grad_index, param_index, directions))
        if not finite_differences:
            continue
        steps = options.eps * directions.reshape(
            (len(directions),) + base[param_index].shape)
        perturbed[param_index] = np.stack(
            [base[param_index] + steps, base[param_index] - steps],
            axis=1).reshape((2 * len(directions),) + base[param_index].shape)

    header = function_text(training, "micro_step")[0]
    loss_type = re.search(r"tensor<[^>]*>",
                          header.rpartition(") -> ")[2]).group(0)
    main = build_main(args, arg_values, parameters, base, perturbed,
                      gradients, loss_type)
    out = lower_and_run(callable_text, main, tools, options, work, "program")
    types = [as_f64(g[1]) for g in gradients] + [
        "tensor<%dxf64>" % (1 + sum(len(v) for v in perturbed.values()))]
    printed = parse_printed(out, types)
    if not np.all(np.isfinite(printed[-1])):
        raise Failure("run", "non-finite loss")
    return ([(g[0], a) for g, a in zip(gradients, printed[:-1])], printed[-1],
            checks, base)


def retype(text, element):
    """The case module with its f64 tensors as `element`."""
    return re.sub(r"(?<=[x<\s])f64\b", element, text)


def check_case(name, text, directives, tools, options, seed):
    """Returns a Row per parameter: its gradient against finite
    differences for f64; for another --dtype, the gradients of the retyped
    module against those of the f64 one."""
    with tempfile.TemporaryDirectory(prefix="traincc-gradcheck-") as work:
        if options.keep:
            work = os.path.join(options.keep, name)
            os.makedirs(work, exist_ok=True)
        reference, losses, checks, base = evaluate(
            text, directives, tools, options, seed, work,
            finite_differences=options.dtype == "f64",
            values_type=options.dtype)
        if options.dtype != "f64":
            lowered = os.path.join(work, options.dtype)
            os.makedirs(lowered, exist_ok=True)
            got = evaluate(retype(text, options.dtype), directives, tools,
                           options, seed, lowered, finite_differences=False,
                           values_type=options.dtype)[0]

    rows, position = [], 1
    case_scale = max(float(np.max(np.abs(g))) for _, g in reference)
    for grad_index, param_index, directions in checks:
        symbol, gradient = reference[grad_index]
        size = base[param_index].size
        if options.dtype != "f64":
            want = gradient.reshape(-1)
            have = got[grad_index][1].reshape(-1)
            scale = np.max(np.abs(want))
            if scale < 1e-9 * case_scale:
                # Zero but for f64 rounding (a conv bias before BatchNorm):
                # the type's rounding noise, relative to the case's
                # gradients.
                scale = case_scale
            note, evaluations = "against f64", 0
            if not np.all(np.isfinite(have)):
                error, note = float("inf"), "non-finite gradient"
            else:
                error = float(np.max(np.abs(have - want)) /
                              max(scale, options.floor))
            rows.append(Row(symbol, error, note, size, evaluations, scale))
            continue
        analytic = gradient.reshape(-1) @ directions.T
        plus = losses[position:position + 2 * len(directions):2]
        minus = losses[position + 1:position + 2 * len(directions):2]
        position += 2 * len(directions)
        numeric = (plus - minus) / (2 * options.eps)
        scale = np.max(np.abs(numeric))
        note = "per element" if len(directions) == size \
            and options.max_elementwise >= size \
            else "%d directions" % len(directions)
        if not np.all(np.isfinite(gradient)):
            error, note = float("inf"), "non-finite gradient"
        elif scale == 0.0 and not np.any(gradient):
            error, note = float("inf"), "gradient is zero: nothing checked"
        else:
            error = float(np.max(np.abs(analytic - numeric)) /
                          max(scale, options.floor))
        rows.append(Row(symbol, error, note, len(directions),
                        2 * len(directions), scale))
    return rows


def dropout_reference(seed, stream, ratio, shape):
    """The documented mask formula (lib/Codegen/ConvertTrainToLinalg
    Gradients.cpp) in numpy, with wrapping uint64 arithmetic."""
    gamma = np.uint64(0x9E3779B97F4A7C15)

    def mix(z):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))

    with np.errstate(over="ignore"):
        key = mix(np.uint64(seed) + gamma * np.uint64(stream + 1))
        index = np.arange(int(np.prod(shape)), dtype=np.uint64)
        bits = mix(key + gamma * (index + np.uint64(1)))
    threshold = np.uint64(int(np.ceil(ratio * 2.0 ** 24)))
    keep = (bits >> np.uint64(40)) >= threshold
    return np.where(keep, 1.0 / (1.0 - ratio), 0.0).reshape(shape)


def check_dropout_mask(tools, options):
    """The lowered train.dropout_mask against dropout_reference, bit for
    bit, on a 64x64 mask (which also shows the ratio is honoured)."""
    seed, stream, ratio, shape = 987654321, 2, 0.25, (64, 64)
    type_ = "tensor<64x64xf64>"
    module = ("module {\n"
              "  func.func @mask(%%seed: i64) -> %s {\n"
              "    %%m = train.dropout_mask %%seed ratio %r stream %d : %s\n"
              "    return %%m : %s\n  }\n}\n"
              % (type_, ratio, stream, type_, type_))
    main = ("  func.func @main() {\n"
            "    %%s = arith.constant %d : i64\n"
            "    %%r = func.call @mask(%%s) : (i64) -> %s\n" % (seed, type_))
    got = run_printing(module, main, "%r", type_, tools, options, "mask")
    want = dropout_reference(seed, stream, ratio, shape)
    dropped = float(np.mean(got == 0.0))
    if not np.array_equal(got, want):
        raise Failure("dropout", "mask differs from the reference in %d of "
                      "%d elements" % (int(np.sum(got != want)), got.size))
    # 4096 draws: the dropped fraction is within 4 sigma of the ratio.
    sigma = np.sqrt(ratio * (1 - ratio) / got.size)
    if abs(dropped - ratio) > 4 * sigma:
        raise Failure("dropout", "dropped fraction %.4f for ratio %.2f"
                      % (dropped, ratio))
    return dropped


def check_max_pool_ties(tools, options):
    """train.max_pool_backward on inputs full of ties (small integers) and
    with padding, against PyTorch's max_pool2d backward: the first maximum
    of a window in row-major order takes the gradient, padding never does.
    Finite differences cannot see this (ties are kinks). Returns the number
    of windows with a tied maximum."""
    import torch
    rng = np.random.default_rng(options.seed)
    x = rng.integers(-2, 2, size=(2, 3, 7, 6)).astype(np.float64)
    x[0, 0] = -np.inf  # a channel of -inf: ties with the padding
    dy_shape = (2, 3, 4, 4)
    dy = rng.standard_normal(dy_shape)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.max_pool2d(xt, kernel_size=(3, 2), stride=2,
                                        padding=1, dilation=(1, 2),
                                        ceil_mode=True)
    if tuple(yt.shape) != dy_shape:
        raise Failure("ties", "unexpected PyTorch shape %s" % (yt.shape,))
    yt.backward(torch.tensor(dy))
    want = xt.grad.numpy()
    in_type, out_type = "tensor<2x3x7x6xf64>", "tensor<2x3x4x4xf64>"
    module = ("module {\n"
              "  func.func @pool_grad(%%dy: %s, %%x: %s) -> %s {\n"
              "    %%dx = train.max_pool_backward %%dy, %%x kernel [3, 2] "
              "strides [2, 2] pads [1, 1, 1, 1] dilations [1, 2] "
              "{ceil_mode = true} : (%s, %s) -> %s\n"
              "    return %%dx : %s\n  }\n}\n"
              % (out_type, in_type, in_type, out_type, in_type, in_type,
                 in_type))
    main = ("  func.func @main() {\n"
            "    %%dy = %s\n    %%x = %s\n"
            "    %%dx = func.call @pool_grad(%%dy, %%x) : (%s, %s) -> %s\n"
            % (hex_constant(dy, out_type), hex_constant(x, in_type),
               out_type, in_type, in_type))
    got = run_printing(module, main, "%dx", in_type, tools, options, "ties")
    # Equal but for the order in which an input that wins several windows
    # sums their gradients; a wrong winner is off by a whole gradient.
    wrong = ~np.isclose(got, want, rtol=1e-12, atol=1e-12)
    if np.any(wrong):
        raise Failure("ties", "max_pool_backward differs from PyTorch in %d "
                      "of %d elements" % (int(np.sum(wrong)), got.size))
    # Windows whose maximum is tied (what this check is about).
    unfold = torch.nn.functional.unfold(
        torch.nn.functional.pad(torch.tensor(x), (1, 3, 1, 2),
                                value=-np.inf).reshape(6, 1, 10, 10),
        kernel_size=(3, 2), dilation=(1, 2), stride=2)
    top = unfold.max(dim=1, keepdim=True).values
    return int(((unfold == top).sum(dim=1) > 1).sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traincc-opt", required=True)
    parser.add_argument("--cases", required=True,
                        help="folder of case files (*.mlir)")
    parser.add_argument("--llvm-bin", default=DEFAULT_LLVM_BIN)
    parser.add_argument("--llvm-lib", default=DEFAULT_LLVM_LIB)
    parser.add_argument("--eps", type=float, default=1e-6)
    parser.add_argument("--dtype", choices=sorted(TOLERANCES), default="f64",
                        help="f64: against finite differences; another "
                             "type: the retyped cases' gradients against "
                             "the f64 ones (the lowering's conversions)")
    parser.add_argument("--tolerance", type=float,
                        help="largest error (default: by --dtype, %s)"
                             % ", ".join("%s %g" % item
                                         for item in TOLERANCES.items()))
    parser.add_argument("--floor", type=float, default=1e-2,
                        help="least gradient size errors are relative to: "
                             "central differences carry ~1e-10 of rounding "
                             "noise, which must not count against a "
                             "gradient that is truly ~0")
    parser.add_argument("--max-elementwise", type=int, default=160,
                        help="parameters up to this size are checked per "
                             "element, larger ones along random directions")
    parser.add_argument("--directions", type=int, default=24)
    parser.add_argument("--dropout-seed", type=int, default=1234)
    parser.add_argument("--seed", type=int, default=20240607,
                        help="seed of the random values")
    parser.add_argument("--filter", default="")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--min-cases", type=int, default=1,
                        help="fail when fewer cases are checked")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep every case's files under DIR")
    options = parser.parse_args()
    if options.tolerance is None:
        options.tolerance = TOLERANCES[options.dtype]

    cases = discover_cases(options.cases, options.dtype, options.filter)
    names = [c[0] for c in cases]
    if len(set(names)) != len(names):
        sys.exit("gradient_check: duplicate case names")

    with tempfile.TemporaryDirectory(prefix="traincc-gradcheck-tools-") as bin_dir:
        # A copy of traincc-opt: a rebuild while this runs must not pull it
        # from under the workers.
        copy = os.path.join(bin_dir, "traincc-opt")
        shutil.copy2(options.traincc_opt, copy)
        tools = {
            "traincc-opt": copy,
            "mlir-opt": os.path.join(options.llvm_bin, "mlir-opt"),
            "mlir-runner": os.path.join(options.llvm_bin, "mlir-runner"),
            "runtime-libs": [os.path.join(options.llvm_lib, lib) for lib in (
                "libmlir_c_runner_utils.so", "libmlir_runner_utils.so")],
        }

        def task(index_case):
            index, (name, text, directives) = index_case
            try:
                # Seeded by name: a case's values do not change when
                # others are added.
                seed = options.seed + zlib.crc32(name.encode())
                return name, check_case(name, text, directives, tools,
                                        options, seed), None
            except Failure as failure:
                return name, [], failure

        with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
            results = list(pool.map(task, enumerate(cases)))
        # Exact checks, independent of the cases' type.
        dropped = ties = mask_failure = ties_failure = None
        if options.dtype == "f64":
            try:
                dropped = check_dropout_mask(tools, options)
            except Failure as failure:
                mask_failure = failure
            try:
                ties = check_max_pool_ties(tools, options)
            except Failure as failure:
                ties_failure = failure

    print("Gradient check: append-loss -> explicit-training-mode -> autodiff "
          "-> convert-train-to-linalg, %s," % options.dtype)
    if options.dtype == "f64":
        print("against central differences (eps %g); error = max |analytic - "
              "numeric| / max(max |numeric|, %g)"
              % (options.eps, options.floor))
    else:
        print("against the f64 gradients at the same values; error = max "
              "|%s - f64| / max(max |f64|, %g)" % (options.dtype,
                                                  options.floor))
    print("per parameter, tolerance %g" % options.tolerance)
    print()
    width = max([len(n) for n in names] + [4])
    row = "| %-*s | %-18s | %8s | %6s | %5s | %-13s | %-6s |"
    print(row % (width, "case", "parameter (worst)", "max|grad|", "checks",
                 "evals", "max rel error", "result"))
    print("|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|-%s-|" % (
        "-" * width, "-" * 18, "-" * 8, "-" * 6, "-" * 5, "-" * 13, "-" * 6))
    failed, problems = 0, []
    for name, rows, failure in results:
        if failure:
            failed += 1
            print(row % (width, name, "-", "-", "-", "-", "-",
                         "FAIL:" + failure.stage))
            problems.append("  %s: failed at %s:\n%s" % (name, failure.stage,
                                                        failure))
            continue
        worst = max(rows, key=lambda r: r.error)
        ok = all(r.error <= options.tolerance for r in rows)
        failed += not ok
        print(row % (width, name, worst.param[:18], "%.1e" % worst.scale,
                     sum(r.checks for r in rows),
                     sum(r.evaluations for r in rows) + 1,
                     "%.2e" % worst.error, "pass" if ok else "FAIL"))
        for r in rows:
            if r.error > options.tolerance:
                problems.append("  %s: %s: error %.3e (%s)"
                                % (name, r.param, r.error, r.note))
    print()
    if mask_failure:
        print("dropout mask: FAIL: %s" % mask_failure)
    elif dropped is not None:
        print("dropout mask: matches the reference hash (dropped %.4f for "
              "ratio 0.25)" % dropped)
    if ties_failure:
        print("max_pool ties: FAIL: %s" % ties_failure)
    elif ties is not None:
        print("max_pool ties: matches PyTorch's max_pool2d backward (%d "
              "windows with a tied maximum)" % ties)
    if problems:
        print()
        print("failures:")
        print("\n".join(problems))
    print()
    print("cases: %d" % len(results))
    print("failed: %d" % failed)
    if len(results) < options.min_cases:
        print("error: %d cases checked, fewer than --min-cases %d"
              % (len(results), options.min_cases))
        return 1
    return 1 if failed or mask_failure or ties_failure else 0


if __name__ == "__main__":
    sys.exit(main())
