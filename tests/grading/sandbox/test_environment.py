"""The kernel's environment, IPython profile and kernelspec."""

from __future__ import annotations

import json
import sys

from course_utils.grading.sandbox import environment
from tests.grading.helpers import ROOT


def test_kernel_env_keeps_what_frameworks_need_and_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_x")
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    env = environment.submission_kernel_env(120.7, "run123", smoke=False)
    assert "AWS_SECRET_ACCESS_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["XLA_FLAGS"].startswith("--xla") and env["OMP_NUM_THREADS"] == "1"
    assert env[environment.RUN_ENV] == "run123"
    assert env[environment.CPU_ENV] == "120"
    assert (env["COURSE_GRADING"], env["COURSE_SMOKE"]) == ("1", "0")
    assert env["PYTHONPATH"].split(":")[0] == str(ROOT)
    assert environment.CPU_ENV not in environment.worker_env(env)
    assert environment.worker_env(env)[environment.RUN_ENV] == "run123"


def test_no_variant_of_the_instructors_shell_reaches_a_kernel(monkeypatch):
    monkeypatch.setenv(
        "COURSE_VARIANT", '{"student": "ada", "seed": "0123456789abcdef"}'
    )
    monkeypatch.setenv("COURSE_VARIANT_SECRET_FILE", "/home/me/.course-secret")
    monkeypatch.setenv("COURSE_SOMETHING", "kept")
    env = environment.submission_kernel_env(60, "run123", smoke=True)
    assert not [k for k in env if k.startswith("COURSE_VARIANT")]
    assert env["COURSE_SOMETHING"] == "kept"


def test_no_compiled_program_cache_of_the_shell_reaches_a_kernel(monkeypatch):
    """One cache folder for every student would let one student's kernel plant a
    program that another's runs."""
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/home/me/jax-cache")
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/home/me/inductor")
    monkeypatch.setenv("TRITON_CACHE_DIR", "/home/me/triton")
    monkeypatch.setenv("TORCH_HOME", "/home/me/torch")
    env = environment.submission_kernel_env(60, "run123", smoke=True)
    assert [k for k in env if k.endswith("CACHE_DIR")] == []
    assert env["TORCH_HOME"] == "/home/me/torch"


def test_profile_shows_warnings_after_the_strict_startup(tmp_path):
    root = environment.submission_ipython_dir(tmp_path)
    startup = sorted(p.name for p in (tmp_path / "ipython").rglob("startup/*.py"))
    assert root.startswith(str(tmp_path))
    assert startup[-1] == "01-course-grader-warnings.py" and len(startup) >= 2
    assert (
        "'always'"
        in (
            tmp_path / "ipython" / "profile_default" / "startup" / startup[-1]
        ).read_text()
    )


def test_kernel_spec_starts_the_grading_kernel_without_history(tmp_path):
    folder = environment.kernel_spec(tmp_path)
    spec = json.loads((folder / environment.KERNEL_NAME / "kernel.json").read_text())
    assert spec["argv"][:3] == [
        sys.executable,
        "-m",
        "course_utils.grading.sandbox.kernel_process",
    ]
    assert "--HistoryManager.hist_file=:memory:" in spec["argv"]
    assert spec["interrupt_mode"] == "signal"
    environment.wrap_kernel(folder, lambda argv: ["wrapper", "--", *argv])
    spec = json.loads((folder / environment.KERNEL_NAME / "kernel.json").read_text())
    assert spec["argv"][:3] == ["wrapper", "--", sys.executable]
