"""env: each framework's device and the rules behind it, simulated CPUs, precision,
setup and report."""

import subprocess
import sys
import textwrap
import warnings

import pytest

from course_utils import devices, env


def test_report_fields():
    rep = env.report()
    for key in (
        "python",
        "jax",
        "torch",
        "flax",
        "optax",
        "jax_devices",
        "accelerator",
        "torch_threads",
        "jax_matmul_precision",
        "torch_float32_matmul_precision",
    ):
        assert key in rep.info, key
    assert rep["accelerator"] in ("cpu", "gpu", "tpu")
    assert "| jax |" in rep._repr_markdown_()
    assert "torch" in rep.line()


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


# ------------------------------------------------------------- precision and setup


def test_set_precision_float32_then_tf32_in_both_frameworks():
    import jax
    import torch

    before = env.precision()
    try:
        p = env.set_precision("tf32")
        assert p == {
            "name": "tf32",
            "jax": "tensorfloat32",
            "torch_matmul": "tf32",
            "torch_conv": "tf32",
        }
        assert jax.config.jax_default_matmul_precision == "tensorfloat32"
        p = env.set_precision("float32")
        assert p["name"] == "float32" and p["jax"] == "highest"
        assert torch.get_float32_matmul_precision() == "highest"
        assert torch.backends.cudnn.allow_tf32 is False
        # torch.export reads the flags set_precision writes: it must still work
        torch.export.export(torch.nn.Linear(3, 2), (torch.ones(4, 3),))
    finally:
        env.set_precision("float32" if before["name"] == "float32" else "tf32")


def test_precision_names_the_frameworks_untouched_defaults():
    import jax
    import torch

    before = env.precision()["name"]
    try:
        jax.config.update("jax_default_matmul_precision", None)
        torch.set_float32_matmul_precision("highest")
        torch.backends.cudnn.allow_tf32 = True  # cuDNN's own default
        assert env.precision()["name"] == "framework defaults"
    finally:
        env.set_precision("float32" if before == "float32" else "tf32")


def test_precision_flags_put_back_what_was_set_before():
    before = env.precision_flags()
    try:
        env.set_precision("tf32")
        saved = env.precision_flags()
        env.set_precision("float32")
        env.restore_precision(saved)
        assert env.precision()["name"] == "tf32"
        assert env.precision_flags() == saved
    finally:
        env.restore_precision(before)


@pytest.mark.slow
def test_the_new_precision_flags_alone_still_break_torch_export():
    # Why set_precision writes torch's older flags: the per-backend fp32_precision
    # setters leave cudnn.allow_tf32 behind, and torch.export reads it. When this
    # export passes, set_precision may switch to the new flags.
    out = _run("""
        import torch
        if not hasattr(torch.backends.cudnn, "conv"):
            print("no fp32_precision in this torch")
            raise SystemExit
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
        torch.backends.cudnn.rnn.fp32_precision = "ieee"
        try:
            torch.export.export(torch.nn.Conv1d(1, 1, 2), (torch.ones(1, 1, 4),))
            print("exported")
        except RuntimeError as err:
            print("raised:", str(err).splitlines()[0][:60])
        """)
    assert out.returncode == 0, out.stderr
    assert "exported" not in out.stdout, (
        "torch.export now works after the new fp32_precision flags alone: "
        "env.set_precision can set those instead of the older flags"
    )


def test_set_precision_rejects_unknown_names():
    with pytest.raises(ValueError, match="float32"):
        env.set_precision("fp32")


@pytest.mark.slow
def test_setup_in_a_fresh_process_sets_memory_policy_before_jax_starts():
    out = _run("""
        import os
        from course_utils import devices, env
        s = env.setup(cpu_devices=3, verbose=False)
        import jax, torch
        print(os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"], len(jax.devices("cpu")),
              s.precision["name"], s.compared_kind, s.problem, env.report().line())
        t, j = s.pair()
        print(t.type, j.platform, len(s.cpu_devices))
    """)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()[-2:]
    assert first.startswith("false 3 float32 cpu None ")
    assert "precision: float32" in first
    assert second == "cpu cpu 3"


