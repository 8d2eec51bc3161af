import ast
from pathlib import Path

import pytest

from course_utils import config


def test_smoke_reads_environment(monkeypatch):
    for raw, expected in [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("0", False),
        ("", False),
        ("off", False),
    ]:
        monkeypatch.setenv("COURSE_SMOKE", raw)
        assert config.smoke() is expected


def test_smoke_override_wins(monkeypatch):
    monkeypatch.setenv("COURSE_SMOKE", "1")
    assert config.smoke(False) is False
    monkeypatch.setenv("COURSE_SMOKE", "0")
    assert config.smoke(True) is True


def test_bad_values_are_named(monkeypatch):
    monkeypatch.setenv("COURSE_SMOKE", "maybe")
    with pytest.raises(ValueError, match="COURSE_SMOKE='maybe'"):
        config.smoke()
    with pytest.raises(TypeError, match="SMOKE"):
        config.smoke("yes")


def test_pick_and_sizes(monkeypatch):
    monkeypatch.setenv("COURSE_SMOKE", "0")
    assert config.pick(100, 5) == 100
    assert config.pick(100, 5, smoke_mode=True) == 5
    s = config.sizes({"n": (1000, 10), "lr": (0.1, 0.1)}, None)
    assert (s.n, s.lr, s.smoke) == (1000, 0.1, False)
    s = config.sizes({"n": (1000, 10)}, True)
    assert (s.n, s.smoke) == (10, True)
    # papermill's -p SMOKE True reaches everything that asks later (the environment line)
    assert config.smoke() is True
    config.sizes({"n": (1000, 10)}, False)
    assert config.smoke() is False
    with pytest.raises(ValueError, match="size 'n'"):
        config.sizes({"n": 1000})


def test_smoke_environ_is_read_back_by_smoke(monkeypatch):
    for on in (True, False):
        ((name, value),) = config.smoke_environ(on).items()
        monkeypatch.setenv(name, value)
        assert config.smoke() is on


def test_only_config_spells_the_smoke_variable():
    """Every writer of the smoke switch goes through :func:`config.smoke_environ`."""
    root = Path(config.__file__).resolve().parents[1]
    spelled = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in sorted((root / "course_utils").rglob("*.py"))
        if path.name != "config.py" or path.parent.name != "course_utils"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == config.ENV_VAR
    ]
    assert not spelled, f"write it with config.smoke_environ(): {spelled}"
