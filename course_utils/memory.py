"""Peak memory of one training step, in each framework, with the method named.

No single tool measures both frameworks the same way, so every function here
returns a :class:`MemoryReport` that says how its number was obtained:

- :func:`xla_memory` (JAX, any backend): XLA's buffer assignment for a compiled
  function (``compiled.memory_analysis()``): arguments, outputs, temporaries and
  donated (aliased) bytes. A static plan, known before the step runs.
- :func:`torch_profiler_memory` (PyTorch, CPU or GPU): the allocations and frees
  the torch profiler records (``profile_memory=True``) while the step runs, added
  to the bytes already live (parameters, gradients, optimizer state, batch).
- :func:`torch_cuda_memory` and :func:`jax_device_memory` (GPU only): the
  allocators' own peak counters (``torch.cuda.max_memory_allocated``,
  ``Device.memory_stats()['peak_bytes_in_use']``).
- :func:`torch_peak_above` and :func:`jax_peak_above` (GPU or TPU): how far
  each allocator's peak rose above the live bytes during one step, measured so
  that earlier peaks (compilation, autotuning, earlier steps) cannot leak in:
  PyTorch's counter is reset just before the step; JAX's cannot be reset, so a
  ballast buffer (:func:`ballast_bytes`) first lifts the live bytes above the
  earlier peak, and :func:`peak_above` reads how far the peak rose.
- :func:`save_memory_snapshots` (GPU only): the allocation timelines for the
  viewers (``torch.cuda.memory._snapshot`` for pytorch.org/memory_viz,
  ``jax.profiler.save_device_memory_profile`` for pprof).

Importing this module imports neither framework.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from course_utils._trees import is_jax_array, is_torch_tensor, leaves_with_paths

__all__ = [
    "MemoryReport",
    "ballast_bytes",
    "cuda_available",
    "format_bytes",
    "jax_device_memory",
    "jax_peak_above",
    "peak_above",
    "save_memory_snapshots",
    "table",
    "torch_cuda_memory",
    "torch_peak_above",
    "torch_profiler_memory",
    "tree_bytes",
    "xla_memory",
]


@dataclass
class MemoryReport:
    """One peak-memory number, how it was measured, and what it is made of (bytes)."""

    label: str
    method: str
    peak_bytes: int
    parts: dict[str, int] = field(default_factory=dict)

    def row(self) -> str:
        parts = ", ".join(f"{k} {format_bytes(v)}" for k, v in self.parts.items())
        return f"| {self.label} | {format_bytes(self.peak_bytes)} | {self.method} | {parts} |"

    def __str__(self) -> str:
        return f"{self.label}: {format_bytes(self.peak_bytes)} ({self.method})"

    __repr__ = __str__


def table(reports: list[MemoryReport]) -> str:
    """A markdown table of reports: label, peak, method, parts."""
    lines = ["| step | peak | method | parts |", "|---|---:|---|---|"]
    return "\n".join(lines + [r.row() for r in reports])


def format_bytes(n: float) -> str:
    """Binary units, three significant digits: 512 B, 1.5 KiB, 1.23 MiB, 640 GiB, 2 TiB."""
    sign = "-" if n < 0 else ""
    n = abs(float(n))
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size  # 1023.7 KiB reads as such, not as 1.02e+03
            if value < 999.5:
                return f"{sign}{value:.3g} {unit}"
            return f"{sign}{value:.0f} {unit}"
    return f"{sign}{n:.0f} B"


def tree_bytes(tree: Any) -> int:
    """Bytes held by the jax arrays, torch tensors and numpy arrays in ``tree``.

    A ``torch.nn.Module`` counts its parameters, their gradients and its buffers;
    a ``torch.optim.Optimizer`` counts its state tensors. Tensors that appear
    twice are counted once.
    """
    seen: set[int] = set()
    total = 0
    for leaf in _memory_leaves(tree):
        if is_torch_tensor(leaf):
            key, size = (
                leaf.untyped_storage().data_ptr(),
                leaf.untyped_storage().nbytes(),
            )
        elif is_jax_array(leaf):
            key, size = id(leaf), int(leaf.nbytes)
        elif hasattr(leaf, "nbytes") and hasattr(leaf, "dtype"):
            key, size = id(leaf), int(leaf.nbytes)
        else:
            continue
        if key not in seen:
            seen.add(key)
            total += size
    return total


def _memory_leaves(tree: Any) -> Iterator[Any]:
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(tree, torch.nn.Module):
            for p in tree.parameters():
                yield p
                if p.grad is not None:
                    yield p.grad
            yield from tree.buffers()
            return
        if isinstance(tree, torch.optim.Optimizer):
            for state in tree.state.values():
                yield from (v for v in state.values() if isinstance(v, torch.Tensor))
            return
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        for item in tree:
            yield from _memory_leaves(item)
        return
    for _, leaf in leaves_with_paths(tree):
        yield leaf


# ------------------------------------------------------------------------ XLA


def xla_memory(compiled: Any, label: str = "jax.jit step") -> MemoryReport:
    """XLA's buffer assignment for a compiled function (``jitted.lower(...).compile()``).

    The peak is bounded by arguments + outputs - donated + temporaries: donated
    inputs share their buffers with outputs, temporaries hold intermediates such
    as activations kept for the backward pass.
    """
    if not hasattr(compiled, "memory_analysis"):
        raise TypeError(
            f"compiled must be a compiled jax function (jax.jit(f).lower(...).compile()), "
            f"got {type(compiled).__name__}"
        )
    ma = compiled.memory_analysis()
    if ma is None:
        raise RuntimeError(
            "this backend returns no memory analysis for compiled functions"
        )
    parts = {
        "arguments": int(ma.argument_size_in_bytes),
        "outputs": int(ma.output_size_in_bytes),
        "donated (aliased)": int(ma.alias_size_in_bytes),
        "temporaries": int(ma.temp_size_in_bytes),
    }
    peak = (
        parts["arguments"]
        + parts["outputs"]
        - parts["donated (aliased)"]
        + parts["temporaries"]
    )
    return MemoryReport(
        label, "XLA buffer assignment (memory_analysis), static", peak, parts
    )


# ---------------------------------------------------------------- torch, any


_UNKNOWN_BLOCK = (
    "Memory block of unknown size was allocated before the profiling started"
)


@contextlib.contextmanager
def quiet_profiler_banner() -> Iterator[None]:
    """Drop the profiler's 'USDT: ... profiler_start/stop' lines that C++ writes to fd 2.

    Also its warning that a block allocated before profiling was freed: the
    resident state (last step's gradients, freed by ``zero_grad``) is such a
    block, its free is not an event, and the peak above the start ignores it.
    """
    fd = 2  # the C-level stderr (Jupyter's sys.stderr.fileno() is a different descriptor)
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            kept = [
                line
                for line in tmp.read().decode(errors="replace").splitlines()
                if line.strip()
                and not line.startswith("USDT:")
                and _UNKNOWN_BLOCK not in line
            ]
            if kept:
                print("\n".join(kept), file=sys.stderr)


def torch_profiler_memory(
    step: Callable[[], Any],
    *,
    resident: Any,
    label: str = "PyTorch step",
    device: str = "cpu",
) -> MemoryReport:
    """Peak bytes while ``step()`` runs: live ``resident`` bytes + the highest net allocation.

    ``resident`` holds what is alive before the step and stays alive (the model
    with its gradients, the optimizer, the batch); :func:`tree_bytes` counts it.
    The step runs once under ``torch.profiler`` with ``profile_memory=True``; the
    allocation (+) and free (-) events on ``device`` ('cpu' or 'cuda'), in time
    order, give the highest net allocation above the starting point.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device='cuda' needs a CUDA GPU; none is available")
    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
        torch.cuda.synchronize()
    before = tree_bytes(resident)
    with (
        quiet_profiler_banner(),
        profile(activities=activities, profile_memory=True) as prof,
    ):
        step()
        if device == "cuda":
            torch.cuda.synchronize()
    kind = torch.device(device).type
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]" and e.device_type().name.lower() == kind
    )
    running = high = 0
    allocated = freed = 0
    for _, nbytes in events:
        running += nbytes
        high = max(high, running)
        allocated += max(nbytes, 0)
        freed += max(-nbytes, 0)
    parts = {
        "live before (params, grads, optimizer state, batch)": before,
        "highest net allocation during the step": high,
        "allocated in total": allocated,
        "freed in total": freed,
    }
    return MemoryReport(
        label, f"torch profiler memory events ({device})", before + high, parts
    )


