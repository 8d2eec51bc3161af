"""Where a graded submission's CPU time goes: ``grade_bench.py``'s run, measured by process.

    python benchmarks/grade_profile.py [--n 30] [--jobs 2]

The run is put in a cgroup of its own (cgroup v1 ``cpuacct``, where this user may make
one) whose total counts every process below it, the kernels in their sandboxes
included; a sampler reads each process's CPU time in ``/proc`` every 20 ms and
attributes it by what the process is: the grader (this process: scoring, reports,
tables), the worker (``python -m course_utils.grading.batch.worker``: its start, the
kernel's client, the watchdog), bubblewrap, the kernel (``ipykernel``: its start, the
imports and every cell). What the sampler misses (processes shorter than a sample) is
the cgroup's total less the rows. The kernel's time is split by phase with probes: the
class is graded against a copy of the master whose setup and test cells first print the
kernel's CPU time so far, so successive prints give each cell's CPU seconds (the last
cell's and the canary's are not counted). Without a cgroup the total is the sum of the
rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grade_bench import add_class_options, make_submissions  # noqa: E402

from course_utils.grading.batch import grader  # noqa: E402

CGROUP = Path("/sys/fs/cgroup/cpuacct")
MARK = "course-profile-cpu"
PROBE = f"print({MARK!r}, sum(__import__('os').times()[:2]))"


def probed_master(source: Path, folder: Path) -> Path:
    """A copy of the master whose setup and test cells first print the kernel's CPU
    time so far (after their header line): successive prints give each cell's CPU
    seconds, the first the kernel's start."""
    nb = json.loads(source.read_text())
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] != "code" or text.startswith("# EXERCISE:"):
            continue
        head, _, rest = text.partition("\n")
        if head.startswith("#"):
            cell["source"] = f"{head}\n{PROBE}\n{rest}"
        else:
            cell["source"] = f"{PROBE}\n{text}"
    path = folder / source.name
    path.write_text(json.dumps(nb))
    return path


def kernel_cpu(executed: dict) -> dict[str, float]:
    """CPU seconds of the kernel by phase, from the probes' prints."""
    marks = []  # (role of the cell, CPU time at its start)
    for cell in executed["cells"]:
        text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        for line in text.splitlines():  # a print may come in several stream messages
            if line.startswith(MARK) and len(line.split()) == 2:
                source = "".join(cell["source"])
                role = _role(source)
                if role == "tests":  # each test cell by its header
                    role = source.split("\n", 1)[0].lstrip("# ")
                marks.append((role, float(line.split()[1])))
    phases = defaultdict(float)
    if marks:
        phases["start (python, ipykernel, guard)"] = marks[0][1]
    for (role, at), (_, nxt) in zip(marks, marks[1:], strict=False):
        phases[role] += nxt - at
    return phases


TICK = os.sysconf("SC_CLK_TCK")


def _cgroup() -> Path | None:
    """A fresh cpuacct cgroup holding this process, or None where none can be made."""
    try:
        group = CGROUP / f"grade-profile-{os.getpid()}"
        group.mkdir()
        (group / "cgroup.procs").write_text(str(os.getpid()))
        return group
    except OSError:
        return None


def _kind(pid: int, me: int) -> str:
    if pid == me:
        return "grader (parent process)"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    text = b" ".join(cmd).decode("utf-8", "replace")
    if "course_utils.grading.batch.worker" in text:
        return "worker (process, kernel client)"
    if cmd and cmd[0].endswith(b"bwrap"):
        return "bubblewrap"
    if "ipykernel" in text or "sandbox.kernel_process" in text:
        return "kernel (start, imports, cells)"
    return "other"


def _role(source: str) -> str:
    """A cell of the executed notebook: the master's setup, a solution, or a test."""
    head = source.lstrip().split("\n", 1)[0]
    if head.startswith(("# TESTS:", "# HIDDEN TESTS:")):
        return "tests"
    return "solutions" if head.startswith("# EXERCISE:") else "setup cells"


class Sampler(threading.Thread):
    """CPU seconds by process, the last value seen of each."""

    def __init__(self, me: int, group: Path | None):
        super().__init__(daemon=True)
        self.me, self.group, self.seen, self.kinds = me, group, {}, {}
        self.done = threading.Event()

    def pids(self) -> list[int]:
        """This process and everything below it: the cgroup's, else its descendants."""
        if self.group is not None:
            text = (self.group / "cgroup.procs").read_text()
            return [int(x) for x in text.split()]
        import psutil

        return [self.me, *(c.pid for c in psutil.Process(self.me).children(True))]

    def sample(self) -> None:
        for pid in self.pids():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            key = (pid, stat[19])  # the pid and its start time: one process
            self.seen[key] = (int(stat[11]) + int(stat[12])) / TICK
            if self.kinds.get(key) in (None, "other", "bubblewrap"):  # until its exec
                self.kinds[key] = _kind(pid, self.me)

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            time.sleep(0.02)
        self.sample()


def _leave(group: Path | None) -> None:
    """Back to the root cgroup, and the run's own removed."""
    if group is not None:
        (CGROUP / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_class_options(p)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="grade-profile-"))
    subs, out = work / "submissions", work / "reports"
    subs.mkdir()
    master = probed_master(Path(args.source), work)
    make_submissions(Path(args.source), Path(args.student), subs, args.n)
    group = _cgroup()
    try:
        return _profile(args, work, subs, out, master, group)
    finally:
        _leave(group)
        shutil.rmtree(work, ignore_errors=True)


def _profile(args, work: Path, subs: Path, out: Path, master: Path, group) -> int:
    """Grade the class in ``group`` and print the tables."""
    sampler = Sampler(os.getpid(), group)
    usage0 = int((group / "cpuacct.usage").read_text()) if group else 0
    load = os.getloadavg()[0]
    start = time.perf_counter()
    sampler.start()
    batch = grader.grade(
        subs, master, out, jobs=args.jobs, progress=False, echo=lambda *a: None
    )
    wall = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    total = (
        (int((group / "cpuacct.usage").read_text()) - usage0) / 1e9 if group else None
    )
    rows = defaultdict(float)
    for key, cpu in sampler.seen.items():
        rows[sampler.kinds[key]] += cpu
    n = max(1, len(batch.records))
    phases = defaultdict(float)
    for rec in batch.records:
        folder = out / "_instructor" / rec["student"]
        executed = json.loads((folder / "executed.ipynb").read_text())
        for phase, cpu in kernel_cpu(executed).items():
            phases[phase] += cpu
    summed = sum(rows.values())
    total = summed if total is None else total
    print(
        f"graded {len(batch.records)} with --jobs {args.jobs}: {wall:.1f} s wall, "
        f"{total:.1f} CPU-s ({'cgroup' if group else 'sampled'}); load average "
        f"{load:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print("| where | CPU-s in all | CPU-s per submission |")
    print("|---|---:|---:|")
    for kind, cpu in sorted(rows.items(), key=lambda kv: -kv[1]):
        print(f"| {kind} | {cpu:.1f} | {cpu / n:.2f} |")
    if group:
        print(
            f"| not sampled (short processes) | {total - summed:.1f} | "
            f"{(total - summed) / n:.2f} |"
        )
    print(f"| total | {total:.1f} | {total / n:.2f} |")
    print("the kernel's CPU-s by phase (from the probes; the last cell and the canary")
    print("are not counted; the setup cells are the master's imports and helpers):")
    for phase, cpu in sorted(phases.items(), key=lambda kv: -kv[1]):
        print(f"| kernel: {phase} | {cpu:.1f} | {cpu / n:.2f} |")
    return 0 if len(batch.records) == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
