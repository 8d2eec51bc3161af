# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-nbgrader
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11 · Exercises: capstone GPT
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/11_capstone_gpt_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/11_capstone_gpt_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/11_capstone_gpt_exercises.ipynb)
#
# Five exercises on the pieces of lesson 11's GPT, each in both frameworks or across them: the
# causal mask, a weight converter for the attention block, one step of a KV cache, a
# data-parallel loss (JAX shardings, and what PyTorch's data-parallel ranks compute), and a
# resume from a checkpoint that continues bit for bit (Orbax and DCP).
# Replace each `raise NotImplementedError()` with your code, then run the check cell below it:
# it prints "passed", explains what is wrong, or says "not implemented yet".

# %%
# Setup: where the course helpers are missing (Colab, Kaggle, a bare Jupyter),
# install them, keeping the runtime's own torch and jax. Elsewhere: nothing to do.
import importlib
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("course_utils") is None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "jax-pytorch-side-by-side @ git+https://github.com/jax-pytorch-side-by-side/course@v0.1.0"],
        check=True,
    )
    importlib.invalidate_caches()
    from course_utils import hosted

    hosted.install_dependencies()

# %% tags=["parameters"]
SMOKE = None  # None: follow COURSE_SMOKE; papermill: -p SMOKE True
SIZES = {"seq": (32, 8), "batch": (32, 8), "steps": (6, 3)}  # name: (full, smoke)

# %%
from course_utils import env

SETUP = env.setup(one_kind=True, cpu_devices=8)  # first: 8 simulated JAX devices, JAX
# before PyTorch, float32, one device kind for both (on a TPU, the CPU: PyTorch stays there)

import tempfile
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.distributed.checkpoint as dcp
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from course_utils import config, gpt
from course_utils.exercises import check
from course_utils.gpt.model import GPTConfig, NNXCausalSelfAttention, NNXGPT, TorchCausalSelfAttention
from course_utils.parity import assert_close
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

S = config.sizes(SIZES, SMOKE)
CFG = GPTConfig(vocab_size=32, block_size=S.seq, d_model=16, n_heads=4, n_layers=2, d_ff=32)
from course_utils import meshes

DEVICES = meshes.devices(8)  # the meshes' devices: 8 accelerators if there are, else simulated CPUs
print(CFG)


# %% [markdown]
# ## Exercise 1 · The causal mask, in both frameworks
#
# In a GPT, the query at position `t` may look at the keys at positions `0 … t` and at
# nothing later: the prediction of token `t + 1` must not see it. Write the mask as a
# boolean `(T, T)` array, **row = query position, column = key position**, `True` where
# attention is allowed, once with `torch` and once with `jax.numpy`. About 2 lines each.

# %%
# EXERCISE: causal-mask
def causal_mask_torch(T: int) -> torch.Tensor:
    """Boolean (T, T): True where key position <= query position."""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool).tril()
    ### END SOLUTION


def causal_mask_jax(T: int) -> jax.Array:
    """The same mask with jax.numpy."""
    ### BEGIN SOLUTION
    return jnp.arange(T)[None, :] <= jnp.arange(T)[:, None]
    ### END SOLUTION


# %%
def attend(q, k, v, allowed):
    """Scaled dot-product attention (NumPy, float64) with a boolean mask."""
    scores = np.where(allowed, q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]), -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v


qkv_np = np.random.default_rng(0).standard_normal((3, 2, S.seq, 4))  # q, k, v: (batch, T, head_dim)
expected_attention = torch.nn.functional.scaled_dot_product_attention(
    *torch.from_numpy(qkv_np), is_causal=True
).numpy()  # PyTorch's own causal attention

# %%
# TESTS: causal-mask points=2
check("causal-mask", lambda: (tuple(causal_mask_torch(S.seq).shape), tuple(causal_mask_jax(S.seq).shape)),
      ((S.seq, S.seq), (S.seq, S.seq)),
      hint="the masks must be (T, T), rows for queries and columns for keys, with no other axes: a mask "
           "viewed as (1, 1, T, T), as nanoGPT registers its bias buffer for (batch, heads, T, T) scores, "
           "adds the batch and head axes that the attention's broadcasting supplies")
check("causal-mask", lambda: attend(*qkv_np, np.asarray(causal_mask_torch(S.seq))), expected_attention,
      rtol=1e-10, atol=1e-12,
      hint="the outputs are not causal attention's: the mask lets a query (a row) see a later key (a "
           "column), or hides a query's own position from it, or is inverted (True must mark the keys a "
           "query may attend to, not the ones hidden, as a masked_fill mask does)")
