"""Run one exercise master as plain Python, swapping in each wrong answer before its visible test.

Usage: python -m tests.wrong_answers.run MASTER.py FIXTURES_MODULE  (prints one JSON line)

Cells run in order in one namespace (smoke mode). At the visible test cell of an
exercise that has wrong answers, the cell first runs as written (the master's own
solution must pass), then once per wrong answer with that answer's code in place
of the solution cell, and the master's solution is put back. It stops after the
last exercise that has wrong answers: later cells are not needed.
"""

from __future__ import annotations

import importlib
import json
import linecache
import sys

import jupytext

from course_utils.exercises import CheckFailed
from course_utils.tooling import markers

_COUNT = iter(range(1_000_000))


def _run(code: str, ns: dict, name: str) -> None:
    """Run one cell; register its source so inspect.getsource works on what it defines."""
    filename = f"<{name.strip('<>')} #{next(_COUNT)}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), ns)  # noqa: S102 - the course's own master


def _try_wrong(ns, solution, tests, code):
    """(failed with CheckFailed, message) for one wrong answer; the solution is restored."""
    _run(code, ns, "<wrong answer>")
    try:
        _run(tests, ns, "<visible tests>")
        return False, "the visible test passed"
    except CheckFailed as err:
        return True, str(err)
    except BaseException as err:  # noqa: BLE001 - reported, not swallowed
        return False, f"raised {type(err).__name__} (not CheckFailed): {err}"
    finally:
        _run(solution, ns, "<solution>")


def main(master: str, fixtures: str) -> dict:
    wrong = importlib.import_module(fixtures).WRONG
    nb = jupytext.read(master)
    ns: dict = {"__name__": "__main__"}
    solutions: dict[str, str] = {}
    results: dict[str, dict] = {}
    left = set(wrong)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not left:
            continue
        source = cell.source
        _run(source, ns, f"<cell {i}>")  # a sharp bit's error is caught by expect_error
        ex = markers.exercise_id(cell)
        if ex:
            solutions[ex] = source
        header = markers.test_header(cell)
        if header and not header[2] and header[0] in left:
            ex = header[0]
            for label, code, words in wrong[ex]:
                # the student writes in the exercise cell, under its first line
                code = f"# EXERCISE: {ex}\n{code.lstrip(chr(10))}"
                failed, message = _try_wrong(ns, solutions[ex], source, code)
                results[f"{ex}: {label}"] = {
                    "failed": failed,
                    "message": message,
                    "words": words,
                }
            _run(
                source, ns, f"<cell {i}>"
            )  # names the tests bound (a jitted answer) are the solution's again
            left.discard(ex)
    results["_missing"] = sorted(left)
    return results


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
