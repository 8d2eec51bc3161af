"""What the hardware can do at most, and how close a measured step came to it.

A speed means little on its own: 2 ms for a training step is fast on a laptop and slow
on a TPU. This module reads a measured speed against the device's published peak, as the
scaling book and nanoGPT do:

- :data:`PUBLISHED`: each accelerator's peak matmul rate per dtype and its memory
  bandwidth, with the page they come from;
- :func:`peak`: the published peak of a device (a JAX or PyTorch device), or ``None``;
- :func:`measure_cpu`: where no published figure fits (a CPU, an unlisted chip), a rate
  measured now on the device (a JAX float32 matmul, and an elementwise add for the
  bandwidth): a yardstick, not a peak, and :meth:`Peak.label` says so;
- :func:`flops` and :func:`bytes_accessed`: what XLA's cost analysis counts for a
  compiled program;
- :func:`share`, :func:`mfu` and :func:`roofline`: achieved over peak, and whether the
  program is bound by compute or by memory.

Peaks are dense figures: NVIDIA's data sheets often quote twice as much "with sparsity",
which no lesson here uses. Importing this module imports no framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "PUBLISHED",
    "Peak",
    "Roofline",
    "bytes_accessed",
    "flops",
    "measure_cpu",
    "mfu",
    "peak",
    "roofline",
    "share",
    "transformer_train_flops",
]


@dataclass(frozen=True)
class Peak:
    """A device's peak: FLOP/s per dtype name, bytes per second, and where they come from."""

    name: str
    flops_per_s: dict[str, float] = field(default_factory=dict)
    bytes_per_s: float | None = None
    source: str = ""
    measured: bool = False
    matmul: str = ""  # for a measured rate: the matmul timed, e.g. "1024³ float32"

    def label(self, dtype: str = "bfloat16") -> str:
        """What a share is read against, in words.

        A published figure is "NVIDIA T4's published float32 peak". A measured one is what
        was timed: "a JAX 1024³ float32 matmul timed now on this CPU", never a peak.
        """
        if self.measured:
            return f"a JAX {self.matmul or dtype} matmul timed now on {self.name}"
        return f"{self.name}'s published {dtype} peak"

    def flops(self, dtype: str = "bfloat16") -> float | None:
        """The peak FLOP/s for ``dtype`` (``"bfloat16"``, ``"float32"``, ...), if known."""
        return self.flops_per_s.get(str(dtype))

    def ridge(self, dtype: str = "bfloat16") -> float | None:
        """FLOPs per byte at which the device stops waiting for memory (the ridge point)."""
        top = self.flops(dtype)
        if top is None or not self.bytes_per_s:
            return None
        return top / self.bytes_per_s

    def __str__(self) -> str:
        rates = ", ".join(
            f"{k} {v / 1e12:.3g} TFLOP/s" for k, v in self.flops_per_s.items()
        )
        bw = f", {self.bytes_per_s / 1e9:.3g} GB/s" if self.bytes_per_s else ""
        how = "measured" if self.measured else "published"
        return f"{self.name}: {rates}{bw} ({how}: {self.source})"


