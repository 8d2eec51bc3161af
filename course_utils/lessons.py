"""The course's lessons: the one module that reads the notebook folders.

A lesson ``NN_topic`` is ``notebooks/NN_topic.py`` (the reviewed source) and its
``.ipynb``; its title is the first heading, ``# NN · Title``. Its exercises' master is
the one ``solutions/NN_*.py`` of its number (``00_welcome_exercises.py``, with its
``.ipynb``), the student notebook made from it the ``exercises/`` notebook of the same
name; the Chinese edition's twins lie in ``notebooks/zh/`` and ``exercises/zh/`` under the
English names. A notebook's number is the part of its name before the first ``_``.

Every module that lists lessons, masters or student notebooks asks here, for the
checkout at ``root`` (or a test's small course), so that the folders' names and what
counts as a notebook are written once (``tests/test_lesson_manifest.py``). The lessons'
order is their numbers; the syllabus, each lesson with its topics, is the README's
*Curriculum* table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LESSONS = "notebooks"  # the lessons' sources and notebooks
MASTERS = "solutions"  # the exercise masters, with solutions and hidden tests
STUDENTS = "exercises"  # the student notebooks, generated from the masters
FOLDERS = (LESSONS, MASTERS, STUDENTS)
CHINESE = "zh"  # the Chinese edition's subfolder (notebooks/zh/, exercises/zh/)
TITLE_MARK = "# # "  # a jupytext percent markdown cell's top heading


def files(
    root: Path,
    folder: str,
    suffix: str = ".ipynb",
    *,
    number: str = "",
    language: str = "",
) -> list[Path]:
    """The files of one of :data:`FOLDERS`, sorted by name: ``suffix`` ``".py"`` for the
    sources, ``""`` for every file; ``number`` (``"03"``, or a pattern such as
    ``"[0-9][0-9]"``) keeps the notebooks of that number; ``language`` reads the edition's
    subfolder (``notebooks/zh/``)."""
    if folder not in FOLDERS:
        raise ValueError(f"{folder!r} is not one of the notebook folders {FOLDERS}")
    where = Path(root) / folder / language if language else Path(root) / folder
    pattern = f"{number}_*{suffix}" if number else f"*{suffix}"
    return sorted(p for p in where.glob(pattern) if p.is_file())


def number(name: str) -> str:
    """``"03"`` for ``03_jit_compilation`` or ``03_jit_compilation_exercises.ipynb``
    (a name without a leading number is its own)."""
    head = Path(name).name.split("_", 1)[0]
    return head if head.isdigit() else Path(name).stem


def numbered(
    root: Path, folder: str, lesson: str, suffix: str = ".ipynb"
) -> Path | None:
    """The one notebook of ``folder`` with the number of ``lesson`` (a name or a number),
    or ``None`` where there is none or more than one."""
    found = files(root, folder, suffix, number=number(lesson))
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class Lesson:
    """One lesson of the checkout at ``root``, by its name (``03_jit_compilation``)."""

    root: Path
    name: str

    @property
    def number(self) -> str:
        return number(self.name)

    @property
    def source(self) -> Path:
        """``notebooks/NN_topic.py``."""
        return self.root / LESSONS / f"{self.name}.py"

    @property
    def notebook(self) -> Path:
        """``notebooks/NN_topic.ipynb``."""
        return self.root / LESSONS / f"{self.name}.ipynb"

    @property
    def title(self) -> str:
        """The first heading of the source, without its number: ``JIT compilation``."""
        try:
            text = self.source.read_text(encoding="utf-8")
        except OSError:
            return ""
        for line in text.splitlines():
            if line.startswith(TITLE_MARK):
                heading = line[len(TITLE_MARK) :].strip()
                head, sep, rest = heading.partition(" · ")
                return rest.strip() if sep and head == self.number else heading
        return ""

    @property
    def master(self) -> Path | None:
        """``solutions/NN_*.py`` (``03_jit_compilation_exercises.py``), where there is one."""
        return numbered(self.root, MASTERS, self.name, ".py")

    @property
    def student(self) -> Path | None:
        """``exercises/NN_*.ipynb``, the student notebook, where there is one."""
        return numbered(self.root, STUDENTS, self.name)

    def twin(self, language: str = CHINESE) -> Path:
        """The lesson's notebook in the ``language`` edition (it may not exist yet)."""
        return self.root / LESSONS / language / f"{self.name}.ipynb"

    def student_twin(self, language: str = CHINESE) -> Path | None:
        """The student notebook's twin in the ``language`` edition, where there is a
        student notebook (the twin may not exist yet)."""
        student = self.student
        return None if student is None else student.parent / language / student.name


def lessons(root: Path) -> list[Lesson]:
    """Every lesson of the checkout at ``root``, in order: each name that has a source
    or a notebook in ``notebooks/``."""
    names = {p.stem for p in files(root, LESSONS)} | {
        p.stem for p in files(root, LESSONS, ".py")
    }
    return [Lesson(Path(root), name) for name in sorted(names)]
