"""docs/TEACHING.md's commands: each one it gives parses as the ``course`` command reads
it, and the written answers' one gives their points."""

from __future__ import annotations

import re
import shlex

import pytest

from course_utils.cli import build_parser
from tests.grading.helpers import ROOT

TEACHING = ROOT / "docs" / "TEACHING.md"


def commands() -> list[str]:
    """Every ``course …`` command of the guide: in its code blocks (continued lines
    joined) and in its inline code, which may break across lines."""
    text = TEACHING.read_text()
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        joined = block.replace("\\\n", " ")
        for part in re.split(r"\n|&&", joined):
            part = part.strip()
            if part.startswith("course "):
                found.append(part)
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    for inline in re.findall(r"`(course [^`]+)`", prose):
        found.append(" ".join(inline.split()))
    # a command named in a sentence (`course grade`, `course grade --help`) is no
    # command line to run
    return [c for c in found if _runs(c)]


def _runs(command: str) -> bool:
    """A command line to run: arguments after its verbs, or one that needs none."""
    words = command.split()
    if "--help" in words:
        return False
    return len(words) > 3 or command in ("course sync", "course build-exercises")


def _words(command: str) -> list[str]:
    return shlex.split(command.replace("…", "x"))[1:]


@pytest.mark.parametrize("command", commands())
def test_each_command_of_the_guide_parses(command):
    args = build_parser().parse_args(_words(command))
    assert args.func is not None


def test_the_written_answers_command_gives_their_points():
    (answers,) = [c for c in commands() if c.startswith("course grade answers")]
    args = build_parser().parse_args(_words(answers))
    assert args.points == 2, answers
