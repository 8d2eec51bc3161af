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
# # 11 · The GPT, from data to samples
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/11_capstone_gpt.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/11_capstone_gpt.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/11_capstone_gpt.ipynb)
#
# Lessons 01–10 taught the pieces on small models. This lesson puts them together on the
# model most readers came for: a small GPT, a transformer that predicts the next character.
# It is written once in `torch.nn` and once in Flax NNX, fed the same data, proven equal stage
# by stage, trained and sampled. Lesson 12 takes the same GPT on to speed, many devices,
# checkpoints and export.
#
# **Learning objectives.** After this notebook you can
# 1. write a small GPT in both frameworks, with a KV cache, and explain why the NNX version
#    scans one stacked block where PyTorch loops over a `ModuleList`;
# 2. prove two implementations equal stage by stage, and tell float32 drift from a bug with a
#    float64 control;
# 3. train both with a GPT's recipe and sample from them with one shared random stream.
#
# Every class and function the lesson teaches is written on the page. The same code is saved
# in `course_utils/gpt/`, as d2l saves a chapter's code into its package: lesson 12 and the
# exercises import it from there, and a test keeps the two copies equal.

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
SIZES = {  # name: (full, smoke)
    "block_size": (64, 32),  # context length: positions the model sees
    "d_model": (128, 32),  # width of the residual stream
    "n_heads": (4, 2),  # attention heads
    "n_layers": (4, 2),  # transformer blocks
    "d_ff": (512, 128),  # MLP hidden width
    "batch": (32, 8),  # sequences per training step
    "parity_steps": (50, 20),  # steps checked against float64 (section 3)
    "train_steps": (800, 30),  # training steps in section 5, each framework
    "warmup_steps": (100, 5),  # linear warm-up, then cosine decay
    "eval_batches": (20, 4),  # batches of the validation loss
    "sample_chars": (300, 40),  # characters sampled from each model
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX before PyTorch, float32 in both

import copy
import functools

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax
import torch
from flax import nnx
from IPython.display import Markdown, display
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

from course_utils import compat, config, full_run, gpt, plots
from course_utils.expect import expect_error
from course_utils.gpt.model import GPTConfig, check_positions
from course_utils.gpt.sample import check_lengths
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch_dev, jax_dev = SETUP.pair()  # one device kind for comparisons
print(env.report().line())
print(SETUP.rule)

# %% [markdown]
# The first line records what this run used: versions, devices, full float32 precision in both
# frameworks, and whether smoke mode shrank the sizes. The second line is the course's device
# rule.
#
# ## 1. Data: one corpus, one batch order, two pipelines
#
# **Key concepts**
# - The corpus is `pydoc_data.topics`, the help pages every CPython ships. Nothing is downloaded.
# - A character tokenizer: one token per distinct character.
# - One batch order, drawn once with NumPy, read by a `DataLoader` and by a NumPy iterator.
#
# Two training runs can only be compared if they see the same data. Letting each framework
# shuffle on its own loses that at the first batch. `DataLoader(shuffle=True)` draws from
# PyTorch's generator, and a JAX pipeline would draw from its own. So here the order is data:
# an array of window starts, drawn once by a seeded NumPy generator.

# %%
corpus = gpt.data.load_corpus()
tokenizer = gpt.data.CharTokenizer.from_text(corpus)  # vocabulary: the sorted set of characters
ids = tokenizer.encode(corpus)  # (n_chars,) int64
train_ids, val_ids = gpt.data.split_ids(ids, val_fraction=0.1)
print(f"{len(corpus):,} characters, vocabulary {tokenizer.vocab_size}; "
      f"train {len(train_ids):,} / validation {len(val_ids):,} tokens")
print(repr(corpus[20_000:20_120]))


# %% [markdown]
# The text is English prose about Python with code fragments. Characters need no tokenizer
# file, and every sample stays readable. The price is length: a context of `block_size`
# characters holds a sentence, not a page.
#
# A training window is `block_size + 1` consecutive tokens. The first `block_size` are the
# input `x`, the last `block_size` the targets `y`. `windows` cuts them with one index array,
# and `batch_order` draws the starts, `(steps, batch)` of them. Windows may overlap, and a
# position may be drawn twice: this samples the corpus uniformly, without epochs, which is
# nanoGPT's choice for a single text file. The validation split is the last tenth of the
# text, so no validation window overlaps a training one.

# %%
def batch_order(n_tokens, block_size, batch, steps, *, seed):  # (steps, batch) window starts
    n_windows = n_tokens - block_size  # a window needs block_size + 1 tokens: x and y
    if n_windows < 1:
        raise ValueError(f"{n_tokens} tokens are too few for block_size={block_size}")
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_windows, size=(steps, batch), dtype=np.int64)


def windows(ids, starts, block_size):  # (x, y), each starts.shape + (block_size,)
    chunk = ids[np.asarray(starts)[..., None] + np.arange(block_size + 1)]
    return chunk[..., :-1], chunk[..., 1:]  # y: x shifted by one token


order = batch_order(len(train_ids), S.block_size, S.batch, max(S.train_steps, S.parity_steps), seed=0)
order.shape


# %% [markdown]
# Each framework reads that order in its own idiom. PyTorch's is a `Dataset` behind a
# `DataLoader`. Item `i` of the dataset is the window that starts at token `i`. Passing the order as `batch_sampler` replaces the loader's own shuffling:
# row `i` of the order is the list of dataset items that form batch `i`. The loader's default
# collate then stacks those items into `(batch, block_size)` tensors.

