"""course_utils.timing.compilation: compile_report: the first call and its stages, steady state and eager in the same rounds, break-even."""

from __future__ import annotations

import math
import statistics
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import pytest
import torch

from course_utils import claims, timing
from course_utils.contention import Contention
from course_utils.timing import comparison, compilation, measurement


@pytest.mark.slow
def test_compile_report_for_jax_jit():
    def f(x):
        return jnp.sin(x) @ jnp.cos(x).T

    x = jnp.ones((200, 200))
    jax.jit(f).lower(x).compile()  # warm JAX's in-memory caches for f
    jax.jit(f)(x).block_until_ready()
    rep = timing.compile_report(jax.jit(f), x, target_s=0.05)
    assert rep.framework == "jax.jit" and rep.cold
    # The stages are parts of the first call, timed by JAX inside it: a cold
    # first call compiles again, whatever was cached before, and it is never
    # shorter than the compilation it contains.
    assert rep.trace_s > 0 and rep.lower_s > 0 and rep.compile_s > 0
    assert rep.trace_s + rep.lower_s + rep.compile_s <= rep.first_call_s
    assert rep.compile_s <= rep.first_call_s
    assert rep.first_call_s > rep.steady.median
    assert "persistent cache off" in rep.caches and rep.cache_hits == 0
    assert rep.eager is not None and rep.eager.median > 0
    be = rep.break_even_calls
    assert be >= 1 or math.isinf(be)
    assert "| break-even |" in rep.table()
    # the per-call row compares with eager; which is faster, and whether it is
    # judged, is the machine's to say (a busy one timed eager faster once)
    (per_call,) = [r for r in rep.table().splitlines() if r.startswith("| per call |")]
    assert "eager" in per_call, per_call
    if rep.per_call is not None:  # a verdict names both sides
        assert "jax.jit" in per_call, per_call


@pytest.mark.slow
def test_a_jax_eager_passed_in_runs_as_given():
    seen = []

    def f(x):
        seen.append(bool(jax.config.jax_disable_jit))
        return jnp.sin(x) * 2

    x = jnp.ones((8, 8))
    timing.compile_report(jax.jit(f), x, eager=f, target_s=0.01)
    assert seen and not any(seen)  # the jitted traces and the eager calls alike
    seen.clear()
    timing.compile_report(jax.jit(f), x, target_s=0.01)
    assert True in seen  # the default eager: the original under jax.disable_jit()


def _tanh_affine(x):
    return torch.tanh(x) * 2 + 1


@pytest.mark.slow  # Inductor's first compile in a process, then two more: 9 s here
def test_compile_report_for_torch_compile():
    x = torch.ones(64, 64)
    torch.compile(_tanh_affine)(x)  # fills Inductor's cache on disk for this graph
    rep = timing.compile_report(torch.compile(_tanh_affine), x, target_s=0.05)
    assert rep.framework == "torch.compile" and rep.cold
    assert rep.graphs == 1 and rep.recompiles == 0
    # After Dynamo's reset, in an empty cache directory, the graph is compiled
    # again: a miss, not a read of the cache the line above filled.
    assert (rep.cache_hits, rep.cache_misses) == (0, 1)
    assert "0 hit(s), 1 miss(es)" in rep.table()
    assert 0 < rep.compile_s <= rep.first_call_s
    assert rep.first_call_s > 5 * rep.steady.median
    assert rep.eager is not None
    ax = rep.plot()
    assert ax.get_xlabel() == "number of calls"
    # With the caches as they were, the same graph is read from the disk cache.
    torch._dynamo.reset()
    warm = timing.compile_report(
        torch.compile(_tanh_affine), x, eager=False, target_s=0.01, cold=False
    )
    assert warm.cache_hits == 1 and warm.cache_misses == 0
    assert "as they were" in warm.table()


assert claims.faster  # imported: compile reports read their verdicts through it


def _report(first_call_s: float, compile_s: float, reason: str | None = None):
    threads = {"cores": 2}
    steady = timing.Measurement("torch.compile", [1e-3] * 8, 1, first_call_s)
    eager = timing.Measurement("eager", [2e-3] * 8, 1, 2e-3)
    cmp = timing.Comparison(
        {"eager": eager, "torch.compile": steady},
        "torch.compile",
        contention=Contention(2, 0.5, 0.5, 0.0, 1.0, threads, reason),
    )
    return timing.CompileReport(
        "torch.compile",
        "f",
        first_call_s,
        steady,
        eager,
        compile_s=compile_s,
        comparison=cmp,
    )


def test_a_first_call_is_never_shorter_than_the_compile_it_contains():
    assert _report(first_call_s=1.0, compile_s=0.9).stages_s == 0.9
    with pytest.raises(ValueError, match="exceed its first call"):
        _report(first_call_s=0.05, compile_s=0.2)


def test_a_contended_report_does_not_judge_its_break_even():
    quiet = dict(_report(1.0, 0.9).rows())
    busy = dict(_report(1.0, 0.9, reason="load 4.1 on 2 cores").rows())
    assert quiet["break-even"] == "999 calls"
    assert quiet["per call"] == "torch.compile 2.00× faster than eager (1.74–2.30×)"
    assert busy["break-even"] == "999 calls, not judged"
    assert busy["per call"].endswith(": not judged (contended)")
    assert _report(1.0, 0.9).speed_text() == "2.00× faster"  # compiled against eager
    assert _report(1.0, 0.9, reason="busy").speed_text() == "2.00× faster, not judged"


