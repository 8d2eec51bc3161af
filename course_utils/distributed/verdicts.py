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


def on_auto_axes(
    step: Any, mesh: Any, specs: Mapping, params: Mapping, X: Any, y: Any
) -> Any:
    """The gradients of ``step`` on ``mesh``'s devices with ``AxisType.Auto`` axes, or None.

    ``params`` (NumPy) are placed by ``specs`` and the batch is split by rows over
    the mesh's first axis; ``step`` returns ``(new_params, grads)``, as the
    lesson's ``sgd_step`` does. None means the step was refused.
    """
    import jax
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    names = mesh.axis_names
    auto = jax.make_mesh(
        mesh.devices.shape,
        names,
        (AxisType.Auto,) * len(names),
        devices=list(mesh.devices.flat),
    )
    try:
        with jax.set_mesh(auto):
            placed = {k: jax.device_put(v, specs[k]) for k, v in params.items()}
            _, grads = step(
                placed, jax.device_put(X, P(names[0])), jax.device_put(y, P(names[0]))
            )
    except Exception:  # jax's ShardingTypeError has no public name: any refusal counts
        return None
    return grads


def sharding_from_specs(
    grads_rows: Any, grads_cols_auto: Any, grads_ref: Mapping, columns_explicit: bool
) -> Any:
    """``sharding-from-specs``: W1 split by rows, then by columns.

    The claim is "no code change beyond the specs". It holds when the row split
    and the column split on Auto axes (``grads_cols_auto``, None if refused; see
    :func:`on_auto_axes`) both match the reference with the specs alone. With
    explicit axes JAX refuses a split it would have to guess (``columns_explicit``
    says whether the column split traced there); that is the axis type asking
    for a reshard, reported beside the verdict, not against the claim.
    """
    rows = agrees(grads_rows, grads_ref)
    cols = grads_cols_auto is not None and agrees(grads_cols_auto, grads_ref)
    if grads_cols_auto is None:
        auto = "Auto axes refused the step"
    else:
        auto = "Auto axes compiled the step from the specs alone, and it " + (
            "matched" if cols else "did not match"
        )
    return claims.fact(
        "sharding-from-specs",
        rows and cols,
        "Split by rows, W1 needed only new specs, and the step "
        + ("matched" if rows else "did not match")
        + f" the float64 reference (largest difference "
        f"{max_abs_diff(grads_rows, grads_ref):.1e}). Split by columns, {auto}; explicit "
        + (
            "axes compiled it too."
            if columns_explicit
            else "axes refused it until a reshard said where to gather (§5.2)."
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


def dp_cheapest(formulas: Sequence[Mapping[str, Any]], model: str) -> Any:
    """``dp-cheapest`` from the ring formulas for a realistic ``model`` (rows of
    :func:`cost.table`). The lesson's toy MLP is too small to judge the rule: its
    batch makes the activations smaller than the parameters, and §8 reads it."""
    by_formula = {r["strategy"]: float(r["bytes"]) for r in formulas}
    cheapest = min(by_formula, key=by_formula.get)
    return claims.fact(
        "dp-cheapest",
        cheapest == "data parallel",
        f"By §8's formulas for the {model}, one device sends per step "
        + ", ".join(f"{format_bytes(b)} with {name}" for name, b in by_formula.items())
        + f": the fewest with {cheapest}.",
    )


def _counts(hlo: str) -> str:
    """'1 all-reduce, 2 all-gather': the collectives of one compiled program."""
    found = Counter(c.op for c in cost.hlo_collectives(hlo))
    return ", ".join(f"{n} {op}" for op, n in found.items()) or "no collective"
