"""A training step's own peak on a GPU or TPU, read from each framework's allocator.

The allocators' peak counters remember the whole process (compilation,
autotuning, earlier steps). :func:`torch_peak_above` resets PyTorch's counter
just before the step; JAX's counter cannot be reset, so :func:`jax_peak_above`
first lifts the live bytes above the earlier peak with a ballast buffer
(:func:`ballast_bytes`) and then reads how far the peak rose
(:func:`peak_above`). Lessons reach these through :mod:`course_utils.memory`.

Importing this module imports neither framework.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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
