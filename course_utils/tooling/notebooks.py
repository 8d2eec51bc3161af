"""The course's notebooks on disk: where they are, their paired files, badges, exercises.

The ``.py`` (jupytext percent format) is the reviewed source; the ``.ipynb`` is
generated from it without outputs, and masters in ``solutions/`` get
nbgrader's cell metadata on the way. Student notebooks in ``exercises/`` are
generated from the masters.

Each pair is a fixed point of jupytext itself: the ``.py`` starts with the
jupytext header (:data:`JUPYTEXT`, the pairing and the metadata filters) and has
jupytext's own blank-line layout, and the ``.ipynb`` carries the same
``jupytext`` metadata, so that saving in JupyterLab or ``jupytext --sync``
rewrites nothing (docs/AUTHORING.md).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils import config, lessons, student_version
from course_utils._files import write_atomic
from course_utils.tooling import cheatsheet, points_page
from course_utils.tooling.errors import CourseError

# The one place the repository's address lives (badges, hosted install, README).
REPOSITORY = "jax-pytorch-side-by-side/course"
DIST_NAME = "jax-pytorch-side-by-side"

# The jupytext section of every pair's notebook metadata: in the header of the .py and
# in the .ipynb, so that jupytext (the CLI, JupyterLab, the pre-commit hook) pairs and
# filters the same way wherever it runs. Without the version number the header does
# not change with the jupytext release; nbgrader's cell metadata stays in the .ipynb.
PY_FORMAT = "py:percent"
JUPYTEXT = {
    "cell_metadata_filter": "tags,-nbgrader",
    "formats": f"ipynb,{PY_FORMAT}",
    "notebook_metadata_filter": "-jupytext.text_representation.jupytext_version",
}
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def course_version() -> str:
    """The course's version, from ``pyproject.toml`` in a checkout, else the installed package."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.exists():
        import re

        m = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.MULTILINE)
        if m:
            return m.group(1)
    from importlib import metadata

    return metadata.version(DIST_NAME)


def release_tag() -> str:
    """The git tag students' badges and setup cells use: a release, never a moving branch."""
    return f"v{course_version()}"


def course_root(start: str | os.PathLike | None = None) -> Path:
    """The checkout holding ``notebooks/`` (see :func:`course_utils.config.course_root`)."""
    try:
        return config.course_root(start)
    except FileNotFoundError as err:
        raise CourseError(str(err)) from None


def kaggle_url(repository: str, ref: str, relpath: str) -> str:
    """Kaggle's "open in Kaggle" address of a notebook of ``repository`` at ``ref``
    (the badges' and the site's launch button)."""
    return (
        "https://kaggle.com/kernels/welcome?src="
        f"https://github.com/{repository}/blob/{ref}/{relpath}"
    )


def badges(relpath: str) -> str:
    """Markdown for the Colab, Kaggle and Binder badges of a notebook (path from the root).

    They open the notebook as it is in the tagged release the setup cell installs.
    """
    tag = release_tag()
    colab = (
        f"https://colab.research.google.com/github/{REPOSITORY}/blob/{tag}/{relpath}"
    )
    kaggle = kaggle_url(REPOSITORY, tag, relpath)
    binder = f"https://mybinder.org/v2/gh/{REPOSITORY}/{tag}?labpath={relpath}"
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab}) "
        f"[![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)]({kaggle}) "
        f"[![Binder](https://mybinder.org/badge_logo.svg)]({binder})"
    )


def colab_setup_source() -> str:
    """The setup cell every notebook starts with.

    Where ``course_utils`` is not importable (Colab, Kaggle, a bare Jupyter), it
    installs the tagged release of the course, then ``course_utils.hosted`` checks the
    runtime's versions and installs the dependencies around its own torch and jax.
    """
    spec = f"{DIST_NAME} @ git+https://github.com/{REPOSITORY}@{release_tag()}"
    return (
        "# Setup: where the course helpers are missing (Colab, Kaggle, a bare Jupyter),\n"
        "# install them, keeping the runtime's own torch and jax. Elsewhere: nothing to do.\n"
        "import importlib\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("course_utils") is None:\n'
        "    subprocess.run(\n"
        f'        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "{spec}"],\n'
        "        check=True,\n"
        "    )\n"
        "    importlib.invalidate_caches()\n"
        "    from course_utils import hosted\n"
        "\n"
        "    hosted.install_dependencies()"
    )


