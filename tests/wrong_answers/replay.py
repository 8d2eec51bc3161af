"""Run one exercise master in a Jupyter kernel, replaying each wrong answer at its visible test.

Every code cell of the master (``solutions/NN_*_exercises.ipynb``) runs in order in
one kernel, in smoke mode, with the environment of the test suite's notebook kernels
(strict warnings and, with ``COURSE_LOWERING_CHECK=1``, the lowering check: see
conftest.py). At the visible test cell of an exercise that has wrong answers
(``tests/wrong_answers/wNN.py``), the cell first runs as written (the master's own
solution must pass); then, for each wrong answer, its code runs in place of the
solution cell, under the exercise's ``# EXERCISE: id`` line, the visible test cell
runs again (it must fail with ``CheckFailed`` and a message holding the hint words),
and the solution runs again. The test cell then runs once more, so that the names it
binds are the solution's, and the rest of the master runs to its last cell.

With ``hidden`` (wrong answers, as ``wrong``) they are replayed at each hidden test
cell too, as the grader runs it after the visible test: each must fail it (any error),
so that a hidden test edited weaker is named. An instructor runs that after editing
one (:func:`main`; the answers the course's own hidden tests let through, or never
end in, are left out there: ``hidden_passes.py``)::

    python -m tests.wrong_answers.replay solutions/00_welcome_exercises.ipynb

An error in a cell of the master stops the run; :attr:`MasterRun.error` names the
cell. :func:`problems` lists everything that is wrong, one short line each.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from packaging.version import Version

from course_utils import exercises, strict, student_version
from course_utils.tooling.execution import runner
from course_utils.tooling.lowering import record as lowering_record
from tests import load
from tests.wrong_answers.hidden_passes import NEVER_END, PASSES

ROOT = Path(__file__).resolve().parents[2]
SHORT = 300  # characters of a message a failure shows
HIDDEN_TIMEOUT = 300  # seconds a hidden test may take with a wrong answer, when idle
# The kernel's lowering recorder (course_utils.tooling.lowering.record), paused while
# the wrong answers run: their programs are not the master's.
_RECORDER = f"__import__({lowering_record.__name__!r}, fromlist=['RECORDER']).RECORDER"
_PAUSE = f"setattr({_RECORDER}, 'record', lambda *args, **kwargs: None)"
_RESUME = f"vars({_RECORDER}).pop('record', None);"

# (label, code, hint words), or with a fourth item, {distribution: first version}: the
# versions from which the slip is a bug (see :func:`applies`)
Answer = tuple[str, str, str] | tuple[str, str, str, dict[str, str]]
Wrong = dict[str, list[Answer]]


@dataclass
class Replay:
    """One wrong answer at its exercise's visible test."""

    exercise: str
    label: str
    words: str
    failed: bool  # the visible test failed with CheckFailed (a hidden one: any error)
    message: str  # CheckFailed's message, or what happened instead
    hidden: bool = False  # replayed at a hidden test cell

    def problem(self) -> str | None:
        name = f"{self.exercise}: {self.label}"
        if self.hidden:
            return None if self.failed else f"{name}: the hidden test passed"
        if not self.failed:
            return f"{name}: {self.message[:SHORT]}"
        if self.words not in self.message:
            return f"{name}: the message lacks {self.words!r}: {self.message[:SHORT]}"
        return None


@dataclass
class MasterRun:
    master: str  # the path, relative to the repository root where it is under it
    # the master's cell that failed, and how ("" when it ran to its end)
    error: str = ""
    cells_run: int = 0  # code cells of the master that ran as written
    replays: list[Replay] = field(default_factory=list)
    hidden: list[Replay] = field(default_factory=list)  # at the hidden tests
    missing: list[str] = field(default_factory=list)  # wrong answers never replayed
    lowering: list[str] = field(default_factory=list)  # programs that did not lower
    seconds: float = 0.0
    replay_seconds: float = 0.0


def fixtures_for(master: Path) -> Wrong:
    """``WRONG`` of ``tests/wrong_answers/wNN.py`` for master ``NN_*``; ``{}`` without one."""
    name = f"{__package__}.w{master.name[:2]}"
    if not (ROOT / "tests" / "wrong_answers" / f"w{master.name[:2]}.py").exists():
        return {}
    return applicable(importlib.import_module(name).WRONG)


