"""course_utils.timing.counters: compilations counted, and JAX's own stage timings."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp

from course_utils.timing import CompileCounter
from course_utils.timing.counters import _JaxEvents, _outermost_seconds


def test_compile_counter_counts_each_new_program_once():
    f = jax.jit(lambda x: x * 2 + 1)
    small, large = jnp.ones(3), jnp.ones(7)
    before = CompileCounter.snapshot()
    f(small).block_until_ready()
    f(small).block_until_ready()  # cached: no compilation
    assert CompileCounter.delta(before) == 1
    f(large).block_until_ready()  # a new shape: a new program
    assert CompileCounter.delta(before) == 2


def test_jax_events_time_the_stages_of_the_call_inside_them():
    x = jnp.ones(5)
    with _JaxEvents() as events:
        jax.jit(lambda v: jnp.sin(v) * 3)(x).block_until_ready()
    assert events.seconds["trace"] > 0 and events.seconds["compile"] > 0
    outside = dict(events.seconds)
    jax.jit(lambda v: jnp.cos(v) * 3)(x).block_until_ready()
    assert events.seconds == outside  # nothing recorded after the block


def test_a_trace_nested_in_another_is_not_counted_twice():
    # jax 0.7 reports the trace of a jitted function called inside the traced one too.
    @jax.jit
    def inner(v):
        for _ in range(300):
            v = jnp.sin(v)
        return v

    x = jnp.ones(3)
    with _JaxEvents() as events:
        start = time.perf_counter()
        jax.jit(lambda v: inner(v) * 2)(x).block_until_ready()
        wall = time.perf_counter() - start
    assert 0 < sum(events.seconds.values()) <= wall, (events.intervals, wall)


def test_each_moment_is_counted_once_in_its_outermost_event():
    intervals = [
        ("trace", 0.0, 4.0),
        ("trace", 1.0, 2.0),  # nested in the trace above
        ("compile", 3.0, 3.5),  # a compilation inside the trace
        ("lower", 4.0, 5.0),
        ("compile", 4.5, 7.0),  # overlaps the lowering's end
    ]
    seconds = _outermost_seconds(intervals, ("trace", "lower", "compile"))
    assert seconds == {"trace": 4.0, "lower": 0.5, "compile": 2.5}


def test_dynamo_graphs_counts_one_graph_and_a_break_as_two():
    import torch

    from course_utils.timing.counters import DynamoGraphs

    def whole(x):
        return (x * 2).sin() + 1

    def broken(x):
        y = x * 2
        print(end="")  # a graph break: Dynamo runs the print eagerly
        return y.sin() + 1

    x = torch.ones(3)
    for fn, expected in ((whole, 1), (broken, 2)):
        graphs = DynamoGraphs()
        torch.compiler.reset()
        out = torch.compile(fn, backend=graphs)(x)
        assert len(graphs) == expected, fn.__name__
        torch.testing.assert_close(out, fn(x))
    torch.compiler.reset()