def test_setup_reports_a_mismatch_loudly(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    try:
        s = env.setup(verbose=True)
    finally:
        env.set_precision("float32")
    assert "jax[cuda13]" in s.problem
    assert "WARNING: " in capsys.readouterr().out


def test_setup_one_kind_moves_both_frameworks_to_the_cpu_on_a_tpu_machine(
    monkeypatch, capsys
):
    import jax

    fake_tpu = type("FakeTpu", (), {"platform": "tpu", "device_kind": "TPU v5e"})()
    real_devices = jax.devices
    monkeypatch.setattr(
        jax, "devices", lambda *a: real_devices(*a) if a else [fake_tpu]
    )
    monkeypatch.setattr(devices, "tpu_present", lambda: True)
    updates = []
    monkeypatch.setattr(jax.config, "update", lambda k, v: updates.append((k, v)))
    s = env.setup(one_kind=True)
    assert env.device_kind(s.jax_device) == "cpu" and s.torch_device.type == "cpu"
    assert ("jax_default_device", s.jax_device) in updates
    out = capsys.readouterr().out
    assert "PyTorch stays on the CPU on this TPU machine" in out
    # the device rule: comparisons on the CPU, JAX alone keeps the chip
    assert (
        "Comparisons run both frameworks on the CPU; what shows JAX alone runs on the TPU."
        in out
    )
    assert s.jax_alone is fake_tpu and s.accelerator is fake_tpu
    assert s.pair()[1].platform == "cpu"
    assert s.alone_label == "JAX on the TPU, not a framework comparison"
    assert "JAX alone on tpu" in s.line()
    # without one_kind JAX keeps the TPU
    s = env.setup(one_kind=False, verbose=False)
    assert s.jax_device is fake_tpu and s.compared_kind == "cpu"
    assert s.jax_alone is fake_tpu


def test_the_device_rule_on_a_cpu_and_on_a_gpu_both_frameworks_share():
    import jax
    import torch

    cpu = jax.devices("cpu")[0]
    s = env.Setup(cpu, torch.device("cpu"), {"name": "float32"}, {})
    assert s.jax_alone is cpu and s.accelerator is None
    assert s.alone_label == "JAX on the CPU"
    assert (
        s.rule
        == "Both frameworks run on the CPU, and so does everything JAX does alone."
    )
    fake_gpu = type("FakeGpu", (), {"platform": "gpu", "device_kind": "NVIDIA L4"})()
    s = env.Setup(
        fake_gpu, torch.device("cuda"), {"name": "float32"}, {}, accelerator=fake_gpu
    )
    assert s.compared_kind == "gpu" and s.jax_alone is fake_gpu
    assert s.alone_label == "JAX on the GPU"
    assert s.pair() == (torch.device("cuda"), fake_gpu)


def test_float32_precision_silences_torch_compiles_tf32_advice():
    """On a GPU, torch.compile advises TF32 at every compile; the course chose float32."""
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        env.set_precision("float32")
        warnings.warn(
            "TensorFloat32 tensor cores for float32 matrix multiplication available "
            "but not enabled. Consider setting `torch.set_float32_matmul_precision('high')`",
            UserWarning,
            stacklevel=1,
        )
        warnings.warn("any other warning", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["any other warning"]


# ------------------------------------------------- memory and child processes


def test_memory_policy_leaves_a_users_choice_alone():
    assert env.memory_policy({}) == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert env.memory_policy({"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}) == {}
    assert env.memory_policy({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == {}


def test_importing_placement_imports_no_framework():
    code = (
        "import sys, course_utils.env; "
        "print([m for m in ('jax', 'torch') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stderr


def test_child_env_keeps_a_child_off_the_tpu_this_process_holds(monkeypatch):
    # Only one process at a time may open a TPU's chips (libtpu's lock).
    import types

    import jax

    jax.devices()  # the backends start
    base = {"PATH": "/bin"}
    got = env.child_env(base)
    assert got["PATH"] == "/bin" and "JAX_PLATFORMS" not in got  # CPU: nothing held
    assert got["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"  # the memory policy
    tpu = types.SimpleNamespace(platform="tpu")
    monkeypatch.setattr(jax, "devices", lambda *a: [tpu])
    assert env.child_env(base)["JAX_PLATFORMS"] == "cpu"
    assert env.child_env({"JAX_PLATFORMS": "tpu,cpu"})["JAX_PLATFORMS"] == "cpu"
    assert "JAX_PLATFORMS" not in base  # the caller's mapping is left alone
