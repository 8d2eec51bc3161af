"""The version sets (constraints/), the Makefile that installs them, the matrix workflow."""

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints"
SETS = ("known-good", "latest", "colab", "floors")


def _load_generate():
    spec = importlib.util.spec_from_file_location(
        "generate", CONSTRAINTS / "generate.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generate()


def pins(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def pinned(path: Path) -> dict[str, str]:
    out = {}
    for line in pins(path):
        req = Requirement(line)
        assert len(req.specifier) == 1 and next(iter(req.specifier)).operator == "==", (
            line
        )
        out[canonicalize_name(req.name)] = next(iter(req.specifier)).version
    return out


# ---- floors -----------------------------------------------------------------------


def test_floors_file_matches_pyproject():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert pins(CONSTRAINTS / "floors.txt") == generate.floors(pyproject), (
        "constraints/floors.txt is out of date: run `make constraints`"
    )
    meta = generate.meta((CONSTRAINTS / "floors.txt").read_text())
    assert meta["python"] == generate.python_floor(pyproject)
    torch_floor = next(
        r for r in generate.requirements(pyproject) if Requirement(r).name == "torch"
    )
    assert meta["torch"] == next(iter(Requirement(torch_floor).specifier)).version


def test_the_floors_pytest_xdist_knows_the_makefiles_options():
    # make test hands whole files to the workers in the collection's order with
    # --no-loadscope-reorder, which pytest-xdist has from 3.8 on; an older floor fails
    # the floors set before it collects anything.
    makefile = (ROOT / "Makefile").read_text()
    floor = Version(pinned(CONSTRAINTS / "floors.txt")["pytest-xdist"])
    if "--no-loadscope-reorder" in makefile:
        assert floor >= Version("3.8"), floor


def test_floors_from_a_pyproject():
    pyproject = """
[project]
requires-python = ">=3.11"
dependencies = ["jax>=0.8", "flax[all] >= 0.12, <2", "numpy", "psutil==5.9"]
[project.optional-dependencies]
dev = ["pytest>=8.3", "tomli>=2; python_version < '3.11'"]
other = ["sphinx>=8"]
"""
    assert generate.floors(pyproject) == [
        "jax==0.8",
        "flax==0.12",
        "pytest==8.3",
        "tomli==2; python_version < '3.11'",
    ]
    assert generate.python_floor(pyproject) == "3.11"


# ---- known-good -------------------------------------------------------------------


def test_known_good_pins_every_dependency_within_pyprojects_ranges():
    good = pinned(CONSTRAINTS / "known-good.txt")
    pyproject = (ROOT / "pyproject.toml").read_text()
    for line in generate.requirements(pyproject):
        req = Requirement(line)
        if req.marker and not req.marker.evaluate():
            continue
        name = canonicalize_name(req.name)
        assert name in good, f"constraints/known-good.txt does not pin {req.name}"
        assert req.specifier.contains(good[name], prereleases=True), (
            f"known-good pins {req.name}=={good[name]}, outside pyproject's {req.specifier}"
        )


def test_known_good_can_be_met_by_a_cuda_build_and_has_the_jax_plugins():
    good = pinned(CONSTRAINTS / "known-good.txt")
    assert not [v for v in good.values() if "+" in v], (
        "local labels (+cpu) block CUDA builds"
    )
    assert canonicalize_name(generate.COURSE_DIST) not in good
    for plugin in generate.JAX_PLUGINS:
        assert good[plugin] == good["jax"] == good["jaxlib"]
    meta = generate.meta((CONSTRAINTS / "known-good.txt").read_text())
    assert meta["torch"] == good["torch"]


def test_known_good_from_a_pip_listing():
    listing = "\n".join(
        [
            "jax==0.10.2",
            "jax-pytorch-side-by-side==0.1.0",
            "pip==26.3",
            "Jinja2==3.1.6",
            "torch==2.13.0+cpu",
            "jax-cuda13-plugin==0.10.2",
        ]
    )
    out = generate.known_good(listing)
    assert out[:4] == [
        "jax==0.10.2",
        "jax-cuda13-plugin==0.10.2",
        "Jinja2==3.1.6",
        "torch==2.13.0",
    ]
    assert (
        "jax-cuda12-plugin==0.10.2" in out
        and out.count("jax-cuda13-plugin==0.10.2") == 1
    )
    assert not any(line.startswith(("pip==", "jax-pytorch")) for line in out)


# ---- Colab and the set headers ------------------------------------------------------


def test_colab_set_is_dated_sourced_and_consistent():
    text = (CONSTRAINTS / "colab.txt").read_text()
    assert "googlecolab/backend-info" in text
    assert re.search(r"\b20\d\d-\d\d-\d\d\b", text), "the date the versions were read"
    colab = pinned(CONSTRAINTS / "colab.txt")
    assert colab["jax"] == colab["jaxlib"] == colab["jax-cuda12-plugin"], (
        "one jax release"
    )
    assert "torch" not in colab, (
        "torch is install.py's: record it in the # torch: header"
    )
    assert set(generate.meta(text)) == {"python", "torch"}


@pytest.mark.parametrize("name", ["known-good", "colab", "floors"])
def test_every_set_names_its_python_and_torch(name, capsys):
    assert generate.main(["show", name]) == 0
    lines = dict(line.split("=", 1) for line in capsys.readouterr().out.split())
    assert lines["python"].count(".") == 1 and lines["python"].startswith("3.")
    assert lines["torch"][0].isdigit()


def test_show_of_latest_is_empty(capsys):
    generate.main(["show", "latest"])
    assert capsys.readouterr().out == "python=\ntorch=\n"


# ---- the Makefile -------------------------------------------------------------------


@pytest.fixture
def fake_venv(tmp_path):
    """A venv whose python only logs its arguments, so make's recipes run for real."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/../calls.log"\n')
    python.chmod(0o755)
    return venv


def make(venv, *args):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # Under `make test-versions` the outer make exports its command-line variables
    # (VENV, CONSTRAINTS, ...) and flags: this make must see none of them.
    outer = (
        "MAKEFLAGS",
        "MAKELEVEL",
        "MFLAGS",
        "MAKEOVERRIDES",
        "COURSE_TORCH_VERSION",
    )
    makefile_vars = ("VENV", "CONSTRAINTS", "LATEST", "SET", "PYTEST_ARGS", "PYTHON")
    env = {k: v for k, v in os.environ.items() if k not in outer + makefile_vars}
    out = subprocess.run(
        ["make", "--no-print-directory", "install", f"VENV={venv}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    log = venv / "calls.log"
    calls = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return calls


def test_make_install_uses_the_known_good_constraints_by_default(fake_venv):
    calls = make(fake_venv)
    assert calls[0] == "course_utils/install/frameworks.py torch"
    pip = next(c for c in calls if c.startswith("-m pip install"))
    assert f"-c {fake_venv}/constraints.txt" in pip and "--upgrade" not in pip
    assert (
        calls[-1]
        == f"course_utils/install/frameworks.py jax -c {fake_venv}/constraints.txt"
    )
    used = (fake_venv / "constraints.txt").read_text().splitlines()
    expected = [
        p for p in pins(CONSTRAINTS / "known-good.txt") if not p.startswith("torch==")
    ]
    assert [u for u in used if u and not u.startswith("#")] == expected
    assert make(fake_venv) == [], "a second make install must install nothing"


def test_make_install_reinstalls_when_the_set_or_its_file_changes(fake_venv, tmp_path):
    mine = tmp_path / "mine.txt"
    mine.write_text("jax==0.10.2\ntorch==2.6.0\n")
    assert make(fake_venv, f"CONSTRAINTS={mine}")  # another set: reinstall
    assert (fake_venv / "constraints.txt").read_text().splitlines()[0] == "jax==0.10.2"
    assert "torch==2.6.0" not in (fake_venv / "constraints.txt").read_text()
    assert make(fake_venv, f"CONSTRAINTS={mine}") == []
    future = mine.stat().st_mtime + 10
    os.utime(mine, (future, future))
    assert make(fake_venv, f"CONSTRAINTS={mine}"), (
        "the stamp must depend on the constraints file"
    )
    latest = make(fake_venv, "LATEST=1")
    pip = next(c for c in latest if c.startswith("-m pip install"))
    assert (
        "--upgrade" in pip
        and "known-good" not in (fake_venv / "constraints.txt").read_text()
    )
    assert make(fake_venv, "LATEST=1") == []
    assert make(fake_venv), "back to the default set: reinstall"
    assert make(fake_venv) == []


def test_make_test_versions_rejects_an_unknown_set():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "--no-print-directory", "test-versions", "SET=nightly"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "unknown SET=nightly" in out.stderr
    assert all(
        name in out.stderr for name in ("latest", "known-good", "colab", "floors")
    )


def test_make_test_versions_builds_its_own_venv_with_the_set():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", "test-versions", "SET=colab"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "COURSE_VERSION_SET=colab" in out and "VENV=.venv-colab" in out
    assert "CONSTRAINTS=constraints/colab.txt" in out and "junit-colab.xml" in out


# ---- the scheduled workflow --------------------------------------------------------


def test_matrix_workflow_runs_every_set_weekly_and_by_hand():
    workflow = yaml.safe_load((ROOT / ".github/workflows/matrix.yml").read_text())
    triggers = workflow[True]  # YAML reads the key `on` as True
    assert "workflow_dispatch" in triggers and triggers["schedule"][0]["cron"]
    job = workflow["jobs"]["smoke"]
    assert tuple(job["strategy"]["matrix"]["set"]) == SETS
    assert job["strategy"]["fail-fast"] is False
    runs = " ".join(step.get("run", "") for step in job["steps"])
    assert "test-versions SET=${{ matrix.set }}" in runs and "generate.py show" in runs
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "build/junit-${{ matrix.set }}.xml"
    for name in SETS:
        assert name == "latest" or (CONSTRAINTS / f"{name}.txt").exists()


def test_gitignore_keeps_the_set_venvs_out():
    assert ".venv-*/" in (ROOT / ".gitignore").read_text().splitlines()


# ---- the pre-release watch --------------------------------------------------------


def test_make_test_versions_pre_takes_the_pre_releases():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", "test-versions", "SET=pre"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "PIP_PRE=1" in out and "whl/test/cpu" in out and "VENV=.venv-pre" in out
    assert "LATEST=1 CONSTRAINTS=" in out and "junit-pre.xml" in out


def test_pip_pre_changes_the_installed_set(fake_venv):
    assert make(fake_venv, "LATEST=1")
    assert make(fake_venv, "LATEST=1") == []
    assert make(fake_venv, "LATEST=1", "PIP_PRE=1"), "pre-releases: reinstall"


def test_prerelease_workflow_runs_daily_and_reports_to_one_issue():
    workflow = yaml.safe_load((ROOT / ".github/workflows/prerelease.yml").read_text())
    triggers = workflow[True]
    assert "workflow_dispatch" in triggers and triggers["schedule"][0]["cron"]
    assert workflow["permissions"]["issues"] == "write"
    steps = workflow["jobs"]["smoke"]["steps"]
    runs = {s.get("if", ""): s.get("run", "") for s in steps}
    assert any("test-versions SET=pre" in r for r in runs.values())
    assert runs["failure()"].startswith(".ci/prerelease-issue failure ")
    assert runs["success()"].startswith(".ci/prerelease-issue success ")


FAKE_GH = """#!/bin/sh
echo "$@" >> "$GH_LOG"
case "$1 $2" in
  "issue list") cat "$GH_OPEN" ;;
  "issue comment"|"issue create") shift 2; while [ $# -gt 0 ]; do
      [ "$1" = --body-file ] && cat "$2" >> "$GH_LOG"; shift; done ;;
esac
"""

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="notebooks.05_x.ipynb" name="Cell 12"><properties>
<property name="versions" value="versions (pre): python 3.13.1, jax 0.12.1rc1"/></properties>
<failure message="AttributeError: module 'jax' has no attribute 'shard_map'">tb</failure></testcase>
<testcase classname="tests.test_a" name="test_ok"/></testsuite></testsuites>"""


@pytest.mark.parametrize(
    ("outcome", "open_issue", "expected"),
    [
        ("failure", "", "issue create"),
        ("failure", "17", "issue comment 17"),
        ("success", "17", "issue close 17"),
        ("success", "", None),
    ],
)
def test_prerelease_issue_opens_one_updates_it_and_closes_it(
    tmp_path, outcome, open_issue, expected
):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "gh").write_text(FAKE_GH)
    (bin_ / "gh").chmod(0o755)
    (tmp_path / "open").write_text(open_issue)
    (tmp_path / "junit.xml").write_text(JUNIT)
    log = tmp_path / "gh.log"
    env = {
        **os.environ,
        "PATH": f"{bin_}:{os.environ['PATH']}",
        "GH_LOG": str(log),
        "GH_OPEN": str(tmp_path / "open"),
    }
    out = subprocess.run(
        [
            ROOT / ".ci/prerelease-issue",
            outcome,
            "https://run/1",
            tmp_path / "junit.xml",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    calls = log.read_text()
    assert calls.startswith("issue list --state open --label pre-release-watch")
    if expected is None:
        assert calls.count("\n") == 1, calls
        return
    assert expected in calls
    if outcome == "failure":
        assert "https://run/1" in calls and "1 failing:" in calls
        assert "notebooks.05_x.ipynb::Cell 12" in calls and "shard_map" in calls
        assert "jax 0.12.1rc1" in calls and "test_ok" not in calls
        assert ("label create" in calls) == (not open_issue)


def test_prerelease_issue_refuses_an_unknown_outcome():
    out = subprocess.run(
        [ROOT / ".ci/prerelease-issue", "maybe", "https://run/1"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "failure or success" in out.stderr
