"""distributed.results: a launch's result, its summary, and each rank's report read back."""

import json
import sys

import numpy as np
import pytest

from course_utils.distributed import results


def test_launch_result_sections_split_a_combined_report():
    result = results.LaunchResult(
        [["x"]],
        [0],
        "",
        0.1,
        1,
        ranks=[{"ddp.a": 1, "tp.a": 2, "tp.b": 3}, {"ddp.a": 4}],
    )
    assert result.section("tp") == [{"a": 2, "b": 3}, {}]
    assert result.section("ddp") == [{"a": 1}, {"a": 4}]
    with pytest.raises(KeyError, match="fsdp"):
        result.section("fsdp")


def test_launch_result_summary():
    result = results.LaunchResult([["python", "x"]], [0, 1], "a\nb\nc", 1.5, 1234)
    assert not result.ok and "failed [0, 1]" in str(result)
    assert result.tail(2) == "b\nc"
    assert results.LaunchResult([], [0], "", 0.1, 1, timed_out=True).ok is False


def test_read_ranks_merges_arrays_in_rank_order_and_skips_junk(tmp_path):
    (tmp_path / "rank1.json").write_text(json.dumps({"rank": 1}))
    (tmp_path / "rank0.json").write_text(json.dumps({"rank": 0}))
    np.savez(tmp_path / "rank0.npz", g=np.arange(3))
    (tmp_path / "rank2.json").write_text("{half a report")
    (tmp_path / "rankx.json").write_text("{}")
    ranks = results.read_ranks(tmp_path)
    assert [r["rank"] for r in ranks] == [0, 1]
    np.testing.assert_array_equal(ranks[0]["g"], np.arange(3))


def test_display_command_shows_torchrun_and_python():
    torchrun = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nnodes",
        "1",
        "-m",
        "m",
    ]
    assert results.display_command(torchrun) == "torchrun --nnodes 1 -m m"
    assert results.display_command([sys.executable, "a b.py"]) == "python 'a b.py'"
