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

from course_utils.config import ENV_VAR as SMOKE_ENV

ROOT = Path(__file__).resolve().parent

os.environ.setdefault(SMOKE_ENV, "1")
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
    from course_utils.tooling.lowering import record as lowering_record

    # The test kernels' own IPython directory: strict warnings, and the lowering
    # check when COURSE_LOWERING_CHECK=1 (the default here; 0 turns it off).
    root = strict.ipython_dir(str(ROOT / "build" / "ipython-tests"))
    lowering_record.ipython_startup(root)
    os.environ["IPYTHONDIR"] = root
    os.environ.setdefault(lowering_record.ENV, "1")


_strict_kernels()


def _kernels_over_unix_sockets() -> None:
    # Where internet sockets are refused (a sandbox without network), nbval's kernels
    # talk over Unix sockets, as the notebook runner's do (course_utils.tooling.execution.ipc_kernel).
    from course_utils.tooling.execution.runner import kernel_transport

    if kernel_transport() == "ipc":
        import nbval.kernel

        from course_utils.tooling.execution.ipc_kernel import SyncIPCKernelManager

        nbval.kernel.KernelManager = SyncIPCKernelManager


_kernels_over_unix_sockets()


def _kernel_starts_again() -> None:
    # A kernel can die as it starts when the other worker loads the machine (CI saw
    # lesson 11's kernel die before kernel_info, and all 61 of its items fail).
    import nbval.kernel

    from course_utils.tooling.execution.kernel_start import retrying

    nbval.kernel.start_new_kernel = retrying(nbval.kernel.start_new_kernel)


_kernel_starts_again()


# Notebooks under tests/ are grader fixtures (some loop forever on purpose): data, not tests.
collect_ignore_glob = ["tests/fixtures/*"]
# How the lessons run under nbval: the Chinese twin that runs, the lowering check.
pytest_plugins = ("tests.notebooks.nbval_lessons",)


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


def pytest_addoption(parser):
    parser.addoption(
        "--durations-table",
        metavar="PATH",
        help="merge each executed file's seconds into PATH (tests/durations.json "
        "orders the files, longest first)",
    )
    parser.addoption(
        "--jax-cache",
        metavar="DIR",
        help="keep the programs JAX compiles in the test processes in DIR and reuse them on "
        "the next run (`make test-fast`); child processes and notebooks compile as before",
    )
    parser.addoption(
        "--jax-cache-shared",
        metavar="DIR",
        help="one JAX persistent cache in DIR for this run: the test processes, the notebook "
        "kernels and every child process (`make test`); emptied when the run starts",
    )


def pytest_configure(config):
    cache = config.getoption("--jax-cache")
    if cache:
        _persistent_jax_cache(Path(cache).resolve())
    shared = config.getoption("--jax-cache-shared")
    if shared:
        _shared_jax_cache(
            Path(shared).resolve(), first=not hasattr(config, "workerinput")
        )
    path = config.getoption("--durations-table")
    if path and not hasattr(config, "workerinput"):  # the controller, or no xdist
        from tests import durations

        config.pluginmanager.register(durations.Recorder(path), "durations-table")


# JAX reads these at import, in every process that inherits them.
SHARED_CACHE_ENV = {
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}


def _shared_jax_cache(folder: Path, first: bool) -> None:
    """One persistent cache for the whole run, in the environment, so that the lessons'
    kernels, the masters' kernels with their wrong answers, the student notebooks and the
    tests' child processes all read and fill it. A master's visible test compiles the same
    reference programs for each wrong answer it replays; the cache serves them after the
    first. The cells that time a cold compile switch the cache off themselves
    (``timing.jax_persistent_cache_off``). ``first`` (the controller, or a run without
    workers) empties the folder, so that every run starts cold, as a fresh clone does."""
    import shutil

    if first:
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(folder)
    os.environ.update(
        SHARED_CACHE_ENV
    )  # JAX is not imported here: tests fork processes


def _persistent_jax_cache(folder: Path) -> None:
    """JAX's persistent cache for every program this process compiles, however quick: the
    test processes compile the same small programs on every run. It is set in JAX's config,
    not the environment, so no child process or kernel inherits it."""
    import jax

    folder.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def pytest_collection_modifyitems(config, items):
    from tests import durations

    if os.environ.get("COURSE_LOWERING_CHECK") == "1":
        from tests.notebooks import nbval_lessons as lessons

        lessons.add_lowering_checks(items)
    # Longest files first, so that the two workers of `make test` finish together.
    durations.longest_first(items, durations.load())
    for item in items:
        if str(item.fspath).endswith(".ipynb"):
            item.add_marker(pytest.mark.notebooks)
        if os.environ.get("COURSE_VERSION_SET"):
            item.user_properties.append(("versions", version_line()))
