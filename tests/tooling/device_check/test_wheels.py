"""course_utils.tooling.device_check.wheels: what a prepared GPU machine without network is given."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from course_utils.tooling.device_check import wheels as dw

ROOT = Path(__file__).resolve().parents[3]


def _names(specs) -> set[str]:
    return {dw.norm(re.split(r"[<>=!~; \[]", s, maxsplit=1)[0]) for s in specs}


def test_every_dependency_is_either_on_the_machine_or_in_the_wheels():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = _names(project["dependencies"])
    have = {dw.norm(n) for n in dw.PREINSTALLED}
    missing = deps - have - _names(dw.NEEDED) - {"jupyterlab"}
    assert missing == set()
    assert not _names(dw.NEEDED) & have


def test_the_download_is_for_python_312_manylinux_and_prune_drops_what_is_there(
    tmp_path,
):
    cmd = dw.download_command(tmp_path)
    assert cmd[:4] == [sys.executable, "-m", "pip", "download"]
    assert "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12"
    assert "manylinux2014_x86_64" in cmd and cmd[cmd.index("-d") + 1] == str(tmp_path)
    for name in (
        "numpy-2.5.2-cp312-cp312-manylinux_2_28_x86_64.whl",
        "papermill-2.7.0-py3-none-any.whl",
        "ml_dtypes-0.5.4-cp312-cp312-manylinux_2_28_x86_64.whl",
    ):
        (tmp_path / name).write_bytes(b"x" * 1024)
    gone = dw.prune(tmp_path)
    assert sorted(p.name.split("-")[0] for p in gone) == ["ml_dtypes", "numpy"]
    assert [p.name for p in tmp_path.glob("*.whl")] == [
        "papermill-2.7.0-py3-none-any.whl"
    ]
    assert dw.size_mib(tmp_path) == 1024 / 2**20
