"""Every claim's benchmark, and :func:`measure`, which runs one on one device kind.

:data:`BENCHMARKS` maps each claim id of :data:`~course_utils.claims.registry.CLAIMS`
to its benchmark, a function ``Ctx -> Measured`` in one of the topic modules
(:mod:`~course_utils.claims.transforms`, :mod:`~course_utils.claims.jit`,
:mod:`~course_utils.claims.latency`, :mod:`~course_utils.claims.torch_compile`,
:mod:`~course_utils.claims.training`), or, for the claims beyond one machine, here.

:func:`measure` refuses a device kind the claim's frameworks cannot both reach
(:func:`~course_utils.claims.devices.why_not_testable`), then runs the
benchmark with JAX's default device on the target's kind and PyTorch's tensors
there too, float32 matmuls at full precision in both
(:func:`~course_utils.claims.harness.matched_precision`), and records the
precision, dtype and threads it ran with.

Every benchmark first checks that the variants it compares compute the same
result (``timing.compare`` does it, or an explicit ``assert_close``), then
returns ratio samples oriented so that a larger ratio favours the claim:
paired per-round ratios from ``timing.compare``'s interleaved rounds, of one of
the claim's registered pairings (:func:`~course_utils.claims.harness.paired`),
or seconds for a claim stated in seconds. One benchmark may serve several
claims ("higher-order" and "jax-2-5x" judge the same workload): measured one
after the other, they share one measurement (:func:`_shared`). Models are the
course's own: the transformer encoder of :mod:`course_utils.models.transformer`
(and same-shaped proxies of BERT-base and GPT-2 small with random weights), the
CNN of :mod:`course_utils.models`, the CartPole step of
:mod:`course_utils.cartpole`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from course_utils.claims.devices import DeviceTarget, why_not_testable
from course_utils.claims.harness import DTYPE, Ctx, matched_precision
from course_utils.claims.jit import jit_fusion, jit_speedup, scan_compile, warm_up
from course_utils.claims.latency import (
    batch1_latency,
    dynamic_shapes,
    eager_launch,
    first_call,
)
from course_utils.claims.registry import CLAIMS, FRAMEWORKS, ONLY_ON
from course_utils.claims.torch_compile import (
    compile_fusion,
    compile_matmul,
    compile_training,
)
from course_utils.claims.training import train_memory, train_throughput
from course_utils.claims.transforms import higher_order, vmap_loop, vmap_simulation
from course_utils.claims.verdict_rule import Measured, NotTestable


def measure(
    claim_id: str, *, smoke: bool, target: DeviceTarget | None = None
) -> Measured:
    """Run the benchmark for ``claim_id`` on ``target`` (default: the CPU).

    Raises NotTestable when the claim's frameworks cannot both run on the
    target's device kind, or the benchmark needs what is absent; SkippedInSmoke
    where due.
    """
    fn = BENCHMARKS.get(claim_id)
    if fn is None:
        raise KeyError(
            f"no benchmark for claim {claim_id!r}; claims: {[c.id for c in CLAIMS]}"
        )
    target = target or DeviceTarget("cpu")
    kinds, kinds_why = ONLY_ON.get(claim_id, ((), ""))
    why = why_not_testable(target, FRAMEWORKS[claim_id], kinds, kinds_why)
    if why:
        raise NotTestable(why)
    import jax

    from course_utils import timing

    ctx = Ctx(smoke, target)
    # Same device kind for both frameworks: JAX's default device is the target's,
    # and the benchmarks put PyTorch's tensors on ctx.torch_device.
    with (
        jax.default_device(ctx.jax_device),
        matched_precision(target.torch == "cuda") as prec,
    ):
        m = _shared(claim_id, fn, ctx)
        m.conditions = {
            "device": target.kind,
            "device_name": target.name,
            "frameworks": list(FRAMEWORKS[claim_id]),
            "precision": prec,
            "dtype": DTYPE,
            "threads": timing.thread_settings(),
        }
    return m


# The last measurement, while the next claim may share it (see _shared).
_LAST: dict[str, Any] = {}


def _shared(claim_id: str, fn: Callable[[Ctx], Measured], ctx: Ctx) -> Measured:
    """``fn(ctx)``, or a copy of the measurement just taken by the same benchmark for another claim.

    Only the measurement immediately before counts, and each claim takes it
    once: measuring a claim again, or after another benchmark ran, times afresh.
    """
    last = _LAST.pop("last", None)
    key = (fn, ctx.smoke, ctx.target)
    if last is not None and last["key"] == key and claim_id not in last["served"]:
        m = copy.deepcopy(last["measured"])
        m.details["same_measurement_as"] = last["served"][0]
        last["served"].append(claim_id)
    else:
        m = fn(ctx)
        last = {"key": key, "measured": copy.deepcopy(m), "served": [claim_id]}
    _LAST["last"] = last
    return m


def _tpu_llm(ctx: Ctx) -> Measured:
    raise NotTestable(
        "needs a TPU pod and a large language model; this command runs on one machine in minutes"
    )


def _huge_scale(ctx: Ctx) -> Measured:
    raise NotTestable(
        "needs more than 1000 accelerators; lesson 05 shows data parallelism on 8 devices "
        "(simulated where the accelerators are fewer), as a correctness demo, not a "
        "speed measurement"
    )


BENCHMARKS: dict[str, Callable[[Ctx], Measured]] = {
    "higher-order": higher_order,
    "jax-2-5x": higher_order,  # the same workload and pairing, measured once
    "eager-launch": eager_launch,
    "vmap-simulation": vmap_simulation,
    "vmap-loop": vmap_loop,
    "jit-speedup": jit_speedup,
    "jit-fusion": jit_fusion,
    "first-call": first_call,
    "warm-up": warm_up,
    "scan-compile": scan_compile,
    "compile-matmul": compile_matmul,
    "compile-fusion": compile_fusion,
    "compile-training": compile_training,
    "batch1-latency": batch1_latency,
    "dynamic-shapes": dynamic_shapes,
    "train-throughput": train_throughput,
    "train-memory": train_memory,
    "tpu-llm": _tpu_llm,
    "huge-scale": _huge_scale,
}
