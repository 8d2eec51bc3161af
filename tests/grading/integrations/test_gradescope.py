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

from course_utils.tooling.cli import main
from tests.grading.helpers import MASTER, ROOT, graded, require_sandbox

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
        "total_timeout": 900.0,
        "memory_mb": 1000.0,
        "full": False,
        "sandbox": "auto",
        "hidden_visibility": "after_published",
        "max_submissions": None,
        "min_interval_minutes": None,
    }
    catalog = json.loads(zipfile.ZipFile(bundle).read("master/course-notebooks.json"))
    kinds = {e["name"]: e["kind"] for e in catalog["notebooks"]}
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
    result = _run(_layout(bundle, tmp_path / "autograder", {"hw.ipynb": data}))
    _check_format(result)
    record = graded(graded_class.out)[student]
    assert result["score"] == record["total"] == graded_class.expected[student][0]
    assert [t["score"] for t in result["tests"]] == [
        t["points"] for t in record["tests"]
    ]
    hidden = [t for t in result["tests"] if "hidden" in t["name"]]
    assert hidden and all(t["visibility"] == "after_published" for t in hidden)
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
