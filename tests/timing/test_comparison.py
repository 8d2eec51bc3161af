"""course_utils.timing.comparison: compare: equal results first, then interleaved rounds, one table."""

from __future__ import annotations

import itertools
import statistics
import time

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from course_utils import timing
from course_utils.timing import measurement


def test_compare_checks_results_first():
    with pytest.raises(
        AssertionError, match="'wrong' does not compute the same result"
    ):
        timing.compare({"right": lambda: np.ones(3), "wrong": lambda: np.zeros(3)})


def test_compare_interleaves_and_reports_ratios():
    order = []

    def make(name, seconds):
        def fn():
            order.append(name)
            time.sleep(seconds)
            return np.ones(2)

        return fn

    result = timing.compare(
        {"slow": make("slow", 0.004), "fast": make("fast", 0.001)}, rounds=12
    )
    assert result.baseline == "slow"
    assert result.ratio("slow") == 1.0
    timed = order[-24:]  # the timed rounds come last
    switches = sum(a != b for a, b in itertools.pairwise(timed))
    assert switches >= 8  # interleaved, not all of one then all of the other
    assert "| fast |" in result.table()
    if result.contention is not None and result.contention.contended:
        # A busy machine oversleeps by milliseconds: the 1:4 sleeps' ratio is not theirs.
        pytest.skip(f"ratio inconclusive: {result.contention.text()}")
    assert 0.1 < result.ratio("fast") < 0.7
    assert result.speedup("fast") > 1.4
    assert len(result.rows()) == 2


def test_compare_records_whether_rounds_were_given():
    """rounds= overrides target_s: the comparison records it, so advice can name rounds=."""
    variants = {"a": lambda: np.ones(2), "b": lambda: np.ones(2)}
    assert timing.compare(variants, rounds=2).rounds_fixed
    assert not timing.compare(variants, target_s=0.001).rounds_fixed


def test_a_contended_table_of_one_variant_promises_no_verdict_it_could_not_give():
    from course_utils.contention import Contention

    busy = Contention(2, 3.0, 3.0, 0.5, 1.0, {"cores": 2}, "load 3.0 on 2 cores")
    times = [1.0, 1.1, 1.2]
    one = timing.Comparison(
        {"a": timing.Measurement("a", times, 1, 1.0)}, "a", contention=busy
    )
    assert "the times ran beside that work; rerun the cell" in one.conditions()
    assert "no verdict" not in one.conditions()
    two = timing.Comparison(
        {n: timing.Measurement(n, times, 1, 1.0) for n in "ab"}, "a", contention=busy
    )
    assert "no verdict is drawn" in two.conditions()


def _busy_pair(share: float = 0.9, reason: str | None = "other processes used 90%"):
    from course_utils.contention import Contention

    c = Contention(2, 3.0, 3.0, 0.5, 1.0, {"cores": 2}, reason)
    c.others_share = share
    threads = {"cores": 2, "torch": 2, "jax": 2}
    ms = {
        n: timing.Measurement(
            n, [k * t for t in (1.0, 1.1, 1.2)], 1, 1.0, threads=threads
        )
        for n, k in (("a", 1.0), ("b", 0.5))
    }
    return timing.Comparison(ms, "a", precision="float32", contention=c)


@pytest.fixture
def cell(monkeypatch):
    from course_utils import cell_notes

    now = [1]
    cell_notes.reset()
    monkeypatch.setattr(cell_notes, "cell", lambda: now[0])
    yield now
    cell_notes.reset()


def test_one_footer_per_cell(cell):
    """Several tables printed by one cell share one footer; the next cell's shrinks."""
    first = _busy_pair()._repr_markdown_()
    second = _busy_pair()._repr_markdown_()
    assert first.count("(medians of 3 interleaved rounds") == 1
    assert "rerun the cell" in first and "float32 precision" in first
    assert "\n\n(" not in second  # nothing it did not say already
    cell[0] = 2  # the next cell: the same setup and cause, in a few words
    again = _busy_pair()._repr_markdown_()
    assert again.endswith(
        "(3 rounds; contended again (other processes used 90%): no verdict)"
    )
    quiet = _busy_pair(0.03, None)._repr_markdown_()  # a later table in that cell
    assert quiet.endswith("(quiet: other processes used 3% of the cores)")


def test_the_table_prints_the_paired_statistic_the_verdicts_judge():
    a, b = [1.0, 2.0, 10.0], [2.0, 1.0, 3.0]  # medians 2 s and 2 s: a ratio of 1.00
    cmp = timing.Comparison(
        {
            "a": timing.Measurement("a", a, 1, 1.0),
            "b": timing.Measurement("b", b, 1, 1.0),
        },
        "a",
    )
    paired = statistics.median(x / y for x, y in zip(a, b, strict=True))  # 2.00
    assert cmp.speed("b") == (1, paired)
    assert "| b | ? | 2 s | 1 s | 2.00× faster | 1 s |" in cmp.table()
    assert "| a | ? | 2 s | 4.5 s | baseline | 1 s |" in cmp.table()
    rows = {r["variant"]: r for r in cmp.rows()}
    assert rows["b"]["speedup"] == paired and rows["b"]["speed"] == "2.00× faster"
    slow = timing.Comparison(dict(cmp.measurements), "b")
    assert slow.speed_text("a") == "2.00× slower" and slow.ratio("a") == paired


def test_compare_bad_baseline():
    with pytest.raises(ValueError, match="baseline 'c'"):
        timing.compare({"a": lambda: 1}, baseline="c")


def test_compare_records_each_variants_device_kind():
    x = np.ones((64, 64), np.float32)
    result = timing.compare(
        {
            "numpy": lambda: x @ x,
            "torch": lambda: torch.from_numpy(x) @ torch.from_numpy(x),
            "jax": lambda: jnp.asarray(x) @ jnp.asarray(x),
        },
        rounds=3,
        target_s=0.01,
    )
    assert result.devices == {"numpy": "host", "torch": "cpu", "jax": "cpu"}
    from course_utils import env

    assert result.precision == env.precision()["name"]
    assert f"{result.precision} precision" in result._repr_markdown_()
    assert result.same_device_kind
    assert "| torch | cpu |" in result.table()
    assert not any("device kinds" in w for w in result.warnings)


def test_a_table_leaves_the_spread_to_its_iqr_column():
    noisy = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
    ms = {
        name: timing.Measurement(name, [t * k for t in noisy], 1, 1.0)
        for name, k in (("a", 1.0), ("b", 2.0), ("c", 3.0))
    }
    for m in ms.values():
        m.warnings.extend(measurement._diagnose(m))
    cmp = timing.Comparison(ms, "a")
    assert "times vary" not in cmp.table()
    assert [w for w in cmp.warnings if "times vary" in w] == [
        "times vary (IQR as a share of the median: a 64%, b 64%, c 64%)"
    ]


def test_small_ratios_keep_their_digits():
    from course_utils.timing.comparison import format_ratio

    assert format_ratio(0.0034) == "0.0034"  # not "0.00", which reads as no time at all
    assert format_ratio(0.63) == "0.63"
    assert format_ratio(2005.4) == "2005.40"
    assert format_ratio(0.0) == "0.00"


def test_the_speed_column_names_its_statistic(cell):
    """Under contention the speed need not be the ratio of the medians shown: the
    column's header says what it is, and the footer need not."""
    table = _busy_pair()._repr_markdown_()
    header = table.splitlines()[0]
    assert ", median round ratio |" in header
    assert "per-round ratios" not in table
