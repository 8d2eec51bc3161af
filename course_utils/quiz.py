"""Review questions that check themselves: a lesson's quiz, in the notebook and on the site.

Each lesson ends its review section with one code cell::

    from course_utils import quiz

    quiz.load("00_welcome_and_setup")

which reads that lesson's question set from ``course_utils/quizzes/<lesson>.toml``
(docs/AUTHORING.md, "The review quiz") and shows it. A question is a multiple choice
(:class:`MultipleChoice`, one right answer) or a number (:class:`Numeric`, right within
an absolute tolerance). The quiz's HTML is self-contained: an inline stylesheet and one
inline script, nothing from another host, so it works where the output's scripts run
(JupyterLab for an output it trusts, which includes every output of the running session;
Colab; VS Code; the course's site, where myst-nb keeps the ``text/html`` output). The
script adds a *Check* button to each question, which says "Right." with the explanation, or "Wrong." with a hint that does not give the answer
away (the choice's own hint where it has one); *Show the answer* (a ``<details>``) opens
the answer and its explanation. Where scripts do not run (nbviewer without them,
GitHub's preview, an untrusted notebook, whose sanitiser also drops the stylesheet) the
same HTML reads as the questions, their choices and a folded answer under each, with no
button that does nothing; printed, the answers are unfolded. The
``text/markdown`` and ``text/plain`` forms (a PDF built through LaTeX, a terminal) list
each question with its answer.

:meth:`Quiz.feedback` is the script's verdict and wording computed in Python, which the
tests compare with what the page says. Importing this module imports neither jax nor
torch.

Each quiz has a Chinese version, ``course_utils/quizzes/zh/<lesson>.toml`` (the same
questions, choices, right answers, numbers and tolerances; :func:`structure`), which
``quiz.load(lesson, language="zh")`` reads; the page's own words (*Check*, "Right.")
are then Chinese too (:data:`WORDS`). The Chinese notebook's quiz cell passes
``language="zh"`` (``course translate`` writes it so).
"""

from __future__ import annotations

import html
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.errors import CourseError

FOLDER = Path(__file__).resolve().parent / "quizzes"
# The languages a quiz is written in: English in FOLDER, each other one in FOLDER/<language>.
LANGUAGES = ("en", "zh")
TITLE = "Check yourself"
ROOT_CLASS = "course-quiz"
# Where a float's last bits may differ between the author's number and the reader's.
_FLOAT_SLACK = 1e-9
_CODE = re.compile(r"`([^`]+)`")
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")
_QUIZ_KEYS = {"title", "question"}
_COMMON_KEYS = {"text", "explain", "hint"}
_CHOICE_QUESTION_KEYS = _COMMON_KEYS | {"choice"}
_NUMBER_QUESTION_KEYS = _COMMON_KEYS | {"number", "tolerance", "unit"}
_CHOICE_KEYS = {"text", "correct", "hint"}


class QuizError(CourseError, ValueError):
    """A question set that cannot be shown; the message names the file and the question."""


@dataclass(frozen=True)
class Choice:
    """One answer of a multiple-choice question; ``hint`` is what a reader who picked it
    (wrongly) is told, without naming the right one."""

    text: str
    correct: bool = False
    hint: str = ""


@dataclass(frozen=True)
class MultipleChoice:
    """A question with one right answer among ``choices``."""

    text: str
    choices: tuple[Choice, ...]
    explain: str
    hint: str = ""

    @property
    def answer(self) -> int:
        """The index of the right choice."""
        return next(i for i, c in enumerate(self.choices) if c.correct)

    def check(self, response: int) -> bool:
        """Whether choosing ``choices[response]`` is right."""
        return response == self.answer

    def hint_for(self, response: int) -> str:
        """What a reader who chose ``choices[response]`` is told when it is wrong."""
        return self.choices[response].hint or self.hint


