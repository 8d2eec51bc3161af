"""course_utils.claims.benchmarks: measure() on device kinds, with matched precision."""

import numpy as np
import pytest

from course_utils.claims import benchmarks, devices, registry, verdict_rule
from tests.claims.fakes import (
    GPU_BOTH,
    GPU_JAX_ONLY,
    GPU_TORCH_ONLY,
    TPU,
    fake_jax_gpu,
)


def test_every_claim_has_a_benchmark():
    ids = [c.id for c in registry.CLAIMS]
    assert set(ids) == set(benchmarks.BENCHMARKS) == set(registry.FRAMEWORKS)
    with pytest.raises(KeyError, match="no benchmark"):
        benchmarks.measure("nope", smoke=True)


def test_claims_beyond_one_machine_say_why():
    for claim_id in ("tpu-llm", "huge-scale"):
        with pytest.raises(verdict_rule.NotTestable, match="needs"):
            benchmarks.measure(claim_id, smoke=True)


@pytest.mark.parametrize(
    "claim_id, reach, kind, match",
    [
        (
            "higher-order",
            TPU,
            "tpu",
            r"same device kind \(TPU\), but PyTorch reaches a TPU only through",
        ),
        ("compile-matmul", TPU, "tpu", "torch_xla or TorchTPU .*neither is installed"),
        (
            "train-throughput",
            GPU_JAX_ONLY,
            "gpu",
            r"same device kind \(GPU\), but PyTorch sees",
        ),
        ("first-call", GPU_TORCH_ONLY, "gpu", "measured on the CPU only"),
        ("batch1-latency", GPU_BOTH, "gpu", "measured on the CPU only"),
        ("eager-launch", GPU_BOTH, "cpu", "measured on the GPU only"),
        ("eager-launch", GPU_JAX_ONLY, "gpu", "PyTorch sees no CUDA GPU"),
        ("train-throughput", GPU_BOTH, "cpu", "measured on the GPU only"),
        ("train-memory", GPU_BOTH, "cpu", "measured on the GPU only"),
        ("train-memory", TPU, "tpu", "measured on the GPU only"),
    ],
)
def test_measure_refuses_a_device_kind_with_the_reason(claim_id, reach, kind, match):
    target = next(
        t for t in devices.plan_devices("all", **reach).targets if t.kind == kind
    )
    with pytest.raises(verdict_rule.NotTestable, match=match):
        benchmarks.measure(claim_id, smoke=True, target=target)


def test_measure_matches_precision_records_it_and_restores_it(monkeypatch):
    import jax
    import torch

    seen = {}

    def fake_benchmark(ctx):
        seen["jax"] = jax.config.jax_default_matmul_precision
        seen["torch"] = torch.get_float32_matmul_precision()
        seen["tf32"] = (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )
        seen["devices"] = (ctx.torch_device.type, ctx.jax_device.platform)
        return verdict_rule.Measured([2.0, 2.0], "fake")

    monkeypatch.setitem(benchmarks.BENCHMARKS, "compile-matmul", fake_benchmark)
    gpu = devices.plan_devices("accelerator", **GPU_TORCH_ONLY).targets[0]
    before = torch.get_float32_matmul_precision()
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    jax_before = jax.config.jax_default_matmul_precision  # earlier tests may set it
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        m = benchmarks.measure("compile-matmul", smoke=True, target=gpu)
        after = (
            jax.config.jax_default_matmul_precision,
            torch.get_float32_matmul_precision(),
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )
    finally:
        torch.set_float32_matmul_precision(before)
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    assert seen == {
        "jax": "highest",
        "torch": "highest",
        "tf32": (False, False),
        "devices": ("cuda", "cpu"),
    }  # PyTorch on CUDA; JAX unused, left on the CPU
    assert after == (jax_before, "high", True, True)
    c = m.conditions
    assert (
        c["device"] == "gpu"
        and c["dtype"] == "float32"
        and c["frameworks"] == ["torch"]
    )
    assert c["precision"] == {
        "jax_matmul": "highest",
        "torch_matmul": "highest",
        "torch_cuda_tf32": False,
        "torch_cudnn_tf32": False,
    }
    assert c["threads"]["torch_threads"] == torch.get_num_threads()


def test_measure_puts_both_frameworks_on_the_targets_device_kind(monkeypatch):
    import torch

    cpu0 = fake_jax_gpu(monkeypatch)
    seen = []

    def fake_benchmark(ctx):
        seen.append(
            (ctx.torch_device, ctx.jax_device, ctx.jax_put(np.ones(2)).devices())
        )
        return verdict_rule.Measured([1.0], "fake")

    monkeypatch.setitem(benchmarks.BENCHMARKS, "higher-order", fake_benchmark)
    gpu = devices.plan_devices("accelerator", **GPU_BOTH).targets[0]
    benchmarks.measure("higher-order", smoke=True, target=gpu)
    assert seen == [
        (torch.device("cuda"), cpu0, {cpu0})
    ]  # the fake "gpu" is the CPU here


def test_claims_sharing_a_benchmark_share_one_measurement(monkeypatch):
    assert benchmarks.BENCHMARKS["higher-order"] is benchmarks.BENCHMARKS["jax-2-5x"]
    calls = []

    def fake_benchmark(ctx):
        calls.append(ctx.smoke)
        return verdict_rule.Measured(
            [float(len(calls))] * 6, "fake", pairing="compiled"
        )

    for claim_id in ("higher-order", "jax-2-5x"):
        monkeypatch.setitem(benchmarks.BENCHMARKS, claim_id, fake_benchmark)
    monkeypatch.setattr(benchmarks, "_LAST", {})
    first = benchmarks.measure("higher-order", smoke=True)
    second = benchmarks.measure("jax-2-5x", smoke=True)
    assert len(calls) == 1 and second.samples == first.samples == [1.0] * 6
    assert second.details == {"same_measurement_as": "higher-order"}
    assert second is not first and second.conditions == first.conditions
    # Each claim takes it once: the next run of either times afresh ...
    assert benchmarks.measure("higher-order", smoke=True).samples == [2.0] * 6
    # ... and so does another size, or the same claim again.
    assert benchmarks.measure("jax-2-5x", smoke=False).samples == [3.0] * 6
    assert benchmarks.measure("jax-2-5x", smoke=False).samples == [4.0] * 6
    assert calls == [True, True, False, False]
