"""The grading kernel's entry point: the CPU-time limit is set before IPython starts."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

from course_utils.grading.sandbox import kernel_process
from tests.grading.helpers import ROOT

SHOW = (
    "import resource\n"
    "from course_utils.grading.sandbox.kernel_process import limit_cpu\n"
    "limit_cpu()\n"
    "print(*resource.getrlimit(resource.RLIMIT_CPU))\n"
)


def _limits(value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != kernel_process.CPU_ENV}
    if value is not None:
        env[kernel_process.CPU_ENV] = value
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=env,
    ).stdout.split()


def test_cpu_limit_from_the_environment():
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY:
        assert _limits("7") == ["7", "12"]  # SIGXCPU at 7 s, SIGKILL at 12 s
    else:
        assert int(_limits("7")[1]) <= hard
    assert _limits(None) == [str(soft), str(hard)]
    assert _limits("0") == [str(soft), str(hard)]


def test_the_entry_point_runs_as_a_module():
    res = subprocess.run(
        [sys.executable, "-m", "course_utils.grading.sandbox.kernel_process", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    assert "ipykernel" in res.stdout.lower() or "kernel" in res.stdout.lower()


def test_a_huge_message_is_cut_before_it_is_sent(monkeypatch):
    from jupyter_client.session import Session

    monkeypatch.setattr(Session, "serialize", Session.serialize)  # restored after
    kernel_process.cap_messages(limit=100_000)
    session = Session(key=b"k")
    msg = session.msg(
        "error", {"ename": "ValueError", "evalue": "E" * 1_000_000, "traceback": []}
    )
    frames = session.serialize(msg)
    assert sum(len(f) for f in frames) <= 100_000
    assert b"truncated by the grader" in frames[-1]
    small = session.msg("stream", {"name": "stdout", "text": "hi"})
    assert json.loads(session.serialize(small)[-1]) == small["content"]


def test_the_process_limit_comes_from_the_environment():
    code = (
        "import resource\nfrom course_utils.grading.sandbox.kernel_process import limit_processes\n"
        "limit_processes()\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    )
    env = dict(os.environ, **{kernel_process.NPROC_ENV: "777"})
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert out.stdout.strip() == "777", out.stderr


def test_a_read_only_profile_is_copied_into_the_kernels_own_tmp(tmp_path):
    source = tmp_path / "profile" / "profile_default" / "startup"
    source.mkdir(parents=True)
    (source / "00-x.py").write_text("x = 1\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code = (
        "import os\nfrom course_utils.grading.sandbox.kernel_process import private_ipython\n"
        "private_ipython()\nprint(os.environ['IPYTHONDIR'], kernel_env in os.environ)"
    ).replace("kernel_env", repr(kernel_process.IPYTHON_ENV))
    env = dict(
        os.environ,
        TMPDIR=str(scratch),
        **{kernel_process.IPYTHON_ENV: str(tmp_path / "profile")},
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert out.stdout.split() == [str(scratch / "ipython"), "False"], out.stderr
    assert (scratch / "ipython" / "profile_default" / "startup" / "00-x.py").exists()
