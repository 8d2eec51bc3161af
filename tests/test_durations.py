"""The suite's file order (longest first, from tests/durations.json) and its recorder."""

import json
from types import SimpleNamespace

import pytest

from tests import durations


def _items(*nodeids):
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_files_are_sorted_longest_first_and_keep_their_own_order():
    items = _items(
        "tests/test_a.py::one",
        "notebooks/03.ipynb::Cell 0",
        "tests/test_a.py::two",
        "notebooks/03.ipynb::Cell 1",
        "notebooks/03.ipynb::lowering",
        "tests/test_b.py::one",
        "solutions/11.ipynb::Cell 0",
    )
    durations.longest_first(
        items, {"notebooks/03.ipynb": 90.0, "solutions/11.ipynb": 200}
    )
    assert [i.nodeid for i in items] == [
        "solutions/11.ipynb::Cell 0",
        "notebooks/03.ipynb::Cell 0",
        "notebooks/03.ipynb::Cell 1",
        "notebooks/03.ipynb::lowering",
        "tests/test_a.py::one",  # unknown files after, in collection order
        "tests/test_a.py::two",
        "tests/test_b.py::one",
    ]


def test_the_recorder_sums_per_file_and_merges_into_the_table(tmp_path):
    for name in ("test_old.py", "test_a.py"):
        (tmp_path / "tests").mkdir(exist_ok=True)
        (tmp_path / "tests" / name).touch()
    path = tmp_path / "durations.json"
    old = {"tests/test_old.py": 5.0, "tests/test_a.py": 99.0, "tests/test_moved.py": 7}
    path.write_text(json.dumps(old))
    rec = durations.Recorder(path)
    for nodeid, seconds in [("tests/test_a.py::x", 1.25), ("tests/test_a.py::y", 2.0)]:
        rec.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds))
    rec.pytest_sessionfinish(SimpleNamespace(config=SimpleNamespace(rootpath=tmp_path)))
    table = json.loads(path.read_text())
    assert table == {"tests/test_old.py": 5.0, "tests/test_a.py": 3.2}  # moved: gone
    assert list(table) == ["tests/test_old.py", "tests/test_a.py"]  # longest first


def test_a_broken_table_names_its_file(tmp_path):
    path = tmp_path / "durations.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="durations.json"):
        durations.load(path)


def test_the_repositorys_table_orders_every_lesson_and_the_masters():
    table = durations.load()
    root = durations.TABLE.parents[1]
    # lessons run under nbval, one file each; the masters all run in tests/notebooks/test_masters.py
    notebooks = sorted(root.glob("notebooks/*.ipynb")) + [
        root / "tests/notebooks/test_masters.py"
    ]
    assert notebooks[0].suffix == ".ipynb" and notebooks[-1].exists()
    missing = [str(p.relative_to(root)) for p in notebooks]
    missing = [name for name in missing if not table.get(name, 0) > 0]
    assert not missing, f"tests/durations.json has no seconds for {missing}"