def applies(answer: Answer) -> bool:
    """Whether ``answer`` is a wrong answer on the versions installed here.

    A fourth item maps a distribution to the first version on which the slip is a
    bug: on an older one the answer gives the right result (an old version did the
    work the slip leaves out), so no check can fail it there.
    """
    since = answer[3] if len(answer) > 3 else {}
    return all(
        Version(metadata.version(dist)) >= Version(first)
        for dist, first in since.items()
    )


def applicable(wrong: Wrong) -> Wrong:
    """``wrong`` less the answers that are not wrong here (:func:`applies`), as triples."""
    return {ex: [a[:3] for a in answers if applies(a)] for ex, answers in wrong.items()}


def kernel_env() -> dict[str, str]:
    """What nbval's kernels get under the test suite (conftest.py): smoke mode, strict
    warnings and the lowering check in the tests' IPython directory; no grading."""
    env = runner.kernel_env(ROOT, smoke=True)
    root = strict.ipython_dir(str(ROOT / "build" / "ipython-tests"))
    lowering_record.ipython_startup(root)
    env["IPYTHONDIR"] = root
    env.setdefault(lowering_record.ENV, "1")
    env.pop(exercises.GRADING_ENV, None)
    return env


def _error(cell: Any) -> tuple[str, str] | None:
    """``(ename, evalue)`` of the error the cell showed, if any."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename", ""), out.get("evalue", "")
    return None


def _first_line(source: str) -> str:
    return source.strip().split("\n", 1)[0][:80]


def _short(ename: str, evalue: str) -> str:
    return f"{ename}: {evalue}"[:SHORT]


class _Kernel:
    """One kernel; master cells run in place, other code in a scratch cell at the end."""

    def __init__(self, nb: Any, path: Path) -> None:
        self.nb = copy.deepcopy(nb)
        self.nb.cells.append(nbformat.v4.new_code_cell(""))
        self.scratch = len(self.nb.cells) - 1
        self.client = NotebookClient(
            self.nb,
            timeout=load.stretched(600),  # nbval's --nbval-cell-timeout in make test
            startup_timeout=load.stretched(300),  # a busy machine starts kernels slowly
            kernel_name="python3",
            allow_errors=True,  # errors are read from the outputs, never raised
            resources={"metadata": {"path": str(path.parent)}},
            **runner.kernel_options(),  # Unix sockets where TCP is refused
        )

    def cell(self, index: int) -> tuple[str, str] | None:
        """Run the master's cell ``index``; its error, if any."""
        return self._run(self.nb.cells[index], index, True)

    def code(
        self, source: str, history: bool = True, timeout: int | None = None
    ) -> tuple[str, str] | None:
        """Run ``source`` as a cell of its own (``timeout``: seconds, not the
        client's); its error, if any."""
        cell = nbformat.v4.new_code_cell(source)
        if timeout is None:
            return self._run(cell, self.scratch, history)
        default, self.client.timeout = self.client.timeout, timeout
        try:
            return self._run(cell, self.scratch, history)
        finally:
            self.client.timeout = default

    def _run(self, cell: Any, index: int, history: bool) -> tuple[str, str] | None:
        try:
            self.client.execute_cell(cell, index, store_history=history)
        except Exception as err:  # noqa: BLE001 - a timeout or a dead kernel, reported
            return type(err).__name__, str(err).strip().split("\n", 1)[0]
        return _error(cell)


def _replay(
    kernel: _Kernel, ex: str, solution: str, test: str, answers: list
) -> list[Replay]:
    """Each wrong answer, then the test once more with the solution back in place."""
    out = []
    for label, code, words in answers:
        # the student writes in the exercise cell, under its first line
        code = f"# EXERCISE: {ex}\n{code.lstrip(chr(10))}"
        raised = kernel.code(code)
        if raised:
            failed, message = False, f"the wrong answer's cell raised {_short(*raised)}"
        else:
            raised = kernel.code(test)
            if raised is None:
                failed, message = False, "the visible test passed"
            elif raised[0] != "CheckFailed":
                failed, message = False, f"raised {_short(*raised)} (not CheckFailed)"
            else:
                failed, message = True, raised[1]
        out.append(Replay(ex, label, words, failed, message))
        restored = kernel.code(solution)
        if restored:
            raise _Broken(
                f"the solution of {ex}, run again, raised {_short(*restored)}"
            )
    return out


