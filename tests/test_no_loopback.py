"""Lesson 05 and its master run to their end on a machine that refuses TCP on the loopback.

A sandbox without network (the lent TPU machine, say) refuses every TCP socket, so
``torchrun`` and ``jax.distributed`` cannot start. ``COURSE_NO_LOOPBACK=1`` makes the
launcher answer as on such a machine (course_utils/distributed/ports.py): each launch starts
nothing, prints one sentence and returns no rank reports. Each notebook runs in smoke
mode, in the suite's notebook kernel: it must finish, print that sentence once in each
cell that launches and nowhere else, and still run the sections after its launches.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_utils.distributed.ports import REFUSED
from tests import load
from tests.wrong_answers import replay

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "notebooks" / "05_distributed_training.ipynb"
MASTER = ROOT / "solutions" / "05_distributed_training_exercises.ipynb"
LAUNCHES = ("launch.torchrun(", "launch.jax_processes(", "launch.torchrun_function(")

pytestmark = pytest.mark.notebooks


def _run(path: Path) -> list:
    """The code cells of ``path`` run top to bottom where TCP is refused (an error raises)."""
    env = replay.kernel_env()
    env["COURSE_NO_LOOPBACK"] = "1"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=load.stretched(600),
        startup_timeout=load.stretched(300),  # a busy machine starts kernels slowly
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute(env=env)
    return [c for c in nb.cells if c.cell_type == "code"]


def _printed(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif o.get("output_type") in ("execute_result", "display_data"):
            data = o.get("data", {})
            out.append(data.get("text/markdown") or data.get("text/plain", ""))
    return "".join(out)


def _says_so_once_per_launch(cells: list) -> list[str]:
    """What breaks the rule: the sentence once in each launching cell, nowhere else."""
    wrong = []
    launching = 0
    for cell in cells:
        printed = _printed(cell)
        want = 1 if any(call in cell.source for call in LAUNCHES) else 0
        launching += want
        if printed.count(REFUSED) != want or "not launched" in printed:
            first = cell.source.strip().splitlines()[0][:60]
            wrong.append(f"{first!r}: refusal printed {printed.count(REFUSED)}x")
    assert launching, "no cell launches: the notebook changed, update this test"
    return wrong


def test_lesson_05_runs_its_jax_sections_where_tcp_is_refused():
    cells = _run(LESSON)
    assert _says_so_once_per_launch(cells) == []
    assert all(c.get("execution_count") for c in cells)  # every cell ran
    printed = "".join(_printed(c) for c in cells)
    # the JAX sections after the launches ran, and named no PyTorch result
    for line in (
        "JAX data parallel = one device = float64 oracle\n",
        "JAX tensor parallel = unsharded model, output and gradients;",
        "JAX FSDP step = float64 oracle, gradients and new parameters\n",
        "explicit gather: step = float64 oracle",
        "collectives in the compiled program",
    ):
        assert line in printed, line
    assert "PyTorch DDP" not in printed and "PyTorch, 2 processes" not in printed
    assert "JAX needs pmap for data parallelism" in printed  # the claims were judged


def test_master_05_checks_what_it_can_where_tcp_is_refused():
    cells = _run(MASTER)
    assert _says_so_once_per_launch(cells) == []
    printed = "".join(_printed(c) for c in cells)
    assert printed.count("✓ allreduce-grads: passed") == 3  # the simulated ranks
    assert printed.count("– allreduce-grads: not checked here: ") == 1
    for exercise in ("shard-batch", "column-parallel", "row-parallel", "fsdp-specs"):
        assert f"✓ {exercise}: passed" in printed, exercise
