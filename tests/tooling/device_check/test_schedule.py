"""course_utils.tooling.device_check.schedule: order, concurrency and the budget (fake clock and children)."""

from __future__ import annotations

import random

import pytest

from course_utils.tooling.device_check.budget import (
    MIN_START_S,
    SKIPPED_BUDGET,
    STOPPED_BUDGET,
    Budget,
)
from course_utils.tooling.device_check.schedule import (
    POLL_S,
    Hooks,
    Item,
    Pool,
    core_list,
    plan,
    run,
)


def item(key, seconds, cores=1, gib=0.0, **kw) -> Item:
    step = kw.pop("step", "smoke")
    return Item(
        key=key,
        step=step,
        kind=step,
        seconds=seconds,
        cores=cores,
        gpu_gib=gib,
        notebook=key,
        **kw,
    )


class World:
    """A fake clock, fake children that take ``actual`` seconds, and what ran when."""

    def __init__(self, actual: dict[str, float], cores: int, gib: float | None):
        self.t = 0.0
        self.actual = actual
        self.cores, self.gib = cores, gib
        self.running: dict[str, tuple[Item, tuple[int, ...]]] = {}
        self.log: list[tuple[str, str, float]] = []
        self.results: dict[str, dict] = {}
        self.limits: dict[str, float | None] = {}
        self.peak_cores = 0
        self.peak_gib = 0.0

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds

    def launch(self, it: Item, limit, ids):
        world = self
        self.running[it.key] = (it, ids)
        used = [i for _, held in self.running.values() for i in held]
        assert len(used) == len(set(used)) <= self.cores
        self.peak_cores = max(self.peak_cores, len(used))
        gib = sum(x.gpu_gib for x, _ in self.running.values())
        self.peak_gib = max(self.peak_gib, gib)
        t0 = self.t

        class Child:
            def poll(self):
                if world.t - t0 < world.actual.get(it.key, it.seconds):
                    return None
                del world.running[it.key]
                return {"status": "ok", "seconds": world.t - t0}

            def stop(self, why):
                del world.running[it.key]
                return {"status": why, "seconds": world.t - t0}

        return Child()

    def hooks(self) -> Hooks:
        def started(it, limit, ids):
            self.log.append(("start", it.key, self.t))
            self.limits[it.key] = limit

        def ended(it, result):
            self.log.append(("end", it.key, self.t))
            self.results[it.key] = result

        return Hooks(
            started=started,
            ended=ended,
            skipped=lambda it: ended(it, {"status": SKIPPED_BUDGET, "seconds": 0.0}),
        )

    def run(self, items, budget=None, one_at_a_time=False):
        return run(
            items,
            self.launch,
            core_ids=list(range(self.cores)),
            gpu_gib=self.gib,
            budget=Budget(budget, self.clock),
            hooks=self.hooks(),
            sleep=self.sleep,
            one_at_a_time=one_at_a_time,
        )

    def starts(self) -> dict[str, float]:
        return {k: t for what, k, t in self.log if what == "start"}


def test_longest_first_and_a_short_one_fills_the_gap_beside_it():
    items = [item("a", 10), item("b", 30, cores=2), item("c", 20), item("d", 5)]
    made = plan(items, [0, 1, 2], None, None)
    rows = {r.item.key: r for r in made.rows}
    assert [r.item.key for r in made.rows] == ["b", "c", "a", "d"]
    assert (rows["b"].start, rows["b"].core_ids) == (0.0, (0, 1))
    assert (rows["c"].start, rows["c"].core_ids) == (0.0, (2,))
    assert rows["a"].start == 20.0 and rows["d"].start == 30.0
    assert made.wall == 35.0 and made.skipped == []


def test_the_live_run_follows_the_plan_when_items_take_their_estimates():
    items = [item("a", 10), item("b", 30, cores=2), item("c", 20), item("d", 5)]
    world = World({}, cores=3, gib=None)
    assert world.run(items) is True
    made = {r.item.key: r.start for r in plan(items, [0, 1, 2], None, None).rows}
    for key, t in world.starts().items():
        assert t == pytest.approx(made[key], abs=POLL_S)


@pytest.mark.parametrize("seed", range(5))
def test_concurrency_never_exceeds_cores_or_gpu_memory(seed):
    rng = random.Random(seed)
    items = [
        item(
            f"i{k}",
            rng.uniform(1, 50),
            cores=rng.choice([1, 1, 2]),
            gib=rng.choice([1.0, 4.0, 8.0]),
        )
        for k in range(30)
    ]
    world = World({i.key: i.seconds * rng.uniform(0.5, 1.5) for i in items}, 2, 9.0)
    assert world.run(items) is True
    assert world.peak_cores <= 2 and world.peak_gib <= 9.0
    assert len(world.results) == 30
    assert all(r["status"] == "ok" for r in world.results.values())
    made = plan(items, [0, 1], 9.0, None)
    for t in {r.start for r in made.rows}:
        live = [r for r in made.rows if r.start <= t < r.end]
        assert sum(len(r.core_ids) for r in live) <= 2
        assert sum(r.item.gpu_gib for r in live) <= 9.0