def _replay_hidden(
    kernel: _Kernel, ex: str, solution: str, test: str, hidden: str, answers: list
) -> list[Replay]:
    """Each wrong answer at a hidden test cell, run as the grader runs it: after the
    visible test (whose error is the visible replay's business); then the solution,
    the visible test and the hidden one pass again."""
    out = []
    for label, code, words in answers:
        raised = kernel.code(f"# EXERCISE: {ex}\n{code.lstrip(chr(10))}")
        if raised:  # the solution's code is still there: named by the visible replay
            failed, message = True, f"the wrong answer's cell raised {_short(*raised)}"
        else:
            kernel.code(test)
            raised = kernel.code(hidden, timeout=load.stretched(HIDDEN_TIMEOUT))
            if raised and raised[0] == "CellTimeoutError":  # the kernel is still in it
                raise _Broken(
                    f"{ex}: {label}: the hidden test did not end in "
                    f"{load.stretched(HIDDEN_TIMEOUT)} s with it (the grader's cell "
                    "timeout fails it): list it in NEVER_END of hidden_passes.py"
                )
            failed = raised is not None
            message = _short(*raised) if raised else "the hidden test passed"
        out.append(Replay(ex, label, words, failed, message, hidden=True))
        restored = kernel.code(solution)
        if restored:
            raise _Broken(
                f"the solution of {ex}, run again, raised {_short(*restored)}"
            )
    for source in (test, hidden):
        raised = kernel.code(source)
        if raised:
            raise _Broken(f"run again, it raised {_short(*raised)}")
    return out


class _Broken(Exception):
    """The master's own code failed where it had passed before."""


def run_master(
    master: Path,
    wrong: Wrong | None = None,
    *,
    env: dict[str, str] | None = None,
    report_dir: Path | None = None,
    hidden: Wrong | None = None,
) -> MasterRun:
    """Run ``master`` to its end in one kernel, replaying ``wrong`` (default: its wNN.py).

    ``env`` defaults to :func:`kernel_env`; the lowering report goes to
    ``report_dir/STEM.json`` (default ``build/lowering/``, as for nbval's notebooks).
    ``hidden`` (wrong answers of ``wrong``) are replayed at the hidden test cells too
    (:attr:`MasterRun.hidden`).
    """
    master = Path(master).resolve()
    wrong = fixtures_for(master) if wrong is None else applicable(wrong)
    env = kernel_env() if env is None else env
    try:
        shown = str(master.relative_to(ROOT))
    except ValueError:
        shown = str(master)
    result = MasterRun(shown)
    nb = nbformat.read(master, as_version=4)
    checks = env.get(lowering_record.ENV) == "1"
    kernel = _Kernel(nb, master)
    start = time.perf_counter()
    solutions: dict[str, str] = {}
    tests: dict[str, str] = {}  # each exercise's visible test cell
    left = set(wrong)
    with kernel.client.setup_kernel(env=env):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            raised = kernel.cell(index)
            if raised:
                result.error = (
                    f"cell {index} ({_first_line(cell.source)!r}): {_short(*raised)}"
                )
                break
            result.cells_run += 1
            ex = student_version.exercise_id(cell)
            if ex:
                solutions[ex] = cell.source
            header = student_version.test_header(cell)
            if header and not header[2]:
                tests[header[0]] = cell.source
            at_hidden = bool(hidden and header and header[2] and hidden.get(header[0]))
            if not (header and header[0] in wrong and header[0] in solutions):
                continue
            if not (at_hidden or (not header[2] and header[0] in left)):
                continue
            ex = header[0]
            replay_start = time.perf_counter()
            try:
                if checks:
                    kernel.code(_PAUSE, history=False)
                if at_hidden:
                    result.hidden += _replay_hidden(
                        kernel, ex, solutions[ex], tests.get(ex, ""), cell.source,
                        hidden[ex],  # type: ignore[index]
                    )  # fmt: skip
                else:
                    result.replays += _replay(
                        kernel, ex, solutions[ex], cell.source, wrong[ex]
                    )
                if checks:
                    kernel.code(_RESUME, history=False)
                if at_hidden:
                    continue
                raised = kernel.code(cell.source)
                if raised:
                    raise _Broken(f"run again, it raised {_short(*raised)}")
            except _Broken as err:
                result.error = f"cell {index} ({_first_line(cell.source)!r}): {err}"
                break
            finally:
                result.replay_seconds += time.perf_counter() - replay_start
            left.discard(ex)
        if checks and not result.error:
            result.lowering = _lowering(kernel, nb, master, report_dir)
    result.seconds = time.perf_counter() - start
    result.missing = sorted(left)
    return result


