"""course_utils.tooling.device_check.children: real children side by side, pinned, stopped (tiny notebooks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course_utils.tooling.device_check import children as device_children
from course_utils.tooling.device_check.budget import Budget
from course_utils.tooling.device_check.children import Launcher, child_env, merge_junit
from course_utils.tooling.device_check.run import Check, Options, Tools, available_cores
from course_utils.tooling.device_check.schedule import Hooks, Item, run

PRINT_ENV = (
    "import os\n"
    "print(sorted(os.sched_getaffinity(0)), os.environ['OMP_NUM_THREADS'], "
    "os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'], os.environ['COURSE_SMOKE'])"
)


def write_nb(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def test_child_env_sets_threads_and_gpu_sharing_but_keeps_the_callers_choices():
    env = child_env({"PATH": "/bin"}, (2, 3))
    assert env["PATH"] == "/bin"
    assert all(env[v] == "2" for v in device_children.THREAD_VARS)
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert env["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    mine = child_env(
        {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".2", "PYTORCH_CUDA_ALLOC_CONF": "x"}, (0,)
    )
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in mine  # a fraction set by hand stays
    assert mine["PYTORCH_CUDA_ALLOC_CONF"] == "x" and mine["OMP_NUM_THREADS"] == "1"


FORKS = []  # fork handlers that ran in this process
os.register_at_fork(before=lambda: FORKS.append(1))


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity")
def test_a_child_is_pinned_without_running_the_parents_fork_handlers(tmp_path):
    """JAX installs a fork handler once it has started; a ``preexec_fn`` would run such
    handlers, and Python code, between fork and exec, where a threaded parent can
    deadlock. A launcher pins itself and execs the command instead: the child's first
    instruction already runs on its core (pinned from the parent once started, it read
    both cores here on a busy machine)."""
    core = available_cores()[-1]
    before = len(FORKS)
    child = device_children.Process(
        [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
        cwd=tmp_path,
        env=dict(os.environ),
        log=tmp_path / "child.log",
        core_ids=(core,),
        limit=None,
        finish=lambda code, output: {"code": code, "output": output},
    )
    assert child.proc.wait(timeout=60) == 0
    assert child.output().strip() == f"[{core}]"
    assert len(FORKS) == before


def test_the_launcher_passes_the_command_and_its_arguments_through(tmp_path):
    cmd = [sys.executable, "-c", "import sys; print(sys.argv[1:])", "a b", "--x", ""]
    assert device_children.pinned(cmd, ()) == cmd  # no cores: as it is
    out = subprocess.run(
        device_children.pinned(cmd, (available_cores()[0],)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "['a b', '--x', '']"


def _nb_item(name: str, timeout: float = 120.0, kind: str = "smoke") -> Item:
    return Item(
        key=f"{kind}:notebooks/{name}",
        step=kind,
        kind=kind,
        seconds=5.0,
        notebook=f"notebooks/{name}",
        timeout=timeout,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_tiny_notebooks_run_side_by_side_pinned_and_an_overrun_is_stopped(tmp_path):
    write_nb(tmp_path / "notebooks" / "a.ipynb", PRINT_ENV)
    write_nb(tmp_path / "notebooks" / "b.ipynb", PRINT_ENV)
    write_nb(tmp_path / "notebooks" / "slow.ipynb", "import time\ntime.sleep(300)")
    cores = available_cores()[:2]
    items = [_nb_item("a.ipynb"), _nb_item("b.ipynb"), _nb_item("slow.ipynb", 3.0)]
    results, starts, children = {}, {}, []
    launcher = Launcher(tmp_path, tmp_path / "work")

    def launch(item, limit, ids):
        child = launcher(item, limit, ids)
        children.append(child)
        return child

    hooks = Hooks(
        started=lambda item, limit, ids: starts.update({item.key: ids}),
        ended=lambda item, result: results.update({item.key: result}),
        skipped=lambda item: None,
    )
    assert run(
        items,
        launch,
        core_ids=cores,
        gpu_gib=None,
        budget=Budget(None, time.monotonic),
        hooks=hooks,
        sleep=time.sleep,
    )
    a, b, slow = (results[i.key] for i in items)
    assert a["status"] == "ok" and b["status"] == "ok", (a, b)
    assert slow["status"] == "timeout" and "did not finish within 3 s" in slow["error"]
    assert all(c.proc.poll() is not None for c in children)  # nothing left running
    for name in ("a", "b"):
        executed = tmp_path / "work" / "executed" / "smoke" / f"{name}.ipynb"
        text = nbformat.read(executed, as_version=4).cells[-1].outputs[0]["text"]
        ids = starts[f"smoke:notebooks/{name}.ipynb"]
        assert text.strip() == f"{sorted(ids)} 1 false 1"  # pinned, one thread
    if len(cores) > 1:  # a and b at once, one core each
        assert {starts[i.key] for i in items[:2]} == {(cores[0],), (cores[1],)}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_whole_check_of_tiny_notebooks_runs_concurrently_and_reports(tmp_path):
    root = tmp_path
    lesson = write_nb(root / "notebooks" / "00_tiny.ipynb", "print('lesson')")
    write_nb(root / "solutions" / "00_tiny_exercises.ipynb", "print('master')")
    write_nb(root / "exercises" / "00_tiny_exercises.ipynb", "print('student')")
    out = root / "build" / "report.json"
    opts = Options(
        out=out,
        lessons=[lesson],
        install=False,
        steps=("smoke", "full", "tests"),
        budget=240.0,
        cores=2,
    )
    check = Check(
        root, opts, Tools(probe=lambda r, t: {"host": {"accelerator": "cpu"}})
    )
    code = check.run()
    report = json.loads(out.read_text())
    assert code == 0, json.dumps(report, indent=1)[:3000]
    got = sorted((n["notebook"], n["mode"], n["status"]) for n in report["notebooks"])
    assert got == [
        ("exercises/00_tiny_exercises.ipynb", "smoke", "ok"),
        ("notebooks/00_tiny.ipynb", "full", "ok"),
        ("notebooks/00_tiny.ipynb", "smoke", "ok"),
        ("solutions/00_tiny_exercises.ipynb", "smoke", "ok"),
    ]
    tests = report["steps"]["tests"]
    assert tests["status"] == "ok" and tests["tests"] >= 2, tests
    assert [
        r["notebook"] for r in sorted(tests["runs"], key=lambda r: r["notebook"])
    ] == [
        "notebooks/00_tiny.ipynb",
        "solutions/00_tiny_exercises.ipynb",
    ]
    merged = (root / "build" / "notebook-tests.xml").read_text()
    assert merged.count("<testsuite ") == 2
    starts = sorted(n["started_at"] for n in report["notebooks"])
    assert report["schedule"]["cores"] == 2 and starts[0] < 5.0
    assert (root / "build" / "executed" / "smoke" / "solutions").is_dir()
    assert report["complete"] is True and report["status"] == "passed"


def test_merge_junit_keeps_every_suite_and_skips_broken_files(tmp_path):
    one = tmp_path / "1.xml"
    one.write_text('<testsuites><testsuite name="a" tests="1"/></testsuites>')
    two = tmp_path / "2.xml"
    two.write_text('<testsuite name="b" tests="2"/>')
    (tmp_path / "3.xml").write_text("not xml")
    merge_junit([one, two, tmp_path / "3.xml"], tmp_path / "all.xml")
    text = (tmp_path / "all.xml").read_text()
    assert 'name="a"' in text and 'name="b"' in text


def test_the_claims_and_test_children_read_their_files(tmp_path, monkeypatch):
    launcher = Launcher(tmp_path, tmp_path / "work", environ={"PATH": os.defpath})
    claims = Item("claims", "claims", "claims", 95.0)
    cmd, env, finish = launcher._claims(claims, 50.0)
    assert cmd[3:5] == ["claims", "--out"] and cmd[-1] == "--smoke"
    assert env["COURSE_SMOKE"] == "1"
    assert finish(0, "")["status"] == "failed"  # no claims.json written
    folder = tmp_path / "work" / "claims"
    folder.mkdir(parents=True)
    (folder / "claims.json").write_text('{"claims": []}')
    assert finish(0, "3 claims") == {
        "status": "ok",
        "exit_code": 0,
        "json": {"claims": []},
        "mode": "smoke",
        "output": "3 claims",
    }
    tests = Item("tests:notebooks/x.ipynb", "tests", "tests", 9.0, notebook="x.ipynb")
    cmd, env, finish = launcher._tests(tests, 200.0)
    assert "--nbval-lax" in cmd and "--nbval-cell-timeout=200" in cmd
    assert cmd[-1] == "x.ipynb" and env["COURSE_SMOKE"] == "1"
    assert finish(1, "1 failed")["status"] == "failed"
