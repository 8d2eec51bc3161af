"""The package as a whole: light import, lint, Binder, pyproject."""

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_import_is_light_and_imports_no_framework():
    code = (
        "import time, sys; t = time.perf_counter(); import course_utils; "
        "from course_utils import config, exercises, notebooks, runner, timing, parity, env, data, plots; "
        "print(time.perf_counter() - t, 'jax' in sys.modules, 'torch' in sys.modules)"
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            for _ in range(3)]
    seconds = min(float(r.stdout.split()[0]) for r in runs)
    assert runs[0].stdout.split()[1:] == ["False", "False"]
    assert seconds <= 0.3, f"import course_utils took {seconds:.3f} s"


def test_ruff_passes():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "."], capture_output=True,
                         text=True, cwd=ROOT)
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
    listed = {_name(line) for line in lines if line.strip() and not line.startswith(("#", "-"))}
    missing = {_name(d) for d in _runtime_deps()} - listed
    assert not missing, f"binder/requirements.txt lacks {sorted(missing)}"
    assert any("download.pytorch.org/whl/cpu" in line for line in lines), "Binder should take CPU torch"
    assert (ROOT / "binder" / "postBuild").exists()


def test_console_script_and_python_floor():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["course"] == "course_utils.cli:main"
    assert meta["project"]["requires-python"] == ">=3.10"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make course" in readme
    assert "make test" in ci
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert "make test" in workflow