check("causal-mask", lambda: attend(*qkv_np, np.asarray(causal_mask_jax(S.seq))), expected_attention,
      rtol=1e-10, atol=1e-12,
      hint="the outputs are not causal attention's: the mask lets a query (a row) see a later key (a "
           "column), or hides a query's own position from it, or is inverted (True must mark the keys a "
           "query may attend to, not the ones hidden, as a masked_fill mask does)")


def _both_boolean():
    assert causal_mask_torch(3).dtype == torch.bool, f"causal_mask_torch gave {causal_mask_torch(3).dtype}"
    assert causal_mask_jax(3).dtype == jnp.bool_, f"causal_mask_jax gave {causal_mask_jax(3).dtype}"


check("causal-mask", _both_boolean, hint="the masks must be boolean: True where attention is allowed")

# %%
# HIDDEN TESTS: causal-mask points=2
### BEGIN HIDDEN TESTS
for T in (1, 2, 5, 17):
    ref = np.tril(np.ones((T, T), dtype=bool))
    assert (np.asarray(causal_mask_torch(T)) == ref).all(), f"torch mask T={T}"
    assert (np.asarray(causal_mask_jax(T)) == ref).all(), f"jax mask T={T}"
    assert tuple(causal_mask_jax(T).shape) == (T, T)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · A weight converter for the attention block
#
# The lesson's attention has one fused `qkv` Linear (`d_model → 3·d_model`: query, key and
# value side by side) and an output `proj`. A PyTorch `nn.Linear` stores `weight` as
# `(out, in)`; an NNX `Linear` stores `kernel` as `(in, out)`. Write the converter from a
# `TorchCausalSelfAttention`'s state dict (NumPy arrays under the keys `qkv.weight`,
# `qkv.bias`, `proj.weight`, `proj.bias`) to the nested dict NNX's attention holds:
# `{"qkv": {"kernel", "bias"}, "proj": {"kernel", "bias"}}`. About 4 lines.

# %%
# EXERCISE: attention-converter
def attention_torch_to_nnx(sd: dict) -> dict:
    """{'qkv.weight': (3C, C), 'qkv.bias', 'proj.weight': (C, C), 'proj.bias'} -> NNX's nested dict."""
    ### BEGIN SOLUTION
    return {name: {"kernel": sd[f"{name}.weight"].T, "bias": sd[f"{name}.bias"]} for name in ("qkv", "proj")}
    ### END SOLUTION


# %%
torch.manual_seed(0)
attn_torch = TorchCausalSelfAttention(CFG).eval()
with torch.no_grad():
    for p in attn_torch.parameters():
        p.normal_(0.0, 0.3)  # biases too: a converter that drops one is caught
sd_np = {k: v.detach().numpy().copy() for k, v in attn_torch.state_dict().items()}
x_attn = np.random.default_rng(1).standard_normal((2, S.seq, CFG.d_model)).astype(np.float32)
with torch.no_grad():
    expected_attn = attn_torch(torch.from_numpy(x_attn)).numpy()


def nnx_attention_from(converted: dict):
    attn = NNXCausalSelfAttention(CFG, rngs=nnx.Rngs(0))
    for name in ("qkv", "proj"):
        layer = getattr(attn, name)
        layer.kernel[...] = jnp.asarray(converted[name]["kernel"])
        layer.bias[...] = jnp.asarray(converted[name]["bias"])
    return attn


# %%
# TESTS: attention-converter points=3
def _attention_output():
    out, _ = nnx_attention_from(attention_torch_to_nnx(sd_np))(jnp.asarray(x_attn))
    return out


check("attention-converter", _attention_output, expected_attn, rtol=1e-5, atol=1e-5,
      hint="the converted attention is not the PyTorch one: nn.Linear.weight is (out, in) and an NNX "
           "kernel (in, out), and a weight moved without that change of layout (or reshaped into its shape) "
           "mixes up which input feeds which output",
      crash_hint="the converted dict does not fit NNX's attention: it must use NNX's names (each of qkv and "
                 "proj holds a kernel and a bias), and nn.Linear.weight is (out, in) where an NNX kernel is "
                 "(in, out), so a weight moved without that change of layout has the wrong shape")

# %%
# HIDDEN TESTS: attention-converter points=2
### BEGIN HIDDEN TESTS
_conv = attention_torch_to_nnx(sd_np)
assert_close(_conv["qkv"]["kernel"], sd_np["qkv.weight"].T, rtol=0, atol=0, name="qkv kernel")
assert_close(_conv["proj"]["kernel"], sd_np["proj.weight"].T, rtol=0, atol=0, name="proj kernel")
assert_close(_conv["qkv"]["bias"], sd_np["qkv.bias"], rtol=0, atol=0, name="qkv bias")
_x2 = np.random.default_rng(5).standard_normal((3, 5, CFG.d_model)).astype(np.float32)
with torch.no_grad():
    _ref2 = attn_torch(torch.from_numpy(_x2)).numpy()
