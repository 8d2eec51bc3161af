"""GitHub Classroom: the workflow template, and ``course check``'s visible tests of two
notebooks of the generated class as the autograding reporter reads them."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import yaml

from course_utils.grading.integrations import classroom
from tests.grading.helpers import MASTER, ROOT


def _run(notebook, tmp_path, module: str = classroom.__name__) -> tuple[int, dict, str]:
    outputs = tmp_path / "github_output"
    env = dict(os.environ, GITHUB_OUTPUT=str(outputs))
    cmd = [sys.executable, "-m", module, str(notebook)]
    done = subprocess.run(
        [*cmd, "--source", str(MASTER)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    lines = outputs.read_text().splitlines()
    outputs.unlink()
    assert len(lines) == 1
    key, _, value = lines[0].partition("=")
    assert key == "result"
    return done.returncode, json.loads(base64.b64decode(value)), done.stdout


def test_points_per_visible_test_as_the_reporter_sums_them(graded_class, tmp_path):
    rc, res, out = _run(graded_class.subs / "bob.ipynb", tmp_path)  # visible: all right
    assert rc == 0 and res["version"] == 1 and res["status"] == "pass"
    assert res["max_score"] == 3 and sum(t["score"] for t in res["tests"]) == 3
    assert "hidden" not in json.dumps(res) and "visible tests: 3 / 3 points" in out
    rc, res, out = _run(graded_class.subs / "ivy.ipynb", tmp_path)  # square: x + x
    assert rc == 0 and res["status"] == "fail"
    scores = {t["name"]: (t["score"], t["status"]) for t in res["tests"]}
    assert scores == {
        "square: tests": (0, "fail"),
        "greet: tests": (1, "pass"),
        "total: tests": (1, "pass"),
    }
    assert "expected 9" in res["tests"][0]["message"]


def test_a_notebook_that_cannot_be_checked_is_an_error(tmp_path):
    rc, res, _ = _run(tmp_path / "missing.ipynb", tmp_path)
    assert (
        rc == 1
        and res["status"] == "error"
        and "no such file" in res["tests"][0]["message"]
    )


def test_the_workflow_runs_the_check_and_hands_its_result_to_the_reporter():
    flow = yaml.safe_load(classroom.TEMPLATE.read_text())
    assert flow["name"] == "Autograding Tests" and "push" in flow["on"]
    assert (ROOT / flow["env"]["NOTEBOOK"]).is_file()
    job = flow["jobs"]["run-autograding-tests"]
    assert (
        job["name"] == "Autograding Tests"
    )  # the check run Classroom reads points from
    steps = {s["name"]: s for s in job["steps"]}
    check = steps["course check"]
    assert (
        "-m course_utils.grading.integrations.classroom" in check["run"]
        and "$NOTEBOOK" in check["run"]
    )
    reporter = steps["Autograding Reporter"]
    assert reporter["uses"].startswith(
        "classroom-resources/autograding-grading-reporter@"
    )
    assert reporter["with"]["runners"] == check["id"]
    expr = reporter["env"][f"{check['id'].upper()}_RESULTS"]
    assert expr == "${{ steps." + check["id"] + ".outputs.result }}"
    assert flow["permissions"]["checks"] == "write"
