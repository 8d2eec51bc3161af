"""distributed.verdicts: each of lesson 05's claims judged from results, both ways."""

import numpy as np

from course_utils.claims.verdict_rule import DOES_NOT_HOLD, HOLDS, NOT_TESTABLE
from course_utils.distributed import problem, verdicts

PROB = problem.make_problem(0, batch=8, d_in=3, d_hidden=4, d_out=2)
_, GRADS = problem.loss_and_grads_numpy(problem.params_of(PROB), PROB["X"], PROB["y"])
HLO_DP = "  %all-reduce.4 = (f32[4,3]{1,0}, f32[4]{0}) all-reduce(%a, %b), channel_id=1"
HLO_FSDP = "  %all-gather.1 = f32[4,3]{1,0} all-gather(%a), dimensions={0}\n" + HLO_DP


def _report(grads, rank=0, elements=None):
    n = int(sum(np.size(v) for v in grads.values()))
    return {
        "rank": rank,
        "ddp_allreduced_elements": n if elements is None else elements,
        "n_params": n,
        **{f"ddp_{k}": v for k, v in grads.items()},
    }


def test_agrees_at_the_lesson_tolerances():
    assert verdicts.agrees(GRADS, GRADS)
    assert not verdicts.agrees({k: v * 1.01 for k, v in GRADS.items()}, GRADS)


def test_ddp_full_replica_needs_reports_and_every_gradient():
    assert verdicts.ddp_full_replica([], GRADS).verdict == NOT_TESTABLE
    both = [_report(GRADS, 0), _report(GRADS, 1)]
    held = verdicts.ddp_full_replica(both, GRADS)
    assert held.verdict == HOLDS and "On each of 2 ranks" in held.explanation
    short = verdicts.ddp_full_replica([_report(GRADS, elements=3)], GRADS)
    assert short.verdict == DOES_NOT_HOLD


def test_sharding_from_specs_is_judged_on_auto_axes_and_reports_explicit_ones():
    assert verdicts.sharding_from_specs(GRADS, GRADS, GRADS, True).verdict == HOLDS
    refused = verdicts.sharding_from_specs(GRADS, GRADS, GRADS, False)
    assert refused.verdict == HOLDS
    assert "explicit axes refused it until a reshard" in refused.explanation
    auto_refused = verdicts.sharding_from_specs(GRADS, None, GRADS, False)
    assert auto_refused.verdict == DOES_NOT_HOLD
    assert "Auto axes refused the step" in auto_refused.explanation
    wrong = {k: v + 1 for k, v in GRADS.items()}
    assert (
        verdicts.sharding_from_specs(wrong, GRADS, GRADS, True).verdict == DOES_NOT_HOLD
    )
    assert (
        verdicts.sharding_from_specs(GRADS, wrong, GRADS, True).verdict == DOES_NOT_HOLD
    )


def test_on_auto_axes_runs_a_column_split_that_explicit_axes_refuse():
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    params = problem.params_of(PROB)

    def loss(p, X, y):
        h = jax.nn.relu(X @ p["W1"] + p["b1"])
        return jnp.mean((h @ p["W2"] + p["b2"] - y) ** 2)

    @jax.jit
    def step(p, X, y):
        g = jax.grad(loss)(p, X, y)
        return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), g

    mesh = jax.make_mesh(
        (1,), ("data",), (AxisType.Explicit,), devices=jax.devices()[:1]
    )
    cols = {"W1": P(None, "data"), "W2": P("data", None), "b1": P("data"), "b2": P()}
    grads = verdicts.on_auto_axes(step, mesh, cols, params, PROB["X"], PROB["y"])
    assert verdicts.agrees(grads, GRADS)
    assert (
        verdicts.on_auto_axes(
            lambda *a: 1 / 0, mesh, cols, params, PROB["X"], PROB["y"]
        )
        is None
    )


def test_pmap_pjit_needed_names_the_collectives_xla_inserted():
    programs = {"data parallel": HLO_DP, "fully sharded": HLO_FSDP}
    v = verdicts.pmap_pjit_needed([GRADS, GRADS], GRADS, programs)
    assert v.verdict == DOES_NOT_HOLD
    assert "1 all-gather, 1 all-reduce for fully sharded" in v.explanation
    assert "psum written in shard_map" in v.explanation
    wrong = {k: v + 1 for k, v in GRADS.items()}
    assert verdicts.pmap_pjit_needed([wrong], GRADS, programs).verdict == HOLDS


def test_dp_cheapest_is_judged_on_the_formulas():
    from course_utils.distributed import cost

    big = cost.table(
        7e9, 8, bytes_per_elem=2, activation_elems=8 * 4096 * 4096, n_layer_pairs=64
    )
    v = verdicts.dp_cheapest(big, "7B model")
    assert v.verdict == HOLDS and "the fewest with data parallel" in v.explanation
    tiny = cost.table(10, 8, activation_elems=1e6)  # activations above the parameters
    assert verdicts.dp_cheapest(tiny, "toy").verdict == HOLDS
    wide = cost.table(1e6, 8, activation_elems=1)  # parameters above the activations
    assert verdicts.dp_cheapest(wide, "model").verdict == DOES_NOT_HOLD


def test_compiles_says_whether_a_step_traces_on_the_mesh():
    import jax
    from jax.sharding import AxisType

    mesh = jax.make_mesh(
        (1,), ("data",), (AxisType.Explicit,), devices=jax.devices()[:1]
    )
    good = jax.jit(lambda x: x * 2)
    bad = jax.jit(lambda x: x @ x)  # a vector times a vector of another length fails
    assert verdicts.compiles(good, mesh, np.ones(3, np.float32))
    assert not verdicts.compiles(bad, mesh, np.ones((2, 3), np.float32))