# ------------------------------------------------------------------ GPU only


def cuda_available() -> bool:
    """Whether PyTorch sees a CUDA GPU (False when torch is not installed)."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def torch_cuda_memory(
    step: Callable[[], Any], label: str = "PyTorch step"
) -> MemoryReport:
    """``torch.cuda.max_memory_allocated`` around one ``step()`` (needs a CUDA GPU)."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(
            "torch_cuda_memory needs a CUDA GPU; use torch_profiler_memory on CPU"
        )
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    parts = {"allocated before": before, "peak above that": peak - before}
    return MemoryReport(label, "torch.cuda.max_memory_allocated", peak, parts)


def jax_device_memory(
    step: Callable[[], Any], device: Any = None, label: str = "JAX step"
) -> MemoryReport | None:
    """The device allocator's counters around one ``step()``; None where it keeps none (CPU).

    JAX cannot reset ``peak_bytes_in_use``: it is the high-water mark since the
    process started, so it bounds this step's peak from above.
    """
    import jax

    device = device or jax.devices()[0]
    stats = device.memory_stats()
    if not stats:
        return None
    before = int(stats.get("bytes_in_use", 0))
    jax.block_until_ready(step())
    stats = device.memory_stats()
    parts = {"in use before": before, "in use after": int(stats.get("bytes_in_use", 0))}
    peak = int(stats.get("peak_bytes_in_use", 0))
    return MemoryReport(
        label,
        f"{device.platform} allocator peak_bytes_in_use (since start)",
        peak,
        parts,
    )


