"""Copy a whole ``TorchCNN`` into an ``NNXCNN`` and back (:mod:`course_utils.models.cnn`)."""

from __future__ import annotations

from typing import Any

import torch

from course_utils import compat
from course_utils.convert.layouts import (
    CNN_LAYERS,
    cnn_jax_tensors_to_torch,
    cnn_torch_tensors_to_jax,
)

__all__ = ["cnn_nnx_to_torch", "cnn_torch_to_nnx"]


def cnn_torch_to_nnx(torch_model: Any, nnx_model: Any) -> Any:
    """Copy a ``TorchCNN``'s parameters into an ``NNXCNN`` of the same sizes (in place).

    Returns ``nnx_model``. Raises ``ValueError`` naming the layer whose shapes
    do not match.
    """
    _check_pair(torch_model, nnx_model)
    tensors = dict(torch_model.named_parameters())
    converted = cnn_torch_tensors_to_jax(tensors, torch_model.feature_chw)
    for layer in CNN_LAYERS:
        module = getattr(nnx_model, layer)
        for name in ("kernel", "bias"):
            var = getattr(module, name)
            new = converted[layer][name]
            if tuple(var.shape) != tuple(new.shape):
                raise ValueError(
                    f"nnx_model.{layer}.{name} has shape {tuple(var.shape)} but "
                    f"torch_model.{layer} converts to {tuple(new.shape)}; build both "
                    "models with the same channels, hidden, num_classes and image_size"
                )
            compat.set_value(var, new.astype(compat.get_value(var).dtype))
    return nnx_model


def cnn_nnx_to_torch(nnx_model: Any, torch_model: Any) -> Any:
    """Copy an ``NNXCNN``'s parameters into a ``TorchCNN`` of the same sizes (in place).

    Returns ``torch_model``. Raises ``ValueError`` naming the parameter whose
    shapes do not match.
    """
    _check_pair(torch_model, nnx_model)
    tree = {
        layer: {
            name: getattr(getattr(nnx_model, layer), name)
            for name in ("kernel", "bias")
        }
        for layer in CNN_LAYERS
    }
    converted = cnn_jax_tensors_to_torch(tree, nnx_model.feature_hwc)
    params = dict(torch_model.named_parameters())
    with torch.no_grad():
        for name, new in converted.items():
            if tuple(params[name].shape) != tuple(new.shape):
                raise ValueError(
                    f"torch_model.{name} has shape {tuple(params[name].shape)} but "
                    f"nnx_model converts to {tuple(new.shape)}; build both models with "
                    "the same channels, hidden, num_classes and image_size"
                )
            params[name].copy_(new)
    return torch_model


def _check_pair(torch_model: Any, nnx_model: Any) -> None:
    if not hasattr(torch_model, "feature_chw") or not hasattr(
        torch_model, "named_parameters"
    ):
        raise TypeError(
            f"torch_model must be a course_utils.models.TorchCNN, got {type(torch_model).__name__}"
        )
    if not hasattr(nnx_model, "feature_hwc") or not all(
        hasattr(nnx_model, layer) for layer in CNN_LAYERS
    ):
        raise TypeError(
            f"nnx_model must be a course_utils.models.NNXCNN, got {type(nnx_model).__name__}"
        )
    C, H, W = torch_model.feature_chw
    if tuple(nnx_model.feature_hwc) != (H, W, C):
        raise ValueError(
            f"the models flatten different feature maps: torch_model (C, H, W)="
            f"{tuple(torch_model.feature_chw)}, nnx_model (H, W, C)={tuple(nnx_model.feature_hwc)}"
        )
