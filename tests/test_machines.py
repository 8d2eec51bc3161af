"""Each kind of machine students use, faked: its install plan, the environment
settings `env.setup` picks, and what `course doctor` says when the two frameworks
end up on different devices."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import pytest

from course_utils import cli, devices, env
from course_utils.install import frameworks as install


@dataclass(frozen=True)
class Machine:
    name: str
    facts: install.Facts  # what the install sees
    jax_kind: str  # where JAX's default device is, once installed as planned
    cuda: bool  # torch.cuda.is_available()
    torch_cuda: str | None  # torch.version.cuda
    tpu: bool
    torch_xla: bool = False
    jax_plugin: str | None = None  # the installed jax CUDA plugin


MACHINES = [
    Machine(
        "workstation, CUDA 13 driver",
        install.Facts(driver_cuda=13),
        "gpu",
        True,
        "13.0",
        False,
        jax_plugin="jax-cuda13-plugin",
    ),
    Machine(
        "workstation, CUDA 12 driver",
        install.Facts(driver_cuda=12),
        "gpu",
        True,
        "12.6",
        False,
        jax_plugin="jax-cuda12-plugin",
    ),
    Machine(
        "Colab GPU",
        install.Facts(
            torch="2.11.0+cu128",
            torch_cuda="12.8",
            jax="0.7.2",
            jax_plugins=("cuda12",),
            driver_cuda=12,
            colab=True,
        ),
        "gpu",
        True,
        "12.8",
        False,
        jax_plugin="jax-cuda12-plugin",
    ),
    Machine(
        "Colab TPU",
        install.Facts(
            torch="2.9.0+cpu",
            torch_xla=True,
            jax="0.7.2",
            jax_plugins=("tpu",),
            tpu=True,
            colab=True,
        ),
        "tpu",
        False,
        None,
        True,
        torch_xla=True,
    ),
    Machine("TPU VM", install.Facts(tpu=True), "tpu", False, None, True),
    Machine(
        "Kaggle GPU",
        install.Facts(
            torch="2.6.0+cu124",
            torch_cuda="12.4",
            jax="0.5.2",
            jax_plugins=("cuda12",),
            driver_cuda=12,
            kaggle=True,
        ),
        "gpu",
        True,
        "12.4",
        False,
        jax_plugin="jax-cuda12-plugin",
    ),
    Machine("CPU laptop", install.Facts(), "cpu", False, None, False),
]
IDS = [m.name for m in MACHINES]

EXPECTED = {  # name: (jax extra the install adds, torch install kept?, torch device, compared on)
    "workstation, CUDA 13 driver": ("cuda13", False, "cuda", "gpu"),
    "workstation, CUDA 12 driver": ("cuda12", False, "cuda", "gpu"),
    "Colab GPU": (None, True, "cuda", "gpu"),
    "Colab TPU": (None, True, "cpu", "cpu"),
    "TPU VM": ("tpu", False, "cpu", "cpu"),
    "Kaggle GPU": (None, True, "cuda", "gpu"),
    "CPU laptop": (None, False, "cpu", "cpu"),
}


class FakeJaxDevice:
    def __init__(self, platform):
        self.platform = platform
        self.device_kind = {"gpu": "NVIDIA H100", "tpu": "TPU v5e"}.get(platform, "cpu")


def _fake(monkeypatch, m: Machine, *, jax_kind: str | None = None, torch_cuda="same"):
    """Make env see machine ``m`` (optionally with JAX or torch installed wrongly)."""
    import jax
    import torch

    kind = jax_kind or m.jax_kind
    real_devices = jax.devices
    monkeypatch.setattr(
        jax, "devices", lambda *a: real_devices(*a) if a else [FakeJaxDevice(kind)]
    )
    monkeypatch.setattr(jax, "default_backend", lambda: kind)
    cuda_version = m.torch_cuda if torch_cuda == "same" else torch_cuda
    monkeypatch.setattr(
        torch.cuda, "is_available", lambda: m.cuda and bool(cuda_version)
    )
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "NVIDIA H100")
    monkeypatch.setattr(torch.version, "cuda", cuda_version)
    monkeypatch.setattr(devices, "tpu_present", lambda: m.tpu)
    monkeypatch.setattr(env, "_jax_cuda_plugin", lambda: m.jax_plugin)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: (
            (object() if m.torch_xla else None)
            if name == "torch_xla"
            else real_find_spec(name, *a)
        ),
    )


@pytest.mark.parametrize("m", MACHINES, ids=IDS)
def test_install_plan_of_each_machine(m):
    extra, torch_kept, _, _ = EXPECTED[m.name]
    p = install.plan(m.facts)
    assert p.jax_extra == extra, p.summary
    assert (p.torch is None) == torch_kept, p.summary


@pytest.mark.parametrize("m", MACHINES, ids=IDS)
def test_environment_settings_of_each_machine(m, monkeypatch, capsys):
    _fake(monkeypatch, m)
    _, _, torch_dev, compared = EXPECTED[m.name]
    try:
        s = env.setup(verbose=True)
    finally:
        env.set_precision("float32")
    assert s.torch_device.type == torch_dev
    assert s.compared_kind == compared
    assert s.problem is None
    assert s.precision["name"] == "float32"
    out = capsys.readouterr().out
    if m.tpu:  # one line saying PyTorch stays on the CPU
        assert "PyTorch stays on the CPU on this TPU machine" in out
    else:
        assert out == ""


@pytest.mark.parametrize("m", MACHINES, ids=IDS)
def test_doctor_is_content_with_each_machine_as_planned(m, monkeypatch, capsys):
    _fake(monkeypatch, m)
    monkeypatch.setattr(
        cli, "_root", lambda: (_ for _ in ()).throw(cli.CourseError("x"))
    )
    cli.main(["doctor"])
    out = capsys.readouterr().out
    assert "Fix:" not in out, out


MISMATCHES = [
    # machine, JAX's kind, torch's CUDA, the fix doctor must name
    ("workstation, CUDA 13 driver", "cpu", "13.0", "jax[cuda13]"),  # jax CPU-only
    ("workstation, CUDA 12 driver", "cpu", "12.6", "jax[cuda12]"),
    ("Colab GPU", "cpu", "12.8", "env.setup()"),  # plugin installed, CUDA not loaded
    (
        "Kaggle GPU",
        "gpu",
        None,
        "CPU-only build",
    ),  # torch's CPU build next to a GPU JAX
]


@pytest.mark.parametrize("name, jax_kind, torch_cuda, fix", MISMATCHES)
def test_doctor_flags_each_mismatch_with_its_fix(
    name, jax_kind, torch_cuda, fix, monkeypatch, capsys
):
    m = next(m for m in MACHINES if m.name == name)
    if fix.startswith("jax["):
        m = Machine(
            m.name, m.facts, m.jax_kind, m.cuda, m.torch_cuda, m.tpu
        )  # no plugin
    _fake(monkeypatch, m, jax_kind=jax_kind, torch_cuda=torch_cuda)
    monkeypatch.setattr(
        cli, "_root", lambda: (_ for _ in ()).throw(cli.CourseError("x"))
    )
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "To fix:" in out and fix in out, out
