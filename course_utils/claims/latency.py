"""Latency: compile warm-up, batch-1 inference, new shapes, and eager PyTorch's launch cost.

- ``first-call``: seconds of ``jax.jit``'s first call (trace + compile + run)
  of the BERT-base-shaped proxy (:data:`PROXY`), each on a fresh jit after
  clearing JAX's caches;
- ``batch1-latency``: the same proxy at batch 1, ``torch.compile`` against JAX
  jit (the registry's fair "compiled" pairing);
- ``dynamic-shapes``: a stream of new sequence lengths through the course's
  encoder, which JAX recompiles for and eager PyTorch does not;
- ``eager-launch`` (a CUDA GPU only): seconds per op of a chain of tiny eager
  ops (:func:`launch_chain`), where launching, not computing, sets the pace.

The proxy's two benchmarks are skipped in smoke mode (compiling it takes a
while on a small CPU); ``*_of`` functions take any shape of
:data:`~course_utils.claims.encoder.SHAPES`, so tests run them small.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from course_utils.claims.encoder import (
    checked_pair,
    describe,
    encoder_setup,
    jax_forward,
    random_tokens,
)
from course_utils.claims.harness import (
    Ctx,
    medians,
    paired,
    pairing_names,
    require_cuda,
)
from course_utils.claims.verdict_rule import Measured, SkippedInSmoke

PROXY = "bert-base"  # the articles' BERT, as a same-shaped encoder with random weights
FIRST_CALLS = 10  # fresh jits; with 10 the 95 % interval drops the extremes


def proxy_text(shape: str = PROXY) -> str:
    return (
        f"a BERT-base-shaped encoder with random weights ({describe(shape)}), batch 1"
    )


def _not_in_smoke(ctx: Ctx) -> None:
    if ctx.smoke:
        raise SkippedInSmoke(
            f"smoke mode's short run leaves its workload, {proxy_text()}, out; "
            "run `course claims` without --smoke"
        )


def first_call(ctx: Ctx) -> Measured:
    _not_in_smoke(ctx)
    return first_call_of(ctx, PROXY, FIRST_CALLS)


def first_call_of(ctx: Ctx, shape: str, calls: int) -> Measured:
    """Seconds of ``calls`` first calls of a fresh ``jax.jit`` forward: in-memory caches cleared
    before each, JAX's persistent cache (where configured) off."""
    import jax

    from course_utils import timing
    from course_utils.contention import Monitor

    _, jm, sizes = checked_pair(ctx, shape)
    tokens = ctx.jax_put(random_tokens(1, sizes["seq"], seed=1))
    firsts = []
    # nothing compiled before, in memory or in a configured persistent cache, may serve a first call
    with Monitor() as monitor, timing.jax_persistent_cache_off():
        for _ in range(calls):
            jax.clear_caches()
            forward, state = jax_forward(ctx, jm)
            start = time.perf_counter()
            forward(state, tokens).block_until_ready()
            firsts.append(time.perf_counter() - start)
    steady = timing.bench(
        forward, state, tokens, label="steady", target_s=ctx.target_s
    ).median
    return Measured(
        firsts,
        f"{proxy_text(shape)}: jax.jit's first call "
        f"{timing.format_seconds(float(np.median(firsts)))} (median of {calls}, "
        f"each compiled afresh), then {timing.format_seconds(steady)} per call",
        {"first_calls_s": firsts, "steady_s": steady, "shape": shape},
        contention=monitor.result,
        pairing="first",
        names=pairing_names("first-call", "first"),
    )


def batch1_latency(ctx: Ctx) -> Measured:
    _not_in_smoke(ctx)
    return batch1_of(ctx, PROXY)


