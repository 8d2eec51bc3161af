"""Which device kinds the claims are measured on, and why a claim cannot be measured on one.

Every claim is measured once per **device kind**: on the CPU, and on the
accelerator when one is present (a GPU or a TPU), with both frameworks on the
same kind of device, or a "not testable here" outcome that says why they cannot
be (:func:`why_not_testable`). :func:`plan_devices` is the pure decision;
:func:`detect_devices` feeds it from ``jax.devices()`` and
``torch.cuda.is_available()`` (importing both frameworks only when called).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from course_utils.errors import CourseError

DEVICE_CHOICES = ("all", "cpu", "accelerator", "auto")
FRAMEWORK_NAMES = {"jax": "JAX", "torch": "PyTorch"}


@dataclass(frozen=True)
class DeviceTarget:
    """One device kind the claims run on, and which framework can reach it.

    ``kind`` is ``cpu``, ``gpu`` or ``tpu``; ``jax`` says whether JAX has a
    device of that kind, ``torch`` is the torch device type there (``cpu``,
    ``cuda``) or None, and ``missing`` says, per framework without one, why.
    """

    kind: str
    name: str = ""
    jax: bool = True
    torch: str | None = "cpu"
    missing: dict[str, str] = field(default_factory=dict)

    def has(self, framework: str) -> bool:
        return self.jax if framework == "jax" else self.torch is not None


@dataclass
class DevicePlan:
    """The device kinds to measure on, and a note for the report (e.g. no accelerator)."""

    targets: list[DeviceTarget]
    note: str = ""
    accelerator_present: bool = False


def _missing_reason(framework: str, kind: str, *, torch_tpu_package: bool) -> str:
    if framework == "torch" and kind == "tpu":
        if torch_tpu_package:
            return (
                "PyTorch reaches a TPU only through torch_xla or TorchTPU (torch_tpu), "
                "and these benchmarks are written for neither"
            )
        return (
            "PyTorch reaches a TPU only through torch_xla or TorchTPU (torch_tpu, beta, "
            "Python 3.12 and newer), and neither is installed"
        )
    if framework == "torch" and kind == "gpu":
        return (
            "PyTorch sees no CUDA GPU (torch.cuda.is_available() is False: a CPU "
            "build of torch, or a driver it cannot use)"
        )
    if framework == "jax" and kind == "gpu":
        return (
            "JAX sees no GPU (jax.devices() lists none: jax is installed without its "
            'CUDA plugin; pip install "jax[cuda13]" matches torch\'s CUDA 13 build)'
        )
    if kind == "cpu":
        return f"{FRAMEWORK_NAMES[framework]} was started without its CPU backend"
    return f"{FRAMEWORK_NAMES[framework]} has no {kind.upper()} device here"


def plan_devices(
    requested: str,
    *,
    jax_kinds: Iterable[str],
    torch_kinds: Iterable[str],
    names: Mapping[str, str] | None = None,
    torch_tpu_package: bool = False,
) -> DevicePlan:
    """Which device kinds to measure on (pure; :func:`detect_devices` feeds it).

    ``requested`` is ``all`` (the CPU, then every accelerator present), ``cpu``,
    ``accelerator``, or ``auto`` (the accelerators when there are any, else the CPU). ``jax_kinds`` / ``torch_kinds`` are the device kinds
    each framework reaches (``cpu``, ``gpu``, ``tpu``); ``torch_tpu_package``
    whether torch_xla or TorchTPU is installed (either only changes the reason
    PyTorch gives for a TPU). An accelerator only one framework reaches is still
    a target: single-framework claims run there, and paired ones say why they
    cannot.
    """
    if requested not in DEVICE_CHOICES:
        raise CourseError(
            f"--device must be one of {', '.join(DEVICE_CHOICES)}, got {requested!r}"
        )
    jax_kinds, torch_kinds = set(jax_kinds), set(torch_kinds)
    names = dict(names or {})
    order = ("gpu", "tpu")
    accelerators = [k for k in order if k in jax_kinds | torch_kinds]
    accelerators += sorted((jax_kinds | torch_kinds) - set(order) - {"cpu"})
    if requested == "auto":
        requested = "accelerator" if accelerators else "cpu"
    kinds = (["cpu"] if requested in ("all", "cpu") else []) + (
        accelerators if requested in ("all", "accelerator") else []
    )
    note = ""
    if not accelerators:
        seen = "JAX sees only the CPU and torch.cuda.is_available() is False"
        if requested == "accelerator":
            raise CourseError(
                f"--device accelerator: no accelerator is present ({seen}); "
                "use --device cpu or all"
            )
        note = f"no accelerator was present ({seen}): measured on the CPU only"
    targets = []
    for kind in kinds:
        missing = {
            fw: _missing_reason(fw, kind, torch_tpu_package=torch_tpu_package)
            for fw, reach in (("jax", jax_kinds), ("torch", torch_kinds))
            if kind not in reach
        }
        torch_type = (
            None if kind not in torch_kinds else ("cuda" if kind == "gpu" else kind)
        )
        targets.append(
            DeviceTarget(
                kind, names.get(kind, ""), kind in jax_kinds, torch_type, missing
            )
        )
    return DevicePlan(targets, note, bool(accelerators))


def why_not_testable(
    target: DeviceTarget,
    frameworks: Sequence[str],
    only_on: Sequence[str] = (),
    only_why: str = "",
) -> str | None:
    """Why a claim cannot be measured on ``target`` (None when it can).

    ``frameworks`` are those the benchmark uses; a claim measured only on some
    device kinds names them in ``only_on``, with the reason in ``only_why``.
    Two frameworks must both reach the target: they are compared on the same
    device kind or not at all.
    """
    if only_on and target.kind not in only_on:
        kinds = " or ".join(k.upper() for k in only_on)
        return f"measured on the {kinds} only" + (f": {only_why}" if only_why else "")
    absent = [fw for fw in frameworks if not target.has(fw)]
    if not absent:
        return None
    reasons = "; ".join(
        target.missing.get(fw, f"{FRAMEWORK_NAMES[fw]} has no device here")
        for fw in absent
    )
    if len(frameworks) > 1:
        return (
            f"both frameworks must run on the same device kind ({target.kind.upper()}), "
            f"but {reasons}"
        )
    return reasons


def detect_devices(requested: str = "all") -> DevicePlan:
    """The device kinds to measure on: ``jax.devices()`` and ``torch.cuda.is_available()``."""
    import importlib.util

    import jax

    from course_utils.devices import accelerator_kind

    jax_kinds: set[str] = set()
    names: dict[str, str] = {}
    with contextlib.suppress(RuntimeError):  # JAX_PLATFORMS may leave the CPU out
        jax.devices("cpu")
        jax_kinds.add("cpu")
    default = jax.devices()[0]
    kind = accelerator_kind(default.platform)
    if kind != "cpu":
        jax_kinds.add(kind)
        names[kind] = str(default.device_kind)
    torch_kinds: set[str] = set()
    try:
        import torch
    except ImportError:  # pragma: no cover - the course installs torch
        pass
    else:
        torch_kinds.add("cpu")
        if torch.cuda.is_available():
            torch_kinds.add("gpu")
            if "gpu" not in names:
                names["gpu"] = torch.cuda.get_device_name(0)
    return plan_devices(
        requested,
        jax_kinds=jax_kinds,
        torch_kinds=torch_kinds,
        names=names,
        torch_tpu_package=any(
            importlib.util.find_spec(m) is not None for m in ("torch_xla", "torch_tpu")
        ),
    )
