"""torchvision classifiers for parity.py, shrunk to CI size.

The modules are torchvision's own classes (their ops and export paths are
what users get), with 10 classes, dropout and stochastic depth off (both
sides must compute the same function), and fed 32x32 images (64x64 for
EfficientNet) instead of 224x224, so that a few steps take seconds.
"""
import torch
import torch.nn as nn

# torchvision is imported by the constructors: parity.py's importers (the GPU
# check) may run where it is missing.


class MobileNetV3Small(nn.Module):
    """mobilenet_v3_small at full width: HardSwish, HardSigmoid-gated
    squeeze-and-excitation, depthwise convolutions, BatchNorm on 1x1 maps."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.net = torchvision.models.mobilenet_v3_small(num_classes=10,
                                                         dropout=0.0)

    def forward(self, x):
        return self.net(x)


class EfficientNetB0(nn.Module):
    """efficientnet_b0's blocks at half width and depth (torchvision's
    EfficientNet with the b0 configuration scaled by width_mult 0.5,
    depth_mult 0.5: 11 MBConv blocks instead of 16): SiLU, Sigmoid-gated
    squeeze-and-excitation, 3x3 and 5x5 depthwise convolutions, BatchNorm."""

    def __init__(self):
        super().__init__()
        from torchvision.models.efficientnet import (EfficientNet,
                                                     _efficientnet_conf)
        blocks, last_channel = _efficientnet_conf(
            "efficientnet_b0", width_mult=0.5, depth_mult=0.5)
        self.net = EfficientNet(blocks, dropout=0.0,
                                stochastic_depth_prob=0.0, num_classes=10,
                                last_channel=last_channel)

    def forward(self, x):
        return self.net(x)


class ConvNeXtStack(nn.Module):
    """torchvision's ConvNeXt with two stages of two blocks (32 and 64
    channels) instead of convnext_tiny's 3-3-9-3 blocks of 96-768: the
    same ops (4x4 patchify stem, 7x7 depthwise convolutions, LayerNorm over
    channels through permutes, GELU, layer scale, LayerNorm2d downsampling).
    Layer scale starts at 0.5 rather than 1e-6, so that the blocks' own
    weights get gradients large enough to compare."""

    def __init__(self):
        super().__init__()
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt
        stages = [CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 2)]
        self.net = ConvNeXt(stages, stochastic_depth_prob=0.0,
                            layer_scale=0.5, num_classes=10)

    def forward(self, x):
        return self.net(x)


class NormalizedPadded(nn.Module):
    """swin_v2's cosine attention in small: F.normalize (ONNX ReduceL2) of
    a linear layer's output over rows that include zero padding (swin_v2
    pads its feature maps to whole windows), whose norms are exactly zero:
    PyTorch passes them no gradient, and neither may traincc."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 8, bias=False)
        self.head = nn.Linear(4 * 8, 10)

    def forward(self, x):
        x = nn.functional.pad(x, (0, 0, 0, 2))
        q = nn.functional.normalize(self.proj(x), dim=-1)
        return self.head(torch.flatten(q, 1))


MODELS = {
    "mobilenet-v3-small": (MobileNetV3Small, (3, 32, 32), 10),
    "efficientnet-b0": (EfficientNetB0, (3, 64, 64), 10),
    "convnext-stack": (ConvNeXtStack, (3, 32, 32), 10),
    "normalize-padded": (NormalizedPadded, (2, 6), 10),
}
