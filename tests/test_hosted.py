"""course_utils.hosted: the name every published setup cell imports, and that cell."""

import re
import subprocess
from pathlib import Path

from course_utils import hosted
from course_utils.install import hosted as install_hosted
from course_utils.tooling import notebooks

ROOT = Path(__file__).resolve().parents[1]


def test_the_setup_cells_name_is_the_install_module():
    assert hosted.install_dependencies is install_hosted.install_dependencies
    assert hosted.UnsupportedRuntime is install_hosted.UnsupportedRuntime


# ------------------------------------------------- the release the notebooks point at


def _pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.MULTILINE).group(1)


def test_setup_cell_and_badges_use_the_release_of_pyproject():
    tag = f"v{_pyproject_version()}"
    src = notebooks.colab_setup_source()
    assert f'@{tag}"' in src and "@main" not in src
    links = re.findall(
        r"\]\((https://[^)]+)\) ?", notebooks.badges("notebooks/00_x.ipynb")
    )[1::2]
    assert len(links) == 3  # Colab, Kaggle, Binder
    for link in links:
        assert f"/{tag}" in link and "/main" not in link, link
    import course_utils

    assert course_utils.__version__ == _pyproject_version()


def test_setup_cell_does_nothing_where_the_course_is_installed():
    namespace = {}
    exec(notebooks.colab_setup_source(), namespace)  # noqa: S102 - our own source
    assert "hosted" not in namespace


def test_setup_cell_installs_then_hands_over_where_the_course_is_missing(monkeypatch):
    # Simulate Kaggle: course_utils not importable; pip and the hand-over are recorded.
    import importlib.util

    calls = []
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "course_utils" else real_find_spec(name, *a),
    )
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(hosted, "install_dependencies", lambda: calls.append("deps"))
    exec(notebooks.colab_setup_source(), {})  # noqa: S102 - our own source
    assert (
        calls[0][-1].endswith(f"@v{_pyproject_version()}") and "--no-deps" in calls[0]
    )
    assert calls[1] == "deps"


def test_readme_badges_open_the_release_too():
    readme = (ROOT / "README.md").read_text()
    assert notebooks.badges("notebooks/00_welcome_and_setup.ipynb") in readme
