"""Paired files, generated exercises, and the conventions every notebook follows."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from course_utils.tooling import cheatsheet, notebooks, points_page
from course_utils.tooling.errors import CourseError

ROOT = Path(__file__).resolve().parents[2]
PAIRS = notebooks.pairs(ROOT)
IDS = [p.name for p in PAIRS]


def test_there_are_lessons_and_masters():
    kinds = {p.kind for p in PAIRS}
    assert kinds == {"notebooks", "solutions"}
    assert (ROOT / "notebooks" / "00_welcome_and_setup.py").exists()


def test_every_ipynb_matches_its_py_source():
    drift = notebooks.sync(ROOT, check=True)
    assert drift == [], f"run `course sync`: {drift}"


@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_committed_without_outputs(pair):
    nb = json.loads(pair.ipynb.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("pair", PAIRS, ids=IDS)
def test_title_badges_setup_and_parameters(pair):
    nb = nbformat.read(pair.ipynb, as_version=4)
    rel = str(pair.ipynb.relative_to(ROOT))
    title = nb.cells[0]
    assert title.cell_type == "markdown" and title.source.startswith("# ")
    assert notebooks.badges(rel) in title.source, f"{rel}: badges must point at {rel}"
    assert nb.cells[1].source == notebooks.colab_setup_source(), (
        f"{rel}: setup cell differs"
    )
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{rel}: needs exactly one parameters-tagged cell"
    assert "SMOKE = None" in params[0].source and "SIZES" in params[0].source


def _copy_course(tmp_path: Path) -> Path:
    """Lessons 00 and 01 of the course: their pairs, masters and student notebooks.
    What sync and build-exercises do with two lessons they do with all of them (which
    test_every_ipynb_matches_its_py_source and, in tests/test_student_version.py,
    test_exercises_are_generated_from_solutions check in the repository itself)."""
    root = tmp_path / "course"
    for d in ("notebooks", "solutions", "exercises"):
        (root / d).mkdir(parents=True)
        for path in sorted((ROOT / d).glob("0[01]_*.*")):
            shutil.copy2(path, root / d / path.name)
    assert len(notebooks.pairs(root)) == 4
    (root / "docs").mkdir()  # the copy's own pages: its lessons' and masters'
    (root / cheatsheet.PAGE).write_text(cheatsheet.render(root), encoding="utf-8")
    (root / points_page.PAGE).write_text(
        points_page.render(root, notebooks.read_py), encoding="utf-8"
    )
    return root


def test_sync_check_names_the_drifted_file(tmp_path):
    root = _copy_course(tmp_path)
    py = root / "notebooks" / "00_welcome_and_setup.py"
    py.write_text(py.read_text() + "\n# %%\n1 + 1\n")
    assert notebooks.sync(root, check=True) == ["notebooks/00_welcome_and_setup.ipynb"]
    assert notebooks.sync(root) == ["notebooks/00_welcome_and_setup.ipynb"]
    assert notebooks.sync(root, check=True) == []


def test_orphan_and_stale_files_are_reported(tmp_path):
    root = _copy_course(tmp_path)
    shutil.copy(
        root / "notebooks" / "00_welcome_and_setup.ipynb",
        root / "notebooks" / "99_x.ipynb",
    )
    assert "notebooks/99_x.ipynb (no .py source)" in notebooks.sync(root, check=True)
    (root / "exercises" / "old.ipynb").write_text("{}")
    assert "exercises/old.ipynb (no master in solutions/)" in notebooks.build_exercises(
        root, check=True
    )


def test_bad_marker_in_master_names_file_and_cell(tmp_path):
    root = _copy_course(tmp_path)
    master = root / "solutions" / "00_welcome_exercises.py"
    master.write_text(master.read_text().replace("    ### END SOLUTION\n", "", 1))
    with pytest.raises(
        CourseError,
        match=r"solutions/00_welcome_exercises.py: cell \d+: .*has no '### END SOLUTION'",
    ):
        notebooks.build_exercises(root)


def test_resolve_names():
    assert notebooks.resolve(ROOT, ["00"])[0].name == "00_welcome_and_setup.ipynb"
    assert (
        notebooks.resolve(ROOT, ["00_welcome_and_setup"])[0].name
        == "00_welcome_and_setup.ipynb"
    )
    master = notebooks.resolve(ROOT, ["solutions/00_welcome_exercises.ipynb"])[0]
    assert master.parent.name == "solutions"
    with pytest.raises(CourseError, match="matches several notebooks"):
        notebooks.resolve(ROOT, ["00_welcome_exercises"])
    with pytest.raises(
        CourseError, match="unknown notebook 'nope'; lessons: 00_welcome_and_setup"
    ):
        notebooks.resolve(ROOT, ["nope"])


def test_cell_ids_are_content_hashes_unless_the_ipynb_has_the_cell():
    cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("edited in JupyterLab"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    notebooks._cell_ids(nb)
    fresh = [c.id for c in nb.cells]
    assert fresh[2] == fresh[1] + "-1" and len(set(fresh)) == 4
    notebooks._cell_ids(nb)
    assert [c.id for c in nb.cells] == fresh  # regeneration is stable
    previous = {("code", "edited in JupyterLab"): ["old-id"], ("code", "x = 1"): ["a"]}
    notebooks._cell_ids(nb, previous)
    assert [c.id for c in nb.cells] == [fresh[0], "a", fresh[1], "old-id"]


def test_sync_puts_a_py_into_jupytexts_layout(tmp_path):
    root = _copy_course(tmp_path)
    py = root / "notebooks" / "00_welcome_and_setup.py"
    committed = py.read_text()
    head, cells = committed.split("# %%", 1)  # (a blank line more after the header
    cells = cells.replace("\n\n# %%", "\n\n\n# %%", 3)  # would be an empty cell)
    py.write_text(head + "# %%" + cells)
    assert notebooks.sync(root, check=True) == ["notebooks/00_welcome_and_setup.py"]
    assert notebooks.sync(root) == ["notebooks/00_welcome_and_setup.py"]
    assert py.read_text() == committed
    assert notebooks.render_py(py) == committed