def test_compile_table_reads_each_report_as_its_verdict_does():
    quiet, busy = _report(1.0, 0.9), _report(1.0, 0.9, reason="load 4.1 on 2 cores")
    table = timing.compile_table({"quiet row": quiet, "busy row": busy})
    assert "| quiet row |" in table and "| 2.00× faster | 999 calls |" in table
    assert "| 2.00× faster, not judged | 999 calls |" in table
    assert "Not judged" not in table  # the footer says why a contended row is not
    # one footer, from the contended report
    assert table.count("load 4.1 on 2 cores") == 1
    noisy = _report(1.0, 0.9)
    noisy.eager.times[:] = [1e-3, 4e-3] * 4  # paired ratios 1 and 4: noisy
    noisy.__dict__.pop("per_call", None)  # judged again from these times
    noisy_table = timing.compile_table({"noisy row": noisy})
    assert "\n\nNot judged: noisy row: noisy (spread " in noisy_table


def test_a_mixed_table_names_the_rows_its_no_verdict_is_for():
    reason = "load 4.1 on 2 cores"
    table = timing.compile_table(
        {
            "MLP, jax.jit": _report(1.0, 0.9),
            "MLP, torch.compile": _report(1.0, 0.9),
            "elementwise, torch.compile": _report(1.0, 0.9, reason=reason),
        }
    )
    footer = table.split("\n\n")[1]
    assert footer.startswith("(elementwise, torch.compile: medians of 8 ")
    assert f"contended ({reason}): no verdict is drawn" in footer
    assert "Not judged" not in table
    two_busy = timing.compile_table(
        {
            "a": _report(1.0, 0.9),
            "b": _report(1.0, 0.9, reason=reason),
            "c": _report(1.0, 0.9, reason=reason),
        }
    )
    assert "\n\n(b: medians of 8 " in two_busy
    assert two_busy.endswith("\n\nNot judged: c: contended.")
    # every row contended: the footer is the whole table's, with no row named
    all_busy = timing.compile_table({"b": _report(1.0, 0.9, reason=reason)})
    assert "\n\n(medians of 8 " in all_busy


def test_a_report_says_its_footer_once_per_cell(monkeypatch):
    from course_utils import cell_notes

    cell_notes.reset()
    monkeypatch.setattr(cell_notes, "cell", lambda: 3)
    reason = "load 4.1 on 2 cores"
    shown = [_report(1.0, 0.9, reason=reason)._repr_markdown_() for _ in range(3)]
    cell_notes.reset()
    assert "\n".join(shown).count(reason) == 1
    assert shown[0].endswith("(`uptime` shows the load))")  # the remedy, once


class _VirtualMachine:
    """A clock the functions under test advance: a call costs 50x more once the load arrives."""

    def __init__(self, load_at: float) -> None:
        self.now = 0.0
        self.load_at = load_at

    def perf_counter(self) -> float:
        self.now += 1e-9
        return self.now

    def run(self, seconds: float) -> None:
        self.now += seconds * (50 if self.now >= self.load_at else 1)


@pytest.mark.slow
def test_compile_report_times_eager_and_compiled_in_the_same_rounds(monkeypatch):
    # Load arrives just after the compiled steady state would have been timed on its
    # own (first call 0.5 s, then about 0.05 s of calls). Timed one after the other,
    # eager ran entirely under the load and looked 100x slower; the functions differ 2x.
    machine = _VirtualMachine(load_at=0.555)
    clock = SimpleNamespace(perf_counter=machine.perf_counter)
    for timed_here in (measurement, comparison, compilation):
        monkeypatch.setattr(timed_here, "time", clock)
    calls = {"compiled": 0}

    def eager(x):
        machine.run(2e-3)
        return x

    def compiled(x):
        calls["compiled"] += 1
        machine.run(0.5 if calls["compiled"] == 1 else 1e-3)  # the first call compiles
        return x

    compiled._torchdynamo_orig_callable = eager  # what torch.compile's wrapper carries
    rep = timing.compile_report(compiled, 1.0, target_s=0.05)
    assert rep.first_call_s == pytest.approx(0.5, rel=1e-3)
    assert rep.eager.median / rep.steady.median == pytest.approx(2.0, rel=1e-3)
    ratios = rep.comparison.ratios(*rep.names)  # eager / compiled, round by round
    assert len(ratios) >= timing.MIN_ROUNDS
    assert statistics.median(ratios) == pytest.approx(2.0, rel=1e-3)
    assert dict(rep.rows())["per call"].startswith(
        "torch.compile 2.00× faster than eager"
    )


def test_compile_report_rejects_plain_functions():
    with pytest.raises(
        TypeError, match="neither a jax.jit function nor a torch.compile"
    ):
        timing.compile_report(lambda x: x, 1.0)


def test_break_even_calls_and_their_words():
    assert timing.break_even_calls(1.0, 0.01, 0.02) == 99
    assert timing.break_even_calls(0.001, 0.01, 0.02) == 1
    assert timing.break_even_calls(1.0, 0.02, 0.02) == math.inf
    assert timing.format_calls(99.0) == "99 calls"
    assert timing.format_calls(math.inf).startswith("never")


def _with_graph_break(x):
    y = torch.sin(x) * 2
    if y.sum() > 0:  # data-dependent Python branch: Dynamo breaks the graph here
        y = y.cos()
    return y + 1


@pytest.mark.slow
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
