"""Plausible wrong answers fail the visible tests, with a hint that names the mistake.

For every exercise master with a module in tests/wrong_answers/, the master runs as
plain Python in smoke mode (tests/wrong_answers/run.py) and each wrong answer is
put in place of its exercise's solution before the visible test cell runs again.
"""

from pathlib import Path

import pytest

from tests.wrong_answers import run_smoke_module

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "wrong_answers").glob("w[0-9][0-9].py"))

pytestmark = pytest.mark.notebooks  # each fixture replays a master


def _master(fixture: Path) -> Path:
    (found,) = (ROOT / "solutions").glob(f"{fixture.stem[1:]}_*_exercises.py")
    return found


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_every_wrong_answer_fails_a_visible_test_with_its_hint(fixture, tmp_path):
    results = run_smoke_module(
        "tests.wrong_answers.run",
        str(_master(fixture)),
        f"tests.wrong_answers.{fixture.stem}",
    )
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
