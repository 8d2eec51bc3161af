"""distributed.problem: the regression problem, its float64 oracle, its layout and errors."""

import numpy as np
import pytest

from course_utils.distributed import problem


def test_oracle_gradients_match_finite_differences():
    prob = problem.make_problem(3, batch=6, d_in=3, d_hidden=5, d_out=2)
    params = {k: v.astype(np.float64) for k, v in problem.params_of(prob).items()}
    _, grads = problem.loss_and_grads_numpy(params, prob["X"], prob["y"])
    eps = 1e-6
    for name, value in params.items():
        for index in np.ndindex(value.shape):
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][index] += eps
            minus[name][index] -= eps
            numeric = (
                problem.loss_and_grads_numpy(plus, prob["X"], prob["y"])[0]
                - problem.loss_and_grads_numpy(minus, prob["X"], prob["y"])[0]
            ) / (2 * eps)
            assert abs(numeric - grads[name][index]) < 1e-6, (name, index)


def test_mean_of_slice_gradients_is_the_full_batch_gradient():
    prob = problem.make_problem(0, batch=12)
    params = problem.params_of(prob)
    _, full = problem.loss_and_grads_numpy(params, prob["X"], prob["y"])
    parts = [
        problem.loss_and_grads_numpy(
            params,
            problem.shard_rows(prob["X"], r, 3),
            problem.shard_rows(prob["y"], r, 3),
        )[1]
        for r in range(3)
    ]
    for k in full:
        np.testing.assert_allclose(
            np.mean([p[k] for p in parts], axis=0), full[k], rtol=1e-12
        )


def test_problem_layout_order_and_round_trip(tmp_path):
    prob = problem.make_problem(0, 8, 3, 4, 2)
    assert list(problem.params_of(prob)) == ["W1", "W2", "b1", "b2"]  # JAX's dict order
    assert (
        prob["W1"].shape == (3, 4)
        and prob["W2"].shape == (4, 2)
        and prob["X"].dtype == np.float32
    )
    assert problem.n_params(prob) == 3 * 4 + 4 * 2 + 4 + 2
    back = problem.load(problem.save(tmp_path / "p.npz", prob))
    assert set(back) == set(prob) and all(
        np.array_equal(back[k], prob[k]) for k in prob
    )
    np.testing.assert_allclose(
        problem.forward_numpy(problem.params_of(prob), prob["X"]).shape, (8, 2)
    )
    report = {"ddp_" + k: v for k, v in problem.params_of(prob).items()}
    assert list(problem.take(report, "ddp_")) == ["W1", "W2", "b1", "b2"]


def test_problem_errors_name_the_argument():
    with pytest.raises(ValueError, match="batch"):
        problem.make_problem(0, batch=0)
    with pytest.raises(ValueError, match="divisible"):
        problem.shard_rows(np.zeros((5, 2)), 0, 2)
    with pytest.raises(ValueError, match="rank"):
        problem.shard_rows(np.zeros((4, 2)), 2, 2)
    with pytest.raises(KeyError, match="ddp_W1"):
        problem.take({}, "ddp_")
    with pytest.raises(ValueError, match="X must be"):
        prob = problem.make_problem(0, 4, 3, 4, 2)
        problem.loss_and_grads_numpy(
            problem.params_of(prob), np.zeros((4, 5)), prob["y"]
        )
