"""Which device each framework uses, and the rules that decide it.

Lessons reach these through :mod:`course_utils.env` (``env.torch_device()``,
``env.jax_device()``, ``env.device_kind(...)``), which imports them back from here;
``env.setup()`` applies them.

- each framework's device (:func:`torch_device`, :func:`jax_device`) and JAX's
  simulated CPU devices (:func:`simulate_cpu_devices`);
- the rules, pure functions of plain facts (backend names, device kinds, flags), so
  that every machine the course meets can be tested on any machine: which torch device
  (:func:`choose_torch_device`), the kind of a device or a JAX backend
  (:func:`device_kind`, :func:`accelerator_kind`), where comparisons run
  (:func:`compared_kind`), what is wrong and its fix (:func:`device_problem`);
- whether this is a TPU host is :func:`course_utils.install.frameworks.tpu_present`
  (and an NVIDIA GPU :func:`~course_utils.install.frameworks.nvidia_gpu_present`), the
  rules the installer applies too.
"""

from __future__ import annotations

from typing import Any

from course_utils.install.frameworks import tpu_present

# ---------------------------------------------------------------- the rules


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
    silently would break lessons and time tracing instead of computing. TorchTPU
    (``torch_tpu``, beta, Python 3.12 and newer), which is replacing torch_xla, is not
    used either: no lesson is written for it.
    """
    if cuda:
        return "cuda", None
    if tpu:
        why = (
            "torch_xla is installed, but no lesson is written for it"
            if has_torch_xla
            else "no lesson is written for PyTorch on a TPU, through torch_xla or "
            "TorchTPU"
        )
        return (
            "cpu",
            f"PyTorch stays on the CPU on this TPU machine ({why}); JAX uses the TPU.",
        )
    if mps:
        return "mps", None
    return "cpu", None


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
                "(`python course_utils/install/frameworks.py plan` names it)."
            )
        return (
            "JAX uses the GPU but PyTorch is a CPU-only build. Fix: `pip uninstall -y torch` "
            "then `make install` (or `python course_utils/install/frameworks.py`), which installs "
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


# ------------------------------------------------- each framework's device


def torch_device(verbose: bool = True):
    """The best torch device: CUDA GPU, Apple MPS, else the CPU (also on a TPU machine)."""
    import importlib.util

    import torch

    mps = bool(
        getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
    )
    kind, message = choose_torch_device(
        cuda=torch.cuda.is_available(),
        mps=mps,
        tpu=tpu_present(),
        has_torch_xla=importlib.util.find_spec("torch_xla") is not None,
    )
    if message and verbose:
        print(message)
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
