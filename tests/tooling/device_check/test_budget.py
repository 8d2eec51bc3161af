"""course_utils.tooling.device_check.budget: time left, time limits, and full-mode estimates."""

from __future__ import annotations

import pytest

from course_utils.tooling.device_check.budget import (
    FULL_OVER_SMOKE,
    MIN_START_S,
    SKIPPED_BUDGET,
    STOPPED_BUDGET,
    Budget,
    cut_by_budget,
    estimate,
    step_status,
)


class Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_without_a_budget_nothing_is_shortened_and_everything_may_start():
    clock = Clock()
    budget = Budget(None, clock)
    clock.t += 5000.0
    assert budget.remaining() is None and budget.can_start()
    assert budget.timeout(300.0) == 300.0 and budget.timeout() is None
    assert budget.elapsed() == 5000.0


def test_a_budget_counts_from_when_it_was_made_and_shortens_limits():
    clock = Clock()
    budget = Budget(100.0, clock)
    clock.t += 40.0
    assert budget.remaining() == 60.0 and budget.elapsed() == 40.0
    assert budget.timeout(300.0) == 60.0  # the budget is shorter
    assert budget.timeout(30.0) == 30.0  # the limit is shorter
    assert budget.timeout() == 60.0
    clock.t += 60.0 - MIN_START_S + 0.5
    assert not budget.can_start()
    clock.t += 100.0
    assert budget.remaining() < 0 and budget.timeout(300.0) == 1.0  # never below 1 s


def test_cut_by_budget_only_when_the_budget_shortened_the_limit():
    assert not cut_by_budget(None, None)  # no limit at all
    assert not cut_by_budget(300.0, 300.0)  # the step's own limit
    assert cut_by_budget(120.0, 300.0)
    assert cut_by_budget(120.0, None)  # no own limit: any limit is the budget's


@pytest.mark.parametrize(
    "result, limit, cap, status",
    [
        ({"ok": True, "exit_code": 0}, None, None, "ok"),
        ({"ok": False, "exit_code": 1}, 50.0, 300.0, "failed"),  # it ended: a failure
        ({"ok": False, "exit_code": None}, 300.0, 300.0, "failed"),  # its own limit
        ({"ok": False, "exit_code": None}, 50.0, 300.0, STOPPED_BUDGET),
    ],
)
def test_step_status(result, limit, cap, status):
    got, detail = step_status({**result, "output": "x"}, limit, cap)
    assert got == status
    assert detail == {"exit_code": result["exit_code"], "output": "x"}


def entry(name, mode, status, seconds):
    return {"notebook": name, "mode": mode, "status": status, "seconds": seconds}


def test_estimate_scales_the_smoke_time_by_the_median_full_over_smoke_ratio():
    runs = [entry("a", "smoke", "ok", 10.0), entry("b", "smoke", "ok", 20.0)]
    assert estimate(runs, "a") == 10.0 * FULL_OVER_SMOKE  # no full run yet
    runs.append(entry("a", "full", "ok", 30.0))
    assert estimate(runs, "b") == 60.0  # a's ratio: 3
    runs += [entry("c", "smoke", "ok", 1.0), entry("c", "full", "ok", 5.0)]
    runs += [entry("d", "smoke", "ok", 1.0), entry("d", "full", "ok", 7.0)]
    assert estimate(runs, "b") == 100.0  # the median of 3, 5 and 7


def test_no_estimate_without_a_good_smoke_run():
    runs = [entry("a", "smoke", "failed", 10.0), entry("b", "smoke", SKIPPED_BUDGET, 0)]
    assert estimate(runs, "a") is None and estimate(runs, "b") is None
    assert estimate(runs, "missing") is None