@dataclass(frozen=True)
class Numeric:
    """A question whose answer is a number, right within ``tolerance`` (absolute)."""

    text: str
    number: float
    explain: str
    hint: str = ""
    tolerance: float = 0.0
    unit: str = ""

    def check(self, response: str | float) -> bool:
        """Whether ``response`` (a number, or the text a reader typed) is right."""
        value = parse_number(response) if isinstance(response, str) else response
        if value is None:
            return False
        slack = _FLOAT_SLACK * max(1.0, abs(self.number))
        return abs(value - self.number) <= self.tolerance + slack

    @property
    def answer_text(self) -> str:
        """The answer as the page writes it: ``500 calls``, ``0.5 (± 0.01)``."""
        text = _number(self.number) + (f" {self.unit}" if self.unit else "")
        return text + (f" (± {_number(self.tolerance)})" if self.tolerance else "")


Question = MultipleChoice | Numeric


def parse_number(text: str) -> float | None:
    """The number a reader typed (``12``, ``0.5``, ``1e-3``), or None; what the page's
    script accepts too (JavaScript's ``Number``, less its hex and empty-string cases)."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _number(value: float) -> str:
    return (
        f"{value:g}" if value != int(value) or abs(value) >= 1e16 else str(int(value))
    )


@dataclass(frozen=True)
class Quiz:
    """A lesson's question set, shown as HTML in a notebook (``_repr_html_``)."""

    name: str
    questions: tuple[Question, ...]
    title: str = TITLE
    source: str = field(default="", compare=False)
    language: str = "en"

    def __post_init__(self) -> None:
        _check_quiz(self)

    def feedback(self, index: int, response: Any) -> tuple[str, str]:
        """``(verdict, text)`` the page shows after *Check* on question ``index``
        (0-based) with ``response`` (a choice's index, or the text typed):
        ``("right", "Right. ...")``, ``("wrong", "Wrong. ...")`` or, with no usable
        answer, ``("", "Choose an answer first.")`` and the like."""
        question, w = self.questions[index], WORDS[self.language]
        if isinstance(question, Numeric):
            text = str(response).strip() if response is not None else ""
            if not text:
                return "", w["type_first"]
            value = parse_number(text)
            if value is None:
                return "", w["nan_before"] + text + w["nan_after"]
            right, hint = question.check(value), question.hint
        else:
            if response is None:
                return "", w["choose_first"]
            right, hint = question.check(response), question.hint_for(response)
        if right:
            return "right", w["right"] + _plain(question.explain)
        return "wrong", w["wrong"] + _plain(hint) + w["again"]

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def html(self) -> str:
        """The quiz as one self-contained block of HTML (style, questions, script)."""
        slug = _SLUG.sub("-", self.name) or "quiz"
        w = WORDS[self.language]
        items = "\n".join(
            _question_html(q, i + 1, f"{ROOT_CLASS}-{slug}-q{i + 1}", w)
            for i, q in enumerate(self.questions)
        )
        how = f'<span class="{ROOT_CLASS}-how">{w["static_how"]}</span>'
        lang = "" if self.language == "en" else f' lang="{HTML_LANG[self.language]}"'
        return (
            f'<div class="{ROOT_CLASS}"{lang} data-quiz="{html.escape(self.name)}">\n'
            f"<style>{CSS}</style>\n"
            f'<p class="{ROOT_CLASS}-title"><strong>{_inline(self.title)}</strong>'
            f"{w['count'].format(n=len(self.questions), how=how)}</p>\n"
            f"{items}\n<script>{script(self.language)}</script>\n</div>"
        )

    def markdown(self) -> str:
        """The questions with their answers, as Markdown (a PDF, a static page)."""
        w = WORDS[self.language]
        lines = [f"**{self.title}**{w['follows']}", ""]
        for i, q in enumerate(self.questions, 1):
            lines += [f"{i}. {q.text}", ""]
            if isinstance(q, MultipleChoice):
                lines += [
                    f"   - ({_letter(j)}) {c.text}" for j, c in enumerate(q.choices)
                ]
                answer = f"({_letter(q.answer)}) {q.choices[q.answer].text}"
            else:
                answer = q.answer_text
            answer = _end(answer, self.language)
            lines += [
                "",
                f"   *{w['answer']}*{w['sep']}{answer}{w['sep']}{q.explain}",
                "",
            ]
        return "\n".join(lines).rstrip() + "\n"

    def text(self) -> str:
        """The questions with their answers, as plain text (a terminal, a log)."""
        w = WORDS[self.language]
        lines = [f"{self.title}{w['follows']}"]
        for i, q in enumerate(self.questions, 1):
            lines.append(f"{i}. {_plain(q.text)}")
            if isinstance(q, MultipleChoice):
                lines += [
                    f"   ({_letter(j)}) {_plain(c.text)}"
                    for j, c in enumerate(q.choices)
                ]
                answer = f"({_letter(q.answer)}) {_plain(q.choices[q.answer].text)}"
            else:
                answer = q.answer_text
            answer = _end(answer, self.language)
            explain = _plain(q.explain)
            lines.append(f"   {w['answer']}{w['sep']}{answer}{w['sep']}{explain}")
        return "\n".join(lines)