def batch1_of(ctx: Ctx, shape: str) -> Measured:
    """One sequence at a time: ``torch.compile`` against JAX jit, PyTorch / JAX per round."""
    import torch

    from course_utils import timing

    tm, jm, sizes = checked_pair(ctx, shape)
    tok_np = random_tokens(1, sizes["seq"], seed=1)
    tok_t, tok_j = ctx.torch_put(tok_np), ctx.jax_put(tok_np)
    forward, state = jax_forward(ctx, jm)
    compiled = torch.compile(tm)

    def torch_forward():
        with torch.inference_mode():
            return compiled(tok_t)

    num, den = pairing_names("batch1-latency", "compiled")
    with timing.cold_inductor_cache():  # torch.compile's first call compiles afresh
        cmp = timing.compare(
            {num: torch_forward, den: lambda: forward(state, tok_j)},
            rtol=1e-4,
            atol=1e-5,
            target_s=ctx.target_s,
        )
    med = medians(cmp)
    first = cmp.measurements[num].first_call_s
    return paired(
        cmp,
        "batch1-latency",
        "compiled",
        f"{proxy_text(shape)}: PyTorch {timing.format_seconds(med[num])}, JAX "
        f"{timing.format_seconds(med[den])} per sequence (torch.compile's first call "
        f"{timing.format_seconds(first)}, Inductor's caches empty)",
        {"shape": shape, "inductor_cache": "empty"},
    )


def dynamic_shapes(ctx: Ctx) -> Measured:
    import jax
    import torch

    from course_utils import timing

    tm, jm, _ = encoder_setup(ctx)
    lengths = ctx.size([16, 24, 40, 64], [8, 16])
    stream = [random_tokens(1, n, seed=n) for n in lengths]
    stream_t = [ctx.torch_put(t) for t in stream]
    stream_j = [ctx.jax_put(t) for t in stream]
    _, state = jax_forward(ctx, jm)

    def torch_stream():
        with torch.inference_mode():
            return [tm(t) for t in stream_t]

    def jax_stream():
        jax.clear_caches()  # a fresh process meeting these lengths for the first time
        forward, _ = jax_forward(ctx, jm)
        return [forward(state, t) for t in stream_j]

    jitted, eager = pairing_names("dynamic-shapes", "article")
    cmp = timing.compare(
        {jitted: jax_stream, eager: torch_stream},
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return paired(
        cmp,
        "dynamic-shapes",
        "article",
        f"{len(lengths)} sequence lengths, each seen once: JAX "
        f"{timing.format_seconds(med[jitted])}, PyTorch "
        f"{timing.format_seconds(med[eager])}",
        {"lengths": lengths},
    )


def eager_launch(ctx: Ctx) -> Measured:
    require_cuda(ctx, "eager-launch")  # a CPU launches no kernels: never run there
    import torch

    x = ctx.torch_put(torch.zeros(1))
    return launch_chain(
        x,
        lambda: torch.cuda.synchronize(x.device),
        ops=ctx.size(2_000, 500),
        rounds=ctx.size(20, 8),
    )


def launch_chain(x: Any, sync: Callable[[], Any], *, ops: int, rounds: int) -> Measured:
    """Seconds per op of ``ops`` chained one-element adds, one sample per round.

    Each op is a kernel too small to keep the device busy, so the chain runs as
    fast as eager PyTorch can launch: the time per op is the launch cost.
    ``sync`` waits for the device (``torch.cuda.synchronize``) before the clock
    stops; the chain's result is checked (``ops`` added ones).
    """
    from course_utils import timing
    from course_utils.contention import Monitor

    def chain():
        y = x
        for _ in range(ops):
            y = y + 1
        sync()
        return y

    chain()  # warm-up: the kernel is loaded, the allocator holds its blocks
    samples = []
    with Monitor() as monitor:
        for _ in range(rounds):
            start = time.perf_counter()
            y = chain()
            samples.append((time.perf_counter() - start) / ops)
    if float(y.sum()) != float(x.sum()) + ops:
        raise AssertionError(f"launch_chain: the chain of {ops} adds computed {y}")
    return Measured(
        samples,
        f"a chain of {ops:,} one-element eager adds on {x.device}, "
        f"{timing.format_seconds(float(np.median(samples)))} per op",
        {"ops": ops, "rounds": rounds, "device": str(x.device)},
        contention=monitor.result,
        names=("", "each eager op"),
    )
