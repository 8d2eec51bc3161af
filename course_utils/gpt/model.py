"""A small GPT (decoder-only transformer language model) in PyTorch and in Flax NNX, the same maths.

Read top to bottom, like nanoGPT's ``model.py``: token + position embeddings,
``n_layers`` pre-LayerNorm blocks (causal self-attention, then an MLP, each
added to a residual stream), a final LayerNorm, and an output head *tied* to
the token embedding (logits = x @ embeddingᵀ; no separate head weights).

Layout choices, made the same way on both sides so the converters in
:mod:`course_utils.gpt.convert` only meet the real framework differences:

- the attention is written by hand, with one fused ``qkv`` Linear ``d_model ->
  3 * d_model`` (query, key, value side by side, heads contiguous inside each)
  and an output ``proj``; a Linear is ``weight (out, in)`` in PyTorch and
  ``kernel (in, out)`` in NNX, so the port is a transpose;
- LayerNorm epsilon is :data:`LAYERNORM_EPS` in both (``nnx.LayerNorm``'s own
  default is 1e-6, ``nn.LayerNorm``'s 1e-5);
- GELU is the exact erf form in both (``jax.nn.gelu`` defaults to tanh);
- PyTorch keeps its blocks in an ``nn.ModuleList`` (a Python loop); NNX stacks
  them: every block parameter gets a leading ``(n_layers, ...)`` axis.

Both models have a KV cache: ``new_cache(batch)`` gives ``(keys, values)``, each
``(n_layers, batch, heads, block_size, head_dim)``, and ``decode(tokens, cache,
pos)`` runs ``tokens`` (positions ``pos ... pos + T - 1``) against it, writing
their keys and values at ``pos``. Sampling loops are in
:mod:`course_utils.gpt.sample`.

This module imports torch and flax at the top; ``import course_utils`` does not import it.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import optax
import torch
from flax import nnx
from torch import nn
from torch.nn import functional as F

from course_utils.models.transformer import TORCH_LAYERNORM_EPS, check_sizes

__all__ = [
    "LAYERNORM_EPS",
    "GPTConfig",
    "NNXGPT",
    "TorchGPT",
    "check_positions",
    "nnx_linear",
]

LAYERNORM_EPS = TORCH_LAYERNORM_EPS  # 1e-5, set explicitly on both sides
# weights ~ N(0, 0.02²), biases 0; GPT-2 also scales its residual projections down
INIT_STD = 0.02


def check_positions(T, pos, block_size: int) -> None:
    """Refuse positions ``pos ... pos + T - 1`` past ``block_size``, where they are known.

    Both models call it. ``T`` is checked when it is a number (a ``jax.export`` or
    ``torch.export`` symbolic length is not), ``pos`` when it is a Python int: NNX's
    decode step takes a traced ``pos`` (one compiled program for every position), and
    ``dynamic_update_slice`` would clamp a traced position past the end, not report it.
    """
    if not isinstance(T, int):
        return
    first = pos if isinstance(pos, int) else 0  # a traced pos: T alone must fit
    if first + T > block_size:
        raise ValueError(
            f"positions {first}..{first + T - 1} do not fit block_size={block_size}"
        )


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of the GPT; the same config builds both frameworks' models.

    The defaults are a small test size, not a corpus's: pass the tokenizer's
    ``vocab_size`` (lesson 11 does).
    """

    vocab_size: int = 128  # any; the data's tokenizer decides the real one
    block_size: int = 64  # the longest context: number of positions
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 256
    dropout: float = 0.0

    def __post_init__(self) -> None:
        check_sizes(
            self, ("vocab_size", "block_size", "d_model", "n_heads", "n_layers", "d_ff")
        )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


# ----------------------------------------------------------------- PyTorch


