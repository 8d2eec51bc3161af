"""Fixes to course_utils.timing found while writing lesson 03 (JIT compilation)."""

from __future__ import annotations

import pytest

from course_utils import timing

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy


def _with_graph_break(x):
    y = torch.sin(x) * 2
    if y.sum() > 0:  # data-dependent Python branch: Dynamo breaks the graph here
        y = y.cos()
    return y + 1


def test_graph_break_is_not_counted_as_recompilation():
    torch._dynamo.reset()
    fn = torch.compile(_with_graph_break, backend="eager")
    report = timing.compile_report(
        fn, torch.linspace(0, 1, 16), eager=False, target_s=0.01
    )
    assert report.graphs == 2  # the graph before the break and the resumed one
    assert report.recompiles == 0


_CALLS = {"n": 0}


def _changes_a_guarded_global(x):
    _CALLS["n"] += 1  # a new int value every call: Dynamo's guard on it fails each time
    return x * _CALLS["n"]


def test_real_recompilations_are_still_counted():
    torch._dynamo.reset()
    fn = torch.compile(_changes_a_guarded_global, backend="eager")
    report = timing.compile_report(fn, torch.ones(4), eager=False, target_s=0.01)
    assert report.recompiles >= 1


def test_no_recompile_keeps_jax_compile_logs_out_of_the_output(caplog):
    f = jax.jit(lambda x: x * 2)
    caplog.set_level("WARNING")
    small, large = jnp.ones(3), jnp.ones(5)
    f(small).block_until_ready()
    caplog.clear()
    with pytest.raises(timing.RecompilationError, match="compiled 1 time"):
        with timing.no_recompile("the loop"):
            f(large).block_until_ready()
    shown = caplog.text  # what reached the root logger, i.e. the reader's output
    assert "Finished tracing" not in shown
    assert "Finished XLA compilation" not in shown


def test_break_even_plot_stays_small_when_break_even_is_far(recwarn):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_utils import plots

    # 2 s to compile, 1 µs saved per call: break-even after ~2 million calls.
    ax = plots.break_even(first_call_s=2.0, steady_s=10e-6, eager_s=11e-6)
    eager_line, compiled_line = ax.get_lines()[:2]
    assert len(eager_line.get_xdata()) <= 2002  # was one point per call (millions)
    n = eager_line.get_xdata()[-1]
    assert n >= 2 * 1_999_990
    assert compiled_line.get_ydata()[-1] == pytest.approx(2.0 + (n - 1) * 10e-6)
    assert eager_line.get_ydata()[-1] == pytest.approx(n * 11e-6)
    assert not [w for w in recwarn if "legend" in str(w.message)]
    plt.close("all")
