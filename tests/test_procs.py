"""course_utils._procs: stopping a process tree, including children in sessions of their own."""

import subprocess
import sys
import time

import psutil

from course_utils import _procs
from tests import load

# A parent in its own session that starts a child in yet another session (as a
# Jupyter kernel does), prints the child's pid, then waits.
TREE = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                         start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""


def _tree():
    proc = subprocess.Popen(
        [sys.executable, "-c", TREE],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    child = int(proc.stdout.readline())
    return proc, child


def test_kill_process_group_stops_a_child_in_another_session():
    proc, child = _tree()
    assert psutil.pid_exists(child)
    _procs.kill_process_group(proc, grace_s=2.0)
    assert proc.poll() is not None
    # returns only after the child is gone (a zombie whose parent is gone counts as gone)
    assert not psutil.pid_exists(child) or (
        psutil.Process(child).status() == psutil.STATUS_ZOMBIE
    )
    proc.stdout.close()


def test_kill_processes_with_no_grace_sends_sigkill_at_once():
    # SIGTERM is ignored here, so only SIGKILL can stop it quickly.
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.3)
    start = time.monotonic()
    target = psutil.Process(proc.pid)
    _procs.kill_processes([target], grace_s=0)
    # psutil reaped it (so Popen sees 0); psutil recorded how it ended
    assert target.returncode == -9
    assert time.monotonic() - start < load.stretched(5)


def test_kill_processes_terminates_politely_first():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    target = psutil.Process(proc.pid)
    _procs.kill_processes([target], grace_s=5.0)
    assert target.returncode == -15


def test_already_dead_processes_are_fine():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    _procs.kill_process_group(proc, grace_s=0.5)  # no error
    _procs.kill_processes([], grace_s=0.5)
