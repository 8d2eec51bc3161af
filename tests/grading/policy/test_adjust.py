"""Late policy and manual grades on the generated class: in totals, tables and feedback,
and kept when the class is graded again."""

from __future__ import annotations

import argparse
import csv
import json

from course_utils.cli import main as course_main
from course_utils.grading.policy import adjust
from course_utils.grading.records import store
from tests.grading.class_expect import copy_of
from tests.grading.generated_class import OPTIONS, ROSTER
from tests.grading.helpers import MASTER

TIMES = {
    "ada": "2026-03-01T11:00Z",
    "fay": "2026-03-03T10:00Z",
    "jon": "2026-03-09T10:00Z",
}


def _grade(subs, out, *extra):
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out), *OPTIONS]
    return course_main([*argv, "--jobs", "1", *extra])


def _policy_files(tmp_path):
    times = tmp_path / "times.csv"
    times.write_text(
        "student,submitted_at\n" + "".join(f"{s},{t}\n" for s, t in TIMES.items())
    )
    manual = tmp_path / "manual.csv"
    manual.write_text("student,item,points,max_points,comment\n"
                      "ada,why,2,2,Clear: area of a square.\nfay,why,1,2,Say why.\n")  # fmt: skip
    return times, manual


def _feedback(out, student) -> str:
    nb = json.loads((store.student_dir(out, student) / "feedback.ipynb").read_text())
    return "".join("".join(c["source"]) for c in nb["cells"][:2])


def test_late_policy_and_manual_grades_survive_a_regrade(
    graded_class, tmp_path, capsys
):
    out = copy_of(graded_class, tmp_path)
    times, manual = _policy_files(tmp_path)
    late = [
        "--deadline",
        "2026-03-01T12:00Z",
        "--penalty-per-day",
        "25",
        "--cutoff",
        "5",
    ]
    assert _grade(graded_class.subs, out, *late, "--times", str(times)) == 0
    printed = capsys.readouterr().out
    others = len(ROSTER) - len(TIMES)  # timed by their files, with a warning
    assert f"submission times of {others} student(s)" in printed
    fay = next(line for line in printed.splitlines() if line.startswith("fay "))
    assert " 4/8 " in fay, fay  # the table shows the total after the penalty
    assert "; late penalty on " in printed  # the class line counts them
    assert course_main(["grade", "manual", str(out), str(manual)]) == 0
    for _ in range(2):  # graded again: kept
        recs = {r["student"]: r for r in store.records(out)}
        assert (
            recs["ada"]["total"] == 10 and recs["ada"]["max_total"] == 10
        )  # 8 + 2, on time
        assert recs["fay"]["total"] == 4.5  # (8 + 1) minus 2 days at 25%
        assert recs["jon"]["total"] == 0 and "cut-off" in recs["jon"]["late"]["why"]
        assert recs["fay"]["late"]["source"] == "manifest"
        fay = _feedback(out, "fay")
        assert (
            "**Score:** 4.5 / 10" in fay and "Say why." in fay and "-4.5 points" in fay
        )
        rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
        assert (
            rows["fay"]["total"] == "4.5"
            and "late: 2 day(s) late" in rows["fay"]["reason"]
        )
        assert (rows["fay"]["late_penalty"], rows["fay"]["manual_points"]) == (
            "4.5",
            "1",
        )
        assert (rows["ada"]["late_penalty"], rows["ada"]["manual_points"]) == ("", "2")
        gradescope = json.loads(
            (store.student_dir(out, "fay") / "results.json").read_text()
        )
        assert gradescope["score"] == 4.5
        assert _grade(graded_class.subs, out, "--student", "fay") == 0
    assert store.already_graded(  # still resumable: sealed, files intact
        out, "ada", recs["ada"]["submission_sha256"], recs["ada"]["master_sha256"],
        recs["ada"]["options"],
    )  # fmt: skip


def test_a_folder_without_a_policy_is_left_alone(tmp_path):
    adjust.after_grade(tmp_path, argparse.Namespace())
    assert list(tmp_path.iterdir()) == []


