"""``course release OUT``: the course's student-facing tree holds no solution and no
hidden test of any master (scanned line by line), and the scan finds planted ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.grading.integrations import release
from course_utils.tooling.cli import main
from tests.grading.helpers import MASTER, ROOT

MASTERS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    assert main(["release", str(out), "--root", str(ROOT)]) == 0
    return out


def _answer_lines(master: Path) -> set[str]:
    """Lines inside the master's solution markers and its hidden test cells."""
    lines, inside = set(), False
    for cell in json.loads(master.read_text())["cells"]:
        text = "".join(cell["source"])
        hidden = re.match(r"#\s*HIDDEN TESTS:", text) is not None
        for line in map(str.strip, text.splitlines()):
            if "BEGIN SOLUTION" in line or "END SOLUTION" in line:
                inside = "BEGIN" in line
            elif inside or hidden:
                lines.add(line)
    return lines


def _taught(released: Path) -> set[str]:
    """Lines the lessons and the student exercises show anyway."""
    files = [*(ROOT / "notebooks").glob("*.py"), *(released / "exercises").glob("*")]
    return {line for f in files for line in release.file_lines(f)}


def test_the_tree_is_lessons_exercises_and_the_library(released):
    tops = {p.name for p in released.iterdir()}
    assert {"notebooks", "exercises", "course_utils", "README.md"} <= tops
    assert not tops & {"solutions", "tests", "benchmarks", ".ci", ".github", "build"}
    assert not (released / "docs" / "GRADING.md").exists()
    assert sorted(p.stem for p in (released / "exercises").glob("*.ipynb")) == [
        m.stem for m in MASTERS
    ]
    assert (
        released / "course_utils" / "grading" / "batch" / "grader.py"
    ).exists()  # check


def test_the_released_library_imports_on_its_own(released):
    code = "import course_utils.grading.batch.grader, course_utils.exercises, course_utils.parity"
    code += "; import course_utils; print(course_utils.__file__)"
    env = dict(os.environ, PYTHONPATH=str(released))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=released,
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(released / "course_utils" / "__init__.py")


def test_no_line_of_any_solution_or_hidden_test_is_in_the_tree(released):
    taught = _taught(released)
    secret = {
        line
        for m in MASTERS
        for line in _answer_lines(m)
        if len(line) >= release.SHORT and line not in taught
    }
    assert len(secret) > 100  # every master has answers and hidden tests to look for
    found = []
    for path in (p for p in released.rglob("*") if p.is_file()):
        if path.suffix == ".py" and path.parts[len(released.parts)] == "course_utils":
            continue  # the library: whole regions only, below
        text = path.read_text(errors="replace")
        lines = set(map(str.strip, text.splitlines())) | set(release.file_lines(path))
        found += [f"{path.relative_to(released)}: {s}" for s in secret & lines]
    assert not found, found[:20]
    assert release.leaks(released, MASTERS, taught) == []


def test_the_scan_finds_planted_answers(tmp_path):
    tree = tmp_path / "tree"
    (tree / "course_utils").mkdir(parents=True)
    (tree / "README.md").write_text('x\n    return f"hello {name}"  \n')
    (tree / "course_utils" / "planted.py").write_text(
        "def square(x):\n    return x * x\n# ### BEGIN SOLUTION\n"
    )
    nb = {"cells": [{"cell_type": "code", "source": "print(1)", "outputs": [
        {"output_type": "stream", "text": ["for x, want in SECRET_HIDDEN_ORACLE_7:\n"]}
    ]}]}  # fmt: skip
    (tree / "out.ipynb").write_text(json.dumps(nb))
    found = release.leaks(tree, [MASTER], public=set())
    assert any(f.startswith("README.md:2: solution line of tiny_master") for f in found)
    assert any(f.startswith("out.ipynb:2: hidden test line") for f in found), found
    assert not any(
        "planted.py:2" in f for f in found
    )  # one line in the library: an idiom
    (tree / "course_utils" / "planted.py").write_text(
        '"""Sum."""\n\n    ### BEGIN SOLUTION\n\n    return sum(xs)\n'
        "SECRET_HIDDEN_ORACLE_7 = [(-2, 4), (0, 0), (1.5, 2.25)]\n"
        "for x, want in SECRET_HIDDEN_ORACLE_7:\n"
        "    assert square(x) == want, f'square({x}) should be {want}'\n"
    )
    found = release.leaks(tree, [MASTER], public=set())
    assert "course_utils/planted.py:3: marker '### BEGIN SOLUTION'" in found
    assert any("planted.py: a whole hidden test of tiny_master" in f for f in found)


def test_release_refuses_a_folder_in_use(tmp_path, capsys):
    (tmp_path / "kept.txt").write_text("mine")
    assert main(["release", str(tmp_path), "--root", str(ROOT)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["release", str(tmp_path / "new"), "--root", str(tmp_path)]) == 2
    assert "no masters" in capsys.readouterr().err
