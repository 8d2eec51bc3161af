"""K-means data, a float64 NumPy reference, and the step-by-step figure of lesson 03.

Lesson 03 writes K-means in JAX and PyTorch itself (that is the lesson); this
module holds what is not the lesson: seeded 2-D blobs, seeded initial centroids,
the NumPy oracle both frameworks are checked against, and the figure grid that
shows the three steps of each iteration (assignment, centroid update,
convergence check).

One iteration, in every implementation of the course:

1. **assign** each point to its nearest centroid (squared Euclidean distance,
   ties to the lower index, as ``argmin`` does);
2. **update** each centroid to the mean of its points (a centroid with no
   points stays where it is);
3. **check** convergence: stop when the largest coordinate change of any
   centroid, ``max |C_new - C|``, is at most ``tol``, or after ``max_iter`` iterations.

Importing this module does not import jax, torch or matplotlib.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def make_blobs(
    n: int, k: int = 3, *, seed: int = 0, spread: float = 0.7
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` float32 points in 2-D around ``k`` seeded centres, and each point's true centre."""
    if not isinstance(n, int) or not isinstance(k, int) or n < k or k < 1:
        raise ValueError(
            f"make_blobs: need ints with n >= k >= 1, got n={n!r}, k={k!r}"
        )
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * (np.arange(k) / k + rng.uniform(0, 1 / k))
    centres = 4.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (k, 2)
    truth = rng.integers(0, k, size=n)
    X = centres[truth] + spread * rng.standard_normal((n, 2))
    return X.astype(np.float32), truth.astype(np.int64)


def initial_centroids(X: np.ndarray, k: int, *, seed: int = 0) -> np.ndarray:
    """``k`` distinct rows of ``X`` picked by ``seed`` (the classic Forgy start), float32."""
    X = _check_points(X, "initial_centroids")
    if not isinstance(k, int) or not 1 <= k <= len(X):
        raise ValueError(
            f"initial_centroids: k must be an int in [1, {len(X)}], got {k!r}"
        )
    idx = np.random.default_rng([seed, 2]).choice(len(X), size=k, replace=False)
    return X[idx].astype(np.float32)


def _check_points(X: np.ndarray, fn: str) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or len(X) == 0:
        raise ValueError(
            f"{fn}: X must be a non-empty (n_points, n_dims) array, got shape {X.shape}"
        )
    return X


@dataclass
class KMeansResult:
    """Final centroids ``(k, d)``, labels ``(n,)``, iterations run, and per-iteration history.

    ``history[i]`` holds ``centroids`` (before the update), ``labels`` (the
    assignment), ``new_centroids`` and ``shift`` (``max |new - old|``).
    """

    centroids: np.ndarray
    labels: np.ndarray
    n_iter: int
    history: list[dict] = field(default_factory=list)


