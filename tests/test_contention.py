"""course_utils.contention: the thread policy, the contention rule, and a real busy machine."""

import subprocess
import sys
import time
import types

import pytest

from course_utils import contention
from course_utils.claims import verdict_rule, verdicts
from course_utils.contention import Contention


class FakeTorch(types.ModuleType):
    def __init__(self, threads):
        super().__init__("torch")
        self.threads = threads

    def get_num_threads(self):
        return self.threads

    def set_num_threads(self, n):
        self.threads = n


def test_set_threads_makes_torch_match_the_cores(monkeypatch):
    fake = FakeTorch(16)
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(contention, "cores", lambda: 2)
    policy = contention.set_threads()
    assert fake.threads == 2 and policy["torch"] == 2 and policy["cores"] == 2
    with pytest.raises(ValueError, match="at least 1"):
        contention.set_threads(0)


def test_policy_text_and_oversubscription():
    policy = {"cores": 2, "torch": 8, "jax": 2}
    assert contention.policy_text(policy) == "threads: torch 8, JAX 2, on 2 cores"
    assert (
        contention.oversubscribed(policy)
        == "oversubscribed: torch uses 8 threads on 2 cores"
    )
    assert contention.oversubscribed({"cores": 4, "torch": 4, "jax": 4}) is None


def _c(load, others, threads=None, wait=0.0):
    c = Contention(2, load, load, wait, 1.0, threads or {"cores": 2, "torch": 2})
    c.others_share = others
    return c


@pytest.mark.parametrize(
    "c, expected",
    [
        (_c(0.3, 0.02), None),
        (_c(1.5, 0.40), "other processes used 40% of the 2 cores"),
        (_c(5.0, 0.05), None),  # the direct measure wins over a lagging load average
        (
            _c(0.3, 0.02, wait=0.9),
            None,
        ),  # our own threads queueing is reported, not judged
        (_c(5.0, None), "load 5.0 on 2 cores"),  # no per-CPU counters: the load decides
        (_c(1.5, None), None),
        (_c(0.1, 0.0, {"cores": 2, "torch": 4}), "oversubscribed"),
    ],
)
def test_the_contention_rule(c, expected):
    reason = contention.judge(c).reason
    if expected is None:
        assert reason is None
        assert c.text().startswith("quiet")
    else:
        assert expected in reason
        assert c.text().startswith("contended (")


def test_a_quiet_line_names_what_decided_it():
    """The share of other processes comes first; the load, which counts our threads, follows."""
    text = contention.judge(_c(5.0, 0.05)).text()
    assert text.startswith(
        "quiet: other processes used 5% of the 2 cores (contended above 25%)"
    )
    assert "load 5.0, this process's own threads included" in text
    assert contention.judge(_c(1.5, None)).text() == "quiet: load 1.5 on 2 cores"


def test_monitor_counts_other_processes_cpu_time(monkeypatch):
    readings = iter([100.0, 100.6])  # busy seconds of our cores, all processes
    monkeypatch.setattr(contention, "_busy_cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(contention, "cores", lambda: 2)
    with contention.Monitor() as m:
        time.sleep(0.5)  # we use ~0 CPU: the 0.6 s were someone else's
    assert m.result.others_share == pytest.approx(0.6, abs=0.15)
    assert m.result.contended


def _busy_loops(n: int) -> list[subprocess.Popen]:
    code = "import time\nend = time.time() + 60\nwhile time.time() < end: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def _spin(seconds: float) -> int:
    end, x = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        x += 1
    return x


def _work(n):
    return sorted(range(n, 0, -1))


def _faster_verdict():
    from course_utils import timing

    cmp = timing.compare(
        {"big": lambda: _work(40_000), "small": lambda: _work(4_000)},
        check=False,
        target_s=0.3,
    )
    return verdicts.faster(cmp, "big", "small")


@pytest.mark.slow
@pytest.mark.skipif(
    contention._run_queue_seconds() is None, reason="no run-queue counter"
)
def test_a_busy_machine_is_reported_contended_and_no_verdict_flips():
    """Bounded background load: as many busy loops as cores, killed after the test."""
    quiet = _faster_verdict()
    loops = _busy_loops(contention.cores())
    try:
        time.sleep(0.3)
        with contention.Monitor() as m:
            _spin(1.0)
        busy = _faster_verdict()
    finally:
        for p in loops:
            p.kill()
            p.wait()
    assert m.result.contended, m.result
    assert busy.verdict == quiet.verdict or busy.verdict == verdict_rule.INCONCLUSIVE, (
        quiet,
        busy,
    )
    assert busy.verdict != verdict_rule.DOES_NOT_HOLD  # small sorts are never slower
