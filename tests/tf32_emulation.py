"""Emulate on the CPU what an NVIDIA GPU does to float32 matmuls and convolutions.

On Ampere-and-newer GPUs, float32 matmuls and convolutions may read their inputs
as TensorFloat-32 (10 mantissa bits instead of 23) and accumulate in float32.
Whether they do is a setting of each framework: JAX's matmul precision
(``jax_default_matmul_precision`` or an operation's ``precision``; anything below
``HIGHEST`` is TF32 on a GPU) and PyTorch's ``fp32_precision`` for CUDA matmuls and
cuDNN convolutions (cuDNN allows TF32 unless told otherwise).

This module reproduces that rounding on a CPU, honouring the settings in force,
so tests can check that the course's parity tolerances hold on a GPU:

- :class:`TorchTF32Mode`, a ``TorchDispatchMode`` that rounds the float32 inputs
  of every matmul and convolution, forward and backward, that torch's settings
  let run in TF32;
- :func:`emulate_jax`, which traces a function to a jaxpr and evaluates it,
  rounding the inputs of ``dot_general`` and ``conv_general_dilated`` whose
  precision allows TF32.

Both refuse, with an error, operations they cannot round faithfully (a fused
attention kernel, a dot inside a JAX loop), so rounding is never skipped silently.
Rounding is to nearest, ties to even, like ``cvt.rn.tf32.f32``; accumulation
stays float32, as on tensor cores.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal
from torch.utils._python_dispatch import TorchDispatchMode

TF32_BITS = 10  # explicit mantissa bits of TensorFloat-32
BF16_BITS = 7  # and of bfloat16
FLOAT32_BITS = 23


# ------------------------------------------------------------------ rounding


def round_mantissa_np(x: np.ndarray, bits: int) -> np.ndarray:
    """float32 values rounded to ``bits`` mantissa bits (nearest, ties to even)."""
    x = np.asarray(x, dtype=np.float32)
    drop = FLOAT32_BITS - bits
    u = x.view(np.uint32)
    half = np.uint32((1 << (drop - 1)) - 1)
    lsb = (u >> np.uint32(drop)) & np.uint32(1)
    r = (u + half + lsb) & np.uint32((0xFFFFFFFF >> drop) << drop)
    return np.where(np.isfinite(x), r.view(np.float32), x)


def round_mantissa_torch(t: Any, bits: int) -> Any:
    """A float32 torch tensor rounded to ``bits`` mantissa bits; other dtypes pass."""
    if t.dtype != torch.float32:
        return t
    drop = FLOAT32_BITS - bits
    u = t.contiguous().view(torch.int32)  # same bits; int32 addition wraps like uint32
    lsb = torch.bitwise_and(torch.bitwise_right_shift(u, drop), 1)
    r = torch.bitwise_and(u + ((1 << (drop - 1)) - 1) + lsb, -(1 << drop))
    return torch.where(torch.isfinite(t), r.view(torch.float32), t)


def round_mantissa_jax(x: Any, bits: int) -> Any:
    """A float32 jax array rounded to ``bits`` mantissa bits; other dtypes pass."""
    if x.dtype != jnp.float32:
        return x
    drop = FLOAT32_BITS - bits
    u = lax.bitcast_convert_type(x, jnp.uint32)
    lsb = (u >> drop) & 1
    keep = jnp.uint32((0xFFFFFFFF >> drop) << drop)
    r = (u + jnp.uint32((1 << (drop - 1)) - 1) + lsb) & keep
    return jnp.where(jnp.isfinite(x), lax.bitcast_convert_type(r, jnp.float32), x)


# -------------------------------------------------------------------- PyTorch


def _torch_setting(kind: str) -> str:
    """torch's fp32 precision for CUDA matmuls (``kind="matmul"``) or cuDNN convs ("conv")."""
    backends = torch.backends
    if hasattr(backends.cudnn, "conv"):  # torch >= 2.9: read the new API only
        # (reading the legacy allow_tf32 flags after the new API was used raises)
        if kind == "matmul":
            chain = [backends.cuda.matmul.fp32_precision]
        else:
            chain = [backends.cudnn.conv.fp32_precision, backends.cudnn.fp32_precision]
        chain.append(backends.fp32_precision)
        for value in chain:  # "none" inherits from the level above
            if value != "none":
                return value
        return "ieee"
    if kind == "matmul":  # pragma: no cover - torch < 2.9
        return "ieee" if torch.get_float32_matmul_precision() == "highest" else "tf32"
    return "tf32" if backends.cudnn.allow_tf32 else "ieee"  # pragma: no cover


