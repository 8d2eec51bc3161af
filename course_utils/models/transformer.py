"""A pre-LayerNorm transformer block (and a tiny encoder) in PyTorch and Flax NNX.

Both frameworks use their own built-in layers (``nn.MultiheadAttention`` /
``nnx.MultiHeadAttention``, ``nn.LayerNorm`` / ``nnx.LayerNorm``), so the
converters in :mod:`course_utils.convert.transformer` show the real layout
differences a port meets:

- ``nn.Linear.weight`` is ``(out, in)``; ``nnx.Linear.kernel`` is ``(in, out)``;
- PyTorch packs the query, key and value projections into one
  ``in_proj_weight`` of shape ``(3 * d_model, d_model)``; NNX keeps three
  ``LinearGeneral`` kernels of shape ``(d_model, heads, head_dim)`` and an
  output kernel of shape ``(heads, head_dim, d_model)``;
- ``nn.LayerNorm`` has ``weight``/``bias`` and ``eps=1e-5``; ``nnx.LayerNorm``
  has ``scale``/``bias`` and ``epsilon=1e-6`` unless told otherwise.

This module imports torch and flax at the top; ``import course_utils`` does not
import it. Every ``Torch*`` and ``NNX*`` block takes ``(batch, seq, d_model)`` input.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import torch
from flax import nnx
from torch import nn
from torch.nn import functional as F

__all__ = [
    "TORCH_LAYERNORM_EPS",
    "BlockConfig",
    "check_sizes",
    "NNXBlock",
    "NNXEncoder",
    "TorchBlock",
    "TorchEncoder",
]

TORCH_LAYERNORM_EPS = 1e-5  # nn.LayerNorm's default; nnx.LayerNorm's is 1e-6


def check_sizes(cfg, names: tuple[str, ...]) -> None:
    """Raise ValueError naming ``cfg``'s class unless each of ``names`` is a positive int,
    ``d_model`` divides by ``n_heads`` and ``dropout`` is in [0, 1). Both model configs
    (:class:`BlockConfig`, ``course_utils.gpt.GPTConfig``) check their sizes with it."""
    owner = type(cfg).__name__
    for name in names:
        value = getattr(cfg, name)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
    if cfg.d_model % cfg.n_heads:
        raise ValueError(
            f"{owner}: d_model={cfg.d_model} must be divisible by n_heads={cfg.n_heads}"
        )
    if not 0.0 <= cfg.dropout < 1.0:
        raise ValueError(f"{owner}: dropout must be in [0, 1), got {cfg.dropout!r}")


@dataclass(frozen=True)
class BlockConfig:
    """Sizes of a transformer block; the same config builds both frameworks' blocks."""

    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    dropout: float = 0.1

    def __post_init__(self) -> None:
        check_sizes(self, ("d_model", "n_heads", "d_ff"))

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


# ----------------------------------------------------------------- PyTorch


class TorchBlock(nn.Module):
    """Pre-LN block: x + Dropout(MHA(LN(x))), then x + Dropout(MLP(LN(x)))."""

    def __init__(self, cfg: BlockConfig = BlockConfig()):
        super().__init__()
        self.cfg = cfg
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = nn.MultiheadAttention(
            cfg.d_model, cfg.n_heads, dropout=cfg.dropout, batch_first=True
        )
        self.drop1 = nn.Dropout(cfg.dropout)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.fc2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.drop2 = nn.Dropout(cfg.dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        # x: (batch, seq, d_model); mask: (batch, seq) bool, True for real tokens
        h = self.ln1(x)
        pad = None if mask is None else ~mask
        a, _ = self.attn(h, h, h, key_padding_mask=pad, need_weights=False)
        x = x + self.drop1(a)
        h = self.ln2(x)
        return x + self.drop2(self.fc2(F.gelu(self.fc1(h))))


class TorchEncoder(nn.Module):
    """Token + position embedding, ``n_layers`` blocks, final LN, mean pool, linear head."""

    def __init__(
        self,
        cfg: BlockConfig = BlockConfig(),
        *,
        vocab: int = 100,
        max_len: int = 64,
        n_layers: int = 2,
        num_classes: int = 2,
    ):
        super().__init__()
        self.tok = nn.Embedding(vocab, cfg.d_model)
        self.pos = nn.Embedding(max_len, cfg.d_model)
        self.blocks = nn.ModuleList(TorchBlock(cfg) for _ in range(n_layers))
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, num_classes)

    def forward(
        self, tokens: torch.Tensor, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        # tokens: (batch, seq) int; mask: (batch, seq) bool, True for real tokens
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)  # (batch, seq, d_model)
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln(x)
        if mask is None:
            return self.head(x.mean(dim=1))  # (batch, num_classes)
        w = mask.to(x.dtype)[..., None]  # (batch, seq, 1): average real tokens only
        return self.head((x * w).sum(dim=1) / w.sum(dim=1))


