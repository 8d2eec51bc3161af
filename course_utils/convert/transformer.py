"""Copy weights between the PyTorch and Flax NNX transformer blocks of :mod:`course_utils.models.transformer`.

The layouts a port meets, each converted once here:

- ``nn.Linear.weight`` is ``(out, in)``; ``nnx.Linear.kernel`` is ``(in, out)``;
- PyTorch packs the query, key and value projections into one
  ``in_proj_weight`` of shape ``(3 * d_model, d_model)``; NNX keeps three
  ``LinearGeneral`` kernels of shape ``(d_model, heads, head_dim)`` and an
  output kernel of shape ``(heads, head_dim, d_model)``;
- ``nn.LayerNorm`` has ``weight``/``bias``; ``nnx.LayerNorm`` has ``scale``/``bias``;
- ``nn.Embedding.weight`` and ``nnx.Embed.embedding`` are both ``(vocab, d_model)``.

:func:`make_pair` builds both models with the same weights; :func:`grads_nnx_to_torch`
puts NNX gradients under PyTorch's names and layouts.
"""

from __future__ import annotations

import copy
from typing import Any

import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils.convert.cnn import cnn_nnx_to_torch
from course_utils.models.transformer import (
    BlockConfig,
    NNXBlock,
    NNXEncoder,
    TorchBlock,
    TorchEncoder,
)


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def _set_param(param: Any, value: np.ndarray, where: str) -> None:
    """Write ``value`` into an ``nnx.Param`` after checking the shape."""
    current = param[...]
    if tuple(current.shape) != tuple(value.shape):
        raise ValueError(
            f"{where}: shape {tuple(value.shape)} does not fit the target's "
            f"{tuple(current.shape)}; were both models built with the same sizes?"
        )
    param[...] = jnp.asarray(value, dtype=current.dtype)


def _copy_into(tensor: Any, value: np.ndarray, where: str) -> None:
    """Write ``value`` into a torch parameter in place after checking the shape."""
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
    torch.manual_seed(seed)
    if encoder:
        tm = TorchEncoder(cfg, **sizes)
        jm = NNXEncoder(cfg, **sizes, rngs=nnx.Rngs(seed))
        encoder_torch_to_nnx(tm, jm)
    else:
        if sizes:
            raise TypeError(f"make_pair: {sorted(sizes)} only apply with encoder=True")
        tm = TorchBlock(cfg)
        jm = NNXBlock(cfg, rngs=nnx.Rngs(seed))
        block_torch_to_nnx(tm, jm)
    tm.eval()
    jm.eval()
    return tm, jm


def grads_nnx_to_torch(
    nnx_model: Any, grads: Any, torch_model: Any
) -> dict[str, np.ndarray]:
    """Gradients of an NNX model (``nnx.grad``'s state) under PyTorch's names and layouts.

    The gradient state is merged back into a copy of the NNX model's structure
    and converted with the same converter as the weights (gradients have the
    layout of their parameters), into a copy of ``torch_model``. Compare the
    result with ``{name: p.grad for name, p in torch_model.named_parameters()}``.
    """
    converters = {
        "NNXBlock": block_nnx_to_torch,
        "NNXEncoder": encoder_nnx_to_torch,
        "NNXCNN": cnn_nnx_to_torch,
    }
    kind = type(nnx_model).__name__
    if kind not in converters:
        raise TypeError(
            f"grads_nnx_to_torch: no converter for {kind}; expected one of {sorted(converters)} or NNXCNN"
        )
    graphdef, _, rest = nnx.split(nnx_model, nnx.Param, ...)
    as_module = nnx.merge(graphdef, grads, rest)
    target = copy.deepcopy(torch_model)
    converters[kind](as_module, target)
    return {
        name: p.detach().cpu().numpy().copy() for name, p in target.named_parameters()
    }
