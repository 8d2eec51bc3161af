"""course_utils.tooling.device_check.probe: the machine's facts and versions (child processes faked)."""

from __future__ import annotations

from pathlib import Path

from course_utils.tooling.device_check import probe as device_probe
from course_utils.tooling.device_check import steps as device_steps

ROOT = Path(__file__).resolve().parents[3]


class Dist:
    def __init__(self, name, version):
        self.metadata = {"Name": name}
        self.version = version


DISTS = [
    Dist("torch", "2.11.0+cu128"),
    Dist("jax", "0.7.2"),
    Dist("jaxlib", "0.7.2"),
    Dist("jax_cuda12_plugin", "0.7.2"),
    Dist("jax-cuda12-pjrt", "0.7.2"),
    Dist("libtpu", "0.0.21.1"),
    Dist("torch_xla", "2.9.0"),
    Dist("flax", "0.11.2"),
    Dist("torchvision", "0.26.0"),
    Dist("jaxtyping", "0.3.2"),
    Dist("optax", "0.2.8"),
]


def test_pins_keep_the_frameworks_and_plugins_and_nothing_else(monkeypatch):
    monkeypatch.setattr(device_probe.metadata, "distributions", lambda: DISTS)
    assert device_probe.pins() == [
        "jax-cuda12-pjrt==0.7.2",
        "jax-cuda12-plugin==0.7.2",
        "jax==0.7.2",
        "jaxlib==0.7.2",
        "libtpu==0.0.21.1",
        "torch-xla==2.9.0",
        "torch==2.11.0+cu128",
        "torchvision==0.26.0",  # built against that torch: kept with it
    ]


def test_versions_list_plugins_and_what_torch_says_of_cuda(monkeypatch):
    monkeypatch.setattr(device_probe.metadata, "distributions", lambda: DISTS)
    v = device_probe.versions({"cuda": "12.8", "cudnn": 91002})
    assert (v["jax"], v["flax"], v["torch"], v["orbax-checkpoint"]) == (
        "0.7.2",
        "0.11.2",
        "2.11.0+cu128",
        None,
    )
    assert v["jax_plugins"] == {
        "jax-cuda12-pjrt": "0.7.2",
        "jax-cuda12-plugin": "0.7.2",
    }
    assert (v["libtpu"], v["torch_cuda"], v["torch_cudnn"]) == (
        "0.0.21.1",
        "12.8",
        91002,
    )
    assert v["python"].count(".") == 2


def test_a_probe_that_crashes_reports_an_unknown_accelerator(monkeypatch):
    monkeypatch.setattr(
        device_steps,
        "run_command",
        lambda cmd, **kw: (1, "Traceback\nRuntimeError: CUDA init failed"),
    )
    got = device_probe.probe_in_child(ROOT, 10.0)
    assert got["host"]["accelerator"] == "unknown"
    assert "CUDA init failed" in got["host"]["error"]
