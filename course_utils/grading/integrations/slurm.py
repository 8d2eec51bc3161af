"""``course grade slurm``: submit ``grade-array.sh`` (next to this module) as a job array.

Array task K of N grades shard K/N into ``OUT/shard-K``; the command prints the job id
and the ``course grade merge`` command that joins the shards once every task has ended.
The script is the one docs/GRADING_DEPLOY.md shows and the one the tests run on a real
single-node cluster.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from course_utils.errors import CourseError

SCRIPT = Path(__file__).resolve().with_name("grade-array.sh")
GRADER_MB = 1024  # the grader and its workers, beside the kernels


@dataclass
class ArrayJob:
    """One array submission: where, how many tasks, and each task's resources."""

    submissions: Path
    source: Path
    out: Path
    tasks: int
    cpus: int = 1
    mem_mb: int | None = None  # default: cpus kernels of --memory, plus the grader
    partition: str | None = None
    grade_options: tuple[str, ...] = ()

    def memory(self, kernel_mb: float) -> int:
        return self.mem_mb or int(self.cpus * kernel_mb + GRADER_MB)


def grade_options(args) -> list[str]:
    """The ``course grade`` options every shard must share (a resumed shard matches)."""
    opts = [
        "--timeout",
        f"{args.timeout:g}",
        "--total-timeout",
        f"{args.total_timeout:g}",
    ]
    opts += ["--memory", f"{args.memory:g}"]
    if args.cpu_time is not None:
        opts += ["--cpu-time", f"{args.cpu_time:g}"]
    for flag in ("full", "force", "unsafe_no_sandbox", "no_hidden_tests"):
        if getattr(args, flag, False):
            opts.append("--" + flag.replace("_", "-"))
    if getattr(args, "lms", None):
        opts += ["--lms", args.lms]
    if getattr(args, "variant_secret", None):  # a task may start in another folder
        opts += ["--variant-secret", str(Path(args.variant_secret).resolve())]
    return opts


def sbatch_command(job: ArrayJob, kernel_mb: float) -> list[str]:
    """The ``sbatch`` command line that submits the array (absolute paths throughout)."""
    cmd = [
        "sbatch",
        "--parsable",
        f"--array=0-{job.tasks - 1}",
        f"--cpus-per-task={job.cpus}",
        f"--mem={job.memory(kernel_mb)}M",
        f"--job-name=grade-{job.source.stem}",
        f"--output={job.out}/slurm-%A_%a.out",
    ]
    if job.partition:
        cmd.append(f"--partition={job.partition}")
    cmd += [str(SCRIPT), str(job.submissions), str(job.source), str(job.out)]
    return [*cmd, *job.grade_options]


def merge_command(out: Path) -> str:
    """The command that joins the shards of ``out`` (run it when every task has ended)."""
    q = shlex.quote(str(out))
    return f"course grade merge {q}/shard-* --out {q}/all"


def submit(job: ArrayJob, kernel_mb: float) -> str:
    """Submit the array; returns Slurm's job id. The job's tasks run this interpreter."""
    if job.tasks < 1:
        raise CourseError(f"--tasks must be at least 1, got {job.tasks}")
    if not job.submissions.is_dir():
        raise CourseError(f"no submissions folder {job.submissions}")
    if not job.source.is_file():
        raise CourseError(f"no master notebook {job.source}")
    sbatch = shutil.which("sbatch")
    if not sbatch:
        raise CourseError("sbatch not found: run `course grade slurm` where Slurm is")
    job.out.mkdir(parents=True, exist_ok=True)
    cmd = sbatch_command(job, kernel_mb)
    env = dict(os.environ, COURSE_PYTHON=sys.executable)
    done = subprocess.run(
        [sbatch, *cmd[1:]], capture_output=True, text=True, env=env, timeout=120
    )
    if done.returncode:
        raise CourseError(
            f"sbatch failed: {done.stderr.strip() or done.stdout.strip()}"
        )
    return done.stdout.strip().split(";")[0]


def cmd_slurm(args) -> int:
    """``course grade slurm SUBMISSIONS --source M --out DIR --tasks N [--partition P]``."""
    if len(args.more) != 1:
        raise CourseError("grade slurm: name one SUBMISSIONS folder")
    if not args.source or not args.out or not args.tasks:
        raise CourseError("grade slurm: --source, --out and --tasks N are required")
    if args.jobs or args.shard:
        raise CourseError(
            "grade slurm: each task grades its own shard with --jobs = its CPUs: "
            "give --tasks and --cpus-per-task instead of --shard and --jobs"
        )
    job = ArrayJob(
        submissions=Path(args.more[0]).resolve(),
        source=Path(args.source).resolve(),
        out=Path(args.out).resolve(),
        tasks=args.tasks,
        cpus=args.cpus_per_task,
        mem_mb=args.mem_per_task,
        partition=args.partition,
        grade_options=tuple(grade_options(args)),
    )
    job_id = submit(job, args.memory)
    print(
        f"submitted job {job_id}: {job.tasks} task(s) x {job.cpus} CPU, "
        f"{job.memory(args.memory)} MB each; shards in {job.out}/shard-K, "
        f"logs in {job.out}/slurm-{job_id}_K.out"
    )
    print(f"when every task has ended: {merge_command(job.out)}")
    print(
        f"or as a job: sbatch --dependency=afterany:{job_id} --wrap "
        f"{shlex.quote(merge_command(job.out))}"
    )
    return 0