# %%
# PyTorch
class WindowDataset(Dataset):  # item i: the window starting at token i
    def __init__(self, ids, block_size):
        self.ids = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
        self.block_size = block_size

    def __len__(self):
        return len(self.ids) - self.block_size

    def __getitem__(self, i):
        chunk = self.ids[i : i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def torch_loader(ids, order, block_size):
    order = np.asarray(order).tolist()  # one list of window starts per batch
    return DataLoader(WindowDataset(ids, block_size), batch_sampler=order)


x_torch, y_torch = (t.to(torch_dev) for t in next(iter(torch_loader(train_ids, order, S.block_size))))
x_torch.shape, x_torch.dtype


# %% [markdown]
# JAX has no loader of its own. Any Python iterator of NumPy arrays will do, and
# `jnp.asarray` moves a batch to the device. A jitted function also takes NumPy arrays
# directly and moves them itself, which the training loops below rely on. Grain adds worker processes and checkpointable
# iterators on top of the same idea.

# %%
# JAX
def numpy_batches(ids, order, block_size):  # one (x, y) pair of NumPy arrays per row of order
    for starts in order:
        yield windows(ids, starts, block_size)


x_np, y_np = next(numpy_batches(train_ids, order, S.block_size))
x_jax, y_jax = jnp.asarray(x_np), jnp.asarray(y_np)
x_jax.shape, x_jax.dtype

# %%
same_batches = all(
    np.array_equal(xt.numpy(), xn) and np.array_equal(yt.numpy(), yn)
    for (xt, yt), (xn, yn) in zip(torch_loader(train_ids, order, S.block_size),
                                  numpy_batches(train_ids, order, S.block_size), strict=True))
assert same_batches
print(f"all {len(order)} batches identical in both pipelines: {same_batches}")
print("x:", repr(tokenizer.decode(x_np[0][:40])), "\ny:", repr(tokenizer.decode(y_np[0][:40])))

# %% [markdown]
# Every batch is equal in both pipelines, and `y` is `x` shifted by one character. At every
# position the model predicts the next character. The dtypes differ: PyTorch's `int64`
# against JAX's default `int32`. The values are what matter.
#
# ## 2. The model, written twice
#
# **Key concepts**
# - A GPT: token and position embeddings, `n_layers` pre-LayerNorm blocks, a final LayerNorm,
#   and an output head tied to the token embedding.
# - The attention is written by hand in both, with a KV cache for sampling (section 6).
# - PyTorch loops over a `ModuleList`. NNX creates one block with `nnx.vmap` and runs it with
#   `nnx.scan`.
#
# The architecture is GPT-2's, shrunk. Each block normalises its input before the attention
# and before the MLP, and adds the result to the residual stream: `x + attn(LN(x))`. The head
# reuses the token embedding: each next character is scored by its dot product with that
# character's embedding. Weights start from `N(0, 0.02²)` in both frameworks, biases at zero.
# Dropout is 0, because two frameworks cannot draw the same dropout masks and every check
# below compares them element by element.
#
# The attention is written by hand rather than taken from `nn.MultiheadAttention` or
# `nnx.MultiHeadAttention`. The two library modules store their weights under other names and
# in other layouts, and each adds options the other lacks. Written by hand, both sides are the
# same maths line for line, and the converter meets only the frameworks' real differences.
#
# First the attention in PyTorch. One fused Linear makes query, key and value, and a reshape
# splits the heads. The mask lets the query at position `t` see the keys at positions `≤ t`.
# The `cache` argument is the KV cache of section 6. It holds earlier keys and values, and
# the call writes its own into it at `pos`, in place.

# %%
# PyTorch
LAYERNORM_EPS = 1e-5  # set on both sides: NNX's own default is 1e-6
INIT_STD = 0.02  # weights ~ N(0, 0.02²), biases 0


class TorchCausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)  # query, key, value at once
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x, cache=None, pos: int = 0):  # x: (B, T, d_model)
        B, T, C = x.shape
        H, hd = self.cfg.n_heads, self.cfg.head_dim
        q, k, v = self.qkv(x).split(C, dim=2)  # each (B, T, C)
        q, k, v = (t.view(B, T, H, hd).transpose(1, 2) for t in (q, k, v))  # (B, H, T, hd)
        q_pos = pos + torch.arange(T, device=x.device)  # positions of the queries
        if cache is not None:  # this layer's (keys, values), each (B, H, block_size, hd)
            k_cache, v_cache = cache
            k_cache[:, :, pos : pos + T] = k  # written in place at pos
            v_cache[:, :, pos : pos + T] = v
            k, v = k_cache, v_cache  # attend over the whole cache
        k_pos = torch.arange(k.shape[2], device=x.device)
        allowed = k_pos[None, :] <= q_pos[:, None]  # (T, S): the causal mask
        att = (q @ k.transpose(-2, -1)) * hd**-0.5  # (B, H, T, S)
        att = att.masked_fill(~allowed, float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = att @ v  # (B, H, T, hd)
        y = y.transpose(1, 2).reshape(B, T, C)  # heads side by side again
        return self.resid_drop(self.proj(y))


# %% [markdown]
# Read the shapes down the cell. `x` is `(B, T, C)`: batch, positions, channels. The fused
# Linear gives `(B, T, 3C)`, cut into three `(B, T, C)` parts. Each part is viewed as `H` heads
# of `hd = C / H` channels and transposed to `(B, H, T, hd)`, so that one matmul gives every
# head's scores, `(B, H, T, S)`. `S` is the number of keys: `T` without a cache, the cache's
# `block_size` slots with one. The scale `hd**-0.5` keeps the scores' spread near 1 whatever the
# head size, so the softmax does not saturate. A masked score becomes `-inf`, which the softmax
# turns into a weight of exactly 0.
#
# The same attention in Flax NNX. A Linear stores `kernel (in, out)` where PyTorch stores
# `weight (out, in)`. A JAX array cannot be written in place, so the cache comes back as a new
# array from `jax.lax.dynamic_update_slice`. Its position may be a traced value, so one
# compiled program serves every position.

# %%
# JAX
def nnx_linear(d_in, d_out, dtype, rngs):
    return nnx.Linear(d_in, d_out, kernel_init=nnx.initializers.normal(INIT_STD), dtype=dtype, rngs=rngs)


class NNXCausalSelfAttention(nnx.Module):
    def __init__(self, cfg: GPTConfig, *, dtype=None, rngs: nnx.Rngs):
        self.cfg = cfg
        self.qkv = nnx_linear(cfg.d_model, 3 * cfg.d_model, dtype, rngs)
        self.proj = nnx_linear(cfg.d_model, cfg.d_model, dtype, rngs)
        self.attn_drop = nnx.Dropout(cfg.dropout, rngs=rngs)
        self.resid_drop = nnx.Dropout(cfg.dropout, rngs=rngs)

    def __call__(self, x, cache=None, pos=0):  # x: (B, T, d_model)
        B, T, C = x.shape
        H, hd = self.cfg.n_heads, self.cfg.head_dim
        q, k, v = jnp.split(self.qkv(x), 3, axis=-1)  # each (B, T, C)
        q, k, v = (t.reshape(B, T, H, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        q_pos = pos + jnp.arange(T)  # positions of the queries; pos may be traced
        if cache is not None:  # a new cache, written at pos: JAX arrays are immutable
            k_cache, v_cache = cache
            k = jax.lax.dynamic_update_slice(k_cache, k.astype(k_cache.dtype), (0, 0, pos, 0))
            v = jax.lax.dynamic_update_slice(v_cache, v.astype(v_cache.dtype), (0, 0, pos, 0))
            cache = (k, v)
        k_pos = jnp.arange(k.shape[2])
        allowed = k_pos[None, :] <= q_pos[:, None]  # (T, S): the causal mask
        att = jnp.einsum("bhtd,bhsd->bhts", q, k) * hd**-0.5  # (B, H, T, S)
        att = jnp.where(allowed, att, -jnp.inf)
        wide = jnp.promote_types(att.dtype, jnp.float32)  # softmax in float32 at least
        att = jax.nn.softmax(att.astype(wide), axis=-1).astype(q.dtype)
        y = jnp.einsum("bhts,bhsd->bhtd", self.attn_drop(att), v.astype(q.dtype))
        y = y.transpose(0, 2, 1, 3).reshape(B, T, C)  # heads side by side again
        return self.resid_drop(self.proj(y)), cache


# %% [markdown]
# Line for line the same computation, with two differences a reader should notice. The NNX
# attention returns its cache, since nothing was changed in place. And it takes the softmax in
# float32 at least: with a bfloat16 compute dtype, which lesson 12 tries, the scores are cast up
# first and the weights cast back. `jnp.einsum` names the axes the matmuls contract, which
# reads more easily than a transpose and `@`; XLA compiles both to the same operation.
#
# A block is the attention and an MLP, each behind a LayerNorm and added to the residual
# stream. Both use the exact GELU: `jax.nn.gelu` defaults to the tanh approximation, hence
# `approximate=False`. The NNX block returns its cache with its output.

# %%
# PyTorch
class TorchGPTBlock(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model, eps=LAYERNORM_EPS)
        self.attn = TorchCausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model, eps=LAYERNORM_EPS)
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, cache=None, pos: int = 0):  # x: (B, T, d_model)
        x = x + self.attn(self.ln1(x), cache, pos)
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


# %%
# JAX
class NNXGPTBlock(nnx.Module):
    def __init__(self, cfg: GPTConfig, *, dtype=None, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(cfg.d_model, epsilon=LAYERNORM_EPS, rngs=rngs)
        self.attn = NNXCausalSelfAttention(cfg, dtype=dtype, rngs=rngs)
        self.ln2 = nnx.LayerNorm(cfg.d_model, epsilon=LAYERNORM_EPS, rngs=rngs)
        self.fc1 = nnx_linear(cfg.d_model, cfg.d_ff, dtype, rngs)
        self.fc2 = nnx_linear(cfg.d_ff, cfg.d_model, dtype, rngs)
        self.drop = nnx.Dropout(cfg.dropout, rngs=rngs)

    def __call__(self, x, cache=None, pos=0):
        a, cache = self.attn(self.ln1(x), cache, pos)
        x = x + a
        h = jax.nn.gelu(self.fc1(self.ln2(x)), approximate=False)  # exact, like F.gelu
        return x + self.drop(self.fc2(h)), cache


# %% [markdown]
# The PyTorch model keeps its blocks in an `nn.ModuleList` and loops over them in Python. One
# method, `_run`, serves the forward pass and the cached decoding of section 6.

# %%
# PyTorch
class TorchGPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(TorchGPTBlock(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model, eps=LAYERNORM_EPS)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)
        if isinstance(module, nn.Linear):
            nn.init.zeros_(module.bias)

    def forward(self, tokens):  # (B, T) token ids -> (B, T, vocab_size) logits
        return self._run(tokens, None, 0)

    def _run(self, tokens, cache, pos: int):
        B, T = tokens.shape
        check_positions(T, pos, self.cfg.block_size)  # pos + T must fit block_size
        positions = pos + torch.arange(T, device=tokens.device)
        x = self.drop(self.tok_emb(tokens) + self.pos_emb(positions))  # (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, None if cache is None else (cache[0][i], cache[1][i]), pos)
        x = self.ln_f(x)
        return F.linear(x, self.tok_emb.weight)  # tied head: (B, T, vocab_size)

    def loss(self, tokens, targets):  # mean cross-entropy of the next-token predictions
        logits = self(tokens)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def new_cache(self, batch: int):  # (keys, values), each (n_layers, batch, heads, block_size, head_dim)
        c = self.cfg
        shape = (c.n_layers, batch, c.n_heads, c.block_size, c.head_dim)
        w = self.tok_emb.weight
        return torch.zeros(shape, dtype=w.dtype, device=w.device), torch.zeros(shape, dtype=w.dtype, device=w.device)

    @torch.no_grad()
    def decode(self, tokens, cache, pos: int):  # logits of tokens at positions pos...; the cache written in place
        return self._run(tokens, cache, pos), cache


# %% [markdown]
# `self.apply(self._init_weights)` visits every submodule once, nanoGPT's way of initialising.
# GPT-2 and nanoGPT also scale the residual projections' weights by `1/√(2·n_layers)`; this
# lesson leaves that out. The tied head is `F.linear(x, tok_emb.weight)`: the embedding matrix
# is `(vocab, d_model)`, so the product gives one logit per character. `loss` flattens the
# batch and the positions into one axis, because `F.cross_entropy` wants `(N, vocab)` logits
# and `N` targets. `decode` runs under `torch.no_grad()`, since sampling needs no gradients.
#
# The NNX model differs in one place, the blocks. Under `jax.jit` a Python loop over blocks is
# unrolled: the program holds `n_layers` copies of the block, and compile time grows with
# depth. So `nnx.vmap` creates one block whose every parameter has a leading `(n_layers, ...)`
# axis, and `nnx.split_rngs` gives each layer its own key. `nnx.scan` then runs
# `jax.lax.scan` over that axis, with the residual stream as its carry. XLA compiles the block
# once, whatever the depth; lesson 12 measures what that saves.

# %%
# JAX
class NNXGPT(nnx.Module):
    def __init__(self, cfg: GPTConfig, *, dtype=None, rngs: nnx.Rngs):
        self.cfg = cfg
        emb_init = nnx.initializers.normal(INIT_STD)
        self.tok_emb = nnx.Embed(cfg.vocab_size, cfg.d_model, embedding_init=emb_init, dtype=dtype, rngs=rngs)
        self.pos_emb = nnx.Embed(cfg.block_size, cfg.d_model, embedding_init=emb_init, dtype=dtype, rngs=rngs)
        if dtype is None:  # nnx.Embed made None float32; None again follows the params
            self.tok_emb.dtype = self.pos_emb.dtype = None
        self.drop = nnx.Dropout(cfg.dropout, rngs=rngs)

        @nnx.split_rngs(splits=cfg.n_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make_blocks(rngs: nnx.Rngs) -> NNXGPTBlock:
            return NNXGPTBlock(cfg, dtype=dtype, rngs=rngs)

        self.blocks = make_blocks(rngs)  # one block, parameters (n_layers, ...)
        self.ln_f = nnx.LayerNorm(cfg.d_model, epsilon=LAYERNORM_EPS, rngs=rngs)

    def __call__(self, tokens):  # (B, T) token ids -> (B, T, vocab_size) logits
        x = self._embed(tokens, 0)

        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        def through_blocks(x, block):  # x is the carry; block is one layer's slice
            x, _ = block(x)
            return x

        return self._head(through_blocks(x, self.blocks))

    def _embed(self, tokens, pos):  # pos may be traced: one program for every position
        check_positions(tokens.shape[1], pos, self.cfg.block_size)
        positions = pos + jnp.arange(tokens.shape[1])
        return self.drop(self.tok_emb(tokens) + self.pos_emb(positions))  # (B, T, d_model)

    def _head(self, x):
        return self.tok_emb.attend(self.ln_f(x))  # tied head: (B, T, vocab_size)

    def loss(self, tokens, targets):  # mean cross-entropy; bfloat16 logits go up to float32
        logits = self(tokens)
        logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    def new_cache(self, batch: int):  # (keys, values), each (n_layers, batch, heads, block_size, head_dim)
        c = self.cfg
        shape = (c.n_layers, batch, c.n_heads, c.block_size, c.head_dim)
        dtype = self.tok_emb.embedding[...].dtype  # the weights' dtype, as TorchGPT's
        return jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)

    def decode(self, tokens, cache, pos):  # logits of tokens at positions pos... and the new cache
        x = self._embed(tokens, pos)

        @nnx.scan(in_axes=(nnx.Carry, 0, 0, 0), out_axes=(nnx.Carry, 0, 0))
        def through_blocks(x, block, k, v):  # k, v: this layer's (B, H, S, hd)
            x, (k, v) = block(x, (k, v), pos)
            return x, k, v

        x, keys, values = through_blocks(x, self.blocks, *cache)
        return self._head(x), (keys, values)


# %% [markdown]
# <details><summary>Four details of the NNX model</summary>
#
# - `check_positions` is PyTorch's check, but it skips a traced `pos`.
#   `dynamic_update_slice` would clamp such a `pos` instead of reporting it.
# - `nnx.Embed` turns a `dtype` of `None` into float32. The constructor sets it back to
#   follow the parameters, float64 in section 3.1.
# - `tok_emb.attend` multiplies by the embedding matrix transposed: NNX's tied head.
# - `decode` scans over the cache too. `in_axes=(nnx.Carry, 0, 0, 0)` hands each layer its
#   slice of the stacked block, keys and values, and the scan stacks the new ones back.
#
# </details>
#
# Both models are built from one configuration:

# %%
cfg = GPTConfig(vocab_size=tokenizer.vocab_size, block_size=S.block_size, d_model=S.d_model,
                n_heads=S.n_heads, n_layers=S.n_layers, d_ff=S.d_ff, dropout=0.0)

# PyTorch
torch.manual_seed(0)
model_torch = TorchGPT(cfg).to(torch_dev)
shapes_torch = {name: tuple(p.shape) for name, p in model_torch.named_parameters()}
print(f"{sum(p.numel() for p in model_torch.parameters()):,} parameters in {len(shapes_torch)} tensors")

# %%
# JAX
model_jax = NNXGPT(cfg, rngs=nnx.Rngs(0))
params_state = nnx.state(model_jax, nnx.Param)
shapes_jax = {jax.tree_util.keystr(path, simple=True, separator="/"): tuple(a.shape)
              for path, a in jax.tree_util.tree_leaves_with_path(nnx.to_pure_dict(params_state))}
print(f"{sum(a.size for a in jax.tree.leaves(params_state)):,} parameters in {len(shapes_jax)} arrays")

# %%
print("PyTorch:", {k: v for k, v in shapes_torch.items() if "qkv.weight" in k})
print("NNX:    ", {k: v for k, v in shapes_jax.items() if "qkv/kernel" in k})

# %% [markdown]
# The same number of parameters, arranged differently. PyTorch has one `qkv` weight per block,
# each `(3·d_model, d_model)`. NNX has one stacked kernel, `(n_layers, d_model, 3·d_model)`:
# the layer axis first, each layer transposed. Neither model has a head weight: the head is
# the token embedding.
#
# A PyTorch habit meets the stacked layout at once: iterating over the blocks. The cell runs
# inside `expect_error`, which prints the error in a line and fails if it does not happen.

# %%
with expect_error(TypeError):
    for block in model_jax.blocks:  # as in PyTorch: for block in model.blocks
        print(block)

# %% [markdown]
# There is no list to iterate: `model_jax.blocks` is one block that holds stacked arrays. To
# look at one layer, index its arrays; to run the layers, scan over them as `NNXGPT.__call__`
# does. Below, `kernel[...]` reads the array out of its `nnx.Param`, and `[1]` takes layer 1.

# %%
print("layer 1's fc1 kernel:", model_jax.blocks.fc1.kernel[...][1].shape)


# %% [markdown]
# ## 3. Proven equal, stage by stage
#
# **Key concepts**
# - The converter transposes each Linear, renames a LayerNorm's `weight` to `scale` and
#   stacks the layers.
# - From the same weights, the logits, the loss, every gradient and one AdamW step agree to
#   float32 rounding.
# - A float64 control in both frameworks tells rounding from a bug.
#
# Equal outputs on one input can hide a wrong layout, such as a transposed square matrix.
# Equal gradients of every parameter cannot. So the proof goes stage by stage, starting from
# PyTorch's initial weights copied into the NNX model. The converter works on plain
# name-to-array mappings, so it also converts gradients, which have their parameters' layout.

# %%
# PyTorch -> NNX: names and layouts
def gpt_torch_tensors_to_nnx(tensors):
    t = {name: torch.as_tensor(v).detach().cpu().numpy() for name, v in tensors.items()}
    n_layers = len({name.split(".")[1] for name in t if name.startswith("blocks.")})

    def stack(name):  # block i's tensor as row i: (n_layers, ...)
        return jnp.asarray(np.stack([t[f"blocks.{i}.{name}"] for i in range(n_layers)]))

    def linear(name):  # weight (out, in) -> kernel (in, out), for every layer at once
        return {"kernel": stack(f"{name}.weight").transpose(0, 2, 1), "bias": stack(f"{name}.bias")}

    def norm(name):  # a LayerNorm's weight is NNX's scale
        return {"scale": stack(f"{name}.weight"), "bias": stack(f"{name}.bias")}

    blocks = {"ln1": norm("ln1"), "ln2": norm("ln2"), "fc1": linear("fc1"), "fc2": linear("fc2"),
              "attn": {"qkv": linear("attn.qkv"), "proj": linear("attn.proj")}}
    return {"tok_emb": {"embedding": jnp.asarray(t["tok_emb.weight"])},
            "pos_emb": {"embedding": jnp.asarray(t["pos_emb.weight"])},
            "blocks": blocks,
            "ln_f": {"scale": jnp.asarray(t["ln_f.weight"]), "bias": jnp.asarray(t["ln_f.bias"])}}


# %%
# NNX -> PyTorch: the inverse, for weights or gradients
def gpt_nnx_tensors_to_torch(tree):
    if isinstance(tree, nnx.State):
        tree = nnx.to_pure_dict(tree)
    a = jax.tree.map(np.asarray, tree)  # nested dicts of NumPy arrays
    b = a["blocks"]
    parts = {"ln1": b["ln1"], "attn.qkv": b["attn"]["qkv"], "attn.proj": b["attn"]["proj"],
             "ln2": b["ln2"], "fc1": b["fc1"], "fc2": b["fc2"]}
    out = {"tok_emb.weight": a["tok_emb"]["embedding"], "pos_emb.weight": a["pos_emb"]["embedding"]}
    for i in range(b["ln1"]["scale"].shape[0]):  # unstack: layer i's row is block i
        for name, p in parts.items():
            weight = p["kernel"][i].T if "kernel" in p else p["scale"][i]  # (in, out) -> (out, in)
            out[f"blocks.{i}.{name}.weight"], out[f"blocks.{i}.{name}.bias"] = weight, p["bias"][i]
    out["ln_f.weight"], out["ln_f.bias"] = a["ln_f"]["scale"], a["ln_f"]["bias"]
    return {name: torch.tensor(v) for name, v in out.items()}


# %% [markdown]
# The cell below copies PyTorch's weights into the NNX model. Then `nnx.split` cuts the model
# in three: its structure (`graphdef`), its parameters, and the rest (the dropout layers'
# random state). The parameters are then a plain pytree, which `jax.grad` can differentiate
# and `jax.jit` can take. `nnx.merge(graphdef, params, rest)` builds the module back.

# %%
nnx.replace_by_pure_dict(params_state, gpt_torch_tensors_to_nnx(model_torch.state_dict()))
nnx.update(model_jax, params_state)  # PyTorch's initial weights, now in both models
graphdef, params_jax, rest_jax = nnx.split(model_jax, nnx.Param, ...)
rest_pure = nnx.to_pure_dict(rest_jax)  # plain arrays, closed over by the jitted functions below

# %%
# PyTorch
with torch.no_grad():
    logits_torch = model_torch(x_torch)
logits_torch.shape

# %%
# JAX
forward_jax = nnx.jit(lambda model, tokens: model(tokens))
logits_jax = forward_jax(model_jax, x_jax)
logits_jax.shape

# %%
assert_close(logits_jax, logits_torch, rtol=1e-5, atol=1e-5, name="logits")
print(f"logits: max |PyTorch - JAX| = {np.abs(np.asarray(logits_jax) - logits_torch.cpu().numpy()).max():.1e}")

# %% [markdown]
# `nnx.jit` takes the module itself as an argument and splits it for `jax.jit` behind the
# scenes; the JAX cells below split it by hand, to show what a pure step works on. The logits
# agree to float32 rounding, not bit for bit: the frameworks add the same products in other
# orders, with full float32 matmuls set by `env.setup`. A layout bug is far larger.
#
# Now the loss and the gradient of every parameter. The JAX loss is a pure function of the
# parameter pytree, which `jax.value_and_grad` differentiates.

# %%
# PyTorch
model_torch.zero_grad()
loss_torch = model_torch.loss(x_torch, y_torch)
loss_torch.backward()
grads_torch = {name: p.grad.cpu() for name, p in model_torch.named_parameters()}
loss_torch.item()


# %%
# JAX
def loss_fn_jax(params, x, y):  # the model's loss as a function of its parameters
    return nnx.merge(graphdef, params, rest_pure).loss(x, y)


loss_jax, grads_jax = jax.jit(jax.value_and_grad(loss_fn_jax))(params_jax, x_jax, y_jax)
float(loss_jax)

# %%
grads_converted = gpt_nnx_tensors_to_torch(grads_jax)  # NNX layout -> PyTorch names
assert_close(loss_jax, loss_torch, rtol=1e-6, atol=1e-6, name="loss")
assert_close(grads_converted, grads_torch, rtol=1e-4, atol=1e-6, name="gradients")
print(f"loss {loss_torch.item():.6f} vs {float(loss_jax):.6f} (a uniform guess: ln {cfg.vocab_size} = "
      f"{np.log(cfg.vocab_size):.6f}); all {len(grads_torch)} gradients agree")


# %% [markdown]
# Every gradient agrees, compared under PyTorch's names, so a failure would name a parameter a
# PyTorch user knows, `blocks.1.attn.qkv.weight`, with its largest difference. That is where a
# port is debugged: the first stage that fails, and the first parameter in it. The first loss
# sits next to the loss of a uniform guess, `ln(vocabulary)`: small initial weights make the
# first prediction nearly uniform.
#
# The tolerances say what "equal" means: a relative 10⁻⁵ for the logits, 10⁻⁴ for each
# gradient, whose small elements are sums of many rounded products.
#
# <details><summary>Why <code>loss_fn_jax</code> closes over plain arrays, not the
# <code>State</code></summary>
#
# `nnx.merge` reuses a `State`'s own variables, made outside the traced function, and
# `nnx.scan` refuses a variable from another trace level. From plain arrays, `rest_pure`,
# `merge` makes new variables inside the trace.
#
# </details>

# %% [markdown]
# **One AdamW step.** Both optimisers use one set of hyperparameters and decoupled weight
# decay. `torch.optim.AdamW` multiplies each parameter by `1 − lr·wd` before the Adam update,
# and `optax.adamw` adds `wd·p` to the update: the same arithmetic in another order. The JAX
# step is a pure function of the state and the batch. It returns the new parameters and
# optimiser state, and `donate_argnums` lets XLA write them over the old buffers.

# %%
# PyTorch
def torch_step(model, optimizer, x, y):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss = model.loss(x, y)
    loss.backward()
    optimizer.step()
    return loss.detach()


stepped_torch = copy.deepcopy(model_torch)
torch_step(stepped_torch, gpt.train.torch_adamw(stepped_torch), x_torch, y_torch)
after_step_torch = {n: p.detach().cpu() for n, p in stepped_torch.named_parameters()}
print("AdamW:", gpt.train.ADAMW)

# %%
# JAX
tx = gpt.train.jax_adamw()  # optax.adamw with the same hyperparameters


def jax_step(params, opt_state, x, y):  # -> (params, opt_state, loss): nothing changes in place
    loss, grads = jax.value_and_grad(loss_fn_jax)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


jit_step = jax.jit(jax_step, donate_argnums=(0, 1))  # the old state's buffers are reused
params_1, _, _ = jit_step(jax.tree.map(jnp.copy, params_jax), tx.init(params_jax), x_jax, y_jax)

# %%
after_step_jax = gpt_nnx_tensors_to_torch(params_1)
print("one AdamW step:", gpt.train.check_adam_step(after_step_jax, after_step_torch, grads_torch, atol=1e-6))

# %% [markdown]
# Adam's first step moves each parameter by about `lr`, and the two frameworks agree to
# rounding almost everywhere. `gpt.train.check_adam_step` allows exceptions only where a
# gradient is below `100·ε`, and the line says how many there were.
#
# <details><summary>Why a gradient near zero lets the two steps differ</summary>
#
# Adam's first update is `lr·g/(|g| + ε)`. Its slope in `g` reaches `lr/ε` near `g = 0`, so a
# rounding difference between the frameworks' gradients is amplified there. Some gradients are
# exactly zero in exact arithmetic and pure rounding noise in float32. The key bias is one:
# adding a constant vector to every key adds the same number to all of a query's scores, which
# softmax ignores. SGD would multiply such noise by `lr` and hide it; Adam amplifies it. This is
# one reason two correct implementations of an Adam-trained model drift apart.
# </details>
#
# ### 3.1 Many steps, and a float64 control
#
# One equal step does not prove a training run, because each step feeds the next. So both
# frameworks train `parity_steps` steps on the same batches, in float32 and again in float64.
# JAX computes in float32 unless 64-bit types are switched on: `jax.enable_x64()` does it
# inside a `with` block only, so the rest of the lesson stays float32. `compat.enable_x64` calls
# it, or `jax.experimental.enable_x64` on jax 0.7, Colab's release.

# %%
parity_batches = [windows(train_ids, starts, S.block_size) for starts in order[:S.parity_steps]]


# PyTorch
def torch_losses(dtype):
    model = copy.deepcopy(model_torch).to(dtype)
    optimizer = gpt.train.torch_adamw(model)
    return np.array([float(torch_step(model, optimizer, torch.from_numpy(x).to(torch_dev),
                                      torch.from_numpy(y).to(torch_dev))) for x, y in parity_batches])


# %%
# JAX
def jax_losses(dtype):  # inside enable_x64 for float64: outside it JAX makes float32 arrays
    params = jax.tree.map(lambda a: jnp.array(a, dtype), params_jax)
    opt_state, losses = tx.init(params), []
    for x, y in parity_batches:
        params, opt_state, loss = jit_step(params, opt_state, jnp.asarray(x), jnp.asarray(y))
        losses.append(loss)
    return np.asarray(jax.device_get(losses), np.float64)


# %%
drift_torch_32, drift_jax_32 = torch_losses(torch.float32), jax_losses(jnp.float32)
drift_torch_64 = torch_losses(torch.float64)
with compat.enable_x64():  # 64-bit JAX inside this block only
    drift_jax_64 = jax_losses(jnp.float64)
assert_close(drift_torch_64, drift_jax_64, rtol=1e-9, atol=1e-9, name="float64 losses at every step")
gaps = {
    "PyTorch vs JAX, float64": np.abs(drift_torch_64 - drift_jax_64),
    "PyTorch vs JAX, float32": np.abs(drift_torch_32 - drift_jax_32),
    "PyTorch float32 vs float64": np.abs(drift_torch_32 - drift_torch_64),
    "JAX float32 vs float64": np.abs(drift_jax_32 - drift_jax_64),
}
worst = [gap.max() for gap in gaps.values()]
print(f"float64: PyTorch and JAX differ by at most {worst[0]:.1e}. float32: they differ by at most {worst[1]:.1e}, "
      f"and each differs from its own float64 run by up to {worst[2]:.1e} (PyTorch) and {worst[3]:.1e} (JAX)")

# %% [markdown]
# The float64 pair passed a check at 10⁻⁹ at every step, so both programs compute the same
# training. The float32 gap between the frameworks is at most the two frameworks' own
# rounding added up, plus the tiny float64 gap. Without the control, "the curves are
# close" could hide a small real difference, such as another epsilon. With it, the float32 gap
# is rounding by elimination.
# Had the float64 check failed, the search for the cause would start where the
# stage-by-stage checks above stopped agreeing.
#
# ## 4. The training step, and the recipe a GPT trains with
#
# **Key concepts**
# - A linear warm-up, then cosine decay of the learning rate.
# - Clipping by global norm: one norm over all the gradients, one scale for all of them.
# - No weight decay on biases and LayerNorm gains: parameter groups in PyTorch, a mask in optax.
#
# A parity check wants a constant learning rate; a GPT is not trained with one. nanoGPT and most
# GPT recipes add three pieces, and each must be written once per framework, identically.
# Adam's estimate of each gradient's size is poor in its first steps, so the rate climbs from 0
# over `warmup_steps`, then follows half a cosine down to a tenth of its peak. Clipping by
# global norm scales every gradient by the same factor when their joint norm exceeds `CLIP`, so
# one bad batch cannot throw the weights far. Decay pulls weights towards zero, which suits
# matrices and embeddings but not a LayerNorm's gain, whose neutral value is 1.
#
# PyTorch's usual build of this schedule is `SequentialLR`, a `LinearLR` then a
# `CosineAnnealingLR`. But `LinearLR` cannot start from 0, as optax's warm-up does. So the
# PyTorch side writes the formula into a `LambdaLR`, a factor of the base rate per step.
# optax has the schedule built in.

# %%
# PyTorch: AdamW in two parameter groups, the schedule as a LambdaLR
PEAK_LR, FINAL_LR, CLIP = gpt.train.ADAMW["lr"], 0.1 * gpt.train.ADAMW["lr"], 1.0
WARMUP, TOTAL = S.warmup_steps, S.train_steps


def lr_factor(t):  # the learning rate at step t, as a fraction of PEAK_LR
    if t < WARMUP:
        return t / WARMUP
    progress = min(t - WARMUP, TOTAL - WARMUP) / (TOTAL - WARMUP)
    return (FINAL_LR + (PEAK_LR - FINAL_LR) * 0.5 * (1 + np.cos(np.pi * progress))) / PEAK_LR


def torch_recipe(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]  # Linear weights, embeddings
    no_decay = [p for p in model.parameters() if p.dim() < 2]  # biases, LayerNorm gains
    h = gpt.train.ADAMW
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": h["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(h["b1"], h["b2"]), eps=h["eps"])
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)


