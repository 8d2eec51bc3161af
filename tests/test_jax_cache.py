"""``pytest --jax-cache DIR`` (``make test-fast``): the test process keeps what JAX compiles in
DIR and finds it there on the next run; a child process it starts does not inherit it.
``pytest --jax-cache-shared DIR`` (``make test``): DIR is emptied, then every process of the
run, children and kernels too, reads and fills it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import load

ROOT = Path(__file__).resolve().parents[1]

TEST = """
import subprocess, sys
import jax, jax.numpy as jnp


def test_compiles_and_a_child_has_no_cache():
    assert jax.config.jax_compilation_cache_dir
    jax.jit(lambda x: x * 3 + 1)(jnp.ones(7)).block_until_ready()
    child = subprocess.run(
        [sys.executable, "-c", "import jax; print(jax.config.jax_compilation_cache_dir)"],
        capture_output=True, text=True, check=True,
    )
    assert child.stdout.strip() == "None"
"""


def _pytest_passes(test: Path, option: str, cache: Path) -> None:
    """Run pytest on ``test`` with the course's conftest and ``option cache``, no JAX_
    variable inherited; it must pass."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "conftest",
    ]
    cmd += ["--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml")]
    cmd += [option, str(cache), str(test)]
    done = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=load.stretched(240),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.slow
def test_the_jax_cache_option_fills_its_folder_and_stays_in_the_test_process(tmp_path):
    (tmp_path / "test_tiny.py").write_text(TEST, encoding="utf-8")
    cache = tmp_path / "cache"
    _pytest_passes(tmp_path / "test_tiny.py", "--jax-cache", cache)
    assert any(cache.iterdir()), "nothing was written to the cache folder"


SHARED = """
import subprocess, sys
from pathlib import Path


def test_a_child_fills_the_shared_cache():
    folder = Path(sys.argv[-1]).parent / "cache"
    assert not (folder / "stale").exists(), "the folder was not emptied"
    child = "import jax, jax.numpy as jnp; jax.jit(lambda x: x * 5 - 2)(jnp.ones(9))"
    before = set(folder.iterdir())
    subprocess.run([sys.executable, "-c", child], check=True)
    assert set(folder.iterdir()) - before, "the child wrote nothing to the shared cache"
"""


@pytest.mark.slow
def test_the_shared_jax_cache_is_emptied_then_filled_by_a_child(tmp_path):
    (tmp_path / "test_shared.py").write_text(SHARED, encoding="utf-8")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "stale").write_text("from an earlier run")
    _pytest_passes(tmp_path / "test_shared.py", "--jax-cache-shared", cache)
    assert not (cache / "stale").exists()