def test_manual_imports_merge_and_blank_points_are_counted(tmp_path, capsys):
    """A second import adds to the first (a row of the same student and item replaces
    it); a blank points cell counts 0, is named, and never replaces points given."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    for student in ("ann", "bob"):
        store.save_student(out, _record(student, 0.0), {})
    head = "student,item,points,max_points,comment\n"
    first = tmp_path / "first.csv"
    first.write_text(head + "ann,why,2,2,Clear.\nbob,why,,2,\n")
    assert adjust.import_manual(out, first) == 0
    printed = capsys.readouterr().out
    assert "1 row(s) with blank points (bob: why) count 0" in printed, printed
    assert f"manual grades of 2 student(s): 2 row(s) kept in {out}; " in printed
    second = tmp_path / "second.csv"
    second.write_text(head + "bob,why,1,2,Say why.\nann,extra,1,1,\nann,why,,2,\n")
    assert adjust.import_manual(out, second) == 0
    printed = capsys.readouterr().out
    assert (
        "manual grades of 2 student(s): 3 row(s) merged with the 2 kept before, "
        f"3 now, in {out}; " in printed
    )
    # ann's blank "why" kept the first import's 2: not said to count 0
    assert "count 0" not in printed, printed
    assert "1 row(s) with blank points kept the points a former import gave" in printed
    recs = {r["student"]: r for r in store.records(out)}
    assert recs["ann"]["total"] == 3  # why (2, kept from the first) and extra (1)
    assert recs["bob"]["total"] == 1 and recs["bob"]["max_total"] == 5


def _small_class(tmp_path, times: dict[str, str], manual: str = ""):
    """ann (full, 8/8) and bob (stub) with a late policy (and ``manual`` rows kept in
    the report folder): the ``course grade`` command line and the report folder."""
    from tests.grading.helpers import class_folder

    subs = class_folder(tmp_path / "subs", {"ann": "full", "bob": "stub"})
    out = tmp_path / "out"
    if manual:
        (out / store.INSTRUCTOR).mkdir(parents=True)
        (out / store.INSTRUCTOR / adjust.MANUAL).write_text(
            "student,item,points,max_points,comment\n" + manual
        )
    csv_times = tmp_path / "times.csv"
    csv_times.write_text("".join(f"{s},{t}\n" for s, t in times.items()))
    argv = ["grade", str(subs), "--source", str(MASTER), "--out", str(out)]
    argv += ["--unsafe-no-sandbox", "--jobs", "1", "--deadline", "2026-03-01T12:00Z"]
    argv += ["--penalty-per-day", "25", "--times", str(csv_times)]
    return argv, subs, out


def test_a_run_stopped_midway_leaves_every_grade_with_its_adjustments(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C (or SIGTERM: the same path) after ann is recorded: her total in her
    record, grades.csv, feedback and results.json already has her manual points and
    late penalty, not the tests' points alone."""
    from course_utils.grading.batch import grader

    argv, _, out = _small_class(
        tmp_path, {"ann": "2026-03-02T11:00Z", "bob": "2026-03-01T11:00Z"},
        manual="ann,why,2,2,Clear.\n",
    )  # fmt: skip
    real = grader.Grader.grade_one

    def grade_one(self, sub):
        if sub.student == "bob":
            raise KeyboardInterrupt  # as the Ctrl-C handler raises it
        return real(self, sub)

    monkeypatch.setattr(grader.Grader, "grade_one", grade_one)
    assert course_main(argv) == 130
    ann = {r["student"]: r for r in store.records(out)}["ann"]
    assert ann["total"] == 7.5 and ann["max_total"] == 10  # (8 + 2) - 25%
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert rows["ann"]["total"] == "7.5" and rows["ann"]["late_penalty"] == "2.5"
    assert "**Score:** 7.5 / 10" in _feedback(out, "ann")
    results = json.loads((store.student_dir(out, "ann") / "results.json").read_text())
    assert results["score"] == 7.5