# %%
# PyTorch: one training step, the loss written out
def torch_train_step(model, optimizer, scheduler, x, y):  # x, y: (batch, seq) token ids
    model.train()
    optimizer.zero_grad(set_to_none=True)
    logits = model(x)  # (batch, seq, vocab)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # mean over batch × seq
    loss.backward()  # p.grad for every parameter
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)  # global norm ≤ CLIP
    optimizer.step()
    scheduler.step()  # the learning rate of the next step
    return loss.detach()


# %%
# JAX: the schedule built in, the exemption as a mask, clipping chained before AdamW
schedule_jax = optax.warmup_cosine_decay_schedule(0.0, PEAK_LR, WARMUP, TOTAL, FINAL_LR)


def decay_mask_jax(params):  # True where AdamW decays: kernels and embeddings
    return jax.tree_util.tree_map_with_path(
        lambda path, _: any(k in jax.tree_util.keystr(path) for k in ("kernel", "embedding")), params)


h = gpt.train.ADAMW
tx_recipe = optax.chain(optax.clip_by_global_norm(CLIP),
                        optax.adamw(schedule_jax, h["b1"], h["b2"], h["eps"], weight_decay=h["weight_decay"],
                                    mask=decay_mask_jax))


# %%
# JAX: one training step, a pure function of the state and the batch
def jax_train_step(params, opt_state, x, y):  # x, y: (batch, seq) token ids
    def loss_fn(params):
        logits = nnx.merge(graphdef, params, rest_pure)(x)  # (batch, seq, vocab)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()  # mean over batch × seq

    loss, grads = jax.value_and_grad(loss_fn)(params)  # grads: the params' tree
    updates, opt_state = tx_recipe.update(grads, opt_state, params)  # clip, AdamW, schedule
    return optax.apply_updates(params, updates), opt_state, loss


