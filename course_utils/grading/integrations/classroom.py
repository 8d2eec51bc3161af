"""GitHub Classroom: ``course check``'s visible tests as the autograding reporter reads them.

``templates/classroom.yml`` is the workflow: on a push it runs
``python -m course_utils.grading.integrations.classroom NOTEBOOK``, which runs the notebook's visible
tests as ``course check`` does, prints each test cell's points, and writes the step's
``result`` output (``$GITHUB_OUTPUT``): base64 of the JSON that
``classroom-resources/autograding-grading-reporter`` sums into "Points N/M" (``version``,
``status`` ``pass``/``fail``/``error``, ``max_score``, one entry per test cell).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path

from course_utils.errors import CourseError

TEMPLATE = Path(__file__).resolve().with_name("templates") / "classroom.yml"


def result(record: dict) -> dict:
    """The reporter's result for a ``course check`` record."""
    tests = [
        {
            "name": t["name"],
            "status": "pass" if t["status"] == "passed" else "fail",
            "score": t["points"],
            "max_score": t["max_points"],
            "message": t["message"],
        }
        for t in record["tests"]
    ]
    passed = tests and all(t["status"] == "pass" for t in tests)
    return {
        "version": 1,
        "status": "pass" if passed else "fail",
        "max_score": record["max_total"],
        "tests": tests,
    }


def _errored(message: str) -> dict:
    test = {"name": "course check", "status": "error", "score": 0, "message": message}
    return {"version": 1, "status": "error", "max_score": 0, "tests": [test]}


def _publish(res: dict) -> None:
    """Write ``result=<base64 JSON>`` to the step's outputs (when run as an Action)."""
    encoded = base64.b64encode(json.dumps(res).encode()).decode()
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"result={encoded}\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m course_utils.grading.integrations.classroom"
    )
    p.add_argument("notebook", metavar="NOTEBOOK")
    p.add_argument("--source", help="notebook whose visible tests to run")
    args = p.parse_args(argv)
    from course_utils.grading.batch import grader

    try:
        res = result(grader.check(args.notebook, args.source))
    except CourseError as err:
        res = _errored(str(err))
    for t in res["tests"]:
        mark = "✓" if t["status"] == "pass" else "✗"
        score = f"{t['score']:g}/{t.get('max_score', 0):g}"
        print(
            f"{mark} {t['name']}  {score}  {t['message'].splitlines()[0] if t['message'] else ''}"
        )
    total = sum(t["score"] for t in res["tests"])
    print(f"visible tests: {total:g} / {res['max_score']:g} points ({res['status']})")
    _publish(res)
    return 0 if res["status"] != "error" else 1


if __name__ == "__main__":
    sys.exit(main())