def _end(text: str, language: str = "en") -> str:
    """``text`` ending a sentence: a full stop added unless it ends with one already."""
    if text.endswith((".", "?", "!", "。", "？", "！")):
        return text
    return text + WORDS[language]["stop"]


def _letter(index: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[index]


def _plain(text: str) -> str:
    """Text as the page's reader sees it: the backticks of inline code taken off."""
    return _CODE.sub(r"\1", text)


def _inline(text: str) -> str:
    """HTML of a question's text: escaped, with `code` in backticks as ``<code>``."""
    out, at = [], 0
    for match in _CODE.finditer(text):
        out += [
            html.escape(text[at : match.start()]),
            f"<code>{html.escape(match[1])}</code>",
        ]
        at = match.end()
    return "".join(out + [html.escape(text[at:])])


def _attr(text: str) -> str:
    """An attribute's value holding ``text`` as HTML (the script puts it in the page)."""
    return html.escape(_inline(text), quote=True)


def _question_html(q: Question, number: int, name: str, w: dict[str, str]) -> str:
    explain = _inline(q.explain)
    if isinstance(q, MultipleChoice):
        kind, data = "choice", ""
        inputs = "\n".join(
            f'<div><label><input type="radio" name="{name}" value="{j}"'
            + (" data-correct" if c.correct else "")
            + (f' data-hint="{_attr(c.hint)}"' if c.hint else "")
            + f"> {_inline(c.text)}</label></div>"
            for j, c in enumerate(q.choices)
        )
        answer = _inline(q.choices[q.answer].text)
    else:
        kind = "number"
        data = f' data-number="{q.number!r}" data-tolerance="{q.tolerance!r}"'
        unit = f" {_inline(q.unit)}" if q.unit else ""
        inputs = (
            f'<label>{w["your_answer"]}<input type="text" inputmode="decimal" '
            f'autocomplete="off" spellcheck="false">{unit}</label>'
        )
        answer = html.escape(q.answer_text)
    return (
        f'<div class="{ROOT_CLASS}-q" data-kind="{kind}"{data} '
        f'data-hint="{_attr(q.hint)}" data-explain="{_attr(q.explain)}">\n'
        f"<fieldset><legend>{number}. {_inline(q.text)}</legend>\n{inputs}\n</fieldset>\n"
        f'<p class="{ROOT_CLASS}-feedback" aria-live="polite"></p>\n'
        f"<details><summary>{w['show']}</summary>\n"
        f"<p><strong>{w['answer']}</strong>{w['sep']}{_end(answer, w['lang'])}{w['sep']}"
        f"{explain}</p>\n</details>\n</div>"
    )


# What the title says to do: without the script, where only the folded answers work;
# the script, which adds the Check buttons, says how to use them.
STATIC_HOW = "open <em>Show the answer</em> under a question to read its answer"
SCRIPT_HOW = (
    "pick or type an answer, then <em>Check</em>; <em>Show the answer</em> opens it"
)
# The page's own words in each language (the questions bring theirs): the buttons, the
# verdicts, the messages of Quiz.feedback and of the script, the answer's label.
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "lang": "en",
        "title": TITLE,
        "count": " ({n} questions: {how})",
        "static_how": STATIC_HOW,
        "script_how": SCRIPT_HOW,
        "follows": " (the answer follows each question)",
        "check": "Check",
        "show": "Show the answer",
        "answer": "Answer:",
        "your_answer": "Your answer: ",
        "sep": " ",
        "stop": ".",
        "right": "Right. ",
        "wrong": "Wrong. ",
        "again": " Try again, or open “Show the answer”.",
        "choose_first": "Choose an answer first.",
        "type_first": "Type a number first.",
        "nan_before": "“",
        "nan_after": "” is not a number: type digits, such as 12 or 0.5.",
    },
    "zh": {
        "lang": "zh",
        "title": "自我检查",
        "count": "（共 {n} 题：{how}）",
        "static_how": "展开题目下的<em>显示答案</em>即可读到答案",
        "script_how": "选择或输入答案，再按<em>检查</em>；<em>显示答案</em>会展开答案",
        "follows": "（每题之后附答案）",
        "check": "检查",
        "show": "显示答案",
        "answer": "答案：",
        "your_answer": "你的答案：",
        "sep": "",
        "stop": "。",
        "right": "正确。",
        "wrong": "错误。",
        "again": "再试一次，或展开“显示答案”。",
        "choose_first": "请先选择一个答案。",
        "type_first": "请先输入一个数。",
        "nan_before": "“",
        "nan_after": "”不是数：请输入数字，例如 12 或 0.5。",
    },
}
HTML_LANG = {"en": "en", "zh": "zh-CN"}