assert_close(nnx_attention_from(_conv)(jnp.asarray(_x2))[0], _ref2, rtol=1e-5, atol=1e-5, name="attention T=5")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · One step of a KV cache
#
# Sampling token by token recomputes every earlier key and value unless they are kept. A KV
# cache keeps them: `k_cache` and `v_cache` are `(batch, heads, max_len, head_dim)`, filled up
# to position `pos - 1`. One decode step gets the new token's `q`, `k`, `v` (each
# `(batch, heads, 1, head_dim)`), **writes** `k` and `v` into the caches at `pos`, and lets
# `q` attend to positions `0 … pos` only (the rest of the cache is still zeros). Write it
# twice. PyTorch: `pos` is a Python int, so write into the caches in place and attend over
# the slice up to `pos`; return the output. JAX arrays are immutable, and under `jax.jit`
# `pos` is traced: write with `jax.lax.dynamic_update_slice` (or `.at[...].set`), mask the
# later slots, and return the new caches. About 4 lines for PyTorch, 6 for JAX.

# %%
# EXERCISE: kv-cache-step
def decode_step_torch(q, k, v, k_cache, v_cache, pos: int) -> torch.Tensor:
    """PyTorch: k, v written into the caches at pos, in place; -> out (B, H, 1, hd)."""
    ### BEGIN SOLUTION
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1]
    ### END SOLUTION


def decode_step(q, k, v, k_cache, v_cache, pos):
    """-> (out (B, H, 1, hd), k_cache, v_cache) with k, v written at position pos."""
    ### BEGIN SOLUTION
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
    ### END SOLUTION


# %%
# head_dim 16, a size the sequence (8 or 32) never has, so an axis taken for another is caught
q_all, k_all, v_all = np.random.default_rng(2).standard_normal((3, 2, 4, S.seq, 16)).astype(np.float32)
q64, k64, v64 = (a.astype(np.float64) for a in (q_all, k_all, v_all))
causal = np.tril(np.ones((S.seq, S.seq), dtype=bool))
expected_decode = attend(q64, k64, v64, causal)  # full causal attention
wrong_scales = {  # causal attention whose scores q·k reached the softmax at another scale
    "unscaled scores (q·k as it is), whose softmax weights come out too peaked":
        attend(q64 * np.sqrt(q_all.shape[-1]), k64, v64, causal),
    "scores divided by the whole head size, whose softmax weights come out too flat":
        attend(q64 / np.sqrt(q_all.shape[-1]), k64, v64, causal),
    "scores divided by the square root of the cache's length (axis 2), not of head_dim (axis 3)":
        attend(q64 * np.sqrt(q_all.shape[-1] / S.seq), k64, v64, causal),
}
summed_values = np.cumsum(v64, axis=2)  # every weight 1: a softmax over the query axis, of length 1


def _softmax_axis(out):
    """Fail, naming it, when the softmax ran over the query axis (length 1): weights of 1, or NaN where masked."""
    assert np.isfinite(out).all(), "your outputs hold NaN"
    assert not np.allclose(out, summed_values, rtol=1e-4, atol=1e-5), "your outputs are the sums of the values"


first_values = np.broadcast_to(v64[:, :, :1], v64.shape)  # each query given position 0's value alone


def _one_key(out):
    """Fail, naming it, when every query attended to a single key: position 0, or the one just written."""
    assert not np.allclose(out, first_values, rtol=1e-4, atol=1e-5), "every query attended to position 0 alone"
    assert not np.allclose(out, v64, rtol=1e-4, atol=1e-5), "every query attended to the key written at its step alone"


def _scores_scale(out):
    """Fail, naming it, when out is causal attention over scores of another scale (the positions are right)."""
    for what, wrong in wrong_scales.items():
        assert not np.allclose(out, wrong, rtol=1e-4, atol=1e-5), f"your outputs are causal attention over {what}"


def run_decode(step_fn):
    """Feed the sequence one position at a time through step_fn (jitted once): (outputs, k_cache, v_cache)."""
    step = jax.jit(step_fn)
    k_cache = v_cache = jnp.zeros_like(jnp.asarray(k_all))
    outs = []
    for t in range(S.seq):
        one = [jnp.asarray(a[:, :, t : t + 1]) for a in (q_all, k_all, v_all)]
        out, k_cache, v_cache = step(*one, k_cache, v_cache, t)
        outs.append(out)
    return jnp.concatenate(outs, axis=2), k_cache, v_cache


