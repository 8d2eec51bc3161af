"""course_utils.claims.devices: planning device kinds, why one is not testable, detecting them."""

import pytest

from course_utils.claims import devices
from course_utils.errors import CourseError
from tests.claims.fakes import CPU_ONLY, GPU_BOTH, GPU_JAX_ONLY, GPU_TORCH_ONLY, TPU


def test_plan_on_a_cpu_only_machine_says_no_accelerator():
    plan = devices.plan_devices("all", **CPU_ONLY)
    assert [t.kind for t in plan.targets] == ["cpu"] and not plan.accelerator_present
    assert plan.note.startswith("no accelerator was present")
    assert devices.plan_devices("cpu", **CPU_ONLY).targets == plan.targets
    with pytest.raises(CourseError, match="no accelerator is present"):
        devices.plan_devices("accelerator", **CPU_ONLY)
    with pytest.raises(CourseError, match="--device must be one of"):
        devices.plan_devices("gpu", **CPU_ONLY)


def test_plan_with_a_gpu_measures_cpu_and_gpu_with_both_frameworks():
    plan = devices.plan_devices("all", **GPU_BOTH)
    cpu, gpu = plan.targets
    assert (cpu.kind, cpu.torch, cpu.jax) == ("cpu", "cpu", True)
    assert (gpu.kind, gpu.torch, gpu.jax, gpu.name) == (
        "gpu",
        "cuda",
        True,
        "NVIDIA H200",
    )
    assert plan.note == "" and plan.accelerator_present and gpu.missing == {}
    assert [
        t.kind for t in devices.plan_devices("accelerator", **GPU_BOTH).targets
    ] == ["gpu"]
    assert [t.kind for t in devices.plan_devices("cpu", **GPU_BOTH).targets] == ["cpu"]


@pytest.mark.parametrize(
    "reach, kind, absent, reason",
    [
        (GPU_JAX_ONLY, "gpu", "torch", "torch.cuda.is_available() is False"),
        (GPU_TORCH_ONLY, "gpu", "jax", "jax[cuda13]"),
        (TPU, "tpu", "torch", "torch_xla or TorchTPU (torch_tpu, beta, Python 3.12"),
    ],
)
def test_plan_says_which_framework_cannot_reach_the_accelerator(
    reach, kind, absent, reason
):
    target = devices.plan_devices("accelerator", **reach).targets[0]
    assert target.kind == kind and not target.has(absent)
    assert set(target.missing) == {absent} and reason in target.missing[absent]
    present = ({"jax", "torch"} - {absent}).pop()
    assert target.has(present)


def test_torch_xla_or_torch_tpu_installed_still_leaves_pytorch_off_the_tpu():
    plan = devices.plan_devices("accelerator", **TPU, torch_tpu_package=True)
    target = plan.targets[0]
    assert target.torch is None
    assert target.missing["torch"] == (
        "PyTorch reaches a TPU only through torch_xla or TorchTPU (torch_tpu), "
        "and these benchmarks are written for neither"
    )


def test_pytorchs_tpu_reason_is_one_sentence():
    for installed in (False, True):
        reason = (
            devices.plan_devices("accelerator", **TPU, torch_tpu_package=installed)
            .targets[0]
            .missing["torch"]
        )
        assert "." not in reason.replace("3.12", "") and ";" not in reason


def test_paired_claims_need_both_frameworks_on_the_same_device_kind():
    tpu = devices.plan_devices("accelerator", **TPU).targets[0]
    why = devices.why_not_testable(tpu, ("torch", "jax"))
    assert why.startswith("both frameworks must run on the same device kind (TPU)")
    assert "torch_xla" in why
    assert devices.why_not_testable(tpu, ("jax",)) is None  # JAX alone runs on the TPU
    assert "torch_xla" in devices.why_not_testable(tpu, ("torch",))
    gpu = devices.plan_devices("accelerator", **GPU_BOTH).targets[0]
    assert devices.why_not_testable(gpu, ("torch", "jax")) is None
    cpu = devices.plan_devices("cpu", **GPU_BOTH).targets[0]
    assert devices.why_not_testable(cpu, ("torch", "jax"), ("gpu",), "counters") == (
        "measured on the GPU only: counters"
    )
    assert devices.why_not_testable(gpu, ("torch", "jax"), ("gpu",), "counters") is None


class _FakeAccelerator:
    platform = "gpu"
    device_kind = "Fake GPU"


def test_detect_devices_reads_jax_devices_and_torch_cuda(monkeypatch):
    import jax
    import torch

    assert devices.detect_devices("all").targets[0].kind == "cpu"  # this machine
    real = jax.devices

    def fake_devices(backend=None):
        return real("cpu") if backend == "cpu" else [_FakeAccelerator()]

    monkeypatch.setattr(jax, "devices", fake_devices)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    plan = devices.detect_devices("all")
    assert [(t.kind, t.jax, t.torch) for t in plan.targets] == [
        ("cpu", True, "cpu"),
        ("gpu", True, None),
    ]
    assert (
        plan.targets[1].name == "Fake GPU"
        and "torch.cuda" in plan.targets[1].missing["torch"]
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Fake GPU (torch)")
    gpu = devices.detect_devices("accelerator").targets
    assert [(t.kind, t.jax, t.torch) for t in gpu] == [("gpu", True, "cuda")]
    monkeypatch.setattr(jax, "devices", real)  # a CPU-only jax beside a CUDA torch
    only_torch = devices.detect_devices("accelerator").targets[0]
    assert (only_torch.jax, only_torch.torch, only_torch.name) == (
        False,
        "cuda",
        "Fake GPU (torch)",
    )
    assert "JAX sees no GPU" in only_torch.missing["jax"]
    monkeypatch.setattr(jax, "devices", fake_devices)
    _FakeAccelerator.platform, _FakeAccelerator.device_kind = "tpu", "TPU v6 lite"
    try:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        tpu = devices.detect_devices("accelerator").targets[0]
    finally:
        _FakeAccelerator.platform, _FakeAccelerator.device_kind = "gpu", "Fake GPU"
    assert (tpu.kind, tpu.jax, tpu.torch, tpu.name) == (
        "tpu",
        True,
        None,
        "TPU v6 lite",
    )