# Scoped to the quiz; colours only on borders, so the text keeps the page's own colour
# (and its contrast) in light and dark themes alike.
CSS = f"""
.{ROOT_CLASS} {{ border: 1px solid rgba(128,128,128,.5); border-radius: 6px;
  padding: .6em 1em; margin: .5em 0; max-width: 60em; }}
.{ROOT_CLASS}-q {{ margin: .6em 0 .9em; }}
.{ROOT_CLASS} fieldset {{ border: 0; margin: 0; padding: 0; min-width: 0; }}
.{ROOT_CLASS} legend {{ float: none; width: auto; padding: 0; margin: 0 0 .3em;
  font-size: inherit; line-height: inherit; font-weight: 600; }}
/* A theme's own colour for inline code may be meant for another background (a site's
   dark mode puts HTML outputs on a light panel): here code keeps the quiz's text colour. */
.{ROOT_CLASS} code {{ color: inherit; background: transparent; }}
.{ROOT_CLASS} label {{ display: inline-block; margin: .15em 0; cursor: pointer; }}
.{ROOT_CLASS} input[type=text] {{ font: inherit; color: inherit; background: transparent;
  width: 9em; margin: 0 .3em; padding: .1em .3em;
  border: 1px solid rgba(128,128,128,.8); border-radius: 3px; }}
.{ROOT_CLASS}-check {{ font: inherit; color: inherit; background: transparent;
  border: 1px solid rgba(128,128,128,.8); border-radius: 4px; padding: .1em .9em;
  margin: .3em 0; cursor: pointer; }}
.{ROOT_CLASS}-feedback {{ margin: .3em 0; padding: .1em 0 .1em .6em;
  border-left: 4px solid transparent; }}
.{ROOT_CLASS}-feedback:empty {{ margin: 0; padding: 0; border: 0; }}
.{ROOT_CLASS}-feedback.right {{ border-left-color: #2e7d32; }}
.{ROOT_CLASS}-feedback.wrong {{ border-left-color: #c62828; }}
.{ROOT_CLASS} summary {{ cursor: pointer; }}
@media print {{ .{ROOT_CLASS}-check, .{ROOT_CLASS}-feedback {{ display: none; }} }}
@media print {{ .{ROOT_CLASS} details::details-content {{ content-visibility: visible; }} }}
"""