def run_decode_torch(step_fn):
    """The same feed through the PyTorch step; the caches start as zeros and must be written in place."""
    k_cache, v_cache = torch.zeros(k_all.shape), torch.zeros(v_all.shape)
    outs = [step_fn(*(torch.from_numpy(a[:, :, t : t + 1]) for a in (q_all, k_all, v_all)), k_cache, v_cache, t)
            for t in range(S.seq)]
    return torch.cat(outs, dim=2).numpy(), k_cache.numpy(), v_cache.numpy()


# %%
# TESTS: kv-cache-step points=3
TORCH_SHAPES = ("PyTorch: k is (B, H, 1, hd), one position long on axis 2, and the part of the cache it was written "
                "into has another shape; and the softmax weights, one per position 0..pos, multiply the cached "
                "values of those positions (B, H, pos + 1, hd), not the new v alone")


def _uses_jax_sdpa(fn):
    """Whether fn names jax.nn.dot_product_attention (directly, or through a global bound to it)."""
    code = getattr(fn, "__code__", None)
    return code is not None and any(
        name == "dot_product_attention" or fn.__globals__.get(name) is jax.nn.dot_product_attention
        for name in code.co_names)


def _jax_crash_hint():
    """The JAX step's crash hint, with the layout of jax.nn.dot_product_attention where the step calls it."""
    hint = ("JAX: under jax.jit pos is a traced value, so a slice cannot start or end at it, and k is "
            "(B, H, 1, hd), one position long on axis 2, which does not fit a part of the cache of "
            "another shape")
    if _uses_jax_sdpa(globals().get("decode_step")):
        hint += ("; and jax.nn.dot_product_attention reads (batch, seq, heads, head_dim), not PyTorch's "
                 "(batch, heads, seq, head_dim): q and the caches go in transposed, the output comes back "
                 "transposed")
    return hint


def _torch_step_returns():
    one = [torch.from_numpy(a[:, :, :1]) for a in (q_all, k_all, v_all)]
    return type(decode_step_torch(*one, torch.zeros(k_all.shape), torch.zeros(v_all.shape), 0)).__name__


check("kv-cache-step", _torch_step_returns, "Tensor",
      hint="PyTorch: the step must return out alone, one tensor: it writes into the caches it was given, "
           "in place, so there are no new caches to hand back as the JAX step must",
      crash_hint=TORCH_SHAPES)
check("kv-cache-step", lambda: run_decode_torch(decode_step_torch)[1], k_all, rtol=0, atol=0,
      hint="PyTorch: after the steps the caller's k_cache does not hold each key at its position: a tensor "
           "made inside the step (torch.cat of a slice and k, say) is a new one, not the cache that was passed in, "
           "and a write at another index of axis 2 puts the key in another slot",
      crash_hint=TORCH_SHAPES)
check("kv-cache-step", lambda: run_decode_torch(decode_step_torch)[2], v_all, rtol=0, atol=0,
      hint="PyTorch: after the steps the caller's v_cache does not hold each value at its position: v goes "
           "into v_cache at the slot where k went into k_cache (a line copied from the k_cache one that "
           "still writes k, say)",
      crash_hint=TORCH_SHAPES)
check("kv-cache-step", lambda: _scores_scale(run_decode_torch(decode_step_torch)[0]),
      hint="PyTorch: the right positions, but the scores reach the softmax at another scale than scaled "
           "dot-product attention's")
check("kv-cache-step", lambda: _softmax_axis(run_decode_torch(decode_step_torch)[0]),
      hint="PyTorch: every key got weight 1, so the output is the sum of the values: the softmax ran over "
           "the query axis, whose length is 1, not over the keys")
check("kv-cache-step", lambda: _one_key(run_decode_torch(decode_step_torch)[0]),
      hint="PyTorch: each query saw one key, not positions 0..pos: attention over the new k alone gives its "
           "own value back, and is_causal=True in F.scaled_dot_product_attention (or jax.nn's) aligns "
           "its mask to the top-left corner, so a single query row keeps only the first key")
check("kv-cache-step", lambda: run_decode_torch(decode_step_torch)[0], expected_decode, rtol=1e-4, atol=1e-5,
      hint="PyTorch: the keys attended are not exactly positions 0..pos: the still-empty slots after pos "
           "take part in the softmax, or pos itself is left out")
check("kv-cache-step", lambda: bool(np.asarray(run_decode(decode_step)[1]).any()), True,
      hint="JAX: the returned k_cache is still all zeros, the cache that was passed in: .at[...].set and "
           "jax.lax.dynamic_update_slice leave their input as it is and return a new array, which the step "
           "must attend over and return",
      crash_hint=_jax_crash_hint())
check("kv-cache-step", lambda: run_decode(decode_step)[1], k_all, rtol=0, atol=0,
      hint="JAX: the returned k_cache does not hold each key at its own position on axis 2: the keys "
           "landed one slot off, or all in one slot",
      crash_hint=_jax_crash_hint())