class TorchCausalSelfAttention(nn.Module):
    """Multi-head self-attention; position t attends to positions <= t only."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)  # query, key, value at once
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x, cache=None, pos: int = 0):
        # x: (B, T, d_model); cache: None or this layer's (keys, values), each (B, H, S, hd)
        B, T, C = x.shape
        H, hd = self.cfg.n_heads, self.cfg.head_dim
        q, k, v = self.qkv(x).split(C, dim=2)  # each (B, T, C)
        q, k, v = (
            t.view(B, T, H, hd).transpose(1, 2) for t in (q, k, v)
        )  # (B, H, T, hd)
        q_pos = pos + torch.arange(T, device=x.device)  # positions of the queries
        if cache is not None:
            k_cache, v_cache = cache
            k_cache[:, :, pos : pos + T] = k  # write this step's keys and values at pos
            v_cache[:, :, pos : pos + T] = v
            k, v = k_cache, v_cache  # (B, H, S, hd): attend over the whole cache
        k_pos = torch.arange(k.shape[2], device=x.device)
        allowed = k_pos[None, :] <= q_pos[:, None]  # (T, S): the causal mask
        att = (q @ k.transpose(-2, -1)) * hd**-0.5  # (B, H, T, S)
        att = att.masked_fill(~allowed, float("-inf"))
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = att @ v  # (B, H, T, hd)
        y = y.transpose(1, 2).reshape(B, T, C)  # heads side by side again
        return self.resid_drop(self.proj(y))


class TorchGPTBlock(nn.Module):
    """Pre-LN block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model, eps=LAYERNORM_EPS)
        self.attn = TorchCausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model, eps=LAYERNORM_EPS)
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, cache=None, pos: int = 0):
        # x: (B, T, d_model)
        x = x + self.attn(self.ln1(x), cache, pos)
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class TorchGPT(nn.Module):
    """Token + position embeddings, a ModuleList of blocks, final LN, tied head."""

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

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, T) token ids -> (B, T, vocab_size) logits of the next token."""
        return self._run(tokens, None, 0)

    def _run(self, tokens, cache, pos: int):
        B, T = tokens.shape
        check_positions(T, pos, self.cfg.block_size)
        positions = pos + torch.arange(T, device=tokens.device)
        x = self.drop(self.tok_emb(tokens) + self.pos_emb(positions))  # (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, None if cache is None else (cache[0][i], cache[1][i]), pos)
        x = self.ln_f(x)
        return F.linear(x, self.tok_emb.weight)  # tied head: (B, T, vocab_size)

    def loss(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the next-token predictions; ``targets`` is (B, T)."""
        logits = self(tokens)
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        )

    def new_cache(self, batch: int):
        """An empty KV cache: (keys, values), each (n_layers, batch, heads, block_size, head_dim)."""
        c = self.cfg
        shape = (c.n_layers, batch, c.n_heads, c.block_size, c.head_dim)
        w = self.tok_emb.weight
        return torch.zeros(shape, dtype=w.dtype, device=w.device), torch.zeros(
            shape, dtype=w.dtype, device=w.device
        )

    @torch.no_grad()
    def decode(self, tokens: torch.Tensor, cache, pos: int):
        """Logits (B, T, vocab) of ``tokens`` at positions ``pos...``; writes the cache in place."""
        return self._run(tokens, cache, pos), cache


# ------------------------------------------------------------------ Flax NNX


def nnx_linear(d_in: int, d_out: int, dtype, rngs: nnx.Rngs) -> nnx.Linear:
    """An ``nnx.Linear`` with GPT-2's initial kernel, N(0, 0.02²); its bias starts at 0."""
    return nnx.Linear(
        d_in,
        d_out,
        kernel_init=nnx.initializers.normal(INIT_STD),
        dtype=dtype,
        rngs=rngs,
    )


class NNXCausalSelfAttention(nnx.Module):
    """The same attention as ``TorchCausalSelfAttention``; the cache is passed in and returned."""

    def __init__(self, cfg: GPTConfig, *, dtype=None, rngs: nnx.Rngs):
        self.cfg = cfg
        self.qkv = nnx_linear(cfg.d_model, 3 * cfg.d_model, dtype, rngs)
        self.proj = nnx_linear(cfg.d_model, cfg.d_model, dtype, rngs)
        self.attn_drop = nnx.Dropout(cfg.dropout, rngs=rngs)
        self.resid_drop = nnx.Dropout(cfg.dropout, rngs=rngs)

    def __call__(self, x, cache=None, pos=0):
        # x: (B, T, d_model); cache: None or this layer's (keys, values), each (B, H, S, hd)
        B, T, C = x.shape
        H, hd = self.cfg.n_heads, self.cfg.head_dim
        q, k, v = jnp.split(self.qkv(x), 3, axis=-1)  # each (B, T, C)
        q, k, v = (t.reshape(B, T, H, hd).transpose(0, 2, 1, 3) for t in (q, k, v))
        q_pos = pos + jnp.arange(T)  # positions of the queries; pos may be traced
        if cache is not None:
            k_cache, v_cache = cache  # functional update: new arrays, written at pos
            k = jax.lax.dynamic_update_slice(
                k_cache, k.astype(k_cache.dtype), (0, 0, pos, 0)
            )
            v = jax.lax.dynamic_update_slice(
                v_cache, v.astype(v_cache.dtype), (0, 0, pos, 0)
            )
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


