"""A generated class for ``course grade similarity``: a master of two exercises and
submissions whose relations are known: a copied pair, a copy with renamed variables,
independent solutions, and untouched starters.

``write_master(folder)`` writes the master; ``write_class(folder, master)`` writes one
notebook per student of :data:`ROSTER`; ``write_large_class(folder, master, n)`` writes
``n`` students mixing the independent solutions (for timing the command).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_utils import student_version

SIGNATURES = {
    "normalise": (
        "def normalise(xs: list[float]) -> list[float]:\n"
        '    """xs shifted to mean 0 and scaled to standard deviation 1 (the population\n'
        '    one, dividing by len(xs)), in the same order. About 5 lines."""'
    ),
    "word-counts": (
        "def word_counts(text: str) -> dict[str, int]:\n"
        '    """How often each word of text appears, lowercased and split on white space,\n'
        '    most frequent first and ties in alphabetical order. About 5 lines."""'
    ),
}
TESTS = {
    "normalise": "out = normalise([1.0, 2.0, 3.0, 4.0])\n"
    "assert abs(sum(out)) < 1e-9 and abs(sum(v * v for v in out) / 4 - 1) < 1e-9",
    "word-counts": "assert list(word_counts('b a B c a b').items()) == "
    "[('b', 3), ('a', 2), ('c', 1)]",
}

# Independent solutions: written apart, each in its own style.
SOLUTIONS = {
    "normalise": [
        """    n = len(xs)
    mean = sum(xs) / n
    variance = sum((x - mean) ** 2 for x in xs) / n
    std = variance ** 0.5
    return [(x - mean) / std for x in xs]""",
        """    import statistics
    mu = statistics.fmean(xs)
    sd = statistics.pstdev(xs)
    out = []
    for value in xs:
        out.append((value - mu) / sd)
    return out""",
        """    total = 0.0
    squares = 0.0
    for x in xs:
        total += x
        squares += x * x
    m = total / len(xs)
    s = (squares / len(xs) - m * m) ** 0.5
    return list(map(lambda x: (x - m) / s, xs))""",
        """    import numpy as np
    arr = np.asarray(xs, dtype=float)
    return ((arr - arr.mean()) / arr.std()).tolist()""",
        """    centre = sum(xs) / len(xs)
    deviations = [x - centre for x in xs]
    scale = (sum(d * d for d in deviations) / len(deviations)) ** 0.5
    return [d / scale for d in deviations]""",
    ],
    "word-counts": [
        """    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return dict(ordered)""",
        """    from collections import Counter
    tally = Counter(text.lower().split())
    return {w: tally[w] for w in sorted(tally, key=lambda w: (-tally[w], w))}""",
        """    words = text.lower().split()
    result = {}
    for unique in sorted(set(words)):
        result[unique] = words.count(unique)
    pairs = list(result.items())
    pairs.sort(key=lambda p: p[1], reverse=True)
    return {k: v for k, v in pairs}""",
        """    import collections
    seen = collections.defaultdict(int)
    for token in text.split():
        seen[token.lower()] += 1
    def rank(entry):
        return -entry[1], entry[0]
    return dict(sorted(seen.items(), key=rank))""",
        """    tallies = dict()
    for w in text.lower().split():
        if w in tallies:
            tallies[w] += 1
        else:
            tallies[w] = 1
    keys = sorted(tallies, key=lambda k: (-tallies[k], k))
    return {k: tallies[k] for k in keys}""",
    ],
}
# The renamed copy of solution 0: every local name changed, comments and blank lines added.
RENAMES = {
    "n": "count",
    "mean": "average",
    "variance": "spread",
    "std": "sigma",
    "x": "value",
    "counts": "freq",
    "word": "token",
    "ordered": "ranking",
    "item": "kv",
}
# student -> how their notebook is made: ("solution", i) writes solution i of each
# exercise, "copy" solution 0 with comments and blank lines, "renamed" solution 0 with
# RENAMES, "starter" the untouched notebook.
ROSTER = {
    "ada": ("solution", 0),
    "bob": "copy",
    "cy": "renamed",
    "dee": ("solution", 1),
    "eve": ("solution", 2),
    "fay": ("solution", 3),
    "gus": ("solution", 4),
    "hal": "starter",
    "ivy": "starter",
}
COPIED = {("ada", "bob"), ("ada", "cy"), ("bob", "cy")}
STARTERS = {"hal", "ivy"}


def _solution_cell(exercise: str, body: str) -> str:
    head, doc = SIGNATURES[exercise].split("\n", 1)
    return f"# EXERCISE: {exercise}\n{head}\n{doc}\n    {student_version.BEGIN_SOLUTION}\n{body}\n    {student_version.END_SOLUTION}"


def master() -> nbformat.NotebookNode:
    """The master: a setup cell, then per exercise a solution cell and its tests."""
    cells = [new_markdown_cell("# Two small exercises"), new_code_cell("import math")]
    for ex in SIGNATURES:
        cells.append(new_code_cell(_solution_cell(ex, SOLUTIONS[ex][0])))
        cells.append(new_code_cell(f"# TESTS: {ex} points=1\n{TESTS[ex]}"))
    return new_notebook(cells=cells)


def write_master(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "07_small_exercises.ipynb"
    nbformat.write(master(), path)
    return path


def _renamed(body: str) -> str:
    return re.sub(r"\b[A-Za-z_]\w*\b", lambda m: RENAMES.get(m[0], m[0]), body).replace(
        "\n    return", "\n\n    # the answer\n    return"
    )


def _copied(body: str) -> str:
    lines = body.split("\n")
    return "\n".join(["    # my solution", *lines[:2], "", *lines[2:]])


def _body(kind, exercise: str) -> str:
    if kind == "copy":
        return _copied(SOLUTIONS[exercise][0])
    if kind == "renamed":
        return _renamed(SOLUTIONS[exercise][0])
    return SOLUTIONS[exercise][kind[1]]


def submission(kind, choice: dict[str, int] | None = None) -> str:
    """One student's notebook (JSON text): the student version with their answers in."""
    nb = student_version.student_version(master())
    if kind == "starter":
        return nbformat.writes(nb)
    for cell in nb.cells:
        ex = student_version.exercise_id(cell)
        if ex:
            body = SOLUTIONS[ex][choice[ex]] if choice else _body(kind, ex)
            head, doc = SIGNATURES[ex].split("\n", 1)
            cell.source = f"# EXERCISE: {ex}\n{head}\n{doc}\n{body}"
    return nbformat.writes(nb)


def write_class(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for student, kind in ROSTER.items():
        (folder / f"{student}.ipynb").write_text(submission(kind))
    return folder


def write_large_class(folder: Path, n: int) -> Path:
    """``n`` students, each a mix of the independent solutions (5 x 5 mixes, then repeats)."""
    folder.mkdir(parents=True)
    for i in range(n):
        choice = {"normalise": i % 5, "word-counts": (i // 5) % 5}
        (folder / f"s{i:02d}.ipynb").write_text(submission("mix", choice))
    return folder
