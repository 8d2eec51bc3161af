"""distributed.processes: commands side by side, and cleanup through one or two Ctrl-C."""

import sys
import time
import uuid

import pytest

from course_utils.distributed import launch, processes
from tests.distributed.helpers import JAX_FLAGS, SLEEPER, write_script


def test_execute_collects_codes_and_prefixed_output(tmp_path):
    say = [sys.executable, "-c", "print('hello')"]
    fail = [sys.executable, "-c", "import sys; sys.exit(4)"]
    tag = uuid.uuid4().hex
    codes, output, timed_out = processes.execute([say, fail], {}, tmp_path, 60, tag)
    assert codes == [0, 4] and not timed_out
    assert "[process 0] hello" in output.splitlines()
    assert processes.cleanup(tag) == 0 and processes.tagged_processes(tag) == []


def test_run_all_runs_every_step_and_returns_the_first_error():
    done = []

    def boom():
        raise KeyboardInterrupt

    first = processes._run_all([boom, lambda: done.append(1), boom])
    assert isinstance(first, KeyboardInterrupt) and done == [1]


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc")
def test_ctrl_c_during_a_launch_cleans_up(tmp_path, no_orphans, monkeypatch):
    script = write_script(tmp_path, "sleeper.py", SLEEPER)
    tag = uuid.uuid4()
    monkeypatch.setattr(launch.uuid, "uuid4", lambda: tag)
    no_orphans.append(tag.hex)
    started = time.monotonic()
    real_pause = processes._pause

    def interrupt_after_start():
        if time.monotonic() - started > 4:  # the ranks are up by now
            raise KeyboardInterrupt
        real_pause()

    monkeypatch.setattr(processes, "_pause", interrupt_after_start)
    with pytest.raises(KeyboardInterrupt):
        launch.torchrun(script, 2, timeout=120)
    assert launch.tagged_processes(tag.hex) == []


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(sys.platform != "linux", reason="uses Linux's /proc")
def test_a_second_ctrl_c_during_cleanup_still_cleans_up(
    tmp_path, no_orphans, monkeypatch
):
    """Interrupted while stopping the first process, the launcher still stops everything."""
    script = write_script(tmp_path, "jaxsleep.py", JAX_FLAGS + "    time.sleep(600)\n")
    tag = uuid.uuid4()
    monkeypatch.setattr(launch.uuid, "uuid4", lambda: tag)
    no_orphans.append(tag.hex)
    real_kill, calls = processes.kill_process_group, []

    def interrupted_kill(proc, grace_s=3.0):
        calls.append(proc.pid)
        if len(calls) == 1:
            raise KeyboardInterrupt  # before this process was stopped
        real_kill(proc, grace_s)

    monkeypatch.setattr(processes, "kill_process_group", interrupted_kill)
    with pytest.raises(KeyboardInterrupt):
        launch.jax_processes(script, 2, 1, timeout=3)
    assert len(calls) == 2, "the second process was still stopped"
    assert launch.tagged_processes(tag.hex) == [], "the tag sweep stopped the first one"