check("kv-cache-step", lambda: run_decode(decode_step)[2], v_all, rtol=0, atol=0,
      hint="JAX: the returned v_cache does not hold each value at its own position on axis 2: v goes into "
           "v_cache at the slot where k went into k_cache (a line copied from the k_cache one that still "
           "writes k, say)",
      crash_hint=_jax_crash_hint())
check("kv-cache-step", lambda: _scores_scale(run_decode(decode_step)[0]),
      hint="JAX: the right positions, but the scores reach the softmax at another scale than scaled "
           "dot-product attention's")
check("kv-cache-step", lambda: _softmax_axis(run_decode(decode_step)[0]),
      hint="JAX: the outputs are NaN or the sums of the values: the softmax ran over the query axis, "
           "whose length is 1, not over the keys, which gives every key weight 1 (and a masked slot "
           "-inf minus -inf); or the mask hid every key at pos 0, where a mask of the positions below "
           "pos leaves pos itself out")
check("kv-cache-step", lambda: _one_key(run_decode(decode_step)[0]),
      hint="JAX: each query saw one key, not positions 0..pos: attention over the new k alone gives its "
           "own value back, and is_causal=True in F.scaled_dot_product_attention (or jax.nn's) aligns "
           "its mask to the top-left corner, so a single query row keeps only the first key")
check("kv-cache-step", lambda: run_decode(decode_step)[0], expected_decode, rtol=1e-4, atol=1e-5,
      hint="JAX: the keys attended are not exactly positions 0..pos: the still-empty slots after pos "
           "take part in the softmax, or pos itself is left out")

# %%
# HIDDEN TESTS: kv-cache-step points=2
### BEGIN HIDDEN TESTS
_out, _kc, _ = run_decode(decode_step)
assert_close(_out, expected_decode, rtol=1e-4, atol=1e-5, name="decode outputs")
_, _kc2, _vc2 = decode_step(*(jnp.asarray(a[:, :, :1]) for a in (q_all, k_all, v_all)),
                            jnp.zeros_like(jnp.asarray(k_all)), jnp.zeros_like(jnp.asarray(k_all)), 3)
assert (np.asarray(_kc2)[:, :, 3] == k_all[:, :, 0]).all() and not np.asarray(_kc2)[:, :, 4:].any()
_out_t, _kc_t, _ = run_decode_torch(decode_step_torch)
assert_close(_out_t, expected_decode, rtol=1e-4, atol=1e-5, name="PyTorch decode outputs")
assert (_kc_t == k_all).all()
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · A data-parallel loss with `jax.jit` shardings
#
# `loss_fn(params, x, y)` is the GPT's mean cross-entropy over a batch. Data parallelism in
# JAX is no new code: it is the same function, jitted with shardings. Write
# `data_parallel(loss_fn, mesh)`: return `jax.jit(loss_fn, ...)` whose `in_shardings` keep the
# parameters replicated on every device of `mesh` and split `x` and `y` by their first (batch)
# axis over the mesh axis `"data"`, and whose `out_shardings` make the loss replicated. XLA
# then computes each device's part and combines them: the loss must equal the one-device loss.
# About 4 lines (`NamedSharding(mesh, P(...))`).
#
# The PyTorch half: data parallelism there is one process per device (DDP, or FSDP2 as in the
# lesson), each computing the loss of its own rows and its gradients, then an all-reduce that
# averages the gradients. Write `data_parallel_grads_torch(model, x, y, world)`: do in one
# process what the `world` ranks would compute, rank by rank (its rows of `x` **and** `y`),
# and return the gradients after the all-reduce, `{name: gradient}`, which must equal the
# gradients of the whole batch. About 6 lines (`tensor.chunk`, `model.zero_grad()`).

# %%
# EXERCISE: dp-loss
def data_parallel(loss_fn, mesh):
    """jax.jit(loss_fn) with params replicated, x and y split on axis 0 over 'data', loss replicated."""
    ### BEGIN SOLUTION
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
    ### END SOLUTION


def data_parallel_grads_torch(model, x, y, world: int) -> dict:
    """PyTorch: each of `world` ranks' gradients on its rows of (x, y), averaged as DDP's all-reduce does."""
    ### BEGIN SOLUTION
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
    ### END SOLUTION


# %%
graphdef, params, rest = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(0)))
loss_fn = gpt.train.jax_loss(graphdef, rest)
mesh8 = gpt.shard.mesh((8,), ("data",))
tokens = np.random.default_rng(3).integers(0, CFG.vocab_size, (S.batch, S.seq + 1)).astype(np.int32)
x_np, y_np = tokens[:, :-1], tokens[:, 1:]
expected_loss = jax.jit(loss_fn)(params, x_np, y_np)  # one device


