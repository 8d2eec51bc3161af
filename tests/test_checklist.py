"""course_utils.checklist: the stepwise port and the MVP checklist on a transformer block pair."""

import copy

import numpy as np
import pytest

from course_utils import checklist
from tests.blocks import CFG

# ---------------------------------------------------------------- checklist


def test_stepwise_port_passes_on_a_good_pair(block_pair, x_block, capsys):
    report = checklist.stepwise_port(*block_pair, x_block)
    assert report.ok and [i.status for i in report.items] == ["pass"] * 4
    assert "stepwise port" in capsys.readouterr().out


def test_stepwise_port_stops_at_the_first_broken_step(block_pair, x_block):
    torch_block, nnx_block = block_pair
    broken = copy.deepcopy(torch_block)
    with __import__("torch").no_grad():
        broken.ln2.bias.add_(0.1)
    report = checklist.stepwise_port(broken, nnx_block, x_block, verbose=False)
    assert not report.ok
    assert [i.status for i in report.items] == ["pass", "fail", "skip", "skip"]
    assert "elements differ" in report.items[1].detail


def test_mvp_checklist_reports_every_check(block_pair, x_block):
    shapes = [np.zeros((2, n, CFG.d_model), np.float32) for n in (3, 5)]
    report = checklist.mvp_checklist(
        *block_pair,
        x_block,
        shapes=shapes,
        target_s=0.05,
        verbose=False,
        dependencies={"JAX side": ["optax", "no_such_package_xyz"]},
    )
    names = [i.name for i in report.items]
    assert names == [
        "outputs agree",
        "same-hardware benchmark",
        "operator coverage",
        "dynamic shapes",
        "ecosystem dependencies",
    ]
    assert report.status("outputs agree") == "pass"
    assert (
        "1 graph(s), 0 break(s)" in report.items[2].detail
        and "traced" in report.items[2].detail
    )
    assert (
        report.status("dynamic shapes") == "warn"
        and "compiled 2 time(s)" in report.items[3].detail
    )
    assert report.status("ecosystem dependencies") == "warn"
    assert (
        "no_such_package_xyz missing" in report.items[4].detail
        and "optax 0." in report.items[4].detail
    )
    assert "\\|" in report.table() or "|diff|" not in report.table()


def test_mvp_checklist_skips_timing_when_outputs_differ(block_pair, x_block):
    torch_block, nnx_block = block_pair
    broken = copy.deepcopy(torch_block)
    with __import__("torch").no_grad():
        broken.fc2.bias.add_(1.0)
    report = checklist.mvp_checklist(broken, nnx_block, x_block, verbose=False)
    assert report.status("outputs agree") == "fail"
    assert (
        report.status("same-hardware benchmark") == "skip"
        and report.status("dynamic shapes") == "skip"
    )
    with pytest.raises(TypeError, match="example must be a numpy array"):
        checklist.mvp_checklist(torch_block, nnx_block, [1, 2], verbose=False)


def test_check_items_validate_and_report_lookups():
    with pytest.raises(ValueError, match="status must be one of"):
        checklist.CheckItem("x", "ok", "")
    report = checklist.ChecklistReport("t")
    report.add("a", "warn", "x | y")
    assert report.ok and "x \\| y" in report.table()
    with pytest.raises(KeyError, match="no check named 'b'"):
        report.status("b")
