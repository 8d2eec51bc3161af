"""Communication per training step: the textbook formulas, and what a compiled program holds.

Bandwidth-optimal (ring) collectives over ``N`` devices send, per device,

- all-reduce of ``S`` bytes: ``2 (N-1)/N * S`` (a reduce-scatter, then an all-gather);
- all-gather to ``S`` bytes, or reduce-scatter from ``S`` bytes: ``(N-1)/N * S``.

Per step, for a model of ``P`` parameters of ``b`` bytes each:

- data parallel: one all-reduce of the gradients, ``2 (N-1)/N * P b``;
- fully sharded (ZeRO-3/FSDP): all-gather the parameters for the forward pass, again
  for the backward pass, and reduce-scatter the gradients, ``3 (N-1)/N * P b``;
- tensor parallel (a column-split layer followed by a row-split one): one all-reduce
  of the activations in the forward pass and one of their gradients in the backward
  pass per such pair, ``2 * 2 (N-1)/N * A b`` for ``A`` activation elements; this
  grows with the batch, not with ``P``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course_utils.gpt.shard import COLLECTIVES

DTYPE_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1,
    "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4,
    "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip
STRATEGIES = ("data parallel", "fully sharded", "tensor parallel")


def _check(name: str, value, minimum: float = 0) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value < minimum
    ):
        raise ValueError(f"{name} must be a number >= {minimum}, got {value!r}")


def ring_bytes(op: str, size_bytes: float, n_devices: int) -> float:
    """Bytes one device sends for a ring collective whose full buffer is ``size_bytes``."""
    _check("size_bytes", size_bytes)
    if not isinstance(n_devices, int) or n_devices < 1:
        raise ValueError(f"n_devices must be a positive int, got {n_devices!r}")
    share = (n_devices - 1) / n_devices
    if op == "all-reduce":
        return 2 * share * size_bytes
    if op in ("all-gather", "reduce-scatter"):
        return share * size_bytes
    raise ValueError(
        f"op must be 'all-reduce', 'all-gather' or 'reduce-scatter', got {op!r}"
    )


def step_bytes(
    strategy: str,
    n_params: float,
    n_devices: int,
    *,
    bytes_per_elem: int = 4,
    activation_elems: float = 0,
    n_layer_pairs: int = 1,
) -> float:
    """Bytes one device sends per training step under ``strategy`` (see the module doc).

    ``activation_elems`` and ``n_layer_pairs`` matter only for tensor parallelism:
    the elements of the activation all-reduced after each column/row layer pair.
    """
    _check("n_params", n_params)
    _check("bytes_per_elem", bytes_per_elem, 1)
    _check("activation_elems", activation_elems)
    size = n_params * bytes_per_elem
    if strategy == "data parallel":
        return ring_bytes("all-reduce", size, n_devices)
    if strategy == "fully sharded":
        return 2 * ring_bytes("all-gather", size, n_devices) + ring_bytes(
            "reduce-scatter", size, n_devices
        )
    if strategy == "tensor parallel":
        _check("n_layer_pairs", n_layer_pairs)
        return (
            n_layer_pairs
            * 2
            * ring_bytes("all-reduce", activation_elems * bytes_per_elem, n_devices)
        )
    raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")


def table(
    n_params: float,
    n_devices: int,
    *,
    bytes_per_elem: int = 4,
    activation_elems: float = 0,
    n_layer_pairs: int = 1,
) -> list[dict[str, object]]:
    """One row per strategy: bytes per device per step, and relative to data parallel."""
    dp = step_bytes("data parallel", n_params, n_devices, bytes_per_elem=bytes_per_elem)
    rows = []
    for strategy in STRATEGIES:
        sent = step_bytes(
            strategy, n_params, n_devices, bytes_per_elem=bytes_per_elem,
            activation_elems=activation_elems, n_layer_pairs=n_layer_pairs,
        )  # fmt: skip
        rows.append(
            {
                "strategy": strategy,
                "bytes": sent,
                "vs data parallel": sent / dp if dp else float("nan"),
            }
        )
    return rows


# ------------------------------------------------------ compiled XLA programs


@dataclass(frozen=True)
class Collective:
    """One collective in an HLO module: its kind and the bytes of its result."""

    op: str
    result_bytes: int
    shapes: tuple[str, ...]

    def full_bytes(self, n_devices: int) -> int:
        """Bytes of the full buffer: a reduce-scatter's result is one of ``n_devices`` shards."""
        return self.result_bytes * (n_devices if self.op == "reduce-scatter" else 1)

    def sent_bytes(self, n_devices: int) -> float:
        """Bytes one device sends for this collective with a ring algorithm."""
        if self.op in ("all-reduce", "all-gather", "reduce-scatter"):
            return ring_bytes(self.op, self.full_bytes(n_devices), n_devices)
        return float(self.result_bytes)


_SHAPE = re.compile(r"\b([a-z]+[0-9]*(?:e[0-9]m[0-9](?:fn)?)?)\[([0-9,]*)\]")
_LINE = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<shape>.+?)\s+(?P<op>"
    + "|".join(COLLECTIVES)
    + r")(?P<start>-start)?\("
)


def _shape_bytes(text: str) -> list[tuple[str, int]]:
    out = []
    for dtype, dims in _SHAPE.findall(text):
        if dtype not in DTYPE_BYTES:
            continue
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        out.append((f"{dtype}[{dims}]", n * DTYPE_BYTES[dtype]))
    return out


def hlo_collectives(hlo_text: str) -> list[Collective]:
    """Collectives in an HLO module's text (``jit(f).lower(...).compile().as_text()``).

    A tuple-shaped collective (XLA combines small ones) counts once, with the
    bytes of all its parts. For an asynchronous ``all-gather-start`` the result
    is the second half of its shape tuple (the first half is the operand).
    """
    if not isinstance(hlo_text, str):
        raise TypeError(
            f"hlo_collectives: expected the HLO text (str), got {type(hlo_text).__name__}"
        )
    found = []
    for line in hlo_text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        op = m.group("op")
        shapes = _shape_bytes(m.group("shape"))
        if m.group("start") and op == "all-gather":
            shapes = shapes[len(shapes) // 2 :]
        found.append(
            Collective(op, sum(b for _, b in shapes), tuple(s for s, _ in shapes))
        )
    return found


def summarize(
    collectives: list[Collective], n_devices: int
) -> dict[str, dict[str, float]]:
    """Per kind: how many, their full-buffer bytes, and the ring bytes one device sends."""
    out: dict[str, dict[str, float]] = {}
    for c in collectives:
        row = out.setdefault(c.op, {"count": 0, "full_bytes": 0, "sent_bytes": 0.0})
        row["count"] += 1
        row["full_bytes"] += c.full_bytes(n_devices)
        row["sent_bytes"] += c.sent_bytes(n_devices)
    return out
