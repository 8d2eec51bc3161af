"""tests.load: deadlines widen with the measured load, never shrink."""

import os

from tests import load


def test_a_deadline_widens_with_the_load_per_core(monkeypatch):
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (4.0 * cores, 0.0, 0.0))
    assert load.per_core() == 4.0
    assert load.stretched(10) == 40.0


def test_an_idle_machine_keeps_the_deadline(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert load.per_core() == 0.0
    assert load.stretched(10) == 10.0
