"""course_utils.quiz: question sets read and checked, rendered for every front end, and
every lesson ending its review with its own quiz."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from course_utils import quiz

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

GOOD = """
title = "Check yourself"

[[question]]
text = "Which is `even`?"
hint = "Divide by 2."
explain = "4 = 2 × 2, nothing left over."

[[question.choice]]
text = "3"
hint = "3 = 2 + 1: one is left over."

[[question.choice]]
text = "4"
correct = true

[[question]]
text = "How many calls?"
number = 500
tolerance = 0.5
unit = "calls"
hint = "Where do the totals cross?"
explain = "(2 - 0.001) / 0.004 rounded up."
"""


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _good(tmp_path) -> quiz.Quiz:
    return quiz.load(_write(tmp_path, GOOD))


def test_a_quiz_file_reads_into_questions(tmp_path):
    q = _good(tmp_path)
    assert q.name == "mine" and q.title == "Check yourself"
    choice, number = q.questions
    assert isinstance(choice, quiz.MultipleChoice) and choice.answer == 1
    assert [c.text for c in choice.choices] == ["3", "4"]
    assert isinstance(number, quiz.Numeric)
    assert (number.number, number.tolerance, number.unit) == (500.0, 0.5, "calls")


def test_answers_are_checked_and_worded_as_the_page_words_them(tmp_path):
    q = _good(tmp_path)
    assert q.feedback(0, 1) == ("right", "Right. 4 = 2 × 2, nothing left over.")
    verdict, text = q.feedback(0, 0)
    assert verdict == "wrong" and text.startswith("Wrong. 3 = 2 + 1: one is left over.")
    assert "nothing left over" not in text  # a wrong try never shows the explanation
    assert q.feedback(0, None) == ("", "Choose an answer first.")
    assert q.feedback(1, " 500.4 ")[0] == "right"
    assert q.feedback(1, "5e2")[0] == "right"
    assert q.feedback(1, "501")[0] == "wrong"
    assert q.feedback(1, "") == ("", "Type a number first.")
    assert q.feedback(1, "0x1f4")[0] == ""  # not a number, as the page's script says
    assert "is not a number" in q.feedback(1, "five hundred")[1]
    exact = quiz.Numeric("0.1 + 0.2?", 0.3, "Floats.", "Add them.")
    assert exact.check("0.30000000000000004") and not exact.check("0.31")


def test_the_html_is_self_contained_and_accessible(tmp_path):
    page = _good(tmp_path).html()
    assert "http://" not in page and "https://" not in page and " src=" not in page
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert page.count("<fieldset>") == page.count("<legend>") == 2
    assert page.count('aria-live="polite"') == 2
    assert "<button" not in page  # the script adds them, where it runs
    assert 'button.textContent = "Check"' in page
    assert "<summary>Show the answer</summary>" in page
    assert "<legend>1. Which is <code>even</code>?</legend>" in page
    # Every input sits inside its label; the hints and explanations are escaped data.
    assert re.findall(r"<label>[^<]*<input", page) and "<input" not in re.sub(
        r"<label>.*?</label>", "", page, flags=re.S
    )
    assert 'data-hint="Divide by 2."' in page
    assert 'data-explain="4 = 2 × 2, nothing left over."' in page


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.open: list[str] = []
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("input", "br"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.bad.append(tag)


def test_the_html_is_well_formed_and_the_answers_read_without_script(tmp_path):
    q = _good(tmp_path)
    parser = _Tags()
    parser.feed(q.html())
    assert not parser.open and not parser.bad
    no_script = re.sub(r"<(script|style)>.*?</\1>", "", q.html(), flags=re.S)
    text = re.sub(r"<[^>]+>", "", no_script)
    # Where no script runs, each answer still reads, folded under its question.
    assert "Answer: 4. 4 = 2 × 2, nothing left over." in text
    assert "Answer: 500 calls (± 0.5). (2 - 0.001) / 0.004 rounded up." in text
    assert "Check" not in text.replace("Check yourself", "")
    assert "open Show the answer under a question to read its answer" in text


def test_markdown_and_plain_text_list_every_answer(tmp_path):
    q = _good(tmp_path)
    md, plain = q._repr_markdown_(), repr(q)
    assert "1. Which is `even`?" in md and "   - (b) 4" in md
    assert "*Answer:* (b) 4. 4 = 2 × 2" in md and "*Answer:* 500 calls (± 0.5)." in md
    assert "1. Which is even?" in plain and "Answer: (b) 4." in plain
    assert str(q) == plain


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("correct = true", "correct = false"), "exactly one choice must have correct"),
        (('text = "3"', 'text = "4"'), "two choices have the same text"),
        (
            [
                ('hint = "3 = 2 + 1: one is left over."\n', ""),
                ('hint = "Divide by 2."\n', ""),
            ],
            "choice 1: a wrong choice needs",
        ),
        (("number = 500", "number = 500\n[[question.choice]]"), "not both"),
        (("number = 500", "numbr = 500"), "not neither"),
        (("tolerance = 0.5", "tolerance = -1"), "tolerance must be >= 0"),
        (("tolerance = 0.5", 'tolerance = "half"'), "tolerance must be a number"),
        (("number = 500", "number = nan"), "number must be finite"),
        (("Where do the totals cross?", "It is 500."), "gives the answer away"),
        (('explain = "4 = 2', 'explian = "4 = 2'), "unknown key(s) explian"),
        (('title = "Check yourself"', 'titel = "x"'), "unknown key(s) titel"),
        (
            ('text = "4"\ncorrect', 'text = "4"\nhint = "no"\ncorrect'),
            "right choice has",
        ),
    ],
)
def test_a_bad_question_set_is_an_error_naming_the_file_and_question(
    tmp_path, change, words
):
    text = GOOD
    for old, new in [change] if isinstance(change[0], str) else change:
        text = text.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(quiz.QuizError) as err:
        quiz.load(_write(tmp_path, text))
    message = str(err.value)
    assert words in message, message
    assert "mine.toml" in message


def test_errors_name_the_question_by_number_and_text(tmp_path):
    bad = GOOD.replace("tolerance = 0.5", "tolerance = -1")
    with pytest.raises(quiz.QuizError, match=r"question 2 \('How many calls\?'\)"):
        quiz.load(_write(tmp_path, bad))
    with pytest.raises(quiz.QuizError, match=r"mine.toml: not valid TOML"):
        quiz.load(_write(tmp_path, "[[question]\n"))
    with pytest.raises(quiz.QuizError, match="no \\[\\[question\\]\\] table"):
        quiz.load(_write(tmp_path, 'title = "x"\n'))
    with pytest.raises(quiz.QuizError, match="question 1: a question is a"):
        quiz.load(_write(tmp_path, 'question = ["x"]\n'))
    with pytest.raises(quiz.QuizError, match="no quiz for lesson '99_nothing'"):
        quiz.load("99_nothing")
    with pytest.raises(quiz.QuizError, match="quiz file .*gone.toml is missing"):
        quiz.load(tmp_path / "gone.toml")


def test_a_hint_that_quotes_the_right_choice_is_refused():
    right = quiz.Choice("The call returned a handle", correct=True)
    wrong = quiz.Choice("It cached it", hint="No: the call returned a handle instead.")
    with pytest.raises(quiz.QuizError, match="quotes the right choice"):
        quiz.Quiz("x", (quiz.MultipleChoice("Why?", (wrong, right), "Async."),))


def test_right_answers_all_in_one_place_are_refused():
    def question(i: int) -> quiz.MultipleChoice:
        choices = (
            quiz.Choice(f"yes {i}", correct=True),
            quiz.Choice(f"no {i}", hint="No."),
        )
        return quiz.MultipleChoice(f"Q{i}?", choices, "Because.")

    with pytest.raises(quiz.QuizError, match="position 1; vary"):
        quiz.Quiz("x", tuple(question(i) for i in range(3)))
    quiz.Quiz("x", tuple(question(i) for i in range(2)))  # two may share it


def test_importing_the_module_imports_no_framework():
    code = "import sys, course_utils.quiz; print(sorted({'jax', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_break_even_answer_is_the_timing_helpers():
    from course_utils.timing import break_even_calls

    q = quiz.load("00_welcome_and_setup").questions[1]
    assert isinstance(q, quiz.Numeric) and q.check(break_even_calls(2.0, 0.001, 0.005))
    q = quiz.load("12_gpt_at_scale").questions[1]
    assert isinstance(q, quiz.Numeric) and q.check(break_even_calls(3.0, 0.012, 0.020))


# Every lesson: its review (the heading, a sentence; until a lesson is converted, its
# written questions too), then its own quiz, then only prose.
REVIEW = "**Review questions**"
QUIZ_CALL = re.compile(r'^from course_utils import quiz\n\nquiz\.load\("([^"]+)"\)$')


def _review_and_quiz(nb) -> tuple[int, list]:
    review = [i for i, c in enumerate(nb.cells) if REVIEW in c.source]
    assert len(review) == 1, f"{len(review)} markdown cells hold {REVIEW}"
    assert nb.cells[review[0]].cell_type == "markdown"
    after = nb.cells[review[0] + 1 :]
    return nb.cells[review[0]].source.count("<details>"), after


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_each_lesson_ends_its_review_with_its_own_quiz(lesson):
    nb = nbformat.read(lesson, as_version=4)
    written, after = _review_and_quiz(nb)
    code = [c for c in after if c.cell_type == "code"]
    assert len(code) == 1 and after[0] is code[0], (
        f"{lesson.name}: the cell after the review questions must be the quiz cell, "
        "and the only code cell after them (docs/AUTHORING.md, 'The review quiz')"
    )
    match = QUIZ_CALL.match(code[0].source)
    assert match and match[1] == lesson.stem, (
        f"{lesson.name}: the quiz cell must read exactly "
        f'from course_utils import quiz\\n\\nquiz.load("{lesson.stem}")'
    )
    english = quiz.load(lesson.stem)
    # The review is the quiz alone; a lesson not converted yet keeps its written
    # questions. One whose written review is gone has its Chinese quiz.
    if written == 0:
        assert lesson.stem in quiz.names("zh"), (
            f"{lesson.name}: its written review is gone, so the Chinese edition's review "
            f"is course_utils/quizzes/zh/{lesson.stem}.toml, which is missing"
        )
        assert quiz.structure(quiz.load(lesson.stem, "zh")) == quiz.structure(english)


ZH_NAMES = quiz.names("zh")


@pytest.mark.parametrize("name", ZH_NAMES)
def test_a_chinese_quiz_asks_the_english_questions(name):
    english, chinese = quiz.load(name), quiz.load(name, language="zh")
    assert chinese.language == "zh" and chinese.source.endswith(f"zh/{name}.toml")
    assert quiz.structure(chinese) == quiz.structure(english), (
        f"course_utils/quizzes/zh/{name}.toml must have the English quiz's questions, "
        "choices, right answers, numbers and tolerances, in its order"
    )
    text = " ".join(
        [q.text for q in chinese.questions] + [q.explain for q in chinese.questions]
    )
    assert re.search(r"[\u4e00-\u9fff]", text), f"zh/{name}.toml is not in Chinese"
    # The terms of docs/zh/GLOSSARY.md, as the catalogs are held to them.
    from babel.messages.catalog import Catalog

    from course_utils.tooling.translation import catalog

    pairs = Catalog()
    for a, b in zip(english.questions, chinese.questions, strict=True):
        texts = [(a.text, b.text), (a.explain, b.explain), (a.hint, b.hint)]
        if isinstance(a, quiz.MultipleChoice):
            for c, d in zip(a.choices, b.choices, strict=True):
                texts += [(c.text, d.text), (c.hint, d.hint)]
        for en, zh in texts:
            if en and en not in pairs:
                pairs.add(en, zh)
    terms = catalog.glossary(ROOT / "docs" / "zh" / "GLOSSARY.md")
    assert catalog.terminology(pairs, terms, f"zh/{name}.toml") == []


def test_a_chinese_quiz_speaks_chinese_and_a_changed_one_is_caught(tmp_path):
    folder = tmp_path / "zh"
    folder.mkdir()
    path = folder / "mine.toml"
    path.write_text(
        GOOD.replace("Check yourself", "自我检查").replace("How many calls?", "几次？"),
        encoding="utf-8",
    )
    q = quiz.load(path, language="zh")
    assert quiz.structure(q) == quiz.structure(_good(tmp_path))
    page = q.html()
    assert 'lang="zh-CN"' in page and 'button.textContent = "检查"' in page
    assert "<summary>显示答案</summary>" in page and "Show the answer" not in page
    assert "<strong>答案：</strong>500 calls (± 0.5)。" in page
    assert q.feedback(0, 1) == ("right", "正确。4 = 2 × 2, nothing left over.")
    assert q.feedback(0, None) == ("", "请先选择一个答案。")
    assert q.feedback(1, "501")[1].endswith("再试一次，或展开“显示答案”。")
    assert "答案：" in q.text() and "*答案：*" in q.markdown()
    moved = GOOD.replace("tolerance = 0.5", "tolerance = 1")
    path.write_text(moved, encoding="utf-8")
    assert quiz.structure(quiz.load(path, "zh")) != quiz.structure(_good(tmp_path))
    with pytest.raises(quiz.QuizError, match="no quizzes in language 'fr'"):
        quiz.load("00_welcome_and_setup", language="fr")


def test_every_quiz_file_belongs_to_a_lesson():
    assert sorted(quiz.names()) == sorted(p.stem for p in LESSONS)
    assert set(quiz.names("zh")) <= set(quiz.names())


def test_every_english_quiz_has_its_chinese_version():
    missing = sorted(set(quiz.names()) - set(quiz.names("zh")))
    assert set(quiz.names()) == set(quiz.names("zh")), (
        "the Chinese edition shows the English quiz where "
        + ", ".join(f"course_utils/quizzes/zh/{name}.toml" for name in missing)
        + " is missing"
    )


def test_the_example_in_the_authoring_guide_is_a_valid_quiz(tmp_path):
    guide = (ROOT / "docs" / "AUTHORING.md").read_text(encoding="utf-8")
    section = guide.split("## The review quiz", 1)[1]
    example = re.search(r"```toml\n(.*?)```", section, re.S)
    assert example, "docs/AUTHORING.md's review quiz section has no TOML example"
    q = quiz.load(_write(tmp_path, example[1]))
    assert [type(x) for x in q.questions] == [quiz.MultipleChoice, quiz.Numeric]