def test_one_at_a_time_each_item_runs_alone_on_every_core_lessons_first():
    # A TPU's chips belong to one process at a time: nothing may overlap.
    items = [
        item("m0", 60, step="master"),
        item("full0", 400, step="full", must_fit=True),
        item("l0", 40),
        item("l1", 80, cores=2),
        item("doc", 9, step="doctor"),
        item("t0", 70, step="tests"),
    ]
    made = plan(items, [0, 1, 2, 3], None, None, one_at_a_time=True)
    assert [r.item.key for r in made.rows] == ["doc", "l0", "l1", "m0", "t0", "full0"]
    assert all(r.core_ids == (0, 1, 2, 3) for r in made.rows)
    ends = [r.end for r in made.rows]
    assert all(r.start == prev for r, prev in zip(made.rows[1:], ends, strict=False))
    world = World({"l1": 20.0}, cores=4, gib=None)
    assert world.run(items, one_at_a_time=True) is True
    assert world.peak_cores == 4  # one child at a time, holding every core
    order = [k for what, k, _ in world.log if what == "start"]
    assert order == ["doc", "l0", "l1", "m0", "t0", "full0"]
    spans = sorted((world.starts()[k], t) for what, k, t in world.log if what == "end")
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end
    # Side by side (the default) the same items overlap.
    assert plan(items, [0, 1, 2, 3], None, None).wall < made.wall


def test_one_at_a_time_under_a_budget_skips_what_cannot_start():
    items = [item("l0", 100), item("l1", 100), item("l2", 100)]
    world = World({}, cores=2, gib=None)
    world.run(items, budget=150, one_at_a_time=True)
    assert world.results["l0"]["status"] == "ok"
    assert world.results["l1"]["status"] == STOPPED_BUDGET
    assert world.results["l2"]["status"] == SKIPPED_BUDGET


def test_an_item_larger_than_the_machine_runs_alone():
    pool = Pool([0, 1], 10.0)
    big = item("big", 5, cores=4, gib=16.0)
    assert pool.need(big) == (2, 10.0) and pool.fits(big)
    world = World({}, cores=2, gib=10.0)
    world.run([big, item("small", 1, gib=1.0)])
    assert world.starts() == {"big": 0.0, "small": pytest.approx(5.0, abs=POLL_S)}


def test_the_budget_limits_each_child_and_stops_what_overruns():
    world = World({"long": 500.0}, cores=2, gib=None)
    world.run([item("long", 50, timeout=900.0), item("short", 20, timeout=900.0)], 100)
    assert world.limits == {"long": 100.0, "short": 100.0}
    assert world.results["long"]["status"] == STOPPED_BUDGET
    assert world.results["long"]["seconds"] == pytest.approx(100.0, abs=POLL_S)
    assert world.results["short"]["status"] == "ok"


def test_a_child_past_its_own_limit_is_stopped_as_a_timeout():
    world = World({"slow": 500.0}, cores=1, gib=None)
    world.run([item("slow", 50, timeout=60.0)], 1000)
    assert world.results["slow"]["status"] == "timeout"
    assert world.results["slow"]["seconds"] == pytest.approx(60.0, abs=POLL_S)


def test_nothing_starts_with_less_than_min_start_left():
    world = World({"a": 95.0}, cores=1, gib=None)
    world.run([item("a", 90), item("b", 1)], 100 + MIN_START_S - 6)
    assert world.results["b"]["status"] == SKIPPED_BUDGET
    assert "b" not in world.starts()
    made = plan([item("a", 95), item("b", 1)], [0], None, 100 + MIN_START_S - 6)
    assert [i.key for i in made.skipped] == ["b"]


def test_a_full_run_starts_only_when_its_estimate_fits_the_time_left():
    full = item("full:x", 80, step="full", must_fit=True)
    world = World({}, cores=2, gib=None)
    world.run([full, item("other", 30)], 60)
    assert world.results["full:x"]["status"] == SKIPPED_BUDGET
    made = plan([full, item("other", 30)], [0, 1], None, 60)
    assert [i.key for i in made.skipped] == ["full:x"]
    # the plan lets a long smoke item run past the budget (it would be stopped)
    made = plan([item("long", 80)], [0], None, 60)
    assert made.rows[0].end == 80.0 and made.skipped == []


def test_a_full_run_waits_for_its_smoke_run_whose_time_may_lower_its_estimate():
    smoke = Item("smoke:nb", "smoke", "smoke", 10, notebook="nb")
    full = Item("full:nb", "full", "full", 200, notebook="nb", must_fit=True)
    world = World({"smoke:nb": 5.0}, cores=2, gib=None)
    hooks = world.hooks()

    def refresh(waiting):
        for it in waiting:
            if it.key == "full:nb" and "smoke:nb" in world.results:
                it.seconds = 20.0  # 4x the smoke run

    hooks.refresh = refresh
    run(
        [smoke, full],
        world.launch,
        core_ids=[0, 1],
        gpu_gib=None,
        budget=Budget(100, world.clock),
        hooks=hooks,
        sleep=world.sleep,
    )
    assert world.results["full:nb"]["status"] == "ok"
    assert world.starts()["full:nb"] == pytest.approx(5.0, abs=POLL_S)


def test_ctrl_c_stops_the_running_and_marks_the_waiting():
    world = World({}, cores=1, gib=None)

    def sleep(seconds):
        world.t += seconds
        if world.t > 3:
            raise KeyboardInterrupt

    finished = run(
        [item("a", 10), item("b", 5)],
        world.launch,
        core_ids=[0],
        gpu_gib=None,
        budget=Budget(None, world.clock),
        hooks=world.hooks(),
        sleep=sleep,
    )
    assert finished is False
    assert world.results == {
        "a": {"status": "interrupted", "seconds": pytest.approx(3.0, abs=POLL_S)},
        "b": {"status": "interrupted", "seconds": 0.0},
    }


def test_core_list():
    assert core_list((3,)) == "3"
    assert core_list((3, 4, 5)) == "3-5"
    assert core_list((0, 4)) == "0,4"
