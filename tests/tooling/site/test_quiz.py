"""A lesson's review quiz on the site: kept by the build, and answered in chromium.

The fixture lesson 91 ends with a quiz cell (``tests/fixtures/site/91_fixture_full.toml``)
whose stored output is what :mod:`course_utils.quiz` renders today. On the built page a
reader answers each question wrong, reads "Wrong." with the hint (never the answer),
answers right and reads "Right." with the explanation, each exactly as
:meth:`course_utils.quiz.Quiz.feedback` words it; opens *Show the answer*; and sees
every answer unfolded when the page is printed.
"""

from __future__ import annotations

import nbformat
import pytest

from course_utils import quiz
from tests.tooling.site.fixture import (
    QUIZ_FILE,
    QUIZ_LESSON,
    ROOT,
    count_others,
    launch,
    need_browser,
    only,
    quiz_cell,
    quiz_output,
    serve,
    shared_site,
)

PAGE = "notebooks/91_fixture_full.html"


def test_the_fixture_quiz_output_is_what_the_module_renders_today():
    cell = quiz_cell(nbformat.read(QUIZ_LESSON, as_version=4))
    assert cell.outputs == [quiz_output()], (
        "the fixture's quiz output is stale: python -m tests.tooling.site.fixture"
    )
    assert set(cell.outputs[0]["data"]) == {"text/html", "text/markdown", "text/plain"}


@pytest.mark.slow  # builds the fixture site (about 10 s), as test_build.py's do
def test_the_built_page_keeps_the_quiz_html_and_its_script():
    page = (shared_site()["out"] / PAGE).read_text(encoding="utf-8")
    expected = quiz.load(ROOT / QUIZ_FILE).html()
    assert expected in page  # myst-nb picks text/html and writes it as it is
    assert page.count('class="course-quiz"') == 1


@pytest.fixture(scope="module")
def page():
    need_browser()
    from playwright.sync_api import sync_playwright

    site = shared_site()
    with serve(site["out"]) as base, sync_playwright() as pw:
        browser = launch(pw)
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, proxy=only(base)
        )
        context.set_default_timeout(90_000)  # a busy machine is slow, not broken
        blocked: list[str] = []
        count_others(context, base, blocked)
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda err: errors.append(str(err)))
        tab.goto(base + PAGE, wait_until="load")
        yield tab
        assert not errors and not blocked, (errors, blocked)
        browser.close()


def _check(question, verdict: str, text: str) -> None:
    question.locator("button", has_text="Check").click()
    feedback = question.locator(".course-quiz-feedback")
    assert feedback.inner_text().strip() == text
    assert feedback.get_attribute("aria-live") == "polite"
    classes = (feedback.get_attribute("class") or "").split()
    assert (verdict in classes) if verdict else not {"right", "wrong"} & set(classes)


@pytest.mark.browser
def test_a_choice_answered_wrong_then_right_says_so(page):
    fixture = quiz.load(ROOT / QUIZ_FILE)
    question = page.locator(".course-quiz-q").nth(0)
    assert question.locator("button", has_text="Check").is_visible()
    _check(question, "", "Choose an answer first.")
    radios = question.get_by_role("radio")
    for index in (0, 2, 1):  # "3" (its own hint), "7" (the question's), then "4"
        radios.nth(index).check()
        verdict, text = fixture.feedback(0, index)
        _check(question, verdict, text)
        if verdict == "wrong":
            assert "Wrong." in text and fixture.questions[0].explain not in text
    assert question.locator(".course-quiz-feedback").inner_text().startswith("Right.")
    question.get_by_label("3").check()  # a new choice clears the old verdict
    assert question.locator(".course-quiz-feedback").inner_text() == ""


@pytest.mark.browser
def test_a_number_answered_wrong_then_right_says_so_and_the_answer_opens(page):
    fixture = quiz.load(ROOT / QUIZ_FILE)
    question = page.locator(".course-quiz-q").nth(1)
    field = question.get_by_label("Your answer:")
    for typed in ("abc", "1", "0.004"):
        field.fill(typed)
        verdict, text = fixture.feedback(1, typed)
        _check(question, verdict, text)
    field.fill("0.1")
    field.press("Enter")  # Enter checks too
    assert question.locator(".course-quiz-feedback").inner_text().startswith("Wrong.")
    answer = question.locator("details p")
    assert not answer.is_visible()
    question.locator("summary", has_text="Show the answer").click()
    assert answer.is_visible() and answer.inner_text().startswith(
        "Answer: 0 (± 0.005)."
    )


@pytest.mark.browser
def test_every_answer_is_unfolded_in_print(page):
    page.emulate_media(media="print")
    try:
        answers = page.locator(".course-quiz details p")
        assert answers.count() == 2
        assert all(answers.nth(i).is_visible() for i in range(2))
        assert not page.locator(".course-quiz-check").first.is_visible()
    finally:
        page.emulate_media(media="screen")
