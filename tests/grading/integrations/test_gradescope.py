"""``course gradescope build``: the bundle, and its ``run_autograder`` run against a local
copy of Gradescope's ``/autograder`` layout (root from ``COURSE_AUTOGRADER_ROOT``): a
submission of the generated class in, a ``results/results.json`` in Gradescope's
documented format out, with the grade the one-machine run gave."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from course_utils.cli import main
from tests.grading.helpers import (
    MASTER,
    ROOT,
    graded,
    require_sandbox,
    stale_master,
)

# Gradescope's results.json (gradescope-autograders.readthedocs.io, "Autograder
# Specifications"): every key is optional; score is needed unless each test has one.
TOP = {"score", "execution_time", "output", "output_format", "test_output_format"}
TOP |= {"test_name_format", "visibility", "stdout_visibility", "extra_data", "tests"}
TOP |= {"leaderboard"}
TEST = {"score", "max_score", "status", "name", "name_format", "number", "output"}
TEST |= {"output_format", "tags", "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def _check_format(result: dict) -> None:
    """``result`` follows Gradescope's documented format."""
    assert set(result) <= TOP, set(result) - TOP
    tests = result.get("tests", [])
    assert "score" in result or all("score" in t for t in tests)
    for key in ("score", "execution_time"):
        assert isinstance(result.get(key, 0), int | float) and result.get(key, 0) >= 0
    for key in ("visibility", "stdout_visibility"):
        assert result.get(key, "visible") in VISIBILITY
    assert isinstance(result.get("output", ""), str)
    for t in tests:
        assert set(t) <= TEST, set(t) - TEST
        assert t.get("status", "passed") in ("passed", "failed")
        assert t.get("visibility", "visible") in VISIBILITY
        assert 0 <= t.get("score", 0) <= t.get("max_score", float("inf"))
        assert isinstance(t.get("name", ""), str) and isinstance(
            t.get("output", ""), str
        )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    argv = ["gradescope", "build", "--source", str(MASTER), "--out", str(out)]
    assert (
        main([*argv, "--root", str(ROOT), "--memory", "1000", "--timeout", "10"]) == 0
    )
    return out


def _layout(bundle: Path, folder: Path, notebooks: dict[str, bytes]) -> Path:
    """Gradescope's /autograder: source/ (the zip), submission/, results/."""
    with zipfile.ZipFile(bundle) as z:
        z.extractall(folder / "source")
    for name in ("run_autograder", "setup.sh"):
        (folder / "source" / name).chmod(0o755)
    (folder / "submission").mkdir()
    for name, data in notebooks.items():
        (folder / "submission" / name).write_bytes(data)
    return folder


