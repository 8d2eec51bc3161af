"""The similarity report: known copies rank first, the starter scores nothing, bad
submissions are named and the rest still compared, the pages are escaped and offline."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from course_utils.errors import CourseError
from course_utils.grading.inputs.master import load_master
from course_utils.grading.records import similarity
from tests.grading import similar_class as sc
from tests.grading.helpers import MASTER, ROOT, STUDENT, nbgrader_only


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("similar")
    master = load_master(sc.write_master(root / "master"))
    subs = sc.write_class(root / "subs")
    return master, subs, similarity.similarity(subs, master)


def _independent(pairs):
    return [
        p for p in pairs if (p.a, p.b) not in sc.COPIED and not {p.a, p.b} & sc.STARTERS
    ]


def test_copied_and_renamed_pairs_rank_above_every_independent_pair(made):
    _, _, result = made
    assert sorted(result.code) == sorted(sc.ROSTER) and not result.problems
    for pairs in [result.overall, *result.by_exercise.values()]:
        assert len(pairs) == 36  # every pair of the 9 students
        assert {(p.a, p.b) for p in pairs[:3]} == sc.COPIED
        copies = [p.score for p in pairs[:3]]
        assert min(copies) > max(p.score for p in _independent(pairs))
        # The renamed copy normalises to the same code as the original: all of it matches.
        assert copies == [1.0, 1.0, 1.0]
    # Independent solutions may share an idiom, never most of their code.
    assert max(p.score for p in _independent(result.overall)) < 0.5


def test_the_starter_shared_by_everyone_scores_nothing(made):
    master, _, result = made
    for pairs in [result.overall, *result.by_exercise.values()]:
        with_starter = [p for p in pairs if {p.a, p.b} & sc.STARTERS]
        assert len(with_starter) == 15
        assert all(
            p.score == 0 and p.matched_a == p.matched_b == 0 for p in with_starter
        )
    # No marked region of any pair reaches into the signature and docstring everyone has.
    for ex, pairs in result.by_exercise.items():
        for p in pairs:
            for who, slices in zip((p.a, p.b), p.slices.get(ex, ()), strict=False):
                given = result.code[who][ex].index('"""', 60) + 3  # the docstring's end
                assert slices[0].min() >= given, (ex, p.a, p.b)
    # Without the subtraction the untouched starters would match each other in full.
    bare = similarity.Fingerprints([])
    hal, ivy = (result.code[s]["normalise"] for s in sorted(sc.STARTERS))
    _, (share, _), _ = similarity._copydetect()[0].compare_files(bare(hal), bare(ivy))
    assert share == 1.0


def test_given_code_is_subtracted_even_where_it_repeats():
    body = "\n".join(sc.SOLUTIONS["normalise"][0].split("\n")[:3])
    prints = similarity.Fingerprints([body])
    assert prints(body).token_coverage == 0
    # Twice (two cells of it): only the k-grams across the join are the student's own.
    one = len(prints(body).filtered_code)
    twice = prints(body + "\n" + body)
    starts = [i for idx in twice.hash_idx.values() for i in idx]
    assert starts and all(one - twice.k < i < one for i in starts)
    assert prints(sc.SOLUTIONS["normalise"][2]).token_coverage > 0


def test_scores_do_not_depend_on_pythons_hash_salt():
    doc = "for V in V: V += V * V - V"
    code = (
        "from course_utils.grading.records import similarity\n"
        f"print(similarity.kgram_hashes({doc!r}, 5).tolist())"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout
        for seed in ("1", "2")
    ]  # fmt: skip
    assert runs[0] == runs[1] == f"{similarity.kgram_hashes(doc, 5).tolist()}\n"
    assert len(set(json.loads(runs[0]))) == len(doc) - 4  # one hash per distinct k-gram


def test_blanked_starter_lines_keep_every_position():
    starter = 'def f(x):\n    """Twice x."""\n    raise NotImplementedError()'
    code = 'def f(x):\n    """Twice x."""\n    return 2 * x'
    out = similarity.blank_lines(code, starter)
    assert len(out) == len(code) and out.split("\n")[2] == "    return 2 * x"
    assert out.split("\n")[1].strip() == ""
    # Half a kept docstring stays, or the rest of the cell would read as one string.
    starter = 'def f(x):\n    """Twice x,\n    as a float."""\n    ...'
    code = 'def f(x):\n    """Twice x,\n    an int."""\n    return 2 * x'
    assert similarity.blank_lines(code, starter).split("\n")[1] == '    """Twice x,'


