import subprocess
import sys
import textwrap

import pytest

from course_utils import env


@pytest.mark.parametrize(
    "flags, expected",
    [
        (dict(cuda=True, mps=False, tpu=False, has_torch_xla=False), ("cuda", None)),
        (dict(cuda=False, mps=False, tpu=True, has_torch_xla=True), ("xla", None)),
        (dict(cuda=False, mps=True, tpu=False, has_torch_xla=False), ("mps", None)),
        (dict(cuda=False, mps=False, tpu=False, has_torch_xla=False), ("cpu", None)),
    ],
)
def test_choose_torch_device(flags, expected):
    assert env.choose_torch_device(**flags) == expected


def test_tpu_without_torch_xla_falls_back_with_a_message():
    kind, message = env.choose_torch_device(cuda=False, mps=False, tpu=True, has_torch_xla=False)
    assert kind == "cpu"
    assert "torch_xla" in message and "TPU" in message


def test_accelerator_kind():
    assert env.accelerator_kind("gpu") == "gpu"
    assert env.accelerator_kind("cuda") == "gpu"
    assert env.accelerator_kind("tpu") == "tpu"
    assert env.accelerator_kind("cpu") == "cpu"


def test_tpu_present_reads_environment(monkeypatch):
    for var in ("COLAB_TPU_ADDR", "TPU_NAME", "TPU_ACCELERATOR_TYPE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(env.os.path, "exists", lambda p: False)
    assert env.tpu_present() is False
    monkeypatch.setenv("TPU_NAME", "v5e")
    assert env.tpu_present() is True


def test_torch_device_with_fake_cuda(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert env.torch_device(verbose=False).type == "cuda"


def test_torch_device_on_fake_tpu_prints_fallback(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(env, "tpu_present", lambda: True)
    assert env.torch_device().type == "cpu"
    assert "torch_xla" in capsys.readouterr().out


def test_report_fields():
    rep = env.report()
    for key in ("python", "jax", "torch", "flax", "optax", "jax_devices", "accelerator",
                "torch_threads", "jax_matmul_precision", "torch_float32_matmul_precision"):
        assert key in rep.info, key
    assert rep["accelerator"] in ("cpu", "gpu", "tpu")
    assert "| jax |" in rep._repr_markdown_()
    assert "torch" in rep.line()


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)


def test_simulate_cpu_devices_in_fresh_process():
    out = _run("""
        from course_utils.env import simulate_cpu_devices
        devs = simulate_cpu_devices(4)
        import jax
        print(len(devs), len(jax.devices()))
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "4"]


def test_simulate_cpu_devices_after_init_is_a_clear_error():
    out = _run("""
        import jax
        jax.devices()
        from course_utils.env import simulate_cpu_devices, JaxAlreadyInitialized
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
        env.simulate_cpu_devices(0)
