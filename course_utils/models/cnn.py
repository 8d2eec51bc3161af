"""The course's small CNN, written once in PyTorch and once in Flax NNX, the same model.

It is the CNN of the source articles (two 3x3 convolutions with ReLU, one 2x2
max-pool, then two linear layers) adapted to scikit-learn's 8x8 digits. The
articles' two versions silently differ (``nn.Conv2d`` pads 0, Flax's ``Conv``
pads ``'SAME'``); here both pad 1, so the layers have the same shapes:

====================  ======================  ======================
layer                 ``TorchCNN`` (NCHW)      ``NNXCNN`` (NHWC)
====================  ======================  ======================
input                 (B, 1, S, S)            (B, S, S, 1)
conv1 + ReLU          (B, C1, S, S)           (B, S, S, C1)
conv2 + ReLU          (B, C2, S, S)           (B, S, S, C2)
2x2 max-pool          (B, C2, S/2, S/2)       (B, S/2, S/2, C2)
flatten               (B, C2*S/2*S/2) C,H,W   (B, S/2*S/2*C2) H,W,C
fc1 + ReLU, fc2       (B, hidden), (B, 10)    (B, hidden), (B, 10)
====================  ======================  ======================

The flatten orders differ, which is why copying ``fc1`` between them needs a
permutation (see :mod:`course_utils.convert.cnn`). Initialisations differ too (each
framework's default); copy the weights to make the two models equal.

This module imports torch and flax at the top; ``import course_utils`` does not
import it.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import torch
from flax import nnx
from torch import nn

__all__ = ["NNXCNN", "TorchCNN", "check_sizes"]


def check_sizes(
    channels: Sequence[int], hidden: int, num_classes: int, image_size: int
) -> tuple[int, int]:
    """Validate the constructor arguments; return ``(c1, c2)``."""
    try:
        c1, c2 = (int(c) for c in channels)
    except (TypeError, ValueError):
        raise ValueError(
            f"channels must be two positive integers (conv1, conv2), got {channels!r}"
        ) from None
    for name, value in (
        ("channels[0]", c1),
        ("channels[1]", c2),
        ("hidden", hidden),
        ("num_classes", num_classes),
    ):
        if int(value) < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if int(image_size) < 2 or int(image_size) % 2:
        raise ValueError(
            f"image_size must be an even integer >= 2 (the 2x2 max-pool halves it), "
            f"got {image_size!r}"
        )
    return c1, c2


# ----------------------------------------------------------------- PyTorch


class TorchCNN(nn.Module):
    """conv(3x3, pad 1)-ReLU-conv(3x3, pad 1)-ReLU-maxpool(2)-flatten-fc-ReLU-fc, NCHW."""

    def __init__(
        self,
        channels: Sequence[int] = (16, 32),
        hidden: int = 64,
        num_classes: int = 10,
        image_size: int = 8,
    ) -> None:
        super().__init__()
        c1, c2 = check_sizes(channels, hidden, num_classes, image_size)
        half = image_size // 2
        self.image_size = int(image_size)
        self.feature_chw = (c2, half, half)  # what flatten sees, in NCHW order
        self.conv1 = nn.Conv2d(1, c1, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(c2 * half * half, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 4 or x.shape[1] != 1 or x.shape[2:] != (self.image_size,) * 2:
            raise ValueError(
                f"TorchCNN: x must be NCHW (batch, 1, {self.image_size}, "
                f"{self.image_size}), got shape {tuple(x.shape)}"
            )
        x = torch.relu(self.conv1(x))  # (batch, c1, S, S)
        x = torch.relu(self.conv2(x))  # (batch, c2, S, S)
        x = torch.max_pool2d(x, 2)  # (batch, c2, S/2, S/2)
        x = torch.flatten(x, 1)  # (batch, c2 * S/2 * S/2), channel-major
        x = torch.relu(self.fc1(x))
        return self.fc2(x)  # logits (batch, num_classes)


# ------------------------------------------------------------------ Flax NNX


class NNXCNN(nnx.Module):
    """conv(3x3, pad 1)-ReLU-conv(3x3, pad 1)-ReLU-maxpool(2)-flatten-fc-ReLU-fc, NHWC."""

    def __init__(
        self,
        channels: Sequence[int] = (16, 32),
        hidden: int = 64,
        num_classes: int = 10,
        image_size: int = 8,
        *,
        rngs: nnx.Rngs,
    ) -> None:
        c1, c2 = check_sizes(channels, hidden, num_classes, image_size)
        half = image_size // 2
        self.image_size = int(image_size)
        self.feature_hwc = (half, half, c2)  # what flatten sees, in NHWC order
        pad = ((1, 1), (1, 1))  # explicit: the same as PyTorch's padding=1
        self.conv1 = nnx.Conv(1, c1, kernel_size=(3, 3), padding=pad, rngs=rngs)
        self.conv2 = nnx.Conv(c1, c2, kernel_size=(3, 3), padding=pad, rngs=rngs)
        self.fc1 = nnx.Linear(half * half * c2, hidden, rngs=rngs)
        self.fc2 = nnx.Linear(hidden, num_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        if x.ndim != 4 or x.shape[3] != 1 or x.shape[1:3] != (self.image_size,) * 2:
            raise ValueError(
                f"NNXCNN: x must be NHWC (batch, {self.image_size}, "
                f"{self.image_size}, 1), got shape {tuple(x.shape)}"
            )
        x = nnx.relu(self.conv1(x))  # (batch, S, S, c1)
        x = nnx.relu(self.conv2(x))  # (batch, S, S, c2)
        x = nnx.max_pool(
            x, window_shape=(2, 2), strides=(2, 2)
        )  # (batch, S/2, S/2, c2)
        x = x.reshape(x.shape[0], -1)  # (batch, S/2 * S/2 * c2), channel-minor
        x = nnx.relu(self.fc1(x))
        return self.fc2(x)  # logits (batch, num_classes)
