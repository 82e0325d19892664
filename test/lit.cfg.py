# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "traincc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".textproto", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.traincc_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

llvm_config.with_system_environment(["HOME", "TMPDIR", "PATH"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# Debian's Python packages (torch, onnx, numpy) live under /usr/bin/python3,
# not the interpreter that may be first on PATH.
config.substitutions.append(("%python", "/usr/bin/python3"))
# ONNX Runtime is no Debian package: scripts/install-deps.sh installs it
# with pip into a venv outside the clone, $TRAINCC_ORT_VENV (default
# ~/.cache/traincc/ort-venv), whose python is %ort_python.
config.substitutions.append(
    ("%ort_python",
     os.path.join(os.environ.get("TRAINCC_ORT_VENV") or
                  os.path.expanduser("~/.cache/traincc/ort-venv"),
                  "bin", "python")))
# The fake CUDA driver (test/runtime/fake-cuda): TRAINCC_LIBCUDA=%fake_libcuda.
config.substitutions.append(
    ("%fake_libcuda",
     os.path.join(config.traincc_tools_dir, "libtraincc-fake-cuda.so")))
config.substitutions.append(("%onnx_proto_dir", config.onnx_proto_dir))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# Encodes an ONNX model written as protobuf text.
config.substitutions.append(
    ("%encode_onnx",
     "protoc --encode=onnx.ModelProto -I%s %s/onnx/onnx.proto"
     % (os.path.dirname(config.onnx_proto_dir), os.path.dirname(config.onnx_proto_dir))))

tool_dirs = [config.traincc_tools_dir, config.llvm_tools_dir]
# traincc-test-trainer*: the runtime linked with a hand-written model
# (test/runtime/TestModel.cpp): micro-batch 8, 32, 8 with BatchNorm, and
# 8 with an MSE loss.
tools = ["traincc", "traincc-opt", "traincc-test-trainer",
         "traincc-test-trainer-b32", "traincc-test-trainer-bn",
         "traincc-test-trainer-mse"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Debian's dataset-fashion-mnist, which the tests that train a whole epoch
# of the example need.
if os.path.isfile("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"):
    config.available_features.add("fashion-mnist")

# The framework environments of scripts/setup-framework-venvs.sh
# (%tf_python, %jax_python, %torch_python: a current PyTorch); the tests of
# test/e2e/frameworks that need one are UNSUPPORTED without it. Packages are
# looked for, not imported (TensorFlow takes seconds to import).
import glob


def add_framework_venv(feature, substitution, env, default, packages):
    venv = os.environ.get(env) or os.path.expanduser(default)
    python = os.path.join(venv, "bin", "python")
    config.substitutions.append((substitution, python))
    sites = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    if os.path.exists(python) and sites and all(
            os.path.isdir(os.path.join(sites[0], p)) for p in packages):
        config.available_features.add(feature)


add_framework_venv("tf-venv", "%tf_python", "TRAINCC_TF_VENV",
                   "~/.cache/traincc/tf-venv", ["tensorflow", "tf2onnx", "onnx"])
add_framework_venv("jax-venv", "%jax_python", "TRAINCC_JAX_VENV",
                   "~/.cache/traincc/jax-venv",
                   ["jax", "flax", "optax", "jax2onnx", "onnx"])
add_framework_venv("torch-current", "%torch_python", "TRAINCC_BENCH_VENV",
                   "~/.cache/traincc/bench-venv", ["torch", "onnx", "onnxscript"])
