"""``course grade report`` on the generated class: its figures and tables match the known mix."""

from __future__ import annotations

import json

import matplotlib.image

from course_utils.cli import main as course_main
from course_utils.grading.records import analytics, classreport
from tests.grading.class_expect import ALL, SQH, copy_of, of_kind, passing
from tests.grading.generated_class import ROSTER


def test_the_class_report_shows_the_known_mix(graded_class, tmp_path, capsys):
    out = copy_of(graded_class, tmp_path)
    assert course_main(["grade", "report", str(out)]) == 0
    assert "class report of 13 student(s)" in capsys.readouterr().out
    folder = out / classreport.FOLDER
    data = json.loads((folder / "report.json").read_text())  # what the figures draw
    totals = [graded_class.expected[s][0] for s in ROSTER]
    assert [b["count"] for b in data["histogram"]] == [
        totals.count(k) for k in range(9)
    ]
    shares = {t["name"]: (t["passed"], t["students"]) for t in data["tests"]}
    assert shares == {name: (len(passing(name)), len(ROSTER)) for name in ALL}
    assert not any(t["flag"] for t in data["tests"])
    square = next(e for e in data["exercises"] if e["exercise"] == "square")
    assert square["passed"] == len(passing(SQH))
    groups = {(g["test"], g["message"]): g for g in data["failures"]}
    masked = groups[(SQH, "AssertionError: square(N) should be N")]  # 1.5 and -2 alike
    assert masked["count"] == 2
    assert masked["examples"] == of_kind("wrong-square", "wrong-square-both")
    invalid = groups[(analytics.WHOLE, next(iter(
        g["message"] for (t, _), g in groups.items() if t == analytics.WHOLE)))]  # fmt: skip
    assert invalid["examples"] == of_kind("not_json")
    ran = data["resources"]["students"]
    assert len(ran) == len(ROSTER) - 1 and all(r["seconds"] > 0 for r in ran)
    assert all(20 < r["peak_memory_mb"] < 1000 for r in ran)
    for name in classreport.FIGURES:
        assert matplotlib.image.imread(folder / name).shape[0] > 100  # a real PNG
    md, page = (folder / "report.md").read_text(), (folder / "report.html").read_text()
    for text in (md, page):
        assert "square(N) should be N" in text and "tests.png" in text


def test_report_refuses_a_folder_that_was_not_graded(tmp_path, capsys):
    assert course_main(["grade", "report", str(tmp_path)]) == 2
    assert "not a graded report folder" in capsys.readouterr().err
