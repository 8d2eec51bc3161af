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

On the JAX side :func:`nnx_generate` runs the model under ``nnx.jit`` one
token at a time: the decode step compiles once per input length (the position
is a traced argument), and sampling without a cache pads the context to
``block_size`` on the right, which a causal model ignores, so it compiles once
too. Each token then costs a dispatch from Python. :func:`nnx_generate_compiled`
puts the whole loop in one ``jax.jit`` program: the prompt, then a
``jax.lax.fori_loop`` over the drawn positions, with the KV cache (or the token
buffer, without one) as the loop's carry.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx
from torch.nn import functional as F

from course_utils import compat

__all__ = [
    "check_lengths",
    "generate_fn",
    "jax_pick",
    "nnx_decode",
    "nnx_logits",
    "nnx_generate",
    "nnx_generate_compiled",
    "pick_with_margin",
    "right_padded",
    "torch_generate",
    "torch_pick",
    "teacher_forced",
    "uniforms",
]


def uniforms(steps: int, batch: int, seed: int) -> np.ndarray:
    """The shared random numbers: ``(steps, batch)`` float32 in [0, 1)."""
    return np.random.default_rng(seed).random((steps, batch), dtype=np.float32)


def check_lengths(prompt_len: int, steps: int, cache_len: int | None = None) -> None:
    """Refuse an empty prompt, negative steps, or a cached sample longer than the cache."""
    if prompt_len < 1 or steps < 0:
        raise ValueError(
            f"need a prompt of at least one token and steps >= 0, got {prompt_len}, {steps}"
        )
    if cache_len is not None and prompt_len + steps > cache_len:
        raise ValueError(
            f"prompt ({prompt_len}) + steps ({steps}) exceed block_size={cache_len}, "
            "the KV cache's length; sample without the cache to slide the context"
        )


