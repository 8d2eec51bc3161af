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
# # 11 · Exercises: the GPT, from data to samples
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/11_capstone_gpt_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/11_capstone_gpt_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/11_capstone_gpt_exercises.ipynb)
#
# Three exercises on the pieces of lesson 11's GPT, each in both frameworks or across them: the
# causal mask, a weight converter for the attention block, and one step of a KV cache.
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
SIZES = {"seq": (32, 8)}  # name: (full, smoke)

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX before PyTorch, float32, one device kind for both
# (on a TPU, the CPU: PyTorch stays there)

import dis

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils import config
from course_utils.exercises import check
from course_utils.gpt.model import GPTConfig, NNXCausalSelfAttention, TorchCausalSelfAttention
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
CFG = GPTConfig(vocab_size=32, block_size=S.seq, d_model=16, n_heads=4, n_layers=2, d_ff=32)
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
IN_PLACE = ("JAX: `mask[...] = ...` assigns into a JAX array, and JAX arrays are immutable: build the "
            "mask from a comparison of positions, or keep what `.at[...].set` returns")
check("causal-mask", lambda: (tuple(causal_mask_torch(S.seq).shape), tuple(causal_mask_jax(S.seq).shape)),
      ((S.seq, S.seq), (S.seq, S.seq)),
      hint="the masks must be (T, T), rows for queries and columns for keys: a mask viewed as (1, 1, T, T), "
           "as nanoGPT registers its bias buffer, adds axes that broadcasting supplies",
      crash_hint=IN_PLACE)
check("causal-mask", lambda: isinstance(causal_mask_jax(S.seq), jax.Array), True,
      hint="JAX: causal_mask_jax returned a NumPy array: build the mask with jax.numpy, so that it lives "
           "on JAX's device and works inside jax.jit")


def _mask(fn):
    return np.asarray(fn(S.seq)).astype(bool)


ones = np.ones((S.seq, S.seq), dtype=bool)
for name, fn in (("PyTorch", causal_mask_torch), ("JAX", causal_mask_jax)):
    kept = "tril() returns a new tensor" if name == "PyTorch" else "jnp.tril returns a new array"
    check("causal-mask", lambda fn=fn: _mask(fn).all(), False,
          hint=f"{name}: every entry is True, so a query sees the later keys: {kept}, and its result "
               "was not kept")
    check("causal-mask", lambda fn=fn: _mask(fn).any(), True,
          hint=f"{name}: every entry is False: `.at[...].set` returns a new array and leaves its input as "
               "it is, so its result must be kept")
    check("causal-mask", lambda fn=fn: np.array_equal(_mask(fn), np.triu(ones, 1)), False,
          hint=f"{name}: the mask marks the hidden keys, as a masked_fill mask does: True must mark the keys "
               "a query may attend to")
    check("causal-mask", lambda fn=fn: np.array_equal(_mask(fn), np.triu(ones)), False,
          hint=f"{name}: rows are queries and columns keys, and this mask lets each query see the later keys")
    check("causal-mask", lambda fn=fn: np.array_equal(_mask(fn), np.tril(ones, -1)), False,
          hint=f"{name}: the mask hides each query's own position: position t may attend to key t")
    check("causal-mask", lambda fn=fn: attend(*qkv_np, _mask(fn)), expected_attention, rtol=1e-10, atol=1e-12,
          hint=f"{name}: the outputs are not causal attention's: the query at row t must see the keys 0 … t "
               "and nothing later")


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


check("attention-converter", lambda: sorted(attention_torch_to_nnx(sd_np)), ["proj", "qkv"],
      hint="the dict must be nested by NNX's layer names, 'qkv' and 'proj', each holding its own dict, not "
           "keyed by PyTorch's dotted state-dict names")
check("attention-converter", lambda: {k: sorted(v) for k, v in sorted(attention_torch_to_nnx(sd_np).items())},
      {"proj": ["bias", "kernel"], "qkv": ["bias", "kernel"]},
      hint="each layer holds NNX's two names, 'kernel' and 'bias': PyTorch's weight is NNX's kernel, and a "
           "layer without its bias would start from zeros")
check("attention-converter", _attention_output, expected_attn, rtol=1e-5, atol=1e-5,
      hint="the converted attention is not the PyTorch one: nn.Linear.weight is (out, in) and an NNX "
           "kernel (in, out), and a weight moved without that change of layout mixes up which input feeds "
           "which output",
      crash_hint="the kernels do not fit NNX's attention: nn.Linear.weight is (out, in) where an NNX kernel "
                 "is (in, out), so a weight moved without that change of layout has the wrong shape")

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


def _nan_positions(out):
    """For each position on axis 2, whether its outputs hold NaN."""
    return ~np.isfinite(np.asarray(out)).all(axis=(0, 1, 3))


def _all_hidden_at_0(out):
    """Fail, naming it, when only position 0 is NaN: the mask hid every key there, pos itself included."""
    nan = _nan_positions(out)
    assert not (nan[0] and not nan[1:].any()), "your outputs hold NaN at pos 0 alone"


def _softmax_axis(out):
    """Fail, naming it, when the softmax ran over the query axis (length 1): weights of 1, or NaN where masked."""
    nan = _nan_positions(out)
    assert not nan[1:].any(), "your outputs hold NaN"
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


def _assigns_into_an_item(fn):
    """Whether fn's code holds an item assignment, `x[...] = value` (PyTorch's in-place write)."""
    code = getattr(fn, "__code__", None)
    return code is not None and any(i.opname == "STORE_SUBSCR" for i in dis.get_instructions(code))


def _jax_crash_hint():
    """The JAX step's crash hint: the one likely cause the student's code shows, else the traced slice."""
    fn = globals().get("decode_step")
    if _assigns_into_an_item(fn):
        return ("JAX: `k_cache[...] = k` assigns into a JAX array, and JAX arrays are immutable: "
                "write with jax.lax.dynamic_update_slice or `.at[...].set`, which return a new cache")
    if _uses_jax_sdpa(fn):
        return ("JAX: jax.nn.dot_product_attention reads (batch, seq, heads, head_dim), not PyTorch's "
                "(batch, heads, seq, head_dim): q and the caches go in transposed, the output comes back "
                "transposed")
    return ("JAX: under jax.jit pos is a traced value, so a slice cannot start or end at it; and k is "
            "(B, H, 1, hd), one position long on axis 2")


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
check("kv-cache-step", lambda: _all_hidden_at_0(run_decode(decode_step)[0]),
      hint="JAX: the mask hid every key at pos 0, and a softmax over -inf alone is NaN: a mask of the "
           "positions below pos leaves pos itself out")
check("kv-cache-step", lambda: _softmax_axis(run_decode(decode_step)[0]),
      hint="JAX: the outputs are NaN or the sums of the values: the softmax ran over the query axis, "
           "whose length is 1, not over the keys, which gives every key weight 1 (and a masked slot "
           "-inf minus -inf)")
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
# ## Done
#
# You wrote the mask every GPT starts from, a converter proven by outputs, and the cache that
# makes sampling cheap, each in both frameworks. Lesson 12's exercises take the same GPT to
# many devices and checkpoints.
