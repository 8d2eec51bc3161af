"""Compilation warm-up and inference latency: the encoder at batch 1.

- ``first-call``: a jitted encoder's first call against its steady-state call;
- ``batch1-latency``: PyTorch eager against JAX jit, one sequence at a time;
- ``dynamic-shapes``: a stream of new sequence lengths, which JAX recompiles
  for and eager PyTorch does not.
"""

from __future__ import annotations

import time

import numpy as np

from course_utils.claims.encoder import encoder_setup, jax_forward, random_tokens
from course_utils.claims.harness import Ctx, compare_ratios, medians
from course_utils.claims.verdicts import Measured


def first_call(ctx: Ctx) -> Measured:
    import jax

    from course_utils import timing

    tm, jm, sizes = encoder_setup(ctx)
    tokens = ctx.jax_put(random_tokens(1, sizes["seq"]))
    jax.clear_caches()  # nothing compiled before may serve this first call
    forward, state = jax_forward(ctx, jm)
    report = timing.compile_report(
        forward, state, tokens, eager=False, target_s=ctx.target_s
    )
    steady = report.steady.median
    firsts = [report.first_call_s]
    for _ in range(ctx.size(4, 1)):  # more cold first calls, for a spread
        jax.clear_caches()
        fresh, _ = jax_forward(ctx, jm)
        start = time.perf_counter()
        fresh(state, tokens).block_until_ready()
        firsts.append(time.perf_counter() - start)
    return Measured(
        [f / steady for f in firsts],
        f"{sizes['n_layers']}-layer encoder, d_model {sizes['d_model']}, "
        f"first call {timing.format_seconds(float(np.median(firsts)))}, "
        f"steady {timing.format_seconds(steady)}",
        {
            "first_calls_s": firsts,
            "steady_s": steady,
            "trace_s": report.trace_s,
            "lower_s": report.lower_s,
            "compile_s": report.compile_s,
        },
    )


def batch1_latency(ctx: Ctx) -> Measured:
    import torch

    from course_utils import timing

    tm, jm, sizes = encoder_setup(ctx)
    tok_np = random_tokens(1, sizes["seq"], seed=1)
    tok_t, tok_j = ctx.torch_put(tok_np), ctx.jax_put(tok_np)
    forward, state = jax_forward(ctx, jm)

    def torch_forward():
        with torch.inference_mode():
            return tm(tok_t)

    cmp = timing.compare(
        {"PyTorch eager": torch_forward, "JAX jit": lambda: forward(state, tok_j)},
        rtol=1e-4,
        atol=1e-5,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return Measured(
        compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"PyTorch {timing.format_seconds(med['PyTorch eager'])}, "
        f"JAX {timing.format_seconds(med['JAX jit'])} per sequence of {sizes['seq']} tokens",
        {"median_s": med},
    )


def dynamic_shapes(ctx: Ctx) -> Measured:
    import jax
    import torch

    from course_utils import timing

    tm, jm, sizes = encoder_setup(ctx)
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

    cmp = timing.compare(
        {"JAX jit, new shapes": jax_stream, "PyTorch eager": torch_stream},
        rtol=1e-4,
        atol=1e-5,
        rounds=3,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    return Measured(
        compare_ratios(cmp, "JAX jit, new shapes", "PyTorch eager"),
        f"{len(lengths)} sequence lengths, each seen once: JAX "
        f"{timing.format_seconds(med['JAX jit, new shapes'])}, PyTorch "
        f"{timing.format_seconds(med['PyTorch eager'])}",
        {"median_s": med, "lengths": lengths},
    )
