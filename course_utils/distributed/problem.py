"""The one problem every distributed demo solves: a two-layer ReLU MLP on random regression data.

Dictionaries list their keys sorted (``W1, W2, b1, b2``), the order in which JAX
flattens a dict, so they compare leaf by leaf with JAX's gradients.
Parameters use the JAX layout (``W1`` is ``(d_in, d_hidden)``); a PyTorch
``nn.Linear`` stores the transpose (``fc1.weight`` is ``(d_hidden, d_in)``).
The loss is the mean squared error over every element, as
``torch.nn.functional.mse_loss`` and ``jnp.mean((out - y) ** 2)`` compute it.
:func:`grads_numpy` is the float64 oracle the parallel results are checked against.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

PARAM_NAMES = ("W1", "W2", "b1", "b2")  # sorted, the order JAX flattens a dict in
DATA_NAMES = ("X", "y")


def make_problem(
    seed: int = 0, batch: int = 64, d_in: int = 16, d_hidden: int = 32, d_out: int = 4
) -> dict[str, np.ndarray]:
    """Float32 parameters and data: ``W1, W2, b1, b2`` (JAX layout) and ``X, y``."""
    for name, value in (
        ("batch", batch),
        ("d_in", d_in),
        ("d_hidden", d_hidden),
        ("d_out", d_out),
    ):
        if not isinstance(value, int) or value < 1:
            raise ValueError(
                f"make_problem: {name} must be a positive int, got {value!r}"
            )
    rng = np.random.default_rng(seed)

    def normal(shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    W1 = normal((d_in, d_hidden), d_in**-0.5)
    b1 = normal((d_hidden,), 0.1)
    W2 = normal((d_hidden, d_out), d_hidden**-0.5)
    b2 = normal((d_out,), 0.1)
    X = normal((batch, d_in))
    y = normal((batch, d_out))
    return {"W1": W1, "W2": W2, "b1": b1, "b2": b2, "X": X, "y": y}


def params_of(problem: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Just the parameters ``W1, W2, b1, b2``."""
    missing = [k for k in PARAM_NAMES if k not in problem]
    if missing:
        raise KeyError(
            f"params_of: the problem has no {missing}; make it with make_problem()"
        )
    return {k: problem[k] for k in PARAM_NAMES}


def take(report: dict, prefix: str) -> dict[str, np.ndarray]:
    """``W1, W2, b1, b2`` from a rank's report whose keys carry ``prefix`` (``"ddp_W1"``)."""
    missing = [prefix + k for k in PARAM_NAMES if prefix + k not in report]
    if missing:
        raise KeyError(
            f"take: the report has no {missing}; it has {sorted(report)[:12]}"
        )
    return {k: np.asarray(report[prefix + k]) for k in PARAM_NAMES}


def n_params(problem: dict[str, np.ndarray]) -> int:
    """Number of scalar parameters."""
    return int(sum(np.size(v) for v in params_of(problem).values()))


def loss_and_grads_numpy(
    params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """Loss and gradients in float64, by hand: the oracle for every parallel version."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != p["W1"].shape[0]:
        raise ValueError(
            f"loss_and_grads_numpy: X must be (batch, {p['W1'].shape[0]}), got {X.shape}"
        )
    pre = X @ p["W1"] + p["b1"]  # (batch, d_hidden)
    h = np.maximum(pre, 0.0)
    out = h @ p["W2"] + p["b2"]  # (batch, d_out)
    err = out - y
    loss = float(np.mean(err**2))
    d_out = 2.0 * err / err.size
    d_h = (d_out @ p["W2"].T) * (pre > 0)
    grads = {
        "W1": X.T @ d_h,
        "W2": h.T @ d_out,
        "b1": d_h.sum(axis=0),
        "b2": d_out.sum(axis=0),
    }
    return loss, grads


def forward_numpy(params: dict[str, np.ndarray], X: np.ndarray) -> np.ndarray:
    """The MLP's output in float64."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    h = np.maximum(np.asarray(X, dtype=np.float64) @ p["W1"] + p["b1"], 0.0)
    return h @ p["W2"] + p["b2"]


def shard_rows(a: np.ndarray, rank: int, world: int) -> np.ndarray:
    """Rank ``rank``'s contiguous block of rows (the batch split every demo uses)."""
    if not (isinstance(world, int) and world >= 1 and 0 <= rank < world):
        raise ValueError(
            f"shard_rows: need 0 <= rank < world, got rank={rank!r}, world={world!r}"
        )
    if a.shape[0] % world:
        raise ValueError(
            f"shard_rows: batch {a.shape[0]} does not split evenly over {world} ranks; "
            "pick a batch size divisible by the number of processes"
        )
    size = a.shape[0] // world
    return a[rank * size : (rank + 1) * size]


def save(path: str | Path, problem: dict[str, np.ndarray]) -> Path:
    """Write the problem to an ``.npz`` file (what launched scripts read)."""
    path = Path(path)
    np.savez(path, **problem)
    return path


def load(path: str | Path) -> dict[str, np.ndarray]:
    """Read a problem written by :func:`save`."""
    with np.load(Path(path)) as data:
        return {k: data[k] for k in data.files}
