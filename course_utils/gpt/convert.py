"""Copy weights between ``TorchGPT`` and ``NNXGPT`` (:mod:`course_utils.gpt.model`), both ways, exactly.

==================  ==================================  =====================================
part                PyTorch (``state_dict`` name)       Flax NNX (``nnx.state`` path)
==================  ==================================  =====================================
token embedding     ``tok_emb.weight`` (V, d)           ``tok_emb.embedding`` (V, d)
output head         tied: the same ``tok_emb.weight``   tied: ``tok_emb.attend``
Linear (per layer)  ``blocks.i.fc1.weight`` (out, in)   ``blocks.fc1.kernel`` (L, in, out)
LayerNorm           ``weight``, ``bias``                ``scale``, ``bias``
==================  ==================================  =====================================

Two differences, then: a Linear weight is transposed, and PyTorch's
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

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils.gpt.model import NNXGPT, GPTConfig, TorchGPT

__all__ = [
    "gpt_nnx_tensors_to_torch",
    "gpt_nnx_to_torch",
    "gpt_torch_tensors_to_nnx",
    "gpt_torch_to_nnx",
    "make_gpt_pair",
]

LINEARS = (
    "attn.qkv",
    "attn.proj",
    "fc1",
    "fc2",
)  # weight (out, in) <-> kernel (in, out)
NORMS = ("ln1", "ln2")  # LayerNorm: weight <-> scale


def gpt_torch_tensors_to_nnx(tensors: Mapping[str, Any]) -> dict:
    """``TorchGPT`` tensors (``state_dict()``, or gradients by name) -> NNXGPT's nested dict.

    The result has the structure of ``nnx.to_pure_dict(nnx.state(model, nnx.Param))``,
    jax arrays, every block parameter stacked on a leading layer axis. A missing
    tensor raises ``KeyError`` with its PyTorch name.
    """
    t = {name: torch.as_tensor(v).detach().cpu().numpy() for name, v in tensors.items()}
    n_layers = len({name.split(".")[1] for name in t if name.startswith("blocks.")})

    def stack(name):  # block i's tensor as row i: (n_layers, ...)
        return jnp.asarray(np.stack([t[f"blocks.{i}.{name}"] for i in range(n_layers)]))

    def linear(name):  # weight (out, in) -> kernel (in, out), for every layer at once
        return {
            "kernel": stack(f"{name}.weight").transpose(0, 2, 1),
            "bias": stack(f"{name}.bias"),
        }

    def norm(name):  # a LayerNorm's weight is NNX's scale
        return {"scale": stack(f"{name}.weight"), "bias": stack(f"{name}.bias")}

    blocks = {
        "ln1": norm("ln1"),
        "ln2": norm("ln2"),
        "fc1": linear("fc1"),
        "fc2": linear("fc2"),
        "attn": {"qkv": linear("attn.qkv"), "proj": linear("attn.proj")},
    }
    return {
        "tok_emb": {"embedding": jnp.asarray(t["tok_emb.weight"])},
        "pos_emb": {"embedding": jnp.asarray(t["pos_emb.weight"])},
        "blocks": blocks,
        "ln_f": {
            "scale": jnp.asarray(t["ln_f.weight"]),
            "bias": jnp.asarray(t["ln_f.bias"]),
        },
    }


def gpt_nnx_tensors_to_torch(tree: Any) -> dict[str, torch.Tensor]:
    """The inverse: NNXGPT's parameter (or gradient) tree -> ``{torch name: tensor}``.

    ``tree`` may be an ``nnx.State`` or a plain nested dict; the result loads
    with ``TorchGPT.load_state_dict``.
    """
    if isinstance(tree, nnx.State):
        tree = nnx.to_pure_dict(tree)
    a = jax.tree.map(np.asarray, tree)  # nested dicts of NumPy arrays
    b = a["blocks"]
    parts = {
        "ln1": b["ln1"],
        "attn.qkv": b["attn"]["qkv"],
        "attn.proj": b["attn"]["proj"],
        "ln2": b["ln2"],
        "fc1": b["fc1"],
        "fc2": b["fc2"],
    }
    out = {
        "tok_emb.weight": a["tok_emb"]["embedding"],
        "pos_emb.weight": a["pos_emb"]["embedding"],
    }
    for i in range(b["ln1"]["scale"].shape[0]):  # unstack: layer i's row is block i
        for name, p in parts.items():
            weight = (
                p["kernel"][i].T if "kernel" in p else p["scale"][i]
            )  # (in, out) -> (out, in)
            out[f"blocks.{i}.{name}.weight"], out[f"blocks.{i}.{name}.bias"] = (
                weight,
                p["bias"][i],
            )
    out["ln_f.weight"], out["ln_f.bias"] = a["ln_f"]["scale"], a["ln_f"]["bias"]
    return {name: torch.tensor(v) for name, v in out.items()}


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
