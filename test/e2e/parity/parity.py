#!/usr/bin/env python3
"""PyTorch parity of compiled trainers.

For one model: export it from PyTorch (training mode, opset 15), compile it
with traincc, train it for a few optimizer steps on fixed random data in file
order, and train the same PyTorch module from the same initial weights on the
same micro-batches. Prints the largest relative differences of the step
losses, the final parameters and the BatchNorm running statistics, and exits
1 when one exceeds the tolerance.

Run with /usr/bin/python3 (Debian's torch and onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn


class BasicConvBN(nn.Module):
    """The seed article's block: BatchNorm2d(32) -> Conv2d(32, 64, 5, pad 2),
    with a linear head."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(32)
        self.conv = nn.Conv2d(32, 64, 5, padding=2)
        self.head = nn.Linear(64 * 6 * 6, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.conv(self.bn(x)), 1))


class ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus the skip connection, then a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8 * 6 * 6, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + x)
        return self.head(torch.flatten(y, 1))


class DownsampleBlock(nn.Module):
    """A ResNet downsampling block: a stride-2 3x3 conv-BN-ReLU-conv-BN and
    a stride-2 1x1 conv-BN shortcut, then global average pooling and a
    linear head (strided and 4x4 convolutions: the CPU packs their
    windows; the second one's filter gradient, 64 * 3 * 3 wide, in panels
    of 4 vectors)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 64, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.conv2 = nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.shortcut = nn.Conv2d(8, 64, 1, stride=2, bias=False)
        self.bn3 = nn.BatchNorm2d(64)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + self.bn3(self.shortcut(x)))
        return self.head(torch.flatten(self.pool(y), 1))


class PoolingStem(nn.Module):
    """A ResNet-style stem and stage: conv-BN-ReLU then max pooling over
    overlapping, padded 3x3/2 windows, conv-BN-ReLU then 2x2/2 pooling,
    and a linear head. traincc moves each ReLU after its pooling and, on
    the CPU, normalises inside the pooling's window pass."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool2 = nn.MaxPool2d(2)
        self.head = nn.Linear(16 * 3 * 3, 10)

    def forward(self, x):
        y = self.pool1(torch.relu(self.bn1(self.conv1(x))))
        y = self.pool2(torch.relu(self.bn2(self.conv2(y))))
        return self.head(torch.flatten(y, 1))


