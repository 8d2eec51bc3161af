"""Every bad submission the grader must survive, graded in one batch of the tiny master.

Each fixture in tests/fixtures/grader/ gets a clear status and reason, the batch
goes on, no process of the batch outlives it, and no student-facing file holds
a hidden test's source.
"""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from course_utils.grading.batch import grader
from course_utils.grading.batch.grader import RUN_ENV
from tests import load
from tests.grading.helpers import FIX, MASTER, with_env

pytestmark = pytest.mark.slow  # every test reads one graded batch of all the fixtures

# The per-cell and total limits, stretched by the load: a busy machine restarts a kernel
# and re-runs the setup slower, and must not lose the exercises after a crash.
CELL_S = load.stretched(4)
TOTAL_S = load.stretched(60)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    for path in (FIX / "submissions").iterdir():
        shutil.copy(path, subs / path.name)
    shutil.copytree(FIX / "folders", subs, dirs_exist_ok=True)
    out = tmp_path_factory.mktemp("out")
    limits = grader.Limits(timeout=CELL_S, total_timeout=TOTAL_S, memory_mb=400)
    result = grader.grade(
        subs, MASTER, out, limits=limits, jobs=2, progress=False, echo=lambda *a: None
    )
    records = {r["student"]: r for r in result.records}
    return out, records, result


# student: (score, status, words in the reason, {exercise: status})
EXPECTED = {
    "full": (8, "ok", "3 of 3 exercises passed", {"square": "passed"}),
    "stub": (
        0,
        "ok",
        "not implemented: square, greet, total",
        {
            "square": "not implemented",
            "greet": "not implemented",
            "total": "not implemented",
        },
    ),
    "syntax_error": (5, "ok", "error: square", {"square": "error"}),
    "renamed_function": (5, "ok", "failed: square", {"square": "failed"}),
    "deleted_cell": (6, "ok", "missing: greet", {"greet": "missing"}),
    "duplicated_cell": (8, "ok", "3 of 3", {"square": "passed"}),
    "moved_cells": (8, "ok", "3 of 3", {"total": "passed"}),
    "infinite_loop": (
        6,
        "timeout",
        f"timed out ({CELL_S:g} s per cell); interrupted",
        {"greet": "timeout"},
    ),
    "ignores_interrupt": (
        5,
        "timeout",
        "ignored the interrupt; kernel killed",
        {"total": "timeout"},
    ),
    "long_c_call": (
        5,
        "timeout",
        "ignored the interrupt; kernel killed",
        {"total": "timeout"},
    ),
    "memory_bomb": (
        5,
        "memory",
        "memory limit: resident memory reached",
        {"square": "memory"},
    ),
    "os_exit": (5, "crashed", "exited with status 3", {"square": "crashed"}),
    "segfault": (6, "crashed", "segmentation fault", {"greet": "crashed"}),
    "sys_exit": (8, "ok", "3 of 3", {"square": "passed"}),
    "exit_call": (6, "crashed", "called exit()", {"greet": "crashed"}),
    "input_call": (6, "ok", "error: greet", {"greet": "error"}),
    "output_flood": (8, "ok", "3 of 3", {"square": "passed"}),
    "empty": (0, "invalid", "the notebook file is empty", {"square": "invalid"}),
    "truncated": (0, "invalid", "the notebook is truncated", {}),
    "not_json": (0, "invalid", "not valid JSON", {}),
    "wrong_shape": (0, "invalid", "JSON but not a notebook", {}),
    "missing_ids": (8, "ok", "3 of 3", {}),
    "unknown_kernel": (8, "ok", "3 of 3", {}),
    "stale_outputs": (0, "ok", "not implemented: square, greet, total", {}),
    "spawns_children": (8, "ok", "3 of 3", {}),
    "deprecation_warning": (8, "ok", "3 of 3", {"square": "passed"}),
    "history_fishing": (5, "ok", "failed: square", {"square": "failed"}),
    "tampered": (8, "review", "the kernel was tampered with", {}),
    "folder_one": (8, "ok", "3 of 3", {}),
    "folder_named": (8, "ok", "3 of 3", {}),
    "folder_ambiguous": (
        0,
        "invalid",
        "holds 2 notebooks (a.ipynb, b.ipynb) and none is named",
        {},
    ),
    "folder_empty": (0, "invalid", "holds no .ipynb notebook", {}),
}


