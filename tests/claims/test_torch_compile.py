"""course_utils.claims.torch_compile: the torch.compile benchmarks."""

import pytest

from course_utils.claims import benchmarks, harness, torch_compile, verdict_rule


def test_compile_training_is_skipped_in_smoke_mode():
    with pytest.raises(verdict_rule.SkippedInSmoke, match="without --smoke"):
        benchmarks.measure("compile-training", smoke=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    "claim_id", ["compile-matmul", "compile-fusion", "compile-training"]
)
def test_each_compile_claim_divides_eager_by_compiled(claim_id):
    import torch

    eager, compiled = harness.pairing_names(claim_id, "compile")
    calls = []

    def variant(name):
        def call():
            calls.append(name)
            return torch.ones(3)

        return call

    m = torch_compile._compiled(
        harness.Ctx(True), claim_id, variant(eager), variant(compiled), "two steps"
    )
    assert m.pairing == "compile" and m.names == (eager, compiled)
    assert m.what.startswith("two steps; first compiled call")
    assert len(m.samples) >= verdict_rule.MIN_RATIOS
    assert {eager, compiled} == set(calls)


@pytest.mark.slow
def test_compile_fusion_times_eager_against_torch_compile():
    m = benchmarks.measure("compile-fusion", smoke=True)
    assert m.names == ("eager", "torch.compile") and m.pairing == "compile"
    assert "1,000,000 floats" in m.what and min(m.samples) > 0
