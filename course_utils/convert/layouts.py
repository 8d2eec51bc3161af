"""Copy weights between PyTorch and JAX/Flax layers: the layouts, and why they differ.

================  ===============================  ================================
layer             PyTorch                          JAX / Flax NNX
================  ===============================  ================================
Linear            ``weight`` (out, in), y = x Wᵀ   ``kernel`` (in, out), y = x K
Conv 2-D          ``weight`` OIHW (out, in, h, w)  ``kernel`` HWIO (h, w, in, out)
activations       NCHW (batch, channel, h, w)      NHWC (batch, h, w, channel)
bias              (out,)                           (out,)
================  ===============================  ================================

So a Linear weight is transposed, a conv weight is permuted, and a Linear layer
that reads a *flattened* feature map needs its input rows permuted as well:
flattening NCHW walks channel, then row, then column, while flattening NHWC
walks row, column, then channel. :func:`flatten_linear_torch_to_jax` and
:func:`flatten_linear_jax_to_torch` do that permutation.

Functions named ``*_to_jax`` return jax arrays; ``*_to_torch`` return CPU torch
tensors. Inputs may be torch tensors, jax arrays or numpy arrays. Gradients have
the same layout as the parameters they belong to, so the same functions convert
them (:func:`cnn_torch_tensors_to_jax`, :func:`cnn_jax_tensors_to_torch`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from course_utils import compat

__all__ = [
    "CNN_LAYERS",
    "conv_jax_to_torch",
    "conv_torch_to_jax",
    "flatten_linear_jax_to_torch",
    "flatten_linear_torch_to_jax",
    "cnn_jax_tensors_to_torch",
    "linear_jax_to_torch",
    "linear_torch_to_jax",
    "cnn_torch_tensors_to_jax",
]

CNN_LAYERS = ("conv1", "conv2", "fc1", "fc2")


# ------------------------------------------------------------------ plumbing


def _np(x: Any, name: str) -> np.ndarray:
    """Any array-like as a float numpy array (a copy, so it is writable)."""
    from course_utils.parity import leaf_to_numpy

    if x is None:
        raise TypeError(f"{name} is None; expected an array")
    arr = np.array(leaf_to_numpy(x))
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must be a numeric array, got {type(x).__name__}")
    return arr


def _ndim(arr: np.ndarray, ndim: int, name: str, layout: str) -> None:
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D {layout}, got shape {arr.shape}")


def _bias(bias: Any, out: int, name: str) -> np.ndarray | None:
    if bias is None:
        return None
    b = _np(bias, name)
    if b.shape != (out,):
        raise ValueError(
            f"{name} must have shape ({out},) to match the weight, got {b.shape}"
        )
    return b


def _to_jax(*arrays: np.ndarray | None):
    import jax.numpy as jnp

    return tuple(None if a is None else jnp.asarray(a) for a in arrays)


def _to_torch(*arrays: np.ndarray | None):
    import torch

    return tuple(
        None if a is None else torch.from_numpy(np.ascontiguousarray(a)) for a in arrays
    )


# ------------------------------------------------------------- single layers


def linear_torch_to_jax(weight: Any, bias: Any = None):
    """PyTorch ``Linear`` (weight (out, in), bias (out,)) -> JAX (kernel (in, out), bias)."""
    w = _np(weight, "weight")
    _ndim(w, 2, "weight", "(out_features, in_features)")
    return _to_jax(w.T, _bias(bias, w.shape[0], "bias"))


def linear_jax_to_torch(kernel: Any, bias: Any = None):
    """JAX ``Linear`` (kernel (in, out), bias (out,)) -> PyTorch (weight (out, in), bias)."""
    k = _np(kernel, "kernel")
    _ndim(k, 2, "kernel", "(in_features, out_features)")
    return _to_torch(k.T, _bias(bias, k.shape[1], "bias"))


def conv_torch_to_jax(weight: Any, bias: Any = None):
    """PyTorch ``Conv2d`` weight OIHW (out, in, h, w) -> JAX kernel HWIO (h, w, in, out)."""
    w = _np(weight, "weight")
    _ndim(w, 4, "weight", "OIHW (out_channels, in_channels, kh, kw)")
    return _to_jax(w.transpose(2, 3, 1, 0), _bias(bias, w.shape[0], "bias"))


def conv_jax_to_torch(kernel: Any, bias: Any = None):
    """JAX conv kernel HWIO (h, w, in, out) -> PyTorch ``Conv2d`` weight OIHW (out, in, h, w)."""
    k = _np(kernel, "kernel")
    _ndim(k, 4, "kernel", "HWIO (kh, kw, in_channels, out_channels)")
    return _to_torch(k.transpose(3, 2, 0, 1), _bias(bias, k.shape[3], "bias"))


def _feature_shape(shape: Sequence[int], name: str) -> tuple[int, int, int]:
    try:
        a, b, c = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be three positive integers, got {shape!r}"
        ) from None
    if min(a, b, c) < 1:
        raise ValueError(f"{name} must be three positive integers, got {shape!r}")
    return a, b, c


def flatten_linear_torch_to_jax(weight: Any, bias: Any, chw: Sequence[int]):
    """A Linear layer after ``flatten`` of an NCHW map -> the same layer after an NHWC flatten.

    ``weight`` is (out, C*H*W), its columns in channel-major order; the JAX kernel
    is (H*W*C, out), its rows in channel-minor order. ``chw`` is ``(C, H, W)``.
    """
    C, H, W = _feature_shape(chw, "chw")
    w = _np(weight, "weight")
    _ndim(w, 2, "weight", "(out_features, C*H*W)")
    if w.shape[1] != C * H * W:
        raise ValueError(
            f"weight has {w.shape[1]} input features but chw={tuple(chw)} flattens to {C * H * W}"
        )
    out = w.shape[0]
    kernel = w.reshape(out, C, H, W).transpose(2, 3, 1, 0).reshape(H * W * C, out)
    return _to_jax(kernel, _bias(bias, out, "bias"))


def flatten_linear_jax_to_torch(kernel: Any, bias: Any, hwc: Sequence[int]):
    """The inverse of :func:`flatten_linear_torch_to_jax`; ``hwc`` is ``(H, W, C)``."""
    H, W, C = _feature_shape(hwc, "hwc")
    k = _np(kernel, "kernel")
    _ndim(k, 2, "kernel", "(H*W*C, out_features)")
    if k.shape[0] != H * W * C:
        raise ValueError(
            f"kernel has {k.shape[0]} input features but hwc={tuple(hwc)} flattens to {H * W * C}"
        )
    out = k.shape[1]
    weight = k.reshape(H, W, C, out).transpose(3, 2, 0, 1).reshape(out, C * H * W)
    return _to_torch(weight, _bias(bias, out, "bias"))


# ----------------------------------------------------------- the course's CNN


def cnn_torch_tensors_to_jax(
    tensors: Mapping[str, Any], chw: Sequence[int]
) -> dict[str, dict[str, Any]]:
    """``{'conv1.weight': t, 'conv1.bias': t, ...}`` (parameters or gradients) in JAX layout.

    Returns ``{'conv1': {'bias': b, 'kernel': k}, ...}``, the structure of
    ``nnx.to_pure_dict(nnx.state(nnx_model, nnx.Param))``. ``chw`` is the shape
    flatten sees in the PyTorch model (``TorchCNN.feature_chw``).
    """
    missing = [
        f"{layer}.{p}"
        for layer in CNN_LAYERS
        for p in ("weight", "bias")
        if f"{layer}.{p}" not in tensors
    ]
    if missing:
        raise KeyError(
            f"tensors is missing {missing}; expected the TorchCNN parameter names"
        )
    out: dict[str, dict[str, Any]] = {}
    for layer in CNN_LAYERS:
        w, b = tensors[f"{layer}.weight"], tensors[f"{layer}.bias"]
        try:
            if layer.startswith("conv"):
                kernel, bias = conv_torch_to_jax(w, b)
            elif layer == "fc1":
                kernel, bias = flatten_linear_torch_to_jax(w, b, chw)
            else:
                kernel, bias = linear_torch_to_jax(w, b)
        except (TypeError, ValueError) as err:
            raise type(err)(f"layer {layer}: {err}") from None
        out[layer] = {"bias": bias, "kernel": kernel}
    return out


def cnn_jax_tensors_to_torch(
    tree: Mapping[str, Any], hwc: Sequence[int]
) -> dict[str, Any]:
    """The inverse: ``{'conv1': {'kernel': k, 'bias': b}, ...}`` -> ``{'conv1.weight': t, ...}``.

    ``tree`` may be a plain dict or an ``nnx.State`` (parameters or gradients);
    ``hwc`` is the shape flatten sees in the NNX model (``NNXCNN.feature_hwc``).
    """
    out: dict[str, Any] = {}
    for layer in CNN_LAYERS:
        try:
            k, b = _unwrap(tree[layer]["kernel"]), _unwrap(tree[layer]["bias"])
        except (KeyError, TypeError):
            raise KeyError(
                f"tree has no {layer}['kernel'] and {layer}['bias']; expected the NNXCNN structure"
            ) from None
        try:
            if layer.startswith("conv"):
                weight, bias = conv_jax_to_torch(k, b)
            elif layer == "fc1":
                weight, bias = flatten_linear_jax_to_torch(k, b, hwc)
            else:
                weight, bias = linear_jax_to_torch(k, b)
        except (TypeError, ValueError) as err:
            raise type(err)(f"layer {layer}: {err}") from None
        out[f"{layer}.weight"], out[f"{layer}.bias"] = weight, bias
    return out


def _unwrap(x: Any) -> Any:
    """The array inside an ``nnx.Variable`` (or ``x`` itself)."""
    if _is_variable(x):
        return compat.get_value(x)
    return x


def _is_variable(x: Any) -> bool:
    """Whether ``x`` is an ``nnx.Variable`` (without importing flax for other inputs)."""
    nnx = sys.modules.get("flax.nnx")
    return nnx is not None and isinstance(x, nnx.Variable)
