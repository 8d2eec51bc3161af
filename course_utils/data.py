"""Data both frameworks share: scikit-learn's digits (no network), layouts, one batch order.

No data file ships with the course: the digits come with scikit-learn, and the GPT
lessons' text with Python itself (:mod:`course_utils.gpt.data`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Split:
    """Train/test arrays: images ``(n, 1, 8, 8)`` float32 in [0, 1] (NCHW), labels int64."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def load_digits(
    *, seed: int = 0, test_fraction: float = 0.2, limit: int | None = None
) -> Split:
    """scikit-learn's 8x8 digits (1,797 images, shipped with the package) split by ``seed``.

    ``limit`` keeps only the first ``limit`` shuffled images (for smoke mode).
    Images come as NCHW; use :func:`nchw_to_nhwc` for JAX/Flax convolutions.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    from sklearn.datasets import load_digits as _load

    bunch = _load()
    X = (bunch.images / 16.0).astype(np.float32)[:, None, :, :]  # (n, 1, 8, 8)
    y = bunch.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    if limit is not None:
        if limit < 2:
            raise ValueError(f"limit must be at least 2, got {limit}")
        order = order[:limit]
    n_test = max(1, int(round(len(order) * test_fraction)))
    test, train = order[:n_test], order[n_test:]
    return Split(X[train], y[train], X[test], y[test])


def nchw_to_nhwc(x):
    """(batch, channels, height, width) -> (batch, height, width, channels).

    Weight layouts (conv kernels, linear weights) live in :mod:`course_utils.convert`.
    """
    return x.transpose(0, 2, 3, 1)


def batch_indices(
    n: int, batch_size: int, *, seed: int, epoch: int = 0, drop_last: bool = True
) -> list[np.ndarray]:
    """Index arrays of one epoch's batches, shuffled by ``(seed, epoch)`` alone."""
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if n < batch_size and drop_last:
        raise ValueError(f"batch_size {batch_size} is larger than the {n} examples")
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    stop = n - n % batch_size if drop_last else n
    return [perm[i : i + batch_size] for i in range(0, stop, batch_size)]


def batches(
    X: np.ndarray,
    y: np.ndarray,
    batch_size: int,
    *,
    seed: int,
    epochs: int = 1,
    drop_last: bool = True,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield numpy ``(X_batch, y_batch)`` in an order fixed by ``seed``.

    Both frameworks consume the same iterator (``torch.from_numpy`` /
    ``jnp.asarray``), so they see the same batches in the same order.
    """
    if len(X) != len(y):
        raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
    for epoch in range(epochs):
        for idx in batch_indices(
            len(X), batch_size, seed=seed, epoch=epoch, drop_last=drop_last
        ):
            yield X[idx], y[idx]