def test_bad_submissions_are_named_and_the_rest_compared(made, tmp_path):
    master, subs, _ = made
    folder = tmp_path / "subs"
    shutil.copytree(subs, folder)
    (folder / "zed.ipynb").write_text("{")
    (folder / "link.ipynb").symlink_to(folder / "ada.ipynb")
    (folder / "empty-folder").mkdir()
    result = similarity.similarity(folder, master)
    assert "zed.ipynb: the notebook is truncated" in result.problems["zed"]
    assert "is a symbolic link" in result.problems["link"]
    assert "holds no .ipynb" in result.problems["empty-folder"]
    assert sorted(result.code) == sorted(sc.ROSTER)
    assert {(p.a, p.b) for p in result.overall[:3]} == sc.COPIED
    page = similarity.page(result, "t", result.overall, result.exercises, [])
    assert "zed.ipynb: the notebook is truncated" in page


def test_a_missing_or_empty_folder_is_an_error_naming_it(made, tmp_path):
    master = made[0]
    with pytest.raises(CourseError, match=f"{tmp_path / 'nope'}: not a folder"):
        similarity.similarity(tmp_path / "nope", master)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("")
    with pytest.raises(CourseError, match=f"{tmp_path / 'empty'}: no notebooks"):
        similarity.similarity(tmp_path / "empty", master)


def test_pages_are_escaped_and_self_contained_and_csv_is_ranked(made, tmp_path):
    master, subs, _ = made
    folder = tmp_path / "subs"
    shutil.copytree(subs, folder)
    nb = nbformat.reads(sc.submission(("solution", 2)), as_version=4)
    hostile = (
        "\n    s = '</pre><script>alert(1)</script>' * 3 + str(len(xs))\n    return s"
    )
    nb.cells[2].source += hostile
    for name in ("<b>x", "=cmd"):
        nbformat.write(nb, folder / f"{name}.ipynb")
    result = similarity.similarity(folder, master)
    written = similarity.write(result, tmp_path / "out")
    names = sorted(p.relative_to(tmp_path / "out").as_posix() for p in written)
    assert names == ["exercises/normalise.csv", "exercises/normalise.html",
                     "exercises/word-counts.csv", "exercises/word-counts.html",
                     "overall.csv", "overall.html"]  # fmt: skip
    for path in written:
        if path.suffix == ".html":
            text = path.read_text()
            assert "<script" not in text and "<b>x" not in text
            assert not re.search(r"(src|href)=['\"]?(https?:)?//", text)  # offline
            assert similarity.NOTICE in text
    page = (tmp_path / "out" / "exercises" / "normalise.html").read_text()
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>&lt;b&gt;x</b>" in page  # the pair's code side by side, named
    rows = list(csv.reader(io.StringIO((tmp_path / "out" / "overall.csv").read_text())))
    assert rows[0][:4] == ["rank", "student_a", "student_b", "score"]
    assert rows[0][-2:] == ["exercise:normalise", "exercise:word-counts"]
    assert len(rows) == 1 + 11 * 10 // 2
    scores = [float(r[3]) for r in rows[1:]]
    assert scores == sorted(scores, reverse=True)
    scored = {(r[1], r[2]): float(r[3]) for r in rows[1:]}
    assert scored["<b>x", "'=cmd"] == 1.0 and rows[1][3] == "1.000"


def test_the_lesson_of_a_course_master_is_subtracted():
    master = ROOT / "solutions" / "00_welcome_exercises.ipynb"
    assert similarity.lesson_notebooks(master) == [
        ROOT / "notebooks" / "00_welcome_and_setup.ipynb"
    ]
    assert similarity.lesson_notebooks(MASTER) == []


def test_the_starter_comes_from_the_master_or_from_starter(tmp_path):
    given = similarity.starter_code(load_master(MASTER))
    assert given.starters["square"].endswith("raise NotImplementedError()")
    assert "return x * x" not in given.starters["square"]
    nbgrader = load_master(nbgrader_only(tmp_path))
    with pytest.raises(CourseError, match="--master .*pass the notebook .* --starter"):
        similarity.starter_code(nbgrader)
    given = similarity.starter_code(nbgrader, STUDENT)
    assert "raise NotImplementedError()" in given.starters["square"]
    with pytest.raises(CourseError, match="--starter .*nope.ipynb"):
        similarity.starter_code(nbgrader, tmp_path / "nope.ipynb")


def test_a_column_gives_each_students_match_with_the_masters_solution(made):
    """On short exercises every correct pair can score high; how much of a student's
    code is the master's own solution tells a copy of the answer key apart."""
    _, _, result = made
    share = result.master_share  # student -> exercise ("" for all) -> share
    assert share["ada"][""] == share["bob"][""] == share["cy"][""] == 1.0
    assert all(share[s][""] == 0 for s in sc.STARTERS)
    assert max(share[s][""] for s in ("dee", "eve", "fay", "gus")) < 0.5
    rows = list(csv.DictReader(io.StringIO(similarity.overall_csv(result))))
    row = next(r for r in rows if (r["student_a"], r["student_b"]) == ("ada", "dee"))
    assert row["master_a"] == "1.000" and float(row["master_b"]) < 0.5
    page = similarity.page(result, "all", result.overall, result.exercises, [])
    assert "master a" in page
