"""Plausible wrong answers fail the visible tests, with a hint that names the mistake.

For every exercise master with a module in tests/wrong_answers/, the master runs as
plain Python in smoke mode (tests/wrong_answers/run.py) and each wrong answer is
put in place of its exercise's solution before the visible test cell runs again.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "wrong_answers").glob("w[0-9][0-9].py"))


def _master(fixture: Path) -> Path:
    (found,) = (ROOT / "solutions").glob(f"{fixture.stem[1:]}_*_exercises.py")
    return found


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_every_wrong_answer_fails_a_visible_test_with_its_hint(fixture, tmp_path):
    env = {**os.environ, "COURSE_SMOKE": "1", "MPLBACKEND": "Agg"}
    env.pop("COURSE_GRADING", None)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.wrong_answers.run",
            str(_master(fixture)),
            f"tests.wrong_answers.{fixture.stem}",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert results.pop("_missing") == [], (
        "exercises with wrong answers but no visible test"
    )
    problems = [
        f"{name}: {r['message'][:300]}"
        for name, r in results.items()
        if not r["failed"] or r["words"] not in r["message"]
    ]
    assert not problems, "\n".join(problems)
    assert all(
        len([k for k in results if k.startswith(ex + ":")]) >= 2
        for ex in {k.split(":")[0] for k in results}
    )
