"""A two-layer ReLU MLP in plain NumPy with hand-written backprop (lesson 01's starting point).

Parameters are a dict ``{"w1", "b1", "w2", "b2"}`` with weights laid out
``(in, out)``, so ``X @ w1`` works for a batch ``X`` of shape ``(batch, in)``.
The loss is half the squared error summed over outputs and averaged over the
batch: ``0.5 * mean_i ||f(x_i) - y_i||^2``. Every function here is pure: it
reads its arguments and returns new arrays. Dicts come with their keys sorted,
the order in which JAX flattens a dict, so they compare leaf by leaf with the
pytrees the JAX versions return. The lessons build the imperative
(mutating) class and the framework versions on top of these, and the exercises
use them as a float64 oracle.
"""

from __future__ import annotations

import numpy as np

KEYS = ("b1", "b2", "w1", "w2")  # sorted, the order JAX flattens a dict in


def _positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def init_params(
    d_in: int, d_hidden: int, d_out: int, *, seed: int, dtype=np.float32
) -> dict[str, np.ndarray]:
    """Weights ``N(0, 1/fan_in)``, biases zero, drawn from ``np.random.default_rng(seed)``."""
    d_in = _positive_int("d_in", d_in)
    d_hidden = _positive_int("d_hidden", d_hidden)
    d_out = _positive_int("d_out", d_out)
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)
    w2 = rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)
    params = {"w1": w1, "b1": np.zeros(d_hidden), "w2": w2, "b2": np.zeros(d_out)}
    return {k: params[k].astype(dtype) for k in KEYS}


def toy_regression(
    n: int, d_in: int = 4, d_out: int = 1, *, seed: int, dtype=np.float32
) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``(n, d_in)`` from N(0, 1) and targets ``(n, d_out)`` from a fixed nonlinear rule."""
    n = _positive_int("n", n)
    d_in = _positive_int("d_in", d_in)
    d_out = _positive_int("d_out", d_out)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d_in))
    A = rng.standard_normal((d_in, d_out))
    y = np.tanh(X @ A) + 0.1 * rng.standard_normal((n, d_out))
    return X.astype(dtype), y.astype(dtype)


def _check(params: dict, X: np.ndarray) -> None:
    missing = [k for k in KEYS if k not in params]
    if missing:
        raise KeyError(f"params is missing {missing}; expected the keys {list(KEYS)}")
    if np.ndim(X) != 2 or np.shape(X)[1] != np.shape(params["w1"])[0]:
        raise ValueError(
            f"X must have shape (batch, {np.shape(params['w1'])[0]}), got {np.shape(X)}"
        )


def forward(params: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """``relu(X @ w1 + b1) @ w2 + b2``, shape ``(batch, d_out)``."""
    _check(params, X)
    hidden = np.maximum(X @ params["w1"] + params["b1"], 0)
    return hidden @ params["w2"] + params["b2"]


def loss(params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray) -> float:
    """``0.5 * mean over the batch of the squared error summed over outputs``."""
    err = forward(params, X) - y
    return float(0.5 * np.mean(np.sum(err**2, axis=1)))


def grads(
    params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray
) -> dict[str, np.ndarray]:
    """Gradient of :func:`loss` w.r.t. every parameter, by hand-written backprop."""
    _check(params, X)
    n = X.shape[0]
    z1 = X @ params["w1"] + params["b1"]  # (batch, d_hidden)
    a1 = np.maximum(z1, 0)
    dz2 = (a1 @ params["w2"] + params["b2"] - y) / n  # (batch, d_out)
    dz1 = (dz2 @ params["w2"].T) * (z1 > 0)  # (batch, d_hidden)
    return {
        "b1": dz1.sum(axis=0),
        "b2": dz2.sum(axis=0),
        "w1": X.T @ dz1,
        "w2": a1.T @ dz2,
    }
