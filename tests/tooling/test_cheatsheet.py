"""The cheat sheet gathers every lesson's Summary table, and sync keeps it in step."""

import re
import shutil
from pathlib import Path

from course_utils import lessons
from course_utils.tooling import cheatsheet, notebooks

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / cheatsheet.PAGE).read_text(encoding="utf-8")


def test_every_lesson_has_its_summary_table_on_the_page_in_order():
    sections = re.findall(r"^## \[(\d\d) · (.+)\]\(\.\./notebooks/(.+)\)$", PAGE, re.M)
    every = lessons.lessons(ROOT)
    assert len(every) >= 13
    assert sections == [(x.number, x.title, x.notebook.name) for x in every]
    for lesson in every:
        table = cheatsheet.summary_table(lesson.source.read_text(encoding="utf-8"))
        assert len(table) >= 4, lesson.name  # a header, its rule, and rows
        assert "\n".join(table) in PAGE, lesson.name
    rows = [line for line in PAGE.splitlines() if line.startswith("| ")]
    assert len(rows) >= 100  # the course's vocabulary, not a stub


def test_the_table_is_the_first_one_under_the_summary_heading():
    source = "\n".join(
        [
            "# | before | the heading |",
            "# ## Summary",
            "#",
            "# Some words.",
            "#",
            "# | task | PyTorch | JAX |",
            "# |---|---|---|",
            "# | grad | `backward()` | `jax.grad` |",
            "#",
            "# | a second | table |",
            "",
            "# %%",
        ]
    )
    assert cheatsheet.summary_table(source) == [
        "| task | PyTorch | JAX |",
        "|---|---|---|",
        "| grad | `backward()` | `jax.grad` |",
    ]
    assert cheatsheet.summary_table("# ## Summary\n#\n# No table.\n\n# %%\n") == []
    assert cheatsheet.summary_table("# | task |\n# |---|\n") == []


def test_sync_names_a_stale_cheat_sheet_and_rewrites_it(tmp_path):
    root = tmp_path / "course"
    (root / "notebooks").mkdir(parents=True)
    for path in sorted((ROOT / "notebooks").glob("0[01]_*.*")):
        shutil.copy2(path, root / "notebooks" / path.name)
    assert notebooks.sync(root, check=True) == [cheatsheet.PAGE]  # none yet
    assert notebooks.sync(root) == [cheatsheet.PAGE]
    page = (root / cheatsheet.PAGE).read_text(encoding="utf-8")
    assert (
        page.count("\n## [") == 2
        and "](../notebooks/01_design_philosophy.ipynb)" in page
    )

    py = root / "notebooks" / "01_design_philosophy.py"
    text = py.read_text(encoding="utf-8")
    row = "# | seed | `torch.manual_seed(0)`"
    assert row in text
    py.write_text(text.replace(row, "# | seed a run | `torch.manual_seed(0)`"))
    assert cheatsheet.PAGE in notebooks.sync(root, check=True)
    notebooks.sync(root)
    assert "| seed a run | `torch.manual_seed(0)`" in (
        root / cheatsheet.PAGE
    ).read_text(encoding="utf-8")
    assert notebooks.sync(root, check=True) == []