def right_padded(tokens: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """The last ``size`` tokens, zero-padded on the right to ``size``; and the last filled index.

    A causal model's logits at a position ignore every later one, so the padding
    changes nothing, and one shape means one compiled program.
    """
    context = tokens[:, -size:]
    window = np.zeros((tokens.shape[0], size), np.int32)
    window[:, : context.shape[1]] = context
    return window, context.shape[1] - 1


# ----------------------------------------------------------------- PyTorch


def torch_pick(
    logits: torch.Tensor, temperature: float, u: torch.Tensor
) -> torch.Tensor:
    # logits: (B, V); u: (B,) -> (B,) token ids
    if temperature == 0:
        return logits.argmax(-1)
    cdf = F.softmax(logits.float() / temperature, dim=-1).cumsum(-1)
    return (cdf < u[:, None]).sum(-1).clamp(max=logits.shape[-1] - 1)


@torch.no_grad()
def torch_generate(
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
    check_lengths(T0, steps, S if use_cache else None)
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
            nxt = torch_pick(logits[:, -1], temperature, u[s])  # (B,)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            if use_cache and s + 1 < steps:
                logits, _ = model.decode(nxt[:, None], cache, T0 + s)  # one position
    finally:
        model.train(was_training)
    return tokens.cpu().numpy()


# ------------------------------------------------------------------ Flax NNX


@nnx.jit
def nnx_decode(model, tokens, cache, pos):
    """``model.decode`` compiled once: ``pos`` is traced, so every position shares one program."""
    return model.decode(tokens, cache, pos)


@nnx.jit
def nnx_logits(model, window, index):
    """The logits (B, V) at position ``index`` of a right-padded ``window`` (B, block_size)."""
    return jnp.take(model(window), index, axis=1)


@functools.partial(jax.jit, static_argnames="temperature")
def jax_pick(logits, temperature: float, u):
    """:func:`torch_pick` in JAX, compiled: ``(B, V)`` logits, ``(B,)`` uniforms -> ``(B,)`` ids."""
    if temperature == 0:
        return jnp.argmax(logits, axis=-1)
    probs = jax.nn.softmax(logits.astype(jnp.float32) / temperature, axis=-1)
    cdf = jnp.cumsum(probs, axis=-1)
    return jnp.minimum((cdf < u[:, None]).sum(-1), logits.shape[-1] - 1)


def nnx_generate(
    model,
    prompt,
    steps: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """The same as :func:`torch_generate`, for an ``NNXGPT`` (run in evaluation mode)."""
    tokens = np.asarray(prompt).astype(np.int32)
    B, T0 = tokens.shape
    S = model.cfg.block_size
    check_lengths(T0, steps, S if use_cache else None)
    u = jnp.asarray(uniforms(steps, B, seed))
    model = compat.eval_view(model)  # dropout off; the caller's model keeps its mode
    if use_cache:
        logits, cache = nnx_decode(model, jnp.asarray(tokens), model.new_cache(B), 0)
        logits = logits[:, -1]
    for s in range(steps):
        if not use_cache:
            window, last = right_padded(tokens, S)
            logits = nnx_logits(model, jnp.asarray(window), last)
        nxt = np.asarray(jax_pick(logits, temperature, u[s])).astype(np.int32)
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
        if use_cache and s + 1 < steps:
            logits, cache = nnx_decode(model, jnp.asarray(nxt[:, None]), cache, T0 + s)
            logits = logits[:, -1]
    return tokens


def _decode_loop_body(graphdef, prompt_len, temperature, use_cache, u):
    """The ``fori_loop`` body: draw position ``prompt_len + s`` and write it into the carry.

    The model's state rides in the carry, unchanged: NNX builds a module only from
    arrays of the trace it runs in, and the loop body is a trace of its own.
    """

    def body(s, carry):
        tokens, cache, last, state = carry  # (B, S) ids; the cache; (B, V) logits
        model = nnx.merge(graphdef, state)
        if not use_cache:  # the whole window again; read the row before position t
            logits = model(tokens)  # (B, S, V)
            last = jax.lax.dynamic_index_in_dim(
                logits, prompt_len + s - 1, axis=1, keepdims=False
            ).astype(jnp.float32)
        nxt = jax_pick(last, temperature, u[s]).astype(jnp.int32)  # (B,)
        tokens = jax.lax.dynamic_update_slice(tokens, nxt[:, None], (0, prompt_len + s))
        if use_cache:  # one position through the cache
            logits, cache = model.decode(nxt[:, None], cache, prompt_len + s)
            last = logits[:, -1].astype(jnp.float32)
        return tokens, cache, last, state

    return body


@functools.partial(
    jax.jit, static_argnames=("graphdef", "steps", "temperature", "use_cache")
)
def _jax_decode_loop(graphdef, state, prompt, u, *, steps, temperature, use_cache):
    model = nnx.merge(graphdef, state)
    B, T0 = prompt.shape
    S = model.cfg.block_size
    tokens = jnp.zeros((B, S), jnp.int32).at[:, :T0].set(prompt)  # (B, S)
    cache, last = None, jnp.zeros((B, model.cfg.vocab_size), jnp.float32)
    if use_cache:
        logits, cache = model.decode(prompt, model.new_cache(B), 0)  # the prompt, once
        last = logits[:, -1].astype(jnp.float32)
    body = _decode_loop_body(graphdef, T0, temperature, use_cache, u)
    tokens, *_ = jax.lax.fori_loop(0, steps, body, (tokens, cache, last, state))
    return tokens[:, : T0 + steps]


def nnx_generate_compiled(
    model,
    prompt,
    steps: int,
    *,
    temperature: float = 1.0,
    seed: int = 0,
    use_cache: bool = True,
) -> np.ndarray:
    """:func:`nnx_generate` as one compiled program: a ``fori_loop`` inside ``jax.jit``.

    The same draws (:func:`uniforms`, the inverse-CDF pick), so the same text up
    to near-ties. The token buffer is ``block_size`` long in both modes, so
    ``prompt + steps`` must fit it (no sliding window).
    """
    tokens = np.asarray(prompt).astype(np.int32)
    B, T0 = tokens.shape
    check_lengths(T0, steps, model.cfg.block_size)
    graphdef, state = nnx.split(compat.eval_view(model))
    u = jnp.asarray(uniforms(steps, B, seed))
    out = _jax_decode_loop(
        graphdef,
        state,
        jnp.asarray(tokens),
        u,
        steps=steps,
        temperature=float(temperature),
        use_cache=use_cache,
    )
    return np.asarray(out)


# ------------------------------------------------------------ any callable


def _np_cdf(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits.astype(np.float32) / np.float32(temperature)
    p = np.exp(z - z.max(-1, keepdims=True))
    return np.cumsum(p / p.sum(-1, keepdims=True), axis=-1)


def _np_pick(logits: np.ndarray, temperature: float, u: np.ndarray) -> np.ndarray:
    if temperature == 0:
        return logits.argmax(-1)
    cdf = _np_cdf(logits, temperature)
    return np.minimum((cdf < u[:, None]).sum(-1), logits.shape[-1] - 1)


def _last_logits(logits, tokens: np.ndarray, max_len: int) -> np.ndarray:
    """``logits`` called on the :func:`right_padded` of ``tokens``: the last filled position's row (B, V)."""
    window, last = right_padded(tokens, max_len)
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
    window of ``max_len`` tokens (:func:`right_padded`), and the draws use
    :func:`uniforms` with the inverse-CDF pick of the model samplers, so equal
    logits give equal text.
    """
    tokens = np.asarray(prompt).astype(np.int32)
    check_lengths(tokens.shape[1], steps)
    u = uniforms(steps, tokens.shape[0], seed)
    for s in range(steps):
        out = _last_logits(logits, tokens, max_len)
        nxt = _np_pick(out, temperature, u[s]).astype(np.int32)
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
    return tokens


def pick_with_margin(
    logits: np.ndarray, temperature: float, u: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The inverse-CDF pick of each row of ``logits`` (B, V) for ``u`` (B,), and its margin.

    The margin is the distance from ``u`` to the nearest edge of the picked token's CDF
    interval: how close the draw came to picking a neighbour (a near-tie when tiny).
    At ``temperature=0`` the pick is the argmax and the margin the gap between the two
    largest logits.
    """
    pick = _np_pick(logits, temperature, u)
    if temperature == 0:
        top2 = np.sort(logits, axis=-1)[:, -2:]
        return pick, top2[:, 1] - top2[:, 0]
    B = logits.shape[0]
    cdf = np.concatenate(
        [np.zeros((B, 1), np.float32), _np_cdf(logits, temperature)], -1
    )
    lo, hi = cdf[np.arange(B), pick], cdf[np.arange(B), pick + 1]
    return pick, np.minimum(np.abs(u - lo), np.abs(hi - u))


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
    (B, steps) and ``margins`` (B, steps) of :func:`pick_with_margin`. So
    ``picks == sample[:, prompt_len:]`` wherever the callable would have
    continued the sample as it is.
    """
    sample = np.asarray(sample).astype(np.int32)
    B, steps = sample.shape[0], sample.shape[1] - prompt_len
    check_lengths(prompt_len, steps)
    u = uniforms(steps, B, seed)  # the numbers the sample was drawn with
    picks, margins = np.zeros((B, steps), np.int32), np.zeros((B, steps), np.float32)
    for s in range(steps):  # the sample's own prefix before each drawn token
        window, last = right_padded(sample[:, : prompt_len + s], max_len)
        out = np.asarray(logits(window))[:, last]  # (B, V)
        picks[:, s], margins[:, s] = pick_with_margin(out, temperature, u[s])
    return picks, margins
