"""course_utils.claims.harness: the benchmark context, matched precision, ratio helpers."""

from types import SimpleNamespace

import numpy as np
import pytest

from course_utils.claims import harness
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
