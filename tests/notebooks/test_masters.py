"""Each exercise master runs once, to its end, in a Jupyter kernel, with its wrong answers.

The masters are not under nbval: tests/wrong_answers/replay.py runs every cell of a
master in one kernel (smoke mode, the suite's strict warnings and lowering check) and,
at each visible test cell, puts every wrong answer of tests/wrong_answers/wNN.py in
place of the solution: the visible test must fail with its hint.
"""

from pathlib import Path

import nbformat
import pytest

from tests.wrong_answers import replay

ROOT = Path(__file__).resolve().parents[2]
MASTERS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*_exercises.ipynb"))


@pytest.mark.notebooks
@pytest.mark.parametrize("master", MASTERS, ids=[f"w{p.name[:2]}" for p in MASTERS])
def test_master_runs_to_its_end_and_every_wrong_answer_fails_with_its_hint(master):
    wrong = replay.fixtures_for(master)
    result = replay.run_master(master, wrong)
    problems = replay.problems(result, wrong)
    assert not problems, "\n".join(problems)
    cells = nbformat.read(master, as_version=4).cells
    assert result.cells_run == sum(c.cell_type == "code" for c in cells)
    assert len(result.replays) == sum(len(answers) for answers in wrong.values())


def test_every_wrong_answer_module_has_its_master():
    modules = sorted((ROOT / "tests" / "wrong_answers").glob("w[0-9][0-9].py"))
    assert modules
    numbers = {p.name[:2] for p in MASTERS}
    assert [p.name for p in modules if p.stem[1:] not in numbers] == []


def test_the_replay_kernel_talks_over_unix_sockets_where_asked(monkeypatch):
    from course_utils.tooling.execution.ipc_kernel import IPCKernelManager

    nb = nbformat.v4.new_notebook()
    monkeypatch.setenv("COURSE_KERNEL_TRANSPORT", "ipc")
    assert (
        replay._Kernel(nb, ROOT / "x.ipynb").client.kernel_manager_class
        is IPCKernelManager
    )
    monkeypatch.setenv("COURSE_KERNEL_TRANSPORT", "tcp")
    assert (
        replay._Kernel(nb, ROOT / "x.ipynb").client.kernel_manager_class
        is not IPCKernelManager
    )


# A tiny master: one exercise, its visible test, a cell after it that needs the solution.
TINY = [
    "from course_utils.exercises import CheckFailed",
    "# EXERCISE: double\ndef double(x):\n    return 2 * x",
    "# TESTS: double points=1\nif double(3) != 6:\n"
    "    raise CheckFailed(f'double(3) is {double(3)}: multiply by two')",
    "assert double(5) == 10, 'the solution is back'\nprint('the end')",
]
TINY_WRONG = {
    "double": [
        ("adds two", "def double(x):\n    return x + 2", "multiply by two"),
        ("right at 3 only", "def double(x):\n    return 6 if x == 3 else 0", "x"),
        ("another hint", "def double(x):\n    return 0", "times two"),
        ("an AttributeError", "def double(x):\n    return x.twice", "x"),
        ("a syntax error", "def double(x) return 2", "x"),
    ],
    "triple": [("no such exercise", "pass", "x"), ("again", "pass", "x")],
}


def _tiny(tmp_path, sources, name="99_tiny_exercises.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# A tiny master")]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


@pytest.mark.notebooks
def test_a_wrong_answer_that_passes_or_gives_no_hint_is_named(tmp_path):
    path = _tiny(tmp_path, TINY)
    result = replay.run_master(path, TINY_WRONG, report_dir=tmp_path)
    assert result.error == "" and result.cells_run == 4  # ran to its end
    assert result.missing == ["triple"]
    found = replay.problems(result, TINY_WRONG)
    where = str(path)
    assert found[:4] == [
        f"{where}: wrong answers for triple, which has no visible test cell after "
        "its solution cell",
        f"{where}: double: right at 3 only: the visible test passed",
        f"{where}: double: another hint: the message lacks 'times two': "
        "double(3) is 0: multiply by two",
        f"{where}: double: an AttributeError: raised AttributeError: 'int' object "
        "has no attribute 'twice' (not CheckFailed)",
    ]
    assert found[4].startswith(
        f"{where}: double: a syntax error: the wrong answer's cell raised SyntaxError"
    ), found[4]
    assert len(found) == 5, found  # "adds two" fails with its hint: no line


@pytest.mark.notebooks
def test_a_broken_cell_after_the_last_exercise_is_named(tmp_path):
    path = _tiny(tmp_path, [*TINY, "x = 1\n1 / 0  # broken"])
    wrong = {"double": TINY_WRONG["double"][:1] * 2}
    result = replay.run_master(path, wrong, report_dir=tmp_path)
    assert [r.problem() for r in result.replays] == [None, None]
    assert replay.problems(result, wrong) == [
        f"{path}: cell 5 ('x = 1'): ZeroDivisionError: division by zero"
    ]
    assert result.cells_run == 4


