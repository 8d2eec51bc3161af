"""Real local launches: timeouts, failures, busy ports and Ctrl-C never leave a process behind.

Every test here starts processes itself (``torchrun`` or several ``python``
processes), bounds them with a timeout, and checks afterwards that nothing it
started is still alive: neither a descendant of this process nor any process
carrying the launch's tag (which also finds processes re-parented to init).
"""

import socket
import sys
import textwrap
import time
import uuid

import psutil
import pytest

from course_utils.dist import launch, problem
from course_utils.parity import assert_close

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture
def no_orphans():
    """Fail the test if any process it started outlives it."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    tags: list[str] = []
    yield tags  # tests append the tags of their launches
    deadline = time.monotonic() + 10
    while True:
        extra = []
        for p in me.children(recursive=True):
            try:
                if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE:
                    extra.append(p)
            except psutil.NoSuchProcess:
                continue
        tagged = [p for tag in tags for p in launch.tagged_processes(tag)]
        if not extra and not tagged:
            break
        if time.monotonic() > deadline:
            launch.kill_processes(extra + tagged)
            pytest.fail(f"processes left running after the test: {extra + tagged}")
        time.sleep(0.2)


def _script(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


SLEEPER = """
    import time
    time.sleep(600)
"""

RANK_ONE_CRASHES = """
    import os, sys, time
    if int(os.environ["RANK"]) == 1:
        sys.exit(3)
    time.sleep(600)
"""

REPORT_PORT = """
    import os
    from course_utils.dist import worker
    worker.save_report(int(os.environ["RANK"]), {"port": int(os.environ["MASTER_PORT"]),
                                                 "world": int(os.environ["WORLD_SIZE"])})
"""

JAX_FLAGS = """
    import argparse, sys, time
    ap = argparse.ArgumentParser()
    ap.add_argument("--coordinator"); ap.add_argument("--num-processes", type=int)
    ap.add_argument("--process-id", type=int); ap.add_argument("--local-devices", type=int)
    args = ap.parse_args()
