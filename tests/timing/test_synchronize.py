"""course_utils.timing.synchronize: sync and where results live: every leaf waited for, each device once."""

from __future__ import annotations

import jax
import numpy as np
import torch

from course_utils import timing
from course_utils.timing import synchronize


def test_sync_waits_for_every_jax_leaf():
    a = jax.random.normal(jax.random.key(0), (600, 600))
    tree = {"x": [a @ a], "y": (a @ a @ a, np.zeros(2), 3.0)}
    out = timing.sync(tree)
    assert out is tree
    assert tree["x"][0].is_ready() and tree["y"][0].is_ready()


def test_sync_synchronises_each_torch_device_once(monkeypatch):
    seen = []
    monkeypatch.setattr(
        synchronize, "_torch_synchronize", lambda kind, dev: seen.append(kind)
    )
    timing.sync([torch.ones(2), {"b": torch.zeros(3)}, torch.empty(2, device="meta")])
    assert sorted(seen) == ["cpu", "meta"]


def test_sync_waits_on_the_gpu_each_tensor_lives_on(monkeypatch):
    # Two GPUs: torch.cuda.synchronize() alone waits for the current device only.
    calls = []
    monkeypatch.setattr(
        torch.cuda, "synchronize", lambda device=None: calls.append(device)
    )
    on_gpu = [torch.empty(1, device="meta") for _ in range(3)]
    devices = [
        torch.device("cuda", 0),
        torch.device("cuda", 1),
        torch.device("cuda", 1),
    ]

    class FakeTensor(torch.Tensor):
        pass

    fakes = []
    for t, d in zip(on_gpu, devices, strict=True):
        f = t.as_subclass(FakeTensor)
        f._fake_device = d
        fakes.append(f)
    monkeypatch.setattr(FakeTensor, "device", property(lambda self: self._fake_device))
    timing.sync(fakes)
    assert calls == [torch.device("cuda", 0), torch.device("cuda", 1)]


def test_sync_is_a_no_op_for_numpy_and_python():
    value = {"a": np.ones(3), "b": [1, 2.0, "x"]}
    assert timing.sync(value) is value


def test_compare_warns_when_variants_sit_on_different_device_kinds():
    # A GPU-vs-CPU ratio says nothing about the frameworks: the comparison must say so.
    warning = timing.mixed_devices({"PyTorch": "cpu", "JAX": "tpu", "ref": "host"})
    assert "PyTorch: cpu" in warning and "JAX: tpu" in warning
    assert "devices, not frameworks" in warning
    assert timing.mixed_devices({"a": "gpu", "b": "gpu", "c": "host"}) is None


def test_device_kinds_of_torch_tensors_on_other_devices():
    assert timing.device_kinds({"w": torch.empty(1, device="meta")}) == "meta"
    assert timing.device_kinds([1.0, np.zeros(2)]) == "host"