def save_memory_snapshots(
    torch_step: Callable[[], Any], jax_step: Callable[[], Any], folder: str
) -> dict[str, str]:
    """Write the torch allocation timeline and JAX's device memory profile (GPU only).

    Returns the paths: ``torch_snapshot.pickle`` (drag into
    https://pytorch.org/memory_viz) and ``jax_memory.prof`` (``pprof -http :8080``).
    """
    import jax
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("save_memory_snapshots needs a CUDA GPU")
    os.makedirs(folder, exist_ok=True)
    paths = {
        "torch": os.path.join(folder, "torch_snapshot.pickle"),
        "jax": os.path.join(folder, "jax_memory.prof"),
    }
    torch.cuda.memory._record_memory_history(max_entries=100_000)
    try:
        torch_step()
        torch.cuda.synchronize()
        torch.cuda.memory._dump_snapshot(paths["torch"])
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    out = jax_step()  # keep the outputs alive while the profile is taken
    jax.block_until_ready(out)
    jax.profiler.save_device_memory_profile(paths["jax"])
    return paths


# ------------------------------------------- a step's own peak, GPU or TPU


def torch_peak_above(
    step: Callable[[], Any],
    *,
    before: Callable[[], Any] | None = None,
    device: Any = None,
    cuda: Any = None,
) -> int:
    """Bytes PyTorch's CUDA allocator peaked at above what was live when ``step()`` began.

    ``before()`` runs first (e.g. ``optimizer.zero_grad(set_to_none=True)``, so
    gradients count as the step's own). The peak counter is reset just before
    the step, so nothing earlier in the process can inflate it. ``cuda``
    defaults to ``torch.cuda``.
    """
    if cuda is None:
        import torch

        cuda = torch.cuda
    if before is not None:
        before()
    cuda.synchronize(device)
    cuda.reset_peak_memory_stats(device)
    base = cuda.memory_allocated(device)
    step()
    cuda.synchronize(device)
    return int(cuda.max_memory_allocated(device)) - int(base)


def ballast_bytes(stats: dict[str, int], margin: int = 2**20) -> int:
    """Bytes to allocate so that the live bytes exceed the allocator's earlier peak.

    JAX cannot reset ``peak_bytes_in_use`` (the high-water mark since the process
    started, compilation and autotuning included); once the live bytes stand
    above it, the peak during the next step is that step's own.
    """
    return max(0, int(stats["peak_bytes_in_use"]) - int(stats["bytes_in_use"])) + margin


def peak_above(at_start: dict[str, int], after: dict[str, int]) -> int:
    """How far ``peak_bytes_in_use`` rose above the live bytes of ``at_start``.

    Exact only when, at the start, the live bytes were the high-water mark
    (:func:`ballast_bytes`); otherwise the step's own peak is hidden under an
    earlier one, and this raises rather than report it.
    """
    live, peak = int(at_start["bytes_in_use"]), int(at_start["peak_bytes_in_use"])
    if live < peak:
        raise ValueError(
            f"the live bytes ({live:,}) are below the allocator's earlier peak ({peak:,}), "
            "so the step's own peak cannot be told apart; allocate ballast_bytes() first"
        )
    return int(after["peak_bytes_in_use"]) - live


def jax_peak_above(
    step: Callable[[], Any],
    device: Any,
    *,
    allocate: Callable[[int], Any] | None = None,
) -> int:
    """Bytes JAX's allocator on ``device`` peaked at above what was live when ``step()`` began.

    A ballast buffer (:func:`ballast_bytes`, made by ``allocate(n)``; default a
    ``uint8`` array of zeros on ``device``) first lifts the live bytes above any
    earlier peak; it is freed after the step. Needs a device whose allocator
    keeps statistics (a GPU or TPU; not the CPU).
    """
    import jax

    stats = device.memory_stats()
    if not stats or "peak_bytes_in_use" not in stats:
        raise RuntimeError(
            f"{device} keeps no allocator statistics (the CPU, or "
            "XLA_PYTHON_CLIENT_ALLOCATOR=platform); the peak cannot be read"
        )
    if allocate is None:
        import jax.numpy as jnp

        def allocate(n: int) -> Any:
            return jax.block_until_ready(jnp.zeros((n,), jnp.uint8, device=device))

    ballast = allocate(ballast_bytes(stats))
    at_start = device.memory_stats()
    jax.block_until_ready(step())
    after = device.memory_stats()
    del ballast
    return peak_above(at_start, after)