jit_train_step = jax.jit(jax_train_step, donate_argnums=(0, 1))

# %% [markdown]
# Read the two steps line against line. `zero_grad` has no JAX counterpart, because the
# gradients are a return value, not an attribute that accumulates. `loss.backward()` and
# `jax.value_and_grad` are the same reverse pass. PyTorch runs the clip, the decay and the
# schedule as three separate calls; JAX chains them into one `optax` transformation,
# updated by one call. `gpt.train.check_recipe` compares the two schedules at every step and
# the two decay rules on every parameter, and fails on a difference.

# %%
print(gpt.train.check_recipe(torch_recipe, model_torch, schedule_jax, decay_mask_jax, params_jax, TOTAL))

# %% [markdown]
# Section 5 trains with exactly these functions and compares the two runs' losses at every
# step.
#
# Where the schedule's state lives matters for checkpoints. PyTorch's scheduler is a separate
# object with its own step counter, to be saved beside the optimizer: forget it, and a resumed
# run restarts its warm-up. The optax schedule reads a count kept inside the optimizer state,
# so a checkpoint of that state carries it. The decay rules differ in the same way. PyTorch's
# groups are lists of tensors, fixed when they are built. The optax mask is a function of the
# parameter tree, applied at every update. The rule is nanoGPT's: a tensor of two or more
# dimensions, a matrix or an embedding, is decayed, and a bias or a gain is not. The mask names
# the kinds of arrays instead, because in the stacked tree a bias has two dimensions and
# counting them would not work.
#
# ## 5. Trained
#
# **Key concepts**
# - The loops are mirror images: `torch_train_step` on batches from the `DataLoader`, the
#   jitted `jax_train_step` on batches from the NumPy iterator.
# - JAX trains on the accelerator when there is one.
# - Validation loss on the held-out tail of the corpus.
#
# Both models start from the weights of section 3 and train on the same batches in the same
# order. The schedule spans `train_steps`, so a smoke run warms up and decays within its few
# steps. The PyTorch loop updates its module in place. The JAX loop threads its state: each step
# takes the parameters and the AdamW state and returns new ones. Both are donated, so the old
# arrays are deleted and the loop must always use what the step returned.