@dataclass(frozen=True)
class Pair:
    """One notebook: its ``.py`` source and ``.ipynb`` twin."""

    py: Path
    ipynb: Path
    kind: str  # "notebooks" or "solutions"

    @property
    def name(self) -> str:
        return self.py.stem


def pairs(root: Path) -> list[Pair]:
    """Every ``.py`` source in ``notebooks/`` and ``solutions/``."""
    out = []
    for kind in (lessons.LESSONS, lessons.MASTERS):
        for py in lessons.files(root, kind, ".py"):
            out.append(Pair(py, py.with_suffix(".ipynb"), kind))
    return out


def _cell_ids(
    nb: Any, previous: dict[tuple[str, str], list[str]] | None = None
) -> None:
    """Stable cell ids: a content hash (de-duplicated) so regeneration is stable.

    ``previous`` maps (type, source) to the ids those cells have in the ``.ipynb``
    now; a cell found there keeps its id, so that a cell edited in JupyterLab (which
    keeps the old id) does not make the pair drift.
    """
    previous = {k: list(v) for k, v in (previous or {}).items()}
    kept: list[str | None] = []
    for cell in nb.cells:
        ids = previous.get((cell.cell_type, _source(cell)))
        kept.append(ids.pop(0) if ids else None)
    taken = {i for i in kept if i}
    for cell, keep in zip(nb.cells, kept, strict=True):
        if keep:
            cell["id"] = keep
            continue
        base = hashlib.sha1((cell.cell_type + _source(cell)).encode()).hexdigest()[:8]
        new, n = base, 0
        while new in taken:
            n += 1
            new = f"{base}-{n}"
        taken.add(new)
        cell["id"] = new


def _source(cell: Any) -> str:
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def _previous_ids(ipynb: Path) -> dict[tuple[str, str], list[str]]:
    """The ids of the cells of an existing ``.ipynb``, by (type, source)."""
    import nbformat

    try:
        old = nbformat.reads(ipynb.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError, nbformat.reader.NotJSONError):
        return {}
    out: dict[tuple[str, str], list[str]] = {}
    for cell in old.cells:
        if cell.get("id"):
            out.setdefault((cell.cell_type, _source(cell)), []).append(cell["id"])
    return out


def _jupytext_metadata(nb: Any) -> dict[str, str]:
    """:data:`JUPYTEXT`, plus any cell-metadata key that jupytext added to the filter.

    Reading a ``.py``, jupytext adds each cell-metadata key it meets (``slideshow``,
    say) to ``cell_metadata_filter``; keeping them is what makes its next read a no-op.
    """
    found = nb.metadata.get("jupytext", {}).get("cell_metadata_filter", "")
    keys = [k for k in found.split(",") if k and k[0] not in "-+" and k != "all"]
    keys = ["tags", *(k for k in keys if k != "tags")]
    return {**JUPYTEXT, "cell_metadata_filter": ",".join([*keys, "-nbgrader"])}


def _normalise(nb: Any, jupytext_meta: dict[str, str] | None = None) -> Any:
    meta = _jupytext_metadata(nb) if jupytext_meta is None else jupytext_meta
    nb.metadata = {
        **({"jupytext": dict(meta)} if meta else {}),
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
    }
    nb.nbformat, nb.nbformat_minor = 4, 5
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        # jupytext's default layout only: what it writes back from the .ipynb
        cell.metadata.pop("lines_to_next_cell", None)
    _cell_ids(nb)
    return nb


def read_py(py: Path) -> Any:
    """A jupytext percent ``.py`` as a notebook node, without outputs."""
    import jupytext

    try:
        nb = jupytext.read(py, fmt=PY_FORMAT)
    except Exception as err:  # jupytext raises several types
        raise CourseError(
            f"{py}: cannot be read as a jupytext percent notebook: {err}"
        ) from err
    return _normalise(nb)


