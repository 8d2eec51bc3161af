"""Submissions: found in a folder (files, folders, reserved names) and matched to the master."""

from __future__ import annotations

import os
import shutil

import pytest

from course_utils.errors import CourseError
from course_utils.grading.inputs import submissions
from course_utils.grading.inputs.ipynb import read_cells
from course_utils.grading.inputs.master import load_master
from course_utils.grading.inputs.submissions import Matched, discover, match
from tests.grading.helpers import FIX, MASTER, ROOT, SUBS


def matched(name: str) -> Matched:
    return match(load_master(MASTER), read_cells(SUBS / f"{name}.ipynb"))


def test_match_uses_metadata_then_marker_text():
    moved = matched(
        "moved_cells"
    )  # total's marker line removed, metadata kept, moved up
    assert not moved.missing and "sum(xs)" in moved.student_code["total"][0]
    assert any("added or edited" in n for n in moved.notes)
    dup = matched("duplicated_cell")  # a pasted copy without metadata, found by marker
    assert dup.duplicated == {"square": 2}
    assert [s.splitlines()[-1].strip() for s in dup.student_code["square"]] == [
        "return x + x",
        "### END SOLUTION",
    ]
    assert any("2 cells hold it" in n for n in dup.notes)
    deleted = matched("deleted_cell")
    assert deleted.missing == ["greet"]
    assert any("no cell starts with '# EXERCISE: greet'" in n for n in deleted.notes)


def test_match_keeps_the_master_order_and_the_students_code():
    m = load_master(MASTER)
    full = matched("full")
    assert [(c.role, c.exercise) for c in full.cells] == [
        (c.role, c.exercise) for c in m.cells
    ]
    assert not full.missing and not full.duplicated and not full.notes
    assert full.student_code["square"][0].startswith("# EXERCISE: square")
    answers = [c for c in full.cells if c.role == "answer"]
    assert [c.exercise for c in answers] == ["why"]


def test_match_never_takes_tests_from_the_student():
    m = load_master(MASTER)
    result = matched("stale_outputs")  # edited tests claiming 100 points
    tests = [c for c in result.cells if c.role == "test"]
    assert [c.source for c in tests] == [c.source for c in m.tests]
    assert sum(c.points for c in tests) == 8


def test_unknown_exercises_and_wrong_cell_kinds_are_noted():
    m = load_master(MASTER)
    cells = [
        {"cell_type": "code", "source": "# EXERCISE: nope\nx = 1", "metadata": {}},
        {
            "cell_type": "markdown",
            "source": "<!-- EXERCISE: square -->",
            "metadata": {},
        },
    ]
    result = match(m, cells)
    assert any("names exercise 'nope'" in n for n in result.notes)
    assert any("a markdown cell was ignored" in n for n in result.notes)
    assert set(result.missing) == {"square", "greet", "total", "why"}


def test_discover_files_and_folders():
    subs, notes = discover(FIX / "folders", "tiny_master.ipynb")
    by = {s.student: s for s in subs}
    assert by["folder_one"].path.name == "anything.ipynb"
    assert by["folder_named"].path.name == "tiny_master.ipynb"  # checkpoints ignored
    assert "2 notebooks" in by["folder_ambiguous"].problem
    assert "no .ipynb" in by["folder_empty"].problem
    assert notes == ["ignored README.txt: not a notebook or a folder"]
    with pytest.raises(CourseError, match="not a folder"):
        discover(FIX / "nope", "x.ipynb")


def test_reserved_names_keep_their_id_and_two_entries_of_one_id_are_an_error(tmp_path):
    shutil.copy(SUBS / "full.ipynb", tmp_path / "grades.csv.ipynb")
    shutil.copy(SUBS / "full.ipynb", tmp_path / "student-grades.csv.ipynb")
    (tmp_path / "ann").mkdir()
    shutil.copy(SUBS / "full.ipynb", tmp_path / "ann" / "x.ipynb")
    shutil.copy(SUBS / "full.ipynb", tmp_path / "ann.ipynb")
    subs, notes = discover(tmp_path, "tiny_master.ipynb")
    by = {s.student: s for s in subs}
    assert list(by) == ["ann", "grades.csv", "student-grades.csv"] and notes == []
    assert by["grades.csv"].path == tmp_path / "grades.csv.ipynb"  # its own id, graded
    assert by["student-grades.csv"].path == tmp_path / "student-grades.csv.ipynb"
    ann = by["ann"]  # neither entry silently dropped: the instructor chooses
    assert ann.path is None and ann.problem == ann.error
    assert ann.error == (
        "2 submissions have the student id 'ann' (ann/, ann.ipynb): "
        "none was graded; keep one and grade again"
    )


