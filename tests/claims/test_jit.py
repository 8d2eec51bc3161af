"""course_utils.claims.jit: eager against jit, counted kernels, fresh compiles, scan against a loop."""

import numpy as np
import pytest

from course_utils.claims import harness, jit, registry, verdict_rule
from course_utils.parity import assert_close


def test_eager_dispatches_every_operation_and_jit_fuses_them():
    import jax

    ctx = harness.Ctx(True)
    x = ctx.jax_put(np.linspace(-3, 3, 64, dtype=np.float32))
    ops = jit.dispatches(jit.euler, x)
    assert ops == 4 * jit.EULER_STEPS  # sin, subtract, scale, add per step
    assert 1 <= jit.kernels(jax.jit(jit.euler), x) < ops
    args = jit.dense_args(ctx)
    assert (
        1
        <= jit.kernels(jax.jit(jit.dense_loss), *args)
        < jit.dispatches(jit.dense_loss, *args)
    )


def test_kernels_reads_none_from_a_program_without_an_entry():
    class Unreadable:
        def lower(self, *args):
            return self

        def compile(self):
            return self

        def as_text(self):
            return ""

    assert jit.kernels(Unreadable()) is None


def test_a_fresh_function_compiles_again_and_the_same_one_does_not():
    import jax

    from course_utils import timing

    ctx = harness.Ctx(True)
    args = jit.dense_args(ctx)
    jitted = jax.jit(jit.dense_loss)
    jitted(*args)
    before = timing.CompileCounter.snapshot()
    jitted(*args)
    assert timing.CompileCounter.delta(before) == 0
    with timing.jax_persistent_cache_off():
        jax.jit(jit._fresh(jit.dense_loss))(*args)
        jax.jit(jit._fresh(jit.dense_loss))(*args)
    assert timing.CompileCounter.delta(before) == 2


def test_scan_and_the_python_loop_compute_the_same_recurrence():
    import jax

    ctx = harness.Ctx(True)
    params, xs = jit.rnn_inputs(ctx, 5)
    assert_close(jit.rnn_scan(params, xs), jit.rnn_loop(params, xs), rtol=1e-5)
    scan_eqns = jax.make_jaxpr(jit.rnn_scan)(params, xs).eqns
    loop_eqns = jax.make_jaxpr(jit.rnn_loop)(params, xs).eqns
    assert [e.primitive.name for e in scan_eqns].count("scan") == 1
    assert len(loop_eqns) > 5 * 4  # a copy of the cell per step


@pytest.fixture(scope="module")
def measured():
    """Each benchmark measured once for the module; the tests below only read it."""
    from course_utils import timing
    from course_utils.claims.benchmarks import BENCHMARKS

    cache = {}

    def measure(claim_id):
        if claim_id not in cache:
            ctx = harness.Ctx(True)
            before = timing.CompileCounter.snapshot()
            cache[claim_id] = (
                jit.scan_compile_of(ctx, 2)
                if claim_id == "scan-compile"
                else BENCHMARKS[claim_id](ctx)
            )
            COMPILES[claim_id] = timing.CompileCounter.delta(before)
        return cache[claim_id]

    return measure


COMPILES = {}  # the programs JAX compiled while each benchmark ran


@pytest.mark.slow
@pytest.mark.parametrize(
    "claim_id, pairing",
    [
        ("jit-speedup", "jit"),
        ("jit-fusion", "jit"),
        ("warm-up", "first"),
        ("scan-compile", "rewrite"),
    ],
)
def test_each_benchmark_times_its_registered_pairing(claim_id, pairing, measured):
    m = measured(claim_id)
    assert m.pairing == pairing and m.names == harness.pairing_names(claim_id, pairing)
    assert len(m.samples) >= verdict_rule.MIN_RATIOS and min(m.samples) > 0
    assert set(m.details["median_s"]) == set(m.names) and m.contention is not None
    assert registry.get(claim_id).pairing(pairing).fair


@pytest.mark.slow
def test_the_first_call_compiles_afresh_every_round(measured):
    m = measured("warm-up")  # the benchmarks' warm_up, measured above
    first, steady = m.names
    assert m.details["median_s"][first] > m.details["median_s"][steady]
    # A compile in each of the first call's timed rounds, at least: a first call served
    # by a cache compiles once, and is still a little slower than the steady call.
    assert COMPILES["warm-up"] >= len(m.samples)
