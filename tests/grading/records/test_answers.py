"""Written answers gathered per question (``records/answers.py``) on the generated class
with two written answers (``tests/grading/answers_class.py``)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from course_utils.errors import CourseError
from course_utils.grading.inputs.master import load_master
from course_utils.grading.records import answers
from tests.grading import answers_class as ac
from tests.grading.generated_class import ROSTER
from tests.grading.helpers import MASTER


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("answers")
    master = load_master(ac.write_master(root / "master"))
    return master, ac.write_class(root / "subs")


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_every_students_answer_is_found_without_the_question(made):
    master, subs = made
    result = answers.collect(subs, master)
    assert [q.id for q in result.questions] == ac.QUESTIONS
    assert result.students == sorted(ROSTER)
    for student in ROSTER:
        want = ac.ANSWERS.get(student, {})
        got = result.answers[student]
        assert got == {q: want.get(q) for q in ac.QUESTIONS}, student
    assert set(result.not_read) == {"lea"}
    assert "not valid JSON" in result.not_read["lea"]
    why, unit = result.questions
    assert why.prompt == "Why square things?" and why.model == "Area."
    assert unit.prompt == "In which **unit** is an area measured?"
    assert unit.model == "Square metres (`m**2`)." and unit.points is None
    assert result.answered("why") == 3 and result.answered("unit") == 3


@pytest.mark.parametrize(
    "text, answer",
    [
        ("<!-- EXERCISE: q -->\nWhy?\n\nBecause.", "Because."),
        ("<!-- EXERCISE: q -->\nWhy?\n\nYOUR ANSWER HERE", None),
        ("<!-- EXERCISE: q -->\nWhy?\n\nYOUR ANSWER HERE\nBecause.\n", "Because."),
        ("<!-- EXERCISE: q -->\nWhy?\n\n   \n", None),
        ("Why?\nBecause.", "Because."),  # the marker deleted: still the cell of q
        ("<!-- EXERCISE: q -->\nWhy, really?\nBecause.", "Why, really?\nBecause."),
        ("<!-- EXERCISE: q -->\nBecause, Why?", "Because, Why?"),
    ],
)
def test_answer_text_takes_off_the_marker_the_question_and_the_placeholder(
    text, answer
):
    assert answers.answer_text(text, "<!-- EXERCISE: q -->\nWhy?\n") == answer


def test_the_pages_escape_raw_html_fetch_nothing_and_box_each_answer(made, tmp_path):
    master, subs = made
    result = answers.collect(subs, master, points=2)
    _, table = answers.write(result, tmp_path / "out")
    assert table == tmp_path / "out" / "manual.csv"
    lines = {
        (r["student"], r["item"]): n for n, r in enumerate(_rows(table.read_text()), 2)
    }
    for q in ac.QUESTIONS:
        page = (tmp_path / "out" / "questions" / f"{q}.html").read_text()
        assert not re.search(r"<(script|img|link|iframe)\b", page)
        assert "src=" not in page and "http" not in page.replace(
            "https://example.com/track.png", ""
        )
        missing = sum(1 for s in ROSTER if not result.answers[s][q])
        assert page.count(answers.NO_ANSWER) == missing
        order = re.findall(r"<h2>([^<]+)</h2>", page)
        assert order == sorted(ROSTER)
        for s in ROSTER:
            assert f"manual.csv line {lines[s, q]} · {s}, {q}</span>" in page
        assert "Model answer (from the master)" in page
    why = (tmp_path / "out" / "questions" / "why.html").read_text()
    assert (
        "&lt;script&gt;alert('bob')&lt;/script&gt; to get &lt;b&gt;areas&lt;/b&gt;"
        in why
    )
    assert "<strong>areas</strong>" in why and "<li>of a tile</li>" in why
    unit = (tmp_path / "out" / "questions" / "unit.html").read_text()
    assert '<a href="https://example.com/track.png">plot</a>' in unit  # a link only
    assert "not valid JSON" in unit  # lea's reason, shown when not anonymous
    index = (tmp_path / "out" / "index.html").read_text()
    assert "href='questions/unit.html'" in index and "3 of 13" in index


def test_the_table_has_a_row_per_student_and_question(made, tmp_path):
    master, subs = made
    result = answers.collect(subs, master, points=1.5)
    rows = _rows(answers.manual_csv(result))
    assert list(rows[0]) == ["student", "item", "points", "max_points", "comment"]
    assert [(r["student"], r["item"]) for r in rows] == [
        (s, q) for s in sorted(ROSTER) for q in ac.QUESTIONS
    ]
    assert {r["max_points"] for r in rows} == {"1.5"} and not any(
        r["points"] for r in rows
    )
    missing = {
        (r["student"], r["item"]) for r in rows if r["comment"] == answers.NO_ANSWER
    }
    assert missing == {
        (s, q) for s in ROSTER for q in ac.QUESTIONS if not result.answers[s][q]
    }


def test_anonymous_pages_name_no_student_and_the_key_maps_back(made, tmp_path):
    master, subs = made
    out = tmp_path / "out"
    result = answers.collect(subs, master, anonymous=True)
    answers.write(result, out)
    key = answers.read_key(out / answers.INSTRUCTOR / answers.KEY)
    assert sorted(key.values()) == sorted(ROSTER)
    assert all(re.fullmatch(r"anon-\d\d", p) for p in key)
    for p, s in key.items():
        assert result.answers[p] == answers.collect(subs, master).answers[s]
    shown = {r["student"] for r in _rows((out / "manual.csv").read_text())}
    assert shown == set(key)
    for page in [out / "index.html", *(out / "questions").glob("*.html")]:
        text = page.read_text()
        assert not set(re.findall(r"<h2>([^<]+)</h2>", text)) & set(ROSTER)
        assert "not valid JSON" not in text  # a reason could name the student
        assert re.findall(r"<h2>([^<]+)</h2>", text) in ([], sorted(key))
    again = answers.collect(subs, master, anonymous=True, old_key=key)
    assert again.key == key  # a rerun keeps every pseudonym


def test_a_new_student_gets_a_free_pseudonym_and_the_others_keep_theirs():
    names = answers._pseudonyms(["a", "b", "c"], {"anon-02": "b", "anon-07": "gone"})
    assert names["b"] == "anon-02" and sorted(names.values()) == [
        "anon-01",
        "anon-02",
        "anon-03",
    ]
    assert answers._pseudonyms(["anon-1", "x"], {})["x"].startswith("blind-")


def test_a_filled_table_is_never_overwritten(made, tmp_path):
    master, subs = made
    result = answers.collect(subs, master)
    out = tmp_path / "out"
    assert answers.write(result, out)[1].name == "manual.csv"
    assert answers.write(result, out)[1].name == "manual.csv"  # untouched: rewritten
    filled = (out / "manual.csv").read_text().replace("ada,why,,", "ada,why,1,", 1)
    (out / "manual.csv").write_text(filled)
    _, table = answers.write(result, out)
    assert table.name == "manual-new.csv"
    assert (out / "manual.csv").read_text() == filled
    assert "manual-new.csv line 2" in (out / "questions" / "why.html").read_text()


def test_a_master_without_written_answers_is_refused(tmp_path):
    master = load_master(MASTER)
    master.answers = []
    with pytest.raises(CourseError, match="no written answers"):
        answers.collect(tmp_path, master)
