"""Free local TCP ports for a launch's rendezvous (torchrun's master, JAX's coordinator).

A port counts as free only when the loopback and the wildcard addresses (IPv4,
and IPv6 where usable) can all bind it. Only the standard library is imported.
"""

from __future__ import annotations

import contextlib
import socket
import sys


def _bind_ok(family: int, host: str, port: int) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            if family == socket.AF_INET6:
                with contextlib.suppress(OSError):
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind((host, port))
        return True
    except OSError:
        return False


def port_in_use(port: int) -> bool:
    """Whether a local TCP port is taken (on the loopback or on any address).

    The JAX coordinator binds ``[::]`` (all addresses, IPv4 too), so a port
    is only free when both the loopback and the wildcard addresses can bind it.
    """
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port_in_use: port must be an int in 1..65535, got {port!r}")
    checks = [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0")]
    if socket.has_ipv6 and _bind_ok(socket.AF_INET6, "::", 0):  # IPv6 usable here
        checks.append((socket.AF_INET6, "::"))
    results = [_bind_ok(family, host, port) for family, host in checks]
    return not all(results)


REFUSED = (
    "This machine refuses TCP sockets on the loopback, so torchrun and jax.distributed "
    "cannot start their processes here, and the cells that read their reports show nothing"
)


def loopback_refused() -> str | None:
    """:data:`REFUSED` when no TCP socket can be bound on 127.0.0.1 (a sandbox), else ``None``.

    A lent TPU machine without network refuses every internet socket, the loopback
    included. ``COURSE_NO_LOOPBACK=1`` makes any machine answer as such a one.
    """
    import os

    if os.environ.get("COURSE_NO_LOOPBACK", "").strip() in ("1", "true", "yes"):
        return REFUSED
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
    except OSError:
        return REFUSED
    return None


def free_port(tries: int = 50) -> int:
    """A TCP port that is free right now on every local address."""
    for _ in range(tries):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        except OSError as err:  # a sandbox without network (a lent TPU machine, say)
            raise OSError(
                err.errno,
                f"free_port: this machine refuses TCP sockets on the loopback "
                f"({err.strerror or err}); torchrun and jax.distributed meet over TCP, "
                "so their processes cannot start here. A machine with a loopback "
                "network (a laptop, Colab, a TPU VM) runs them",
            ) from err
        if not port_in_use(port):
            return port
    raise RuntimeError(f"free_port: no free TCP port found in {tries} tries")


def pick_port(port: int | None = None) -> int:
    """``port`` when it is free, else a free one (saying so when ``port`` was busy)."""
    if port is None:
        return free_port()
    if port_in_use(port):
        chosen = free_port()
        print(
            f"port {port} is already in use; using port {chosen} instead",
            file=sys.stderr,
        )
        return chosen
    return port
