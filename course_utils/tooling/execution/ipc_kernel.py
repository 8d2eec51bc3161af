"""A Jupyter kernel for machines that refuse internet sockets, and its kernel manager.

Jupyter's client and kernel talk over TCP on 127.0.0.1 unless told to use Unix
sockets (``ipc``). Even then ipykernel binds one TCP socket of its own: the pipe that
carries the output of forked subprocesses to IOPub (``IOPubThread._setup_pipe_in``).
Where internet sockets are refused outright (a gVisor sandbox without network, such as
a lent TPU machine), libzmq's address lookup for that bind aborts the whole kernel
(``Address family not supported by protocol (src/ip_resolver.cpp:542)``) instead of
raising the error ipykernel would catch. Run as ``python -m
course_utils.tooling.execution.ipc_kernel -f CONNECTION_FILE``, this module starts ipykernel
with that pipe left out, which is what ipykernel itself does when the bind fails: the
notebook's own output is unchanged; output printed by forked subprocesses is not shown.

:class:`IPCKernelManager` starts that kernel over Unix sockets; the notebook runner uses
it where TCP on the loopback is refused (:func:`course_utils.tooling.execution.runner.kernel_options`),
and the test session's ``conftest.py`` gives nbval :class:`SyncIPCKernelManager` there.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from jupyter_client.manager import AsyncKernelManager, KernelManager
from traitlets import default

LAUNCHER = "ipykernel_launcher"


class SyncIPCKernelManager(KernelManager):
    """jupyter_client's kernel manager over Unix sockets, starting this module's kernel,
    for clients that drive a kernel synchronously (nbval's)."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    @default("ip")
    def _default_ip(self) -> str:
        return _socket_prefix()

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        cmd = super().format_kernel_cmd(extra_arguments)
        return [__name__ if part == LAUNCHER else part for part in cmd]


class IPCKernelManager(SyncIPCKernelManager, AsyncKernelManager):
    """The same, asynchronous (papermill's, through nbclient)."""


def _socket_prefix() -> str:
    """Where a kernel's socket files go: an absolute path in Jupyter's runtime folder.

    jupyter_client's own default for ipc is ``kernel-ipc``, relative, and taken before the
    connection file is named: a kernel started in the notebook's folder then binds its
    sockets where a client in another folder never looks.
    """
    import uuid

    from jupyter_core.paths import jupyter_runtime_dir

    folder = jupyter_runtime_dir()
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"kernel-{uuid.uuid4().hex[:12]}-ipc")


def _without_pipe(thread: Any) -> None:
    """``IOPubThread._setup_pipe_in`` as ipykernel runs it when the bind fails."""
    thread._pipe_flag = False


def main() -> None:
    # As ipykernel_launcher: the working folder leaves sys.path while ipykernel loads
    # (IPython puts it back for the notebook's own imports).
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]
    from ipykernel import iostream
    from ipykernel.kernelapp import launch_new_instance

    iostream.IOPubThread._setup_pipe_in = _without_pipe
    launch_new_instance()


if __name__ == "__main__":
    main()