class MLPBatchNorm(nn.Module):
    """An MLP with BatchNorm1d."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.bn = nn.BatchNorm1d(32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


class FashionCNN(nn.Module):
    """The example model (examples/fashion_mnist/model.py) at a small size."""

    def __init__(self):
        super().__init__()
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                        "..", "examples", "fashion_mnist"))
        from model import FashionCNN as Example
        self.net = Example()

    def forward(self, x):
        return self.net(x)


class FashionViT(nn.Module):
    """The example vision transformer (examples/vit_fashion_mnist/model.py):
    strided-conv patches, LayerNorm, multi-head attention, a GELU MLP.
    Exported at opset 17, where LayerNorm is one LayerNormalization node."""

    opset = 17

    def __init__(self):
        super().__init__()
        # By path: the CNN example's module is also called `model`.
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "..", "..", "examples", "vit_fashion_mnist",
                            "model.py")
        spec = importlib.util.spec_from_file_location("vit_model", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.net = module.FashionViT()

    def forward(self, x):
        return self.net(x)


class UpsampleDecoder(nn.Module):
    """A decoder's upsampling: ConvTranspose2d (stride 2, output padding,
    and a grouped one), PReLU, ELU and InstanceNorm2d, then a linear
    head. Exported at opset 17."""

    opset = 17

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1,
                                      output_padding=1)
        self.act1 = nn.PReLU(8)
        self.up2 = nn.ConvTranspose2d(8, 4, 2, stride=2, groups=2)
        self.norm = nn.InstanceNorm2d(4, affine=True)
        self.head = nn.Linear(4 * 16 * 16, 10)

    def forward(self, x):
        y = self.act1(self.up1(x))
        y = nn.functional.elu(self.norm(self.up2(y)))
        return self.head(torch.flatten(y, 1))


class ResizeWhere(nn.Module):
    """A segmentation-style decoder: nearest upsampling by 2 (ONNX Resize,
    asymmetric/floor), bilinear upsampling (half_pixel) and bilinear
    downsampling with align_corners, between convolutions; a leaky
    activation written as torch.where(y > 0, y, 0.2 y) (Greater + Where on
    computed data) and a masked_fill by a constant mask (Where with a
    constant condition), then a linear head. Exported at opset 17."""

    opset = 17

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(4, 6, 3, padding=1)
        self.conv2 = nn.Conv2d(6, 4, 3, padding=1)
        self.register_buffer("mask", torch.rand(12, 12) < 0.3)
        self.head = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        f = nn.functional
        y = f.interpolate(self.conv1(x), scale_factor=2, mode="nearest")
        y = torch.where(y > 0, y, 0.2 * y)
        y = f.interpolate(self.conv2(y), scale_factor=1.5, mode="bilinear",
                          align_corners=False)
        y = y.masked_fill(self.mask, -0.5)
        y = f.interpolate(y, size=(6, 6), mode="bilinear",
                          align_corners=True)
        return self.head(torch.flatten(y, 1))


class EinsumAttention(nn.Module):
    """Two-head self-attention written with torch.einsum (ONNX Einsum):
    a projection "bnd,de->bne", scores "bhid,bhjd->bhij" and the weighted
    sum "bhij,bhjd->bhid", on 4 tokens of 8 features, then a linear
    head."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Parameter(torch.randn(8, 24) * 0.3)
        self.head = nn.Linear(4 * 8, 10)

    def forward(self, x):
        b = x.shape[0]
        q, k, v = torch.einsum("bnd,de->bne", x, self.qkv).reshape(
            b, 4, 3, 2, 4).permute(2, 0, 3, 1, 4)
        scores = torch.einsum("bhid,bhjd->bhij", q, k).softmax(-1)
        y = torch.einsum("bhij,bhjd->bhid", scores, v)
        return self.head(y.transpose(1, 2).reshape(b, 32))


class TokenClassifier(nn.Module):
    """Token ids -> nn.Embedding -> `body` -> a linear head; the body is a
    recurrent layer (its last time step's output) or a transformer encoder
    (mean over the sequence). `vocab` tells the harness to feed int64 ids
    in [0, vocab)."""

    vocab = 100

    def __init__(self, body, pool="last", dim=32):
        super().__init__()
        self.emb = nn.Embedding(self.vocab, dim)
        self.body = body
        self.pool = pool
        self.head = nn.Linear(dim, 10)

    def forward(self, ids):
        h = self.body(self.emb(ids))
        if isinstance(h, tuple):  # nn.LSTM / nn.GRU: (output, state)
            h = h[0]
        h = h[:, -1] if self.pool == "last" else h.mean(1)
        return self.head(h)


class LSTMClassifier(TokenClassifier):
    def __init__(self):
        super().__init__(nn.LSTM(32, 32, batch_first=True))


class BiLSTMClassifier(TokenClassifier):
    """Two stacked bidirectional layers (two chained ONNX LSTM nodes)."""

    def __init__(self):
        super().__init__(nn.LSTM(16, 8, num_layers=2, bidirectional=True,
                                 batch_first=True), dim=16)
        self.emb = nn.Embedding(self.vocab, 16)


class GRUClassifier(TokenClassifier):
    def __init__(self):
        super().__init__(nn.GRU(32, 32, batch_first=True))


class TransformerClassifier(TokenClassifier):
    """nn.TransformerEncoder (post-norm layers, ReLU feed-forward); dropout
    off, so that both sides compute the same function."""

    def __init__(self):
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                           batch_first=True)
        super().__init__(nn.TransformerEncoder(layer, 2), pool="mean")


class GeluTransformerClassifier(TokenClassifier):
    """Pre-norm layers (norm_first) with a GELU feed-forward (exported as
    Erf); dropout off."""

    def __init__(self):
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                           activation="gelu", norm_first=True,
                                           batch_first=True)
        super().__init__(nn.TransformerEncoder(layer, 2), pool="mean")


