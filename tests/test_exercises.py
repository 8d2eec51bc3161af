"""course_utils.exercises: ``check``, the self-test after every stub."""

import linecache

import pytest

from course_utils import exercises
from course_utils.exercises import check


def test_check_passes_and_reports(capsys):
    assert (
        check("double", lambda: 4, 4) is None
    )  # nothing for a notebook to echo as Out
    assert "✓ double: passed" in capsys.readouterr().out


def test_check_turns_stub_into_not_implemented(capsys, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)

    def stub():
        raise NotImplementedError()

    assert check("double", stub, 4) is None
    assert "double: not implemented yet" in capsys.readouterr().out


def test_an_untouched_stub_is_reported_once_per_cell_run(capsys, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)

    def stub():
        raise NotImplementedError()

    def cell():  # one run of a test cell: the same frame for every check
        for _ in range(15):
            check("mask", stub, 4)
        check("other", stub, 4)

    cell()
    out = capsys.readouterr().out
    assert out.count("mask: not implemented yet") == 1
    assert out.count("other: not implemented yet") == 1
    cell()  # the cell run again: reported again
    assert capsys.readouterr().out.count("mask: not implemented yet") == 1


def test_in_a_notebook_a_stub_is_reported_once_per_execution_count(capsys, monkeypatch):
    # IPython runs each statement of a cell in a frame of its own: the count decides.
    from course_utils import cell_notes

    monkeypatch.delenv("COURSE_GRADING", raising=False)
    count = [7]
    monkeypatch.setattr(cell_notes, "cell", lambda: count[0])

    def stub():
        raise NotImplementedError()

    def statement():  # one statement of the cell: a new frame each time
        check("mask", stub, 4)

    for _ in range(11):
        statement()
    assert capsys.readouterr().out.count("mask: not implemented yet") == 1
    count[0] = 8  # the cell run again
    statement()
    statement()
    assert capsys.readouterr().out.count("mask: not implemented yet") == 1


def test_check_raises_for_stub_under_the_grader(monkeypatch):
    monkeypatch.setenv("COURSE_GRADING", "1")
    with pytest.raises(NotImplementedError):
        check("double", lambda: (_ for _ in ()).throw(NotImplementedError()), 4)


def test_check_wrong_answer_shows_expected_got_and_hint():
    with pytest.raises(exercises.CheckFailed) as err:
        check("double", lambda: 5.0, 4.0, hint="multiply by two")
    msg = str(err.value)
    assert "expected" in msg and "but got" in msg and "Hint: multiply by two" in msg


def test_check_with_own_assertions():
    def test():
        assert 1 + 1 == 3, "arithmetic is off"

    with pytest.raises(exercises.CheckFailed, match="arithmetic is off"):
        check("sum", test)


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _TrueFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


@pytest.mark.parametrize("liar", [_AlwaysEqual(), _TrueFloat(0.0), [_AlwaysEqual()]])
def test_check_rejects_an_answer_that_lies_about_equality(liar):
    expected = [79] if isinstance(liar, list) else 79
    with pytest.raises(exercises.CheckFailed, match="lie about equality"):
        check("break-even", lambda: liar, expected)


def test_the_grading_switch_is_fixed_when_the_module_is_imported():
    import subprocess
    import sys

    code = (
        "import os; os.environ['COURSE_GRADING'] = '1'\n"
        "from course_utils import exercises\n"
        "os.environ.pop('COURSE_GRADING')\n"
        "print(exercises.grading())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def _cell(code: str, name: str, ns: dict) -> None:
    """Run ``code`` as a notebook cell would: its own file name, its lines on record."""
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), ns)  # noqa: S102 - the test's own code


STUDENT = """import numpy as np

def project(x, w):
    h = x @ w.T
    return h.sum()
"""


def test_a_crash_in_the_students_code_names_the_error_the_function_and_the_line():
    ns = {"check": check}
    _cell(STUDENT, "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell(
            "check('proj', lambda: project(np.ones((2, 3)), np.ones((3, 4))), 6.0, "
            "hint='sum over the batch', crash_hint='w is (d_in, d_out) already')",
            "<test cell>",
            ns,
        )
    text = str(err.value)
    first, code, error, hint = text.splitlines()
    assert first == "proj: your function raised ValueError at line 4 of project:"
    assert code.strip() == "h = x @ w.T"
    assert error.strip().startswith("ValueError: matmul: Input operand 1")
    assert hint == "Hint: w is (d_in, d_out) already"
    assert "sum over the batch" not in text  # the hint meant for a wrong value


