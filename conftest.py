"""Test-session setup shared by unit tests and notebook tests (nbval).

Kernels that nbval starts inherit this process's environment, so smoke mode
and strict framework deprecations are set here, before any kernel starts
(matplotlib picks a headless backend by itself; kernels use the inline one).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent

os.environ.setdefault("COURSE_SMOKE", "1")
os.environ.setdefault("PYTHONUNBUFFERED", "1")
# Two test workers share two cores: one OpenMP thread per process keeps torch's
# multi-threaded kernels from oversubscribing the machine (100x slowdowns seen).
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _strict_kernels() -> None:
    from course_utils import strict

    os.environ["IPYTHONDIR"] = strict.ipython_dir(str(ROOT / "build" / "ipython"))


_strict_kernels()


# Notebooks under tests/ are grader fixtures (some loop forever on purpose): data, not tests.
collect_ignore_glob = ["tests/fixtures/*"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
