"""Each test file's and notebook's measured seconds, so that the longest start first.

``make test`` hands whole files to its two workers (``--dist loadfile
--no-loadscope-reorder``) in collection order; a long notebook collected last would
leave one worker running it alone at the end. ``longest_first`` sorts the collected
items by their file's seconds in ``tests/durations.json`` (longest first; files the
table does not know after them, in their own order), keeping each file's items in
order. ``--durations-table=tests/durations.json`` rewrites the table's entries for
the files a run executed (setup, call and teardown of every item, summed per file)
and drops the files that no longer exist.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).with_name("durations.json")


def file_of(nodeid: str) -> str:
    """``notebooks/03_x.ipynb::Cell 4`` -> ``notebooks/03_x.ipynb``."""
    return nodeid.split("::", 1)[0]


def load(path: Path = TABLE) -> dict[str, float]:
    """The table's seconds per file; an empty table when the file is missing."""
    if not path.exists():
        return {}
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text()).items()}
    except (ValueError, AttributeError) as err:
        raise ValueError(
            f"{path}: not a JSON object of file -> seconds ({err})"
        ) from err


def longest_first(items: list, seconds: dict[str, float]) -> None:
    """Sort ``items`` in place: files by ``-seconds``, unknown files last, stable within."""
    first_seen: dict[str, int] = {}
    for i, item in enumerate(items):
        first_seen.setdefault(file_of(item.nodeid), i)

    def key(item) -> tuple[float, int]:
        name = file_of(item.nodeid)
        return (-seconds.get(name, 0.0), first_seen[name])

    items.sort(key=key)


class Recorder:
    """A pytest plugin summing each file's durations, merged into ``path`` at the end."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session) -> None:
        if not self.seconds:
            return
        root = Path(session.config.rootpath)
        table = load(self.path)
        table.update({k: round(v, 1) for k, v in self.seconds.items()})
        table = {k: v for k, v in table.items() if (root / k).exists()}  # moved: gone
        ordered = dict(sorted(table.items(), key=lambda kv: (-kv[1], kv[0])))
        self.path.write_text(json.dumps(ordered, indent=1) + "\n")
