"""Device detection: which device each framework uses, and the rules that choose it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from course_utils import devices, env


def _fresh_python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a new Python, where JAX has not started its backends."""
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


# ------------------------------------------------- the rules


@pytest.mark.parametrize(
    "flags, expected",
    [
        (dict(cuda=True, mps=False, tpu=False, has_torch_xla=False), ("cuda", None)),
        (dict(cuda=False, mps=True, tpu=False, has_torch_xla=False), ("mps", None)),
        (dict(cuda=False, mps=False, tpu=False, has_torch_xla=False), ("cpu", None)),
    ],
)
def test_choose_torch_device(flags, expected):
    assert devices.choose_torch_device(**flags) == expected


def test_tpu_without_torch_xla_falls_back_with_a_message():
    kind, message = devices.choose_torch_device(
        cuda=False, mps=False, tpu=True, has_torch_xla=False
    )
    assert kind == "cpu"
    assert "torch_xla" in message and "TPU" in message


def test_tpu_with_torch_xla_keeps_torch_on_the_cpu_and_says_so():
    # No lesson is written for torch_xla: moving to it silently broke compile and timing.
    kind, message = devices.choose_torch_device(
        cuda=False, mps=False, tpu=True, has_torch_xla=True
    )
    assert kind == "cpu"
    assert "torch_xla is installed" in message and "JAX uses the TPU" in message
    assert "\n" not in message


def test_accelerator_kind():
    assert devices.accelerator_kind("gpu") == "gpu"
    assert devices.accelerator_kind("cuda") == "gpu"
    assert devices.accelerator_kind("tpu") == "tpu"
    assert devices.accelerator_kind("cpu") == "cpu"


@pytest.mark.parametrize(
    "jax_kind, torch_kind, facts, expect",
    [
        ("gpu", "gpu", {}, None),
        ("cpu", "cpu", {}, None),
        ("tpu", "cpu", {}, None),  # PyTorch stays on the CPU on a TPU machine
        ("cpu", "mps", {}, None),  # JAX has no Apple GPU backend
        ("gpu", "cpu", {"torch_cuda": None}, "CPU-only build"),
        ("gpu", "cpu", {"torch_cuda": "13.0"}, "driver"),
        ("cpu", "gpu", {"torch_cuda": "13.0"}, "jax[cuda13]"),
        ("cpu", "gpu", {"torch_cuda": "12.8"}, "jax[cuda12]"),
        ("cpu", "gpu", {"torch_cuda": "12.8", "jax_cuda_plugin": True}, "env.setup()"),
    ],
)
def test_device_problem_names_the_fix(jax_kind, torch_kind, facts, expect):
    problem = devices.device_problem(jax_kind, torch_kind, **facts)
    if expect is None:
        assert problem is None
    else:
        assert expect in problem and "Fix" in problem


def test_compared_kind_keeps_both_frameworks_on_one_kind():
    assert devices.compared_kind("gpu", "gpu") == ("gpu", None)
    kind, why = devices.compared_kind("tpu", "cpu")
    assert kind == "cpu" and "tpu" in why
    assert devices.compared_kind("gpu", "cpu")[0] == "cpu"


def test_device_kind_of_both_frameworks():
    import jax
    import torch

    assert devices.device_kind(jax.devices()[0]) == "cpu"
    assert devices.device_kind(torch.device("cuda", 1)) == "gpu"
    assert devices.device_kind(torch.device("cpu")) == "cpu"


# ------------------------------------------------- each framework's device


def test_torch_device_with_fake_cuda(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert devices.torch_device(verbose=False).type == "cuda"


def test_torch_device_on_fake_tpu_prints_fallback(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(devices, "tpu_present", lambda: True)
    assert devices.torch_device().type == "cpu"
    assert "torch_xla" in capsys.readouterr().out


def test_simulate_cpu_devices_in_fresh_process():
    out = _fresh_python("""
        from course_utils.devices import simulate_cpu_devices
        devs = simulate_cpu_devices(4)
        import jax
        print(len(devs), len(jax.devices()))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "4"]


def test_simulate_cpu_devices_after_init_is_a_clear_error():
    out = _fresh_python("""
        import jax
        jax.devices()
        from course_utils.devices import simulate_cpu_devices, JaxAlreadyInitialized
        assert len(simulate_cpu_devices(1)) == 1  # fewer than present is fine
        try:
            simulate_cpu_devices(8)
        except JaxAlreadyInitialized as err:
            print("ERR", err)
    """)
    assert out.returncode == 0, out.stderr
    assert "ERR JAX is already running with 1 CPU device" in out.stdout
    assert "Restart the kernel" in out.stdout


def test_simulate_cpu_devices_rejects_bad_n():
    with pytest.raises(ValueError, match="positive int"):
        devices.simulate_cpu_devices(0)


def test_env_keeps_the_names_lessons_call():
    # lessons call env.torch_device(), env.jax_device(), env.device_kind(...)
    for name in (
        "accelerator_kind",
        "choose_torch_device",
        "compared_kind",
        "device_kind",
        "device_problem",
        "jax_device",
        "simulate_cpu_devices",
        "torch_device",
        "JaxAlreadyInitialized",
    ):
        assert getattr(env, name) is getattr(devices, name), name


def test_every_export_in_the_lessons_names_the_platform_it_runs_on():
    """``jax.export.export`` without ``platforms=`` lowers for JAX's default backend: on
    a TPU machine the TPU, while a lesson that compares both frameworks computes on the
    CPU there, and calling the export fails (lesson 06, then 12, on the lent TPU)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [
        *root.glob("notebooks/[0-9][0-9]_*.py"),
        *root.glob("solutions/[0-9][0-9]_*.py"),
    ]
    files += [root / "course_utils" / "gpt" / "export.py"]
    bare = [
        f"{path.relative_to(root)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"jax\.export\.export\(", line.split("#")[0])
        and "platforms=" not in line
    ]
    assert len(files) > 20 and not bare, bare
