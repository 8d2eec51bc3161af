"""Grade N submissions of one exercise notebook and report the time and per-submission overhead.

    python benchmarks/grade_bench.py                 # 30 submissions of exercises/00, --jobs 2

The submissions are the student notebook in three states, a third each: untouched,
fully solved (the master's answers pasted into the exercise cells) and half solved
(the first exercise only). "Overhead" is what the grader adds to a submission beyond
running its cells: worker start, a fresh kernel, limits, the canary, clean-up and
writing the reports.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_utils import student_version  # noqa: E402
from course_utils.grading.batch import grader  # noqa: E402

BUDGET_S = 45.0  # s for --n 30 --jobs 2: docs/GRADING.md, Cost (34.0 s measured)


def _cpu_seconds() -> float:
    """CPU time of this process and its waited-for descendants: the workers, not the kernels
    (those are reaped inside their sandboxes, so their usage never reaches this process)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def make_submissions(source: Path, student: Path, folder: Path, n: int) -> None:
    master = json.loads(source.read_text())
    answers = {
        student_version.exercise_id(c): c["source"]
        for c in master["cells"]
        if student_version.exercise_id(c)
    }
    blank = json.loads(student.read_text())
    first = next(iter(answers))
    for i in range(n):
        nb = json.loads(json.dumps(blank))
        keep = {0: set(), 1: set(answers), 2: {first}}[i % 3]
        for cell in nb["cells"]:
            ex = student_version.exercise_id(cell)
            if ex in keep:
                cell["source"] = answers[ex]
        (folder / f"student{i:02d}.ipynb").write_text(json.dumps(nb))


def _report(batch, out: Path, args, wall: float, cpu: float, load: tuple) -> None:
    """Print the wall time, the overhead per submission, the scores and the CPU time."""
    load_before, load_after = load
    worker, cells = [], []
    for rec in batch.records:
        worker.append(rec["seconds"])
        executed = json.loads(
            (out / "_instructor" / rec["student"] / "executed.ipynb").read_text()
        )
        cells.append(
            sum(c["metadata"]["grader"].get("seconds", 0.0) for c in executed["cells"])
        )
    per_sub = wall / max(1, len(batch.records))
    inside = statistics.mean(w - c for w, c in zip(worker, cells, strict=True))
    outside = wall * args.jobs / max(1, len(batch.records)) - statistics.mean(worker)
    scores = Counter(f"{r['total']:g}/{r['max_total']:g}" for r in batch.records)
    print(
        f"graded {len(batch.records)} submissions with --jobs {args.jobs} in {wall:.1f} s "
        f"({per_sub:.2f} s of wall time per submission)"
    )
    print(
        f"per submission: {statistics.mean(worker):.2f} s in its worker, {statistics.mean(cells):.2f} s "
        f"of it running cells"
    )
    print(
        f"per-submission overhead: {inside:.2f} s in the worker (kernel start, limits, canary, "
        f"clean-up) + {max(0.0, outside):.2f} s in the grader (process start, reports)"
    )
    print("scores: " + ", ".join(f"{n} x {s}" for s, n in sorted(scores.items())))
    print(
        f"CPU time of the grader and its workers: {cpu:.1f} s (the kernels' is not counted: they are "
        f"reaped inside their sandboxes; benchmarks/grade_profile.py counts it); load average "
        f"{load_before:.1f} before, {load_after:.1f} after (other work on the machine slows the run)"
    )
    if args.n == 30 and args.jobs == 2:
        verdict = "within" if wall <= BUDGET_S else "OVER"
        print(f"budget for 30 submissions with --jobs 2: {BUDGET_S:.0f} s -> {verdict}")


def add_class_options(p: argparse.ArgumentParser) -> None:
    """The class both benchmarks grade: its size, the jobs, the master and the starter."""
    p.add_argument("--n", type=int, default=30)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--source", default=str(ROOT / "solutions" / "00_welcome_exercises.ipynb")
    )
    p.add_argument(
        "--student", default=str(ROOT / "exercises" / "00_welcome_exercises.ipynb")
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_class_options(p)
    p.add_argument(
        "--work", help="folder for submissions and reports (default: a temporary one)"
    )
    args = p.parse_args(argv)
    work = (
        Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="grade-bench-"))
    )
    subs, out = work / "submissions", work / "reports"
    shutil.rmtree(subs, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    subs.mkdir(parents=True)
    make_submissions(Path(args.source), Path(args.student), subs, args.n)

    load_before = os.getloadavg()[0]
    cpu_before = _cpu_seconds()
    start = time.perf_counter()
    batch = grader.grade(
        subs, args.source, out, jobs=args.jobs, progress=False, echo=lambda *a: None
    )
    wall = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu_before
    load_after = os.getloadavg()[0]

    _report(batch, out, args, wall, cpu, (load_before, load_after))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if len(batch.records) == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