def render_py(py: Path) -> str:
    """The exact text jupytext writes for ``py``: its header and its blank-line layout."""
    import jupytext

    return jupytext.writes(read_py(py), fmt=PY_FORMAT)


def render(py: Path, kind: str, root: Path) -> str:
    """The exact text the ``.ipynb`` twin of ``py`` must contain.

    Cells whose type and source are unchanged keep the id they have in the
    existing ``.ipynb`` (see :func:`_cell_ids`).
    """
    import nbformat

    nb = read_py(py)
    if kind == "solutions":
        try:
            student_version.annotate(nb, str(py.relative_to(root)))
        except student_version.MarkerError as err:
            raise CourseError(str(err)) from err
    _cell_ids(nb, _previous_ids(py.with_suffix(".ipynb")))
    return nbformat.writes(nb) + "\n"


# The student notebook's last cell, the one place it says how to check and hand it in.
SUBMITTING = """\
## Checking and handing in

**Check** your notebook as the grader runs it: save it, then run these two lines in a cell
(in a terminal in the notebook's folder, run `course check {name}` instead):

```
import sys
!"{{sys.executable}}" -m course_utils.tooling.cli check {name}
```

It runs your exercise cells in a fresh kernel with the visible tests and prints what
passed; the hidden tests are run by your instructor.

**On Colab** the notebook is not a file in the runtime. **File → Download → Download
.ipynb** saves it, with your answers, on your computer: that file is what you hand in.
To check it on Colab first, upload it to the Files pane (the folder icon on the left)
and run the lines above, after the setup cell at the top. If the file has another name
(a copy saved in Drive is `Copy of {name}`), give that name, in quotes.

**Hand in** the `.ipynb` file itself (not a PDF or a link) the way your instructor asks.
Keep the first line `# EXERCISE: <id>` of each solution cell and the
`<!-- EXERCISE: <id> -->` line of each written answer: the grader finds your answers by
them, wherever the cells are."""


def submitting(name: str) -> str:
    """The student notebook's closing instructions for the notebook file ``name``."""
    return SUBMITTING.format(name=name)


def render_student(master_py: Path, root: Path) -> str:
    """The exact text of the student notebook generated from a master, ending with
    :func:`submitting`."""
    import nbformat

    rel = str(master_py.relative_to(root))
    nb = read_py(master_py)
    try:
        student_version.annotate(nb, rel)
        student = student_version.student_version(nb, rel)
    except student_version.MarkerError as err:
        raise CourseError(str(err)) from err
    # Unpaired: a student who saves in JupyterLab with jupytext gets no stray .py.
    student = _normalise(student, {})
    exercise_rel = f"exercises/{master_py.stem}.ipynb"
    first = student.cells[0]
    if first.cell_type == "markdown":
        src = first.source.replace(f"solutions/{master_py.stem}.ipynb", exercise_rel)
        first.source = src
    student.cells.append(
        nbformat.v4.new_markdown_cell(submitting(f"{master_py.stem}.ipynb"))
    )
    _cell_ids(student)
    return nbformat.writes(student) + "\n"


def _write_if_changed(path: Path, text: str) -> bool:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True


def _bring_up_to_date(
    root: Path, targets: Iterable[tuple[Path, str]], check: bool
) -> list[str]:
    """Write each ``(path, text)`` whose file differs (with ``check``, write nothing);
    the paths, relative to ``root``, that were written or would be."""
    changed = []
    for path, text in targets:
        if check:
            stale = not path.exists() or path.read_text(encoding="utf-8") != text
        else:
            stale = _write_if_changed(path, text)
        if stale:
            changed.append(str(path.relative_to(root)))
    return changed


def _generated(root: Path) -> Iterator[tuple[Path, str]]:
    """Each file ``course sync`` writes, with the text it should hold."""
    for pair in pairs(root):
        yield pair.py, render_py(pair.py)
        yield pair.ipynb, render(pair.py, pair.kind, root)
    yield root / cheatsheet.PAGE, cheatsheet.render(root)