def _run(root: Path, **env_vars: str) -> dict:
    env = dict(
        os.environ, COURSE_AUTOGRADER_ROOT=str(root), COURSE_PYTHON=sys.executable
    )
    env.update(env_vars)
    done = subprocess.run(
        [str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_bundle_holds_setup_run_autograder_the_master_and_the_course(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        config = json.loads(z.read("gradescope.json"))
    assert {"setup.sh", "run_autograder", "master/tiny_master.ipynb"} <= names
    assert {
        "course/pyproject.toml",
        "course/course_utils/grading/batch/grader.py",
    } <= names
    assert "course/constraints/known-good.txt" in names
    assert not any(n.startswith(("course/solutions", "course/tests")) for n in names)
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert config == {
        "master": "master/tiny_master.ipynb",
        "timeout": 10.0,
        "total_timeout": 600.0,  # course grade's default, as every command's
        "memory_mb": 1000.0,
        "full": False,
        "sandbox": "auto",
        "hidden_visibility": "after_published",
        "max_submissions": None,
        "min_interval_minutes": None,
    }
    index = json.loads(zipfile.ZipFile(bundle).read("master/course-notebooks.json"))
    kinds = {e["name"]: e["kind"] for e in index["notebooks"]}
    assert kinds["04_training_loop_exercises.ipynb"] == "exercises"
    assert kinds["04_training_loop.ipynb"] == "lesson"
    for name in ("setup.sh", "run_autograder"):
        text = zipfile.ZipFile(bundle).read(name).decode()
        assert subprocess.run(["bash", "-n", "-c", text]).returncode == 0
    setup = zipfile.ZipFile(bundle).read("setup.sh").decode()
    used = set(re.findall(r"course/[\w./-]+\.(?:py|txt)", setup))
    assert used and used <= names  # install.py and the constraints travel in the zip


@pytest.mark.slow
def test_run_autograder_grades_a_submission_as_course_grade_does(
    bundle, graded_class, tmp_path
):
    require_sandbox()
    student = "bob"  # right on the visible tests, wrong on a hidden one
    data = (graded_class.subs / f"{student}.ipynb").read_bytes()
    root = _layout(bundle, tmp_path / "autograder", {"hw.ipynb": data})
    _configured(root, hidden_visibility="after_due_date", max_submissions=3)
    meta = {"created_at": CREATED, "previous_submissions": [_previous(45)]}
    (root / "submission_metadata.json").write_text(json.dumps(meta))
    result = _run(root)
    _check_format(result)
    assert result["output"].endswith("Graded submission 2 of 3.")
    assert result["extra_data"] == {"counted": True}
    record = graded(graded_class.out)[student]
    assert result["score"] == record["total"] == graded_class.expected[student][0]
    assert [t["score"] for t in result["tests"]] == [
        t["points"] for t in record["tests"]
    ]
    hidden = [t for t in result["tests"] if "hidden" in t["name"]]
    assert hidden and all(t["visibility"] == "after_due_date" for t in hidden)
    assert "SECRET_HIDDEN_ORACLE_7" not in json.dumps(result)
    assert "in the sandbox, from hw.ipynb" in result["output"]


@pytest.mark.slow
def test_where_bubblewrap_cannot_run_it_grades_without_it_and_says_so(
    bundle, graded_class, tmp_path
):
    no_bwrap = tmp_path / "bin"  # a PATH with bash and no bwrap, as in a bare container
    no_bwrap.mkdir()
    (no_bwrap / "bash").symlink_to(shutil.which("bash"))
    data = (graded_class.subs / "dee.ipynb").read_bytes()
    root = _layout(bundle, tmp_path / "autograder", {"dee.ipynb": data})
    result = _run(root, PATH=str(no_bwrap))
    _check_format(result)
    assert result["score"] == graded_class.expected["dee"][0]
    assert (
        "Graded without the sandbox (bubblewrap (bwrap) is not installed)"
        in result["output"]
    )
    config = json.loads((root / "source" / "gradescope.json").read_text())
    config["sandbox"] = "require"  # built with --require-sandbox
    (root / "source" / "gradescope.json").write_text(json.dumps(config))
    result = _run(root, PATH=str(no_bwrap))
    _check_format(result)
    assert (
        result["score"] == 0 and "Not graded: the grader's sandbox" in result["output"]
    )


@pytest.mark.parametrize(
    "notebooks, message",
    [
        ({}, "no .ipynb file in the submission"),
        ({"a.ipynb": b"{}", "b.ipynb": b"{}"}, "several notebooks (a.ipynb, b.ipynb)"),
    ],
)
def test_a_submission_that_cannot_be_graded_still_gets_results(
    bundle, tmp_path, notebooks, message
):
    result = _run(_layout(bundle, tmp_path / "autograder", notebooks))
    _check_format(result)
    assert result["score"] == 0 and message in result["output"]


def test_build_refuses_a_notebook_that_is_not_a_master(tmp_path, capsys):
    argv = ["gradescope", "build", "--source", str(MASTER), "--out", "a.tar"]
    assert main(argv) == 2
    assert "--out must name a .zip" in capsys.readouterr().err
    broken = ROOT / "tests" / "fixtures" / "grader" / "submissions" / "not_json.ipynb"
    argv = [
        "gradescope",
        "build",
        "--source",
        str(broken),
        "--out",
        str(tmp_path / "a.zip"),
    ]
    assert main(argv) == 2
    assert not (tmp_path / "a.zip").exists() and "not_json" in capsys.readouterr().err


EX04 = ROOT / "exercises" / "04_training_loop_exercises.ipynb"


def _configured(root: Path, **settings) -> Path:
    """The layout's ``gradescope.json`` with ``settings``, as ``build``'s options write them."""
    path = root / "source" / "gradescope.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | settings))
    return root


@pytest.mark.parametrize("shown", ["after_published", "after_due_date"])
def test_hidden_tests_are_visible_when_the_bundle_says(bundle, tmp_path, shown):
    """Another lesson's notebook: named, not counted, hidden tests at the chosen time."""
    root = _layout(bundle, tmp_path / "autograder", {"04.ipynb": EX04.read_bytes()})
    if shown != "after_published":  # the default needs no option
        _configured(root, hidden_visibility=shown)
    result = _run(root)
    _check_format(result)
    assert result["score"] == 0 and result["extra_data"] == {"counted": False}
    assert result["output"].startswith(
        "Status: invalid — wrong assignment: this is the lesson 04 exercise notebook "
        "(04_training_loop_exercises.ipynb); this assignment is the exercise notebook "
        "tiny_master.ipynb"
    )
    seen = {t["name"]: t["visibility"] for t in result["tests"]}
    assert seen["square: hidden tests"] == seen["total: hidden tests"] == shown
    assert seen["square: tests"] == "visible"


def test_build_writes_the_visibility_and_the_limits(tmp_path, capsys):
    out = tmp_path / "a.zip"
    argv = ["gradescope", "build", "--source", str(MASTER), "--out", str(out)]
    argv += ["--root", str(ROOT), "--hidden-visibility", "after_due_date"]
    assert main([*argv, "--max-submissions", "3", "--min-interval", "30"]) == 0
    config = json.loads(zipfile.ZipFile(out).read("gradescope.json"))
    assert config["hidden_visibility"] == "after_due_date"
    assert (config["max_submissions"], config["min_interval_minutes"]) == (3, 30.0)
    assert "at most 3 graded submissions and one every 30 minutes" in (
        capsys.readouterr().out
    )
    assert main([*argv, "--hidden-visibility", "hidden"]) == 2  # never shown: refused
    assert main([*argv, "--max-submissions", "0"]) == 2


# Limits: generated submission_metadata.json files (Gradescope's "Submission Metadata"
# page: created_at, previous_submissions[submission_time, score, results]).
CREATED = "2026-03-01T12:00:00.000000-08:00"
GRADED = {"score": 3.0, "output": "Status: ok", "tests": [{"name": "t", "score": 3.0}]}
FAKE = {"score": 5.0, "execution_time": 1, "output": "Status: ok — fresh", "tests": []}


def _previous(minutes_before: float, results: dict | None = None) -> dict:
    from datetime import datetime, timedelta

    at = datetime.fromisoformat(CREATED) - timedelta(minutes=minutes_before)
    results = GRADED if results is None else results
    return {
        "submission_time": at.isoformat(),
        "score": results["score"],
        "results": results,
    }


def _limited(tmp_path, monkeypatch, metadata, **limits) -> tuple[dict, list]:
    """``run`` with ``limits`` and ``metadata`` (a dict, raw text, or None: no file);
    grading itself is replaced by a stand-in that returns FAKE and notes the call."""
    from course_utils.grading.integrations import gradescope

    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "gradescope.json").write_text(json.dumps(limits))
    if metadata is not None:
        text = metadata if isinstance(metadata, str) else json.dumps(metadata)
        (root / "submission_metadata.json").write_text(text)
    calls = []

    def grade(root, config, work):
        calls.append(config)
        return dict(FAKE), True

    monkeypatch.setattr(gradescope, "_grade", grade)
    result = gradescope.run(root)
    _check_format(result)
    assert json.loads((root / "results" / "results.json").read_text()) == result
    return result, calls


def test_under_the_limit_it_grades_and_counts(tmp_path, monkeypatch):
    ungraded = {"score": 0.0, "output": "x", "extra_data": {"counted": False}}
    meta = {"created_at": CREATED, "previous_submissions": [
        _previous(90), _previous(60, ungraded), _previous(-5),  # -5: after this one
    ]}  # fmt: skip
    result, calls = _limited(tmp_path, monkeypatch, meta, max_submissions=2)
    assert len(calls) == 1 and result["score"] == 5.0
    assert result["output"].endswith("Graded submission 2 of 2.")
    assert result["extra_data"] == {"counted": True}


def test_over_the_limit_it_keeps_the_last_graded_results(tmp_path, monkeypatch):
    first = GRADED | {"score": 4.0}
    meta = {"created_at": CREATED, "previous_submissions": [
        _previous(90, first), _previous(60), _previous(30, {"score": 0.0,
        "extra_data": {"counted": False}})]}  # fmt: skip
    result, calls = _limited(tmp_path, monkeypatch, meta, max_submissions=2)
    assert not calls  # not graded at all
    assert result["score"] == 3.0 and result["tests"] == GRADED["tests"]  # the last
    assert result["output"].startswith(
        "Not graded: this assignment grades at most 2 submissions, and 2 of yours "
        "have been graded.\nYour score stays 3, from your last graded submission "
        "(2026-03-01 19:00 UTC)"
    )
    assert result["output"].endswith("Status: ok")  # the repeated results' own output
    assert result["extra_data"]["counted"] is False


def test_too_soon_after_the_last_graded_one_it_keeps_its_results(tmp_path, monkeypatch):
    meta = {"created_at": CREATED, "previous_submissions": [_previous(10)]}
    result, calls = _limited(tmp_path, monkeypatch, meta, min_interval_minutes=30)
    assert not calls and result["score"] == 3.0
    assert result["output"].startswith(
        "Not graded: this assignment grades one submission every 30 minutes; your "
        "last graded one was at 2026-03-01 19:50 UTC, so the next can be graded from "
        "2026-03-01 20:20 UTC."
    )
    meta = {"created_at": CREATED, "previous_submissions": [_previous(31)]}
    result, calls = _limited(tmp_path / "b", monkeypatch, meta, min_interval_minutes=30)
    assert len(calls) == 1 and result["score"] == 5.0
    del meta["created_at"]  # the time cannot be checked: graded, and said so
    result, calls = _limited(tmp_path / "c", monkeypatch, meta, min_interval_minutes=30)
    assert len(calls) == 1 and result["output"].endswith(
        "not checked: the metadata has no created_at."
    )


@pytest.mark.parametrize(
    "metadata, why",
    [
        (None, "submission_metadata.json is missing"),
        ("{not json", "submission_metadata.json cannot be read"),
        (
            {"previous_submissions": [{"score": 1}]},
            "previous_submissions[0] has no submission_time",
        ),
        (
            {"created_at": "noon", "previous_submissions": []},
            "created_at is 'noon', not a time",
        ),
        ({"previous_submissions": {}}, "previous_submissions is not a list"),
    ],
)
def test_missing_or_malformed_metadata_grades_and_says_so(
    tmp_path, monkeypatch, metadata, why
):
    result, calls = _limited(
        tmp_path, monkeypatch, metadata, max_submissions=1, min_interval_minutes=30
    )
    assert len(calls) == 1 and result["score"] == 5.0
    assert f"\nSubmission limits not checked: {why}" in result["output"]
    assert result["output"].endswith("; none was applied.")


def test_build_finds_the_course_from_the_master_anywhere(tmp_path, monkeypatch, capsys):
    """Run outside the checkout, with --out in a folder not made yet: the course comes
    from the checkout that holds --source, as ``course grade`` finds it."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "gs" / "new" / "autograder.zip"
    argv = ["gradescope", "build", "--source", str(MASTER), "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    assert "course/pyproject.toml" in names
    assert "course/course_utils/grading/batch/grader.py" in names
    assert f"files of the course from {ROOT}" in capsys.readouterr().out


def test_build_fails_on_no_course_files_and_an_unmakeable_out(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "a.zip"
    argv = ["gradescope", "build", "--source", str(MASTER), "--out", str(out)]
    assert main([*argv, "--root", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "no file of the course" in err and str(empty) in err, err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = ["gradescope", "build", "--source", str(MASTER)]
    assert main([*argv, "--out", str(blocker / "a.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("course: error: --out") and str(blocker) in err, err
    assert len(err.strip().splitlines()) == 1


def test_build_refuses_a_master_without_hidden_tests(tmp_path, capsys):
    student = ROOT / "tests" / "fixtures" / "grader" / "tiny_student.ipynb"
    argv = ["gradescope", "build", "--source", str(student)]
    assert main([*argv, "--out", str(tmp_path / "a.zip")]) == 2
    assert "no hidden tests" in capsys.readouterr().err


def test_try_runs_the_bundle_on_a_submission_as_gradescope_would(
    bundle, tmp_path, capfd
):
    """``course gradescope try BUNDLE SUBMISSION``: the bundle's own course and
    run_autograder in a local copy of the /autograder layout, the results printed
    once (run_autograder's own lines, which Gradescope keeps, are not shown again)."""
    full = ROOT / "tests" / "fixtures" / "grader" / "submissions" / "full.ipynb"
    keep = tmp_path / "autograder"
    argv = ["gradescope", "try", str(bundle), str(full), "--keep", str(keep)]
    assert main(argv) == 0
    printed = capfd.readouterr().out
    assert "score 8 / 8" in printed, printed
    assert "square: hidden tests: 2 / 2 (after_published)" in printed, printed
    lines = printed.splitlines()
    assert [x for x in lines if x.startswith("score ")] == ["score 8 / 8"], printed
    result = json.loads((keep / "results" / "results.json").read_text())
    for line in result["output"].splitlines():
        assert lines.count(line) == 1, (line, printed)
    _check_format(result)
    assert result["score"] == 8
    meta = json.loads((keep / "submission_metadata.json").read_text())
    assert meta["users"][0]["email"] and meta["previous_submissions"] == []


def test_build_refuses_a_master_edited_but_not_synced(tmp_path, capsys):
    nb, py = stale_master(tmp_path)
    out = tmp_path / "a.zip"
    argv = ["gradescope", "build", "--source", str(nb), "--out", str(out)]
    assert main([*argv, "--root", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert str(nb) in err and str(py) in err and "`course sync`" in err, err
    assert not out.exists()
