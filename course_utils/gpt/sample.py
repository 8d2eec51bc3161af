"""Sampling from the GPTs of :mod:`course_utils.gpt.model`, with a KV cache and without.

Without a cache, every new token runs the whole context through the model
again (``T`` positions for one new logit row). With the cache, the prompt runs
once (``decode(prompt, cache, 0)``), then each step runs *one* position
(``decode(token, cache, pos)``): its query attends to the keys and values the
earlier steps left in the cache. Both give the same tokens; the tests and the
lesson check it.

One stream of random numbers for both frameworks: each step draws one uniform
number per sequence from ``np.random.default_rng(seed)`` and picks the token
where the cumulative probabilities first exceed it (inverse-CDF sampling). So
the same weights, temperature and seed give the same text in PyTorch and in
JAX, which ``torch.multinomial`` and ``jax.random.categorical`` (two different
generators) would not. ``temperature=0`` picks the most likely token.

:func:`generate_fn` is the same sampler for any ``tokens -> logits`` callable
(a reloaded ``jax.export`` or ``torch.export`` program, a model wrapped in a
lambda): the same ``uniforms`` stream and the same inverse-CDF pick, in NumPy,
without a cache, on a fixed window of ``block_size`` tokens.
:func:`teacher_forced` replays a given sample through such a callable: at each
drawn position, the token it would pick from the sample's own prefix with the
same random number, and how close that draw was to picking another token.

On the JAX side the model runs under ``nnx.jit``: the decode step compiles
once per input length (the position is a traced argument), and sampling
without a cache pads the context to ``block_size`` on the right, which a
causal model ignores, so it compiles once too.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx
from torch.nn import functional as F

from course_utils import compat

__all__ = [
    "generate_fn",
    "generate_nnx",
    "generate_torch",
    "teacher_forced",
    "uniforms",
]


def uniforms(steps: int, batch: int, seed: int) -> np.ndarray:
    """The shared random numbers: ``(steps, batch)`` float32 in [0, 1)."""
    return np.random.default_rng(seed).random((steps, batch), dtype=np.float32)


def _check(prompt_len: int, steps: int, cache_len: int | None = None) -> None:
    if prompt_len < 1 or steps < 0:
        raise ValueError(
            f"need a prompt of at least one token and steps >= 0, got {prompt_len}, {steps}"
        )
    if cache_len is not None and prompt_len + steps > cache_len:
        raise ValueError(
            f"prompt ({prompt_len}) + steps ({steps}) exceed block_size={cache_len}, "
            "the KV cache's length; sample without the cache to slide the context"
        )


def _window(tokens: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """The last ``size`` tokens, zero-padded on the right to ``size``; and the last filled index.

    A causal model's logits at a position ignore every later one, so the padding
    changes nothing, and one shape means one compiled program.
    """
    context = tokens[:, -size:]
    window = np.zeros((tokens.shape[0], size), np.int32)
    window[:, : context.shape[1]] = context
    return window, context.shape[1] - 1


# ----------------------------------------------------------------- PyTorch


def _pick_torch(
    logits: torch.Tensor, temperature: float, u: torch.Tensor
) -> torch.Tensor:
    # logits: (B, V); u: (B,) -> (B,) token ids
    if temperature == 0:
        return logits.argmax(-1)
    cdf = F.softmax(logits.float() / temperature, dim=-1).cumsum(-1)
    return (cdf < u[:, None]).sum(-1).clamp(max=logits.shape[-1] - 1)


@torch.no_grad()
def generate_torch(
    model,
    prompt,
    steps: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """``prompt`` (B, T0) ids followed by ``steps`` sampled ids: a NumPy array (B, T0 + steps)."""
    device = model.tok_emb.weight.device
    tokens = torch.as_tensor(np.asarray(prompt), dtype=torch.long, device=device)
    B, T0 = tokens.shape
    S = model.cfg.block_size
    _check(T0, steps, S if use_cache else None)
    u = torch.from_numpy(uniforms(steps, B, seed)).to(device)
    was_training = model.training
    model.eval()
    try:
        if use_cache:
            cache = model.new_cache(B)
            logits, _ = model.decode(tokens, cache, 0)  # the prompt, once
        for s in range(steps):
            if not use_cache:
                logits = model(tokens[:, -S:])  # the whole (cropped) context again
            nxt = _pick_torch(logits[:, -1], temperature, u[s])  # (B,)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            if use_cache and s + 1 < steps:
                logits, _ = model.decode(nxt[:, None], cache, T0 + s)  # one position
    finally:
        model.train(was_training)
    return tokens.cpu().numpy()


# ------------------------------------------------------------------ Flax NNX


@nnx.jit
def _nnx_decode(model, tokens, cache, pos):
    return model.decode(tokens, cache, pos)


@nnx.jit
def _nnx_logits_at(model, window, index):
    # window: (B, block_size), right-padded; the logits at position ``index``: (B, V)
    return jnp.take(model(window), index, axis=1)


@jax.jit
def _pick_jax(logits, temperature, u):
    cdf = jnp.cumsum(
        jax.nn.softmax(logits.astype(jnp.float32) / temperature, axis=-1), axis=-1
    )
    return jnp.minimum((cdf < u[:, None]).sum(-1), logits.shape[-1] - 1)


def _pick_nnx(logits, temperature: float, u):
    if temperature == 0:
        return jnp.argmax(logits, axis=-1)
    return _pick_jax(logits, temperature, u)


def generate_nnx(
    model,
    prompt,
    steps: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """The same as :func:`generate_torch`, for an ``NNXGPT`` (run in evaluation mode)."""
    tokens = np.asarray(prompt).astype(np.int32)
    B, T0 = tokens.shape
    S = model.cfg.block_size
    _check(T0, steps, S if use_cache else None)
    u = jnp.asarray(uniforms(steps, B, seed))
    model = compat.eval_view(model)  # dropout off; the caller's model keeps its mode
    if use_cache:
        logits, cache = _nnx_decode(model, jnp.asarray(tokens), model.new_cache(B), 0)
        logits = logits[:, -1]
    for s in range(steps):
        if not use_cache:
            window, last = _window(tokens, S)
            logits = _nnx_logits_at(model, jnp.asarray(window), last)
        nxt = np.asarray(_pick_nnx(logits, temperature, u[s])).astype(np.int32)
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
        if use_cache and s + 1 < steps:
            logits, cache = _nnx_decode(model, jnp.asarray(nxt[:, None]), cache, T0 + s)
            logits = logits[:, -1]
    return tokens


# ------------------------------------------------------------ any callable


def _cdf_np(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits.astype(np.float32) / np.float32(temperature)
    p = np.exp(z - z.max(-1, keepdims=True))
    return np.cumsum(p / p.sum(-1, keepdims=True), axis=-1)


def _pick_np(logits: np.ndarray, temperature: float, u: np.ndarray) -> np.ndarray:
    if temperature == 0:
        return logits.argmax(-1)
    cdf = _cdf_np(logits, temperature)
    return np.minimum((cdf < u[:, None]).sum(-1), logits.shape[-1] - 1)


def _last_logits(logits, tokens: np.ndarray, max_len: int) -> np.ndarray:
    """``logits`` called on the :func:`_window` of ``tokens``: the last filled position's row (B, V)."""
    window, last = _window(tokens, max_len)
    return np.asarray(logits(window))[:, last]


