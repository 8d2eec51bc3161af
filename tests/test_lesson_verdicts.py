"""Every verdict a lesson prints comes from the claims registry through one function.

Lessons judge claims only with ``claims.judge``/``faster``/``fact``/``not_testable``
(course_utils/claims/verdicts.py). This test reads each lesson's code cells (the
``.py`` sources; markdown cells are comments there) and fails on the three ways a
lesson could judge on its own: a function named like a verdict, a verdict word
typed into a string, or a branch on a measured ratio that picks what to print.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
VERDICT_WORDS = re.compile(r"\b(holds|does not hold|inconclusive|understates)\b", re.I)
MEASURED = re.compile(
    r"\.ratio\(|\.ratios\(|\.speedup\(|\.median\b|ratio|speedup|gain|median", re.I
)


def _strings(node: ast.AST):
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            yield n


def _branches_on_measurements(tree: ast.AST):
    for n in ast.walk(tree):
        if isinstance(n, ast.If | ast.IfExp):
            tests = [c for c in ast.walk(n.test) if isinstance(c, ast.Compare)]
            for c in tests:
                text = ast.unparse(c)
                if MEASURED.search(text):
                    yield n.lineno, text


def problems(source: str) -> list[str]:
    """What in one lesson's code judges a claim outside the registry."""
    tree = ast.parse(source)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and "verdict" in n.name.lower():
            found.append(f"line {n.lineno}: a lesson-local verdict function {n.name}()")
    for s in _strings(tree):
        if VERDICT_WORDS.search(s.value):
            found.append(f"line {s.lineno}: a verdict word typed into {s.value[:60]!r}")
    for line, text in _branches_on_measurements(tree):
        found.append(
            f"line {line}: a branch on a measured value picks the words: {text}"
        )
    return found


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_verdicts_come_from_the_registry(lesson):
    found = problems(lesson.read_text(encoding="utf-8"))
    assert not found, f"{lesson.name}:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "def verdict(r):\n    return r",
        "print('the claim holds here')",
        "x = f'{v} does not hold'",
        "word = 'faster' if cmp.ratio('a') > 1 else 'slower'",
        "if speedup >= 1.2:\n    print('ok')",
        "if t.median < 3e-3:\n    pass",
    ],
)
def test_each_way_of_judging_locally_is_caught(code):
    assert problems(code)


def test_the_registry_path_passes():
    code = (
        "v = claims.judge('compile-training', cmp, 'PyTorch eager', 'torch.compile')\n"
        "print(v.explanation)\n"
        "if v.verdict == claims.HOLDS:\n    print(v.reason)\n"
    )
    assert problems(code) == []