MODELS = {
    "basic-conv-bn": (BasicConvBN, (32, 6, 6), 10),
    "residual": (ResidualBlock, (8, 6, 6), 10),
    "downsample": (DownsampleBlock, (8, 8, 8), 10),
    "mlp-bn": (MLPBatchNorm, (20,), 5),
    "pooling-stem": (PoolingStem, (3, 12, 12), 10),
    "fashion-cnn": (FashionCNN, (1, 28, 28), 10),
    "vit": (FashionViT, (1, 28, 28), 10),
    "upsample": (UpsampleDecoder, (8, 4, 4), 10),
    "einsum-attention": (EinsumAttention, (4, 8), 10),
    "resize-where": (ResizeWhere, (4, 4, 4), 10),
    # Sequences of 16 token ids (8 for the stacked bidirectional LSTM).
    "lstm": (LSTMClassifier, (16,), 10),
    "bilstm": (BiLSTMClassifier, (8,), 10),
    "gru": (GRUClassifier, (16,), 10),
    "transformer": (TransformerClassifier, (16,), 10),
    "transformer-gelu": (GeluTransformerClassifier, (16,), 10),
}
# torchvision classifiers at CI size (mobilenet_v3_small, efficientnet_b0, a
# ConvNeXt block stack).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:  # The current-PyTorch environment of the framework tests lacks it.
    from vision_models import MODELS as VISION_MODELS  # noqa: E402
    MODELS.update(VISION_MODELS)
except ImportError:
    pass


