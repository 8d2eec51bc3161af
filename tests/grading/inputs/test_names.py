"""Names from outside: undecodable bytes shown escaped, safe report folders, CSV cells as text."""

from __future__ import annotations

import os

from course_utils.grading.inputs import names


def test_shown_escapes_bad_bytes_and_control_characters():
    raw = os.fsdecode(b"caf\xe9")  # a Latin-1 file name on a UTF-8 system
    assert names.shown(raw) == "caf\\xe9"
    assert names.shown("ann\nbob\x1b[2J") == "ann\\nbob\\x1b[2J"
    assert names.shown("zoë") == "zoë"
    assert names.shown(names.shown(raw)) == names.shown(raw)  # idempotent
    assert names.utf8("a\ud800b") == "a\\ud800b"
    names.shown(raw).encode("utf-8")  # writable


def test_folder_names_are_one_short_safe_component():
    assert names.folder_name("ann_lee-2.x") == "ann_lee-2.x"
    seen = set()
    for student in ["../../etc", "a/b", "..", ".hidden", "-rf", "x" * 250, "grades.csv",
                    "caf\\xe9", "café", "", "x" * 249]:  # fmt: skip
        folder = names.folder_name(student)
        assert "/" not in folder and folder not in (".", "..")
        assert not folder.startswith((".", "-")) and 0 < len(folder) <= 80
        seen.add(folder)
    assert len(seen) == 11  # never two students in one folder
    assert names.folder_name("x" * 250).startswith("x" * 60)


def test_csv_cells_starting_a_formula_are_text():
    for bad in ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]:
        assert names.csv_cell(bad) == "'" + bad
    assert [names.csv_cell(x) for x in ["ann", "3", "-1", 2.5, "a=b"]] == [
        "ann",
        "3",
        "-1",
        "2.5",
        "a=b",
    ]


def test_clean_makes_json_writable_and_shallow():
    deep: list = []
    for _ in range(200):
        deep = [deep]
    out = names.clean({"a\udce9": ["x\ud800"], "deep": deep})
    assert out["a\\xe9"] == ["x\\ud800"]
    text = repr(out)
    assert "cut by the grader" in text


def test_rewritten_folders_are_a_namespace_of_their_own():
    rewritten = [names.folder_name(r) for r in sorted(names.RESERVED)]
    assert rewritten[0].startswith("_instructor+") and all("+" in f for f in rewritten)
    # ids equal to the report's own names, to each rewritten form, to the old forms
    # (prefix "student-", hash after a dash), and to names differing only in what is cut
    old = [f"student-{r}" for r in names.RESERVED]
    old += [f.replace("+", "-") for f in rewritten]
    ids = [*names.RESERVED, *rewritten, *old, "a b", "a_b", "a+b", "=x", "_x", "x"]
    folders = [names.folder_name(s) for s in ids]
    assert len(set(folders)) == len(ids)  # one folder each
    for student, folder in zip(ids, folders, strict=True):
        assert folder not in names.RESERVED and not folder.startswith(".")
        assert names.plain(folder) != (names.REWRITTEN in folder)
        if folder != student:  # a rewritten name is never anybody's plain id
            assert names.REWRITTEN in folder and not names.plain(folder)
    assert not any(names.REWRITTEN in r for r in names.RESERVED)
