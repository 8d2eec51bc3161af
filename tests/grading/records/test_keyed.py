"""Keyed records: the report folder's private key, seals that catch any edit, shape checks."""

from __future__ import annotations

import json
import os
import stat

import pytest

from course_utils.grading.records import keyed


def _rec(**extra):
    return {
        "student": "ann",
        "status": "ok",
        "reason": "r",
        "total": 3.0,
        "max_total": 3.0,
        "exercises": {"sq": {"points": 3.0, "status": "passed"}},
        "flags": [],
        **extra,
    }


def test_key_is_private_stable_and_replaced_when_exposed(tmp_path):
    assert keyed.key(tmp_path, create=False) is None
    key = keyed.key(tmp_path)
    path = tmp_path / keyed.PRIVATE / keyed.KEY
    assert len(key) == 32 and keyed.key(tmp_path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    os.chmod(path, 0o644)  # readable by others: not a secret any more
    assert keyed.key(tmp_path, create=False) is None
    assert keyed.key(tmp_path) != key
    path.unlink()
    path.symlink_to(tmp_path / "planted")  # a key someone else chose
    (tmp_path / "planted").write_text("00" * 32)
    os.chmod(tmp_path / "planted", 0o600)
    assert keyed.key(tmp_path) != bytes(32)
    assert not path.is_symlink()


def test_seal_catches_any_edit_and_another_key():
    key = bytes(range(32))
    rec = keyed.seal(_rec(total=3, t=(1, 2), s="a\udce9"), key)
    assert rec["t"] == [1, 2] and rec["s"] == "a\\xe9"  # as it reads back from JSON
    assert keyed.sealed(json.loads(json.dumps(rec)), key)
    assert not keyed.sealed(rec | {"total": 4}, key)
    assert not keyed.sealed({k: v for k, v in rec.items() if k != "seal"}, key)
    assert not keyed.sealed(rec, bytes(32))
    assert not keyed.sealed([rec], key)


@pytest.mark.parametrize(
    "change, why",
    [
        ({"student": "../../x"}, "does not belong in folder"),
        ({"student": 3}, "no valid 'student'"),
        ({"student": "a\nb"}, "no valid 'student'"),
        ({"total": "9"}, "'total' is not a number"),
        ({"max_total": True}, "'max_total' is not a number"),
        ({"reason": None}, "'reason' is not text"),
        ({"exercises": {"sq": {"points": "x"}}}, "not a table of points"),
        ({"flags": "x"}, "not a list of text"),
    ],
)
def test_problem_names_what_is_wrong(change, why):
    assert keyed.problem(_rec(), "ann") is None
    assert why in keyed.problem(_rec(**change), "ann")
    assert keyed.problem([1], None) == "not a JSON object"


def test_read_refuses_links_fifos_and_deep_json(tmp_path):
    (tmp_path / "ok.json").write_text('{"a": 1}')
    assert keyed.read(tmp_path / "ok.json") == {"a": 1}
    (tmp_path / "link.json").symlink_to(tmp_path / "ok.json")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "big.json").write_text("[" + "1," * 100 + "1]")
    for name in ("link", "fifo", "deep", "missing"):
        with pytest.raises(ValueError):
            keyed.read(tmp_path / f"{name}.json")
    with pytest.raises(ValueError, match="over the 0 MiB limit"):
        keyed.read(tmp_path / "big.json", limit=50)
    assert keyed.file_hash(tmp_path / "link.json") is None
    assert keyed.file_hash(tmp_path / "fifo.json") is None
    assert keyed.file_hash(tmp_path / "ok.json")