def numpy_step(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One assignment + update in float64: returns ``(new_centroids, labels)``."""
    X = _check_points(X, "numpy_step").astype(np.float64)
    C = np.asarray(C, dtype=np.float64)
    if C.ndim != 2 or C.shape[1] != X.shape[1]:
        raise ValueError(
            f"numpy_step: centroids must be (k, {X.shape[1]}) to match X, got {C.shape}"
        )
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)  # (n, k)
    labels = d2.argmin(axis=1)
    k = len(C)
    counts = np.bincount(labels, minlength=k).astype(np.float64)  # (k,)
    sums = np.zeros_like(C)
    np.add.at(sums, labels, X)
    new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
    return new, labels


def numpy_kmeans(
    X: np.ndarray, C0: np.ndarray, *, tol: float = 1e-4, max_iter: int = 100
) -> KMeansResult:
    """The float64 reference: iterate :func:`numpy_step` until the shift is at most ``tol``."""
    if not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(
            f"numpy_kmeans: max_iter must be a positive int, got {max_iter!r}"
        )
    if tol < 0:
        raise ValueError(f"numpy_kmeans: tol must be >= 0, got {tol!r}")
    C = np.asarray(C0, dtype=np.float64)
    history = record_steps(numpy_step, X, C, tol=tol, max_iter=max_iter)
    last = history[-1]
    return KMeansResult(last["new_centroids"], last["labels"], len(history), history)


def record_steps(
    step: Callable, X: Any, C: Any, *, tol: float, max_iter: int
) -> list[dict]:
    """Call ``step(X, C) -> (new, labels)`` until the largest move is at most ``tol``.

    One dict per iteration, as :func:`plot_steps` reads it, in NumPy arrays:
    ``centroids`` (before the update), ``labels``, ``new_centroids`` and
    ``shift``. ``step`` may be NumPy's, a jitted JAX step (lesson 03), or a
    PyTorch step on the CPU; at most ``max_iter`` iterations.
    """
    history: list[dict] = []
    for _ in range(max_iter):
        new, labels = step(X, C)
        new_np, C_np = np.asarray(new), np.asarray(C)
        shift = float(np.abs(new_np - C_np).max())
        history.append(
            {
                "centroids": C_np,
                "labels": np.asarray(labels),
                "new_centroids": new_np,
                "shift": shift,
            }
        )
        C = new
        if shift <= tol:
            break
    return history


def plot_steps(
    X: np.ndarray,
    history: Sequence[dict],
    *,
    tol: float,
    iterations: Sequence[int] | None = None,
    axes=None,
):
    """Figure grid: one column per iteration shown, one row per step (assign, update, check).

    ``history`` is :attr:`KMeansResult.history` or the same list of dicts built
    from either framework's run. ``iterations`` are 1-based (default: the
    first two and the last). Returns the ``(3, len(iterations))`` axes array.
    """
    if not history:
        raise ValueError("plot_steps: history is empty")
    X = np.asarray(X)
    last = len(history)
    its = (
        list(iterations) if iterations is not None else sorted({1, min(2, last), last})
    )
    if any(not 1 <= i <= last for i in its):
        raise ValueError(f"plot_steps: iterations must be in 1..{last}, got {its}")
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(
            3, len(its), figsize=(3.2 * len(its), 8.4), squeeze=False
        )
    shifts = np.asarray([h["shift"] for h in history], dtype=float)
    # A log axis has no 0: a shift of exactly 0 is drawn as a triangle a decade below
    # the smallest other value (or the tolerance), not at a far-off stand-in.
    floor = min([s for s in shifts if s > 0] + [tol]) / 10
    drawn = np.where(shifts > 0, shifts, floor)
    for col, it in enumerate(its):
        h = history[it - 1]
        old, new = np.asarray(h["centroids"]), np.asarray(h["new_centroids"])
        labels = np.asarray(h["labels"])
        ax = axes[0, col]
        ax.scatter(X[:, 0], X[:, 1], c=labels, cmap="tab10", vmin=0, vmax=9, s=6)
        ax.scatter(old[:, 0], old[:, 1], c="k", marker="x", s=80)
        ax.set_title(f"iteration {it}: 1. assign")
        ax = axes[1, col]
        ax.scatter(
            X[:, 0], X[:, 1], c=labels, cmap="tab10", vmin=0, vmax=9, s=6, alpha=0.25
        )
        for a, b in zip(old, new, strict=True):
            ax.annotate("", xy=b, xytext=a, arrowprops={"arrowstyle": "->", "lw": 1.5})
        ax.scatter(new[:, 0], new[:, 1], c="k", marker="o", s=40)
        ax.set_title("2. update centroids")
        ax = axes[2, col]
        ax.semilogy(range(1, last + 1), drawn, "-", color="#888888")
        ax.semilogy(
            [i + 1 for i, s in enumerate(shifts) if s > 0],
            [s for s in shifts if s > 0],
            "o",
            color="#888888",
            ms=3,
        )
        zeros = [i + 1 for i, s in enumerate(shifts) if s == 0]
        if zeros:
            ax.semilogy(zeros, [floor] * len(zeros), "v", color="#888888", ms=5)
        ax.semilogy(
            [it], [drawn[it - 1]], "v" if shifts[it - 1] == 0 else "o", color="k"
        )
        ax.axhline(tol, ls="--", color="k", alpha=0.5)
        verdict = "stop" if h["shift"] <= tol else "continue"
        ax.set_title(f"3. check: shift {h['shift']:.2g} → {verdict}")
        ax.set_xlabel("iteration")
    for ax in axes[:2].ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_aspect("equal")
    return axes