def test_every_fixture_is_in_the_batch(batch):
    _out, records, result = batch
    assert set(records) == set(EXPECTED)
    assert result.notes == ["ignored README.txt: not a notebook or a folder"]


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_status_and_reason(batch, student):
    out, records, _ = batch
    score, status, words, exercises = EXPECTED[student]
    rec = records[student]
    assert (rec["total"], rec["status"]) == (score, status), rec["reason"]
    assert words in rec["reason"]
    for ex, want in exercises.items():
        assert rec["exercises"][ex]["status"] == want, rec["exercises"][ex]
    for name in ("grade.json", "results.json", "feedback.ipynb"):
        assert (out / student / name).is_file()
    nbformat.validate(nbformat.read(out / student / "feedback.ipynb", as_version=4))
    gs = json.loads((out / student / "results.json").read_text())
    assert gs["score"] == score and sum(t["score"] for t in gs["tests"]) == score


def test_messages_name_the_problem(batch):
    _, records, _ = batch
    ex = lambda s, e: records[s]["exercises"][e]["message"]  # noqa: E731
    assert "SyntaxError" in ex("syntax_error", "square")
    assert "`square` is not defined: the cell above that defines it has not run" in ex(
        "renamed_function", "square"
    )
    assert "StdinNotImplementedError" in ex("input_call", "greet")
    assert "SystemExit" in ex("sys_exit", "square")
    assert "2 cells hold it" in " ".join(records["duplicated_cell"]["notes"])
    assert "the other exercises were graded" in records["os_exit"]["reason"]
    assert records["memory_bomb"]["peak_memory_mb"] > 400
    assert "process control" in records["spawns_children"]["flags"]


def test_warnings_cost_no_points_but_are_shown(batch):
    out, records, _ = batch
    assert (
        "STRICT True" in (out / "deprecation_warning" / "feedback.ipynb").read_text()
    )  # strict startup ran
    tests = json.loads((out / "deprecation_warning" / "results.json").read_text())[
        "tests"
    ]
    assert "DeprecationWarning: square() uses an old API" in tests[0]["output"]


def test_children_were_started_and_killed(batch):
    _, records, _ = batch
    rec = records["spawns_children"]
    assert rec["processes"] >= 4  # kernel, sleep, a new session, a double-forked daemon
    assert any(
        "were still running at the end and were killed" in n for n in rec["notes"]
    )


def test_output_flood_is_truncated(batch):
    out, _, _ = batch
    assert (out / "output_flood" / "feedback.ipynb").stat().st_size < 300_000
    assert (
        "output truncated by the grader"
        in (out / "_instructor" / "output_flood" / "executed.ipynb").read_text()
    )


def test_scores_ignore_saved_outputs_and_edited_tests(batch):
    out, records, _ = batch
    rec = records["stale_outputs"]
    assert rec["max_total"] == 8 and all(t["points"] == 0 for t in rec["tests"])
    assert (
        "pass  # edited test"
        not in (out / "_instructor" / "stale_outputs" / "executed.ipynb").read_text()
    )


def test_no_hidden_test_source_reaches_students(batch):
    out, _, _ = batch
    master = json.loads(MASTER.read_text())
    hidden = [
        line.strip()
        for cell in master["cells"]
        if "HIDDEN TESTS" in "".join(cell["source"])
        for line in "".join(cell["source"]).splitlines()
        if len(line.strip()) >= 8
    ]
    assert len(hidden) >= 8
    fishing = (out / "history_fishing" / "feedback.ipynb").read_text()
    assert (
        "HISTORY" in fishing and "CALLER" in fishing
    )  # the fishing code did run and print
    for path in [
        out / "grades.csv",
        out / "grades.json",
        *out.glob("*/feedback.ipynb"),
        *out.glob("*/results.json"),
        *out.glob("*/grade.json"),
    ]:
        text = path.read_text()
        assert "SECRET_HIDDEN_ORACLE" not in text, path
        for line in hidden:
            assert line not in text and json.dumps(line)[1:-1] not in text, (path, line)


def test_no_process_outlives_the_batch(batch):
    out, records, _ = batch
    run_ids = {rec["run_id"] for rec in records.values() if rec.get("run_id")}
    assert [p.pid for p in with_env(RUN_ENV, run_ids)] == []
    assert not (out / ".work").exists()


def test_cpu_time_limit_kills_a_cpu_burner(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(FIX / "submissions" / "long_c_call.ipynb", subs / "burner.ipynb")
    limits = grader.Limits(timeout=60, total_timeout=90, memory_mb=1000, cpu_time=3)
    batch = grader.grade(
        subs,
        MASTER,
        tmp_path / "out",
        limits=limits,
        jobs=1,
        progress=False,
        echo=lambda *a: None,
    )
    rec = batch.records[0]
    assert (
        rec["status"] == "crashed"
        and "CPU-time limit reached (SIGXCPU)" in rec["reason"]
    )
    assert rec["total"] == 5 and rec["exercises"]["total"]["status"] == "crashed"
