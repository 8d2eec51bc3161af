import os
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from course_utils.tooling.execution import runner
from tests import load, sigint

ROOT = Path(__file__).resolve().parents[3]


def write_nb(path: Path, *cells, tags=None) -> Path:
    nb = nbformat.v4.new_notebook()
    for i, src in enumerate(cells):
        cell = nbformat.v4.new_code_cell(src)
        if tags and i in tags:
            cell.metadata["tags"] = tags[i]
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)
    return path


@pytest.fixture
def nbs(tmp_path):
    return {
        "ok": write_nb(
            tmp_path / "ok.ipynb",
            "SMOKE = None",
            "import os\nassert SMOKE is True and os.environ['COURSE_SMOKE'] == '1'",
            "x = 1",
            tags={0: ["parameters"]},
        ),
        "sharp": write_nb(
            tmp_path / "sharp.ipynb",
            "from course_utils.expect import expect_error\n"
            "with expect_error(ZeroDivisionError):\n    1 / 0",
            "y = 2",
        ),
        "fixed": write_nb(
            tmp_path / "fixed.ipynb",
            "from course_utils.expect import expect_error\n"
            "with expect_error(ZeroDivisionError):\n    1 / 1",
            "y = 2",
        ),
        "tagged": write_nb(
            tmp_path / "tagged.ipynb", "1 / 0", "y = 2", tags={0: ["raises-exception"]}
        ),
        "bad": write_nb(
            tmp_path / "bad.ipynb", "a = 1", "raise ValueError('boom here')", "b = 2"
        ),
        "deprecated": write_nb(
            tmp_path / "deprecated.ipynb",
            "import warnings\nwarnings.warn('old api', DeprecationWarning)",
        ),
        # Its kernel says it is running the cell by writing its pid (see _kernel_pid).
        "slow": write_nb(
            tmp_path / "slow.ipynb",
            "import os, time\n"
            f"open({str(tmp_path / 'kernel.pid')!r}, 'w').write(str(os.getpid()))\n"
            "time.sleep(300)",
        ),
    }


def _kernel_pid(tmp_path: Path) -> int | None:
    """The pid the slow notebook's kernel wrote once it was running the cell."""
    try:
        return int((tmp_path / "kernel.pid").read_text())
    except (OSError, ValueError):
        return None


@pytest.mark.slow
def test_ok_failing_sharp_bit_and_fixed_sharp_bit_notebooks(nbs, tmp_path):
    out = tmp_path / "out"
    results = runner.run_notebooks(
        [
            nbs["ok"],
            nbs["bad"],
            nbs["sharp"],
            nbs["fixed"],
            nbs["tagged"],
            nbs["deprecated"],
        ],
        root=ROOT,
        smoke=True,
        timeout=120,
        out_dir=out,
        progress=False,
    )
    status = {Path(r.notebook).stem: r for r in results}
    assert status["ok"].status == "ok"
    assert status["sharp"].status == "ok"  # expect_error caught it
    # A sharp bit that stopped raising fails its cell, and so does any error in a
    # cell tagged raises-exception: papermill runs unpatched.
    assert status["fixed"].status == "failed" and status["fixed"].cell == 0
    assert status["fixed"].error.startswith(
        "ExpectedErrorMissing: expected ZeroDivisionError, nothing was raised"
    )
    assert status["tagged"].status == "failed" and status["tagged"].cell == 0
    assert "ZeroDivisionError" in status["tagged"].error
    assert status["bad"].status == "failed"
    assert status["bad"].cell == 1 and "ValueError: boom here" in status["bad"].error
    assert (
        status["deprecated"].status == "failed"
    )  # framework policy: deprecations fail
    assert "DeprecationWarning" in status["deprecated"].error
    assert (out / "ok.ipynb").exists() and (out / "bad.ipynb").exists()
    # An executed copy records the release and the versions it ran with (the site's label).
    record = nbformat.read(out / "ok.ipynb", as_version=4).metadata["course"]
    now = runner.run_record(ROOT)  # the commit may move meanwhile: others commit
    assert record["versions"] == now["versions"] and record["release"] == now["release"]
    assert record["versions"]["torch"] and set(record) >= {"commit", "tagged"}
    table = runner.summary(results, ROOT)
    assert "cell 1: ValueError: boom here" in table
    assert "2 of 6 notebooks ran without error" in table


def _marked(marker: str) -> list:
    """Processes started by this test: they inherit its marker variable."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.pid != os.getpid() and p.environ().get("COURSE_TEST_MARK") == marker:
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.mark.slow
def test_timeout_kills_the_kernel(nbs, tmp_path, monkeypatch):
    # Only this test's processes count: another test worker may be running kernels too.
    marker = f"timeout-{os.getpid()}-{time.time_ns()}"
    monkeypatch.setenv("COURSE_TEST_MARK", marker)
    # Long enough for the kernel to start and run the cell (here 3 s at a load of 2
    # per core, 7 s at 7 per core), stretched by the load.
    timeout = load.stretched(4)
    start = time.perf_counter()
    result = runner.run_one(
        nbs["slow"], tmp_path / "out", root=ROOT, smoke=True, timeout=timeout
    )
    assert result.status == "timeout"
    assert time.perf_counter() - start < timeout + load.stretched(28)
    pid = _kernel_pid(tmp_path)
    assert pid is not None, f"the kernel never ran the cell within {timeout} s"
    # run_one returns only when the kernel it started is gone: no grace period here.
    leftovers = [p for p in _marked(marker) if p.status() != psutil.STATUS_ZOMBIE]
    assert leftovers == [], "the notebook's kernel outlived the timeout"
    assert (
        not psutil.pid_exists(pid)
        or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    )


@pytest.mark.slow
def test_ctrl_c_stops_cleanly(nbs, tmp_path):
    import signal
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from course_utils.tooling.execution import runner\n"
        f"res = runner.run_notebooks([Path({str(nbs['slow'])!r}), Path({str(nbs['ok'])!r})], "
        f"root=Path({str(ROOT)!r}), smoke=True, timeout=300, out_dir=Path({str(tmp_path)!r}), progress=False)\n"
        "print([r.status for r in res])\n"
    )
    # Ctrl-C must reach the child even when the suite runs with SIGINT ignored (tests/sigint.py).
    proc = sigint.popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + load.stretched(120)
    while _kernel_pid(tmp_path) is None and proc.poll() is None:
        assert time.monotonic() < deadline, "the slow notebook's kernel never started"
        time.sleep(0.1)
    assert proc.poll() is None, "the runner ended before Ctrl-C"
    # The slow notebook's kernel is running its cell now.
    children = psutil.Process(proc.pid).children(recursive=True)
    assert _kernel_pid(tmp_path) in [c.pid for c in children]
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert "['interrupted', 'interrupted']" in out
    # The kernel runs in a session of its own; the runner kills it before returning.
    alive = [
        c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE
    ]
    assert alive == [], "the notebook's kernel outlived Ctrl-C"