def _shard(folder, student, times=None, penalty=20.0):
    """A shard report folder with one student (3/3 points) and, given ``times``, a
    late policy (deadline 2026-03-01T12:00Z, ``penalty`` percent a day) applied."""
    from tests.grading.records.test_store import _record

    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    store.save_student(folder, _record(student, 3.0, tests=[test]), {})
    args = argparse.Namespace(deadline=None)
    if times is not None:
        args = argparse.Namespace(deadline="2026-03-01T12:00Z", times=str(times),
                                  penalty_per_day=penalty)  # fmt: skip
    adjust.after_grade(folder, args)
    return folder


def test_merge_keeps_the_shards_late_policy_and_refuses_different_ones(
    tmp_path, capsys
):
    """A merged folder keeps the shards' policy, so a manual import there recomputes
    kim's total with her late penalty; shards with another policy, or none, are refused
    before anything is written."""
    times = tmp_path / "times.csv"
    times.write_text("kim,2026-03-03T11:00Z\nlou,2026-03-01T11:00Z\n")
    a, b = _shard(tmp_path / "a", "kim", times), _shard(tmp_path / "b", "lou", times)
    assert {r["student"]: r["total"] for r in store.records(a)} == {"kim": 1.8}
    merged = tmp_path / "merged"
    assert course_main(["grade", "merge", str(a), str(b), "--out", str(merged)]) == 0
    manual = tmp_path / "manual.csv"
    manual.write_text("student,item,points,max_points,comment\nlou,why,1,2,\n")
    assert course_main(["grade", "manual", str(merged), str(manual)]) == 0
    totals = {r["student"]: r["total"] for r in store.records(merged)}
    assert totals == {"kim": 1.8, "lou": 4.0}  # 3 - 2 days at 20%; 3 + 1, on time
    capsys.readouterr()
    for other in (
        _shard(tmp_path / "c", "max"),
        _shard(tmp_path / "d", "max", times, penalty=10.0),
    ):
        argv = ["grade", "merge", str(a), str(other), "--out", str(tmp_path / "m2")]
        assert course_main(argv) == 2
        err = capsys.readouterr().err
        assert "different late policies" in err and "\n" not in err.strip(), err
        assert not (tmp_path / "m2").exists()
    for folder, points in ((a, 1), (b, 2)):  # other manual points for one item
        table = folder / store.INSTRUCTOR / adjust.MANUAL
        table.write_text(
            f"student,item,points,max_points,comment\nlou,why,{points},2,\n"
        )
    assert (
        course_main(["grade", "merge", str(a), str(b), "--out", str(tmp_path / "m2")])
        == 2
    )
    assert "other manual points for 'lou', item 'why'" in capsys.readouterr().err