def test_too_few_wrong_answers_are_named():
    result = replay.MasterRun("m.ipynb")
    assert replay.problems(result, {"a": [("one", "", "")]}) == [
        "m.ipynb: a has 1 wrong answer(s); at least 2 are needed"
    ]


# A tiny master whose hidden test of double was weakened: x * x passes it.
TINY_HIDDEN = [
    "from course_utils.exercises import CheckFailed",
    "# EXERCISE: double\ndef double(x):\n    return 2 * x",
    "# TESTS: double points=1\nif double(3) != 6:\n"
    "    raise CheckFailed(f'double(3) is {double(3)}: multiply by two')",
    "# HIDDEN TESTS: double points=2\n### BEGIN HIDDEN TESTS\n"
    "assert double(2) == 4\n### END HIDDEN TESTS",
    "# EXERCISE: triple\ndef triple(x):\n    return 3 * x",
    "# TESTS: triple points=1\nif triple(3) != 9:\n    raise CheckFailed('times three')",
    "# HIDDEN TESTS: triple points=2\n### BEGIN HIDDEN TESTS\n"
    "assert triple(4) == 12\n### END HIDDEN TESTS",
    "assert double(5) == 10 and triple(5) == 15, 'the solutions are back'",
]
HIDDEN_WRONG = {
    "double": [
        ("squares", "def double(x):\n    return x * x", "multiply by two"),
        ("adds one", "def double(x):\n    return x + 1", "multiply by two"),
    ],
    "triple": [
        ("cubes", "def triple(x):\n    return x ** 3", "times three"),
        ("adds three", "def triple(x):\n    return x + 3", "times three"),
    ],
}


@pytest.mark.notebooks
def test_a_wrong_answer_that_passes_a_hidden_test_is_named(
    tmp_path, monkeypatch, capsys
):
    """After an instructor edits a hidden test: ``python -m tests.wrong_answers.replay
    MASTER`` replays the wrong answers at the hidden tests too (TEACHING §1), and
    names one that passes it unless the course's own hidden test let it through."""
    path = _tiny(tmp_path, TINY_HIDDEN, name="98_tiny_exercises.ipynb")
    monkeypatch.setattr(replay, "fixtures_for", lambda master: HIDDEN_WRONG)
    assert replay.main([str(path)]) == 1
    printed = capsys.readouterr().out.splitlines()
    summary = f"{path}: 4 wrong answer(s) replayed at the visible tests"
    assert printed == [
        f"{path}: double: squares: the hidden test passed",
        f"{summary}, 4 at the hidden tests; 1 problem(s)",
    ], printed
    monkeypatch.setitem(replay.PASSES, "98", {"double": ["squares"]})
    assert replay.main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{summary}, 3 at the hidden tests; 0 problem(s); 1 that the course's own "
        "hidden tests let through or never end in (hidden_passes.py) not replayed there"
    ]


def test_a_wrong_answer_from_a_version_on_is_left_out_before_it():
    answers = [
        ("always", "a", "x"),
        ("from jax 0.1", "b", "x", {"jax": "0.1"}),
        ("from jax 999", "c", "x", {"jax": "999"}),
    ]
    assert replay.applicable({"e": answers}) == {
        "e": [("always", "a", "x"), ("from jax 0.1", "b", "x")]
    }


@pytest.mark.notebooks
def test_a_wrong_answer_that_never_ends_in_a_hidden_test_stops_the_replay(
    tmp_path, monkeypatch
):
    """The kernel is still in that test: the run stops and names the answer to list."""
    path = _tiny(tmp_path, TINY_HIDDEN, name="98_tiny_exercises.ipynb")
    loops = "def double(x):\n    while x == 2:\n        pass\n    return x + 1"
    wrong = {"double": [("loops at 2", loops, "multiply by two")] * 2}
    monkeypatch.setattr(replay, "HIDDEN_TIMEOUT", 2)
    result = replay.run_master(path, wrong, report_dir=tmp_path, hidden=wrong)
    assert "double: loops at 2: the hidden test did not end in " in result.error
    assert "NEVER_END of hidden_passes.py" in result.error, result.error


def test_every_wrong_answer_the_hidden_tests_do_not_judge_exists():
    import importlib

    from tests.wrong_answers import hidden_passes

    missing = []
    for known in (hidden_passes.PASSES, hidden_passes.NEVER_END):
        for number, exercises in known.items():
            wrong = importlib.import_module(f"tests.wrong_answers.w{number}").WRONG
            for ex, labels in exercises.items():
                have = {a[0] for a in wrong.get(ex, [])}
                missing += [f"w{number}: {ex}: {x}" for x in labels if x not in have]
    assert missing == []