def _dp_loss():
    return data_parallel(loss_fn, mesh8)(params, x_np, y_np)


torch.manual_seed(0)
model_dp_torch = gpt.model.TorchGPT(CFG)
x_dp_torch, y_dp_torch = torch.from_numpy(x_np).long(), torch.from_numpy(y_np).long()
model_dp_torch.zero_grad()
model_dp_torch.loss(x_dp_torch, y_dp_torch).backward()
expected_grads_torch = {name: p.grad.clone() for name, p in model_dp_torch.named_parameters()}  # the whole batch
WORLD = 4  # ranks


def _rows_per_rank():
    """The rows of x each model.loss call got in data_parallel_grads_torch: one call per rank."""
    seen, loss = [], model_dp_torch.loss
    model_dp_torch.loss = lambda x, y: (seen.append(len(x)), loss(x, y))[1]  # an instance attribute, removed after
    try:
        data_parallel_grads_torch(model_dp_torch, x_dp_torch, y_dp_torch, WORLD)
    finally:
        del model_dp_torch.loss
    return seen


def _dp_x_spec():
    """How the compiled function takes x: the mesh axis each of its dimensions is split over."""
    sharding = data_parallel(loss_fn, mesh8).lower(params, x_np, y_np).compile().input_shardings[0][1]
    spec = getattr(sharding, "spec", None)  # a SingleDeviceSharding has none: nothing split
    return tuple(spec) if spec else ()


# %%
# TESTS: dp-loss points=3
check("dp-loss", lambda: _rows_per_rank() != [S.batch], True,
      hint="PyTorch: model.loss ran once, on the whole batch: its gradients are the ones to match, but data "
           "parallelism has each of the world ranks compute the loss of its own rows only",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", lambda: S.batch in _rows_per_rank(), False,
      hint="PyTorch: a rank's model.loss got every row of the batch: the batch was cut along another axis "
           "than its first (chunk's dim=1 cuts every sequence), where each rank takes whole sequences, its "
           "own rows",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", _rows_per_rank, [S.batch // WORLD] * WORLD,
      hint="PyTorch: world ranks, each with batch / world rows: world is the number of pieces of the batch, "
           "not the size of each piece (the chunk count, not the chunk size)",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", lambda: data_parallel_grads_torch(model_dp_torch, x_dp_torch, y_dp_torch, WORLD),
      expected_grads_torch, rtol=1e-4, atol=1e-6,
      hint="PyTorch: these are not the whole batch's gradients: the ranks' gradients were summed rather "
           "than averaged (or their sum divided by another count than world, such as the batch size: each "
           "rank's loss is already a mean over its rows), or each rank's backward() added to the gradients "
           "the rank before it left in .grad, or every rank's entry is the last rank's gradients (the final "
           ".grad returned alone, or p.grad stored as it is while zero_grad(set_to_none=False) zeroes that "
           "same tensor in place for the next rank)",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", _dp_loss, expected_loss, rtol=1e-5, atol=1e-6,
      hint="the loss of the whole batch is the mean of the shards' losses, not their sum",
      crash_hint="JAX: jax.jit could not place the arrays with the shardings it was given: in_shardings "
                 "needs one entry per argument (params, x, y); a bare PartitionSpec names no devices, so jit "
                 "cannot tell which mesh to shard the arrays onto; a PartitionSpec names the mesh's own axes, "
                 "and mesh8 has one, 'data'; a parameter split over 'data' needs a "
                 "first axis that the devices divide, where data parallelism would not split the parameters "
                 "at all; and the loss is a scalar, which out_shardings can only replicate")
check("dp-loss", lambda: "data" in _dp_x_spec(), True,
      hint="JAX: the batch is not split: the compiled function takes x whole on every device, so each "
           "device computes the loss of the whole batch")
check("dp-loss", lambda: _dp_x_spec()[:1] == ("data",), True,
      hint="JAX: x is split over 'data', but along another axis than its first: each device gets a slice "
           "of every sequence, not whole sequences, the rows of its own part of the batch")


def _dp_shardings():
    """(y split over 'data', every parameter replicated) in the compiled function."""
    (params_in, _, y_in), _ = data_parallel(loss_fn, mesh8).lower(params, x_np, y_np).compile().input_shardings
    y_spec = getattr(y_in, "spec", None)
    return (tuple(y_spec)[:1] if y_spec else ()), all(s.is_fully_replicated for s in jax.tree.leaves(params_in))


check("dp-loss", lambda: _dp_shardings()[0] == ("data",), True,
      hint="JAX: x is split over 'data' but y is not: each device holds every target and only its own "
           "rows of inputs")
