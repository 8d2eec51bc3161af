"""course_utils.peaks: published peaks, a measured CPU, and speeds read against them."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

from course_utils import peaks


def test_importing_peaks_imports_no_framework():
    code = "import sys, course_utils.peaks; print('jax' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "kind, name",
    [
        ("TPU v5 lite", "TPU v5e"),
        ("TPU v6 lite", "TPU v6e"),
        ("Tesla T4", "NVIDIA T4"),
        ("NVIDIA L4", "NVIDIA L4"),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB SXM"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H200", "NVIDIA H200 SXM"),
    ],
)
def test_each_published_device_is_found_by_the_kind_its_framework_reports(kind, name):
    found = peaks.peak(kind)
    assert found is not None and found.name == name
    assert found.source.startswith("https://") and found.bytes_per_s > 0


def test_the_tpu_v5e_figures_are_the_published_ones():
    v5e = peaks.peak(type("D", (), {"device_kind": "TPU v5 lite"})())
    assert v5e.flops("bfloat16") == 197e12 and v5e.bytes_per_s == 819e9
    assert v5e.ridge() == pytest.approx(197e12 / 819e9)
    assert v5e.flops("float32") is None  # not published: share() then says None
    assert peaks.share(98.5e12, v5e) == pytest.approx(0.5)
    assert peaks.share(1e12, v5e, "float32") is None


def test_an_unknown_device_has_no_published_peak():
    assert peaks.peak(jax.devices("cpu")[0]) is None
    assert peaks.share(1e9, None) is None


def test_a_measured_cpu_peak_is_positive_and_says_it_was_measured():
    cpu = peaks.measure_cpu(n=128, megabytes=4)
    assert cpu.measured and cpu.flops("float32") > 0 and cpu.bytes_per_s > 0
    assert "timed here" in cpu.source and "measured" in str(cpu)
    assert cpu.label("float32") == "a JAX 128³ float32 matmul timed now on this CPU"
    assert " 0.0 TFLOP/s" not in str(cpu)  # a small rate still shows its digits


def test_flops_and_bytes_come_from_xlas_cost_analysis():
    n = 64
    a = jnp.ones((n, n), jnp.float32)
    compiled = jax.jit(jnp.dot).lower(a, a).compile()
    assert peaks.flops(compiled) == pytest.approx(2 * n**3, rel=0.01)
    assert peaks.bytes_accessed(compiled) >= 3 * n * n * 4


def test_mfu_is_model_flops_per_second_over_the_peak():
    v5e = peaks.PUBLISHED["TPU v5 lite"]
    assert peaks.mfu(197e12, 2.0, v5e) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="seconds"):
        peaks.mfu(1.0, 0.0, v5e)


def test_the_roofline_tells_compute_bound_from_memory_bound():
    v5e = peaks.PUBLISHED["TPU v5 lite"]  # ridge point at about 240 FLOPs per byte
    big_matmul = peaks.roofline(2 * 8192**3, 3 * 8192**2 * 2, 0.0066, v5e)
    assert big_matmul.bound == "compute-bound" and big_matmul.compute_share > 0.8
    add = peaks.roofline(2**20, 3 * 2**20 * 4, 2e-5, v5e)
    assert add.bound == "memory-bound" and "of peak bandwidth" in str(add)
    assert peaks.roofline(1.0, 1.0, 1.0, None).bound == "unknown"
    with pytest.raises(ValueError, match="positive"):
        peaks.roofline(1.0, 0.0, 1.0, v5e)


def test_xla_counts_a_scanned_loop_body_once_so_mfu_needs_the_formula():
    w = jnp.ones((8, 64, 64), jnp.float32)
    x = jnp.ones((64, 64), jnp.float32)

    def scanned(x, w):
        return jax.lax.scan(lambda h, wi: (h @ wi, None), x, w)[0]

    def unrolled(x, w):
        for i in range(8):
            x = x @ w[i]
        return x

    one = peaks.flops(jax.jit(scanned).lower(x, w).compile())
    eight = peaks.flops(jax.jit(unrolled).lower(x, w).compile())
    assert eight == pytest.approx(8 * 2 * 64**3, rel=0.01)
    assert one < eight / 4  # the loop body counted once, not eight times


def test_transformer_train_flops_is_six_per_parameter_plus_attention():
    # one token through a 2-layer model of 1,000 parameters, d_model 16, context 32
    assert (
        peaks.transformer_train_flops(1000, 2, 16, 32, 1) == 6 * 1000 + 12 * 2 * 16 * 32
    )
    assert peaks.transformer_train_flops(1000, 2, 16, 32, 64) == 64 * (6000 + 12288)


def test_a_measured_rate_names_the_device_it_timed_and_is_never_called_a_peak():
    p100 = type("D", (), {"platform": "gpu", "device_kind": "Tesla P100-PCIE-16GB"})()
    assert peaks._measured_name(p100) == "this Tesla P100-PCIE-16GB"
    assert peaks._measured_name(jax.devices("cpu")[0]) == "this CPU"
    measured = peaks.Peak(
        "this TPU v3", {"float32": 1e12}, measured=True, matmul="1024³ float32"
    )
    assert (
        measured.label("float32")
        == "a JAX 1024³ float32 matmul timed now on this TPU v3"
    )
    assert "peak" not in measured.label("float32") and "CPU" not in measured.label(
        "float32"
    )
    assert (
        peaks.PUBLISHED["T4"].label("float32") == "NVIDIA T4's published float32 peak"
    )
