"""course_utils.claims.latency: first calls, batch-1 latency, new shapes, eager launches."""

import math

import pytest

from course_utils.claims import harness, latency, verdict_rule
from tests.claims.fakes import fake_cuda_ctx


@pytest.mark.parametrize("benchmark", [latency.first_call, latency.batch1_latency])
def test_the_bert_proxy_is_skipped_in_smoke_mode_and_named(benchmark):
    with pytest.raises(verdict_rule.SkippedInSmoke, match="BERT-base-shaped") as err:
        benchmark(harness.Ctx(True))
    assert "12 layers, width 768, 12 heads, MLP 3072, 128 tokens" in str(err.value)


@pytest.mark.slow
def test_first_call_times_a_fresh_compile_each_time():
    m = latency.first_call_of(harness.Ctx(True), "smoke", 6)
    assert len(m.samples) == 6 and m.details["first_calls_s"] == m.samples
    # Every sample compiled from scratch: slower than a steady-state call.
    assert min(m.samples) > m.details["steady_s"]
    assert m.pairing == "first"
    assert m.names == harness.pairing_names("first-call", "first")
    assert m.contention.wall_s > 0


@pytest.mark.slow
def test_batch1_latency_times_the_compiled_pairing_pytorch_over_jax():
    m = latency.batch1_of(harness.Ctx(True), "smoke")
    assert len(m.samples) >= verdict_rule.MIN_RATIOS
    assert all(math.isfinite(s) and s > 0 for s in m.samples)
    assert m.pairing == "compiled" and m.names == ("torch.compile", "JAX jit")
    assert "16 tokens" in m.what and m.contention is not None


@pytest.mark.slow
def test_dynamic_shapes_divides_jax_by_pytorch_as_the_claim_does():
    m = latency.dynamic_shapes(harness.Ctx(True))
    assert m.pairing == "article"
    assert m.names == ("JAX jit, new lengths", "PyTorch eager")
    assert len(m.samples) >= verdict_rule.MIN_RATIOS
    med = m.details["median_s"]
    # JAX recompiles for every new length: far slower than eager PyTorch here.
    assert med["JAX jit, new lengths"] > med["PyTorch eager"]


def test_launch_chain_gives_seconds_per_op_and_waits_for_the_device():
    import torch

    syncs = []
    m = latency.launch_chain(torch.zeros(1), lambda: syncs.append(1), ops=50, rounds=7)
    assert len(m.samples) == 7 and len(syncs) == 8  # a warm-up, then every round
    assert all(0 < s < 1e-2 for s in m.samples)
    assert m.pairing is None and m.names[1] == "each eager op"
    assert m.details["ops"] == 50 and "50 one-element eager adds" in m.what


def test_eager_launch_never_runs_on_a_cpu(monkeypatch):
    import torch

    def no_gpu(*_):
        raise AssertionError("eager-launch touched CUDA on a CPU target")

    monkeypatch.setattr(torch.cuda, "synchronize", no_gpu)
    with pytest.raises(verdict_rule.NotTestable, match="CUDA GPU only"):
        latency.eager_launch(harness.Ctx(True))


def test_eager_launch_on_a_gpu_synchronizes_the_device(monkeypatch):
    ctx, syncs = fake_cuda_ctx(monkeypatch)
    m = latency.eager_launch(ctx)
    assert len(m.samples) == ctx.size(20, 8) >= verdict_rule.MIN_RATIOS
    assert len(syncs) == len(m.samples) + 1
    assert m.details["ops"] == ctx.size(2_000, 500)
