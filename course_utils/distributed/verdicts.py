"""Lesson 05's four claims, each judged in one call from what the lesson computed.

Each function takes the lesson's results (gradients, rank reports, compiled
programs, bytes sent) and returns a :class:`course_utils.claims.Verdict` through
:func:`course_utils.claims.fact` or :func:`course_utils.claims.not_testable`, so
the verdict word comes from the registry and the evidence sentence from the
numbers of the run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from course_utils import claims
from course_utils.distributed import cost
from course_utils.memory import format_bytes
from course_utils.parity import assert_close, max_abs_diff

RTOL, ATOL = 1e-4, 1e-6  # the lesson's float32 tolerances against the float64 oracle


def agrees(got: Any, reference: Any) -> bool:
    """Whether ``got`` equals the float64 ``reference`` at the lesson's tolerances."""
    try:
        assert_close(got, reference, rtol=RTOL, atol=ATOL)
    except AssertionError:
        return False
    return True


def compiles(fn: Any, mesh: Any, *args: Any) -> bool:
    """Whether the jitted ``fn`` traces on ``mesh`` with these arguments' shardings."""
    import jax

    try:
        with jax.set_mesh(mesh):
            fn.lower(*args)
    except Exception:  # jax's ShardingTypeError has no public name: any refusal counts
        return False
    return True


def ddp_full_replica(reports: Sequence[Mapping[str, Any]], grads_ref: Mapping) -> Any:
    """``ddp-full-replica`` from the DDP ranks' reports; not testable without them."""
    from course_utils.distributed import problem

    if not reports:
        return claims.not_testable(
            "ddp-full-replica", "no PyTorch process could start on this machine"
        )
    r0 = reports[0]
    full = all(
        problem.take(r, "ddp_")[k].shape == np.shape(v)
        for r in reports
        for k, v in grads_ref.items()
    )
    every = r0["ddp_allreduced_elements"] == r0["n_params"]
    equal = all(agrees(problem.take(r, "ddp_"), grads_ref) for r in reports)
    return claims.fact(
        "ddp-full-replica",
        full and every and equal,
        f"On each of {len(reports)} ranks DDP held "
        + ("every gradient at full shape" if full else "some gradients sharded")
        + f", all-reduced {r0['ddp_allreduced_elements']} elements for "
        f"{r0['n_params']} parameters, and its averaged gradients "
        + ("equalled" if equal else "differed from")
        + " the full-batch ones (§3.1).",
    )


def sharding_from_specs(
    grads_rows: Any, grads_ref: Mapping, columns_compile: bool
) -> Any:
    """``sharding-from-specs``: W1 split by rows (the step's gradients) and by columns.

    The claim is "no code change beyond the specs", so it holds only when both
    splits ran with the specs alone; ``columns_compile`` says whether the column
    split traced without the explicit gather of §5.2.
    """
    rows = agrees(grads_rows, grads_ref)
    return claims.fact(
        "sharding-from-specs",
        rows and columns_compile,
        "Split by rows, W1 needed only new specs, and the step "
        + ("matched" if rows else "did not match")
        + f" the float64 reference (largest difference "
        f"{max_abs_diff(grads_rows, grads_ref):.1e}); split by columns, the same step "
        + (
            "also compiled with the specs alone (§5.2)."
            if columns_compile
            else "compiled only after an explicit reshard was added (§5.2)."
        ),
    )


def pmap_pjit_needed(
    grads: Sequence[Any], grads_ref: Mapping, inserted: Mapping[str, str]
) -> Any:
    """``pmap-pjit-needed``: the jit-only runs' gradients and the collectives XLA inserted.

    ``grads`` are the data-parallel, fully sharded and tensor-parallel gradients;
    ``inserted`` maps a strategy whose collectives XLA chose to its compiled HLO
    text. Tensor parallelism's all-reduce is the ``psum`` the lesson writes.
    """
    all_equal = all(agrees(g, grads_ref) for g in grads)
    found = " and ".join(f"{_counts(hlo)} for {name}" for name, hlo in inserted.items())
    return claims.fact(
        "pmap-pjit-needed",
        not all_equal,
        "Data, tensor and fully sharded parallelism all ran under jax.jit; neither pmap "
        f"nor pjit was called. XLA inserted {found} (§8). "
        "Tensor parallelism's all-reduce is the psum written in shard_map (§4.1). "
        + ("All three" if all_equal else "Not all three")
        + " matched the float64 reference.",
    )


def dp_cheapest(
    formulas: Sequence[Mapping[str, Any]], model: str, compiled: Mapping[str, float]
) -> Any:
    """``dp-cheapest`` from the ring formulas for a realistic ``model`` (rows of
    :func:`cost.table`); ``compiled`` (bytes per strategy of the lesson's toy
    programs) is reported beside it, too small a model to judge the rule."""
    by_formula = {r["strategy"]: float(r["bytes"]) for r in formulas}
    cheapest = min(by_formula, key=by_formula.get)
    toy = min(compiled, key=compiled.get)
    return claims.fact(
        "dp-cheapest",
        cheapest == "data parallel",
        f"By §8's formulas for the {model}, one device sends per step "
        + ", ".join(f"{format_bytes(b)} with {name}" for name, b in by_formula.items())
        + f": the fewest with {cheapest}. The toy MLP's compiled programs sent the "
        f"fewest with {toy}.",
    )


def _counts(hlo: str) -> str:
    """'1 all-reduce, 2 all-gather': the collectives of one compiled program."""
    found = Counter(c.op for c in cost.hlo_collectives(hlo))
    return ", ".join(f"{n} {op}" for op, n in found.items()) or "no collective"