def test_in_a_course_notebook_only_an_exercise_cell_is_the_students():
    ns = {"check": check}
    _cell("# EXERCISE: f\ndef f(x):\n    return x * 2\n", "<exercise cell>", ns)
    _cell("def helper(y):\n    assert y == 3, 'f(1) should be 3'\n", "<context>", ns)
    _cell("def crash(y):\n    return y.nope\n", "<context 2>", ns)
    with pytest.raises(exercises.CheckFailed) as err:  # the helper's assertion: a check
        _cell(
            "# TESTS: f points=1\ncheck('f', lambda: helper(f(1)), hint='add one')",
            "<test cell>",
            ns,
        )
    assert str(err.value) == "f: f(1) should be 3\nHint: add one"
    with pytest.raises(
        exercises.CheckFailed
    ) as err:  # the helper's crash: not "your function"
        _cell(
            "# TESTS: f points=1\ncheck('f', lambda: crash(f(1)), hint='add one')",
            "<test cell 2>",
            ns,
        )
    assert str(err.value).startswith("f: checking your answer raised AttributeError")
    _cell("# EXERCISE: f\ndef f(x):\n    return crash(x)\n", "<exercise cell 2>", ns)
    with pytest.raises(exercises.CheckFailed) as err:  # called from the exercise cell
        _cell("# TESTS: f points=1\ncheck('f', lambda: f(1))", "<test cell 3>", ns)
    assert str(err.value).startswith(
        "f: your function raised AttributeError at line 3 of f:"
    )


