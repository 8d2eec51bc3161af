"""The package as a whole: fast import, lint, Binder, pyproject (its house rules: test_layout.py)."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def test_import_is_fast():
    # CPU seconds, not wall: a busy machine slows the clock, not the work.
    code = "import time; t = time.process_time(); import course_utils; print(time.process_time() - t)"
    seconds = min(float(_python(code)) for _ in range(3))
    assert seconds <= 0.3, f"import course_utils took {seconds:.3f} CPU s"


def test_ruff_passes():
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _runtime_deps() -> list[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return meta["project"]["dependencies"]


def _name(req: str) -> str:
    for sep in ("[", "=", ">", "<", "~", "!", ";", " "):
        req = req.split(sep)[0]
    return req.strip().lower().replace("_", "-")


def test_binder_lists_every_runtime_dependency():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    listed = {
        _name(line)
        for line in lines
        if line.strip() and not line.startswith(("#", "-"))
    }
    missing = {_name(d) for d in _runtime_deps()} - listed
    assert not missing, f"binder/requirements.txt lacks {sorted(missing)}"
    assert any("download.pytorch.org/whl/cpu" in line for line in lines), (
        "Binder should take CPU torch"
    )
    assert (ROOT / "binder" / "postBuild").exists()


def test_console_script_and_python_floor():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["course"] == "course_utils.cli:main"
    assert meta["project"]["requires-python"] == ">=3.11"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make course" in readme
    assert "make test" in ci
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert "make test" in workflow
