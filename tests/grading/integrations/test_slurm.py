"""``course grade slurm`` and ``grade-array.sh``: the command line it submits, and the
generated class graded as a 4-task job array on a throwaway single-node Slurm cluster,
merged, equal to the one-machine run except for timing and memory."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from course_utils.grading.integrations import slurm
from tests.grading import slurm_cluster
from tests.grading.generated_class import OPTIONS
from tests.grading.helpers import MASTER, ROOT

# Fields that measure the run (time, memory, processes, when, which run) or seal it.
MEASURED = {"seconds", "execution_time", "processes", "peak_memory_mb", "graded_at"}
MEASURED |= {"run_id", "seal", "files"}
COURSE = [sys.executable, "-m", "course_utils.cli"]


def _job(tmp_path: Path, **kw) -> slurm.ArrayJob:
    return slurm.ArrayJob(tmp_path / "subs", MASTER, tmp_path / "out", **kw)


def test_sbatch_command_sets_tasks_cpus_memory_and_passes_the_grade_options(tmp_path):
    job = _job(tmp_path, tasks=4, cpus=2, partition="short", grade_options=("--full",))
    cmd = slurm.sbatch_command(job, kernel_mb=3000)
    assert cmd[:2] == ["sbatch", "--parsable"]
    assert {
        "--array=0-3",
        "--cpus-per-task=2",
        "--mem=7024M",
        "--partition=short",
    } <= set(cmd)
    i = cmd.index(str(slurm.SCRIPT))
    assert cmd[i + 1 :] == [
        str(tmp_path / "subs"),
        str(MASTER),
        str(tmp_path / "out"),
        "--full",
    ]
    assert f"--output={tmp_path / 'out'}/slurm-%A_%a.out" in cmd
    assert "--partition" not in " ".join(
        slurm.sbatch_command(_job(tmp_path, tasks=1), 1)
    )
    assert "--mem=2000M" in slurm.sbatch_command(
        _job(tmp_path, tasks=1, mem_mb=2000), 1
    )


def test_every_shard_gets_the_variant_secret_by_its_full_path(tmp_path, monkeypatch):
    import argparse

    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(
        timeout=10.0, total_timeout=90.0, memory=1000.0, cpu_time=None, full=False,
        force=False, unsafe_no_sandbox=False, variant_secret="secret",
    )  # fmt: skip
    opts = slurm.grade_options(args)
    assert opts[-2:] == ["--variant-secret", str(tmp_path / "secret")]
    args.variant_secret = None
    assert "--variant-secret" not in slurm.grade_options(args)


def test_the_script_is_the_documented_one_and_a_valid_bash_script():
    text = slurm.SCRIPT.read_text()
    assert os.access(slurm.SCRIPT, os.X_OK)
    assert subprocess.run(["bash", "-n", str(slurm.SCRIPT)]).returncode == 0
    for option in ("--array", "--cpus-per-task", "--mem"):
        assert f"#SBATCH {option}=" in text
    docs = (ROOT / "docs" / "GRADING_DEPLOY.md").read_text()
    assert (
        "../course_utils/grading/integrations/grade-array.sh" in docs
    )  # linked, not copied
    for page in ("GRADING_DEPLOY.md", "GRADING.md"):
        text = (ROOT / "docs" / page).read_text()
        assert "#SBATCH" not in text and "SLURM_ARRAY_TASK_ID" not in text, page


def test_the_script_refuses_to_run_outside_an_array(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    done = subprocess.run(
        ["bash", str(slurm.SCRIPT), "s", "m", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode != 0 and "sbatch --array" in done.stderr


def _comparable(folder: Path) -> dict[str, object]:
    """Every report file under ``folder``, with the measured fields left out."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file() or rel.startswith((".grader/", ".work/")):
            continue
        if path.suffix in (".json", ".ipynb"):
            out[rel] = _strip(json.loads(path.read_text()))
        elif path.suffix == ".csv":
            rows = list(csv.DictReader(io.StringIO(path.read_text())))
            out[rel] = [{k: v for k, v in r.items() if k not in MEASURED} for r in rows]
        else:
            out[rel] = path.read_bytes()
    return out


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in MEASURED}
    if isinstance(value, list):
        return [_strip(v) for v in _merge_streams(value)]
    return value


def _merge_streams(items: list) -> list:
    """Consecutive stream outputs of one name as one: a busy kernel may send a print's
    text and its newline as two messages, which says nothing about the grading."""
    out: list = []
    for item in items:
        prev = out[-1] if out else None
        if (
            isinstance(item, dict)
            and isinstance(prev, dict)
            and item.get("output_type") == prev.get("output_type") == "stream"
            and item.get("name") == prev.get("name")
        ):
            out[-1] = {**prev, "text": prev.get("text", "") + item.get("text", "")}
        else:
            out.append(item)
    return out


