"""What this machine offers both frameworks: devices, threads, precision, versions.

``setup()`` at the top of every lesson prepares both frameworks; ``report()`` says
what they found. In between:

- each framework's device and the rules that choose it live in
  :mod:`course_utils.devices` and are imported back here, so lessons keep calling
  ``env.torch_device()``, ``env.jax_device()``, ``env.device_kind(...)``,
  ``env.simulate_cpu_devices(n)``;
- JAX's GPU memory policy (:func:`memory_policy`) and the environment of a child
  process that imports JAX (:func:`child_env`);
- one float32 precision in both frameworks (:func:`set_precision`, :func:`precision`;
  :func:`precision_flags` and :func:`restore_precision` put back what was set before).

No seed is set here: each lesson seeds on the page, as the course teaches (lesson 01,
explicit keys against a global generator; lesson 09, determinism).
"""

from __future__ import annotations

import os
import platform
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from course_utils.devices import (
    JaxAlreadyInitialized,
    accelerator_kind,
    choose_torch_device,
    compared_kind,
    device_kind,
    device_problem,
    jax_device,
    simulate_cpu_devices,
    torch_device,
)
from course_utils.install.frameworks import installed_version

# Lessons call these as env.*; they live in course_utils.devices.
__all__ = [
    "EnvReport",
    "JaxAlreadyInitialized",
    "MEMORY_VARS",
    "PRECISIONS",
    "Setup",
    "accelerator_kind",
    "child_env",
    "choose_torch_device",
    "compared_kind",
    "device_kind",
    "device_problem",
    "jax_device",
    "memory_policy",
    "precision",
    "precision_flags",
    "report",
    "restore_precision",
    "set_precision",
    "setup",
    "simulate_cpu_devices",
    "torch_device",
]

# ------------------------------------------- one process, two frameworks, one GPU

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


