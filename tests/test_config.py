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
