"""course_utils.claims.harness: the benchmark context, matched precision, ratio helpers."""

from types import SimpleNamespace

import numpy as np
import pytest

from course_utils.claims import harness, registry, verdict_rule
from course_utils.claims.devices import DeviceTarget


def test_ctx_sizes_and_timing_target_follow_smoke_mode():
    smoke, full = harness.Ctx(True), harness.Ctx(False)
    assert (
        smoke.size("full", "small") == "small" and full.size("full", "small") == "full"
    )
    assert smoke.target_s < full.target_s
    assert smoke.target == DeviceTarget("cpu")


def test_ctx_puts_arrays_on_the_targets_device_in_either_framework():
    import jax
    import torch

    ctx = harness.Ctx(True)
    assert ctx.jax_put(np.ones(3)).devices() == {jax.devices("cpu")[0]}
    t = ctx.torch_put(np.arange(3))
    assert isinstance(t, torch.Tensor) and t.device == torch.device("cpu")
    assert ctx.torch_put(torch.ones(2)).device == ctx.torch_device
    # A PyTorch-only target leaves JAX on the CPU.
    no_jax = harness.Ctx(True, DeviceTarget("gpu", jax=False, torch="cpu"))
    assert no_jax.jax_device == jax.devices("cpu")[0]


def _settings():
    import jax
    import torch

    return (
        jax.config.jax_default_matmul_precision,
        torch.get_float32_matmul_precision(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )


@pytest.mark.parametrize("torch_cuda", [False, True])
def test_matched_precision_sets_float32_and_restores_even_after_an_error(torch_cuda):
    import jax
    import torch

    saved = _settings()
    jax.config.update("jax_default_matmul_precision", None)
    torch.set_float32_matmul_precision("high")
    torch.backends.cudnn.allow_tf32 = True
    try:
        before = _settings()
        with pytest.raises(RuntimeError, match="inside"):
            with harness.matched_precision(torch_cuda) as record:
                inside = _settings()
                raise RuntimeError("inside")
        after = _settings()
    finally:
        jax.config.update("jax_default_matmul_precision", saved[0])
        torch.set_float32_matmul_precision(saved[1])
        torch.backends.cudnn.allow_tf32 = saved[3]
    assert before == (None, "high", True, True)
    assert inside == ("highest", "highest", False, False) and after == before
    expected = {"jax_matmul": "highest", "torch_matmul": "highest"}
    if torch_cuda:
        expected |= {"torch_cuda_tf32": False, "torch_cudnn_tf32": False}
    assert record == expected


def test_compare_ratios_pair_rounds_and_medians_name_each_variant():
    cmp = SimpleNamespace(
        measurements={
            "slow": SimpleNamespace(times=[4.0, 6.0], median=5.0),
            "fast": SimpleNamespace(times=[2.0, 2.0], median=2.0),
        }
    )
    assert harness.compare_ratios(cmp, "slow", "fast") == [2.0, 3.0]
    assert harness.medians(cmp) == {"slow": 5.0, "fast": 2.0}


def _cmp(times, contention="quiet"):
    return SimpleNamespace(
        measurements={
            name: SimpleNamespace(
                times=t, median=float(np.median(t)), first_call_s=10.0 * t[0]
            )
            for name, t in times.items()
        },
        contention=contention,
    )


def test_paired_builds_the_measurement_of_a_registered_pairing():
    num, den = harness.pairing_names("batch1-latency", "compiled")
    assert (num, den) == ("torch.compile", "JAX jit")
    cmp = _cmp({num: [3.0, 4.0], den: [1.0, 2.0]})
    m = harness.paired(cmp, "batch1-latency", "compiled", "what", {"extra": 1})
    assert m.samples == [3.0, 2.0] and m.what == "what"
    assert m.pairing == "compiled" and m.names == (num, den)
    assert m.contention == "quiet"  # the comparison's record, for the verdict
    assert m.details == {
        "median_s": {num: 3.5, den: 1.5},
        "first_call_s": {num: 30.0, den: 10.0},
        "extra": 1,
    }
    # The other way round, where the claim's ratio divides them so.
    flipped = harness.paired(cmp, "batch1-latency", "compiled", "w", names=(den, num))
    assert flipped.samples == [1 / 3, 0.5] and flipped.names == (den, num)


def test_paired_refuses_variants_the_pairing_does_not_name():
    cmp = _cmp({"PyTorch eager": [1.0], "JAX jit": [1.0]})
    with pytest.raises(ValueError, match="compares"):
        harness.paired(
            cmp, "batch1-latency", "compiled", "w", names=("PyTorch eager", "JAX jit")
        )
    with pytest.raises(KeyError, match="no pairing"):
        harness.paired(cmp, "batch1-latency", "eager", "w")


@pytest.mark.parametrize(
    "target, both, refused",
    [
        (DeviceTarget("cpu"), False, True),
        (DeviceTarget("gpu", torch=None), False, True),
        (DeviceTarget("gpu", jax=False, torch="cuda"), False, False),
        (DeviceTarget("gpu", jax=False, torch="cuda"), True, True),
        (DeviceTarget("gpu", torch="cuda"), True, False),
        (DeviceTarget("tpu", torch="cuda"), False, True),
    ],
)
def test_require_cuda_refuses_everything_but_a_cuda_gpu(target, both, refused):
    ctx = harness.Ctx(True, target)
    if not refused:
        harness.require_cuda(ctx, "train-memory", both=both)
        return
    with pytest.raises(verdict_rule.NotTestable, match="CUDA GPU only") as err:
        harness.require_cuda(ctx, "train-memory", both=both)
    assert registry.ONLY_ON["train-memory"][1] in str(err.value)
    assert ("with both frameworks" in str(err.value)) == both
