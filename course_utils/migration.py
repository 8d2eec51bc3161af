"""A pre-LayerNorm transformer block (and a tiny encoder) in PyTorch and Flax NNX, with converters.

Both frameworks use their own built-in layers (``nn.MultiheadAttention`` /
``nnx.MultiHeadAttention``, ``nn.LayerNorm`` / ``nnx.LayerNorm``), so the
converters show the real layout differences a port meets:

- ``nn.Linear.weight`` is ``(out, in)``; ``nnx.Linear.kernel`` is ``(in, out)``;
- PyTorch packs the query, key and value projections into one
  ``in_proj_weight`` of shape ``(3 * d_model, d_model)``; NNX keeps three
  ``LinearGeneral`` kernels of shape ``(d_model, heads, head_dim)`` and an
  output kernel of shape ``(heads, head_dim, d_model)``;
- ``nn.LayerNorm`` has ``weight``/``bias`` and ``eps=1e-5``; ``nnx.LayerNorm``
  has ``scale``/``bias`` and ``epsilon=1e-6`` unless told otherwise.

Classes are built on first use, so importing this module imports neither jax
nor torch. Every ``*_torch`` class takes ``(batch, seq, d_model)`` input, as
does every ``NNX*`` class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

TORCH_LAYERNORM_EPS = 1e-5  # nn.LayerNorm's default; nnx.LayerNorm's is 1e-6


@dataclass(frozen=True)
class BlockConfig:
    """Sizes of a transformer block; the same config builds both frameworks' blocks."""

    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 64
    dropout: float = 0.1

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "d_ff"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"BlockConfig: {name} must be a positive int, got {value!r}"
                )
        if self.d_model % self.n_heads:
            raise ValueError(
                f"BlockConfig: d_model={self.d_model} must be divisible by n_heads={self.n_heads}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(
                f"BlockConfig: dropout must be in [0, 1), got {self.dropout!r}"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


# ----------------------------------------------------------------- PyTorch


_torch_classes: dict[str, type] = {}


def _torch_cls(name: str) -> type:
    if not _torch_classes:
        import torch
        from torch import nn
        from torch.nn import functional as F

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
                w = mask.to(x.dtype)[
                    ..., None
                ]  # (batch, seq, 1): average real tokens only
                return self.head((x * w).sum(dim=1) / w.sum(dim=1))

        _torch_classes.update(TorchBlock=TorchBlock, TorchEncoder=TorchEncoder)
    return _torch_classes[name]


# ------------------------------------------------------------------ Flax NNX


_nnx_classes: dict[str, type] = {}


def _nnx_cls(name: str) -> type:
    if not _nnx_classes:
        import jax
        import jax.numpy as jnp
        from flax import nnx

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

            def __call__(
                self, x: jax.Array, mask: jax.Array | None = None
            ) -> jax.Array:
                # x: (batch, seq, d_model); mask: (batch, seq) bool, True for real tokens
                h = self.ln1(x)
                att_mask = (
                    None if mask is None else mask[:, None, None, :]
                )  # (batch, 1, 1, keys)
                x = x + self.drop1(self.attn(h, mask=att_mask))
                h = self.ln2(x)
                # torch's F.gelu is the exact erf form; jax.nn.gelu defaults to tanh.
                return x + self.drop2(
                    self.fc2(jax.nn.gelu(self.fc1(h), approximate=False))
                )

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
                self.blocks = nnx.data(
                    [NNXBlock(cfg, rngs=rngs) for _ in range(n_layers)]
                )
                self.ln = nnx.LayerNorm(
                    cfg.d_model, epsilon=TORCH_LAYERNORM_EPS, rngs=rngs
                )
                self.head = nnx.Linear(cfg.d_model, num_classes, rngs=rngs)

            def __call__(
                self, tokens: jax.Array, mask: jax.Array | None = None
            ) -> jax.Array:
                # tokens: (batch, seq) int; mask: (batch, seq) bool, True for real tokens
                x = self.tok(tokens) + self.pos(jnp.arange(tokens.shape[1]))
                for block in self.blocks:
                    x = block(x, mask)
                x = self.ln(x)
                if mask is None:
                    return self.head(x.mean(axis=1))  # (batch, num_classes)
                w = mask.astype(x.dtype)[
                    ..., None
                ]  # (batch, seq, 1): average real tokens only
                return self.head((x * w).sum(axis=1) / w.sum(axis=1))

        _nnx_classes.update(NNXBlock=NNXBlock, NNXEncoder=NNXEncoder)
    return _nnx_classes[name]


def __getattr__(name: str) -> Any:
    if name in ("TorchBlock", "TorchEncoder"):
        return _torch_cls(name)
    if name in ("NNXBlock", "NNXEncoder"):
        return _nnx_cls(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------- converters


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def _set_param(param: Any, value: np.ndarray, where: str) -> None:
    """Write ``value`` into an ``nnx.Param`` after checking the shape."""
    import jax.numpy as jnp

    current = param[...]
    if tuple(current.shape) != tuple(value.shape):
        raise ValueError(
            f"{where}: shape {tuple(value.shape)} does not fit the target's "
            f"{tuple(current.shape)}; were both models built with the same sizes?"
        )
    param[...] = jnp.asarray(value, dtype=current.dtype)


def _copy_into(tensor: Any, value: np.ndarray, where: str) -> None:
    """Write ``value`` into a torch parameter in place after checking the shape."""
    import torch

    if tuple(tensor.shape) != tuple(value.shape):
        raise ValueError(
            f"{where}: shape {tuple(value.shape)} does not fit the target's "
            f"{tuple(tensor.shape)}; were both models built with the same sizes?"
        )
    with torch.no_grad():
        tensor.copy_(torch.tensor(np.array(value), dtype=tensor.dtype))


def _linear_to_nnx(src: Any, dst: Any, where: str) -> None:
    _set_param(
        dst.kernel, _np(src.weight).T, f"{where}.weight"
    )  # (out, in) -> (in, out)
    _set_param(dst.bias, _np(src.bias), f"{where}.bias")


def _linear_to_torch(src: Any, dst: Any, where: str) -> None:
    _copy_into(dst.weight, np.asarray(src.kernel[...]).T, f"{where}.kernel")
    _copy_into(dst.bias, np.asarray(src.bias[...]), f"{where}.bias")


def _ln_to_nnx(src: Any, dst: Any, where: str) -> None:
    _set_param(dst.scale, _np(src.weight), f"{where}.weight")
    _set_param(dst.bias, _np(src.bias), f"{where}.bias")


def _ln_to_torch(src: Any, dst: Any, where: str) -> None:
    _copy_into(dst.weight, np.asarray(src.scale[...]), f"{where}.scale")
    _copy_into(dst.bias, np.asarray(src.bias[...]), f"{where}.bias")


def _attention_to_nnx(src: Any, dst: Any, heads: int, where: str) -> None:
    d = src.embed_dim
    hd = d // heads
    w_q, w_k, w_v = np.split(_np(src.in_proj_weight), 3)  # each (d, d) = (out, in)
    b_q, b_k, b_v = np.split(_np(src.in_proj_bias), 3)
    for w, b, lin in (
        (w_q, b_q, dst.query),
        (w_k, b_k, dst.key),
        (w_v, b_v, dst.value),
    ):
        _set_param(
            lin.kernel, w.T.reshape(d, heads, hd), f"{where}.in_proj_weight"
        )  # (in, heads, head_dim)
        _set_param(lin.bias, b.reshape(heads, hd), f"{where}.in_proj_bias")
    w_o = _np(src.out_proj.weight)  # (out, in) with in = heads * head_dim
    _set_param(dst.out.kernel, w_o.T.reshape(heads, hd, d), f"{where}.out_proj.weight")
    _set_param(dst.out.bias, _np(src.out_proj.bias), f"{where}.out_proj.bias")


def _attention_to_torch(src: Any, dst: Any, where: str) -> None:
    d = dst.embed_dim
    ws = [
        np.asarray(lin.kernel[...]).reshape(d, d).T
        for lin in (src.query, src.key, src.value)
    ]
    bs = [
        np.asarray(lin.bias[...]).reshape(d) for lin in (src.query, src.key, src.value)
    ]
    _copy_into(
        dst.in_proj_weight, np.concatenate(ws), f"{where}.query/key/value.kernel"
    )
    _copy_into(dst.in_proj_bias, np.concatenate(bs), f"{where}.query/key/value.bias")
    _copy_into(
        dst.out_proj.weight,
        np.asarray(src.out.kernel[...]).reshape(d, d).T,
        f"{where}.out.kernel",
    )
    _copy_into(dst.out_proj.bias, np.asarray(src.out.bias[...]), f"{where}.out.bias")


def _check_block_pair(torch_block: Any, nnx_block: Any, fn: str) -> None:
    for role, obj, want in (
        ("torch_block", torch_block, "TorchBlock"),
        ("nnx_block", nnx_block, "NNXBlock"),
    ):
        if type(obj).__name__ != want:
            raise TypeError(f"{fn}: {role} must be a {want}, got {type(obj).__name__}")
    if torch_block.cfg != nnx_block.cfg:
        raise ValueError(
            f"{fn}: the blocks have different sizes: {torch_block.cfg} vs {nnx_block.cfg}"
        )


def block_torch_to_nnx(torch_block: Any, nnx_block: Any) -> Any:
    """Copy a ``TorchBlock``'s weights into an ``NNXBlock`` of the same config; return it."""
    _check_block_pair(torch_block, nnx_block, "block_torch_to_nnx")
    heads = torch_block.cfg.n_heads
    _ln_to_nnx(torch_block.ln1, nnx_block.ln1, "ln1")
    _attention_to_nnx(torch_block.attn, nnx_block.attn, heads, "attn")
    _ln_to_nnx(torch_block.ln2, nnx_block.ln2, "ln2")
    _linear_to_nnx(torch_block.fc1, nnx_block.fc1, "fc1")
    _linear_to_nnx(torch_block.fc2, nnx_block.fc2, "fc2")
    return nnx_block


def block_nnx_to_torch(nnx_block: Any, torch_block: Any) -> Any:
    """Copy an ``NNXBlock``'s weights into a ``TorchBlock`` of the same config; return it."""
    _check_block_pair(torch_block, nnx_block, "block_nnx_to_torch")
    _ln_to_torch(nnx_block.ln1, torch_block.ln1, "ln1")
    _attention_to_torch(nnx_block.attn, torch_block.attn, "attn")
    _ln_to_torch(nnx_block.ln2, torch_block.ln2, "ln2")
    _linear_to_torch(nnx_block.fc1, torch_block.fc1, "fc1")
    _linear_to_torch(nnx_block.fc2, torch_block.fc2, "fc2")
    return torch_block


def _check_encoders(torch_enc: Any, nnx_enc: Any, fn: str) -> None:
    if len(torch_enc.blocks) != len(nnx_enc.blocks):
        raise ValueError(
            f"{fn}: {len(torch_enc.blocks)} torch blocks vs {len(nnx_enc.blocks)} NNX blocks"
        )


def encoder_torch_to_nnx(torch_enc: Any, nnx_enc: Any) -> Any:
    """Copy a ``TorchEncoder``'s weights into an ``NNXEncoder`` of the same sizes; return it."""
    _check_encoders(torch_enc, nnx_enc, "encoder_torch_to_nnx")
    # nn.Embedding.weight and nnx.Embed.embedding are both (vocab, d_model): no transpose.
    _set_param(nnx_enc.tok.embedding, _np(torch_enc.tok.weight), "tok.weight")
    _set_param(nnx_enc.pos.embedding, _np(torch_enc.pos.weight), "pos.weight")
    for tb, jb in zip(torch_enc.blocks, nnx_enc.blocks, strict=True):
        block_torch_to_nnx(tb, jb)
    _ln_to_nnx(torch_enc.ln, nnx_enc.ln, "ln")
    _linear_to_nnx(torch_enc.head, nnx_enc.head, "head")
    return nnx_enc


def encoder_nnx_to_torch(nnx_enc: Any, torch_enc: Any) -> Any:
    """Copy an ``NNXEncoder``'s weights into a ``TorchEncoder`` of the same sizes; return it."""
    _check_encoders(torch_enc, nnx_enc, "encoder_nnx_to_torch")
    _copy_into(
        torch_enc.tok.weight, np.asarray(nnx_enc.tok.embedding[...]), "tok.embedding"
    )
    _copy_into(
        torch_enc.pos.weight, np.asarray(nnx_enc.pos.embedding[...]), "pos.embedding"
    )
    for tb, jb in zip(torch_enc.blocks, nnx_enc.blocks, strict=True):
        block_nnx_to_torch(jb, tb)
    _ln_to_torch(nnx_enc.ln, torch_enc.ln, "ln")
    _linear_to_torch(nnx_enc.head, torch_enc.head, "head")
    return torch_enc


def make_pair(
    cfg: BlockConfig = BlockConfig(),
    *,
    seed: int = 0,
    encoder: bool = False,
    **sizes: Any,
):
    """A PyTorch model and an NNX model with identical weights (PyTorch's init, copied over).

    ``encoder=True`` builds ``TorchEncoder``/``NNXEncoder`` (``sizes`` go to both),
    otherwise ``TorchBlock``/``NNXBlock``. Both come back in eval mode.
    """
    import torch
    from flax import nnx

    torch.manual_seed(seed)
    if encoder:
        tm = _torch_cls("TorchEncoder")(cfg, **sizes)
        jm = _nnx_cls("NNXEncoder")(cfg, **sizes, rngs=nnx.Rngs(seed))
        encoder_torch_to_nnx(tm, jm)
    else:
        if sizes:
            raise TypeError(f"make_pair: {sorted(sizes)} only apply with encoder=True")
        tm = _torch_cls("TorchBlock")(cfg)
        jm = _nnx_cls("NNXBlock")(cfg, rngs=nnx.Rngs(seed))
        block_torch_to_nnx(tm, jm)
    tm.eval()
    jm.eval()
    return tm, jm


def nnx_grads_to_torch(
    nnx_model: Any, grads: Any, torch_model: Any
) -> dict[str, np.ndarray]:
    """Gradients of an NNX model (``nnx.grad``'s state) under PyTorch's names and layouts.

    The gradient state is merged back into a copy of the NNX model's structure
    and converted with the same converter as the weights (gradients have the
    layout of their parameters), into a copy of ``torch_model``. Compare the
    result with ``{name: p.grad for name, p in torch_model.named_parameters()}``.
    """
    import copy

    from flax import nnx

    converters = {
        "NNXBlock": block_nnx_to_torch,
        "NNXEncoder": encoder_nnx_to_torch,
    }
    kind = type(nnx_model).__name__
    if kind == "NNXCNN":
        from course_utils.convert import nnx_cnn_to_torch

        converters[kind] = nnx_cnn_to_torch
    if kind not in converters:
        raise TypeError(
            f"nnx_grads_to_torch: no converter for {kind}; expected one of {sorted(converters)} or NNXCNN"
        )
    graphdef, _, rest = nnx.split(nnx_model, nnx.Param, ...)
    as_module = nnx.merge(graphdef, grads, rest)
    target = copy.deepcopy(torch_model)
    converters[kind](as_module, target)
    return {
        name: p.detach().cpu().numpy().copy() for name, p in target.named_parameters()
    }
