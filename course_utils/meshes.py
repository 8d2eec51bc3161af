"""Which devices a mesh gets: the accelerators when there are enough, else simulated CPUs.

Every multi-device section of the course builds its meshes over :func:`devices`:

- a machine with at least ``n`` GPUs or TPUs gives the first ``n`` of them;
- any other machine (a laptop, Colab's one-GPU or one-TPU runtimes, a workstation
  with two GPUs asked for eight) gives ``n`` simulated CPU devices, which
  ``env.setup(cpu_devices=n)`` must have asked for before JAX started.

Either way one line says which was chosen and why. ``COURSE_ACCELERATORS=N`` makes
the rule see exactly ``N`` accelerators: the first ``N`` real ones, or, on a machine
without any, the first ``N`` CPU devices standing in for them. That is how the
one-GPU and eight-GPU paths are run on a CPU-only machine.

jax is imported inside the functions.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

ACCELERATORS_VAR = "COURSE_ACCELERATORS"


def _told_count(environ: dict[str, str] | os._Environ) -> int | None:
    """The accelerator count ``COURSE_ACCELERATORS`` asks for, or None when it is unset."""
    raw = environ.get(ACCELERATORS_VAR, "").strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise ValueError(
            f"{ACCELERATORS_VAR}={raw!r}: give a whole number of accelerators "
            "(0, 1, 8, ...) or unset it"
        )
    return int(raw)


def accelerators() -> list:
    """JAX's GPU or TPU devices (``[]`` on a CPU-only machine), as the rule sees them."""
    import jax

    real = [d for d in jax.devices() if d.platform != "cpu"]
    told = _told_count(os.environ)
    if told is None:
        return real
    pool = real or jax.devices("cpu")  # CPU devices stand in where there are none
    if told > len(pool):
        raise ValueError(
            f"{ACCELERATORS_VAR}={told}, but only {len(pool)} devices can stand for "
            "accelerators here; ask for fewer"
        )
    return pool[:told]


def choose(
    n: int, accelerators: Sequence[Any], cpus: Sequence[Any]
) -> tuple[list, str]:
    """Pure rule: ``n`` devices for a mesh, and the line that says which and why."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"meshes.devices: n must be a positive int, got {n!r}")
    if len(accelerators) >= n:
        kind = _kind(accelerators[0])
        return list(accelerators[:n]), (
            f"Meshes use {n} {kind} device(s) of the {len(accelerators)} this machine has."
        )
    if len(cpus) < n:
        raise ValueError(
            f"A mesh of {n} devices needs {n} simulated CPU devices, and JAX has "
            f"{len(cpus)}: call env.setup(cpu_devices={n}) at the top of the notebook, "
            "before anything touches JAX (restart the kernel first)"
        )
    have = (
        f"{len(accelerators)} {_kind(accelerators[0])} device(s), fewer than {n}"
        if accelerators
        else "no GPU or TPU"
    )
    return list(
        cpus[:n]
    ), f"Meshes use {n} simulated CPU devices: this machine has {have}."


def _kind(device: Any) -> str:
    return {"tpu": "TPU", "cpu": "stand-in (CPU)"}.get(device.platform, "GPU")


def devices(n: int, *, verbose: bool = True) -> list:
    """``n`` devices for a mesh (see the module's rule); prints which, unless ``verbose=False``."""
    import jax

    chosen, line = choose(n, accelerators(), jax.devices("cpu"))
    if verbose:
        print(line)
    return chosen


def make(
    shape: Sequence[int], names: Sequence[str], axis_types: Sequence[Any] | None = None
) -> Any:
    """``jax.make_mesh(shape, names, axis_types)`` over :func:`devices` (``prod(shape)`` of them)."""
    import jax

    chosen = devices(math.prod(shape), verbose=False)
    if axis_types is None:
        return jax.make_mesh(tuple(shape), tuple(names), devices=chosen)
    return jax.make_mesh(tuple(shape), tuple(names), tuple(axis_types), devices=chosen)