# ------------------------------------------------------------------ Flax NNX


class NNXBlock(nnx.Module):
    """The same pre-LN block as ``TorchBlock``, with PyTorch's defaults made explicit."""

    def __init__(self, cfg: BlockConfig = BlockConfig(), *, rngs: nnx.Rngs):
        self.cfg = cfg
        eps = TORCH_LAYERNORM_EPS
        self.ln1 = nnx.LayerNorm(cfg.d_model, epsilon=eps, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(
            cfg.n_heads,
            cfg.d_model,
            dropout_rate=cfg.dropout,
            broadcast_dropout=False,  # PyTorch drops attention weights elementwise
            decode=False,
            rngs=rngs,
        )
        self.drop1 = nnx.Dropout(cfg.dropout, rngs=rngs)
        self.ln2 = nnx.LayerNorm(cfg.d_model, epsilon=eps, rngs=rngs)
        self.fc1 = nnx.Linear(cfg.d_model, cfg.d_ff, rngs=rngs)
        self.fc2 = nnx.Linear(cfg.d_ff, cfg.d_model, rngs=rngs)
        self.drop2 = nnx.Dropout(cfg.dropout, rngs=rngs)

    def __call__(self, x: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        # x: (batch, seq, d_model); mask: (batch, seq) bool, True for real tokens
        h = self.ln1(x)
        att_mask = (
            None if mask is None else mask[:, None, None, :]
        )  # (batch, 1, 1, keys)
        x = x + self.drop1(self.attn(h, mask=att_mask))
        h = self.ln2(x)
        # torch's F.gelu is the exact erf form; jax.nn.gelu defaults to tanh.
        return x + self.drop2(self.fc2(jax.nn.gelu(self.fc1(h), approximate=False)))


class NNXEncoder(nnx.Module):
    """The same encoder as ``TorchEncoder``."""

    def __init__(
        self,
        cfg: BlockConfig = BlockConfig(),
        *,
        vocab: int = 100,
        max_len: int = 64,
        n_layers: int = 2,
        num_classes: int = 2,
        rngs: nnx.Rngs,
    ):
        self.tok = nnx.Embed(vocab, cfg.d_model, rngs=rngs)
        self.pos = nnx.Embed(max_len, cfg.d_model, rngs=rngs)
        self.blocks = nnx.data([NNXBlock(cfg, rngs=rngs) for _ in range(n_layers)])
        self.ln = nnx.LayerNorm(cfg.d_model, epsilon=TORCH_LAYERNORM_EPS, rngs=rngs)
        self.head = nnx.Linear(cfg.d_model, num_classes, rngs=rngs)

    def __call__(self, tokens: jax.Array, mask: jax.Array | None = None) -> jax.Array:
        # tokens: (batch, seq) int; mask: (batch, seq) bool, True for real tokens
        x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x, mask)
        x = self.ln(x)
        if mask is None:
            return self.head(x.mean(axis=1))  # (batch, num_classes)
        w = mask.astype(x.dtype)[..., None]  # (batch, seq, 1): average real tokens only
        return self.head((x * w).sum(axis=1) / w.sum(axis=1))