def generate_fn(
    logits,
    prompt,
    steps: int,
    max_len: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
) -> np.ndarray:
    """``prompt`` (B, T0) followed by ``steps`` ids drawn from ``logits(tokens)``.

    ``logits`` takes int32 ``(B, max_len)`` tokens and returns ``(B, max_len, V)``
    in any framework (anything ``np.asarray`` reads). It is always called on a
    window of ``max_len`` tokens (:func:`_window`), and the draws use
    :func:`uniforms` with the inverse-CDF pick of the model samplers, so equal
    logits give equal text.
    """
    tokens = np.asarray(prompt).astype(np.int32)
    _check(tokens.shape[1], steps)
    u = uniforms(steps, tokens.shape[0], seed)
    for s in range(steps):
        out = _last_logits(logits, tokens, max_len)
        nxt = _pick_np(out, temperature, u[s]).astype(np.int32)
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
    return tokens


def teacher_forced(
    logits,
    sample,
    prompt_len: int,
    max_len: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """What ``logits`` would draw at each drawn position of ``sample``, fed the sample's own prefix.

    ``sample`` is (B, prompt_len + steps). For each step ``s`` the callable sees
    ``sample[:, :prompt_len + s]`` through the window of :func:`generate_fn` and
    picks with the same ``uniforms(steps, B, seed)`` number. Returns ``picks``
    (B, steps) and ``margins`` (B, steps): the distance from the uniform number
    to the nearest edge of the picked token's CDF interval, i.e. how far the
    draw was from picking another token (a near-tie when tiny). At
    ``temperature=0`` the margin is the gap between the two largest logits.
    So ``picks == sample[:, prompt_len:]`` wherever the callable would have
    continued the sample as it is.
    """
    sample = np.asarray(sample).astype(np.int32)
    B, total = sample.shape
    steps = total - prompt_len
    _check(prompt_len, steps)
    u = uniforms(steps, B, seed)
    picks = np.zeros((B, steps), np.int32)
    margins = np.zeros((B, steps), np.float32)
    rows = np.arange(B)
    for s in range(steps):
        out = _last_logits(logits, sample[:, : prompt_len + s], max_len)
        picks[:, s] = _pick_np(out, temperature, u[s])
        if temperature == 0:
            top2 = np.sort(out, axis=-1)[:, -2:]
            margins[:, s] = top2[:, 1] - top2[:, 0]
            continue
        cdf = np.concatenate(
            [np.zeros((B, 1), np.float32), _cdf_np(out, temperature)], -1
        )
        lo, hi = cdf[rows, picks[:, s]], cdf[rows, picks[:, s] + 1]
        margins[:, s] = np.minimum(np.abs(u[s] - lo), np.abs(hi - u[s]))
    return picks, margins
