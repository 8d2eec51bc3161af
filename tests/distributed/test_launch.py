"""distributed.launch: commands, argument checks, and real torchrun and JAX-style launches.

The real launches start processes themselves, bound them with a timeout, and
check afterwards that nothing they started is still alive (``no_orphans``).
"""

import socket
import subprocess
import sys
import time

import pytest

from course_utils.distributed import launch, processes
from tests import load
from tests.distributed.helpers import (
    JAX_FLAGS,
    RANK_ONE_CRASHES,
    REPORT_PORT,
    SLEEPER,
    write_script,
)

# The real launches: slow, bounded, and checked with Linux's /proc.
slow = pytest.mark.slow
bounded = pytest.mark.timeout(load.stretched(240))
linux = pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc")


def test_importing_the_package_imports_no_framework():
    code = (
        "import sys\n"
        "import course_utils.distributed, course_utils.distributed.launch, course_utils.distributed.problem\n"
        "import course_utils.distributed.cost, course_utils.distributed.worker\n"
        "print([f for f in ('jax', 'torch', 'flax', 'optax') if f in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_torchrun_command_module_and_script():
    cmd = launch.torchrun_command("pkg.mod", 3, 1234, ["--x", 1])
    assert cmd[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert cmd[cmd.index("--nproc-per-node") + 1] == "3"
    assert cmd[cmd.index("--master-port") + 1] == "1234"
    assert cmd[-4:] == ["-m", "pkg.mod", "--x", "1"]
    script = launch.torchrun_command("/tmp/a.py", 2, 1)
    assert "-m" not in script[3:] and script[-1] == "/tmp/a.py"
    assert launch.display_command(cmd).startswith(
        "torchrun --nnodes 1 --nproc-per-node 3"
    )


def test_jax_command_flags():
    cmd = launch.jax_command("pkg.mod", "127.0.0.1:5", 2, 1, 4)
    assert cmd[:3] == [sys.executable, "-m", "pkg.mod"]
    flags = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert flags == {
        "--coordinator": "127.0.0.1:5",
        "--num-processes": "2",
        "--process-id": "1",
        "--local-devices": "4",
    }
    assert launch.jax_command("/x/s.py", "h:1", 1, 0, 1)[:2] == [
        sys.executable,
        "/x/s.py",
    ]
    assert launch.display_command(cmd).startswith("python -m pkg.mod")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: launch.torchrun("m", 0), "nproc"),
        (lambda: launch.torchrun("m", True), "nproc"),
        (lambda: launch.torchrun("", 2), "target"),
        (lambda: launch.torchrun("m", 2, timeout=0), "timeout"),
        (lambda: launch.torchrun("m", 2, retries=-1), "retries"),
        (lambda: launch.jax_processes("m", 2, 0), "local_devices"),
        (lambda: launch.jax_processes("m", -1, 4), "num_processes"),
    ],
)
def test_bad_launch_arguments_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_launch_offers_the_names_lessons_call():
    for name in (
        "torchrun",
        "torchrun_function",
        "jax_processes",
        "excerpt",
        "display_command",
        "tagged_processes",
        "LaunchResult",
        "LaunchError",
        "LaunchTimeout",
        "pick_port",
        "free_port",
        "port_in_use",
        "FAIL_GRACE_S",
    ):
        assert hasattr(launch, name), name


# ------------------------------------------------------------ real launches


@slow
@bounded
@linux
def test_torchrun_timeout_stops_every_process(tmp_path, no_orphans):
    script = write_script(tmp_path, "sleeper.py", SLEEPER)
    start = time.monotonic()
    with pytest.raises(launch.LaunchTimeout, match="did not finish within 8 s") as err:
        launch.torchrun(script, 2, timeout=8)
    no_orphans.append(err.value.result.tag)
    assert time.monotonic() - start < 8 + load.stretched(30)
    assert err.value.result.timed_out
    assert launch.tagged_processes(err.value.result.tag) == []


@slow
@bounded
@linux
def test_a_failing_rank_ends_the_run_quickly(tmp_path, no_orphans):
    script = write_script(tmp_path, "crash.py", RANK_ONE_CRASHES)
    start = time.monotonic()
    with pytest.raises(launch.LaunchError) as err:
        launch.torchrun(script, 2, timeout=120)
    no_orphans.append(err.value.result.tag)
    assert not isinstance(err.value, launch.LaunchTimeout)
    assert time.monotonic() - start < load.stretched(60), (
        "the surviving rank should be stopped, not waited for"
    )
    assert err.value.result.returncodes != [0]


@slow
@bounded
@linux
def test_a_busy_port_is_replaced(tmp_path, no_orphans, capsys):
    script = write_script(tmp_path, "report.py", REPORT_PORT)
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


@slow
@bounded
@linux
def test_a_port_taken_during_start_up_is_retried(tmp_path, no_orphans, monkeypatch):
    """The race: the port was free when chosen, then taken before torchrun bound it."""
    script = write_script(tmp_path, "report.py", REPORT_PORT)
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


@slow
@bounded
@linux
def test_jax_processes_one_failure_stops_the_others(tmp_path, no_orphans, monkeypatch):
    # Process 0 never exits by itself: a shorter grace stops it sooner, as surely.
    monkeypatch.setattr(processes, "FAIL_GRACE_S", 0.5)
    script = write_script(
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
    assert time.monotonic() - start < processes.FAIL_GRACE_S + load.stretched(20)
    assert err.value.result.returncodes[1] == 2
    assert err.value.result.returncodes[0] in (-15, -9), (
        "process 0 was stopped, not finished"
    )


@slow
@bounded
@linux
def test_jax_processes_timeout(tmp_path, no_orphans):
    script = write_script(tmp_path, "jaxsleep.py", JAX_FLAGS + "    time.sleep(600)\n")
    with pytest.raises(launch.LaunchTimeout) as err:
        launch.jax_processes(script, 3, 1, timeout=2)
    no_orphans.append(err.value.result.tag)
    assert len(err.value.result.commands) == 3
    assert launch.tagged_processes(err.value.result.tag) == []


@slow
@bounded
@linux
def test_jax_processes_pass_the_flags(tmp_path, no_orphans):
    script = write_script(
        tmp_path,
        "jaxflags.py",
        JAX_FLAGS
        + """
    import os
    from course_utils.distributed import worker
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


def test_a_machine_that_refuses_tcp_launches_nothing_and_says_so_once(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("COURSE_NO_LOOPBACK", "1")
    run = launch.torchrun("course_utils.distributed.torch_ddp", 2, workdir=tmp_path)
    assert run.skipped and not run.ok and run.ranks == [] and run.seconds == 0.0
    assert run.section("ddp") == []  # a cell looping over the reports shows nothing
    assert str(run).startswith("not launched: This machine refuses TCP")
    assert "--nproc-per-node 2" in run.command_line  # the command is still shown
    assert capsys.readouterr().out.count("refuses TCP") == 1
    mp = launch.jax_processes(
        "course_utils.distributed.jax_multiprocess", 2, 2, workdir=tmp_path
    )
    assert mp.skipped and mp.ranks == [] and len(mp.commands) == 2
    assert not list(tmp_path.glob("rank*"))  # nothing started, nothing written


def test_torchrun_function_returns_the_skipped_run_unjudged(monkeypatch):
    monkeypatch.setenv("COURSE_NO_LOOPBACK", "1")

    def average(grads):
        raise NotImplementedError

    run = launch.torchrun_function(average, "course_utils.distributed.torch_check")
    assert run.skipped and run.ranks == []