# One per quiz; it finds its own quiz (or, where a front end runs it detached from its
# output, every quiz of the page not set up yet), adds the Check buttons, and writes
# each verdict into the question's live region. Quiz.feedback words the same messages.
SCRIPT = """
(() => {
  const R = "@ROOT@";
  const setup = (root) => {
    if (root.dataset.ready) return;
    root.dataset.ready = "1";
    root.querySelector("." + R + "-how").innerHTML = @script_how@;
    const seq = (document.courseQuizSeq = (document.courseQuizSeq || 0) + 1);
    root.querySelectorAll("." + R + "-q").forEach((q, i) => {
      const say = q.querySelector("." + R + "-feedback");
      const field = q.querySelector("input[type=text]");
      const tell = (verdict, html) => { say.className = R + "-feedback " + verdict;
                                        say.innerHTML = html; };
      q.querySelectorAll("input[type=radio]").forEach((r) => { r.name = R + seq + "-" + i; });
      const check = () => {
        let right, hint = q.dataset.hint;
        if (q.dataset.kind === "number") {
          const text = field.value.trim();
          if (!text) return tell("", @type_first@);
          const ok = /^[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?$/.test(text);
          const x = ok ? Number(text) : NaN, a = Number(q.dataset.number);
          if (!Number.isFinite(x)) {
            say.className = R + "-feedback";
            say.textContent = @nan_before@ + text + @nan_after@;
            return;
          }
          right = Math.abs(x - a) <= Number(q.dataset.tolerance) + 1e-9 * Math.max(1, Math.abs(a));
        } else {
          const picked = q.querySelector("input[type=radio]:checked");
          if (!picked) return tell("", @choose_first@);
          right = picked.hasAttribute("data-correct");
          hint = picked.dataset.hint || hint;
        }
        if (right) tell("right", @right@ + q.dataset.explain);
        else tell("wrong", @wrong@ + hint + @again@);
      };
      const button = document.createElement("button");
      button.type = "button";
      button.className = R + "-check";
      button.textContent = @check@;
      button.addEventListener("click", check);
      q.querySelector("fieldset").after(button);
      q.addEventListener("input", () => tell("", ""));
      if (field) field.addEventListener("keydown", (e) => {
        if (e.key === "Enter") { e.preventDefault(); check(); }
      });
    });
    const shut = [];
    addEventListener("beforeprint", () => root.querySelectorAll("details:not([open])")
      .forEach((d) => { d.open = true; shut.push(d); }));
    addEventListener("afterprint", () => { shut.forEach((d) => { d.open = false; });
                                           shut.length = 0; });
  };
  const me = document.currentScript;
  const own = me && me.closest("." + R);
  (own ? [own] : document.querySelectorAll("." + R)).forEach(setup);
})();
""".replace("@ROOT@", ROOT_CLASS)


def script(language: str = "en") -> str:
    """The quiz's script with the page's words of ``language`` (:data:`WORDS`)."""
    out = SCRIPT
    for key, word in WORDS[language].items():
        out = out.replace(f"@{key}@", json.dumps(word, ensure_ascii=False))
    return out


def folder(language: str = "en") -> Path:
    """Where the quizzes of ``language`` are: ``quizzes/``, ``quizzes/zh/``."""
    if language not in LANGUAGES:
        raise QuizError(
            f"no quizzes in language {language!r} (languages: {', '.join(LANGUAGES)})"
        )
    return FOLDER if language == "en" else FOLDER / language