T = 1e12
G = 1e9
# Keyed by a piece of the device kind each framework reports ("TPU v5 lite",
# "NVIDIA A100-SXM4-40GB", "Tesla T4"). Longer keys are tried first.
PUBLISHED: dict[str, Peak] = {
    "TPU v5 lite": Peak(
        "TPU v5e",
        {"bfloat16": 197 * T},
        819 * G,
        "https://cloud.google.com/tpu/docs/v5e",
    ),
    "TPU v6 lite": Peak(
        "TPU v6e",
        {"bfloat16": 918 * T},
        1638 * G,
        "https://cloud.google.com/tpu/docs/v6e",
    ),
    "T4": Peak(
        "NVIDIA T4",
        {"float16": 65 * T, "float32": 8.1 * T},
        320 * G,
        "https://www.nvidia.com/en-us/data-center/tesla-t4/",
    ),
    "L4": Peak(
        "NVIDIA L4",
        {"bfloat16": 121 * T, "float16": 121 * T, "float32": 30.3 * T},
        300 * G,
        "https://www.nvidia.com/en-us/data-center/l4/",
    ),
    "A100-SXM4-40GB": Peak(
        "NVIDIA A100 40GB SXM",
        {"bfloat16": 312 * T, "float16": 312 * T, "float32": 19.5 * T},
        1555 * G,
        "https://www.nvidia.com/en-us/data-center/a100/",
    ),
    "A100": Peak(
        "NVIDIA A100 80GB SXM",
        {"bfloat16": 312 * T, "float16": 312 * T, "float32": 19.5 * T},
        2039 * G,
        "https://www.nvidia.com/en-us/data-center/a100/",
    ),
    "H100 PCIe": Peak(
        "NVIDIA H100 PCIe",
        {"bfloat16": 756 * T, "float16": 756 * T, "float32": 51 * T},
        2000 * G,
        "https://www.nvidia.com/en-us/data-center/h100/",
    ),
    "H100": Peak(
        "NVIDIA H100 SXM",
        {"bfloat16": 989 * T, "float16": 989 * T, "float32": 67 * T},
        3350 * G,
        "https://www.nvidia.com/en-us/data-center/h100/",
    ),
    "H200": Peak(
        "NVIDIA H200 SXM",
        {"bfloat16": 989 * T, "float16": 989 * T, "float32": 67 * T},
        4800 * G,
        "https://www.nvidia.com/en-us/data-center/h200/",
    ),
}


def _kind(device: Any) -> str:
    """The device kind a framework reports: JAX's ``device_kind``, torch's GPU name."""
    kind = getattr(device, "device_kind", None)
    if kind:
        return str(kind)
    if getattr(device, "type", None) == "cuda":  # a torch.device
        import torch

        return torch.cuda.get_device_name(device)
    return str(getattr(device, "platform", device))


def peak(device: Any) -> Peak | None:
    """The published peak of ``device`` (a JAX device, a torch device or a kind string)."""
    kind = device if isinstance(device, str) else _kind(device)
    for key in sorted(PUBLISHED, key=len, reverse=True):
        if key.lower() in kind.lower():
            return PUBLISHED[key]
    return None


def _seconds(fn: Any, *args: Any, repeats: int = 5) -> float:
    """The median of ``repeats`` timed calls, each synchronised, after one warm-up call."""
    import statistics
    import time

    import jax

    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _measured_name(device: Any) -> str:
    """The measured device in words: "this CPU" for a CPU, else "this <its kind>"."""
    if getattr(device, "platform", None) == "cpu":
        return "this CPU"
    return f"this {_kind(device)}"


def measure_cpu(n: int = 1024, megabytes: int = 256, device: Any = None) -> Peak:
    """Rates measured now on ``device``: an ``n``³ float32 matmul and an add over ``megabytes``.

    ``device`` is the CPU by default; any JAX device can be timed, and the result names
    it ("this CPU", "this Tesla P100-PCIE-16GB"). The rates are what JAX's matmul did now,
    not a data sheet's peak: another program on the cores lowers them, and a framework's
    own kernels can beat them, so a share read against them can exceed 100 %.
    :meth:`Peak.label` words them as what they are.
    """
    import jax
    import jax.numpy as jnp

    device = device or jax.devices("cpu")[0]
    a = jax.device_put(jnp.ones((n, n), jnp.float32), device)
    seconds = _seconds(jax.jit(jnp.dot), a, a)
    elems = megabytes * 2**20 // 4
    x = jax.device_put(jnp.ones((elems,), jnp.float32), device)
    add_s = _seconds(jax.jit(lambda v: v + 1.0), x)
    return Peak(
        _measured_name(device),
        {"float32": 2 * n**3 / seconds},
        2 * elems * 4 / add_s,  # one read and one write of every element
        f"a JAX {n}³ float32 matmul and an add over {megabytes} MiB, timed here",
        measured=True,
        matmul=f"{n}³ float32",
    )


def _costs(compiled: Any) -> dict[str, float]:
    costs = compiled.cost_analysis()
    if isinstance(costs, dict):
        costs = [costs]
    total: dict[str, float] = {}
    for c in costs or ():
        for k, v in (c or {}).items():
            if isinstance(v, (int, float)):
                total[k] = total.get(k, 0.0) + float(v)
    return total