def _lowering(
    kernel: _Kernel, nb: Any, master: Path, report_dir: Path | None
) -> list[str]:
    """What the lessons' LoweringCheck (tests/notebooks/nbval_lessons.py) says after a notebook's last cell: one line per
    program that did not lower (the report: ``report_dir/STEM.json``)."""
    path = (report_dir or ROOT / "build" / "lowering") / f"{master.stem}.json"
    path.unlink(missing_ok=True)
    module = lowering_record.__name__
    raised = kernel.code(
        f"__import__('importlib').import_module({module!r}).write_report({str(path)!r})",
        history=False,
    )
    if raised or not path.exists():
        return [f"the kernel wrote no lowering report ({path}): {raised}"]
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("disabled"):
        return []
    # the master's cells by their index in the notebook (markdown cells match nothing)
    sources = [c.source if c.cell_type == "code" else None for c in nb.cells]
    failures, _ = lowering_record.findings(report, sources)
    for entry, label in zip(
        report["cells"], lowering_record.cell_labels(report, sources), strict=True
    ):
        entry["cell"] = label
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return failures


def problems(result: MasterRun, wrong: Wrong) -> list[str]:
    """One short line per thing wrong with the run: the master's error, a wrong answer
    that passed or gave no hint, an exercise with fewer than two wrong answers, one
    never replayed, a program that did not lower."""
    out = [f"{result.master}: {result.error}"] if result.error else []
    out += [
        f"{result.master}: {ex} has {len(answers)} wrong answer(s); at least 2 are needed"
        for ex, answers in wrong.items()
        if len(answers) < 2
    ]
    if result.missing and not result.error:
        out.append(
            f"{result.master}: wrong answers for {', '.join(result.missing)}, which has "
            "no visible test cell after its solution cell"
        )
    out += [
        f"{result.master}: {p}"
        for r in result.replays + result.hidden
        if (p := r.problem())
    ]
    out += [f"{result.master}: lowering: {line[:SHORT]}" for line in result.lowering]
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.wrong_answers.replay MASTER...``: each master's wrong answers
    (``tests/wrong_answers/wNN.py`` by its number) replayed at its visible and hidden
    tests, without the lowering check; 1 when any problem is found. The wrong answers
    that the course's own hidden tests let through or never end in
    (``hidden_passes.py``) are not replayed at the hidden tests."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.wrong_answers.replay",
        description="Replay the known wrong answers against a master, its hidden tests "
        "included: run it after editing a hidden test. Each wrong answer must fail "
        "the visible test with its hint, and fail the hidden tests unless the "
        "course's own let it through or never end with it "
        "(tests/wrong_answers/hidden_passes.py).",
    )
    parser.add_argument("masters", nargs="+", type=Path, metavar="MASTER",
                        help="the master to grade with, e.g. solutions/00_welcome_exercises.ipynb")  # fmt: skip
    args = parser.parse_args(argv)
    env = kernel_env() | {lowering_record.ENV: "0"}
    bad = False
    for master in args.masters:
        if not master.is_file():
            parser.error(f"{master}: no such master")
        wrong = fixtures_for(master)
        if not wrong:
            print(f"{master}: no wrong answers (tests/wrong_answers/wNN.py)")
            bad = True
            continue
        known = [PASSES.get(master.name[:2], {}), NEVER_END.get(master.name[:2], {})]
        hidden = {
            ex: [a for a in answers if not any(a[0] in k.get(ex, ()) for k in known)]
            for ex, answers in wrong.items()
        }
        result = run_master(master, wrong, env=env, hidden=hidden)
        result.master = str(master)
        found = problems(result, wrong)
        for line in found:
            print(line)
        left = sum(map(len, wrong.values())) - sum(map(len, hidden.values()))
        print(
            f"{master}: {sum(map(len, wrong.values()))} wrong answer(s) replayed at "
            f"the visible tests, {len(result.hidden)} at the hidden tests; "
            f"{len(found)} problem(s)"
            + (
                f"; {left} that the course's own hidden tests let through or never "
                "end in (hidden_passes.py) not replayed there"
                if left
                else ""
            )
        )
        bad = bad or bool(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
