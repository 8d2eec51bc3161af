"""What ``jax.jit`` buys and what it costs, measured on JAX alone.

- ``jit-speedup``: an explicit-Euler integration written as a Python loop
  (:func:`euler`), eager JAX against ``jax.jit``;
- ``jit-fusion``: a dense layer and its loss (:func:`dense_loss`), eager
  against ``jax.jit``, with the operations eager JAX dispatches
  (:func:`dispatches`) and the kernels of XLA's optimised program
  (:func:`kernels`) counted;
- ``warm-up``: ``jax.jit``'s first call of that layer, compiled afresh in every
  round, against a steady-state call;
- ``scan-compile``: a recurrent cell's loop written with ``jax.lax.scan``
  (:func:`rnn_scan`) against the same loop in Python (:func:`rnn_loop`), which
  ``jax.jit`` unrolls, each traced and compiled afresh in every round.

These benchmarks run JAX alone (``registry.FRAMEWORKS``), so ``course claims``
measures them on every device kind JAX reaches, a TPU included. A call that
must compile afresh jits a new function object (:func:`_fresh`): jit's caches
miss on it, and JAX's persistent cache is off, while the other variant's
compiled program stays cached (``jax.clear_caches`` would drop it too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from course_utils.claims.harness import Ctx, medians, paired, pairing_names
from course_utils.claims.verdict_rule import Measured

EULER_STEPS = 32
EULER_SIZE = 4_096
DENSE = {"batch": 64, "width": 256}
RNN = {"batch": 8, "inputs": 32, "hidden": 64}
RNN_STEPS = (16, 4)  # (full, smoke): the unrolled loop compiles longer with each step


def euler(x: Any, steps: int = EULER_STEPS, dt: float = 0.05) -> Any:
    """``steps`` explicit-Euler steps of dx/dt = sin(x) - x: a Python loop of small operations."""
    import jax.numpy as jnp

    for _ in range(steps):
        x = x + dt * (jnp.sin(x) - x)
    return x


def dense_loss(w: Any, b: Any, x: Any, y: Any) -> Any:
    """A dense layer's matmul, bias and ReLU, then the mean-squared loss."""
    import jax
    import jax.numpy as jnp

    h = jax.nn.relu(x @ w + b)  # (batch, width)
    return jnp.mean((h - y) ** 2)


def rnn_cell(params: tuple, h: Any, x: Any) -> Any:
    """One step of a tanh recurrent cell: (batch, hidden) from (batch, hidden) and (batch, inputs)."""
    import jax.numpy as jnp

    wx, wh, b = params
    return jnp.tanh(x @ wx + h @ wh + b)


def rnn_scan(params: tuple, xs: Any) -> Any:
    """The cell over ``xs`` (steps, batch, inputs) with ``lax.scan``: the body traced once."""
    import jax
    import jax.numpy as jnp

    def step(h, x):
        h = rnn_cell(params, h, x)
        return h, h

    h0 = jnp.zeros((xs.shape[1], params[1].shape[0]), xs.dtype)
    return jax.lax.scan(step, h0, xs)[1]  # (steps, batch, hidden)


def rnn_loop(params: tuple, xs: Any) -> Any:
    """The same recurrence as a Python loop: under ``jax.jit`` one copy of the cell per step."""
    import jax.numpy as jnp

    h = jnp.zeros((xs.shape[1], params[1].shape[0]), xs.dtype)
    out = []
    for t in range(xs.shape[0]):
        h = rnn_cell(params, h, xs[t])
        out.append(h)
    return jnp.stack(out)  # (steps, batch, hidden)


def dispatches(fn: Callable, *args: Any) -> int:
    """Operations of ``fn``'s jaxpr: what eager JAX dispatches one by one."""
    import jax

    return len(jax.make_jaxpr(fn)(*args).eqns)


_NOT_KERNELS = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}


def kernels(jitted: Any, *args: Any) -> int | None:
    """Instructions of XLA's optimised program that run as kernels (None if unreadable).

    They are the entry computation's instructions, less parameters, constants,
    tuples and bitcasts: a fusion counts once, however many operations it holds.
    """
    text = jitted.lower(*args).compile().as_text() or ""
    start = text.find("\nENTRY")
    if start < 0:
        return None
    entry = text[start : text.find("\n}", start)]
    ops = re.findall(r"^\s*(?:ROOT )?%\S+ = .*? ([a-z][\w-]*)\(", entry, flags=re.M)
    return sum(op not in _NOT_KERNELS for op in ops) or None


def _fresh(fn: Callable) -> Callable:
    """A new function object calling ``fn``: ``jax.jit`` of it traces and compiles afresh."""
    return lambda *args: fn(*args)


def _counted(fn: Callable, args: tuple) -> tuple[dict[str, Any], str]:
    """Eager dispatches and compiled kernels of ``fn``, as details and as words."""
    import jax

    ops, k = dispatches(fn, *args), kernels(jax.jit(fn), *args)
    compiled = (
        f"{k} kernel{'s' if k != 1 else ''} in XLA's optimised program"
        if k
        else "XLA's optimised program unread"
    )
    details = {"eager_operations": ops, "jit_kernels": k}
    return details, f"{ops} operations dispatched one by one eagerly, {compiled}"


