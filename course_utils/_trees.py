"""Walk nested containers of jax arrays, torch tensors and numpy arrays without importing either framework."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Mapping
from typing import Any


def is_jax_array(x: Any) -> bool:
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


def is_torch_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _children(x: Any) -> list[tuple[str, Any]] | None:
    """Named children of a container, or None for a leaf."""
    if x is None or is_jax_array(x) or is_torch_tensor(x):
        return None  # None is a leaf, as without jax (to jax it is an empty pytree)
    if isinstance(x, Mapping):
        return [(f"[{k!r}]", v) for k, v in x.items()]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return [(f".{f}", getattr(x, f)) for f in x._fields]
    if isinstance(x, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(x)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [(f".{f.name}", getattr(x, f.name)) for f in dataclasses.fields(x)]
    jax = sys.modules.get("jax")
    if jax is not None:
        # Registered pytree nodes (flax.nnx.State and Variables, optax states, ...).
        pairs, _ = jax.tree_util.tree_flatten_with_path(x, is_leaf=is_torch_tensor)
        if len(pairs) == 1:
            # A leaf, or a one-value wrapper such as nnx.Param: transparent in paths.
            return None if pairs[0][1] is x else [("", pairs[0][1])]
        return [(jax.tree_util.keystr(p), v) for p, v in pairs]
    return None


def leaves_with_paths(tree: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(path, leaf)`` pairs in a deterministic order."""
    kids = _children(tree)
    if kids is None:
        yield prefix, tree
        return
    for name, child in kids:
        yield from leaves_with_paths(child, prefix + name)
