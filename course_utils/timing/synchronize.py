"""Waiting for every output, and where the outputs live.

JAX dispatches asynchronously (on CPU too) and PyTorch queues kernels on CUDA,
XLA and MPS, so a clock stopped when a call returns measures the dispatch, not the
work: :func:`sync` waits for every jax array and torch tensor in a pytree.
:func:`device_kinds` names the device kinds holding a result, and
:func:`mixed_devices` warns when compared variants ran on different kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course_utils._trees import is_jax_array, is_torch_tensor, leaves_with_paths


def sync(x: Any) -> Any:
    """Wait until every jax array and torch tensor in ``x`` is computed; return ``x``.

    JAX dispatches asynchronously (on CPU too), so a function returning a jax
    array returns before the work is done. PyTorch on CUDA, XLA or MPS queues
    kernels the same way. Numpy arrays and Python values need nothing.
    """
    torch_devices: dict[tuple[str, int | None], Any] = {}
    for _, leaf in leaves_with_paths(x):
        if is_jax_array(leaf):
            leaf.block_until_ready()
        elif is_torch_tensor(leaf):
            torch_devices.setdefault((leaf.device.type, leaf.device.index), leaf.device)
    for (kind, _), device in torch_devices.items():
        _torch_synchronize(kind, device)
    return x


def _torch_synchronize(kind: str, device: Any = None) -> None:
    """Wait for the queue of one torch device (each GPU has its own)."""
    if kind == "cpu":
        return
    import torch

    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
    elif kind == "xla":  # pragma: no cover - needs torch_xla
        import torch_xla.core.xla_model as xm

        xm.wait_device_ops()
    elif hasattr(torch, "accelerator"):
        torch.accelerator.synchronize()


def device_kinds(x: Any) -> str:
    """The device kinds holding the arrays in ``x``: ``cpu``, ``gpu``, ``tpu``, ``mps``, ``host``.

    ``host`` means no jax array or torch tensor (NumPy, Python values).
    """
    kinds = set()
    for _, leaf in leaves_with_paths(x):
        if is_jax_array(leaf):
            kinds.update(d.platform for d in leaf.devices())
        elif is_torch_tensor(leaf):
            kinds.add(leaf.device.type)
    names = {"cuda": "gpu", "rocm": "gpu", "xla": "tpu"}
    return "+".join(sorted({names.get(k, k) for k in kinds})) or "host"


def mixed_devices(devices: Mapping[str, str]) -> str | None:
    """A warning when compared variants ran on different device kinds, else None."""
    kinds = {k for k in devices.values() if k != "host"}
    if len(kinds) <= 1:
        return None
    where = ", ".join(f"{n}: {k}" for n, k in devices.items())
    return (
        f"the variants ran on different device kinds ({where}): their ratio compares "
        "devices, not frameworks; put both on one kind (env.setup().pair())"
    )
