"""A small CNN for Fashion-MNIST: 1x28x28 images -> 10 class logits.

Two Conv(3x3, padding 1) + BatchNorm + ReLU + MaxPool(2) blocks (32 and 64
channels) and a linear head: 28x28 -> 14x14 -> 7x7, so the head sees
64 * 7 * 7 = 3136 features.
"""

import torch
from torch import nn


class FashionCNN(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, kernel_size=3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(64 * 7 * 7, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.classifier(x)