check("dp-loss", lambda: _dp_shardings()[1], True,
      hint="JAX: the parameters are split over the devices, which is FSDP's layout, not data "
           "parallelism's, where every device holds all of them")

# %%
# HIDDEN TESTS: dp-loss points=2
### BEGIN HIDDEN TESTS
_dp = data_parallel(loss_fn, mesh8)
_tok = np.random.default_rng(9).integers(0, CFG.vocab_size, (16, S.seq + 1)).astype(np.int32)
assert_close(_dp(params, _tok[:, :-1], _tok[:, 1:]), jax.jit(loss_fn)(params, _tok[:, :-1], _tok[:, 1:]),
             rtol=1e-5, atol=1e-6, name="dp loss, batch 16")
_compiled = _dp.lower(params, x_np, y_np).compile()
assert all(s.is_fully_replicated for s in jax.tree.leaves(_compiled.input_shardings[0][0]))
assert _compiled.output_shardings.is_fully_replicated
_g2 = data_parallel_grads_torch(model_dp_torch, x_dp_torch, y_dp_torch, 2)
assert_close(_g2, expected_grads_torch, rtol=1e-4, atol=1e-6, name="PyTorch, 2 ranks")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · Resume from a checkpoint, bit for bit
#
# A run trained `k` steps, then saved with Orbax (`ocp.v1.save`, here through
# `gpt.checkpoint.orbax_save`) the pytree `{"params": ..., "opt_state": ..., "step": ...}`:
# the parameters, AdamW's state (its moments and step count) and the number of batches
# consumed. Write `resume(path, params_like, opt_state_like)`: read the checkpoint back into
# the structure, shapes and devices of `params_like` / `opt_state_like` (a fresh model's
# parameters and `tx.init` of them) and return `(params, opt_state, next_batch)`. Orbax
# accepts the live arrays as the target too; the solution passes their abstract form,
# `gpt.checkpoint.abstract_like` (shapes, dtypes and shardings, no numbers), which is all a
# real restart has, built without allocating (lesson 11, section 7). Training on from there must give the losses
# and parameters of the uninterrupted run **exactly**. About 4 lines.
#
# Then the PyTorch half, with `torch.distributed.checkpoint` (DCP): a run saved
# `{"model": ..., "optim": ..., "step": tensor(k)}`, the model's and AdamW's state dicts from
# `get_state_dict(model, optimizer)`. Write `resume_torch(path, model, optimizer)`: DCP loads
# *in place* into a state dict of the same structure, so build one from the fresh model and
# optimizer you are given, `dcp.load` it (`no_dist=True`: one process) and return the next
# batch. In one process the dict from `get_state_dict` holds the model's and the
# optimizer's own tensors, so the load fills them and the checks cannot tell whether you
# then call `set_state_dict`; the solution does, the public way back that still works
# where the state dict holds copies (an offloaded or resharded one). About 5 lines.

# %%
# EXERCISE: resume
def resume(path, params_like, opt_state_like):
    """-> (params, opt_state, next_batch) from a checkpoint {'params', 'opt_state', 'step'}."""
    ### BEGIN SOLUTION
    target = gpt.checkpoint.abstract_like({"params": params_like, "opt_state": opt_state_like,
                                           "step": jnp.zeros((), jnp.int32)})
    saved = gpt.checkpoint.orbax_load(path, target)
    return saved["params"], saved["opt_state"], int(saved["step"])
    ### END SOLUTION


def resume_torch(path, model, optimizer) -> int:
    """PyTorch: fill the fresh model and optimizer from the DCP checkpoint at path, in place; -> next_batch."""
    ### BEGIN SOLUTION
    msd, osd = get_state_dict(model, optimizer)
    state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["step"])
    ### END SOLUTION


# %%
tx = gpt.train.jax_adamw()
train_step = jax.jit(gpt.train.jax_step(graphdef, rest, tx))
rng = np.random.default_rng(4)
batches = [tuple(a.astype(np.int32) for a in np.split(rng.integers(0, CFG.vocab_size, (S.batch, 2 * S.seq)), 2, 1))
           for _ in range(2 * S.steps)]
ckpt_dir = Path(tempfile.mkdtemp(prefix="course-11-"))
p_k, o_k, _ = gpt.train.jax_run(train_step, params, tx.init(params), batches[: S.steps])
gpt.checkpoint.orbax_save(ckpt_dir / "step", {"params": p_k, "opt_state": o_k, "step": jnp.asarray(S.steps, jnp.int32)})
p_end, _, losses_after = gpt.train.jax_run(train_step, p_k, o_k, batches[S.steps :])  # uninterrupted
print(f"checkpoint after {S.steps} steps; the uninterrupted run's next losses: {np.round(losses_after, 4)}")