def _eager_against_jit(
    ctx: Ctx, claim_id: str, fn: Callable, args: tuple, workload: str
) -> Measured:
    """Eager ``fn`` against ``jax.jit(fn)`` on the same arguments, the registry's "jit" pairing."""
    import jax

    from course_utils import timing

    eager, compiled = pairing_names(claim_id, "jit")
    jitted = jax.jit(fn)
    cmp = timing.compare(
        {eager: lambda: fn(*args), compiled: lambda: jitted(*args)},
        rtol=1e-5,
        atol=1e-6,
        target_s=ctx.target_s,
    )
    med = medians(cmp)
    details, counted = _counted(fn, args)
    return paired(
        cmp,
        claim_id,
        "jit",
        f"{workload}: eager {timing.format_seconds(med[eager])}, jax.jit "
        f"{timing.format_seconds(med[compiled])} a call; {counted}",
        details,
    )


def jit_speedup(ctx: Ctx) -> Measured:
    x = ctx.jax_put(np.linspace(-3.0, 3.0, EULER_SIZE, dtype=np.float32))
    return _eager_against_jit(
        ctx,
        "jit-speedup",
        euler,
        (x,),
        f"{EULER_STEPS} Euler steps on {EULER_SIZE:,} floats",
    )


def dense_args(ctx: Ctx, seed: int = 0) -> tuple:
    """Weights, bias, inputs and targets for :func:`dense_loss`, on the target's device."""
    rng = np.random.default_rng(seed)
    n, d = DENSE["batch"], DENSE["width"]
    arrays = (
        rng.standard_normal((d, d), dtype=np.float32) / np.sqrt(d),  # w
        np.zeros(d, np.float32),  # b
        rng.standard_normal((n, d), dtype=np.float32),  # x
        rng.standard_normal((n, d), dtype=np.float32),  # y
    )
    return tuple(ctx.jax_put(a) for a in arrays)


def jit_fusion(ctx: Ctx) -> Measured:
    return _eager_against_jit(
        ctx,
        "jit-fusion",
        dense_loss,
        dense_args(ctx),
        f"a dense layer and its loss, batch {DENSE['batch']}, width {DENSE['width']}",
    )


def warm_up(ctx: Ctx) -> Measured:
    """A first call of a fresh ``jax.jit`` (trace, compile, run) against a steady-state call."""
    import jax

    from course_utils import timing

    args = dense_args(ctx)
    first, steady = pairing_names("warm-up", "first")
    jitted = jax.jit(dense_loss)
    with timing.jax_persistent_cache_off():  # no program compiled before may serve it
        cmp = timing.compare(
            {
                first: lambda: jax.jit(_fresh(dense_loss))(*args),
                steady: lambda: jitted(*args),
            },
            rtol=1e-6,
            atol=1e-7,
            target_s=ctx.target_s,
        )
    med = medians(cmp)
    return paired(
        cmp,
        "warm-up",
        "first",
        f"a dense layer and its loss, batch {DENSE['batch']}, width {DENSE['width']}: "
        f"jax.jit's first call {timing.format_seconds(med[first])} (compiled afresh in "
        f"every round), a steady-state call {timing.format_seconds(med[steady])}",
    )


def rnn_inputs(ctx: Ctx, steps: int, seed: int = 0) -> tuple[tuple, Any]:
    """The cell's parameters and ``steps`` inputs, on the target's device."""
    rng = np.random.default_rng(seed)
    d, h, n = RNN["inputs"], RNN["hidden"], RNN["batch"]
    params = (
        rng.standard_normal((d, h), dtype=np.float32) / np.sqrt(d),
        rng.standard_normal((h, h), dtype=np.float32) / np.sqrt(h),
        np.zeros(h, np.float32),
    )
    xs = rng.standard_normal((steps, n, d), dtype=np.float32)
    return tuple(ctx.jax_put(p) for p in params), ctx.jax_put(xs)


def scan_compile(ctx: Ctx) -> Measured:
    return scan_compile_of(ctx, ctx.size(*RNN_STEPS))


def scan_compile_of(ctx: Ctx, steps: int) -> Measured:
    """Trace, compile and one run of a fresh ``jax.jit`` of each version, every round."""
    import jax

    from course_utils import timing

    params, xs = rnn_inputs(ctx, steps)
    scan, loop = pairing_names("scan-compile", "rewrite")
    with timing.jax_persistent_cache_off():
        cmp = timing.compare(
            {
                scan: lambda: jax.jit(_fresh(rnn_scan))(params, xs),
                loop: lambda: jax.jit(_fresh(rnn_loop))(params, xs),
            },
            rtol=1e-5,
            atol=1e-6,
            target_s=ctx.target_s,
        )
    med = medians(cmp)
    return paired(
        cmp,
        "scan-compile",
        "rewrite",
        f"a tanh cell (batch {RNN['batch']}, hidden {RNN['hidden']}) over {steps} "
        f"steps, traced and compiled afresh: lax.scan {timing.format_seconds(med[scan])}, "
        f"the Python loop {timing.format_seconds(med[loop])} (each including one run)",
        {"steps": steps},
    )
