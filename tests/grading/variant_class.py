"""The generated class with per-student variants: the tiny master plus an exercise whose
constant comes from the student's variant, and students whose copies say which.

``write_master(folder)`` writes the master: the tiny master with a ``parameters`` cell
(``VARIANT = None``), the variant shown under it, and the ``scale`` exercise (multiply
by your variant's ``SCALE``; a visible and a hidden test that draw it again).
``write_class(folder, secret)`` writes one notebook per student of :data:`ROSTER`, each
their own copy (their variant in the ``parameters`` cell, as ``course release
--variants`` writes it) with the tiny master's exercises solved, and ``scale`` answered
as :data:`ROSTER` says.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

from course_utils import student_version
from course_utils.grading.inputs.seeds import variant
from course_utils.grading.integrations.release import with_variant
from tests.grading.helpers import MASTER, SUBS

SECRET = b"a test secret of 32 bytes, no more"
STREAM = 7  # the scale exercise's own stream of the variant
SCALE = f"SCALE = int(MY.rng({STREAM}).integers(2, 1000))  # your variant's scale"
DRAW = f"int(variants.current().rng({STREAM}).integers(2, 1000))"
CELLS = [
    ("code", "VARIANT = None  # your own copy names your variant", ["parameters"]),
    ("code", "from course_utils import variants\n\nMY = variants.use(VARIANT)\nMY", []),
    ("markdown", "## Scale\n\nMultiply each number by your variant's `SCALE`.", []),
    ("code", SCALE, []),
    (
        "code",
        "# EXERCISE: scale\ndef scaled(xs):\n"
        '    """Each x times SCALE."""\n'
        "    ### BEGIN SOLUTION\n    return [SCALE * x for x in xs]\n    ### END SOLUTION",
        [],
    ),
    (
        "code",
        f"# TESTS: scale points=1\nwant = {DRAW}  # your variant's, drawn again\n"
        'check("scale", lambda: scaled([1, 2]), [want, 2 * want], '
        'hint="multiply by SCALE, your variant\'s")',
        [],
    ),
    (
        "code",
        "# HIDDEN TESTS: scale points=2\n### BEGIN HIDDEN TESTS\n"
        f"k = {DRAW}\nassert scaled([-3, 0, 5]) == [-3 * k, 0, 5 * k], 'the scale'\n"
        "### END HIDDEN TESTS",
        [],
    ),
]
SOLVED = "# EXERCISE: scale\ndef scaled(xs):\n    return [SCALE * x for x in xs]"
# The tiny master's 8 points, and scale's 3.
TOTAL = 11


def scale_of(student: str, secret: bytes = SECRET) -> int:
    """The scale of ``student``'s variant (``secret=None``: the default variant's)."""
    import numpy as np

    mine = variant(secret, student).rng(STREAM) if secret else np.random.default_rng(7)
    return int(mine.integers(2, 1000))


def hard_coded(scale: int) -> str:
    """A scale answer with someone's number typed in."""
    return f"# EXERCISE: scale\ndef scaled(xs):\n    return [{scale} * x for x in xs]"


def write_master(folder: Path) -> Path:
    """The tiny master with the variant cells after its setup cell; returns its path."""
    nb = nbformat.read(MASTER, as_version=4)
    added = []
    for kind, source, tags in CELLS:
        cell = new_code_cell(source) if kind == "code" else new_markdown_cell(source)
        if tags:
            cell.metadata["tags"] = tags
        added.append(cell)
    nb.cells[2:2] = added
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    student_version.annotate(nb, "variant_master.ipynb")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "variant_master.ipynb"
    nbformat.write(nb, path)
    return path


def student_copy(master: Path, student: str, secret: bytes = SECRET) -> str:
    """``student``'s own copy, as ``course release --variants`` writes it."""
    nb = student_version.student_version(
        nbformat.read(master, as_version=4), master.name
    )
    return with_variant(nbformat.writes(nb), student, variant(secret, student).seed)


def answered(text: str, scale_answer: str) -> nbformat.NotebookNode:
    """A copy with the tiny master's exercises solved as the fixture's full student did,
    and ``scale_answer`` in the scale cell."""
    nb = nbformat.reads(text, as_version=4)
    solved = nbformat.read(SUBS / "full.ipynb", as_version=4)
    answers = {
        student_version.exercise_id(c): c.source
        for c in solved.cells
        if c.cell_type == "code" and student_version.exercise_id(c)
    }
    answers["scale"] = scale_answer
    for cell in nb.cells:
        ex = student_version.exercise_id(cell)
        if cell.cell_type == "code" and ex in answers:
            cell.source = answers[ex]
    return nb


# student -> what their notebook is:
ROSTER = {
    "ada": "correct",  # their own copy, the scale from their variant
    "bob": "correct",
    "cy": "ada's numbers",  # their own copy, ada's scale typed in
    "dee": "ada's notebook",  # ada's copy (VARIANT line and metadata), ada's numbers
    "eve": "forged seed",  # their copy with another seed, correct code
}
EXPECTED = {"ada": TOTAL, "bob": TOTAL, "cy": 8, "dee": 8, "eve": TOTAL}


def write_class(folder: Path, master: Path, secret: bytes = SECRET) -> Path:
    """The class of :data:`ROSTER` in ``folder``; returns it."""
    folder.mkdir(parents=True)
    ada = student_copy(master, "ada", secret)
    for student, kind in ROSTER.items():
        if kind == "correct":
            nb = answered(student_copy(master, student, secret), SOLVED)
        elif kind == "ada's numbers":
            own = student_copy(master, student, secret)
            nb = answered(own, hard_coded(scale_of("ada", secret)))
        elif kind == "ada's notebook":
            nb = answered(ada, hard_coded(scale_of("ada", secret)))
            nb.metadata["course"] = {"variant": variant(secret, "ada").as_dict()}
        else:
            own = student_copy(master, student, secret)
            forged = variant(secret, student).seed
            nb = answered(own.replace(forged, "0123456789abcdef"), SOLVED)
        nbformat.write(copy.deepcopy(nb), folder / f"{student}.ipynb")
    return folder