torch.manual_seed(0)
model_k_torch = gpt.model.TorchGPT(CFG)
opt_k_torch = gpt.train.torch_adamw(model_k_torch)
batches_torch = [tuple(a.astype(np.int64) for a in b) for b in batches]  # cross_entropy wants int64 targets
gpt.train.torch_run(model_k_torch, opt_k_torch, batches_torch[: S.steps])
gpt.checkpoint.dcp_save(ckpt_dir / "dcp", model_k_torch, opt_k_torch, step=S.steps)
losses_after_torch = gpt.train.torch_run(model_k_torch, opt_k_torch, batches_torch[S.steps :])  # uninterrupted
params_end_torch = {name: p.detach().clone() for name, p in model_k_torch.named_parameters()}


def _resumed_torch():
    torch.manual_seed(1)  # other weights, an empty optimizer: all must come back
    model = gpt.model.TorchGPT(CFG)
    optimizer = gpt.train.torch_adamw(model)
    with warnings.catch_warnings():  # DCP without a process group says it assumes one process
        warnings.filterwarnings("ignore", message="torch.distributed is disabled", category=UserWarning)
        nxt = resume_torch(ckpt_dir / "dcp", model, optimizer)
    losses = gpt.train.torch_run(model, optimizer, batches_torch[nxt:])
    return losses, {name: p.detach() for name, p in model.named_parameters()}


def _resumed():
    fresh = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(1)))[1]  # other weights: all must come back
    p, o, nxt = resume(ckpt_dir / "step", fresh, tx.init(fresh))
    p, _, losses = gpt.train.jax_run(train_step, p, o, batches[nxt:])
    return losses, p


# %%
# TESTS: resume points=3
check("resume", lambda: _resumed()[0][:1], losses_after[:1], rtol=0, atol=0,
      hint="the first loss after the resume differs from the uninterrupted run's: the parameters it starts "
           "from are not the saved ones, or its batches do not start at the saved step",
      crash_hint="Orbax restores into a target of the checkpoint's own structure: a dict with the three keys "
                 "that were saved, 'params', 'opt_state' and 'step', built from params_like and opt_state_like; "
                 "loaded without a target, the checkpoint comes back as plain dicts, so optax's named tuples "
                 "(AdamW's state, with .mu and .nu) are dicts and optax fails on them")
check("resume", lambda: len(_resumed()[0]), len(losses_after), rtol=0, atol=0,
      hint="the resumed run trains on another number of batches than the uninterrupted one: it starts "
           "again from batch 0, or past the saved step, not from the saved step")
check("resume", lambda: _resumed(), (losses_after, p_end), rtol=0, atol=0,
      hint="the losses match at first and then part: the run resumes with a fresh optimizer state (zero "
           "moments, step count 0), not the saved AdamW state")
check("resume", lambda: len(_resumed_torch()[0]), len(losses_after_torch), rtol=0, atol=0,
      hint="PyTorch: the resumed run trains on another number of batches than the uninterrupted one: it "
           "starts again from batch 0, or past the saved step, not from the saved step",
      crash_hint="PyTorch: the checkpoint is a DCP directory holding {'model', 'optim', 'step'}, and what "
                 "read it expected something else (a single file, or a state dict of another structure); "
                 "dcp.load fills tensors in place, so the step it is to fill must be a tensor too, "
                 "not a Python int")
check("resume", lambda: _resumed_torch()[0][:1], losses_after_torch[:1], rtol=0, atol=0,
      hint="PyTorch: the first loss after the resume differs: the model trains on with its fresh weights, "
           "not the saved ones")
check("resume", lambda: _resumed_torch(), (losses_after_torch, params_end_torch), rtol=0, atol=0,
      hint="PyTorch: the losses match at first and then part: AdamW resumes with a fresh state (no moments, "
           "step count 0), not the saved AdamW state (a fresh optimizer's own state_dict() has no moments "
           "for the checkpoint to fill)")

# %%
# HIDDEN TESTS: resume points=2
### BEGIN HIDDEN TESTS
_losses, _p = _resumed()
assert _losses == losses_after, (_losses, losses_after)
assert all((np.asarray(a) == np.asarray(b)).all() for a, b in zip(jax.tree.leaves(_p), jax.tree.leaves(p_end), strict=True))
_losses_t, _p_t = _resumed_torch()
assert _losses_t == losses_after_torch
assert all(torch.equal(_p_t[n], params_end_torch[n]) for n in params_end_torch)
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You wrote the mask every GPT starts from, a converter proven by outputs, the cache that
# makes sampling cheap in both frameworks, a loss that runs on eight devices unchanged and the
# gradients PyTorch's ranks average, and a resume that loses nothing, with Orbax and DCP. Together they are the lesson's pipeline in miniature.
