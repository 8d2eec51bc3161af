"""Start a child that Ctrl-C reaches, even when the suite runs with SIGINT ignored.

A shell that starts the suite in the background (CI, nohup) leaves SIGINT ignored, an
ignored signal stays ignored across exec, and Python then installs no KeyboardInterrupt
handler. A ``preexec_fn`` could restore it in the child, but it makes Python run the
parent's fork handlers and Python code between fork and exec (JAX, started in the same
worker, warns that this can deadlock). Instead SIGINT is at its default in the parent for
the moment of the start: a default handler stays default across exec.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def popen(cmd: list[str], **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(cmd, **kwargs)`` with SIGINT at its default in the child."""
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return subprocess.Popen(cmd, **kwargs)
    finally:
        signal.signal(signal.SIGINT, previous)
