"""Text both frameworks share: a corpus that ships with Python, a character tokenizer, one batch order.

Lesson 11 writes the pipelines on its page; this module holds the same code for
lesson 12, the exercises and the tests (``tests/gpt/test_pages.py`` keeps them equal).

- :func:`load_corpus`: the language reference's help topics in ``pydoc_data.topics``
  (part of CPython's standard library, about 465,000 characters of English; no download);
- :class:`CharTokenizer`: one token per distinct character;
- :func:`split_ids`: the first 90 % of the tokens for training, the rest for validation;
- :func:`batch_order`: the start of every training window, drawn once from a seeded
  NumPy generator, shape ``(steps, batch)``;
- two pipelines over that one order, each in its framework's idiom:
  :func:`torch_loader` (a ``torch.utils.data.DataLoader`` over a :class:`WindowDataset`,
  the order as its ``batch_sampler``) and :func:`numpy_batches` (a plain NumPy
  iterator, what ``jax.numpy`` consumes). They yield the same ``(x, y)`` batches:
  ``y`` is ``x`` shifted one character left, the next-character targets.

This module imports torch at the top (the ``Dataset``); ``import course_utils.gpt`` does not.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

__all__ = [
    "CharTokenizer",
    "WindowDataset",
    "batch_order",
    "load_corpus",
    "numpy_batches",
    "split_ids",
    "torch_loader",
    "windows",
]


def load_corpus() -> str:
    """Every help topic of ``pydoc_data.topics``, in sorted order, separated by blank lines."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name].strip() for name in sorted(topics))


@dataclass(frozen=True)
class CharTokenizer:
    """Characters <-> integer ids; ``chars[i]`` is the character with id ``i``."""

    chars: str

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        """A tokenizer whose vocabulary is the sorted set of ``text``'s characters."""
        if not text:
            raise ValueError("from_text: the text is empty")
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """``text`` -> int64 ids; a character outside the vocabulary is an error."""
        index = {c: i for i, c in enumerate(self.chars)}
        try:
            return np.array([index[c] for c in text], dtype=np.int64)
        except KeyError as err:
            raise ValueError(
                f"encode: character {err} is not in the vocabulary"
            ) from None

    def decode(self, ids: Sequence[int] | np.ndarray) -> str:
        """Integer ids -> text."""
        return "".join(self.chars[int(i)] for i in np.asarray(ids).reshape(-1))


def split_ids(
    ids: np.ndarray, val_fraction: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """``(train, val)``: the first ``1 - val_fraction`` of the tokens, then the rest (no shuffle)."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1, got {val_fraction}")
    cut = int(len(ids) * (1.0 - val_fraction))
    return ids[:cut], ids[cut:]


def batch_order(
    n_tokens: int, block_size: int, batch: int, steps: int, *, seed: int
) -> np.ndarray:
    """Window starts, ``(steps, batch)`` int64, uniform over every full window, fixed by ``seed``."""
    n_windows = n_tokens - block_size  # a window needs block_size + 1 tokens: x and y
    if n_windows < 1:
        raise ValueError(f"{n_tokens} tokens are too few for block_size={block_size}")
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_windows, size=(steps, batch), dtype=np.int64)


def windows(
    ids: np.ndarray, starts: np.ndarray, block_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` for windows starting at ``starts`` (any shape S): each ``S + (block_size,)``."""
    chunk = ids[np.asarray(starts)[..., None] + np.arange(block_size + 1)]
    return chunk[..., :-1], chunk[..., 1:]  # y: x shifted by one token


def numpy_batches(
    ids: np.ndarray, order: np.ndarray, block_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The JAX side's pipeline: one ``(x, y)`` pair of NumPy arrays per row of ``order``."""
    for starts in order:
        yield windows(ids, starts, block_size)


class WindowDataset(Dataset):
    """Item ``i``: the window starting at token ``i``, as ``(x, y)`` int64 tensors."""

    def __init__(self, ids: np.ndarray, block_size: int):
        self.ids = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
        self.block_size = block_size

    def __len__(self) -> int:
        return len(self.ids) - self.block_size

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        chunk = self.ids[i : i + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def torch_loader(ids: np.ndarray, order: np.ndarray, block_size: int) -> DataLoader:
    """The PyTorch side's pipeline: a ``DataLoader`` whose ``batch_sampler`` is ``order``.

    Each row of ``order`` is one batch of dataset indices (window starts); the
    default collate stacks the items into ``(batch, block_size)`` tensors.
    """
    order = np.asarray(order).tolist()  # one list of window starts per batch
    return DataLoader(WindowDataset(ids, block_size), batch_sampler=order)