_BITS = {"ieee": None, "tf32": TF32_BITS, "bf16": BF16_BITS}

# aten op -> (the setting that governs it, positions of the operands a GPU multiplies
# in TF32). Biases and addends stay float32: cuBLAS and cuDNN add them afterwards.
_TORCH_ROUNDED = {
    "mm": ("matmul", (0, 1)),
    "bmm": ("matmul", (0, 1)),
    "matmul": ("matmul", (0, 1)),
    "addmm": ("matmul", (1, 2)),
    "baddbmm": ("matmul", (1, 2)),
    "addbmm": ("matmul", (1, 2)),
    "_addmm_activation": ("matmul", (1, 2)),
    "convolution": ("conv", (0, 1)),
    "_convolution": ("conv", (0, 1)),
    "convolution_backward": ("conv", (0, 1, 2)),  # grad_output, input, weight
}
# Contractions whose GPU precision the mode cannot reproduce by rounding operands:
# fused attention kernels (their internal matmuls are out of reach), matrix-vector
# products (cuBLAS gemv, whose use of TF32 is not the same switch), backend kernels.
_TORCH_REFUSED = (
    "mv",
    "addmv",
    "dot",
    "vdot",
    "_native_multi_head_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "mkldnn_convolution",
    "cudnn_convolution",
)


class TorchTF32Mode(TorchDispatchMode):
    """Round the float32 operands of matmuls/convs that torch's settings let use TF32.

    Use as a context manager around forward and backward passes. ``seen`` counts
    every aten op by name; ``rounded`` counts the calls whose inputs were rounded.
    Raises ``NotImplementedError`` on a float32 contraction it cannot emulate.
    """

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}
        self.rounded: dict[str, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func.overloadpacket.__name__)
        self.seen[name] = self.seen.get(name, 0) + 1
        f32 = any(
            isinstance(a, torch.Tensor) and a.dtype == torch.float32
            for a in (*args, *kwargs.values())
        )
        if name in _TORCH_REFUSED and f32:
            raise NotImplementedError(
                f"TorchTF32Mode: aten.{name} on float32 has no TF32 emulation; "
                "compute it with ops the mode rounds (mm, bmm, convolution) instead"
            )
        if name in _TORCH_ROUNDED and f32:
            kind, positions = _TORCH_ROUNDED[name]
            bits = _BITS[_torch_setting(kind)]
            if bits is not None:
                self.rounded[name] = self.rounded.get(name, 0) + 1
                args = tuple(
                    round_mantissa_torch(a, bits)
                    if i in positions and isinstance(a, torch.Tensor)
                    else a
                    for i, a in enumerate(args)
                )
        return func(*args, **kwargs)


# ------------------------------------------------------------------------ JAX

# Primitives whose single sub-jaxpr is just called: the interpreter steps into them.
_CALLS = {
    "pjit": "jaxpr",
    "jit": "jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
    "checkpoint": "jaxpr",
    "remat": "jaxpr",
    "remat2": "jaxpr",
}
_CONTRACTIONS = ("dot_general", "conv_general_dilated")


