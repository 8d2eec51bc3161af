"""The grader's fixtures in tests/fixtures/grader are what make_fixtures.py writes."""

from __future__ import annotations

import importlib.util

from tests.grading.helpers import FIX


def _make_fixtures():
    spec = importlib.util.spec_from_file_location(
        "make_fixtures", FIX / "make_fixtures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fixtures_are_up_to_date(tmp_path):
    make_fixtures = _make_fixtures()
    assert make_fixtures.write_all(tmp_path)  # writes everything into an empty folder
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) >= 35
    for path in written:
        rel = path.relative_to(tmp_path)
        assert (FIX / rel).read_bytes() == path.read_bytes(), (
            f"{rel} is stale: run make_fixtures.py"
        )
    assert make_fixtures.write_all(tmp_path) == []  # nothing changes the second time
