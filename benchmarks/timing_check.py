"""Does ``course_utils.timing`` measure what it claims? Three ratios, printed and checked.

(a) async dispatch: ``bench`` of a function returning an unsynchronised 2000x2000 JAX
    matmul must report (nearly) the time of the same function that blocks itself
    (ratio >= 0.9); Python's ``timeit`` on the unsynchronised function is shown for contrast.
(b) agreement with PyTorch's own benchmark tool: on the same torch op at the same thread
    count, ``bench``'s median is within +-10 % of ``torch.utils.benchmark.Timer``'s
    ``blocked_autorange()`` median (medians over interleaved rounds).
(c) compile cost is separated: for a fresh ``jax.jit`` function, ``first_call_s`` is at
    least 5x the steady-state median.

Usage: python benchmarks/timing_check.py [--json]   (exit 1 if a ratio is out of bounds)
"""

from __future__ import annotations

import json
import statistics
import sys
import timeit

import jax
import jax.numpy as jnp
import torch
import torch.utils.benchmark as torch_benchmark

from course_utils import timing
from course_utils.contention import Monitor

BOUNDS = {
    "a_async": (0.9, None),
    "b_vs_torch_timer": (0.9, 1.1),
    "c_first_call": (5.0, None),
}


def ratio_async(n: int = 2000) -> dict:
    a = jax.random.normal(jax.random.key(0), (n, n))
    matmul = jax.jit(lambda a: a @ a)
    matmul(a).block_until_ready()

    def unsynced():
        return matmul(a)

    def synced():
        return matmul(a).block_until_ready()

    # Interleaved rounds, so a change in machine load hits both alike.
    result = timing.compare({"synced": synced, "unsynced": unsynced}, target_s=2.0)
    naive = min(timeit.repeat(unsynced, number=5, repeat=5)) / 5
    return {
        "a_async": result.ratio("unsynced"),
        "a_timeit_naive": naive / result.measurements["synced"].median,
    }


def ratio_vs_torch_timer(n: int = 384, rounds: int = 7) -> dict:
    x = torch.randn(n, n)
    threads = torch.get_num_threads()
    timer = torch_benchmark.Timer(
        "torch.mm(x, x)", globals={"x": x, "torch": torch}, num_threads=threads
    )
    ratios = []
    for _ in range(rounds):  # alternate the two tools; the ratio of each pair is taken
        ours = timing.bench(torch.mm, x, x, target_s=0.2).median
        theirs = timer.blocked_autorange(min_run_time=0.2).median
        ratios.append(ours / theirs)
    return {
        "b_vs_torch_timer": statistics.median(ratios),
        "b_threads": threads,
    }


def ratio_first_call() -> dict:
    def f(x):
        for _ in range(4):
            x = jnp.tanh(x @ x.T) + 1.0
        return x.sum()

    m = timing.bench(jax.jit(f), jnp.ones((64, 64)), target_s=0.3)
    return {"c_first_call": m.first_call_s / m.median}


def main(argv: list[str]) -> int:
    results = {}
    with Monitor() as monitor:  # was anything else competing for the cores?
        results.update(ratio_async())
        results.update(ratio_vs_torch_timer())
        results.update(ratio_first_call())
    results["contended"] = monitor.result.reason
    results["conditions"] = monitor.result.text()
    ok = True
    for key, (lo, hi) in BOUNDS.items():
        value = results[key]
        inside = (lo is None or value >= lo) and (hi is None or value <= hi)
        ok &= inside
        bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        print(
            f"{key:>18}: {value:8.3f}  (must be {bound}) {'ok' if inside else 'OUT OF BOUNDS'}"
        )
    print(
        f"{'a_timeit_naive':>18}: {results['a_timeit_naive']:8.2e}  (what timeit reports)"
    )
    print(f"{'machine':>18}: {results['conditions']}")
    if "--json" in argv:
        print(json.dumps(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
