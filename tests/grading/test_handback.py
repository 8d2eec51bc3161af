"""Everything in a student's report folder can be handed back as it is: no hidden test
text anywhere in it; the instructor's copy (``executed.ipynb``) lives apart."""

from __future__ import annotations

from course_utils.grading.inputs.master import load_master
from course_utils.grading.records import store
from tests.grading.generated_class import ROSTER
from tests.grading.helpers import MASTER

SECRET = "SECRET_HIDDEN_ORACLE_7"  # a name only the tiny master's hidden tests use


def _hidden_lines() -> set[str]:
    master = load_master(MASTER)
    lines = {ln.strip() for src in master.hidden_sources() for ln in src.splitlines()}
    return {ln for ln in lines if len(ln) >= 8 and not ln.startswith("###")}


def test_no_file_in_a_student_folder_holds_hidden_test_text(graded_class):
    hidden = _hidden_lines()
    assert any(SECRET in ln for ln in hidden) and len(hidden) >= 4
    for student in ROSTER:
        folder = store.student_dir(graded_class.out, student)
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert {p.name for p in files} >= {
            "feedback.ipynb",
            "feedback.html",
            "results.json",
        }
        assert "executed.ipynb" not in {p.name for p in files}
        for path in files:
            text = path.read_bytes().decode("utf-8", "replace")
            leaked = [ln for ln in hidden if ln in text]
            assert SECRET not in text and not leaked, (path, leaked)


def test_the_instructor_copy_is_apart_and_sealed(graded_class):
    out = graded_class.out
    executed = store.file_path(out, "ada", "executed.ipynb")
    assert executed == out / "_instructor" / "ada" / "executed.ipynb"
    assert SECRET in executed.read_text()  # the hidden tests as run
    assert sorted(r["student"] for r in store.records(out)) == sorted(ROSTER)
    rec = store.records(out)[0]
    assert store.already_graded(  # the seal names the file where it is
        out,
        rec["student"],
        rec["submission_sha256"],
        rec["master_sha256"],
        rec["options"],
    )


def test_merge_keeps_the_instructor_copy_apart(graded_class, tmp_path):
    out = tmp_path / "merged"
    recs, _ = store.merge([graded_class.out], out)
    assert len(recs) == len(ROSTER)
    executed = store.file_path(out, "ada", "executed.ipynb")
    assert SECRET in executed.read_text()
    assert not (store.student_dir(out, "ada") / "executed.ipynb").exists()
    rec = next(r for r in recs if r["student"] == "ada")
    assert store.already_graded(
        out, "ada", rec["submission_sha256"], rec["master_sha256"], rec["options"]
    )


def test_no_file_in_a_student_folder_holds_the_instructors_paths(graded_class):
    """A hand-back is the student's folder as it is: the submissions folder, the report
    folder and the course checkout stay the instructor's."""
    from tests.grading.helpers import ROOT

    paths = [
        str(graded_class.subs.resolve()),
        str(graded_class.out.resolve()),
        str(ROOT),
    ]
    for student in ROSTER:
        folder = store.student_dir(graded_class.out, student)
        for path in (p for p in folder.rglob("*") if p.is_file()):
            text = path.read_bytes().decode("utf-8", "replace")
            assert not [p for p in paths if p in text], path
    rec = next(r for r in store.records(graded_class.out) if r["student"] == "ada")
    assert (rec["submission"], rec["master"]) == ("ada.ipynb", MASTER.name)
