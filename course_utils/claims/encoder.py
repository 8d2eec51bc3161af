"""The course's transformer encoder, shared by the latency and training benchmarks.

:func:`encoder_setup` builds a ``TorchEncoder``/``NNXEncoder`` pair with equal
weights (:func:`course_utils.convert.make_pair`) once per size, and keeps one
PyTorch copy per device; :func:`jax_forward` jits the NNX model's forward;
:func:`random_tokens` makes a reproducible batch of token ids.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from course_utils.claims.harness import Ctx

_ENCODERS: dict[Any, Any] = {}


def encoder_setup(ctx: Ctx):
    """A TorchEncoder/NNXEncoder pair with equal weights, and its sizes.

    The PyTorch model lives on ``ctx.torch_device``; the NNX model's state is put
    on ``ctx.jax_device`` by :func:`jax_forward` and :func:`train_steps`.
    """
    if ctx.smoke not in _ENCODERS:
        from course_utils.convert import make_pair
        from course_utils.models import BlockConfig

        sizes = ctx.size(
            {"d_model": 128, "n_heads": 4, "d_ff": 512, "n_layers": 4, "seq": 64},
            {"d_model": 32, "n_heads": 2, "d_ff": 64, "n_layers": 1, "seq": 16},
        )
        cfg = BlockConfig(
            sizes["d_model"], sizes["n_heads"], sizes["d_ff"], dropout=0.0
        )
        tm, jm = make_pair(
            cfg,
            seed=0,
            encoder=True,
            vocab=1000,
            max_len=128,
            n_layers=sizes["n_layers"],
            num_classes=2,
        )
        _ENCODERS[ctx.smoke] = (tm, jm, sizes)
    tm, jm, sizes = _ENCODERS[ctx.smoke]
    key = (ctx.smoke, str(ctx.torch_device))
    if key not in _ENCODERS:
        _ENCODERS[key] = copy.deepcopy(tm).to(ctx.torch_device)
    return _ENCODERS[key], jm, sizes


def jax_forward(ctx: Ctx, nnx_model: Any):
    """``(jitted forward(state, x), state)`` with the state on ``ctx.jax_device``."""
    from course_utils.checklist import jit_forward

    forward, state = jit_forward(nnx_model)
    return forward, ctx.jax_put(state)


def random_tokens(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1000, (batch, seq)).astype(np.int32)