# %%
# PyTorch
trained_torch = copy.deepcopy(model_torch)
optimizer_trained_torch, scheduler_trained_torch = torch_recipe(trained_torch)
train_losses_torch = []
for x, y in tqdm(torch_loader(train_ids, order[:S.train_steps], S.block_size), total=S.train_steps, desc="PyTorch"):
    train_losses_torch.append(torch_train_step(trained_torch, optimizer_trained_torch, scheduler_trained_torch,
                                               x.to(torch_dev), y.to(torch_dev)))
train_losses_torch = torch.stack(train_losses_torch).cpu().numpy()  # waits for the last step
print(f"PyTorch on {torch_dev.type}: {S.train_steps} steps, loss {train_losses_torch[0]:.3f} -> "
      f"{train_losses_torch[-1]:.3f}")

# %% [markdown]
# The JAX loop runs on `SETUP.jax_alone`: the GPU or TPU when there is one, else the CPU. It
# keeps its losses on the device and converts them once at the end, so dispatch runs ahead of
# the computation. The progress bar counts steps dispatched, not finished, and `device_get`
# after the loop waits for the last one.

# %%
# JAX, on the accelerator when there is one
state = jax.device_put(jax.tree.map(jnp.copy, (params_jax, tx_recipe.init(params_jax))), SETUP.jax_alone)
train_losses_jax = []
for x, y in tqdm(numpy_batches(train_ids, order[:S.train_steps], S.block_size), total=S.train_steps, desc="JAX"):
    *state, loss = jit_train_step(*state, x, y)
    train_losses_jax.append(loss)
