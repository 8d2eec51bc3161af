"""Copy weights between ``TorchGPT`` and ``NNXGPT`` (:mod:`course_utils.gpt.model`), both ways, exactly.

==================  ==================================  =====================================
part                PyTorch (``state_dict`` name)       Flax NNX (``nnx.state`` path)
==================  ==================================  =====================================
token embedding     ``tok_emb.weight`` (V, d)           ``tok_emb.embedding`` (V, d)
output head         tied: the same ``tok_emb.weight``   tied: ``tok_emb.attend``
Linear (per layer)  ``blocks.i.fc1.weight`` (out, in)   ``blocks.fc1.kernel`` (L, in, out)
LayerNorm           ``weight``, ``bias``                ``scale``, ``bias``
==================  ==================================  =====================================

Two differences, then: a Linear weight is transposed (via
:func:`course_utils.convert.layouts.linear_torch_to_jax`), and PyTorch's
``ModuleList`` has one entry per layer (``blocks.0.…``, ``blocks.1.…``) where
the scanned NNX model holds one stacked array per parameter, layer first. The
head has no weights of its own on either side, so there is nothing to convert.

The ``*_tensors_*`` functions work on plain mappings, so they convert gradients
too (a gradient has its parameter's layout): ``gpt_nnx_tensors_to_torch(grads)``
puts ``nnx.grad``'s state under PyTorch's names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from flax import nnx

from course_utils.convert.layouts import (
    _np,
    _unwrap,
    linear_jax_to_torch,
    linear_torch_to_jax,
)
from course_utils.gpt.model import NNXGPT, GPTConfig, TorchGPT

__all__ = [
    "gpt_nnx_tensors_to_torch",
    "gpt_nnx_to_torch",
    "gpt_torch_tensors_to_nnx",
    "gpt_torch_to_nnx",
    "make_gpt_pair",
]

BLOCK_PARTS = ("ln1", "attn.qkv", "attn.proj", "ln2", "fc1", "fc2")  # torch's order
LINEARS = ("attn.qkv", "attn.proj", "fc1", "fc2")
NORMS = ("ln1", "ln2")


def _n_layers(tensors: Mapping[str, Any]) -> int:
    ids = {int(k.split(".")[1]) for k in tensors if k.startswith("blocks.")}
    if ids != set(range(len(ids))):
        raise KeyError(f"block indices {sorted(ids)} are not 0..n-1")
    return len(ids)


def _get(tree: Any, path: str) -> np.ndarray:
    node = tree
    for part in path.split("."):
        try:
            node = node[part]
        except (KeyError, TypeError):
            raise KeyError(
                f"the NNX tree has no {path!r}; expected NNXGPT's structure"
            ) from None
    return _np(_unwrap(node), path)


def _put(tree: dict, path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def gpt_torch_tensors_to_nnx(tensors: Mapping[str, Any]) -> dict:
    """``TorchGPT`` tensors (``state_dict()``, or gradients by name) -> NNXGPT's nested dict.

    The result has the structure of ``nnx.to_pure_dict(nnx.state(model, nnx.Param))``,
    jax arrays, every block parameter stacked on a leading layer axis.
    """
    import jax.numpy as jnp

    try:
        L = _n_layers(tensors)
        out: dict = {}
        for name in ("tok_emb", "pos_emb"):  # (rows, d_model) on both sides
            _put(
                out,
                f"{name}.embedding",
                jnp.asarray(_np(tensors[f"{name}.weight"], name)),
            )
        _put(out, "ln_f.scale", jnp.asarray(_np(tensors["ln_f.weight"], "ln_f")))
        _put(out, "ln_f.bias", jnp.asarray(_np(tensors["ln_f.bias"], "ln_f")))
        for lin in LINEARS:
            pairs = [
                linear_torch_to_jax(
                    tensors[f"blocks.{i}.{lin}.weight"],
                    tensors[f"blocks.{i}.{lin}.bias"],
                )
                for i in range(L)
            ]  # each (kernel (in, out), bias (out,))
            _put(
                out, f"blocks.{lin}.kernel", jnp.stack([k for k, _ in pairs])
            )  # (L, in, out)
            _put(
                out, f"blocks.{lin}.bias", jnp.stack([b for _, b in pairs])
            )  # (L, out)
        for ln in NORMS:
            for src, dst in (("weight", "scale"), ("bias", "bias")):
                rows = [_np(tensors[f"blocks.{i}.{ln}.{src}"], ln) for i in range(L)]
                _put(out, f"blocks.{ln}.{dst}", jnp.asarray(np.stack(rows)))
    except KeyError as err:
        raise KeyError(
            f"gpt_torch_tensors_to_nnx: missing {err}; expected TorchGPT's names"
        ) from None
    return out


def gpt_nnx_tensors_to_torch(tree: Any) -> dict[str, torch.Tensor]:
    """The inverse: NNXGPT's parameter (or gradient) tree -> ``{torch name: tensor}``.

    ``tree`` may be an ``nnx.State`` or a plain nested dict; the result loads
    with ``TorchGPT.load_state_dict``.
    """
    L = _get(tree, "blocks.ln1.scale").shape[0]
    stacked = {  # each block part: its two stacked arrays, (L, ...)
        part: tuple(_get(tree, f"blocks.{part}.{leaf}") for leaf in _nnx_leaves(part))
        for part in BLOCK_PARTS
    }
    out: dict[str, torch.Tensor] = {}  # in TorchGPT.state_dict()'s order
    for name in ("tok_emb", "pos_emb"):
        out[f"{name}.weight"] = torch.from_numpy(_get(tree, f"{name}.embedding"))
    for i in range(L):
        for part, (first, second) in stacked.items():
            if part in NORMS:
                w, b = (
                    torch.from_numpy(first[i].copy()),
                    torch.from_numpy(second[i].copy()),
                )
            else:
                w, b = linear_jax_to_torch(
                    first[i], second[i]
                )  # (in, out) -> (out, in)
            out[f"blocks.{i}.{part}.weight"], out[f"blocks.{i}.{part}.bias"] = w, b
    out["ln_f.weight"] = torch.from_numpy(_get(tree, "ln_f.scale"))
    out["ln_f.bias"] = torch.from_numpy(_get(tree, "ln_f.bias"))
    return out


def _nnx_leaves(part: str) -> tuple[str, str]:
    return ("scale", "bias") if part in NORMS else ("kernel", "bias")


def _check_pair(torch_model: Any, nnx_model: Any, fn: str) -> None:
    if not isinstance(torch_model, TorchGPT) or not isinstance(nnx_model, NNXGPT):
        raise TypeError(
            f"{fn}: expected a TorchGPT and an NNXGPT, got "
            f"{type(torch_model).__name__} and {type(nnx_model).__name__}"
        )
    if torch_model.cfg != nnx_model.cfg:
        raise ValueError(
            f"{fn}: the models have different sizes: {torch_model.cfg} vs {nnx_model.cfg}"
        )


def gpt_torch_to_nnx(torch_model: TorchGPT, nnx_model: NNXGPT) -> NNXGPT:
    """Copy a ``TorchGPT``'s weights into an ``NNXGPT`` of the same config; return it."""
    _check_pair(torch_model, nnx_model, "gpt_torch_to_nnx")
    state = nnx.state(nnx_model, nnx.Param)
    nnx.replace_by_pure_dict(state, gpt_torch_tensors_to_nnx(torch_model.state_dict()))
    nnx.update(nnx_model, state)
    return nnx_model


def gpt_nnx_to_torch(nnx_model: NNXGPT, torch_model: TorchGPT) -> TorchGPT:
    """Copy an ``NNXGPT``'s weights into a ``TorchGPT`` of the same config; return it."""
    _check_pair(torch_model, nnx_model, "gpt_nnx_to_torch")
    tensors = gpt_nnx_tensors_to_torch(nnx.state(nnx_model, nnx.Param))
    torch_model.load_state_dict(tensors, strict=True)
    return torch_model


def make_gpt_pair(cfg: GPTConfig | None = None, *, seed: int = 0):
    """A ``TorchGPT`` and an ``NNXGPT`` with identical weights (PyTorch's init, copied over)."""
    cfg = GPTConfig() if cfg is None else cfg
    torch.manual_seed(seed)
    tm = TorchGPT(cfg)
    jm = NNXGPT(cfg, rngs=nnx.Rngs(seed))
    return tm, gpt_torch_to_nnx(tm, jm)