def load(lesson: str | Path, language: str = "en") -> Quiz:
    """The quiz of ``lesson`` (a lesson's name, ``"02_autodiff"``, read from
    ``course_utils/quizzes/``, or ``quizzes/zh/`` with ``language="zh"``), or of a
    ``.toml`` file at that path (its text in ``language``)."""
    path = Path(lesson)
    where = folder(language)
    if path.suffix != ".toml":
        path = where / f"{lesson}.toml"
        if not path.is_file():
            known = ", ".join(names(language)) or "(none)"
            raise QuizError(
                f"no quiz for lesson {str(lesson)!r}: {path} is missing (quizzes: {known})"
            )
    elif not path.is_file():
        raise QuizError(f"quiz file {path} is missing")
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise QuizError(f"{_shown(path)}: not valid TOML ({err})") from None
    return from_dict(data, name=path.stem, source=_shown(path), language=language)


def names(language: str = "en") -> list[str]:
    """The lessons with a quiz in ``course_utils/quizzes/`` (``quizzes/zh/``...)."""
    return sorted(p.stem for p in folder(language).glob("*.toml"))


def structure(quiz: Quiz) -> list[tuple]:
    """What a translation keeps of a quiz: per question, a multiple choice's number of
    choices and right one, or a number's value and tolerance."""
    return [
        ("choice", len(q.choices), q.answer)
        if isinstance(q, MultipleChoice)
        else ("number", q.number, q.tolerance)
        for q in quiz.questions
    ]


def _shown(path: Path) -> str:
    """``course_utils/quizzes/00_x.toml`` for the course's own files, else the path."""
    try:
        return str(path.resolve().relative_to(FOLDER.parents[1]))
    except ValueError:
        return str(path)


def from_dict(
    data: dict[str, Any], name: str, source: str = "", language: str = "en"
) -> Quiz:
    """A quiz from the mapping a quiz file holds (``title``, ``[[question]]`` tables),
    checked; an error names ``source`` (the file) and the question."""
    where = source or f"quiz {name!r}"
    _no_unknown(data, _QUIZ_KEYS, where)
    raw = data.get("question")
    if not isinstance(raw, list) or not raw:
        raise QuizError(f"{where}: no [[question]] table (a quiz needs one or more)")
    questions = tuple(_question(q, where, i) for i, q in enumerate(raw, 1))
    title = data.get("title", WORDS[language]["title"])
    if not isinstance(title, str) or not title.strip():
        raise QuizError(f"{where}: title must be a non-empty string, got {title!r}")
    return Quiz(
        name=name, questions=questions, title=title, source=where, language=language
    )


def _label(where: str, index: int, raw: Any) -> str:
    text = raw.get("text") if isinstance(raw, dict) else None
    if isinstance(text, str) and text.strip():
        short = text if len(text) <= 50 else text[:49] + "…"
        return f"{where}, question {index} ({short!r})"
    return f"{where}, question {index}"


def _no_unknown(raw: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise QuizError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )


def _string(raw: dict[str, Any], key: str, where: str, required: bool = True) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        need = "a non-empty string" if required else "a string"
        raise QuizError(f"{where}: {key} must be {need}, got {value!r}")
    return value.strip()


