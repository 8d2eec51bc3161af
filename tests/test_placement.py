"""The pure placement rules: which torch device, which kind, where comparisons run, why."""

import subprocess
import sys

import pytest

from course_utils import env, placement


@pytest.mark.parametrize(
    "flags, expected",
    [
        (dict(cuda=True, mps=False, tpu=False, has_torch_xla=False), ("cuda", None)),
        (dict(cuda=False, mps=True, tpu=False, has_torch_xla=False), ("mps", None)),
        (dict(cuda=False, mps=False, tpu=False, has_torch_xla=False), ("cpu", None)),
    ],
)
def test_choose_torch_device(flags, expected):
    assert placement.choose_torch_device(**flags) == expected


def test_tpu_without_torch_xla_falls_back_with_a_message():
    kind, message = placement.choose_torch_device(
        cuda=False, mps=False, tpu=True, has_torch_xla=False
    )
    assert kind == "cpu"
    assert "torch_xla" in message and "TPU" in message


def test_tpu_with_torch_xla_keeps_torch_on_the_cpu_and_says_so():
    # No lesson is written for torch_xla: moving to it silently broke compile and timing.
    kind, message = placement.choose_torch_device(
        cuda=False, mps=False, tpu=True, has_torch_xla=True
    )
    assert kind == "cpu"
    assert "torch_xla is installed" in message and "JAX uses the TPU" in message
    assert "\n" not in message


def test_accelerator_kind():
    assert placement.accelerator_kind("gpu") == "gpu"
    assert placement.accelerator_kind("cuda") == "gpu"
    assert placement.accelerator_kind("tpu") == "tpu"
    assert placement.accelerator_kind("cpu") == "cpu"


def test_memory_policy_leaves_a_users_choice_alone():
    assert placement.memory_policy({}) == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert placement.memory_policy({"XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}) == {}
    assert placement.memory_policy({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == {}


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
    problem = placement.device_problem(jax_kind, torch_kind, **facts)
    if expect is None:
        assert problem is None
    else:
        assert expect in problem and "Fix" in problem


def test_compared_kind_keeps_both_frameworks_on_one_kind():
    assert placement.compared_kind("gpu", "gpu") == ("gpu", None)
    kind, why = placement.compared_kind("tpu", "cpu")
    assert kind == "cpu" and "tpu" in why
    assert placement.compared_kind("gpu", "cpu")[0] == "cpu"


def test_device_kind_of_both_frameworks():
    import jax
    import torch

    assert placement.device_kind(jax.devices()[0]) == "cpu"
    assert placement.device_kind(torch.device("cuda", 1)) == "gpu"
    assert placement.device_kind(torch.device("cpu")) == "cpu"


def test_env_offers_the_rules_under_the_same_names():
    for name in (
        "MEMORY_VARS",
        "accelerator_kind",
        "choose_torch_device",
        "compared_kind",
        "device_kind",
        "device_problem",
        "memory_policy",
    ):
        assert getattr(env, name) is getattr(placement, name), name


def test_importing_placement_imports_no_framework():
    code = (
        "import sys, course_utils.placement; "
        "print([m for m in ('jax', 'torch') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stderr