def test_the_deadline_options_again_without_times_keep_the_stored_times(
    tmp_path, capsys
):
    """A rerun that gives --deadline (a new penalty, say) but forgets --times keeps the
    manifest's times, with a note, not the file times (that made a whole class late);
    a new --times replaces them."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    rec = _record(
        "ann", 3.0, tests=[test], submission_mtime="2026-03-06T10:00:00+00:00"
    )
    store.save_student(out, rec, {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-01T11:00Z\n")
    policy = {"deadline": "2026-03-01T12:00Z", "penalty_per_day": 10.0}
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert store.records(out)[0]["total"] == 3.0  # on time by the manifest
    capsys.readouterr()
    policy["penalty_per_day"] = 20.0
    adjust.after_grade(out, argparse.Namespace(**policy))  # --times forgotten
    printed = capsys.readouterr().out
    assert "kept the 1 submission time(s) of the --times manifest" in printed
    assert "file modification times" not in printed, printed
    (ann,) = store.records(out)
    assert ann["total"] == 3.0 and ann["late"]["source"] == "manifest"
    times.write_text("ann,2026-03-02T11:00Z\n")  # a new manifest: replaces them
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert store.records(out)[0]["total"] == 2.4


def test_a_student_with_two_submissions_keeps_the_last_grade_with_its_own_time(
    tmp_path, capsys
):
    """ann's new, late download beside her on-time one (the LMS's times updated): the
    run refuses to choose and says her last grade is kept; it is, with its own time,
    not the new submission's late penalty."""
    import shutil

    from tests.grading.helpers import SUBS

    argv, subs, out = _small_class(
        tmp_path, {"ann": "2026-03-01T11:00Z", "bob": "2026-03-01T11:00Z"}
    )
    assert course_main(argv) == 0
    before = {r["student"]: r for r in store.records(out)}["ann"]
    assert before["total"] == 8
    (subs / "ann").mkdir()
    shutil.copy(SUBS / "full.ipynb", subs / "ann" / "tiny_master.ipynb")
    (tmp_path / "times.csv").write_text(
        "ann,2026-03-03T11:00Z\nbob,2026-03-01T11:00Z\n"
    )
    capsys.readouterr()
    assert course_main(argv) == 1
    assert "their last grade (8/8, graded " in capsys.readouterr().out
    ann = {r["student"]: r for r in store.records(out)}["ann"]
    assert ann["total"] == 8 and ann["late"] == before["late"]
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert rows["ann"]["total"] == "8" and "**Score:** 8 / 8" in _feedback(out, "ann")


def test_a_rerun_without_extensions_keeps_them_and_days_move_with_the_deadline(
    tmp_path, capsys
):
    """An extension given once survives a rerun that forgets --extensions (with a note,
    as --times does), not a silent late penalty; days added move with a new deadline, a
    date given stays; an extension stored as a date (an older grader's) still loads;
    --extensions again replaces them, an empty file clears them."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    for student in ("ann", "bo"):
        store.save_student(out, _record(student, 3.0, tests=[test]), {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-03T11:00Z\nbo,2026-03-03T11:00Z\n")  # 2 days late
    ext = tmp_path / "ext.csv"
    ext.write_text("student,extension\nann,2\nbo,2026-03-03T12:00Z\n")
    policy = {"deadline": "2026-03-01T12:00Z", "penalty_per_day": 10.0,
              "times": str(times)}  # fmt: skip

    def totals():
        return {r["student"]: r["total"] for r in store.records(out)}

    adjust.after_grade(out, argparse.Namespace(**policy, extensions=str(ext)))
    assert totals() == {"ann": 3.0, "bo": 3.0}
    capsys.readouterr()
    adjust.after_grade(out, argparse.Namespace(**policy))  # --extensions forgotten
    assert "kept the 2 extension(s) of the --extensions file" in capsys.readouterr().out
    assert totals() == {"ann": 3.0, "bo": 3.0}
    # a day earlier: ann's two days end on 03-02 (1 day late), bo's date stays
    adjust.after_grade(
        out, argparse.Namespace(**policy | {"deadline": "2026-02-28T12:00Z"})
    )
    assert totals() == {"ann": 2.7, "bo": 3.0}
    # a policy stored by an older grader: extensions as deadlines
    stored = out / store.INSTRUCTOR / adjust.POLICY
    old = json.loads(stored.read_text())
    old["deadline"] = "2026-03-01T12:00:00+00:00"
    old["extensions"] = {"ann": "2026-03-03T12:00:00+00:00"}
    stored.write_text(json.dumps(old))
    adjust.after_grade(out, argparse.Namespace(deadline=None))
    assert totals() == {"ann": 3.0, "bo": 2.4}
    adjust.after_grade(out, argparse.Namespace(**policy))
    assert totals() == {"ann": 3.0, "bo": 2.4}  # kept as the date it was
    ext.write_text("bo,3\n")  # given again: replaces them
    adjust.after_grade(out, argparse.Namespace(**policy, extensions=str(ext)))
    assert totals() == {"ann": 2.4, "bo": 3.0}
    ext.write_text("student,extension\n")  # an empty file clears them
    adjust.after_grade(out, argparse.Namespace(**policy, extensions=str(ext)))
    assert totals() == {"ann": 2.4, "bo": 2.4}
    assert json.loads(stored.read_text())["extensions"] == {}


def test_a_rerun_that_leaves_out_the_grace_keeps_it_and_zero_clears_it(
    tmp_path, capsys
):
    """--deadline and --penalty-per-day again without --grace keep the grace period given
    before, with a note, not a silent penalty; --grace 0 clears it. The same for the
    penalty."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    store.save_student(out, _record("ann", 3.0, tests=[test]), {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-01T12:10Z\n")  # 10 minutes late
    policy = {"deadline": "2026-03-01T12:00Z", "times": str(times)}

    def total():
        return store.records(out)[0]["total"]

    adjust.after_grade(
        out, argparse.Namespace(**policy, penalty_per_day=10.0, grace=15.0)
    )
    assert total() == 3.0
    capsys.readouterr()
    adjust.after_grade(out, argparse.Namespace(**policy, penalty_per_day=10.0))
    assert "kept --grace 15 given before" in capsys.readouterr().out
    assert total() == 3.0
    adjust.after_grade(out, argparse.Namespace(**policy))  # the penalty left out too
    assert "kept --penalty-per-day 10 given before" in capsys.readouterr().out
    assert total() == 3.0
    adjust.after_grade(out, argparse.Namespace(**policy, grace=0.0))
    assert total() == 2.7