def flops(compiled: Any) -> float:
    """FLOPs XLA's cost analysis counts for a compiled program (``jit(f).lower(...).compile()``).

    XLA counts the body of a loop once, whatever its trip count: a ``lax.scan`` over 8
    layers counts as one layer. For a program with a loop, count the model's FLOPs by
    formula instead (:func:`transformer_train_flops`), as MFU is defined.
    """
    return _costs(compiled).get("flops", 0.0)


def transformer_train_flops(
    n_params: int, n_layers: int, d_model: int, seq_len: int, tokens: int
) -> float:
    """A decoder's training FLOPs for ``tokens`` tokens: forward and backward, by formula.

    Each parameter costs 6 FLOPs per token (2 forward, 4 backward) and attention's two
    matmuls add ``12 · n_layers · d_model · seq_len`` per token: the count of the PaLM
    paper's appendix B, which nanoGPT's ``estimate_mfu`` uses. ``n_params`` should leave
    out the position embeddings, which cost no matmul.
    """
    per_token = 6 * n_params + 12 * n_layers * d_model * seq_len
    return float(per_token) * tokens


def bytes_accessed(compiled: Any) -> float:
    """Bytes XLA's cost analysis says a compiled program reads and writes."""
    return _costs(compiled).get("bytes accessed", 0.0)


def share(
    flops_per_s: float, top: Peak | None, dtype: str = "bfloat16"
) -> float | None:
    """Achieved FLOP/s as a fraction of the peak for ``dtype`` (``None`` when unknown)."""
    rate = top.flops(dtype) if top else None
    return flops_per_s / rate if rate else None


def mfu(
    model_flops: float, seconds: float, top: Peak | None, dtype: str = "bfloat16"
) -> float | None:
    """Model FLOPs utilisation: a step's model FLOPs per second over the device's peak."""
    if seconds <= 0:
        raise ValueError(f"mfu: seconds must be positive, got {seconds!r}")
    return share(model_flops / seconds, top, dtype)


@dataclass(frozen=True)
class Roofline:
    """A program read against a roofline: its intensity, the device's ridge point, and the verdict."""

    intensity: float  # FLOPs per byte moved
    ridge: float | None  # the device's FLOPs per byte at the ridge point
    flops_per_s: float
    bytes_per_s: float
    bound: str  # "compute-bound", "memory-bound" or "unknown"
    compute_share: float | None
    memory_share: float | None

    def __str__(self) -> str:
        parts = [
            f"{self.flops_per_s / 1e12:.3g} TFLOP/s",
            f"{self.bytes_per_s / 1e9:.3g} GB/s",
            f"{self.intensity:.3g} FLOPs per byte",
        ]
        if self.ridge is not None:
            parts.append(f"ridge point at {self.ridge:.3g}")
        if self.compute_share is not None:
            parts.append(f"{self.compute_share:.1%} of peak compute")
        if self.memory_share is not None:
            parts.append(f"{self.memory_share:.1%} of peak bandwidth")
        return f"{self.bound}: " + ", ".join(parts)


def roofline(
    n_flops: float,
    n_bytes: float,
    seconds: float,
    top: Peak | None,
    dtype: str = "bfloat16",
) -> Roofline:
    """Where a program sits on ``top``'s roofline, from its FLOPs, bytes moved and time."""
    if seconds <= 0 or n_bytes <= 0:
        raise ValueError(
            f"roofline: seconds and bytes must be positive, got {seconds!r} and {n_bytes!r}"
        )
    intensity = n_flops / n_bytes
    ridge = top.ridge(dtype) if top else None
    bound = (
        "unknown"
        if ridge is None
        else ("compute-bound" if intensity >= ridge else "memory-bound")
    )
    bw = top.bytes_per_s if top else None
    return Roofline(
        intensity,
        ridge,
        n_flops / seconds,
        n_bytes / seconds,
        bound,
        share(n_flops / seconds, top, dtype),
        (n_bytes / seconds) / bw if bw else None,
    )