train_losses_jax = np.asarray(jax.device_get(train_losses_jax))
print(f"{SETUP.alone_label}: {S.train_steps} steps, loss {train_losses_jax[0]:.3f} -> {train_losses_jax[-1]:.3f}")

# %% [markdown]
# The first loss of each run is the same batch through the same weights, checked below to a
# relative 10⁻⁵ whatever device JAX trained on. Lesson 12 times the training step in both
# frameworks.
#
# The trained JAX parameters then come back to the device of the comparisons, and `nnx.merge`
# puts them into an NNX module for evaluation and sampling. The validation loss of each model
# averages `eval_batches` batches it never trained on.

# %%
assert_close(train_losses_jax[0], train_losses_torch[0], rtol=1e-5, atol=1e-6, name="first loss, both frameworks")
params_trained_jax = jax.device_put(state[0], jax_dev)
trained_jax = nnx.merge(graphdef, params_trained_jax, rest_jax)
val_order = batch_order(len(val_ids), S.block_size, S.batch, S.eval_batches, seed=1)

# PyTorch
trained_torch.eval()
with torch.no_grad():
    val_loss_torch = np.mean([float(trained_torch.loss(x.to(torch_dev), y.to(torch_dev)))
                              for x, y in torch_loader(val_ids, val_order, S.block_size)])

# JAX
loss_jit_jax = jax.jit(loss_fn_jax)
val_loss_jax = np.mean([float(loss_jit_jax(params_trained_jax, x, y))
                        for x, y in numpy_batches(val_ids, val_order, S.block_size)])
