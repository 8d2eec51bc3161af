"""How long each item of ``course check-device`` should take, and what it holds while it runs.

The scheduler (:mod:`~course_utils.tooling.device_check.schedule`) plans with these numbers
before anything has run, and the check replaces a full-mode lesson's number with one
from its smoke run as soon as that run ends (:func:`full_estimate`, the ratio rule of
:func:`course_utils.tooling.device_check.budget.estimate`).

Where each number in :data:`SMOKE_S` and :data:`FULL_S` comes from:

- **Measured on the H200** (docs/device-reports/2026-11-30-nvidia-h200-{a,b,c}.json,
  ``seconds`` of each lesson's smoke entry, taken with two or three checks sharing the
  GPU): lessons 00-07. Lesson 06 is the time to its failing cell 94, near its end.
- **Lesson 08**: stopped there by the budget after 125.9 s (``course claims`` in smoke
  mode was most of it); the table keeps 126 s, a floor, although the claims in smoke mode
  have measured only the accelerator since.
- **No measurement on a GPU** (lessons 09-12): the CPU budget of docs/AUTHORING.md
  ("Time budgets", 2-core CPU, smoke mode), :data:`DEFAULT_SMOKE_S` (lessons 11 and 12:
  :data:`DEFAULT_SMOKE_LONG_S`). The H200's smoke times above sit near that budget
  (35-85 s against 60 s), since imports and compilation dominate smoke mode.
- **Full mode**: no lesson has a full-mode time on a GPU, so full mode is the smoke time
  times :data:`~course_utils.tooling.device_check.budget.FULL_OVER_SMOKE` (4, the check's
  rule before any lesson has run in both modes). Lesson 11 is the exception: before it
  was split in two, its full run took :data:`FULL_11_S` on the 2-core CPU at a load of
  about 1, the only full-mode time the course records on a quiet machine. (The run whose
  numbers it ships, ``course_utils/full_runs/``, took 1,844 s at a load of 16.)
- **Masters and student notebooks** (``solutions/``, ``exercises/``): never timed on a
  GPU; docs/AUTHORING.md's smoke budget for masters, :data:`DEFAULT_SMOKE_S`, for both
  (a student notebook stops at its stubs, so that is an upper bound).
- **Notebook tests** (nbval, one notebook per child): the notebook's smoke time plus
  :data:`PYTEST_START_S` for pytest and nbval to start (nbval runs the same cells).
- **course claims** (smoke mode, the accelerator only): :data:`CLAIMS_S`, the 95 s
  smoke-mode claims took inside lesson 08 on the H200 (CPU and GPU rows then).
- **course doctor**: :data:`DOCTOR_S`, 9.3 s in report a. **install**:
  :data:`INSTALL_S`, a stated default (the H200 runs skipped it).

What each item holds while it runs (:func:`cores`, :func:`gpu_gib`) is a reservation,
not a measurement: one core per child (smoke mode on a GPU spends its CPU time in
single-threaded tracing and compiling), two for the lessons that launch several
processes or simulate eight devices (05, 12); GPU memory of :data:`GPU_GIB` per child by
kind (JAX allocates as it goes, so nothing is taken before it is used).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course_utils.tooling.device_check.budget import FULL_OVER_SMOKE, estimate

DEFAULT_SMOKE_S = 60.0  # docs/AUTHORING.md: lessons and masters, smoke mode, 2-core CPU
DEFAULT_SMOKE_LONG_S = 120.0  # docs/AUTHORING.md: lessons 05, 11 and 12
FULL_11_S = 417.0  # lesson 11's full run on the quiet 2-core CPU, before the split
PYTEST_START_S = 10.0  # pytest, its plugins and nbval, before the first cell
CLAIMS_S = 95.0  # course claims --smoke inside lesson 08 on the H200 (report c)
DOCTOR_S = 9.3  # course doctor on the H200 (report a)
INSTALL_S = 60.0  # stated default: no install step has been timed on a GPU machine

# Seconds per lesson in smoke mode (see the module's docstring for each source).
SMOKE_S: dict[str, float] = {
    "00": 40.3,  # H200, report a
    "01": 39.2,  # H200, report b
    "02": 78.4,  # H200, report b
    "03": 84.9,  # H200, report a
    "04": 64.1,  # H200, report b
    "05": 35.4,  # H200, report a
    "06": 61.4,  # H200, report c (to its failing cell 94)
    "07": 62.3,  # H200, report c
    "08": 126.0,  # H200, report c: stopped by the budget at 125.9 s (a floor)
    "09": DEFAULT_SMOKE_S,  # not run on a GPU: AUTHORING's CPU budget
    "10": DEFAULT_SMOKE_S,  # not run on a GPU: AUTHORING's CPU budget
    "11": DEFAULT_SMOKE_LONG_S,  # not run on a GPU: AUTHORING's CPU budget
    "12": DEFAULT_SMOKE_LONG_S,  # not run on a GPU: AUTHORING's CPU budget
}

# Seconds per lesson in full mode: FULL_OVER_SMOKE times the smoke time, but lesson 11.
FULL_S: dict[str, float] = {
    **{k: round(v * FULL_OVER_SMOKE, 1) for k, v in SMOKE_S.items()},
    "11": FULL_11_S,  # 2-core CPU, full mode (the only full-mode time recorded)
}

MULTI_PROCESS = {"05": 2, "12": 2}  # cores: torchrun workers, 8 simulated JAX devices
GPU_GIB: dict[str, float] = {
    "smoke": 4.0,
    "full": 8.0,
    "master": 4.0,
    "student": 4.0,
    "tests": 4.0,
    "claims": 16.0,  # the GPT-2-small training shape of train-throughput
    "doctor": 1.0,
}
FULL_GIB_LARGE = {"11": 16.0, "12": 16.0}  # the capstone GPT in full mode


def seconds(kind: str, lesson: str | None = None) -> float:
    """The shipped estimate for one item: ``kind`` as in :data:`GPU_GIB`."""
    if kind == "claims":
        return CLAIMS_S
    if kind == "doctor":
        return DOCTOR_S
    if kind == "install":
        return INSTALL_S
    if kind == "full":
        return FULL_S.get(lesson or "", DEFAULT_SMOKE_S * FULL_OVER_SMOKE)
    if kind in ("master", "student"):
        return DEFAULT_SMOKE_S
    if kind == "smoke":
        return SMOKE_S.get(lesson or "", DEFAULT_SMOKE_S)
    raise ValueError(f"no estimate for an item of kind {kind!r}")


def tests_seconds(kind: str, lesson: str) -> float:
    """The notebook tests of one lesson (``kind`` ``smoke``) or master (``master``)."""
    return round(seconds(kind, lesson) + PYTEST_START_S, 1)


def cores(kind: str, lesson: str | None = None) -> int:
    """Cores an item holds while it runs."""
    if kind in ("smoke", "full", "tests"):
        return MULTI_PROCESS.get(lesson or "", 1)
    return 1


def gpu_gib(kind: str, lesson: str | None = None) -> float:
    """GPU memory (GiB) an item is counted as holding while it runs."""
    if kind == "full":
        return FULL_GIB_LARGE.get(lesson or "", GPU_GIB["full"])
    return GPU_GIB[kind]


def full_estimate(notebooks: list[dict[str, Any]], name: str, shipped: float) -> float:
    """A full-mode lesson's estimate now: from its smoke run once that ended, else ``shipped``."""
    got = estimate(notebooks, name)
    return shipped if got is None else got


def table() -> Mapping[str, Mapping[str, float]]:
    """Every lesson's shipped seconds by kind, as docs/DEVICE_CHECK.md shows them."""
    return {
        n: {
            "smoke": SMOKE_S[n],
            "full": FULL_S[n],
            "master": seconds("master", n),
            "student": seconds("student", n),
        }
        for n in SMOKE_S
    }