"""


# ------------------------------------------------------------ torchrun


def test_torchrun_timeout_stops_every_process(tmp_path, no_orphans):
    script = _script(tmp_path, "sleeper.py", SLEEPER)
    start = time.monotonic()
    with pytest.raises(launch.LaunchTimeout, match="did not finish within 8 s") as err:
        launch.torchrun(script, 2, timeout=8)
    no_orphans.append(err.value.result.tag)
    assert time.monotonic() - start < 8 + 30
    assert err.value.result.timed_out
    assert launch.tagged_processes(err.value.result.tag) == []


def test_a_failing_rank_ends_the_run_quickly(tmp_path, no_orphans):
    script = _script(tmp_path, "crash.py", RANK_ONE_CRASHES)
    start = time.monotonic()
    with pytest.raises(launch.LaunchError) as err:
        launch.torchrun(script, 2, timeout=120)
    no_orphans.append(err.value.result.tag)
    assert not isinstance(err.value, launch.LaunchTimeout)
    assert time.monotonic() - start < 60, (
        "the surviving rank should be stopped, not waited for"
    )
    assert err.value.result.returncodes != [0]


def test_a_busy_port_is_replaced(tmp_path, no_orphans, capsys):
    script = _script(tmp_path, "report.py", REPORT_PORT)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        busy = squatter.getsockname()[1]
        result = launch.torchrun(script, 2, port=busy, timeout=120)
    no_orphans.append(result.tag)
    assert result.ok and result.port != busy and result.attempts == 1
    assert [r["port"] for r in result.ranks] == [result.port, result.port]
    assert [r["world"] for r in result.ranks] == [2, 2]
    assert f"port {busy} is already in use" in capsys.readouterr().err


def test_a_port_taken_during_start_up_is_retried(tmp_path, no_orphans, monkeypatch):
    """The race: the port was free when chosen, then taken before torchrun bound it."""
    script = _script(tmp_path, "report.py", REPORT_PORT)
    real_pick = launch.pick_port
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        busy = squatter.getsockname()[1]
        calls = []

        def racy_pick(port=None):
            calls.append(port)
            return busy if len(calls) == 1 else real_pick(port)

        monkeypatch.setattr(launch, "pick_port", racy_pick)
        result = launch.torchrun(script, 2, timeout=120)
    no_orphans.append(result.tag)
    assert result.ok and result.attempts == 2 and result.port != busy
    assert len(result.ranks) == 2


def test_ctrl_c_during_a_launch_cleans_up(tmp_path, no_orphans, monkeypatch):
    script = _script(tmp_path, "sleeper.py", SLEEPER)
    tag = uuid.uuid4()
    monkeypatch.setattr(launch.uuid, "uuid4", lambda: tag)
    no_orphans.append(tag.hex)
    started = time.monotonic()
    real_pause = launch._pause

    def interrupt_after_start():
        if time.monotonic() - started > 4:  # the ranks are up by now
            raise KeyboardInterrupt
        real_pause()

    monkeypatch.setattr(launch, "_pause", interrupt_after_start)
    with pytest.raises(KeyboardInterrupt):
        launch.torchrun(script, 2, timeout=120)
    assert launch.tagged_processes(tag.hex) == []


def test_a_second_ctrl_c_during_cleanup_still_cleans_up(
    tmp_path, no_orphans, monkeypatch
):
    """Interrupted while stopping the first process, the launcher still stops everything."""
    script = _script(tmp_path, "jaxsleep.py", JAX_FLAGS + "    time.sleep(600)\n")
    tag = uuid.uuid4()
    monkeypatch.setattr(launch.uuid, "uuid4", lambda: tag)
    no_orphans.append(tag.hex)
    real_kill, calls = launch.kill_process_group, []

    def interrupted_kill(proc, grace_s=3.0):
        calls.append(proc.pid)
        if len(calls) == 1:
            raise KeyboardInterrupt  # before this process was stopped
        real_kill(proc, grace_s)

    monkeypatch.setattr(launch, "kill_process_group", interrupted_kill)
    with pytest.raises(KeyboardInterrupt):
        launch.jax_processes(script, 2, 1, timeout=3)
    assert len(calls) == 2, "the second process was still stopped"
    assert launch.tagged_processes(tag.hex) == [], "the tag sweep stopped the first one"


# ------------------------------------------------------- JAX-style launches


def test_jax_processes_one_failure_stops_the_others(tmp_path, no_orphans):
    script = _script(
        tmp_path,
        "jaxfail.py",
        JAX_FLAGS
        + """
    if args.process_id == 1:
        sys.exit(2)
    time.sleep(600)  # process 0 would wait for its peer forever
    """,
    )
    start = time.monotonic()
    with pytest.raises(launch.LaunchError, match=r"exit codes \[") as err:
        launch.jax_processes(script, 2, 4, timeout=120)
    no_orphans.append(err.value.result.tag)
    assert time.monotonic() - start < launch.FAIL_GRACE_S + 20
    assert err.value.result.returncodes[1] == 2
    assert err.value.result.returncodes[0] in (-15, -9), (
        "process 0 was stopped, not finished"
    )


def test_jax_processes_timeout(tmp_path, no_orphans):
    script = _script(tmp_path, "jaxsleep.py", JAX_FLAGS + "    time.sleep(600)\n")
    with pytest.raises(launch.LaunchTimeout) as err:
        launch.jax_processes(script, 3, 1, timeout=5)
    no_orphans.append(err.value.result.tag)
    assert len(err.value.result.commands) == 3
    assert launch.tagged_processes(err.value.result.tag) == []


def test_jax_processes_pass_the_flags(tmp_path, no_orphans):
    script = _script(
        tmp_path,
        "jaxflags.py",
        JAX_FLAGS
        + """
    import os
    from course_utils.dist import worker
    worker.save_report(args.process_id, {"coordinator": args.coordinator, "n": args.num_processes,
                                         "local": args.local_devices, "platform": os.environ.get("JAX_PLATFORMS")})
    """,
    )
    result = launch.jax_processes(script, 2, 3, timeout=60)
    no_orphans.append(result.tag)
    assert [r["coordinator"] for r in result.ranks] == [f"127.0.0.1:{result.port}"] * 2
    assert {(r["n"], r["local"], r["platform"]) for r in result.ranks} == {
        (2, 3, "cpu")
    }


def test_real_jax_multiprocess_gradients_equal_the_oracle(tmp_path, no_orphans):
    prob = problem.make_problem(4, batch=16, d_in=5, d_hidden=8, d_out=3)
    problem.save(tmp_path / "problem.npz", prob)
    result = launch.jax_processes(
        "course_utils.dist.jax_multiprocess", 2, 2, workdir=tmp_path, timeout=180
    )
    no_orphans.append(result.tag)
    _, grads = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    assert [r["process_index"] for r in result.ranks] == [0, 1]
    for report in result.ranks:
        assert report["device_count"] == 4 and report["local_device_count"] == 2
        assert report["local_rows"] == 8
        assert_close(problem.take(report, "grad_"), grads, rtol=1e-4, atol=1e-6)


# ------------------------------------------------- a function on real ranks


def good_average(model):
    world = dist.get_world_size()  # noqa: F821 - the harness provides dist
    for p in model.parameters():
        dist.all_reduce(p.grad)  # noqa: F821
        p.grad /= world


def forgets_to_divide(model):
    for p in model.parameters():
        dist.all_reduce(p.grad)  # noqa: F821


def stub(model):
    raise NotImplementedError()


def test_torchrun_function_checks_real_gradient_averaging(no_orphans):
    prob = problem.make_problem(2, batch=12, d_in=4, d_hidden=6, d_out=2)
    _, grads = problem.loss_and_grads_numpy(
        problem.params_of(prob), prob["X"], prob["y"]
    )
    good = launch.torchrun_function(
        good_average, "course_utils.dist.torch_check", 2, timeout=180, problem=prob
    )
    no_orphans.append(good.tag)
    for report in good.ranks:
        assert_close(
            problem.take(report, "yours_"),
            problem.take(report, "ddp_"),
            rtol=1e-5,
            atol=1e-6,
        )
        assert_close(problem.take(report, "yours_"), grads, rtol=1e-4, atol=1e-6)
    bad = launch.torchrun_function(
        forgets_to_divide, "course_utils.dist.torch_check", 2, timeout=180, problem=prob
    )
    no_orphans.append(bad.tag)
    with pytest.raises(AssertionError):
        assert_close(
            problem.take(bad.ranks[0], "yours_"), problem.take(bad.ranks[0], "ddp_")
        )
    with pytest.raises(NotImplementedError, match="stub is not implemented yet"):
        launch.torchrun_function(stub, "course_utils.dist.torch_check", 2, timeout=180)


if sys.platform != "linux":  # pragma: no cover
    pytest.skip("process-tree checks use Linux's /proc", allow_module_level=True)
