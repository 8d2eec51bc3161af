"""The process tree below a grader's worker: found (orphans included), measured, killed.

Each test runs in a fresh Python process, which becomes a child subreaper as the
worker does: ``kill_descendants`` kills everything below the calling process,
and that must not be pytest's own children.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.grading.helpers import ROOT

ORPHAN = """
import json, subprocess, sys, time
from course_utils.grading.sandbox import process_tree
process_tree.become_subreaper()
daemon = "import subprocess; subprocess.Popen(['sleep', '60'], start_new_session=True)"
subprocess.run([sys.executable, "-c", daemon], check=True)  # its child is orphaned
stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
kid = subprocess.Popen([sys.executable, "-c", stubborn])
for _ in range(200):
    found = process_tree.descendant_pids()
    if len(found) >= 2:
        break
    time.sleep(0.05)
killed = process_tree.kill_descendants()
print(json.dumps({"found": len(found), "killed": killed, "left": process_tree.descendant_pids(),
                  "kid_ended": kid.wait(timeout=10) is not None}))
"""

MEMORY = """
import json, subprocess, sys, time
from course_utils.grading.sandbox import process_tree
process_tree.become_subreaper()
hog = subprocess.Popen([sys.executable, "-c",
                        "import time; x = b'x' * (200 << 20); time.sleep(60)"])
dog = process_tree.Watchdog(limit_mb=80, interval=0.05)
dog.start()
end = time.monotonic() + 60
while dog.tripped is None and time.monotonic() < end:
    time.sleep(0.05)
dog.stop()
print(json.dumps({"tripped": dog.tripped, "peak_mb": dog.peak / 2**20,
                  "hog_ended": hog.wait(timeout=10) is not None, "seen": hog.pid in dog.seen}))
"""


def _run(code: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_orphans_are_found_and_every_descendant_is_killed():
    out = _run(ORPHAN)
    assert out["found"] == 2  # the orphaned daemon was re-parented to us
    assert out["killed"] == 2 and out["left"] == []
    assert out["kid_ended"]  # it ignores SIGTERM: killed by SIGKILL


def test_watchdog_kills_the_tree_over_its_memory_limit():
    out = _run(MEMORY)
    assert out["tripped"].startswith("resident memory reached")
    assert "(limit 80 MB)" in out["tripped"]
    assert out["peak_mb"] > 80 and out["hog_ended"] and out["seen"]


ZOMBIES = """
import json, os, time
from course_utils.grading.sandbox import process_tree
process_tree.become_subreaper()
def spawn(n, then):
    kids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            then()
            os._exit(0)
        kids.append(pid)
    return kids
kids = spawn(5, lambda: None)
time.sleep(0.5)
zombies = len(process_tree.descendant_pids())
keep = {kids[0]}
reaped = process_tree.reap_zombies(lambda: keep)
left = process_tree.descendant_pids()
dog = process_tree.Watchdog(limit_mb=10_000, interval=0.05, max_procs=3, extra=lambda: 7 << 20)
spawn(5, lambda: time.sleep(60))
dog.start()
end = time.monotonic() + 30
while dog.tripped is None and time.monotonic() < end:
    time.sleep(0.05)
dog.stop()
print(json.dumps({"zombies": zombies, "reaped": reaped, "left": left,
                  "tripped": dog.tripped, "peak": dog.peak}))
"""


def test_exited_orphans_are_reaped_and_too_many_processes_trip_the_watchdog():
    out = _run(ZOMBIES)
    assert out["zombies"] == 5 and out["reaped"] == 4 and len(out["left"]) == 1
    assert out["tripped"].endswith("processes were running (limit 3)")
    assert out["peak"] >= 7 << 20  # the extra bytes count (a sandbox's tmpfs)


def test_the_watchdog_says_tripped_only_once_the_tree_is_killed(monkeypatch):
    # A worker that sees ``tripped`` moves on to its next student: a kill still under
    # way would reach that student's kernel, and a process that exits then leaves the
    # tree running (this test's ZOMBIES child once held its pipe open for 60 s).
    import threading
    import time

    from course_utils.grading.sandbox import process_tree

    killed = threading.Event()

    def slow_kill():
        time.sleep(0.3)
        killed.set()
        return 4

    monkeypatch.setattr(process_tree, "kill_descendants", slow_kill)
    monkeypatch.setattr(process_tree, "descendant_pids", lambda: [11, 12, 13, 14])
    monkeypatch.setattr(process_tree, "rss_bytes", lambda pid: 0)
    monkeypatch.setattr(process_tree, "reap_zombies", lambda keep: 0)
    dog = process_tree.Watchdog(limit_mb=10_000, interval=0.01, max_procs=3)
    dog.start()
    end = time.monotonic() + 10
    while dog.tripped is None and time.monotonic() < end:
        time.sleep(0.001)
    seen_killed = killed.is_set()
    dog.stop()
    assert dog.tripped == "4 processes were running (limit 3)"
    assert seen_killed