def _jax_precision_bits(precision: Any) -> int | None:
    """Mantissa bits a GPU keeps for a dot/conv with this ``precision`` param (None: all)."""
    if precision is None:  # the config decides; unset means DEFAULT, TF32 on a GPU
        precision = jax.config.jax_default_matmul_precision
        if precision is None:
            return TF32_BITS
    if isinstance(precision, str):
        try:
            precision = lax.Precision(precision)
        except (ValueError, KeyError):
            precision = lax.DotAlgorithmPreset[precision]
    if isinstance(precision, lax.Precision):
        precision = (precision, precision)
    if isinstance(precision, tuple) and all(
        isinstance(p, lax.Precision) for p in precision
    ):
        # XLA's GPU backend takes the higher of the two operand precisions.
        best = max(precision, key=lambda p: p.value)
        return None if best == lax.Precision.HIGHEST else TF32_BITS
    if isinstance(precision, lax.DotAlgorithmPreset):
        presets = {
            "DEFAULT": _jax_precision_bits(None),
            "F32_F32_F32": None,
            "TF32_TF32_F32": TF32_BITS,
            "TF32_TF32_F32_X3": None,
            "BF16_BF16_F32": BF16_BITS,
            "BF16_BF16_F32_X3": None,
            "BF16_BF16_F32_X6": None,
            "BF16_BF16_F32_X9": None,
        }
        if precision.name in presets:
            return presets[precision.name]
    raise NotImplementedError(
        f"emulate_jax: no TF32 emulation for precision {precision!r}"
    )


def _sub_jaxprs(params: dict) -> list:
    found = []
    for value in params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, ClosedJaxpr):
                found.append(v.jaxpr)
            elif isinstance(v, Jaxpr):
                found.append(v)
    return found


def _has_contraction(jaxpr: Any) -> bool:
    return any(
        eqn.primitive.name in _CONTRACTIONS
        or any(map(_has_contraction, _sub_jaxprs(eqn.params)))
        for eqn in jaxpr.eqns
    )


class JaxTF32Stats:
    """What one evaluation rounded: counts by primitive."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.rounded: dict[str, int] = {}


def _eval(jaxpr: Any, consts: list, args: list, stats: JaxTF32Stats) -> list:
    env: dict = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for var, val in zip(jaxpr.constvars, consts, strict=True):
        env[var] = val
    for var, val in zip(jaxpr.invars, args, strict=True):
        env[var] = val
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        stats.seen[name] = stats.seen.get(name, 0) + 1
        invals = [read(v) for v in eqn.invars]
        if name in _CALLS:
            sub = eqn.params[_CALLS[name]]
            if isinstance(sub, ClosedJaxpr):
                outs = _eval(sub.jaxpr, list(sub.consts), invals, stats)
            else:
                outs = _eval(sub, [], invals, stats)
        else:
            if name not in _CONTRACTIONS and any(
                map(_has_contraction, _sub_jaxprs(eqn.params))
            ):
                raise NotImplementedError(
                    f"emulate_jax: '{name}' contains a dot_general or convolution, and "
                    "its body is not emulated; unroll the loop or branch for this test"
                )
            if name in _CONTRACTIONS:
                bits = _jax_precision_bits(eqn.params.get("precision"))
                if bits is not None:
                    stats.rounded[name] = stats.rounded.get(name, 0) + 1
                    invals = [round_mantissa_jax(x, bits) for x in invals]
            outs = eqn.primitive.bind(*invals, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        for var, val in zip(eqn.outvars, outs, strict=True):
            env[var] = val
    return [read(v) for v in jaxpr.outvars]


def emulate_jax(fun: Callable, *, stats: JaxTF32Stats | None = None) -> Callable:
    """``fun`` evaluated as a GPU would under JAX's current precision settings.

    The settings are read when the returned function is called (``fun`` is traced
    then). The evaluation runs under one ``jax.jit``, so it takes seconds, not minutes.
    """
    stats = JaxTF32Stats() if stats is None else stats

    @functools.wraps(fun)
    def wrapped(*args):
        closed, out_shape = jax.make_jaxpr(fun, return_shape=True)(*args)
        flat_args = jax.tree.leaves(args)
        outs = jax.jit(lambda consts, xs: _eval(closed.jaxpr, consts, xs, stats))(
            list(closed.consts), flat_args
        )
        return jax.tree.unflatten(jax.tree.structure(out_shape), outs)

    wrapped.stats = stats
    return wrapped
