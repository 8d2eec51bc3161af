"""course_utils.tooling.execution.ipc_kernel and the runner's choice of kernel transport: notebooks
run over Unix sockets where internet sockets are refused (a sandbox without network)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_utils.tooling.execution import ipc_kernel, runner
from tests import load
from tests.tooling.execution.test_runner import write_nb

ROOT = Path(__file__).resolve().parents[3]


def test_the_manager_starts_this_module_over_unix_sockets():
    manager = ipc_kernel.IPCKernelManager(kernel_name="python3")
    assert manager.transport == "ipc"
    cmd = manager.format_kernel_cmd()
    assert (
        "course_utils.tooling.execution.ipc_kernel" in cmd
        and ipc_kernel.LAUNCHER not in cmd
    )


def test_kernel_transport_is_unix_sockets_where_tcp_is_refused(monkeypatch):
    import socket

    monkeypatch.delenv("COURSE_KERNEL_TRANSPORT", raising=False)
    assert runner.tcp_refused() is False  # this machine's loopback works
    assert runner.kernel_transport() == "tcp" and runner.kernel_options() == {}

    class Refused(socket.socket):
        def __init__(self, *args, **kwargs):
            raise OSError(97, "Address family not supported by protocol")

    monkeypatch.setattr(socket, "socket", Refused)
    assert runner.tcp_refused() is True
    assert runner.kernel_transport() == "ipc"
    manager = runner.kernel_options()["kernel_manager_class"]
    assert manager().transport == "ipc"


def test_kernel_transport_can_be_asked_for_and_a_wrong_value_is_named(monkeypatch):
    monkeypatch.setenv("COURSE_KERNEL_TRANSPORT", "IPC")
    assert runner.kernel_transport() == "ipc"
    monkeypatch.setenv("COURSE_KERNEL_TRANSPORT", "udp")
    with pytest.raises(ValueError, match="COURSE_KERNEL_TRANSPORT='udp'"):
        runner.kernel_transport()


def test_a_notebook_runs_over_unix_sockets(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_KERNEL_TRANSPORT", "ipc")
    nb = write_nb(
        tmp_path / "ipc.ipynb",
        "SMOKE = None",
        "from ipykernel import get_connection_info\n"
        "print(get_connection_info(unpack=True)['transport'])",
        tags={0: ["parameters"]},
    )
    result = runner.run_one(
        nb, tmp_path / "out", root=ROOT, smoke=True, timeout=load.stretched(120)
    )
    assert result.status == "ok", result.error
    out = nbformat.read(tmp_path / "out" / "ipc.ipynb", as_version=4)
    assert out.cells[-1].outputs[0]["text"].strip() == "ipc"


@pytest.fixture
def shim(tmp_path) -> Path:
    """A preloadable library that refuses internet sockets (tests/fixtures/noinet.c)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or not sys.platform.startswith("linux"):
        pytest.skip("needs a C compiler on Linux to build the socket-refusing shim")
    out = tmp_path / "noinet.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-o", out, ROOT / "tests/fixtures/noinet.c", "-ldl"],
        check=True,
    )
    return out


@pytest.mark.slow
def test_a_notebook_runs_where_internet_sockets_are_refused(tmp_path, shim):
    # As on a gVisor sandbox without network: libzmq aborted ipykernel's own TCP bind
    # ("Address family not supported by protocol (src/ip_resolver.cpp:542)").
    nb = write_nb(
        tmp_path / "sandboxed.ipynb",
        "SMOKE = None",
        "from ipykernel import get_connection_info\n"
        "print(get_connection_info(unpack=True)['transport'])",
        tags={0: ["parameters"]},
    )
    code = (
        "import sys; from pathlib import Path; from course_utils.tooling.execution import runner\n"
        "assert runner.tcp_refused()\n"
        f"r = runner.run_one(Path({str(nb)!r}), Path({str(tmp_path / 'out')!r}), "
        f"root=Path({str(ROOT)!r}), smoke=True, timeout={load.stretched(120)})\n"
        "print(r.status, r.error, r.output[-500:])\n"
        "sys.exit(r.status != 'ok')"
    )
    env = {**os.environ, "LD_PRELOAD": str(shim)}
    env.pop("COURSE_KERNEL_TRANSPORT", None)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = nbformat.read(tmp_path / "out" / "sandboxed.ipynb", as_version=4)
    assert out.cells[-1].outputs[0]["text"].strip() == "ipc"


@pytest.mark.slow
def test_nbval_runs_a_notebook_where_internet_sockets_are_refused(shim):
    # The test session's conftest gives nbval the same kernel; its folder differs from
    # the client's, so the socket files must not be named relative to either.
    folder = ROOT / "build" / "ipc-nbval"
    folder.mkdir(parents=True, exist_ok=True)
    nb = write_nb(
        folder / "over_ipc.ipynb",
        "from ipykernel import get_connection_info\n"
        "assert get_connection_info(unpack=True)['transport'] == 'ipc'",
    )
    env = {**os.environ, "LD_PRELOAD": str(shim), "COURSE_LOWERING_CHECK": "0"}
    env.pop("COURSE_KERNEL_TRANSPORT", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + ["-p", "no:xdist", "--nbval-lax", str(nb)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=load.stretched(180),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
