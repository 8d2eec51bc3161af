from collections import OrderedDict

import jax.numpy as jnp
import numpy as np
import pytest
import torch

from course_utils.parity import assert_close, max_abs_diff, to_numpy


def test_mixed_leaves_agree():
    a = {"w": torch.ones(2, 3), "b": [jnp.zeros(3), np.float32(1.5)]}
    b = {"w": jnp.ones((2, 3)), "b": [np.zeros(3), 1.5]}
    assert_close(a, b)


def test_failure_names_leaf_and_errors():
    a = {"fc1": {"weight": torch.zeros(2, 2)}}
    b = {"fc1": {"weight": jnp.array([[0.0, 0.0], [0.0, 0.5]])}}
    with pytest.raises(AssertionError) as err:
        assert_close(a, b, name="params")
    msg = str(err.value)
    assert "params['fc1']['weight']" in msg
    assert "max abs err 0.5" in msg
    assert "(1, 1)" in msg


def test_structure_and_shape_mismatch():
    with pytest.raises(AssertionError, match="structures differ"):
        assert_close({"a": 1.0}, {"b": 1.0})
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_close(np.zeros(3), np.zeros(4))


def test_tolerances_apply():
    assert_close(np.array([1.0]), np.array([1.0 + 1e-7]))
    with pytest.raises(AssertionError):
        assert_close(np.array([1.0]), np.array([1.001]), rtol=1e-5, atol=0)
    assert_close(np.array([1.0]), np.array([1.001]), rtol=1e-2)


def test_nan_handling():
    assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError):
        assert_close(np.array([np.nan]), np.array([1.0]))


def test_integer_leaves_must_match_exactly():
    assert_close(torch.tensor([1, 2]), jnp.array([1, 2]))
    with pytest.raises(AssertionError, match="1 of 2 elements differ"):
        assert_close(torch.tensor([1, 2]), jnp.array([1, 3]))


def test_state_dict_and_nnx_state():
    from flax import nnx

    sd = OrderedDict(weight=torch.ones(2), bias=torch.zeros(1))
    out = to_numpy(sd)
    assert isinstance(out["weight"], np.ndarray)
    model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
    state = to_numpy(nnx.state(model))
    assert set(state) == {"kernel", "bias"}
    assert state["kernel"].shape == (2, 3)
    assert_close(nnx.state(model), {"bias": np.zeros(3), "kernel": state["kernel"]})


def test_bfloat16_and_max_abs_diff():
    x = torch.ones(3, dtype=torch.bfloat16)
    assert to_numpy(x).dtype == np.float32
    assert max_abs_diff({"a": np.zeros(2)}, {"a": np.array([0.0, 0.25])}) == 0.25