def sync(root: Path, check: bool = False) -> list[str]:
    """Bring every pair to jupytext's fixed point; with ``check``, only report drift.

    The ``.py`` is rewritten as jupytext writes it (header, blank lines between
    cells; the code in the cells is never touched), then the ``.ipynb`` is
    regenerated from it; so is the cheat sheet, ``docs/CHEATSHEET.md``, from the
    lessons' Summary tables (:mod:`.cheatsheet`). Returns the paths written (or,
    with ``check``, the paths that drifted). Also reports an ``.ipynb`` in
    ``notebooks/``/``solutions/`` that has no ``.py``.
    """
    changed = _bring_up_to_date(root, _generated(root), check)
    for kind in (lessons.LESSONS, lessons.MASTERS):
        for nb in lessons.files(root, kind):
            if not nb.with_suffix(".py").exists():
                changed.append(f"{nb.relative_to(root)} (no .py source)")
    return changed


def twin_drift(ipynb: Path) -> Path | None:
    """The ``.py`` source beside ``ipynb`` when ``course sync`` would write ``ipynb``
    otherwise (its ``--check`` calls that drift), else None (in sync, or no ``.py``).
    A ``.py`` in ``notebooks/`` is a lesson's, any other a master's."""
    py = ipynb.with_suffix(".py")
    if not py.is_file():
        return None
    kind = "notebooks" if py.parent.name == "notebooks" else "solutions"
    try:
        current = ipynb.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return py
    return None if render(py, kind, py.parent.parent) == current else py


def build_exercises(root: Path, check: bool = False) -> list[str]:
    """Generate ``exercises/*.ipynb`` from ``solutions/*.py``, and the points page,
    ``docs/POINTS.md`` (:mod:`.points`); with ``check``, report drift."""
    out_dir = root / lessons.STUDENTS
    out_dir.mkdir(exist_ok=True)
    masters = lessons.files(root, lessons.MASTERS, ".py")
    expected = {out_dir / f"{m.stem}.ipynb" for m in masters}
    targets = [(out_dir / f"{m.stem}.ipynb", render_student(m, root)) for m in masters]
    targets.append((root / points_page.PAGE, points_page.render(root, read_py)))
    changed = _bring_up_to_date(root, targets, check)
    for stale in lessons.files(root, lessons.STUDENTS):
        if stale not in expected:
            rel = str(stale.relative_to(root))
            if check:
                changed.append(f"{rel} (no master in solutions/)")
            else:
                stale.unlink()
                changed.append(f"{rel} (removed: no master)")
    return changed


def all_notebooks(root: Path) -> list[Path]:
    """Every runnable ``.ipynb``: lessons, then masters, then student versions."""
    out: list[Path] = []
    for kind in lessons.FOLDERS:
        out += lessons.files(root, kind)
    return out


def resolve(root: Path, names: list[str]) -> list[Path]:
    """Turn names (``00``, ``00_welcome_and_setup``, a path) into lesson notebooks.

    With no names, every lesson in ``notebooks/``. Raises :class:`CourseError`
    listing the lessons for an unknown name.
    """
    found = lessons.files(root, lessons.LESSONS)
    if not names:
        return found
    everything = all_notebooks(root)
    out = []
    for name in names:
        p = Path(name)
        if not p.is_absolute() and not p.exists() and (root / p).exists():
            p = root / p
        if p.suffix == ".py" and p.with_suffix(".ipynb").exists():
            p = p.with_suffix(".ipynb")
        if p.suffix == ".ipynb" and p.exists():
            out.append(p.resolve())
            continue
        stem = p.stem if p.suffix in (".ipynb", ".py") else name
        matches = [
            nb for nb in found if nb.stem == stem or nb.stem.startswith(stem + "_")
        ]
        if not matches:
            matches = [nb for nb in everything if nb.stem == stem]
        if len(matches) == 1:
            out.append(matches[0])
            continue
        available = ", ".join(nb.stem for nb in found) or "(none)"
        if not matches:
            raise CourseError(f"unknown notebook {name!r}; lessons: {available}")
        raise CourseError(
            f"{name!r} matches several notebooks: {', '.join(str(m) for m in matches)}"
        )
    return out
