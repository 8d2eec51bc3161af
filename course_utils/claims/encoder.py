"""The course's transformer encoder, shared by the latency and training benchmarks.

:data:`SHAPES` names the sizes the benchmarks use: the course's small encoder
(``course``, and ``smoke`` for smoke mode), and two named proxies of the
articles' models with random weights: ``bert-base`` (BERT-base's 12 layers,
width 768, 12 heads, MLP 3072, its vocabulary, 128 tokens) and ``gpt2-small``
(the same blocks with GPT-2's vocabulary). :func:`encoder_setup` builds a
``TorchEncoder``/``NNXEncoder`` pair with equal weights
(:func:`course_utils.convert.make_pair`) once per shape, and keeps one PyTorch
copy per device; :func:`checked_pair` also checks, once, that both halves
compute the same; :func:`jax_forward` jits the NNX model's forward;
:func:`random_tokens` makes a reproducible batch of token ids.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from course_utils.claims.harness import Ctx

_BERT_BLOCKS = {"d_model": 768, "n_heads": 12, "d_ff": 3072, "n_layers": 12, "seq": 128}
SHAPES: dict[str, dict[str, int]] = {
    "smoke": {"d_model": 32, "n_heads": 2, "d_ff": 64, "n_layers": 1, "seq": 16},
    "course": {"d_model": 128, "n_heads": 4, "d_ff": 512, "n_layers": 4, "seq": 64},
    "bert-base": {**_BERT_BLOCKS, "vocab": 30522},
    "gpt2-small": {**_BERT_BLOCKS, "vocab": 50257},
}
TOKEN_IDS = (
    1000  # random_tokens draws ids below this; every shape's vocabulary holds them
)

_ENCODERS: dict[Any, Any] = {}
_CHECKED: set[Any] = set()


def describe(shape: str) -> str:
    """'12 layers, width 768, 12 heads, MLP 3072, 128 tokens' for a shape of :data:`SHAPES`."""
    s = SHAPES[shape]
    return (
        f"{s['n_layers']} layers, width {s['d_model']}, {s['n_heads']} heads, "
        f"MLP {s['d_ff']}, {s['seq']} tokens"
    )


def _shape(ctx: Ctx, shape: str | None) -> str:
    return shape or ctx.size("course", "smoke")


def encoder_setup(ctx: Ctx, shape: str | None = None):
    """A TorchEncoder/NNXEncoder pair with equal weights, and its sizes.

    ``shape`` is a key of :data:`SHAPES` (default: ``course``, or ``smoke`` in
    smoke mode). The PyTorch model lives on ``ctx.torch_device``; the NNX
    model's state is put on ``ctx.jax_device`` by :func:`jax_forward` and
    :func:`~course_utils.claims.training.train_steps`.
    """
    shape = _shape(ctx, shape)
    if shape not in _ENCODERS:
        from course_utils.convert import make_pair
        from course_utils.models import BlockConfig

        sizes = {"vocab": TOKEN_IDS, **SHAPES[shape]}
        cfg = BlockConfig(
            sizes["d_model"], sizes["n_heads"], sizes["d_ff"], dropout=0.0
        )
        tm, jm = make_pair(
            cfg,
            seed=0,
            encoder=True,
            vocab=sizes["vocab"],
            max_len=max(128, sizes["seq"]),
            n_layers=sizes["n_layers"],
            num_classes=2,
        )
        _ENCODERS[shape] = (tm, jm, sizes)
    tm, jm, sizes = _ENCODERS[shape]
    key = (shape, str(ctx.torch_device))
    if key not in _ENCODERS:
        _ENCODERS[key] = copy.deepcopy(tm).to(ctx.torch_device)
    return _ENCODERS[key], jm, sizes


def checked_pair(ctx: Ctx, shape: str | None = None):
    """:func:`encoder_setup`, after checking (once per shape and device) that both halves agree.

    One sequence through each framework must give the same logits (float32,
    matched precision) before anything is timed: a benchmark compares the same
    work or nothing.
    """
    import torch

    from course_utils.parity import assert_close

    shape = _shape(ctx, shape)
    tm, jm, sizes = encoder_setup(ctx, shape)
    key = (shape, str(ctx.torch_device), str(ctx.jax_device))
    if key not in _CHECKED:
        tokens = random_tokens(1, sizes["seq"], seed=4)
        forward, state = jax_forward(ctx, jm)
        with torch.inference_mode():
            expected = tm(ctx.torch_put(tokens))
        assert_close(
            forward(state, ctx.jax_put(tokens)),
            expected,
            rtol=1e-4,
            atol=1e-5,
            name=f"{shape} encoder: JAX against PyTorch",
        )
        _CHECKED.add(key)
    return tm, jm, sizes


def jax_forward(ctx: Ctx, nnx_model: Any):
    """``(jitted forward(state, x), state)`` with the state on ``ctx.jax_device``."""
    from course_utils.forwards import jit_forward

    forward, state = jit_forward(nnx_model)
    return forward, ctx.jax_put(state)


def random_tokens(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return (
        np.random.default_rng(seed)
        .integers(0, TOKEN_IDS, (batch, seq))
        .astype(np.int32)
    )
