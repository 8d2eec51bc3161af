"""course_utils.timing.measurement: bench: the first call apart, gc off, noisy runs and compilations flagged."""

from __future__ import annotations

import gc
import itertools
import time

import jax
import jax.numpy as jnp
import pytest

from course_utils import timing


def _slow_first():
    calls = itertools.count()

    def fn():
        time.sleep(0.05 if next(calls) == 0 else 0.001)

    return fn


def test_bench_times_first_call_separately():
    m = timing.bench(_slow_first(), target_s=0.05)
    assert m.first_call_s >= 0.05
    assert m.median < 0.02
    assert m.n >= 5 and len(m.times) == m.n
    assert m.iqr >= 0 and "torch_threads" in m.threads


def test_bench_turns_gc_off_while_timing_and_restores_it():
    states = []

    def fn():
        states.append(gc.isenabled())

    assert gc.isenabled()
    timing.bench(fn, target_s=0.01, warmup=0)
    assert not any(states)
    assert gc.isenabled()


def test_bench_warns_on_a_noisy_run():
    calls = itertools.count()

    def fn():
        time.sleep(0.001 if next(calls) % 2 else 0.004)

    m = timing.bench(fn, target_s=0.1, min_block_s=0)
    assert m.relative_iqr > timing.NOISE_THRESHOLD
    assert any("its times vary (IQR" in w for w in m.warnings)


def test_bench_flags_compilation_in_the_timed_region():
    f = jax.jit(lambda x: x + 1)
    sizes = itertools.count(1)

    def fn():
        return f(jnp.zeros(next(sizes)))

    m = timing.bench(fn, target_s=0.02, max_repeats=8, min_block_s=0)
    assert m.compiles > 0
    assert any("compilation" in w for w in m.warnings)


def test_bench_rejects_non_callable():
    with pytest.raises(TypeError, match="callable"):
        timing.bench(42)


def test_format_seconds():
    assert timing.format_seconds(2.5) == "2.5 s"
    assert timing.format_seconds(0.0123) == "12.3 ms"
    assert timing.format_seconds(4.2e-6) == "4.2 µs"


def test_one_stalled_call_does_not_shrink_the_blocks_to_one_call():
    """Calibration's first timing stalls 5 ms (a wait for a core); the call takes ~0."""
    import time as _time

    from course_utils.timing.measurement import _calibrate

    calls = {"n": 0}

    def fn():
        calls["n"] += 1
        if calls["n"] == 1:
            _time.sleep(0.005)
        return 0

    number = _calibrate(fn, (), {}, min_block_s=1e-3)
    assert number > 1, "a single stalled timing sized the block"
