"""Where each framework runs, and why: the pure rules behind :mod:`course_utils.env`.

Each rule takes plain facts (backend names, device kinds, flags, an environment
mapping) and returns a decision, so every machine the course meets can be tested
on any machine. :mod:`course_utils.env` gathers the facts and applies the rules;
lessons reach these names through ``env`` (``env.device_kind``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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

    Order: CUDA (or ROCm, which torch also calls ``cuda``), then Apple's MPS, then
    the CPU. On a TPU machine PyTorch stays on the CPU even with torch_xla
    installed: no lesson is written for torch_xla (its lazy tensors need their own
    synchronisation, ``torch.compile`` backend and DLPack rules), so using it
    silently would break lessons and time tracing instead of computing.
    """
    if cuda:
        return "cuda", None
    if tpu:
        why = (
            "torch_xla is installed, but no lesson is written for it"
            if has_torch_xla
            else "PyTorch reaches TPUs only through torch_xla, which is not installed"
        )
        return (
            "cpu",
            f"PyTorch stays on the CPU on this TPU machine ({why}); JAX uses the TPU.",
        )
    if mps:
        return "mps", None
    return "cpu", None


# ------------------------------------------- one process, two frameworks, one device

# JAX's GPU memory settings; a user who set any of them keeps their choice.
MEMORY_VARS = (
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
)


def memory_policy(environ: Mapping[str, str]) -> dict[str, str]:
    """Environment variables to add so JAX shares a GPU with PyTorch and other JAX processes.

    By default JAX takes 75 % of GPU memory at its first operation, leaving PyTorch a
    quarter and a second JAX process (a cache demo, a test worker) too little to start.
    Without preallocation JAX allocates as it goes, like PyTorch's caching allocator.
    """
    if any(var in environ for var in MEMORY_VARS):
        return {}
    return {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


def device_kind(device: Any) -> str:
    """``cpu``, ``gpu``, ``tpu`` or ``mps`` for a jax Device or a torch.device."""
    kind = getattr(device, "platform", None) or getattr(device, "type", "cpu")
    return {"cuda": "gpu", "rocm": "gpu", "xla": "tpu"}.get(kind, kind)


def device_problem(
    jax_kind: str,
    torch_kind: str,
    *,
    torch_cuda: str | None = None,
    jax_cuda_plugin: bool = False,
) -> str | None:
    """Why the two frameworks sit on different device kinds, with the fix; None when fine.

    ``torch_cuda`` is ``torch.version.cuda`` (None for a CPU build); ``jax_cuda_plugin``
    whether a ``jax-cudaNN-plugin`` is installed. A TPU with PyTorch on the CPU, and
    Apple's MPS with JAX on the CPU, are expected and fine.
    """
    if jax_kind == torch_kind or (jax_kind, torch_kind) in (
        ("tpu", "cpu"),
        ("cpu", "mps"),
    ):
        return None
    if jax_kind == "gpu" and torch_kind == "cpu":
        if torch_cuda:
            return (
                f"JAX uses the GPU but PyTorch (a CUDA {torch_cuda} build) cannot: the NVIDIA "
                "driver is probably older than that CUDA version needs. Fix: update the "
                "driver, or install the PyTorch build for the driver's CUDA version "
                "(`python course_utils/tooling/install.py` picks it)."
            )
        return (
            "JAX uses the GPU but PyTorch is a CPU-only build. Fix: `pip uninstall -y torch` "
            "then `make install` (or `python course_utils/tooling/install.py`), which installs "
            "PyTorch's CUDA build on a machine with an NVIDIA GPU; then restart the kernel."
        )
    if jax_kind == "cpu" and torch_kind == "gpu":
        if jax_cuda_plugin:
            return (
                "PyTorch uses the GPU but JAX started on the CPU although its CUDA plugin is "
                "installed: it could not load CUDA, often because PyTorch loaded other CUDA "
                "libraries first. Fix: restart the kernel and call `env.setup()` before "
                "anything imports torch; `python -c \"import jax; jax.devices('gpu')\"` "
                "shows JAX's own error."
            )
        major = (torch_cuda or "13").split(".")[0]
        return (
            "PyTorch uses the GPU but JAX is a CPU-only install. Fix: "
            f'`pip install -U "jax[cuda{major}]"` (the CUDA major version of PyTorch\'s '
            "build, so both share one set of CUDA libraries), then restart the kernel."
        )
    return f"JAX is on the {jax_kind} and PyTorch on the {torch_kind}."


def compared_kind(jax_kind: str, torch_kind: str) -> tuple[str, str | None]:
    """The device kind where a JAX-vs-PyTorch comparison runs, and why when it is the CPU.

    Compared variants always share a device kind: both on the accelerator when both
    frameworks have it, otherwise both on the CPU.
    """
    if jax_kind == torch_kind:
        return jax_kind, None
    return "cpu", (
        f"JAX has the {jax_kind} and PyTorch the {torch_kind}: comparisons run both "
        "frameworks on the CPU"
    )