def test_two_ids_in_one_report_folder_are_an_error_for_both(tmp_path, monkeypatch):
    # "a b" is rewritten; its folder is made "a_b", the folder of "a_b" (a collision)
    for name in ("a b", "a_b"):
        shutil.copy(SUBS / "full.ipynb", tmp_path / f"{name}.ipynb")
    monkeypatch.setattr(submissions, "folder_name", lambda s: s.replace(" ", "_"))
    subs, _ = discover(tmp_path, "tiny_master.ipynb")
    assert [s.path for s in subs] == [None, None]
    assert all("share the report folder 'a_b'" in s.error for s in subs)


def test_links_and_special_files_are_invalid_and_never_opened(tmp_path):
    os.mkfifo(tmp_path / "fifo.ipynb")  # opening it would block
    (tmp_path / "master.ipynb").symlink_to(MASTER)
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")
    (tmp_path / "dir_link").symlink_to(SUBS, target_is_directory=True)
    (tmp_path / "notes_link").symlink_to(SUBS / "full.ipynb")  # not a submission
    (tmp_path / "ann").mkdir()
    shutil.copy(SUBS / "full.ipynb", tmp_path / "ann" / "tiny_master.ipynb")
    os.symlink("/etc", tmp_path / "ann" / "etc")
    (tmp_path / "bob" / "sub").mkdir(parents=True)
    os.mkfifo(tmp_path / "bob" / "sub" / "pipe")
    (tmp_path / "bob" / ".git").mkdir()  # hidden: not looked at
    os.symlink("x", tmp_path / "bob" / ".git" / "link")
    subs, notes = discover(tmp_path, "tiny_master.ipynb")
    by = {s.student: s.problem for s in subs}
    assert by == {
        "ann": "etc is a symbolic link: submissions must be plain files and folders",
        "bob": "sub/pipe is a FIFO: submissions must be plain files and folders",
        "dir_link": "dir_link is a symbolic link: submissions must be plain files and folders",
        "fifo": "fifo.ipynb is a FIFO: submissions must be plain files and folders",
        "master": "master.ipynb is a symbolic link: submissions must be plain files and folders",
        "zero": "zero.ipynb is a symbolic link: submissions must be plain files and folders",
    }
    assert notes == ["ignored notes_link: not a notebook or a folder"]


def test_undecodable_names_are_shown_escaped(tmp_path, monkeypatch):
    base = os.fsencode(tmp_path)
    shutil.copy(SUBS / "full.ipynb", os.path.join(base, b"caf\xe9.ipynb"))
    os.mkdir(os.path.join(base, b"d\xff\x1b"))
    shutil.copy(SUBS / "full.ipynb", os.path.join(base, b"d\xff\x1b", b"n\xe9.ipynb"))
    shutil.copy(SUBS / "full.ipynb", os.path.join(base, b"d\xff\x1b", b"m.ipynb"))
    subs, _ = discover(tmp_path, "tiny_master.ipynb")
    assert [s.student for s in subs] == ["caf\\xe9", "d\\xff\\x1b"]
    assert read_cells(subs[0].path)  # the real (undecodable) path still opens
    assert "(m.ipynb, n\\xe9.ipynb)" in subs[1].problem
    monkeypatch.setattr(submissions, "MAX_FILES", 1)
    assert "more than 1 files" in discover(tmp_path, "x")[0][1].problem