class NNXGPTBlock(nnx.Module):
    """The same pre-LN block as ``TorchGPTBlock``; returns ``(x, cache)``."""

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


class NNXGPT(nnx.Module):
    """The same GPT as ``TorchGPT``, its blocks stacked on a leading layer axis.

    Why stack and scan: a Python loop over ``n_layers`` blocks (PyTorch's
    ``ModuleList``) would be unrolled by ``jax.jit`` into ``n_layers`` copies
    of the block in the compiled program, so compile time and program size
    grow with depth. ``nnx.vmap`` (with ``nnx.split_rngs``, one key per layer)
    *creates* the blocks as one block whose every parameter has a leading
    ``(n_layers, ...)`` axis, and ``nnx.scan`` *runs* them: ``jax.lax.scan``
    compiles one block and loops it over that axis, the residual stream ``x``
    as the carry. ``dtype`` is the compute dtype of the Linears and the
    embedding (``jnp.bfloat16`` for mixed precision); parameters stay float32.
    """

    def __init__(self, cfg: GPTConfig, *, dtype=None, rngs: nnx.Rngs):
        self.cfg = cfg
        emb_init = nnx.initializers.normal(INIT_STD)
        self.tok_emb = nnx.Embed(
            cfg.vocab_size, cfg.d_model, embedding_init=emb_init, dtype=dtype, rngs=rngs
        )
        self.pos_emb = nnx.Embed(
            cfg.block_size, cfg.d_model, embedding_init=emb_init, dtype=dtype, rngs=rngs
        )
        if dtype is None:  # nnx.Embed made None float32; None again follows the params
            self.tok_emb.dtype = self.pos_emb.dtype = None
        self.drop = nnx.Dropout(cfg.dropout, rngs=rngs)

        @nnx.split_rngs(splits=cfg.n_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make_blocks(rngs: nnx.Rngs) -> NNXGPTBlock:
            return NNXGPTBlock(cfg, dtype=dtype, rngs=rngs)

        self.blocks = make_blocks(rngs)  # one block, parameters (n_layers, ...)
        self.ln_f = nnx.LayerNorm(cfg.d_model, epsilon=LAYERNORM_EPS, rngs=rngs)

    def __call__(self, tokens: jax.Array) -> jax.Array:
        """(B, T) token ids -> (B, T, vocab_size) logits of the next token."""
        x = self._embed(tokens, 0)

        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        def through_blocks(x, block):  # x is the carry; block is one layer's slice
            x, _ = block(x)
            return x

        return self._head(through_blocks(x, self.blocks))

    def _embed(self, tokens, pos):  # pos may be traced: one program for every position
        check_positions(tokens.shape[1], pos, self.cfg.block_size)
        positions = pos + jnp.arange(tokens.shape[1])
        return self.drop(
            self.tok_emb(tokens) + self.pos_emb(positions)
        )  # (B, T, d_model)

    def _head(self, x):
        return self.tok_emb.attend(self.ln_f(x))  # tied head: (B, T, vocab_size)

    def loss(self, tokens: jax.Array, targets: jax.Array) -> jax.Array:
        """Mean cross-entropy of the next-token predictions; ``targets`` is (B, T)."""
        logits = self(tokens)  # bfloat16 logits go up to float32; float64 stays
        logits = logits.astype(jnp.promote_types(logits.dtype, jnp.float32))
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    def new_cache(self, batch: int):
        """An empty KV cache: (keys, values), each (n_layers, batch, heads, block_size, head_dim)."""
        c = self.cfg
        shape = (c.n_layers, batch, c.n_heads, c.block_size, c.head_dim)
        dtype = self.tok_emb.embedding[...].dtype  # the weights' dtype, as TorchGPT's
        return jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)

    def decode(self, tokens: jax.Array, cache, pos):
        """Logits (B, T, vocab) of ``tokens`` at positions ``pos...`` and the updated cache."""
        x = self._embed(tokens, pos)

        @nnx.scan(in_axes=(nnx.Carry, 0, 0, 0), out_axes=(nnx.Carry, 0, 0))
        def through_blocks(x, block, k, v):  # k, v: this layer's (B, H, S, hd)
            x, (k, v) = block(x, (k, v), pos)
            return x, k, v

        x, keys, values = through_blocks(x, self.blocks, *cache)
        return self._head(x), (keys, values)
