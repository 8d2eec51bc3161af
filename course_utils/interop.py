"""PyTorch <-> JAX interop: DLPack zero-copy transfers and JAX code inside torch autograd.

- :func:`to_jax` / :func:`to_torch` move arrays through DLPack without copying
  when the layout allows it; :func:`shares_memory` checks that no copy happened.
- :func:`torch_function` wraps a JAX function (jitted once) as a function of
  torch tensors whose gradients flow back into PyTorch's autograd, via
  ``jax.vjp``. That is the "hybrid migration" step: one piece of a PyTorch
  training step rewritten in JAX while the rest stays as it is.

Importing this module does not import jax or torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_WIDE = ("float64", "int64", "uint64", "complex128")


def _x64_enabled() -> bool:
    import jax

    return bool(jax.config.jax_enable_x64)


def to_jax(t: Any, *, name: str = "tensor") -> Any:
    """A jax array viewing the same memory as torch tensor ``t`` (via DLPack).

    Raises instead of copying silently: a tensor that requires grad (detach it,
    or use :func:`torch_function` so gradients flow), and a 64-bit tensor while
    JAX runs in 32-bit mode (JAX would copy it and cast to 32 bits). A
    non-contiguous tensor is made contiguous first, which copies it. Zero-copy
    also needs an aligned buffer; check with :func:`shares_memory`.
    """
    import jax
    import torch

    if not isinstance(t, torch.Tensor):
        raise TypeError(
            f"to_jax: {name} must be a torch.Tensor, got {type(t).__name__}"
        )
    if t.requires_grad:
        raise ValueError(
            f"to_jax: {name} requires grad, and DLPack carries no autograd history; "
            "pass tensor.detach(), or wrap the JAX code with interop.torch_function"
        )
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype in _WIDE and not _x64_enabled():
        raise TypeError(
            f"to_jax: {name} is {dtype} but JAX runs in 32-bit mode, so it would copy and "
            f"cast it silently; convert first (tensor.float() / tensor.int()) or enable "
            "jax_enable_x64"
        )
    if not t.is_contiguous():
        t = t.contiguous()
    return jax.dlpack.from_dlpack(t)


def to_torch(a: Any, *, name: str = "array") -> Any:
    """A torch tensor viewing the same memory as jax array ``a`` (via DLPack).

    JAX assumes its arrays never change: writing into the returned tensor
    changes ``a`` behind JAX's back. Treat the tensor as read-only, or
    ``.clone()`` it before any in-place operation.
    """
    import torch

    if not hasattr(a, "__dlpack__") or not hasattr(a, "block_until_ready"):
        raise TypeError(f"to_torch: {name} must be a jax.Array, got {type(a).__name__}")
    reason = dlpack_blocker(a)
    if reason:
        raise CrossDeviceError(f"to_torch: {name} {reason}")
    return torch.from_dlpack(a)


class CrossDeviceError(TypeError):
    """DLPack cannot hand this array to PyTorch: it lives where PyTorch cannot reach."""


def dlpack_blocker(a: Any) -> str | None:
    """Why PyTorch cannot view jax array ``a`` through DLPack, or None when it can.

    PyTorch imports CPU buffers and, in a CUDA build, CUDA buffers; a TPU buffer
    (PyTorch stays on the CPU on TPU machines) has no DLPack view in torch.
    """
    platforms = {d.platform for d in a.devices()}
    if len(platforms) > 1 or len(a.devices()) > 1:
        return (
            "is sharded over several devices; DLPack views one buffer (gather it first)"
        )
    (platform,) = platforms
    if platform in ("cpu", "cuda", "gpu"):
        return None
    return (
        f"lives on a {platform.upper()}, whose memory PyTorch cannot view (it runs on the "
        "CPU here): copy it to the CPU first (jax.device_put(a, jax.devices('cpu')[0]))"
    )


def buffer_pointer(x: Any) -> int:
    """Address of the first element of a torch tensor or a single-device jax array."""
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr())
    if hasattr(x, "unsafe_buffer_pointer"):
        return int(x.unsafe_buffer_pointer())
    raise TypeError(
        f"buffer_pointer: expected a torch.Tensor or jax.Array, got {type(x).__name__}"
    )


def shares_memory(t: Any, a: Any) -> bool:
    """Whether torch tensor ``t`` and jax array ``a`` start at the same address."""
    return buffer_pointer(t) == buffer_pointer(a)


# ------------------------------------------------------------ JAX inside autograd


def _float_like(t: Any) -> bool:
    return t.is_floating_point() or t.is_complex()


def _merge(mask: tuple[bool, ...], diff: tuple, rest: tuple) -> list:
    it_d, it_r = iter(diff), iter(rest)
    return [next(it_d) if m else next(it_r) for m in mask]


class _Compiled:
    """Jitted forward (output + VJP residuals) and backward for one input mask."""

    def __init__(self, fn: Callable, mask: tuple[bool, ...]) -> None:
        import jax

        def fwd(diff: tuple, rest: tuple):
            def g(*d):
                return fn(*_merge(mask, d, rest))

            return jax.vjp(g, *diff)

        self.fwd = jax.jit(fwd)
        self.bwd = jax.jit(lambda vjp_fn, cot: vjp_fn(cot))


def torch_function(fn: Callable, *, name: str | None = None) -> Callable:
    """Wrap JAX function ``fn`` so PyTorch can call it and backpropagate through it.

    ``fn`` takes jax arrays (positionally) and returns one jax array or a
    tuple/list of them. The wrapper takes torch tensors, runs ``fn`` compiled
    with ``jax.jit`` (the forward also computes the ``jax.vjp`` residuals),
    and returns torch tensors (one, or a tuple) that sit in the autograd graph:
    ``backward()`` calls the jitted VJP. The outputs view JAX's memory: treat
    them as read-only (``.clone()`` before an in-place operation).
    Floating-point inputs get gradients; integer inputs (labels, indices) are
    passed through without one. Inputs and outputs cross by DLPack, without
    copies where the layout allows.
    """
    import torch

    if not callable(fn):
        raise TypeError(f"torch_function: fn must be callable, got {type(fn).__name__}")
    label = name or getattr(fn, "__name__", "fn")
    function, single = _autograd_function(fn, label)

    def call(*tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, torch.Tensor):
                raise TypeError(
                    f"{label}: argument {i} must be a torch.Tensor, got {type(t).__name__}"
                )
        mask = tuple(_float_like(t) for t in tensors)
        outs = function.apply(mask, *tensors)
        return outs[0] if single[0] else outs

    call.__name__ = f"torch_{label}"
    call.__doc__ = f"{label} (a JAX function) called on torch tensors, differentiable."
    return call


def _autograd_function(fn: Callable, label: str) -> tuple[Any, list[bool]]:
    """The ``torch.autograd.Function`` running jitted ``fn`` and its VJP, per input mask.

    Also returns a one-element list saying whether the last forward returned one
    bare array (then :func:`torch_function`'s wrapper returns one tensor).
    """
    import torch

    compiled: dict[tuple[bool, ...], _Compiled] = {}
    single = [True]  # whether the last forward returned one bare array

    class _JaxFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, mask, *tensors):
            import jax

            xs = [
                to_jax(t.detach(), name=f"{label} argument {i}")
                for i, t in enumerate(tensors)
            ]
            diff = tuple(x for x, m in zip(xs, mask, strict=True) if m)
            rest = tuple(x for x, m in zip(xs, mask, strict=True) if not m)
            if mask not in compiled:
                compiled[mask] = _Compiled(fn, mask)
            out, vjp_fn = compiled[mask].fwd(diff, rest)
            leaves, treedef = jax.tree.flatten(out)
            single[0] = not isinstance(out, tuple | list)
            ctx.vjp_fn, ctx.treedef, ctx.mask = vjp_fn, treedef, mask
            ctx.leaf_specs = [(leaf.shape, leaf.dtype) for leaf in leaves]
            return tuple(to_torch(leaf) for leaf in leaves)

        @staticmethod
        def backward(ctx, *grads):
            import jax
            import jax.numpy as jnp

            cots = [
                jnp.zeros(shape, dtype)
                if g is None
                else to_jax(g, name=f"{label} output gradient")
                for g, (shape, dtype) in zip(grads, ctx.leaf_specs, strict=True)
            ]
            cot_tree = jax.tree.unflatten(ctx.treedef, cots)
            diff_grads = iter(compiled[ctx.mask].bwd(ctx.vjp_fn, cot_tree))
            return (
                None,
                *(to_torch(next(diff_grads)) if m else None for m in ctx.mask),
            )

    return _JaxFunction, single