def test_a_crash_hint_may_depend_on_the_error():
    def by_error(err):
        return "an attribute slip" if isinstance(err, AttributeError) else ""

    ns = {"check": check, "by_error": by_error}
    _cell("def f(x):\n    return x.nope\n", "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell("check('f', lambda: f(1), 1, crash_hint=by_error)", "<test cell>", ns)
    assert str(err.value).endswith("Hint: an attribute slip")
    _cell("def f(x):\n    return 1 / 0\n", "<exercise cell 2>", ns)
    with pytest.raises(exercises.CheckFailed) as err:  # '' from the function: no hint
        _cell("check('f', lambda: f(1), 1, crash_hint=by_error)", "<test cell 2>", ns)
    assert "Hint:" not in str(err.value)


def test_a_crash_without_a_crash_hint_gets_no_hint():
    ns = {"check": check}
    _cell("def f(x):\n    return x.nope\n", "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell("check('f', lambda: f(1), 1, hint='add one')", "<test cell>", ns)
    assert str(err.value).splitlines() == [
        "f: your function raised AttributeError at line 2 of f:",
        "    return x.nope",
        "  AttributeError: 'int' object has no attribute 'nope'",
    ]


def test_an_error_derived_from_base_exception_is_told_as_a_crash_with_its_hint():
    # torch.distributed.checkpoint's CheckpointException derives from BaseException
    ns = {"check": check, "Odd": type("CheckpointException", (BaseException,), {})}
    _cell("def f():\n    raise Odd('load failed')\n", "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell(
            "check('f', f, 1, hint='add one', crash_hint='a tensor to fill')",
            "<test cell>",
            ns,
        )
    message = str(err.value)
    assert "your function raised CheckpointException at line 2 of f" in message
    assert message.endswith("a tensor to fill")


def test_an_interrupt_is_not_told_as_a_crash():
    with pytest.raises(KeyboardInterrupt):
        check("f", lambda: (_ for _ in ()).throw(KeyboardInterrupt()), 1)


def test_an_error_while_checking_the_answer_is_a_wrong_value_with_the_hint():
    ns = {"check": check}
    _cell("def f():\n    return (1, 2)\n", "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell(
            "check('f', lambda: f().shape, (2,), hint='one array')", "<test cell>", ns
        )
    text = str(err.value)
    assert text.startswith("f: checking your answer raised AttributeError: 'tuple'")
    assert text.endswith("Hint: one array")
    with pytest.raises(exercises.CheckFailed) as err:
        _cell(
            "check('f', lambda: f().shape, (2,), hint='one array', crash_hint='no tuple')",
            "<test cell>",
            ns,
        )
    assert str(err.value).endswith("Hint: no tuple")


def test_a_wrong_value_reads_in_a_few_lines():
    import numpy as np

    with pytest.raises(exercises.CheckFailed) as err:
        check("w", lambda: np.zeros((64, 64)), np.ones((64, 64)), hint="add one")
    lines = str(err.value).splitlines()
    assert lines[0] == "w: wrong value"
    assert lines[1].startswith("  expected float64[64, 64] [1., 1.,")
    assert lines[2].startswith("  but got  float64[64, 64] [0., 0.,")
    assert lines[3].startswith("  4096 of 4096 elements differ")  # named once, above
    assert lines[-1] == "Hint: add one" and len(lines) == 5


def test_a_wrong_number_reads_as_expected_and_got():
    with pytest.raises(exercises.CheckFailed) as err:
        check("n", lambda: 2, 3, hint="round up")
    assert str(err.value).splitlines() == [
        "n: wrong value",
        "  expected 3",
        "  but got  2",
        "Hint: round up",
    ]


def test_a_wrong_boolean_reads_as_expected_and_got():
    with pytest.raises(exercises.CheckFailed) as err:
        check("b", lambda: True, False, hint="flip it")
    assert str(err.value).splitlines() == [
        "b: wrong value",
        "  expected False",
        "  but got  True",
        "Hint: flip it",
    ]


def test_extra_entries_are_named_as_the_answer_s():
    with pytest.raises(exercises.CheckFailed) as err:
        check("s", lambda: [1, 2, 3], [1], hint="fewer")
    assert "structures differ; only in your answer: ['[1]', '[2]']" in str(err.value)


def test_a_failed_check_renders_as_its_message_alone():
    with pytest.raises(exercises.CheckFailed) as err:
        check("w", lambda: 5.0, 4.0, hint="add one")
    (rendered,) = (
        err.value._render_traceback_()
    )  # what IPython prints instead of frames
    assert rendered == f"CheckFailed: {err.value}"


def test_in_a_kernel_a_failed_check_shows_no_course_frames():
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("from course_utils.exercises import check"),
        nbformat.v4.new_code_cell(STUDENT),
        nbformat.v4.new_code_cell(
            "check('proj', lambda: project(np.ones((2, 3)), np.ones((3, 4))), 6.0)"
        ),
        nbformat.v4.new_code_cell(
            "check('proj', lambda: project(np.ones((2, 3)), np.ones((4, 3))), 6.0, "
            "hint='sum over the batch')"
        ),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    crash, wrong = (nb.cells[i].outputs[0] for i in (2, 3))
    for out in (crash, wrong):
        assert out.output_type == "error" and out.ename == "CheckFailed"
        shown = "\n".join(out.traceback)
        assert "course_utils" not in shown and "site-packages" not in shown
        assert len(shown.splitlines()) <= 6, shown
    assert "raised ValueError at line 4 of project" in "\n".join(crash.traceback)
    assert "h = x @ w.T" in "\n".join(crash.traceback)
    assert "wrong value" in "\n".join(wrong.traceback)
    assert "Hint: sum over the batch" in "\n".join(wrong.traceback)


def test_clip_keeps_the_first_lines_and_the_hint():
    message = "ex: wrong value\n" + "x" * 5000 + "\nHint: read the docstring"
    short = exercises.clip(message, 2000)
    assert len(short) <= 2000
    assert short.startswith("ex: wrong value\nxxx")
    assert short.endswith(" [...]\nHint: read the docstring")
    assert exercises.clip("short", 2000) == "short"


def test_a_long_error_line_is_cut_between_words():
    line = "ValueError: " + " ".join(f"word{i}" for i in range(200))
    text = exercises._error_text(ValueError(line))
    assert len(text) <= 300 + len("ValueError: ")
    assert text.endswith(" ...")
    last = text.removesuffix(" ...").split()[-1]
    assert last in line.split(), f"cut inside a word: {last!r}"
    words = "ex: wrong value\n" + " ".join(["wording"] * 800) + "\nHint: read it"
    assert exercises.clip(words, 500).split(" [...]")[0].endswith("wording")


def test_the_grader_keeps_the_hint_of_a_long_error():
    from course_utils.grading.sandbox import outputs

    evalue = "ex: wrong value\n" + "y" * 9000 + "\nHint: sum, not mean"
    reply = {"status": "error", "ename": "CheckFailed", "evalue": evalue}
    record = outputs.finish({}, reply, 0.0)
    assert len(record["evalue"]) <= 2000
    assert record["evalue"].startswith("ex: wrong value")
    assert record["evalue"].endswith("Hint: sum, not mean")


def test_none_reads_as_none():
    with pytest.raises(exercises.CheckFailed, match="but got  None"):
        check("returns", lambda: None, 4)


def test_none_in_an_expected_list_reads_as_none():
    pytest.importorskip("jax")  # loaded, jax counts None as an empty pytree

    with pytest.raises(exercises.CheckFailed) as err:
        check("budget", lambda: [6, 0, 5], [6, None, 5], hint="None, not 0")
    lines = str(err.value).splitlines()
    assert lines[1:3] == ["  expected [6, None, 5]", "  but got  [6, 0, 5]"]
    assert lines[3].strip() == "budget[1]: array(0) != None"


def test_a_function_whose_cell_did_not_run_is_named_without_the_value_hint():
    ns = {"check": check}
    # the exercise cell stopped at compile time (an IndentationError): nothing defined
    with pytest.raises(IndentationError):
        _cell("# EXERCISE: judge\ndef decide(samples):\nreturn 1\n", "<exercise>", ns)
    direct = "# TESTS: judge points=1\ncheck('judge', lambda: decide([1.0]), 1, hint='widen')"
    helper = (
        "# TESTS: judge points=1\ndef _cases():\n    return decide([1.0])\n\n"
        "check('judge', _cases, 1, hint='widen', crash_hint='a list')"
    )
    for code in (direct, helper):
        with pytest.raises(exercises.CheckFailed) as err:
            _cell(code, "<test cell>", ns)
        text = str(err.value)
        assert text.startswith("judge: `decide` is not defined: the cell above")
        assert "IndentationError" in text and "Hint:" not in text


def test_a_name_error_inside_the_students_function_is_still_theirs():
    ns = {"check": check}
    _cell("# EXERCISE: f\ndef f(x):\n    return np.sqrt(x)\n", "<exercise cell>", ns)
    with pytest.raises(exercises.CheckFailed) as err:
        _cell("# TESTS: f points=1\ncheck('f', lambda: f(4.0), 2.0)", "<test cell>", ns)
    assert str(err.value).startswith(
        "f: your function raised NameError at line 3 of f:"
    )


@pytest.mark.parametrize("grading", ["", "1"])
def test_a_check_that_cannot_run_here_says_so_and_neither_passes_nor_fails(
    grading, capsys, monkeypatch
):
    monkeypatch.setenv(exercises.GRADING_ENV, grading)
    ns = {"check": check, "NotChecked": exercises.NotChecked}
    _cell("# EXERCISE: f\ndef f(x):\n    return x + 1\n", "<exercise cell nc>", ns)
    _cell(
        "# TESTS: f points=1\ndef _launch():\n    assert f(1) == 2\n"
        "    raise NotChecked('no processes here')\n\ncheck('f', _launch)",
        "<test cell nc>",
        ns,
    )
    out = capsys.readouterr().out
    assert out == "– f: not checked here: no processes here\n"  # one line, no "passed"


def test_not_checked_raised_by_the_answer_is_a_crash_not_a_free_pass(capsys):
    ns = {"check": check, "NotChecked": exercises.NotChecked}
    _cell(
        "# EXERCISE: f\ndef f(x):\n    raise NotChecked('skip me')\n",
        "<exercise cell nc2>",
        ns,
    )
    with pytest.raises(exercises.CheckFailed) as err:
        _cell("# TESTS: f points=1\ncheck('f', lambda: f(1), 2)", "<test cell nc2>", ns)
    assert str(err.value).startswith(
        "f: your function raised NotChecked at line 3 of f:"
    )
    assert "not checked here" not in capsys.readouterr().out
