"""What this machine offers both frameworks: versions, devices, threads, precision."""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def tpu_present() -> bool:
    """Whether this looks like a TPU host (Colab/Cloud TPU), without importing jax."""
    return bool(
        os.environ.get("COLAB_TPU_ADDR")
        or os.environ.get("TPU_NAME")
        or os.environ.get("TPU_ACCELERATOR_TYPE")
        or os.path.exists("/dev/accel0")
        or os.path.exists("/dev/vfio/0")
    )


def accelerator_kind(jax_backend: str) -> str:
    """Map JAX's backend name to ``cpu``, ``gpu`` or ``tpu``."""
    backend = jax_backend.lower()
    if backend in ("gpu", "cuda", "rocm"):
        return "gpu"
    if backend == "tpu":
        return "tpu"
    return "cpu"


def choose_torch_device(
    *, cuda: bool, mps: bool, tpu: bool, has_torch_xla: bool
) -> tuple[str, str | None]:
    """Pure decision: which torch device to use, and a message when falling back.

    Order: CUDA (or ROCm, which torch also calls ``cuda``), then a TPU through
    torch_xla, then Apple's MPS, then the CPU.
    """
    if cuda:
        return "cuda", None
    if tpu and has_torch_xla:
        return "xla", None
    if tpu:
        return "cpu", (
            "PyTorch uses the CPU here: this is a TPU machine, but PyTorch reaches TPUs "
            "only through torch_xla, which is not installed (JAX uses the TPU natively)."
        )
    if mps:
        return "mps", None
    return "cpu", None


def torch_device(verbose: bool = True):
    """The best torch device: CUDA GPU, TPU via torch_xla, Apple MPS, else CPU."""
    import importlib.util

    import torch

    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    kind, message = choose_torch_device(
        cuda=torch.cuda.is_available(),
        mps=mps,
        tpu=tpu_present(),
        has_torch_xla=importlib.util.find_spec("torch_xla") is not None,
    )
    if message and verbose:
        print(message)
    if kind == "xla":  # pragma: no cover - needs torch_xla
        import torch_xla

        return torch_xla.device()
    return torch.device(kind)


def jax_device():
    """JAX's default device: the first GPU or TPU when present, else the CPU."""
    import jax

    return jax.devices()[0]


class JaxAlreadyInitialized(RuntimeError):
    """JAX's backends were created before the simulated device count could be set."""


def simulate_cpu_devices(n: int) -> list:
    """Give JAX ``n`` CPU devices (for sharding lessons on a one-CPU machine).

    Must run before JAX creates its backends (the first ``jax.devices()`` or
    array). Raises :class:`JaxAlreadyInitialized` when JAX was already started
    with fewer CPU devices; restart the kernel and call this first.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"simulate_cpu_devices: n must be a positive int, got {n!r}")
    import jax
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        have = len(jax.devices("cpu"))
        if have >= n:
            return jax.devices("cpu")[:n]
        raise JaxAlreadyInitialized(
            f"JAX is already running with {have} CPU device(s), so {n} cannot be "
            "simulated any more. Restart the kernel and call "
            f"simulate_cpu_devices({n}) before anything else touches JAX."
        )
    jax.config.update("jax_num_cpu_devices", n)
    return jax.devices("cpu")[:n]


@dataclass
class EnvReport:
    """What :func:`report` found; shows as a table in a notebook."""

    info: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.info[key]

    def rows(self) -> list[tuple[str, str]]:
        return [(k, str(v)) for k, v in self.info.items()]

    def _repr_markdown_(self) -> str:
        lines = ["| | |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in self.rows()]
        return "\n".join(lines)

    def __str__(self) -> str:
        width = max(len(k) for k, _ in self.rows())
        return "\n".join(f"{k:<{width}}  {v}" for k, v in self.rows())

    def line(self) -> str:
        """One line for the top of a notebook."""
        i = self.info
        return (
            f"jax {i.get('jax')} on {i.get('jax_devices')} | torch {i.get('torch')} on "
            f"{i.get('torch_device')} | accelerator: {i.get('accelerator')} | "
            f"smoke mode: {i.get('smoke_mode')}"
        )


def report(include_frameworks: bool = True) -> EnvReport:
    """Versions, devices, accelerator kind, threads and matmul precision of both frameworks."""
    from course_utils.config import smoke

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpu_count": os.cpu_count(),
    }
    for dist in ("jax", "jaxlib", "flax", "optax", "torch"):
        info[dist] = _version(dist)
    info["smoke_mode"] = smoke()
    if include_frameworks and info["jax"]:
        import jax

        devices = jax.devices()
        info["jax_backend"] = jax.default_backend()
        info["jax_devices"] = f"{len(devices)} x {devices[0].device_kind}"
        info["accelerator"] = accelerator_kind(jax.default_backend())
        info["jax_matmul_precision"] = jax.config.jax_default_matmul_precision or "default"
    if include_frameworks and info["torch"]:
        import torch

        dev = torch_device(verbose=False)
        info["torch_device"] = str(dev)
        if dev.type == "cuda":
            info["torch_gpu"] = torch.cuda.get_device_name(0)
        info["torch_threads"] = torch.get_num_threads()
        info["torch_float32_matmul_precision"] = torch.get_float32_matmul_precision()
        if info.get("accelerator", "cpu") == "cpu" and dev.type != "cpu":
            info["accelerator"] = "gpu" if dev.type in ("cuda", "mps") else dev.type
    info.setdefault("accelerator", "cpu")
    for var in ("OMP_NUM_THREADS", "XLA_FLAGS", "JAX_PLATFORMS", "CUDA_VISIBLE_DEVICES"):
        if var in os.environ:
            info[var] = os.environ[var]
    info["in_colab"] = "google.colab" in sys.modules
    return EnvReport(info)