def child_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process that imports JAX (a cache demo, a Keras
    backend): ``environ`` (default ``os.environ``) with the memory policy, and
    ``JAX_PLATFORMS=cpu`` where this process already holds a TPU. Only one process at
    a time may open a TPU's chips: a second one stops at libtpu's lock
    (``Internal error when accessing libtpu multi-process lockfile``) instead of falling
    back to the CPU. Importing JAX here is left to the caller: this starts no backend.
    """
    env = dict(os.environ if environ is None else environ)
    env.update(memory_policy(env))
    if "jax" in sys.modules:
        from jax._src import xla_bridge

        if xla_bridge.backends_are_initialized():
            import jax

            if any(d.platform == "tpu" for d in jax.devices()):
                env["JAX_PLATFORMS"] = "cpu"
    return env


# ------------------------------------------------------------------- precision

# The course's precisions: (JAX's matmul precision, torch's float32 matmul precision,
# whether cuDNN may use TF32). "float32" is what parity checks and compared timings use
# on every device; "tf32" is what GPUs do by default, for lessons that show the difference.
PRECISIONS = {
    "float32": ("highest", "highest", False),
    "tf32": ("tensorfloat32", "high", True),
}


def set_precision(name: str = "float32") -> dict[str, str]:
    """Set float32 matmul and convolution precision in both frameworks; return :func:`precision`.

    ``"float32"``: full float32 everywhere (JAX ``highest``; torch ``highest`` matmuls
    and no TF32 in cuDNN convolutions). ``"tf32"``: TensorFloat-32 inputs, what
    Ampere-and-newer GPUs use by default (JAX's default on GPU; bfloat16 passes on TPU).
    No effect on CPU results, so it is safe to call everywhere.

    PyTorch's older flags (``set_float32_matmul_precision``, ``cudnn.allow_tf32``) are
    set on purpose, though torch >= 2.9 has per-backend ``fp32_precision`` flags and has
    announced the older ones' deprecation. The older setters write the new flags too
    (``cuda.matmul.fp32_precision`` becomes ``"ieee"``, cuDNN's conv and rnn ``"none"``);
    the new setters leave the older flags behind, and torch still reads those: on torch
    2.13, ``cudnn.conv.fp32_precision = "ieee"`` makes ``cudnn.allow_tf32`` raise, and
    ``torch.export.export`` with it (it calls ``cudnn.set_flags``, as torch 2.15 still
    does).
    """
    if name not in PRECISIONS:
        raise ValueError(
            f"set_precision: name must be one of {sorted(PRECISIONS)}, got {name!r}"
        )
    jax_name, torch_matmul, cudnn_tf32 = PRECISIONS[name]
    import jax
    import torch

    jax.config.update("jax_default_matmul_precision", jax_name)
    # torch.compile on a GPU advises TF32 at every compile; full float32 is chosen here.
    warnings.filterwarnings("ignore", message="TensorFloat32 tensor cores for float32")
    torch.set_float32_matmul_precision(torch_matmul)
    torch.backends.cudnn.allow_tf32 = cudnn_tf32
    return precision()


def precision_flags() -> tuple[Any, str, bool]:
    """The flags :func:`set_precision` writes, as they are now (for :func:`restore_precision`)."""
    import jax
    import torch

    return (
        jax.config.jax_default_matmul_precision,
        torch.get_float32_matmul_precision(),
        torch.backends.cudnn.allow_tf32,
    )


def restore_precision(flags: tuple[Any, str, bool]) -> None:
    """Write back what :func:`precision_flags` read."""
    import jax
    import torch

    jax.config.update("jax_default_matmul_precision", flags[0])
    torch.set_float32_matmul_precision(flags[1])
    torch.backends.cudnn.allow_tf32 = flags[2]


def precision() -> dict[str, str]:
    """What both frameworks use now for float32 matmuls/convolutions, and its course name."""
    import jax
    import torch

    jax_p = jax.config.jax_default_matmul_precision or "default"
    try:
        matmul = "ieee" if torch.get_float32_matmul_precision() == "highest" else "tf32"
        conv = "tf32" if torch.backends.cudnn.allow_tf32 else "ieee"
    except RuntimeError:  # someone set torch >= 2.9's fp32_precision flags directly
        matmul = torch.backends.cuda.matmul.fp32_precision
        conv = torch.backends.cudnn.conv.fp32_precision
    full = jax_p in ("highest", "float32") and matmul == conv == "ieee"
    tf32 = jax_p in ("tensorfloat32", "high") and matmul == conv == "tf32"
    untouched = jax_p == "default" and matmul == "ieee" and conv == "tf32"
    name = (
        "float32"
        if full
        else "tf32"
        if tf32
        else "framework defaults"
        if untouched
        else "mixed"
    )
    return {"name": name, "jax": jax_p, "torch_matmul": matmul, "torch_conv": conv}


@dataclass
class Setup:
    """What :func:`setup` chose: each framework's device, the comparison device, the precision."""

    jax_device: Any
    torch_device: Any
    precision: dict[str, str]
    memory_policy: dict[str, str]
    problem: str | None = None
    cpu_devices: list = field(
        default_factory=list
    )  # the simulated ones, when asked for
    accelerator: Any = None  # JAX's first GPU or TPU, or None on a CPU-only machine

    @property
    def compared_kind(self) -> str:
        return compared_kind(
            device_kind(self.jax_device), device_kind(self.torch_device)
        )[0]

    @property
    def jax_alone(self) -> Any:
        """The device for what shows or measures JAX alone: the accelerator, else the CPU.

        Comparisons with PyTorch run on :meth:`pair`'s devices, one kind for both;
        everything else JAX does in a lesson (jit, training, bfloat16, Pallas kernels)
        runs here: ``jax.device_put(x, SETUP.jax_alone)`` or
        ``with jax.default_device(SETUP.jax_alone):``.
        """
        return self.accelerator if self.accelerator is not None else self.jax_device

    @property
    def alone_kind(self) -> str:
        """The kind of :attr:`jax_alone` (``cpu``, ``gpu`` or ``tpu``)."""
        return device_kind(self.jax_alone)

    @property
    def alone_label(self) -> str:
        """How a row measured by JAX alone is labelled in a table of speeds.

        "JAX on the TPU, not a framework comparison" where the comparisons run on
        another kind of device; "JAX on the CPU" where they share it.
        """
        kind = self.alone_kind
        text = f"JAX on the {kind.upper()}"
        if kind != self.compared_kind:
            text += ", not a framework comparison"
        return text

    @property
    def rule(self) -> str:
        """The lesson's device rule for this machine, in one sentence."""
        both, alone = self.compared_kind.upper(), self.alone_kind.upper()
        if both == alone:
            return f"Both frameworks run on the {both}, and so does everything JAX does alone."
        return (
            f"Comparisons run both frameworks on the {both}; "
            f"what shows JAX alone runs on the {alone}."
        )

    def pair(self) -> tuple[Any, Any]:
        """``(torch_device, jax_device)`` of one kind, for anything that compares the two."""
        import jax
        import torch

        if self.compared_kind != "cpu":
            return self.torch_device, self.jax_device
        return torch.device("cpu"), jax.devices("cpu")[0]

    def line(self) -> str:
        kind, why = compared_kind(
            device_kind(self.jax_device), device_kind(self.torch_device)
        )
        text = (
            f"JAX on {device_kind(self.jax_device)}, PyTorch on "
            f"{device_kind(self.torch_device)}; comparisons on {kind}; "
            f"JAX alone on {self.alone_kind}; precision {self.precision['name']}"
        )
        return text + (f" ({why})" if why else "")


def setup(
    precision: str = "float32",
    *,
    cpu_devices: int | None = None,
    one_kind: bool = False,
    verbose: bool = True,
) -> Setup:
    """Prepare both frameworks for one lesson: call it before anything touches a device.

    1. JAX's GPU memory policy (:func:`memory_policy`), so PyTorch has room;
    2. ``cpu_devices`` simulated CPU devices for sharding lessons, if asked;
    3. JAX starts first, so it loads its CUDA libraries before PyTorch loads its own;
    4. the same float32 precision in both frameworks (:func:`set_precision`);
    5. each framework's device, checked against the other's (:func:`device_problem`);
       and the course's one thread policy (:func:`course_utils.contention.set_threads`:
       PyTorch's intra-op threads set to the cores JAX's CPU pool was sized from);
    6. with ``one_kind``, for lessons that compare the frameworks: where they have
       different device kinds (a TPU, where PyTorch stays on the CPU), JAX's default
       device becomes the CPU, so comparisons run both on it, and a line says so; what
       shows JAX alone still runs on the accelerator, :attr:`Setup.jax_alone`;
    7. in IPython, every matplotlib figure the lesson shows carries its description
       (:func:`course_utils.plots.describe`) as its image's alt text.
    """
    from jax._src import xla_bridge  # importing jax starts no backend

    policy = {}
    if not xla_bridge.backends_are_initialized():
        policy = memory_policy(os.environ)
        os.environ.update(policy)
    simulated = simulate_cpu_devices(cpu_devices) if cpu_devices is not None else []
    import jax

    jax_dev = jax.devices()[0]
    accelerator = jax_dev if jax_dev.platform != "cpu" else None
    import torch

    torch_dev = torch_device(verbose=verbose)
    from course_utils.contention import set_threads

    set_threads()
    prec = set_precision(precision)
    problem = device_problem(
        device_kind(jax_dev),
        device_kind(torch_dev),
        torch_cuda=torch.version.cuda,
        jax_cuda_plugin=_jax_cuda_plugin() is not None,
    )
    if problem and verbose:
        print(f"WARNING: {problem}")
    kind, why = compared_kind(device_kind(jax_dev), device_kind(torch_dev))
    if one_kind and why:
        jax_dev = jax.devices("cpu")[0]
        jax.config.update("jax_default_device", jax_dev)
        torch_dev = torch.device("cpu")
    chosen = Setup(jax_dev, torch_dev, prec, policy, problem, simulated, accelerator)
    if one_kind and why and verbose:
        print(chosen.rule)
    from course_utils.plots import describe_figures

    describe_figures()
    return chosen


def _jax_cuda_plugin() -> str | None:
    """The installed jax CUDA plugin's distribution name, if any."""
    for major in (13, 12):
        if installed_version(f"jax-cuda{major}-plugin"):
            return f"jax-cuda{major}-plugin"
    return None


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
        text = (
            f"jax {i.get('jax')} on {i.get('jax_devices')} | torch {i.get('torch')} on "
            f"{i.get('torch_device')} | accelerator: {i.get('accelerator')} | "
            f"precision: {i.get('precision')} | smoke mode: {i.get('smoke_mode')}"
        )
        if i.get("device_problem"):
            text += f"\nWARNING: {i['device_problem']}"
        return text


def report(include_frameworks: bool = True) -> EnvReport:
    """Versions, devices, accelerator kind, threads and precision of both frameworks.

    Each framework's device is reported on its own; ``device_problem`` says, with the
    fix, when they sit on different kinds (PyTorch on the GPU and JAX on the CPU, or
    the reverse).
    """
    from course_utils.config import smoke

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpu_count": os.cpu_count(),
    }
    for dist in ("jax", "jaxlib", "flax", "optax", "torch"):
        info[dist] = installed_version(dist)
    info["smoke_mode"] = smoke()
    if include_frameworks and info["jax"]:
        _report_jax(info)
    if include_frameworks and info["torch"]:
        _report_torch(info)
    if include_frameworks and info["jax"] and info["torch"]:
        _report_both(info)
    info["jax_cuda_plugin"] = _jax_cuda_plugin()
    info.setdefault("accelerator", "cpu")
    for var in (
        "OMP_NUM_THREADS",
        "XLA_FLAGS",
        "JAX_PLATFORMS",
        "CUDA_VISIBLE_DEVICES",
        *MEMORY_VARS,
    ):
        if var in os.environ:
            info[var] = os.environ[var]
    info["in_colab"] = "google.colab" in sys.modules
    return EnvReport(info)


def _report_jax(info: dict[str, Any]) -> None:
    """JAX's part of :func:`report`: backend, devices, matmul precision."""
    import jax

    devices = jax.devices()
    info["jax_backend"] = jax.default_backend()
    info["jax_devices"] = f"{len(devices)} x {devices[0].device_kind}"
    info["accelerator"] = accelerator_kind(jax.default_backend())
    info["jax_device_kind"] = device_kind(devices[0])
    info["jax_matmul_precision"] = jax.config.jax_default_matmul_precision or "default"


def _report_torch(info: dict[str, Any]) -> None:
    """PyTorch's part of :func:`report`: device, CUDA build, threads, matmul precision."""
    import torch

    dev = torch_device(verbose=False)
    info["torch_device"] = str(dev)
    if dev.type == "cuda":
        info["torch_gpu"] = torch.cuda.get_device_name(0)
    info["torch_device_kind"] = device_kind(dev)
    info["torch_cuda"] = torch.version.cuda
    info["torch_threads"] = torch.get_num_threads()
    info["torch_float32_matmul_precision"] = torch.get_float32_matmul_precision()
    if info.get("accelerator", "cpu") == "cpu" and dev.type != "cpu":
        info["accelerator"] = "gpu" if dev.type in ("cuda", "mps") else dev.type


def _report_both(info: dict[str, Any]) -> None:
    """What :func:`report` says of the pair: precision, comparison device, any problem."""
    prec = precision()
    info["precision"] = (
        f"{prec['name']} (jax {prec['jax']}, torch matmul {prec['torch_matmul']}, "
        f"conv {prec['torch_conv']})"
    )
    info["compared_on"] = compared_kind(
        info["jax_device_kind"], info["torch_device_kind"]
    )[0]
    info["device_problem"] = device_problem(
        info["jax_device_kind"],
        info["torch_device_kind"],
        torch_cuda=info["torch_cuda"],
        jax_cuda_plugin=_jax_cuda_plugin() is not None,
    )
