"""course_utils.checklist: the stepwise port, the MVP checklist and each of its checks on its
own, on a transformer block pair."""

import copy
import subprocess
import sys

import numpy as np
import pytest

from course_utils import checklist, forwards
from tests.blocks import CFG

# ---------------------------------------------------------------- checklist


@pytest.mark.slow
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


@pytest.mark.slow
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
    speed = report.items[1].detail
    assert "eager vs eager: " in speed and "compiled vs compiled: " in speed
    assert "torch.compile " in speed and "JAX eager " in speed and "on cpu" in speed
    assert (
        "1 graph, 0 breaks" in report.items[2].detail
        and "traced" in report.items[2].detail
    )
    assert (
        report.status("dynamic shapes") == "warn"
        and "compiled 2 times" in report.items[3].detail
        and "captured 2 graphs."
        in report.items[3].detail  # no dynamic graph reused yet
    )
    assert report.status("ecosystem dependencies") == "warn"
    assert (
        "no_such_package_xyz missing" in report.items[4].detail
        and "optax 0." in report.items[4].detail
    )
    assert "\\|" in report.table() or "|diff|" not in report.table()
    rows = str(report).splitlines()
    assert any(r.strip().startswith("JAX jit ") for r in rows), "one row per variant"
    assert len(report.table().splitlines()) == 2 + len(report.items)  # rows as <br>


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


# ---------------------------------------------------------------- each check


def test_importing_checklist_imports_no_framework():
    code = (
        "import sys, course_utils.checklist; "
        "print([m for m in ('jax', 'torch', 'flax') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_both_forwards_agree_and_count_the_same_parameters(block_pair, x_block):
    torch_block, nnx_block = block_pair
    assert checklist.torch_n_params(torch_block) == checklist.nnx_n_params(nnx_block)
    expected = forwards.torch_forward(torch_block)(x_block)
    forward, state = forwards.jit_forward(nnx_block)
    got = forward(state, checklist.jax_asarray(x_block))
    good, detail = checklist.compare_outputs(got, expected, 1e-5, 1e-5)
    assert good and detail.startswith("max |diff|")


def test_compare_outputs_gives_the_evidence_when_they_differ():
    good, detail = checklist.compare_outputs(
        np.zeros(3, np.float32), np.ones(3, np.float32), 1e-5, 1e-5
    )
    assert not good and "\n" not in detail and detail


def test_dependencies_status_names_versions_and_missing_modules():
    status, detail = checklist.dependencies_status(
        {"JAX side": ["numpy"], "PyTorch side": ["no_such_package_xyz", "os.path"]}
    )
    assert status == "warn"
    assert detail.startswith(f"JAX side: numpy {np.__version__}; PyTorch side: ")
    assert "no_such_package_xyz missing" in detail
    assert checklist.dependencies_status({"x": ["numpy"]})[0] == "pass"


def test_operator_coverage_of_a_model_both_compilers_take(block_pair, x_block):
    torch_block, nnx_block = block_pair
    status, detail = checklist.operator_coverage(
        torch_block, nnx_block, x_block, lambda a: a
    )
    assert status == "pass"
    assert "1 graph, 0 breaks" in detail and "jax.jit: traced" in detail


def test_benchmark_judges_each_pair_by_the_one_rule(monkeypatch):
    from course_utils.claims import verdicts

    seen = []
    real = verdicts.faster

    def spy(cmp, a, b):
        seen.append((a, b))
        return real(cmp, a, b)

    monkeypatch.setattr(verdicts, "faster", spy)
    zeros = lambda: np.zeros(4)  # noqa: E731
    status, detail = checklist.benchmark(
        dict.fromkeys(
            ["PyTorch eager", "JAX eager", "torch.compile", "JAX jit"], zeros
        ),
        checklist.FAIR_PAIRS,
        rtol=0,
        atol=0,
        target_s=0.01,
    )
    assert seen == list(checklist.FAIR_PAIRS.values())
    assert detail.startswith("medians per call on ")
    assert "eager vs eager: " in detail and "compiled vs compiled: " in detail
    assert status in ("pass", "warn")


def test_the_fair_pairs_change_one_thing():
    """Eager against eager, compiled against compiled: never eager PyTorch against jit."""
    eager = {"PyTorch eager", "JAX eager"}
    for a, b in checklist.FAIR_PAIRS.values():
        assert (a in eager) == (b in eager), (a, b)


def test_benchmark_of_equal_work_names_no_winner():
    """Two identical functions: the rule finds no winner (or the run is noisy): a warning."""
    zeros = lambda: np.zeros(4)  # noqa: E731
    status, detail = checklist.benchmark(
        {"a": zeros, "b": zeros},
        {"a vs b": ("a", "b")},
        rtol=0,
        atol=0,
        target_s=0.05,
    )
    line = next(r for r in detail.splitlines() if r.startswith("a vs b: "))
    assert status == "pass" or line.endswith(("no clear winner", ")")), line
    assert status in ("pass", "warn")
    if status == "warn":  # not judged: the line says so, in words
        assert "no clear winner" in line or ": not judged (" in line