def export(model, sample_shape, batch, path):
    ids = getattr(model, "vocab", None) is not None
    sample = torch.zeros((batch,) + sample_shape,
                         dtype=torch.int64 if ids else torch.float32)
    torch.onnx.export(model, sample, path,
                      input_names=["input"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      opset_version=getattr(model, "opset", 15))


def prepare_model(models, name, batch, workdir, prefix):
    """Model `name` of `models`, built with seed 0 and exported for `batch`
    into `workdir` (or a new temporary folder). Returns its class, the
    module, the folder and the ONNX file."""
    torch.manual_seed(0)
    cls, sample_shape, _ = models[name]
    model = cls()
    work = workdir or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    export(model, sample_shape, batch, onnx_path)
    return cls, model, work, onnx_path


def emulated_cuda(compile_cmd, trainer, work, fake_libcuda):
    """Makes a compile command build --target cpu,cuda and its CUDA kernels
    for the CPU (--emit=cuda-emulation) as a library the fake CUDA driver
    runs. Returns the compile command, the trainer's device flags and the
    environment that loads the fake driver."""
    compile_cmd = compile_cmd + ["--target", "cpu,cuda"]
    kernels = os.path.join(work, "kernels.o")
    library = os.path.join(work, "kernels.so")
    subprocess.run([c for c in compile_cmd if c not in ("-o", trainer)]
                   + ["--emit=cuda-emulation", "-o", kernels], check=True)
    subprocess.run(["c++", "-shared", kernels, "-o", library], check=True)
    # A compute capability above the cubin's sm_90: the PTX path.
    env = dict(os.environ, TRAINCC_LIBCUDA=fake_libcuda,
               TRAINCC_FAKE_CUDA_CC="10.0",
               TRAINCC_FAKE_CUDA_EMULATION=library)
    print("device: cuda, traincc's kernels emulated on the CPU")
    return compile_cmd, ["--device", "cuda"], env


def pool_batch_norm_statistics(model):
    """For --bn-stats step: keeps PyTorch's BatchNorm layers from updating
    their running statistics (momentum 0) and records each layer's inputs,
    so that update_pooled() can apply one update per optimizer step from
    the statistics of all K micro-batches together."""
    layers = [m for m in model.modules()
              if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    inputs = {layer: [] for layer in layers}
    momenta = {layer: layer.momentum for layer in layers}
    for layer in layers:
        layer.momentum = 0.0
        layer.register_forward_hook(
            lambda mod, args, out: inputs[mod].append(args[0].detach()))

    def update_pooled():
        for layer in layers:
            x = torch.cat(inputs[layer])
            axes = [0] + list(range(2, x.dim()))
            n = x.numel() // x.shape[1]
            mean = x.mean(dim=axes)
            var = x.var(dim=axes, unbiased=False) * n / (n - 1)
            m = momenta[layer]
            with torch.no_grad():
                layer.running_mean.mul_(1 - m).add_(m * mean)
                layer.running_var.mul_(1 - m).add_(m * var)
            inputs[layer].clear()
    return update_pooled


def make_data(sample_shape, classes, n, vocab=None):
    """The parity runs' training data: n random samples (int64 ids in
    [0, vocab) for token models) and labels."""
    rng = np.random.default_rng(1)
    if vocab is not None:
        x = rng.integers(0, vocab, (n,) + sample_shape).astype(np.int64)
        y = rng.integers(0, classes, n).astype(np.int64)
        return x, y
    x = rng.standard_normal((n,) + sample_shape).astype(np.float32)
    y = rng.integers(0, classes, n).astype(np.int64)
    return x, y


def fashion_mnist(n, folder="/usr/share/datasets/fashion-mnist"):
    """The first n Fashion-MNIST training images (float32 [n,1,28,28] in
    [0, 1], as the trainer's --dataset scales them) and labels."""
    import gzip
    with gzip.open(os.path.join(folder, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(os.path.join(folder, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (images[:n * 784].reshape(n, 1, 28, 28) / 255.0).astype(np.float32)
    return x, labels[:n].astype(np.int64)


def torch_reference(model, x, y, args, dtype, device="cpu"):
    """Trains `model` (converted to `dtype`, on `device`) like the trainer
    does: steps of K micro-batches in file order, loss/K per micro-batch."""
    model = model.to(device=device, dtype=dtype)
    model.train()
    update_pooled = (pool_batch_norm_statistics(model)
                     if args.bn_stats == "step" else None)
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=args.lr,
                              momentum=args.momentum,
                              weight_decay=args.weight_decay)
    elif args.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=args.lr,
                               weight_decay=args.weight_decay)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr,
                                weight_decay=args.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    b, k = args.batch, args.accum
    for step in range(args.steps):
        opt.zero_grad()
        total = 0.0
        for m in range(k):
            i = (step * k + m) * b
            xb = torch.tensor(x[i:i + b], device=device)
            if xb.is_floating_point():
                xb = xb.to(dtype)
            yb = torch.tensor(y[i:i + b], device=device)
            loss = loss_fn(model(xb), yb)
            (loss / k).backward()
            total += loss.item()
        opt.step()
        if update_pooled:
            update_pooled()
        losses.append(total / k)
    return losses, model


def rel_error(a, b, floor=1e-12):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), floor))


def main():
    # Only main() needs onnx: the GPU check (scripts/gpu_check.py) imports
    # this module where onnx may be missing.
    import onnx
    import onnx.numpy_helper

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--traincc", default="traincc")
    parser.add_argument("--optimizer", default="sgd")
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--accum", type=int, default=1)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--bn-stats", choices=["micro", "step"],
                        default="micro")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--target", help="traincc --target (default: "
                        "traincc's); cpu skips the CUDA compile of tests "
                        "that only train on the CPU; --emulated-cuda sets "
                        "its own)")
    parser.add_argument("--floor", type=float, default=1e-12,
                        help="smallest magnitude a tensor's error is "
                        "relative to: deep nets hold tensors that are zero "
                        "in exact arithmetic (the bias of a BatchNorm that "
                        "another BatchNorm follows gets no gradient), whose "
                        "rounding noise is compared in absolute terms")
    parser.add_argument("--traincc-flag", action="append", default=[],
                        metavar="FLAG",
                        help="one more traincc flag (repeatable), e.g. "
                        "--traincc-flag=--winograd-min-channels=1")
    parser.add_argument("--workdir")
    parser.add_argument("--fashion-mnist", action="store_true",
                        help="train on the first Fashion-MNIST images "
                             "instead of random data (1x28x28 models)")
    parser.add_argument("--emulated-cuda", metavar="FAKE_LIBCUDA",
                        help="train with --device cuda on this fake CUDA "
                             "driver, which runs traincc's CUDA kernels "
                             "compiled for the CPU (--emit=cuda-emulation)")
    args = parser.parse_args()

    _, sample_shape, classes = MODELS[args.model]
    cls, model, work, onnx_path = prepare_model(MODELS, args.model, args.batch,
                                                args.workdir, "parity-")

    n = args.batch * args.accum * args.steps
    if args.fashion_mnist:
        x, y = fashion_mnist(n)
    else:
        x, y = make_data(sample_shape, classes, n,
                         getattr(cls, "vocab", None))
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)

    trainer = os.path.join(work, "trainer")
    compile_cmd = [args.traincc, onnx_path, "-o", trainer,
                   "--batch-size", str(args.batch),
                   "--accum-steps", str(args.accum),
                   "--optimizer", args.optimizer,
                   "--weight-decay", str(args.weight_decay),
                   "--bn-stats", args.bn_stats]
    if args.optimizer == "sgd":
        compile_cmd += ["--momentum", str(args.momentum)]
    if args.target and not args.emulated_cuda:
        compile_cmd += ["--target", args.target]
    compile_cmd += args.traincc_flag
    device, env = [], None
    if args.emulated_cuda:
        compile_cmd, device, env = emulated_cuda(compile_cmd, trainer, work,
                                                 args.emulated_cuda)
    subprocess.run(compile_cmd, check=True)
    log = os.path.join(work, "run.jsonl")
    exported = os.path.join(work, "trained.onnx")
    subprocess.run([trainer, "train", "--train-x", os.path.join(work, "x.npy"),
                    "--train-y", os.path.join(work, "y.npy"), "--no-shuffle",
                    "--max-steps", str(args.steps), "--lr", str(args.lr),
                    "--log", log, "--export", exported, "--threads", "1",
                    # PyTorch's parameter names, BatchNorm's included.
                    "--no-fold-bn"]
                   + device, check=True, stdout=subprocess.DEVNULL, env=env)
    steps = [json.loads(line) for line in open(log)]
    ours = [s["loss"] for s in steps if s["event"] == "step"]

    # The float64 reference bounds what float32 rounding can explain: the
    # float32 PyTorch run must be as close to it as the trainer is.
    ref64, model64 = torch_reference(cls_copy(model, cls), x, y, args,
                                     torch.float64)
    ref32, model32 = torch_reference(cls_copy(model, cls), x, y, args,
                                     torch.float32)

    trained = {init.name: onnx.numpy_helper.to_array(init)
               for init in onnx.load(exported).graph.initializer}
    state64 = {k: v.detach().numpy() for k, v in model64.state_dict().items()}
    state32 = {k: v.detach().numpy() for k, v in model32.state_dict().items()}
    rows = [("step losses", rel_error(ours, ref64), rel_error(ref32, ref64))]
    weight_err, torch_weight_err = 0.0, 0.0
    stat_err, torch_stat_err = 0.0, 0.0
    for name, value in state64.items():
        if name.endswith("num_batches_tracked"):
            continue
        if name not in trained:
            print(f"missing in export: {name}")
            return 1
        ours_err = rel_error(trained[name], value, args.floor)
        torch_err = rel_error(state32[name], value, args.floor)
        if "running_" in name:
            stat_err = max(stat_err, ours_err)
            torch_stat_err = max(torch_stat_err, torch_err)
        else:
            weight_err = max(weight_err, ours_err)
            torch_weight_err = max(torch_weight_err, torch_err)
    rows.append(("parameters", weight_err, torch_weight_err))
    rows.append(("BN running stats", stat_err, torch_stat_err))

    print(f"parity {args.model} optimizer={args.optimizer} K={args.accum} "
          f"bn-stats={args.bn_stats} "
          f"steps={args.steps} (relative error vs PyTorch float64)")
    print(f"  {'quantity':18} {'traincc':>10} {'torch fp32':>10}")
    failed = False
    for name, ours_err, torch_err in rows:
        # Within the tolerance, or within a few times PyTorch's own float32
        # spread (deep nets amplify rounding).
        ok = ours_err <= max(args.tolerance, 4 * torch_err)
        failed |= not ok
        print(f"  {name:18} {ours_err:10.2e} {torch_err:10.2e} "
              f"{'ok' if ok else 'FAIL'}")
    print(f"  losses traincc: {[round(v, 6) for v in ours]}")
    print(f"  losses torch64: {[round(v, 6) for v in ref64]}")
    return 1 if failed else 0


def cls_copy(model, cls):
    """A fresh module of `cls` holding `model`'s initial weights."""
    clone = cls()
    clone.load_state_dict(model.state_dict())
    return clone


if __name__ == "__main__":
    sys.exit(main())
