"""Test-session setup shared by unit tests and notebook tests (nbval).

Kernels that nbval starts inherit this process's environment, so smoke mode
and strict framework deprecations are set here, before any kernel starts
(matplotlib picks a headless backend by itself; kernels use the inline one).
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

os.environ.setdefault("COURSE_SMOKE", "1")
os.environ.setdefault("PYTHONUNBUFFERED", "1")
# Two test workers share two cores: one OpenMP thread per process keeps torch's
# multi-threaded kernels from oversubscribing the machine (100x slowdowns seen).
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The mesh rule (course_utils.meshes) sees exactly one accelerator: every multi-device
# section runs as it does on Colab's one-GPU or one-TPU runtimes, on simulated CPUs.
os.environ.setdefault("COURSE_ACCELERATORS", "1")


def _share_the_gpu() -> None:
    # Two workers and their kernels share one GPU, next to PyTorch: no JAX preallocation.
    from course_utils import env

    os.environ.update(env.memory_policy(os.environ))


_share_the_gpu()


def _strict_kernels() -> None:
    from course_utils import strict

    os.environ["IPYTHONDIR"] = strict.ipython_dir(str(ROOT / "build" / "ipython"))


_strict_kernels()


# Notebooks under tests/ are grader fixtures (some loop forever on purpose): data, not tests.
collect_ignore_glob = ["tests/fixtures/*"]


# The versions a run used, printed in its header, on each failure and in the junit XML,
# so that a failure in the version matrix names the lesson, the cell and the versions.
VERSIONED = ("jax", "jaxlib", "flax", "optax", "orbax-checkpoint", "keras", "torch")


@functools.cache
def version_line() -> str:
    """``versions (SET): python 3.11.2, jax 0.10.2, ...`` without importing a framework."""
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"python {platform.python_version()}"]
    for dist in VERSIONED:
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} missing")
    name = os.environ.get("COURSE_VERSION_SET")
    return f"versions{f' ({name})' if name else ''}: {', '.join(parts)}"


def pytest_report_header(config):
    return version_line()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        report.sections.append(("versions", version_line()))
    return report


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
        if os.environ.get("COURSE_VERSION_SET"):
            item.user_properties.append(("versions", version_line()))
