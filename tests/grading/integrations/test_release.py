"""``course release OUT``: the course's student-facing tree holds no solution and no
hidden test of any master (scanned line by line), and the scan finds planted ones."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.cli import main
from course_utils.grading.inputs import names
from course_utils.grading.integrations import release
from tests.grading.helpers import MASTER, ROOT

MASTERS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "course"
    argv = ["release", str(out), "--root", str(ROOT), "--repo", f"{REPO}@{TAG}"]
    assert main(argv) == 0
    return out


REPO, TAG = "a-teacher/course-2027", "term-1"  # the instructor's own repository


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
    files = [
        *(ROOT / "notebooks").glob("*.py"),
        *(released / "exercises").glob("*.ipynb"),
    ]
    return {line for f in files for line in release.file_lines(f)}


def test_the_tree_is_lessons_exercises_and_the_library(released):
    tops = {p.name for p in released.iterdir()}
    assert {"notebooks", "exercises", "course_utils", "README.md"} <= tops
    assert not tops & {"solutions", "tests", "benchmarks", ".ci", ".github", "build"}
    assert not (released / "docs" / "GRADING.md").exists()
    assert not (released / "docs" / "TEACHING.md").exists()
    assert not (released / "docs" / "POINTS.md").exists()  # it names the masters
    assert sorted(p.stem for p in (released / "exercises").glob("*.ipynb")) == [
        m.stem for m in MASTERS
    ]
    assert (
        released / "course_utils" / "grading" / "batch" / "grader.py"
    ).exists()  # check


def test_badges_and_install_lines_point_at_the_instructors_repository(released):
    from course_utils.tooling.notebooks import REPOSITORY

    for rel in ("notebooks/00_welcome_and_setup.ipynb", "exercises/00_welcome_exercises.ipynb",
                "exercises/zh/00_welcome_exercises.ipynb"):  # fmt: skip
        text = (released / rel).read_text()
        assert f"colab.research.google.com/github/{REPO}/blob/{TAG}/{rel}" in text, rel
        assert f"mybinder.org/v2/gh/{REPO}/{TAG}?labpath=" in text, rel
        assert f"git+https://github.com/{REPO}@{TAG}" in text, rel
    upstream = [
        p.relative_to(released).as_posix()
        for p in released.rglob("*")
        if p.is_file() and REPOSITORY in p.read_text(errors="replace")
    ]
    assert upstream == [], upstream


def test_a_class_released_with_repo_has_no_edited_cell(released):
    """Every untouched copy of the release, its setup cell pointed at the instructor's
    repository, matches its master (``course grade``, ``course check``): no note of
    an added or edited cell."""
    from course_utils.grading.inputs.ipynb import read_cells
    from course_utils.grading.inputs.master import load_master
    from course_utils.grading.inputs.submissions import match

    for master in MASTERS:
        copy = read_cells(released / "exercises" / master.name)
        notes = [n for n in match(load_master(master), copy).notes if "edited" in n]
        assert notes == [], master.name


def test_the_chinese_edition_ships_and_no_link_is_broken(released):
    assert (released / "README.zh.md").is_file()
    zh = sorted(
        f.rsplit("/", 1)[1]
        for f in release.tracked_files(ROOT)
        if f.startswith("exercises/zh/") and f.endswith(".ipynb")
    )
    assert (
        zh and sorted(p.name for p in (released / "exercises" / "zh").glob("*")) == zh
    )
    broken = []
    for md in released.rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            if re.match(r"[a-z]+:|#", target):
                continue
            if not (md.parent / target.split("#")[0]).exists():
                broken.append(f"{md.relative_to(released)}: {target}")
    assert broken == [], broken
    readme = (released / "README.md").read_text()
    assert "](docs/GRADING.md" not in readme and "](solutions/" not in readme


def test_a_bad_repo_is_named(tmp_path, capsys):
    argv = [
        "release",
        str(tmp_path / "out"),
        "--root",
        str(ROOT),
        "--repo",
        "just-a-name",
    ]
    assert main(argv) == 2
    assert "--repo 'just-a-name'" in capsys.readouterr().err


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


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "variant-secret"
    path.write_text("a course secret of thirty-two bytes\n")
    return path


def test_each_student_gets_their_own_copy_with_their_variant(tmp_path, capsys):
    from course_utils import variants
    from course_utils.grading.inputs import seeds
    from course_utils.tooling import notebooks

    roster = tmp_path / "roster.txt"
    roster.write_text("# the class\nada\n\nbob@uni.example\n")
    out, secret = tmp_path / "copies", _secret(tmp_path)
    cmd = ["release", str(out), "--root", str(ROOT), "--variants", str(roster)]
    assert main([*cmd, "--variant-secret", str(secret)]) == 0
    said = capsys.readouterr().out
    assert "for each of 2 students" in said and "variants.csv" in said
    key = secret.read_bytes().strip()
    folders = {"ada": "ada", "bob@uni.example": names.folder_name("bob@uni.example")}
    rows = list(csv.reader((out / "variants.csv").open()))
    assert rows == [["student", "folder", "seed"]] + [
        [sid, folder, seeds.seed(key, sid)] for sid, folder in folders.items()
    ]
    name = "00_welcome_exercises.ipynb"  # the one master with variants so far
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.ipynb")) == [
        f"{folder}/{name}" for folder in sorted(folders.values())
    ]
    course_copy = json.loads((ROOT / "exercises" / name).read_text())
    for sid, folder in folders.items():
        nb = json.loads((out / folder / name).read_text())
        mine = variants.claimed(nb["cells"])
        assert mine == seeds.variant(key, sid)
        changed = [
            (a["source"], b["source"])
            for a, b in zip(course_copy["cells"], nb["cells"], strict=True)
            if a["source"] != b["source"]
        ]
        # the title cell's badges, which open the course's copy, and the variant line
        assert len(changed) == 2 and "VARIANT = None" in "".join(changed[1][0])
        assert "[![Open In Colab]" in "".join(changed[0][0])
        assert "".join(changed[0][1]) == "".join(changed[0][0]).replace(
            notebooks.badges(f"exercises/{name}"), release.OWN_COPY
        )
    masters = sorted((ROOT / "solutions").glob("*.ipynb"))
    public = {
        line for p in ROOT.glob("notebooks/*.py") for line in release.file_lines(p)
    }
    public |= set(release.file_lines(ROOT / "exercises" / name))
    assert release.leaks(out, masters, public) == []


@pytest.mark.parametrize(
    ("roster", "words"),
    [
        ("ada\nada\n", "line 2: 'ada' twice (line 1)"),
        ("ada\n../bob\n", "line 2: '../bob' cannot be a submission's file or folder"),
        ("# nobody\n", "no student ids in it"),
        ("submission,id\nada,1\nada,2\n", "line 3: 'ada' twice (line 2)"),
    ],
)
def test_a_bad_roster_is_named_with_its_line(tmp_path, capsys, roster, words):
    path = tmp_path / "roster"
    path.write_text(roster)
    cmd = ["release", str(tmp_path / "out"), "--root", str(ROOT), "--variants"]
    assert main([*cmd, str(path), "--variant-secret", str(_secret(tmp_path))]) == 2
    assert f"--variants {path}: {words}" in capsys.readouterr().err


def test_a_gradebook_roster_gives_its_submission_column(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("Submission,ID,Name\nada,1001,Ada L\nbob,1002,Bob\n,1003,none\n")
    assert release.read_ids(path) == ["ada", "bob"]


def test_variants_need_the_secret_and_the_secret_needs_variants(
    tmp_path, capsys, monkeypatch
):
    from course_utils.grading.inputs import seeds

    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    roster = tmp_path / "roster"
    roster.write_text("ada\n")
    base = ["release", str(tmp_path / "out"), "--root", str(ROOT)]
    assert main([*base, "--variants", str(roster)]) == 2
    assert "--variants: give --variant-secret FILE" in capsys.readouterr().err
    assert main([*base, "--variant-secret", str(_secret(tmp_path))]) == 2
    assert "--variant-secret: only with --variants ROSTER" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_each_students_copy_points_at_the_repo_given_and_opens_itself(tmp_path, capsys):
    """A copy's install line points at the release; its badges, which would open the
    release's notebook (the default variant, not the student's), are one line telling
    the student to open this file."""
    from course_utils.tooling.notebooks import REPOSITORY

    roster = tmp_path / "roster.txt"
    roster.write_text("ada\nbob\n")
    out, secret = tmp_path / "copies", _secret(tmp_path)
    cmd = ["release", str(out), "--root", str(ROOT), "--variants", str(roster)]
    cmd += ["--variant-secret", str(secret), "--repo", f"{REPO}@{TAG}"]
    assert main(cmd) == 0
    said = capsys.readouterr().out
    assert f"install lines point at {REPO}@{TAG}" in said and "badges and" not in said
    assert "each copy's badges are a line telling the student to open it" in said
    for sid in ("ada", "bob"):
        text = (out / sid / "00_welcome_exercises.ipynb").read_text()
        for address in ("colab.research.google.com/github", "kaggle.com/kernels",
                        "mybinder.org"):  # fmt: skip
            assert address not in text, address
        title = "".join(json.loads(text)["cells"][0]["source"])
        assert f"\n\n{release.OWN_COPY}\n\n" in title, title
        assert "Upload it to Colab" in release.OWN_COPY
        assert f"git+https://github.com/{REPO}@{TAG}" in text
        assert REPOSITORY not in text
        assert "'student': '" + sid in text  # the variant line survives the rewrite


def test_copies_without_a_repo_say_they_point_upstream(tmp_path, capsys):
    roster = tmp_path / "roster.txt"
    roster.write_text("ada\n")
    out, secret = tmp_path / "copies", _secret(tmp_path)
    cmd = ["release", str(out), "--root", str(ROOT), "--variants", str(roster)]
    assert main([*cmd, "--variant-secret", str(secret)]) == 0
    assert "note: the setup cells' install line points at" in capsys.readouterr().out
    bad = ["release", str(tmp_path / "o2"), "--root", str(ROOT), "--repo", "x"]
    bad += ["--variants", str(roster), "--variant-secret", str(secret)]
    assert main(bad) == 2
    assert "--repo 'x'" in capsys.readouterr().err
    assert not (tmp_path / "o2").exists()