def _question(raw: Any, where: str, index: int) -> Question:
    label = _label(where, index, raw)
    if not isinstance(raw, dict):
        raise QuizError(f"{label}: a question is a [[question]] table")
    if ("choice" in raw) == ("number" in raw):
        raise QuizError(
            f"{label}: give either [[question.choice]] tables (multiple choice) "
            "or number = ... (a numeric answer), not "
            + ("both" if "choice" in raw else "neither")
        )
    numeric = "number" in raw
    _no_unknown(raw, _NUMBER_QUESTION_KEYS if numeric else _CHOICE_QUESTION_KEYS, label)
    text = _string(raw, "text", label)
    explain = _string(raw, "explain", label)
    hint = _string(raw, "hint", label, required=False)
    if numeric:
        number, tolerance = raw["number"], raw.get("tolerance", 0.0)
        for key, value in (("number", number), ("tolerance", tolerance)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise QuizError(f"{label}: {key} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise QuizError(f"{label}: {key} must be finite, got {value!r}")
        if tolerance < 0:
            raise QuizError(f"{label}: tolerance must be >= 0, got {tolerance!r}")
        unit = _string(raw, "unit", label, required=False)
        return Numeric(text, float(number), explain, hint, float(tolerance), unit)
    return MultipleChoice(text, _choices(raw["choice"], label), explain, hint)


def _choices(raw: Any, label: str) -> tuple[Choice, ...]:
    if not isinstance(raw, list):
        raise QuizError(f"{label}: choice must be [[question.choice]] tables")
    out = []
    for j, c in enumerate(raw, 1):
        where = f"{label}, choice {j}"
        if not isinstance(c, dict):
            raise QuizError(f"{where}: a choice is a [[question.choice]] table")
        _no_unknown(c, _CHOICE_KEYS, where)
        correct = c.get("correct", False)
        if not isinstance(correct, bool):
            raise QuizError(f"{where}: correct must be true or false, got {correct!r}")
        out.append(
            Choice(
                _string(c, "text", where),
                correct,
                _string(c, "hint", where, required=False),
            )
        )
    return tuple(out)


def _check_question(q: Question, label: str) -> None:
    """What a question must be to be shown: one right choice, a hint for every wrong
    one, and no hint that gives the answer away."""
    if isinstance(q, Numeric):
        if not q.hint:
            raise QuizError(
                f"{label}: a numeric question needs a hint (shown when wrong)"
            )
        number = re.compile(rf"(?<![\d.]){re.escape(_number(q.number))}(?![\d]|\.\d)")
        if number.search(q.hint):
            raise QuizError(
                f"{label}: the hint gives the answer away (it holds {_number(q.number)})"
            )
        return
    if len(q.choices) < 2:
        raise QuizError(f"{label}: a multiple choice needs two or more choices")
    right = [c for c in q.choices if c.correct]
    if len(right) != 1:
        raise QuizError(
            f"{label}: exactly one choice must have correct = true, found {len(right)}"
        )
    texts = [c.text.casefold() for c in q.choices]
    if len(set(texts)) != len(texts):
        raise QuizError(f"{label}: two choices have the same text")
    for j, c in enumerate(q.choices, 1):
        if c.correct and c.hint:
            raise QuizError(
                f"{label}, choice {j}: the right choice has a hint (only wrong ones do; "
                "the question's explain is shown when it is picked)"
            )
        if not c.correct and not (c.hint or q.hint):
            raise QuizError(
                f"{label}, choice {j}: a wrong choice needs a hint, or the question one"
            )
    answer = right[0].text.casefold()
    for j, c in enumerate(q.choices, 1):
        quoted = len(answer) >= 8 and answer in (c.hint or q.hint).casefold()
        if quoted and not c.correct:
            raise QuizError(
                f"{label}, choice {j}: its hint quotes the right choice, giving it away"
            )


def _check_quiz(quiz: Quiz) -> None:
    where = quiz.source or f"quiz {quiz.name!r}"
    if quiz.language not in WORDS:
        raise QuizError(f"{where}: no words for language {quiz.language!r}")
    if not quiz.questions:
        raise QuizError(f"{where}: a quiz needs one or more questions")
    for i, q in enumerate(quiz.questions, 1):
        if not isinstance(q, MultipleChoice | Numeric):
            raise QuizError(f"{where}, question {i}: not a question ({q!r})")
        _check_question(q, _label(where, i, {"text": q.text}))
    positions = [q.answer for q in quiz.questions if isinstance(q, MultipleChoice)]
    if len(positions) >= 3 and len(set(positions)) == 1:
        raise QuizError(
            f"{where}: every multiple choice has its right answer at position "
            f"{positions[0] + 1}; vary where the right answers sit"
        )
