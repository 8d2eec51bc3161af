import gc
import itertools
import math
import statistics
import time
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from course_utils import timing
from course_utils.contention import Contention


def test_sync_waits_for_every_jax_leaf():
    a = jax.random.normal(jax.random.key(0), (600, 600))
    tree = {"x": [a @ a], "y": (a @ a @ a, np.zeros(2), 3.0)}
    out = timing.sync(tree)
    assert out is tree
    assert tree["x"][0].is_ready() and tree["y"][0].is_ready()


def test_sync_synchronises_each_torch_device_once(monkeypatch):
    seen = []
    monkeypatch.setattr(
        timing, "_torch_synchronize", lambda kind, dev: seen.append(kind)
    )
    timing.sync([torch.ones(2), {"b": torch.zeros(3)}, torch.empty(2, device="meta")])
    assert sorted(seen) == ["cpu", "meta"]


def test_sync_waits_on_the_gpu_each_tensor_lives_on(monkeypatch):
    # Two GPUs: torch.cuda.synchronize() alone waits for the current device only.
    calls = []
    monkeypatch.setattr(
        torch.cuda, "synchronize", lambda device=None: calls.append(device)
    )
    on_gpu = [torch.empty(1, device="meta") for _ in range(3)]
    devices = [
        torch.device("cuda", 0),
        torch.device("cuda", 1),
        torch.device("cuda", 1),
    ]

    class FakeTensor(torch.Tensor):
        pass

    fakes = []
    for t, d in zip(on_gpu, devices, strict=True):
        f = t.as_subclass(FakeTensor)
        f._fake_device = d
        fakes.append(f)
    monkeypatch.setattr(FakeTensor, "device", property(lambda self: self._fake_device))
    timing.sync(fakes)
    assert calls == [torch.device("cuda", 0), torch.device("cuda", 1)]


def test_sync_is_a_no_op_for_numpy_and_python():
    value = {"a": np.ones(3), "b": [1, 2.0, "x"]}
    assert timing.sync(value) is value


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
    assert 0.1 < result.ratio("fast") < 0.7
    assert result.speedup("fast") > 1.4
    timed = order[-24:]  # the timed rounds come last
    switches = sum(a != b for a, b in itertools.pairwise(timed))
    assert switches >= 8  # interleaved, not all of one then all of the other
    assert "| fast |" in result.table()
    assert len(result.rows()) == 2


def test_compare_bad_baseline():
    with pytest.raises(ValueError, match="baseline 'c'"):
        timing.compare({"a": lambda: 1}, baseline="c")


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
    assert "break-even calls" in rep.table()


def _tanh_affine(x):
    return torch.tanh(x) * 2 + 1


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
    quiet = dict(_report(1.0, 0.9).rows())["break-even calls"]
    busy = dict(_report(1.0, 0.9, reason="load 4.1 on 2 cores").rows())
    assert quiet == "999"
    assert (
        busy["break-even calls"] == "not judged (contended rounds); medians alone: 999"
    )


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


def test_compile_report_times_eager_and_compiled_in_the_same_rounds(monkeypatch):
    # Load arrives just after the compiled steady state would have been timed on its
    # own (first call 0.5 s, then about 0.05 s of calls). Timed one after the other,
    # eager ran entirely under the load and looked 100x slower; the functions differ 2x.
    machine = _VirtualMachine(load_at=0.555)
    monkeypatch.setattr(
        timing, "time", SimpleNamespace(perf_counter=machine.perf_counter)
    )
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
    assert (
        "compiled × faster than eager (medians; a verdict needs claims)",
        "2.00x",
    ) in rep.rows()


def test_compile_report_rejects_plain_functions():
    with pytest.raises(
        TypeError, match="neither a jax.jit function nor a torch.compile"
    ):
        timing.compile_report(lambda x: x, 1.0)


def test_no_recompile_names_the_jax_function():
    @jax.jit
    def scale_rows(x):
        return x * 2

    scale_rows(jnp.ones(3)).block_until_ready()
    small, big = jnp.ones(3), jnp.ones(5)
    with timing.no_recompile():
        scale_rows(small).block_until_ready()  # cached: fine
    with pytest.raises(timing.RecompilationError, match="scale_rows"):
        with timing.no_recompile("the loop"):
            scale_rows(big).block_until_ready()
    assert not jax.config.jax_log_compiles  # flags restored


def test_no_recompile_catches_torch_recompiles():
    import torch._dynamo

    f = torch.compile(lambda x: x * 3, dynamic=False)
    f(torch.ones(3))
    with timing.no_recompile():
        f(torch.ones(3))
    with pytest.raises(timing.RecompilationError, match="torch.compile recompiled"):
        with timing.no_recompile():
            f(torch.ones(4))
    assert torch._dynamo.config.error_on_recompile is False


def test_format_seconds():
    assert timing.format_seconds(2.5) == "2.5 s"
    assert timing.format_seconds(0.0123) == "12.3 ms"
    assert timing.format_seconds(4.2e-6) == "4.2 µs"


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


def test_compare_warns_when_variants_sit_on_different_device_kinds():
    # A GPU-vs-CPU ratio says nothing about the frameworks: the comparison must say so.
    warning = timing.mixed_devices({"PyTorch": "cpu", "JAX": "tpu", "ref": "host"})
    assert "PyTorch: cpu" in warning and "JAX: tpu" in warning
    assert "devices, not frameworks" in warning
    assert timing.mixed_devices({"a": "gpu", "b": "gpu", "c": "host"}) is None


def test_device_kinds_of_torch_tensors_on_other_devices():
    assert timing.device_kinds({"w": torch.empty(1, device="meta")}) == "meta"
    assert timing.device_kinds([1.0, np.zeros(2)]) == "host"


def test_break_even_calls_and_their_words():
    assert timing.break_even_calls(1.0, 0.01, 0.02) == 99
    assert timing.break_even_calls(0.001, 0.01, 0.02) == 1
    assert timing.break_even_calls(1.0, 0.02, 0.02) == math.inf
    assert timing.format_calls(99.0) == "99 calls"
    assert timing.format_calls(math.inf).startswith("never")


def test_a_table_states_its_variance_warning_once():
    noisy = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5]
    ms = {
        name: timing.Measurement(name, [t * k for t in noisy], 1, 1.0)
        for name, k in (("a", 1.0), ("b", 2.0), ("c", 3.0))
    }
    for m in ms.values():
        m.warnings.extend(timing._diagnose(m))
    table = timing.Comparison(ms, "a").table()
    assert table.count("times vary") == 1
    assert table.count("a verdict judges the paired ratios") == 1
    assert "a 6" in table and "b 6" in table and "c 6" in table  # each variant's IQR
