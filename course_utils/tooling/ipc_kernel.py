"""A Jupyter kernel for machines that refuse internet sockets, and its kernel manager.

Jupyter's client and kernel talk over TCP on 127.0.0.1 unless told to use Unix
sockets (``ipc``). Even then ipykernel binds one TCP socket of its own: the pipe that
carries the output of forked subprocesses to IOPub (``IOPubThread._setup_pipe_in``).
Where internet sockets are refused outright (a gVisor sandbox without network, such as
a lent TPU machine), libzmq's address lookup for that bind aborts the whole kernel
(``Address family not supported by protocol (src/ip_resolver.cpp:542)``) instead of
raising the error ipykernel would catch. Run as ``python -m
course_utils.tooling.ipc_kernel -f CONNECTION_FILE``, this module starts ipykernel
with that pipe left out, which is what ipykernel itself does when the bind fails: the
notebook's own output is unchanged; output printed by forked subprocesses is not shown.

:class:`IPCKernelManager` starts that kernel over Unix sockets; the notebook runner uses
it where TCP on the loopback is refused (:func:`course_utils.tooling.runner.kernel_options`).
"""

from __future__ import annotations

import sys
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from traitlets import default

LAUNCHER = "ipykernel_launcher"


class IPCKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager over Unix sockets, starting this module's kernel."""

    @default("transport")
    def _default_transport(self) -> str:
        return "ipc"

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        cmd = super().format_kernel_cmd(extra_arguments)
        return [__name__ if part == LAUNCHER else part for part in cmd]


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
