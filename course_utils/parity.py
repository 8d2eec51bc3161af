"""Prove that two computations agree: ``to_numpy`` and ``assert_close`` over mixed pytrees."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from course_utils._trees import (
    _children,
    is_jax_array,
    is_torch_tensor,
    leaves_with_paths,
)


def leaf_to_numpy(x: Any) -> Any:
    """One leaf as a numpy array (torch bfloat16 becomes float32); other values pass."""
    if is_torch_tensor(x):
        import torch

        t = x.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().numpy()
    if is_jax_array(x):
        import jax
        import jax.numpy as jnp

        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            x = jax.random.key_data(x)
        if x.dtype == jnp.bfloat16:
            x = x.astype(jnp.float32)
        return np.asarray(x)
    if isinstance(x, np.ndarray | np.generic):
        return np.asarray(x)
    return x


def _rebuild(tree: Any) -> Any:
    if is_jax_array(tree) or is_torch_tensor(tree):
        return leaf_to_numpy(tree)
    if isinstance(tree, Mapping):
        return {k: _rebuild(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_rebuild(v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(v) for v in tree)
    kids = _children(tree)
    if kids is None:
        return leaf_to_numpy(tree)
    if len(kids) == 1:  # a wrapper such as nnx.Param: keep just its value
        return _rebuild(kids[0][1])
    return {path: _rebuild(v) for path, v in kids}


def to_numpy(tree: Any) -> Any:
    """Convert every jax/torch leaf of a nested dict/list/tuple to numpy.

    Other registered pytrees (``nnx.State``, optax states) are flattened to a
    dict keyed by their path.
    """
    return _rebuild(tree)


def _flat(tree: Any) -> dict[str, Any]:
    return {path: leaf_to_numpy(leaf) for path, leaf in leaves_with_paths(tree)}


_NUMBERS = (bool, int, float, complex)


def _comparable(path: str, x: Any) -> Any:
    """``x`` as a numeric (or string) numpy array, or None.

    Anything else (an object whose ``==`` always says True, a subclass of int
    or str with its own comparisons, an ``__array__`` wrapper, an object-dtype
    array) cannot be trusted to compare honestly and raises AssertionError.
    """
    if x is None:
        return x
    if type(x) in (str, bytes):
        return np.asarray(x)
    if isinstance(x, np.ndarray | np.generic) or type(x) in _NUMBERS:
        arr = np.asarray(x)
        if arr.dtype.kind in "biufcUS":
            return arr
        raise AssertionError(
            f"{path}: holds an array of dtype {arr.dtype}; only numbers, booleans and "
            "strings are compared (an object array can hide values that lie about equality)"
        )
    raise AssertionError(
        f"{path}: got a {type(x).__module__}.{type(x).__qualname__}, which is not compared; "
        "return numbers, arrays or tensors (a subclass or a wrapper can lie about equality)"
    )


def _compare_leaf(path: str, a: Any, b: Any, rtol: float, atol: float) -> str | None:
    if type(a) is int and type(b) is int:  # exact, even past int64
        return None if a == b else f"{path}: {a!r} != {b!r}"
    a, b = _comparable(path, a), _comparable(path, b)
    if a is None or b is None:
        return None if a is b else f"{path}: {a!r} != {b!r}"
    if a.shape != b.shape:
        return f"{path}: shapes differ, {a.shape} vs {b.shape}"
    if a.size == 0:
        return None
    if (a.dtype.kind in "US") != (b.dtype.kind in "US"):
        return f"{path}: dtypes differ, {a.dtype} vs {b.dtype}"
    if (
        a.dtype.kind in "US"
        or a.dtype == bool
        or b.dtype == bool
        or a.dtype.kind in "iu"
    ):
        bad = a != b
        if bad.any() and a.ndim == 0:  # one value against another
            return f"{path}: {a.item()!r} != {b.item()!r}"
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return f"{path}: {int(bad.sum())} of {a.size} elements differ (first at {idx}: {a[idx]} vs {b[idx]})"
        return None
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    nan_mismatch = np.isnan(a64) != np.isnan(b64)
    with np.errstate(invalid="ignore"):  # inf - inf is NaN here, and handled below
        diff = np.abs(a64 - b64)
    diff = np.where(np.isnan(a64) & np.isnan(b64), 0.0, diff)
    both_inf = np.isinf(a64) & np.isinf(b64) & (a64 == b64)
    diff = np.where(both_inf, 0.0, diff)
    bad = (diff > atol + rtol * np.abs(b64)) | nan_mismatch | np.isnan(diff)
    if not bad.any():
        return None

    def at(idx: tuple[int, ...]) -> str:
        where = f" at index {tuple(int(i) for i in idx)}" if a.ndim else ""
        return f"{where} ({a64[idx]:.6g} vs {b64[idx]:.6g})"

    found = []
    if nan_mismatch.any():  # no error to measure: say where NaN meets a number
        first = tuple(int(i) for i in np.argwhere(nan_mismatch)[0])
        count = f"{int(nan_mismatch.sum())} " if a.ndim else ""
        found.append(
            f"{count}NaN on one side only{', first' if a.ndim else ''}{at(first)}"
        )
    numbers = bad & ~nan_mismatch
    if numbers.any():
        diff = np.where(numbers, diff, 0.0)
        rel = diff / np.maximum(np.abs(b64), np.finfo(np.float64).tiny)
        worst = np.unravel_index(
            int(np.argmax(np.where(numbers, diff, -1.0))), diff.shape
        )
        found.append(
            f"max abs err {np.max(diff):.3g}, max rel err {np.max(rel):.3g}{at(worst)}"
        )
    return (
        f"{path}: {int(bad.sum())} of {a.size} elements differ; "
        + "; ".join(found)
        + f"; rtol={rtol:g}, atol={atol:g}"
    )


def assert_close(
    a: Any,
    b: Any,
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    name: str = "value",
    sides: tuple[str, str] = ("first", "second"),
) -> None:
    """Assert that two pytrees have the same structure and leaves close within tolerance.

    Leaves may be jax arrays, torch tensors, numpy arrays or Python numbers, in
    any mix (strings and None compare exactly). A leaf passes when
    ``|a - b| <= atol + rtol * |b|`` elementwise. Any other leaf (an object,
    a subclass of int or str, an object-dtype array) raises AssertionError
    before anything is compared: its ``==`` could say True to anything.
    On failure the message names each offending leaf (``name['fc1']['weight']``)
    with its max absolute and relative error (or where NaN meets a number); ``sides``
    names ``a`` and ``b`` where the structures differ.
    """
    fa, fb = _flat(a), _flat(b)
    if list(fa) != list(fb):
        only_a = [k for k in fa if k not in fb]
        only_b = [k for k in fb if k not in fa]
        if not only_a and not only_b:
            raise AssertionError(f"{name}: same leaves in a different order")
        only = [
            f"only in {side}: {keys[:5]}"
            for side, keys in zip(sides, (only_a, only_b), strict=True)
            if keys
        ]
        raise AssertionError(f"{name}: structures differ; {', '.join(only)}")
    problems = [
        msg
        for path in fa
        if (msg := _compare_leaf(name + path, fa[path], fb[path], rtol, atol))
    ]
    if problems:
        shown = "\n  ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise AssertionError(f"{len(problems)} leaf/leaves not close:\n  {shown}{more}")


def max_abs_diff(a: Any, b: Any) -> float:
    """Largest absolute difference over all leaves (structures must match)."""
    fa, fb = _flat(a), _flat(b)
    if list(fa) != list(fb):
        raise ValueError("structures differ; compare with assert_close for details")
    worst = 0.0
    for k in fa:
        x = np.asarray(_comparable(k, fa[k]), dtype=np.float64)
        y = np.asarray(_comparable(k, fb[k]), dtype=np.float64)
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y))))
    return worst
