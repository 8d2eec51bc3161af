"""What several claims test modules share: fake claims, device reaches, the CLI."""

import subprocess
import sys
from pathlib import Path

from course_utils.claims import verdict_rule

ROOT = Path(__file__).resolve().parents[2]
CPU_ONLY = {"jax_kinds": {"cpu"}, "torch_kinds": {"cpu"}}


CLAIM = verdict_rule.Claim(
    "fake", "fake claim | with a pipe", "000 (test)", "2x", "a / b", 1.0
)


HIGH = verdict_rule.Claim("high", "needs ten times", "001 (test)", "10x", "a / b", 10.0)


GPU_BOTH = {
    "jax_kinds": {"cpu", "gpu"},
    "torch_kinds": {"cpu", "gpu"},
    "names": {"gpu": "NVIDIA H200"},
}


GPU_JAX_ONLY = {"jax_kinds": {"cpu", "gpu"}, "torch_kinds": {"cpu"}}


GPU_TORCH_ONLY = {"jax_kinds": {"cpu"}, "torch_kinds": {"cpu", "gpu"}}


TPU = {
    "jax_kinds": {"cpu", "tpu"},
    "torch_kinds": {"cpu"},
    "names": {"tpu": "TPU v5 lite"},
}


def cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "course_utils.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def fake_jax_gpu(monkeypatch):
    """Make ``jax.devices("gpu")`` answer with the CPU device (returned), for wiring tests."""
    import jax

    cpu0 = jax.devices("cpu")[0]
    real = jax.devices
    monkeypatch.setattr(
        jax,
        "devices",
        lambda backend=None: [cpu0] if backend == "gpu" else real(backend),
    )
    return cpu0


def fake_cuda_ctx(monkeypatch, smoke=True):
    """A benchmark context whose target is a CUDA GPU that both frameworks reach, faked by the CPU.

    ``ctx.torch_device`` is the CPU, ``jax.devices("gpu")`` answers with the CPU
    device, and ``torch.cuda.synchronize`` records its calls in the returned
    list instead of touching a GPU: ``(ctx, syncs)``.
    """
    import torch

    from course_utils.claims import devices, harness

    fake_jax_gpu(monkeypatch)
    monkeypatch.setattr(
        harness.Ctx, "torch_device", property(lambda self: torch.device("cpu"))
    )
    syncs = []
    monkeypatch.setattr(
        torch.cuda, "synchronize", lambda device=None: syncs.append(device)
    )
    target = devices.DeviceTarget("gpu", "fake GPU", jax=True, torch="cuda")
    return harness.Ctx(smoke, target), syncs
