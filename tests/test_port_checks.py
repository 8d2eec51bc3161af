"""course_utils.port_checks: each check of a migration checklist, on its own."""

import subprocess
import sys

import numpy as np

from course_utils import checklist, port_checks


def test_importing_port_checks_imports_no_framework():
    code = (
        "import sys, course_utils.port_checks; "
        "print([m for m in ('jax', 'torch', 'flax') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_checklist_offers_the_checks_lessons_call():
    for name in ("jit_forward", "jax_asarray", "dependencies_status"):
        assert getattr(checklist, name) is getattr(port_checks, name), name


def test_both_forwards_agree_and_count_the_same_parameters(block_pair, x_block):
    torch_block, nnx_block = block_pair
    assert port_checks.torch_n_params(torch_block) == port_checks.nnx_n_params(
        nnx_block
    )
    expected = port_checks.torch_forward(torch_block)(x_block)
    forward, state = port_checks.jit_forward(nnx_block)
    got = forward(state, port_checks.jax_asarray(x_block))
    good, detail = port_checks.compare_outputs(got, expected, 1e-5, 1e-5)
    assert good and detail.startswith("max |diff|")


def test_compare_outputs_gives_the_evidence_when_they_differ():
    good, detail = port_checks.compare_outputs(
        np.zeros(3, np.float32), np.ones(3, np.float32), 1e-5, 1e-5
    )
    assert not good and "\n" not in detail and detail


def test_dependencies_status_names_versions_and_missing_modules():
    status, detail = port_checks.dependencies_status(
        {"JAX side": ["numpy"], "PyTorch side": ["no_such_package_xyz", "os.path"]}
    )
    assert status == "warn"
    assert detail.startswith(f"JAX side: numpy {np.__version__}; PyTorch side: ")
    assert "no_such_package_xyz missing" in detail
    assert port_checks.dependencies_status({"x": ["numpy"]})[0] == "pass"


def test_operator_coverage_of_a_model_both_compilers_take(block_pair, x_block):
    torch_block, nnx_block = block_pair
    status, detail = port_checks.operator_coverage(
        torch_block, nnx_block, x_block, lambda a: a
    )
    assert status == "pass"
    assert "1 graph(s), 0 break(s)" in detail and "jax.jit: traced" in detail


def test_benchmark_says_what_the_one_rule_says(monkeypatch):
    from course_utils.claims import judging

    seen = []
    real = judging.faster

    def spy(cmp, a, b):
        seen.append((a, b))
        return real(cmp, a, b)

    monkeypatch.setattr(judging, "faster", spy)
    status, detail = port_checks.benchmark(
        lambda: np.zeros(4), lambda: np.zeros(4), rtol=0, atol=0, target_s=0.01
    )
    assert seen == [("PyTorch eager", "JAX jit")]
    assert "PyTorch eager" in detail and "JAX jit" in detail
    assert "eager against compiled" in detail


def test_benchmark_of_equal_work_names_no_winner():
    """Two identical functions: the rule finds no winner (or the run is noisy): a warning."""
    status, detail = port_checks.benchmark(
        lambda: np.zeros(4), lambda: np.zeros(4), rtol=0, atol=0, target_s=0.05
    )
    assert "x faster than" not in detail or status == "pass"
    assert status in ("pass", "warn")
