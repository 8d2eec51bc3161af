"""``course grade similarity``: the command line, its errors, and its time on 30 students."""

from __future__ import annotations

import csv
import time

import pytest

from course_utils.cli import main as course_main
from tests.grading import similar_class as sc


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("similar-cli")
    return sc.write_master(root / "master"), sc.write_class(root / "subs")


def test_the_command_writes_the_report_and_prints_the_top_pairs(made, tmp_path, capsys):
    master, subs = made
    out = tmp_path / "sim"
    argv = ["grade", "similarity", str(subs), "--master", str(master)]
    assert course_main([*argv, "--out", str(out), "--show", "2"]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0].split() == ["pair", "score", "shares"]
    assert {tuple(line.split()[:3:2]) for line in lines[1:4]} == sc.COPIED
    assert "compared 9 student(s) on 2 exercise(s)" in printed
    assert "never a penalty" in lines[-1]
    page = (out / "overall.html").read_text()
    assert page.count("<h3 id='pair-") == 2  # --show 2
    for ex in ("normalise", "word-counts"):
        assert (out / "exercises" / f"{ex}.csv").is_file()
        assert f"href='exercises/{ex}.html'" in page


def test_source_works_as_master_and_out_has_a_default(
    made, tmp_path, capsys, monkeypatch
):
    master, subs = made
    monkeypatch.chdir(tmp_path)
    assert course_main(["grade", "similarity", str(subs), "--source", str(master)]) == 0
    assert (tmp_path / f"similarity-{master.stem}" / "overall.csv").is_file()
    assert "reports in similarity-07_small_exercises" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words, message",
    [
        (["@SUBS"], "--master is required"),
        (["@MISSING", "--master", "@MASTER"], "SUBMISSIONS @MISSING: not a folder"),
        (["@EMPTY", "--master", "@MASTER"], "SUBMISSIONS @EMPTY: no notebooks"),
        (["@SUBS", "--master", "@MISSING"], "--master @MISSING: no such notebook"),
        (["@SUBS", "--master", "@MASTER", "--out", "@SUBS/report"], "inside SUBMISSIONS"),
        (["@SUBS", "@SUBS", "--master", "@MASTER"], "expected one SUBMISSIONS folder"),
        (["@SUBS", "--master", "@MASTER", "--noise", "40", "--guarantee", "30"],
         "need 1 <= noise <= guarantee"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_naming_the_input(
    made, tmp_path, capsys, words, message
):
    master, subs = made
    (tmp_path / "empty").mkdir()
    names = {
        "@SUBS": str(subs),
        "@MASTER": str(master),
        "@MISSING": str(tmp_path / "missing"),
        "@EMPTY": str(tmp_path / "empty"),
    }

    def filled(text: str) -> str:
        for key, value in names.items():
            text = text.replace(key, value)
        return text

    assert course_main(["grade", "similarity", *map(filled, words)]) == 2
    err = capsys.readouterr().err
    assert filled(message) in err and err.count("\n") == 1
    assert not (subs / "report").exists()


def test_thirty_students_take_well_under_the_budget(tmp_path, capsys):
    master = sc.write_master(tmp_path / "master")
    subs = sc.write_large_class(tmp_path / "subs", 30)
    start = time.perf_counter()
    argv = ["grade", "similarity", str(subs), "--master", str(master)]
    assert course_main([*argv, "--out", str(tmp_path / "out")]) == 0
    seconds = time.perf_counter() - start
    assert seconds < 30, f"{seconds:.1f} s for 30 students"
    with open(tmp_path / "out" / "overall.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows) == 1 + 30 * 29 // 2
    # s00 and s25 hand in the same two solutions (the 5 x 5 mixes repeat after 25).
    assert {(r[1], r[2]) for r in rows[1:6]} == {
        (f"s{i:02d}", f"s{i + 25:02d}") for i in range(5)
    }
    assert "compared 30 student(s)" in capsys.readouterr().out


def test_canvas_names_without_lms_get_the_grade_warning_line(made, tmp_path, capsys):
    """Pairs of a Canvas download compared without ``--lms`` are named by whole file
    names: the command says so as ``course grade`` does; ``--lms canvas`` names logins."""
    import shutil

    master, subs = made
    canvas = tmp_path / "canvas"
    shutil.copytree(subs, canvas)
    first = sorted(canvas.glob("*.ipynb"))[0]
    first.rename(canvas / f"{first.stem}_21_991_{master.name}")
    argv = ["grade", "similarity", str(canvas), "--master", str(master)]
    assert course_main([*argv, "--out", str(tmp_path / "a")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(
        f"warning: 1 of 9 submission(s) are named as Canvas's download names them "
        f"({first.stem}_21_991_{master.name}): without --lms canvas each is named by "
        "that whole name in the pairs; give --lms canvas if they are Canvas's\n"
    ), printed
    out = tmp_path / "b"
    assert course_main([*argv, "--out", str(out), "--lms", "canvas"]) == 0
    assert "warning:" not in capsys.readouterr().out
    assert first.stem in (out / "overall.csv").read_text()
