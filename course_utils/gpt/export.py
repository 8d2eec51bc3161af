"""The GPT exported as a program, serialised to bytes and loaded back, in each framework (lesson 12).

``jax.export`` of a ``logits(params, tokens)`` function and ``torch.export`` of
the module, each with a symbolic batch and sequence length. A reloaded export
is sampled with :func:`course_utils.gpt.sample.generate_fn`, the course's one
sampler for any ``tokens -> logits`` callable. Checkpoints that resume training
are in :mod:`course_utils.gpt.checkpoint`.

The frameworks are imported inside the functions.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

__all__ = ["jax_export", "jax_load", "torch_export", "torch_load"]


def jax_export(
    logits: Callable[..., Any],
    params: Any,
    token_dtype: Any = None,
    platform: str | None = None,
) -> bytes:
    """Serialised ``jax.export`` of ``logits(params, tokens)``, tokens ``int32[b, t]``.

    Both the batch ``b`` and the sequence length ``t`` are symbolic; ``token_dtype``
    is the tokens' dtype (default ``int32``). ``platform`` (``"cpu"``, ``"tpu"``) is
    where the program will run: JAX's default backend otherwise, so a program exported
    on a TPU machine for arrays on its CPU needs ``platform="cpu"``.
    """
    import jax
    import jax.export
    import jax.numpy as jnp

    b, t = jax.export.symbolic_shape("b, t")
    specs = (
        jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params),
        jax.ShapeDtypeStruct((b, t), token_dtype or jnp.int32),
    )
    platforms = [platform] if platform else None  # None: JAX's default backend
    return jax.export.export(jax.jit(logits), platforms=platforms)(*specs).serialize()


def jax_load(blob: bytes) -> Any:
    """The ``jax.export.Exported`` back from bytes; call it with ``.call(params, tokens)``."""
    import jax.export

    return jax.export.deserialize(bytearray(blob))


def torch_export(model: Any, tokens: Any, max_len: int) -> bytes:
    """``torch.export`` of ``model(tokens)`` (eval mode) with symbolic batch and length ≤ ``max_len``."""
    import torch

    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=max_len)
    model.eval()
    with torch.no_grad():
        program = torch.export.export(
            model, (tokens,), dynamic_shapes=({0: batch, 1: seq},)
        )
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()


def torch_load(blob: bytes) -> Any:
    """The exported program back from bytes, as a callable module."""
    import torch

    return torch.export.load(io.BytesIO(blob)).module()
