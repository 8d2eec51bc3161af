import numpy as np
import pytest

from course_utils import numpy_mlp


def _setup(dtype=np.float64):
    params = numpy_mlp.init_params(4, 8, 2, seed=0, dtype=dtype)
    X, y = numpy_mlp.toy_regression(16, 4, 2, seed=1, dtype=dtype)
    return params, X, y


def test_init_is_reproducible_and_shaped():
    a = numpy_mlp.init_params(4, 8, 2, seed=3)
    b = numpy_mlp.init_params(4, 8, 2, seed=3)
    c = numpy_mlp.init_params(4, 8, 2, seed=4)
    assert {k: v.shape for k, v in a.items()} == {
        "w1": (4, 8),
        "b1": (8,),
        "w2": (8, 2),
        "b2": (2,),
    }
    assert (
        list(a)
        == sorted(a)
        == list(numpy_mlp.grads(a, *numpy_mlp.toy_regression(3, 4, 2, seed=0)))
    )
    assert all(v.dtype == np.float32 for v in a.values())
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["w1"], c["w1"])
    assert not np.any(a["b1"]) and not np.any(a["b2"])


def test_grads_match_central_finite_differences():
    params, X, y = _setup()
    analytic = numpy_mlp.grads(params, X, y)
    eps = 1e-6
    for name, value in params.items():
        for idx in [(0,) * value.ndim, tuple(s - 1 for s in value.shape)]:
            plus = {k: v.copy() for k, v in params.items()}
            minus = {k: v.copy() for k, v in params.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            numeric = (numpy_mlp.loss(plus, X, y) - numpy_mlp.loss(minus, X, y)) / (
                2 * eps
            )
            assert analytic[name][idx] == pytest.approx(numeric, rel=1e-5, abs=1e-8), (
                name,
                idx,
            )


def test_loss_is_half_mean_squared_error_and_functions_are_pure():
    params, X, y = _setup()
    before = {k: v.copy() for k, v in params.items()}
    pred = numpy_mlp.forward(params, X)
    assert pred.shape == (16, 2)
    assert numpy_mlp.loss(params, X, y) == pytest.approx(
        0.5 * np.mean(np.sum((pred - y) ** 2, axis=1))
    )
    numpy_mlp.grads(params, X, y)
    assert all(np.array_equal(before[k], params[k]) for k in params)


def test_gradient_step_lowers_the_loss():
    params, X, y = _setup()
    g = numpy_mlp.grads(params, X, y)
    new = {k: params[k] - 0.1 * g[k] for k in params}
    assert numpy_mlp.loss(new, X, y) < numpy_mlp.loss(params, X, y)


def test_bad_input_names_the_argument():
    params, X, _ = _setup()
    with pytest.raises(ValueError, match="d_hidden"):
        numpy_mlp.init_params(4, 0, 1, seed=0)
    with pytest.raises(ValueError, match="n must be"):
        numpy_mlp.toy_regression(0, seed=0)
    with pytest.raises(ValueError, match=r"X must have shape \(batch, 4\)"):
        numpy_mlp.forward(params, X[:, :3])
    with pytest.raises(KeyError, match="w2"):
        numpy_mlp.forward({k: v for k, v in params.items() if k != "w2"}, X)
