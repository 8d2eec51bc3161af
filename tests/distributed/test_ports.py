"""distributed.ports: a free port is free, a busy one is replaced and the user told."""

import socket

import pytest

from course_utils.distributed import ports


def test_free_port_is_free_and_a_listening_port_is_not():
    port = ports.free_port()
    assert 0 < port < 65536 and not ports.port_in_use(port)
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        assert ports.port_in_use(port)


def test_pick_port_replaces_a_busy_port_and_says_so(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        chosen = ports.pick_port(busy)
    assert chosen != busy
    assert (
        f"port {busy} is already in use; using port {chosen}" in capsys.readouterr().err
    )


def test_pick_port_keeps_a_free_port():
    port = ports.free_port()
    assert ports.pick_port(port) == port


@pytest.mark.parametrize("bad", [0, 70000, "29500", None])
def test_port_in_use_rejects_bad_ports(bad):
    with pytest.raises(ValueError, match="port"):
        ports.port_in_use(bad)


def test_free_port_names_a_machine_that_refuses_tcp(monkeypatch):
    import errno
    import socket

    def refused(*args, **kwargs):
        raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")

    monkeypatch.setattr(socket, "socket", refused)
    with pytest.raises(OSError, match="refuses TCP sockets on the loopback") as err:
        ports.free_port()
    assert err.value.errno == errno.EAFNOSUPPORT
    assert "torchrun and jax.distributed" in str(err.value)


def test_loopback_refused_is_none_on_an_ordinary_machine(monkeypatch):
    monkeypatch.delenv("COURSE_NO_LOOPBACK", raising=False)
    assert ports.loopback_refused() is None


def test_loopback_refused_when_binding_fails_as_in_a_sandbox(monkeypatch):
    import errno
    import socket

    def refuse(self, address):
        raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")

    monkeypatch.delenv("COURSE_NO_LOOPBACK", raising=False)
    monkeypatch.setattr(socket.socket, "bind", refuse)
    assert ports.loopback_refused() == ports.REFUSED
    assert "refuses TCP sockets on the loopback" in ports.REFUSED


def test_course_no_loopback_makes_any_machine_refuse(monkeypatch):
    monkeypatch.setenv("COURSE_NO_LOOPBACK", "1")
    assert ports.loopback_refused() == ports.REFUSED
