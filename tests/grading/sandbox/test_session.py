"""A real kernel through :class:`Session`: start, run cells, time out, interrupt, die, kill."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

import pytest

from course_utils.grading.sandbox import environment
from course_utils.grading.sandbox.session import Session, _descendants, describe_exit
from tests.grading.helpers import ROOT, gone, require_sandbox


def _session(tmp_path, **kw) -> Session:
    kernels = environment.kernel_spec(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return Session(
        environment.KERNEL_NAME, [str(kernels)], env=env, cwd=str(tmp_path), **kw
    )


def _run(coro_fn):
    return asyncio.run(asyncio.wait_for(coro_fn(), 120))


def test_cells_run_with_their_outputs_and_errors(tmp_path):
    async def go():
        s = _session(tmp_path, output_limit=2_000)
        await s.start(ready_timeout=60)
        try:
            ok = await s.run_cell("print('hi')\n6 * 7", 30)
            err = await s.run_cell("1 / 0", 30)
            flood = await s.run_cell("for _ in range(10): print('x' * 500)", 30)
            cwd = await s.run_cell("import os; print(os.getcwd())", 30)
        finally:
            await s.kill()
        return ok, err, flood, cwd

    ok, err, flood, cwd = _run(go)
    assert ok["status"] == "ok" and ok["outputs"][0]["text"] == "hi\n"
    assert ok["outputs"][1]["data"]["text/plain"] == "42"
    assert err["status"] == "error" and err["ename"] == "ZeroDivisionError"
    assert "\x1b[" not in err["traceback"] and "1 / 0" in err["traceback"]
    assert "output truncated by the grader after 2000" in flood["outputs"][-1]["text"]
    assert sum(len(o["text"]) for o in flood["outputs"][:-1]) <= 2_000
    assert cwd["outputs"][0]["text"].strip() == str(tmp_path)


def test_a_cell_that_times_out_is_interrupted_and_the_kernel_goes_on(tmp_path):
    async def go():
        s = _session(tmp_path)
        await s.start(ready_timeout=60)
        try:
            slow = await s.run_cell("import time\ntime.sleep(60)", 1.0)
            recovered = await s.interrupt(grace=10)
            after = await s.run_cell("x = 1\nx", 30)
            stubborn = await s.run_cell(
                "while True:\n    try:\n        time.sleep(0.01)\n"
                "    except KeyboardInterrupt:\n        pass",
                1.0,
            )
            ignored = await s.interrupt(grace=1.5)
        finally:
            await s.kill()
        return slow, recovered, after, stubborn, ignored

    slow, recovered, after, stubborn, ignored = _run(go)
    assert slow["status"] == "timeout" and recovered
    assert after["status"] == "ok" and after["outputs"][0]["data"]["text/plain"] == "1"
    assert stubborn["status"] == "timeout" and not ignored


def test_kill_leaves_no_process(tmp_path):
    async def go():
        s = _session(tmp_path)
        await s.start(ready_timeout=60)
        rec = await s.run_cell(
            "import subprocess\nprint(subprocess.Popen(['sleep', '60']).pid)", 30
        )
        kernel = s.pid
        await s.kill()
        await s.kill()  # twice is harmless
        return kernel, int(rec["outputs"][0]["text"]), s

    kernel, child, s = _run(go)
    assert gone(kernel) and gone(child)
    assert s.pid is None and not asyncio.run(s.alive())


def test_a_dead_kernel_is_noticed_and_explained(tmp_path):
    async def go():
        s = _session(tmp_path)
        await s.start(ready_timeout=60)
        try:
            rec = await s.run_cell("import os\nos._exit(3)", 60)
            await asyncio.sleep(0.2)
            return rec, s.exit_code(), await s.alive()
        finally:
            await s.kill()

    rec, code, alive = _run(go)
    assert rec["status"] == "died" and code == 3 and not alive
    assert describe_exit(code).startswith("the kernel process exited with status 3")


def test_abort_ends_a_running_cell(tmp_path):
    stop = []

    async def go():
        s = _session(tmp_path, abort=lambda: bool(stop))
        await s.start(ready_timeout=60)
        try:
            asyncio.get_running_loop().call_later(0.5, stop.append, True)
            return await s.run_cell("import time\ntime.sleep(60)", 50)
        finally:
            await s.kill()

    assert _run(go)["status"] == "died"


def test_a_kernel_that_cannot_start_raises_and_is_cleaned_up(tmp_path):
    s = _session(tmp_path)
    spec = tmp_path / "kernels" / environment.KERNEL_NAME / "kernel.json"
    spec.write_text(spec.read_text().replace(sys.executable, "/no/such/python"))
    with pytest.raises(OSError):
        _run(lambda: s.start(ready_timeout=10))
    assert s.km is None and s.kc is None


def test_exit_statuses_are_explained():
    assert describe_exit(None) == "the kernel stopped answering"
    assert "SIGXCPU" in describe_exit(-signal.SIGXCPU)
    assert "segmentation fault" in describe_exit(-signal.SIGSEGV)
    assert describe_exit(-signal.SIGKILL) == "the kernel was killed by signal SIGKILL"


def _sandboxed(tmp_path) -> Session:
    from course_utils.grading.batch import pool
    from course_utils.grading.batch.grader import Limits

    env = environment.submission_kernel_env(60, "run-session", smoke=True)
    kernel = pool.Workers(tmp_path, env, "run-session", Limits(memory_mb=500)).kernel(
        tmp_path
    )
    return Session(
        environment.KERNEL_NAME,
        [kernel["kernel_dir"]],
        env=kernel["env"],
        ipc=kernel["ipc"],
        sandboxed=True,
    )


def test_a_sandboxed_kernel_runs_interrupts_caps_errors_and_dies_whole(tmp_path):
    require_sandbox()

    async def go():
        s = _sandboxed(tmp_path)
        await s.start(ready_timeout=60)
        try:
            who = await s.run_cell("import os\nprint(os.getuid(), os.getppid())", 30)
            big = await s.run_cell("raise ValueError('E' * 1_000_000)", 30)
            await s.run_cell("import time\ntime.sleep(60)", 1.0)
            recovered = await s.interrupt(grace=10)
            own, below = s.own_pids(), _descendants(s.pid)
            crash = await s.run_cell("os.kill(os.getpid(), 11)", 30)
            await asyncio.sleep(0.3)
            return who, big, recovered, own, below, crash, s.exit_code()
        finally:
            await s.kill()

    who, big, recovered, own, below, crash, code = _run(go)
    assert who["outputs"][0]["text"].split() == ["65534", "1"]
    assert big["status"] == "error" and len(big["evalue"]) <= 2000
    error = [o for o in big["outputs"] if o["output_type"] == "error"][0]
    assert len(error["evalue"]) <= 20_000
    assert recovered and len(own) == 3  # bwrap, its init, the kernel
    assert crash["status"] == "died" and code == -signal.SIGSEGV
    assert all(gone(p.pid) for p in below)


def test_a_kernel_that_exits_before_it_answers_is_reported_at_once(tmp_path):
    s = _session(tmp_path)
    spec = tmp_path / "kernels" / environment.KERNEL_NAME / "kernel.json"
    text = spec.read_text()
    spec.write_text(text.replace('"-m"', '"-c", "raise SystemExit(3)", "-m"', 1))
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="died before replying"):
        _run(lambda: s.start(ready_timeout=60))
    assert time.monotonic() - started < 30  # told at once, not at the ready timeout
    assert s.km is None and s.kc is None


class _FakeClient:
    """IOPub that loses the messages of the first ``lost`` cells, then delivers a
    cell's status only after the next cell was sent (a slow subscriber)."""

    def __init__(self, lost: int):
        self.lost, self.sent, self.queue = lost, [], []

    def execute(self, code, **kw):
        msg_id = f"cell-{len(self.sent)}"
        self.sent.append(msg_id)
        if len(self.sent) > self.lost + 1:  # delivered one send late
            parent = self.sent[-2]
            self.queue.append(
                {"parent_header": {"msg_id": parent}, "msg_type": "status"}
            )
        return msg_id

    async def get_iopub_msg(self, timeout):
        import queue as q

        if self.queue:
            return self.queue.pop(0)
        await asyncio.sleep(timeout)
        raise q.Empty


def test_warm_up_retries_quickly_and_takes_the_status_of_any_cell_it_sent():
    s = Session("k", [])
    s.kc = _FakeClient(lost=2)
    start = time.monotonic()
    asyncio.run(s._warm_up(patience=5))
    took = time.monotonic() - start
    # lost, lost, then cell 2's status arrives when cell 3 is sent: four sends,
    # after waits of 10, 20 and 40 ms (one fixed 0.2 s wait a send took 0.6 s)
    assert len(s.kc.sent) == 4
    assert took < 0.5


def test_warm_up_gives_up_after_its_patience():
    s = Session("k", [])
    s.kc = _FakeClient(lost=10**6)
    start = time.monotonic()
    asyncio.run(s._warm_up(patience=0.3))
    assert 0.3 <= time.monotonic() - start < 5