def test_lms_download_names_give_the_student_id(tmp_path):
    """Canvas names a bulk download's files ``login_[LATE_]user_submission_file``,
    Moodle its folders ``Full Name_user_assignsubmission_file_``: the student id is the
    login or the name; a name of another shape is kept whole, with a note."""
    canvas = tmp_path / "canvas"
    canvas.mkdir()
    for name in ("smithann_12345_67890_00_welcome_exercises.ipynb",
                 "doebob_LATE_23456_78901_00_welcome_exercises-1.ipynb", "odd.ipynb"):  # fmt: skip
        shutil.copy(SUBS / "full.ipynb", canvas / name)
    subs, notes = discover(canvas, MASTER.name, lms="canvas")
    assert sorted(s.student for s in subs) == ["doebob", "odd", "smithann"]
    assert any("odd.ipynb" in n and "Canvas" in n for n in notes), notes
    moodle = tmp_path / "moodle"
    folder = moodle / "Ann Smith_123456_assignsubmission_file_"
    folder.mkdir(parents=True)
    shutil.copy(SUBS / "full.ipynb", folder / "tiny_master.ipynb")
    shutil.copy(SUBS / "full.ipynb", moodle / "Bo Li_7_assignsubmission_file_hw.ipynb")
    subs, _ = discover(moodle, MASTER.name, lms="moodle")
    assert sorted(s.student for s in subs) == ["Ann Smith", "Bo Li"]
    with pytest.raises(CourseError, match="--lms"):
        discover(moodle, MASTER.name, lms="blackboard")


def test_a_students_variant_line_is_not_an_edited_cell():
    """``course release --variants`` writes the student's variant where the master has
    ``VARIANT = None``: that copy, untouched, has no cell outside the exercises."""
    from course_utils.grading.integrations import release

    name = "00_welcome_exercises.ipynb"
    master = load_master(ROOT / "solutions" / name)
    text = (ROOT / "exercises" / name).read_text()
    copy = tmp_notebook(release.with_variant(text, "ada", "3a5fbe9e9eea3538"))
    assert not [n for n in match(master, copy).notes if "added or edited" in n]
    edited = [
        c | {"source": c["source"] + "\nEXTRA = 1"} if "VARIANT =" in c["source"] else c
        for c in copy
    ]
    notes = match(master, edited).notes
    assert any(n.startswith("1 added or edited code cell(s)") for n in notes), notes


def test_a_setup_cell_released_with_repo_is_not_an_edited_cell(tmp_path):
    """``course release --repo`` points the setup cell's install line at the
    instructor's repository and tag: no edit of the student's. A real edit of that
    cell, its install line's included, still is one."""
    from course_utils.grading.integrations import release

    name = "00_welcome_exercises.ipynb"
    master = load_master(ROOT / "solutions" / name)
    shutil.copy(ROOT / "exercises" / name, tmp_path / name)
    assert release.point_at(tmp_path, "my-school/jax-course", "term-2027") == [name]
    copy = read_cells(tmp_path / name)
    setup = [c for c in copy if "git+https://github.com/" in c["source"]]
    assert len(setup) == 1 and "my-school/jax-course@term-2027" in setup[0]["source"]
    assert not [n for n in match(master, copy).notes if "added or edited" in n]
    for edit in (
        lambda s: s + "\nprint('installed')",
        lambda s: s.replace('"--no-deps", ', ""),
    ):
        edited = [c | {"source": edit(c["source"])} if c in setup else c for c in copy]
        notes = match(master, edited).notes
        assert any(n.startswith("1 added or edited code cell(s)") for n in notes), notes


def tmp_notebook(text: str) -> list[dict]:
    """A notebook's cells as the grader reads them, from its text."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nb.ipynb"
        path.write_text(text)
        return read_cells(path)


def test_lms_download_names_without_lms_are_warned_of(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("alice_12301_67891_00_welcome_exercises.ipynb",
                 "bob_LATE_12302_67892_00_welcome_exercises-1.ipynb", "carol.ipynb"):  # fmt: skip
        (folder / name).write_text("{}")
    subs, _ = discover(folder, "00_welcome_exercises.ipynb")
    line = submissions.lms_lookalike(subs)
    assert line == (
        "warning: 2 of 3 submission(s) are named as Canvas's download names them "
        "(alice_12301_67891_00_welcome_exercises.ipynb and 1 more): without --lms "
        "canvas each is graded as a student of that whole name; give --lms canvas "
        "if they are Canvas's"
    )
    moodle = tmp_path / "moodle"
    (moodle / "Ann Smith_123456_assignsubmission_file_").mkdir(parents=True)
    line = submissions.lms_lookalike(discover(moodle, "x.ipynb")[0])
    assert line and "Moodle's" in line and "--lms moodle" in line
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "ann.ipynb").write_text("{}")
    (plain / "bob_2").mkdir()
    assert submissions.lms_lookalike(discover(plain, "x.ipynb")[0]) is None
