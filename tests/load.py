"""How busy this machine is, for deadlines that must not fail a test only because it is busy."""

from __future__ import annotations

import math
import os


def per_core() -> float:
    """The 1-minute load average per CPU core (0.0 where the OS does not report it)."""
    if not hasattr(os, "getloadavg"):
        return 0.0
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def stretched(seconds: float) -> int:
    """``seconds`` on an idle machine, times the load per core when that is above 1, in whole
    seconds rounded up (nbclient's timeouts accept integers only)."""
    return math.ceil(seconds * max(1.0, per_core()))
