"""What reverse-mode autodiff keeps for the backward pass, in both frameworks.

- :func:`jax_saved_residuals` lists the residuals a JAX function saves for its
  gradient, as ``jax.ad_checkpoint.print_saved_residuals`` prints them, parsed
  into rows with a byte count.
- :func:`torch_saved_tensors` is a context manager that records every tensor
  PyTorch's autograd saves while the block runs (through
  ``torch.autograd.graph.saved_tensors_hooks``).

Both return a :class:`Saved` summary, so a lesson can show what
rematerialisation (``jax.checkpoint`` / ``torch.utils.checkpoint``) removes.
Importing this module imports neither framework.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_LINE = re.compile(r"^(?P<dtype>[a-z]+[0-9]*)\[(?P<shape>[0-9,]*)\]\s+(?P<source>.*)$")
_BITS = re.compile(r"^[a-z]+?(?P<bits>[0-9]+)$")


def dtype_bytes(short: str) -> int | None:
    """Bytes per element of a short dtype name (``f32`` → 4, ``bf16`` → 2, ``bool`` → 1)."""
    if short in ("bool", "pred"):
        return 1
    m = _BITS.match(short)
    if not m:
        return None
    return max(1, int(m.group("bits")) // 8)


@dataclass(frozen=True)
class Residual:
    """One saved array: dtype, shape, where it came from, and its size in bytes."""

    dtype: str
    shape: tuple[int, ...]
    source: str
    nbytes: int | None

    @property
    def is_argument(self) -> bool:
        """Whether the residual is one of the function's inputs (saved at no extra cost)."""
        return self.source.startswith("from the argument")


@dataclass
class Saved:
    """Residuals kept for the backward pass."""

    items: list[Residual] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.items)

    @property
    def nbytes(self) -> int:
        """Total bytes (rows of unknown dtype count as 0)."""
        return sum(r.nbytes or 0 for r in self.items)

    @property
    def activations(self) -> list[Residual]:
        """Residuals that are not inputs: what the forward pass had to keep alive."""
        return [r for r in self.items if not r.is_argument]

    @property
    def activation_bytes(self) -> int:
        return sum(r.nbytes or 0 for r in self.activations)

    def table(self) -> str:
        lines = ["| saved | shape | bytes | source |", "|---|---|---:|---|"]
        for r in self.items:
            shape = "×".join(map(str, r.shape)) or "scalar"
            lines.append(f"| {r.dtype} | {shape} | {r.nbytes} | {r.source} |")
        lines.append(f"| **total** | {self.count} arrays | {self.nbytes} | |")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.table()

    def __str__(self) -> str:
        return (
            f"{self.count} saved arrays, {self.nbytes} bytes "
            f"({len(self.activations)} activations, {self.activation_bytes} bytes)"
        )

    __repr__ = __str__


def parse_residual_lines(text: str) -> Saved:
    """Parse what ``print_saved_residuals`` printed: one ``f32[4,16] source`` per line."""
    items = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"cannot read a residual from the line {line!r}")
        shape = tuple(int(s) for s in m.group("shape").split(",") if s)
        per = dtype_bytes(m.group("dtype"))
        count = 1
        for s in shape:
            count *= s
        items.append(
            Residual(
                m.group("dtype"),
                shape,
                m.group("source"),
                None if per is None else per * count,
            )
        )
    return Saved(items)


def jax_saved_residuals(fn, *args: Any, **kwargs: Any) -> Saved:
    """The residuals JAX saves to differentiate ``fn(*args, **kwargs)`` (a scalar function)."""
    if not callable(fn):
        raise TypeError(
            f"jax_saved_residuals: fn must be callable, got {type(fn).__name__}"
        )
    from jax.ad_checkpoint import print_saved_residuals

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        print_saved_residuals(fn, *args, **kwargs)
    return parse_residual_lines(buffer.getvalue())


def _torch_short_dtype(dtype: Any) -> str:
    import torch

    if dtype == torch.bool:
        return "bool"
    kind = "f" if dtype.is_floating_point else ("c" if dtype.is_complex else "i")
    if dtype == torch.bfloat16:
        kind = "bf"
    if kind == "i" and not dtype.is_signed:
        kind = "u"
    bits = torch.empty((), dtype=dtype).element_size() * 8
    return f"{kind}{bits}"


@contextlib.contextmanager
def torch_saved_tensors() -> Iterator[Saved]:
    """Record each tensor autograd saves for backward while the block runs.

    A tensor without a ``grad_fn`` (a parameter, or an input) is reported as an
    argument; everything else is an activation the forward pass kept alive. The same storage saved twice is
    counted once.
    """
    import torch

    saved = Saved()
    seen: set[tuple[int, int, tuple[int, ...]]] = set()

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape))
        if key not in seen:
            seen.add(key)
            source = (
                "from the argument (an input or parameter)"
                if t.grad_fn is None
                else f"output of {type(t.grad_fn).__name__}"
            )
            saved.items.append(
                Residual(
                    _torch_short_dtype(t.dtype),
                    tuple(t.shape),
                    source,
                    t.numel() * t.element_size(),
                )
            )
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield saved
