"""An untouched stub fails at once: its check says "not implemented yet" within about a
second, and starts no process (no torchrun, no jax.distributed launch).

The student notebook runs as plain Python in a subprocess (smoke mode), one namespace,
cells in order; every visible test cell is timed. Usage as a script:
``python -m tests.test_exercise_stubs exercises/NN_topic_exercises.ipynb`` (prints one
JSON line: for each visible test cell, its exercise, seconds, what it printed, and the
launches it attempted).
"""

from __future__ import annotations

import contextlib
import io
import json
import linecache
import sys
import time
from pathlib import Path

import pytest

from tests.wrong_answers import run_smoke_module

ROOT = Path(__file__).resolve().parents[1]
STUB_SECONDS = 1.0  # an untouched stub's check, start to finish
CHECKED = ["05_distributed_training_exercises.ipynb"]


def run_stubs(path: str) -> list[dict]:
    """Run a student notebook; time and capture each visible test cell."""
    import nbformat

    from course_utils import student_version
    from course_utils.distributed import launch

    launches: list[str] = []

    def refuse(*args, what: str = "a launch", **kwargs):
        launches.append(what)
        raise RuntimeError(f"an untouched stub started {what}")

    launch._launch = refuse  # every torchrun and jax.distributed launch goes through it
    nb = nbformat.read(path, as_version=4)
    ns: dict = {"__name__": "__main__"}
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        header = student_version.test_header(cell)
        out, before = io.StringIO(), len(launches)
        start = time.perf_counter()
        error = None
        with contextlib.redirect_stdout(out):
            name = (
                f"<cell {i}>"  # registered, as IPython does, so inspect.getsource works
            )
            linecache.cache[name] = (
                len(cell.source),
                None,
                cell.source.splitlines(True),
                name,
            )
            code = compile(cell.source, name, "exec")
            try:
                exec(code, ns)  # noqa: S102 - the course's own student notebook
            except Exception as err:
                if not header:
                    raise
                error = f"{type(err).__name__}: {err}"
        seconds = time.perf_counter() - start
        if header and not header[2]:
            cells.append(
                {
                    "exercise": header[0],
                    "seconds": seconds,
                    "printed": out.getvalue(),
                    "launches": launches[before:],
                    "error": error,
                }
            )
    return cells


@pytest.mark.slow  # a whole student notebook in a new process: 10 s here
@pytest.mark.parametrize("name", CHECKED, ids=lambda n: n[:2])
def test_every_untouched_stub_fails_at_once_without_processes(name):
    cells = run_smoke_module("tests.test_exercise_stubs", f"exercises/{name}")
    assert cells, f"{name} has no visible test cell"
    for cell in cells:
        ex = cell["exercise"]
        assert cell["error"] is None, f"{ex}: {cell['error']}"
        assert f"{ex}: not implemented yet" in cell["printed"], cell
        assert cell["launches"] == [], f"{ex}: the untouched stub started processes"
        assert cell["seconds"] < STUB_SECONDS, (
            f"{ex}: the untouched stub's check took {cell['seconds']:.2f} s"
        )


if __name__ == "__main__":
    print(json.dumps(run_stubs(sys.argv[1])))
