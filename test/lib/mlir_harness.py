"""What the numeric harnesses share: running tools, taking a module of
upstream dialects to LLVM and running its `main` with mlir-runner.

Used by test/Codegen/TrainToLinalg/numeric/onnx_node_numeric.py and
test/Transforms/gradient-check/gradient_check.py, which put this folder on
sys.path. Run with /usr/bin/python3.
"""

import subprocess

# Upstream lowering from linalg on tensors to the LLVM dialect.
# convert-elementwise-to-linalg turns the harnesses' own arith ops on tensors
# (the bit-pattern casts in main) into linalg.
LLVM_PIPELINE = [
    "--convert-elementwise-to-linalg",
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--finalize-memref-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
]


class Failure(Exception):
    """A check that failed; `stage` says where."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def run(cmd, timeout, stdin=None):
    """(exit code, stdout, stderr) of `cmd`; -1 when it timed out."""
    try:
        proc = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return -1, b"", b"timed out after %d s" % timeout
    return proc.returncode, proc.stdout, proc.stderr


def short(text, lines=8):
    """The first `lines` lines of `text` (str or bytes), indented."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    out = text.strip().splitlines()
    if len(out) > lines:
        out = out[:lines] + ["... (%d more lines)" % (len(out) - lines)]
    return "\n".join("      " + line for line in out)


def tensor_shape(type_):
    """(shape, element) of `tensor<2x3xf64>`."""
    parts = type_[len("tensor<"):-1].split("x")
    return tuple(int(p) for p in parts[:-1]), parts[-1]


def run_main(program, tools, timeout, lines=8):
    """Takes `program` (upstream dialects only) to LLVM with mlir-opt and
    runs its `main` with mlir-runner; returns stdout. A failure of either
    tool raises Failure ("llvm", "run") with the first `lines` lines of its
    stderr."""
    code, llvm_ir, err = run([tools["mlir-opt"]] + LLVM_PIPELINE, timeout,
                             program.encode())
    if code != 0:
        raise Failure("llvm", short(err, lines))
    code, out, err = run([tools["mlir-runner"], "-e", "main",
                          "-entry-point-result=void",
                          "-shared-libs=" + ",".join(tools["runtime-libs"])],
                         timeout, llvm_ir)
    if code != 0:
        raise Failure("run", short(err, lines))
    return out