print(f"validation loss after {S.train_steps} steps: PyTorch {val_loss_torch:.4f}, JAX {val_loss_jax:.4f} "
      f"(a uniform guess: {np.log(cfg.vocab_size):.2f})")

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
steps, every = np.arange(1, S.train_steps + 1), max(1, S.train_steps // 40)  # a JAX marker every few steps
ax.plot(steps, train_losses_torch, label="PyTorch", color=plots.COLORS["pytorch"], lw=1.5)
ax.plot(steps[::every], train_losses_jax[::every], "o", label="JAX", color=plots.COLORS["jax"], ms=4, mfc="none")
ax.set(xlabel="step", ylabel="training loss (nats per character)", title="the two training runs")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
fig.tight_layout()
loss_gap = np.abs(train_losses_torch - train_losses_jax).max()
shows = "too small to see" if loss_gap < 0.01 * np.ptp(train_losses_torch) else "visible"
print(f"largest training-loss gap between the frameworks: {loss_gap:.1e}, {shows} at the plot's scale")

# %% [markdown]
# PyTorch's model is scored in evaluation mode; with dropout at 0 that changes no number, so the
# JAX side may use its training-mode loss. The two runs differ only by float32 rounding
# amplified by training: the line under the plot says how far. Each training loss is its step's
# own batch, so it is noisy. How far below the uniform guess a run gets depends on its steps,
# which smoke mode cuts; section 6.1 shows a full run.
#
# ## 6. Sampled, with a KV cache
#
# **Key concepts**
# - A sampler divides the last logits by a temperature, takes the softmax and draws.
# - One stream of uniform numbers, shared by both frameworks, makes equal weights draw the same
#   text.
# - The KV cache keeps each layer's keys and values, so each new token runs one position.
#
# The draw is where the frameworks would part. `torch.multinomial` and
# `jax.random.categorical` use different generators, and the same seed names a different
# stream in each:

# %%
probs_np = np.full((1, 8), 1 / 8, np.float32)  # eight equally likely tokens
torch.manual_seed(0)
draws_torch = torch.multinomial(torch.from_numpy(probs_np), 12, replacement=True)[0].tolist()
draws_jax = jax.random.categorical(jax.random.key(0), jnp.log(probs_np), shape=(12, 1))[:, 0].tolist()
print("torch.multinomial, seed 0:      ", draws_torch, "\njax.random.categorical, key 0:", draws_jax)
print("the same draws:", draws_torch == draws_jax)


# %% [markdown]
# So the samplers below draw one uniform number per step and sequence from NumPy. Each picks
# the first token whose cumulative probability exceeds it, the inverse of the CDF. The
# temperature divides the logits first: below 1 it sharpens the distribution towards the likely
# characters, above 1 it flattens it, and 0 always takes the most likely one. `torch_pick` and
# `jax_pick` are the same lines; the JAX one is jitted with the temperature static, so
# each temperature compiles once.

# %%
def uniforms(steps, batch, seed):  # the shared random numbers: (steps, batch) in [0, 1)
    return np.random.default_rng(seed).random((steps, batch), dtype=np.float32)


# PyTorch
def torch_pick(logits, temperature, u):  # logits (B, V), u (B,) -> (B,) token ids
    if temperature == 0:
        return logits.argmax(-1)
    cdf = F.softmax(logits.float() / temperature, dim=-1).cumsum(-1)
    return (cdf < u[:, None]).sum(-1).clamp(max=logits.shape[-1] - 1)


# %%
# JAX
@functools.partial(jax.jit, static_argnames="temperature")
def jax_pick(logits, temperature, u):  # the same pick, compiled
    if temperature == 0:
        return jnp.argmax(logits, axis=-1)
    probs = jax.nn.softmax(logits.astype(jnp.float32) / temperature, axis=-1)
    cdf = jnp.cumsum(probs, axis=-1)
    return jnp.minimum((cdf < u[:, None]).sum(-1), logits.shape[-1] - 1)


# %% [markdown]
# Without a cache, each new character runs the whole context through the model again. With
# the cache, the prompt runs once, `decode(prompt, cache, 0)`, and fills the cache's first
# slots in one call. Then each step runs one position, whose query attends to every key
# cached so far. The PyTorch loop below does both. Without the cache it crops the context to
# the last `block_size` tokens. With it, `check_lengths` refuses a sample longer than the
# cache's `block_size` slots before drawing anything.

# %%
# PyTorch
@torch.no_grad()
def torch_generate(model, prompt, steps, *, temperature=1.0, seed=0, use_cache=True):
    device = model.tok_emb.weight.device
    tokens = torch.as_tensor(np.asarray(prompt), dtype=torch.long, device=device)  # (B, T0)
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


# %% [markdown]
# The JAX loop keeps the tokens in NumPy and calls two compiled functions per
# token, the model step and the pick. Each call pays JAX's dispatch from Python; lesson 12
# compiles the whole loop into one program and times what that saves. The loop has one more
# concern: every new input shape compiles a new program. The cached step has one shape, a
# single token, and its position is a traced argument of `nnx.jit`. Without the cache, the
# context grows by a token each step, so `right_padded` pads it to `block_size` on the right. A
# causal model's logits at a position ignore every later one, so the padding changes nothing,
# and one shape means one compiled program.

# %%
# JAX
def right_padded(tokens, size):  # the last size tokens, zero-padded to size; the last filled index
    context = tokens[:, -size:]
    window = np.zeros((tokens.shape[0], size), np.int32)
    window[:, : context.shape[1]] = context
    return window, context.shape[1] - 1


@nnx.jit
def nnx_decode(model, tokens, cache, pos):  # pos is traced: one program for every position
    return model.decode(tokens, cache, pos)


@nnx.jit
def nnx_logits(model, window, index):  # the logits (B, V) at position index of the window
    return jnp.take(model(window), index, axis=1)


# %%
# JAX
def nnx_generate(model, prompt, steps, *, temperature=1.0, seed=0, use_cache=True):
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


# %% [markdown]
# <details><summary>How <code>compat.eval_view</code> switches to evaluation mode</summary>
#
# On flax 0.12.4 and newer it calls `nnx.view(model, deterministic=True, ...)`: a view of
# the same arrays in evaluation mode, the caller's model unchanged. Older flax (Colab's is
# 0.11) has no `nnx.view`, so there the helper switches a merged copy with `.eval()`. With
# `dropout=0` no number changes.
#
# </details>
#
# Two samples from each trained model follow, with the same prompts, temperature and seed. An
# undertrained model gives rare characters too much weight. A temperature of 0.8 sharpens
# the distribution, so they are drawn less often.

# %%
prompt = np.stack([tokenizer.encode("The "), tokenizer.encode("def ")])  # (2, 4)
temperature = 0.8

# PyTorch
samples_torch = torch_generate(trained_torch, prompt, S.sample_chars, temperature=temperature, seed=0,
                               use_cache=False)
for row in samples_torch:
    print(repr(tokenizer.decode(row)), "\n")

# %%
# JAX
samples_jax = nnx_generate(trained_jax, prompt, S.sample_chars, temperature=temperature, seed=0, use_cache=False)
for row in samples_jax:
    print(repr(tokenizer.decode(row)), "\n")

# %%
n = prompt.shape[1]  # equal prompts left out
for i, (a, b) in enumerate(zip(samples_torch[:, n:], samples_jax[:, n:], strict=True)):
    parted = np.flatnonzero(a != b)
    print(f"sample {i}, PyTorch against JAX: " + (f"identical in all {len(a)} drawn characters" if parted.size == 0
          else f"they part at drawn character {parted[0] + 1} of {len(a)}"))

# %% [markdown]
# The two trained models hold slightly different weights, through float32 drift, so their
# samples may part at some character, and the lines above say whether. From there each text
# follows its own history. Lesson 12 samples from the *same* weights in both frameworks.
#
# Now the KV cache against recomputing the context, in each framework. The cache is
# `(n_layers, batch, heads, block_size, head_dim)` for the keys and as much for the values,
# written at position `pos` each step. The texts must be equal:

# %%
n_cached = cfg.block_size - prompt.shape[1]

# PyTorch
cached_torch = torch_generate(trained_torch, prompt, n_cached, temperature=temperature, seed=1)
uncached_torch = torch_generate(trained_torch, prompt, n_cached, temperature=temperature, seed=1, use_cache=False)

# %%
# JAX
cached_jax = nnx_generate(trained_jax, prompt, n_cached, temperature=temperature, seed=1)
uncached_jax = nnx_generate(trained_jax, prompt, n_cached, temperature=temperature, seed=1, use_cache=False)

# %%
assert np.array_equal(cached_torch, uncached_torch) and np.array_equal(cached_jax, uncached_jax)
print(f"{n_cached} cached steps = {n_cached} uncached steps, in PyTorch and in JAX:",
      repr(tokenizer.decode(cached_jax[0])))

# %% [markdown]
# The cache turns each step's attention from a `T × T` block of scores into one row: the new
# query against the cache's `block_size` slots, those not yet written masked. It skips
# recomputing every earlier position's keys and values. Its price is memory,
# `2 · n_layers · batch · block_size · d_model` numbers, which for a large model and a long
# context is what limits the batch. Lesson 12 times what the cache saves.
#
# ### 6.1 What a full run gives
#
# A smoke run trains too few steps for its samples to show what the model learns. A full run
# writes its numbers to a file, and the course ships such files, measured on its own machines,
# in `course_utils/full_runs/`. The table sets each shipped run, headed by its machine, date and
# versions, beside this run's numbers.

# %%
result = {"training steps": S.train_steps, "validation loss, PyTorch": float(val_loss_torch),
          "validation loss, JAX": float(val_loss_jax), "a uniform guess": float(np.log(cfg.vocab_size)),
          "sample": tokenizer.decode(samples_jax[0])}
if not S.smoke:
    print("this run's numbers:", full_run.save("11_capstone_gpt", result, env.report().info))
columns = full_run.columns("11_capstone_gpt", result)  # the shipped runs, then this one
display(Markdown(full_run.table(columns, {k: ".4f" if "loss" in k or "guess" in k else ""
                                          for k in result if k != "sample"})))
for heading, numbers in columns:
    print(f"{heading}, the JAX model's sample: {numbers['sample']!r}\n")

# %% [markdown]
# The last column is this run; the columns before it are the shipped full runs, if any.
#
# Read a full run's samples for what a character model learns first: letter frequencies,
# spaces, common short words, and the indentation of the corpus's code blocks. Sentences need
# far more training than this lesson spends.
#
# ## Summary
#
# | task | PyTorch | JAX (Flax NNX + Optax) |
# |---|---|---|
# | input pipeline | `DataLoader(Dataset, batch_sampler=order)` | a NumPy iterator over the same `order` |
# | blocks | `nn.ModuleList`, a Python loop | `nnx.vmap` at creation, `nnx.scan` in `__call__` |
# | attention cache | tensors written in place | new arrays from `dynamic_update_slice` |
# | Linear weight | `weight (out, in)` | `kernel (in, out)`, stacked `(layers, in, out)` |
# | tied head | `F.linear(x, tok_emb.weight)` | `tok_emb.attend(x)` |
# | model as a pytree | the module itself | `nnx.split` → `graphdef, params, rest`; `nnx.merge` |
# | training step | `zero_grad`, `backward`, `clip_grad_norm_`, `step`, `scheduler.step` | `value_and_grad`, one `optax.chain` update |
# | schedule, decay exemption | `LambdaLR`; two parameter groups | `optax.warmup_cosine_decay_schedule`; `mask=` |
# | float64 control | `model.double()` | `with jax.enable_x64():` |
# | evaluation mode | `model.eval()` | `nnx.view(model, deterministic=True)`, flax ≥ 0.12.4 |
# | sampling | `torch.multinomial`, or a shared stream | `jax.random.categorical`, or a shared stream |
#
# **Common misconceptions** (each taken up by a section above)
# - *"A `for` loop over layers is fine under `jit`."* It is correct, but `jit` unrolls it into
#   one copy per layer; `nnx.scan` over stacked layers compiles one block (section 2).
# - *"Same loss on one batch, same model."* A transposed square matrix or a mask off by one
#   can survive one output; every gradient and one optimiser step do not (section 3).
# - *"The float32 curves differ, so one framework is wrong."* The float64 control agrees at
#   every step; the float32 gap is rounding, amplified by training (3.1).
# - *"`DataLoader(shuffle=True)` and a JAX pipeline with the same seed see the same data."*
#   They use different generators; one order, shared as data, does (section 1).
# - *"Same seed, same sample in both frameworks."* Only with one shared random stream (6).
# - *"The KV cache is an approximation."* It computes the same attention over the same keys
#   and values; the texts are equal (section 6).
#
# **Review questions**
#
# <details><summary>1. Why does the NNX model create its blocks with <code>nnx.vmap</code> and
# <code>nnx.split_rngs</code>?</summary>
#
# `vmap` over a block constructor returns one block whose parameters carry a leading layer
# axis, which `nnx.scan` loops over. `split_rngs` gives each layer its own random key, so the
# layers start from different weights.
# </details>
#
# <details><summary>2. What does the converter do to a Linear layer of block 2, and to a
# LayerNorm?</summary>
#
# The Linear's `blocks.2.fc1.weight (out, in)` is transposed to `(in, out)` and stored as row 2
# of the stacked `blocks.fc1.kernel (layers, in, out)`. A LayerNorm's `weight` becomes `scale`
# and its `bias` stays `bias`, stacked the same way. The tied head has no weights to move.
# </details>
#
# <details><summary>3. Which keys may the query at position <code>pos + i</code> see in a
# cached decode step?</summary>
#
# The keys at positions `≤ pos + i`. The slots not yet written hold zeros, and the same
# comparison masks them, so they get no attention weight.
# </details>
#
# <details><summary>4. Why do the two AdamW updates agree, although one multiplies the parameter
# by <code>1 − lr·wd</code> and the other adds <code>wd·p</code> to the update?</summary>
#
# Both compute `p − lr·wd·p − lr·m̂/(√v̂ + ε)`; they group the terms differently, which changes
# float32 rounding and nothing else. Adam with L2 regularisation, the decay added to the
# gradient, would be a different optimiser.
# </details>
#
# <details><summary>5. A resumed PyTorch run repeats its warm-up although the optimizer state was
# restored. What was left out, and why can this not happen with optax?</summary>
#
# The scheduler's state: `LambdaLR` keeps its own step counter outside the optimizer. optax's
# schedule reads the count kept inside the optimizer state, which the checkpoint holds.
# </details>
#
# <details><summary>6. Why may two models trained in the two frameworks draw different samples,
# though they use one random stream?</summary>
#
# Float32 drift over the training steps leaves them with slightly different weights. One draw
# can then fall on different sides of a cumulative-probability edge, and from there the texts
# follow different histories.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and press
# *Check*. A wrong answer gets a hint, not the answer.

# %%
from course_utils import quiz

quiz.load("11_capstone_gpt")

# %% [markdown]
# **Next:** the exercises in `exercises/11_capstone_gpt_exercises.ipynb` (a causal mask, an
# attention converter, a KV-cache step, each in both frameworks), then lesson 12,
# `notebooks/12_gpt_at_scale.ipynb`: the same GPT made fast, sharded, checkpointed, exported and
# ported.
