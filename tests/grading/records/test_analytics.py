"""Class analytics on records made up for the purpose: masking, grouping, histogram, flags."""

from __future__ import annotations

from course_utils.grading.records import analytics


def _rec(
    student, passed: dict[str, bool], status="ok", message="AssertionError: 3 != 4"
):
    tests = [
        {"name": name, "exercise": name.split(":")[0], "hidden": "hidden" in name,
         "max_points": 1.0, "points": float(ok), "status": "passed" if ok else "failed",
         "message": "" if ok else message}
        for name, ok in passed.items()
    ]  # fmt: skip
    total = sum(t["points"] for t in tests)
    exercises = {
        "a": {
            "points": total,
            "max_points": 2.0,
            "status": "passed" if total == 2 else "failed",
        }
    }
    return {"student": student, "status": status, "reason": "r", "total": total,
            "max_total": 2.0, "tests": tests, "exercises": exercises,
            "seconds": 1.5, "peak_memory_mb": 60.0}  # fmt: skip


def test_numbers_are_masked_and_whitespace_folded():
    norm = analytics.normalise
    assert norm("AssertionError: square(-2) should be 4") == (
        "AssertionError: square(N) should be N"
    )
    assert norm("expected 9\n   but got 2.5e-3") == "expected N but got N"
    assert norm("x1 != y_2") == "x1 != y_2"  # names keep their digits
    assert norm("expected float32[3, 4], got bfloat16[3]") == (
        "expected float32[N, N], got bfloat16[N]"  # and so do dtypes
    )
    assert norm("") == "(no message)" and len(norm("z" * 500)) == 160


def test_histogram_counts_every_total_once():
    bins = analytics.histogram([0, 0, 1.5, 8, 8, 7], 8)
    assert [b["count"] for b in bins] == [2, 1, 0, 0, 0, 0, 0, 1, 2]
    wide = analytics.histogram([0, 50, 100], 100)
    assert len(wide) == 10 and sum(b["count"] for b in wide) == 3
    assert wide[-1]["count"] == 1


def test_tests_nobody_or_everybody_passes_are_flagged():
    recs = [
        _rec("a", {"a: tests": True, "a: hidden tests": False}, message="x is 3"),
        _rec("b", {"a: tests": True, "a: hidden tests": False}, message="x is 5"),
        _rec("c", {"a: tests": False, "a: hidden tests": False}, status="invalid"),
    ]
    data = analytics.summarise(recs)
    flags = {t["name"]: t["flag"] for t in data["tests"]}
    assert flags["a: tests"].startswith("everybody passes")  # of those whose code ran
    assert flags["a: hidden tests"].startswith("nobody passes")
    shares = {t["name"]: round(t["share"], 3) for t in data["tests"]}
    assert shares == {"a: tests": 0.667, "a: hidden tests": 0.0}
    first = data["failures"][0]
    assert first == {"test": "a: hidden tests", "message": "x is N", "count": 2,
                     "examples": ["a", "b"]}  # fmt: skip
    assert data["failures"][1]["test"] == analytics.WHOLE  # c, once
    assert [r["student"] for r in data["resources"]["students"]] == ["a", "b"]


def test_one_student_is_never_flagged():
    data = analytics.summarise([_rec("a", {"a: tests": True})])
    assert data["tests"][0]["flag"] == "" and data["statuses"] == {"ok": 1}
