"""course_utils._files: a write is seen whole or not at all."""

import json
import os

import pytest

from course_utils import _files


def test_writes_text_and_bytes_and_creates_the_folder(tmp_path):
    path = _files.write_atomic(tmp_path / "a" / "b.txt", "héllo\n")
    assert path.read_text(encoding="utf-8") == "héllo\n"
    _files.write_atomic(path, b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in path.parent.iterdir()) == ["b.txt"]


def test_a_failed_rename_leaves_the_previous_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    _files.write_atomic(path, json.dumps({"step": 1}))

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(_files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        _files.write_atomic(path, json.dumps({"step": 2}))
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"step": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    _files.write_atomic(path, "old")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(_files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _files.write_atomic(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_readers_never_see_a_partial_file(tmp_path):
    # The rename is the only moment the name changes: before it the old content, after it the new.
    path = tmp_path / "big.txt"
    _files.write_atomic(path, "a" * 1000)
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(path.read_text())  # still the old file while the new one is written
        real_replace(src, dst)

    os_replace = _files.os.replace
    try:
        _files.os.replace = spy
        _files.write_atomic(path, "b" * 5000)
    finally:
        _files.os.replace = os_replace
    assert seen == ["a" * 1000] and path.read_text() == "b" * 5000