def test_a_changed_late_penalty_or_manual_points_is_a_row_of_regrades_csv(
    tmp_path, capsys
):
    """A rerun whose new --times makes ann late, and a manual import, change her total
    without grading her again: each change is printed and is a row of regrades.csv
    (the totals after them, and before), not a silent new score."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    store.save_student(out, _record("ann", 3.0, tests=[test]), {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-01T11:00Z\n")
    policy = {"deadline": "2026-03-01T12:00Z", "penalty_per_day": 10.0}
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert "changed:" not in capsys.readouterr().out  # on time: nothing changed
    times.write_text("ann,2026-03-02T11:00Z\n")  # the manifest fixed: a day late
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert "changed: ann: 3 -> 2.7 (late penalty)" in capsys.readouterr().out
    manual = tmp_path / "manual.csv"
    manual.write_text("student,item,points,max_points,comment\nann,why,2,2,\n")
    assert adjust.import_manual(out, manual) == 0
    assert "changed: ann: 2.7 -> 4.5 (late penalty, manual points)" in (
        capsys.readouterr().out
    )
    rows = list(csv.DictReader((out / store.REGRADES).open()))
    got = [
        (r["what"], r["old"], r["new"], r["old_total"], r["new_total"]) for r in rows
    ]
    assert got == [
        ("late penalty", "3", "2.7", "3", "3"),
        ("late penalty, manual points", "2.7", "4.5", "3", "3"),
    ]
    adjust.after_grade(out, argparse.Namespace(**policy))  # the same again: no row
    assert len(list(csv.DictReader((out / store.REGRADES).open()))) == 2


def test_a_resubmission_after_the_times_manifest_is_named(tmp_path, capsys):
    """The kept --times manifest still times a student who submitted again after it
    was given: the run says so, naming them, so a late resubmission does not pass
    unseen as on time; a new --times for it ends the warning."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    for student in ("ann", "bo"):
        rec = _record(student, 3.0, tests=[test], submission_sha256="a" * 64)
        store.save_student(out, rec, {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-01T11:00Z\nbo,2026-03-01T11:00Z\n")
    policy = {"deadline": "2026-03-01T12:00Z", "penalty_per_day": 10.0}
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert "submitted again" not in capsys.readouterr().out
    rec = _record("ann", 3.0, tests=[test], submission_sha256="b" * 64)
    store.save_student(out, rec, {})  # ann's resubmission, graded
    adjust.after_grade(out, argparse.Namespace(**policy))  # --times kept
    printed = capsys.readouterr().out
    assert (
        "warning: late policy: 1 student(s) (ann) submitted again after the --times"
        in printed
    ), printed
    times.write_text("ann,2026-03-05T11:00Z\nbo,2026-03-01T11:00Z\n")
    adjust.after_grade(out, argparse.Namespace(**policy, times=str(times)))
    assert "submitted again" not in capsys.readouterr().out


def test_a_new_penalty_without_the_deadline_keeps_the_stored_deadline(tmp_path, capsys):
    """--penalty-per-day alone on a rerun changes the penalty of the policy kept, with
    a note naming the deadline it kept, as a forgotten --grace is kept (the command
    was refused: "--penalty-per-day needs --deadline")."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    test = {"name": "t", "exercise": "total", "points": 3.0, "max_points": 3.0,
            "status": "passed", "message": ""}  # fmt: skip
    store.save_student(out, _record("ann", 3.0, tests=[test]), {})
    times = tmp_path / "times.csv"
    times.write_text("ann,2026-03-02T11:00Z\n")  # a day late
    policy = {"deadline": "2026-03-01T12:00Z", "times": str(times)}
    adjust.after_grade(out, argparse.Namespace(**policy, penalty_per_day=10.0))
    assert store.records(out)[0]["total"] == 2.7
    capsys.readouterr()
    adjust.after_grade(out, argparse.Namespace(penalty_per_day=20.0))
    printed = capsys.readouterr().out
    assert "kept --deadline 2026-03-01T12:00:00+00:00 given before" in printed, printed
    assert store.records(out)[0]["total"] == 2.4


def test_manual_rows_of_no_graded_student_are_an_error(tmp_path, capsys):
    """A table that names students as a report folder does not (a Canvas download's
    whole file names for a class graded with ``--lms canvas``) gives them no points:
    the import says so as an error and exits 1, and counts as updated only the
    records whose points changed; the rows of the students it names are applied."""
    from tests.grading.records.test_store import _record

    out = tmp_path / "out"
    for student in ("hanalee", "ivanpetrov"):
        store.save_student(out, _record(student, 0.0), {})
    store.remember_lms(out, "canvas")
    head = "student,item,points,max_points,comment\n"
    table = tmp_path / "manual.csv"
    table.write_text(
        head + "hanalee_21_991_07_migration_exercises,why,2,2,\n"
        "ivanpetrov_LATE_22_992_07_migration_exercises,why,1,2,\n"
    )
    assert adjust.import_manual(out, table) == 1
    printed = capsys.readouterr().out
    assert "0 record(s) updated" in printed, printed
    error = [line for line in printed.splitlines() if line.startswith("error: ")]
    assert len(error) == 1, printed
    assert "2 row(s) name no graded student" in error[0], error
    assert "hanalee_21_991_07_migration_exercises" in error[0], error
    assert "--lms canvas" in error[0] and "(hanalee, ivanpetrov)" in error[0], error
    assert {r["student"]: r["total"] for r in store.records(out)} == {
        "hanalee": 0,
        "ivanpetrov": 0,
    }
    table.write_text(head + "hanalee,why,2,2,\nivanpetrov,why,1,2,\nzed,why,1,1,\n")
    assert adjust.import_manual(out, table) == 1
    printed = capsys.readouterr().out
    assert "2 record(s) updated" in printed, printed
    assert "error: manual grades" in printed, printed
    assert "1 row(s) name no graded student" in printed, printed
    table.write_text(head + "hanalee,why,2,2,Clear.\nivanpetrov,why,1,2,\n")
    assert adjust.import_manual(out, table) == 0  # a comment: no points changed
    printed = capsys.readouterr().out
    assert "0 record(s) updated" in printed and "error" not in printed, printed
    recs = {r["student"]: r for r in store.records(out)}
    assert (recs["hanalee"]["total"], recs["ivanpetrov"]["total"]) == (2, 1)
    assert "Clear." in json.dumps(recs["hanalee"]["manual"])