def _unavailable(reason: str) -> None:
    """Skip without Slurm here; in CI (``.ci/run`` installs it) fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs a local Slurm cluster: {reason}")
    pytest.skip(f"no Slurm: {reason}")


def _start(root: Path) -> slurm_cluster.Cluster:
    """A running throwaway cluster, or a skip (a failure in CI) saying why not."""
    problem = slurm_cluster.problem()
    if problem:
        _unavailable(problem)
    cluster = slurm_cluster.Cluster(root, cpus=2)
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as err:
        cluster.stop()
        _unavailable(f"the cluster did not start: {err}")
    return cluster


def test_without_slurm_the_reason_is_given(monkeypatch):
    monkeypatch.setattr(slurm_cluster, "_which", lambda tool: None)
    reason = slurm_cluster.problem()
    assert reason and "apt-get install slurm-wlm munge" in reason
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Slurm: .*not installed"):
        _unavailable(reason)


def test_a_cluster_that_cannot_start_is_a_skip_and_leaves_nothing(
    tmp_path, monkeypatch
):
    if slurm_cluster.problem():
        pytest.skip(f"no Slurm: {slurm_cluster.problem()}")
    monkeypatch.setattr(slurm_cluster, "CONF", "NoSuchOption=1\n" + slurm_cluster.CONF)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="the cluster did not start: slurm"):
        _start(tmp_path / "slurm")
    assert not _processes_under(tmp_path)


def _resubmit(cluster, graded_class, out: Path, task: int) -> str:
    """Array task ``task`` submitted again alone, as the docs say: its log."""
    job = slurm.ArrayJob(graded_class.subs, MASTER, out, tasks=4, mem_mb=2000)
    job.grade_options = tuple(OPTIONS)
    cmd = slurm.sbatch_command(job, kernel_mb=1000)
    cmd = [f"--array={task}" if c.startswith("--array=") else c for c in cmd]
    env = dict(cluster.env, COURSE_SHARDS="4", COURSE_PYTHON=sys.executable)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip().split(";")[0]
    cluster.wait(job_id, limit=200)
    return (out / f"slurm-{job_id}_{task}.out").read_text()


def _submit(cluster, graded_class, out: Path) -> tuple[str, str]:
    """``course grade slurm`` of the class as 4 tasks x 1 CPU: the job id and merge command."""
    cmd = [*COURSE, "grade", "slurm", str(graded_class.subs), "--source", str(MASTER)]
    cmd += ["--out", str(out), "--tasks", "4", "--cpus-per-task", "1", *OPTIONS]
    cmd += ["--mem-per-task", "2000"]
    done = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, env=cluster.env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    job = re.search(r"submitted job (\d+):", done.stdout).group(1)
    merge = re.search(r"when every task has ended: (.*)", done.stdout).group(1)
    return job, merge


@pytest.mark.slurm
def test_a_job_array_on_a_real_cluster_grades_like_one_machine(graded_class, tmp_path):
    t0 = time.monotonic()
    out = tmp_path / "out"
    with _start(tmp_path / "slurm") as cluster:
        started = time.monotonic() - t0
        job, merge = _submit(cluster, graded_class, out)
        cluster.wait(job, limit=400)
        ran = time.monotonic() - t0 - started
        logs = {p.name: p.read_text() for p in out.glob(f"slurm-{job}_*.out")}
        assert len(logs) == 4, (sorted(logs), cluster.log("slurmctld"))
        again = _resubmit(cluster, graded_class, out, task=2)
        assert "graded 0, skipped 3 already graded" in again, again
        pids = [p.pid for p in cluster.processes()]
        assert len(pids) >= 3
    assert not cluster.processes() and not [
        p for p in pids if psutil.pid_exists(p) and _alive(p)
    ]
    assert not _processes_under(tmp_path), (
        "something the cluster started is still running"
    )
    shards = sorted(p.name for p in out.glob("shard-*"))
    assert shards == [f"shard-{k}" for k in range(4)], logs
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(
        merge, shell=True, cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged 13 student(s) from 4 folder(s)" in done.stdout
    merged, alone = _comparable(out / "all"), _comparable(graded_class.out)
    students = {k for k in alone if "/" in k}  # every student's files, and no other
    assert len(students) >= 3 * 13 and students <= set(merged)
    assert merged == {k: alone[k] for k in merged}
    print(f"slurm: cluster up in {started:.1f} s, 4 tasks graded in {ran:.1f} s")


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _processes_under(folder: Path) -> list[str]:
    """Processes whose command line or working folder is under ``folder``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "status"]):
        text = " ".join(proc.info["cmdline"] or []) + " " + (proc.info["cwd"] or "")
        if str(folder) in text and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(text)
    return found
