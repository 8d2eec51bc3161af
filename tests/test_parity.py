import math
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


def test_nan_against_a_number_is_named_as_such():
    with pytest.raises(AssertionError) as err:
        assert_close(np.array([np.nan, 1.0, 2.0]), np.array([5.0, 1.0, 3.0]), name="v")
    msg = str(err.value)
    assert "1 NaN on one side only, first at index (0,) (nan vs 5)" in msg
    assert "max abs err 1, " in msg and "inf" not in msg  # the numbers' own error
    with pytest.raises(AssertionError) as err:
        assert_close(np.float32("nan"), 5.0, name="v")
    assert "NaN on one side only (nan vs 5)" in str(err.value)
    assert "inf" not in str(err.value)


def test_one_boolean_reads_as_one_value():
    with pytest.raises(AssertionError) as err:
        assert_close(True, False, name="v")
    assert str(err.value).splitlines()[-1].strip() == "v: True != False"


def test_structure_mismatch_names_its_sides():
    with pytest.raises(AssertionError) as err:
        assert_close([1, 2, 3], [1], name="v")
    assert str(err.value) == "v: structures differ; only in first: ['[1]', '[2]']"
    with pytest.raises(AssertionError) as err:
        assert_close([1], [1, 2], name="v", sides=("yours", "the expected"))
    assert str(err.value) == "v: structures differ; only in the expected: ['[1]']"


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


class _AlwaysEqual:
    """A hostile answer: equal to anything."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _LyingInt(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


class _ArrayWrapper:
    """``np.asarray`` of it gives any array it likes."""

    def __array__(self, dtype=None, copy=None):
        return np.array([_AlwaysEqual()], dtype=object)


@pytest.mark.parametrize(
    "liar",
    [
        _AlwaysEqual(),
        _LyingInt(3),
        _ArrayWrapper(),
        np.array([_AlwaysEqual()], dtype=object),
        np.array([1.0], dtype=object),
    ],
    ids=[
        "eq-always-true",
        "int-subclass",
        "__array__",
        "object-array",
        "object-floats",
    ],
)
def test_objects_that_lie_about_equality_are_rejected(liar):
    for expected in (79, np.array([1.0]), "holds", math.inf):
        with pytest.raises(AssertionError, match="lie about equality"):
            assert_close(liar, expected, name="answer")
        with pytest.raises(AssertionError, match="lie about equality"):
            assert_close({"k": liar}, {"k": expected})
    with pytest.raises(AssertionError, match=r"answer\[1\]: got a .*_AlwaysEqual"):
        assert_close([1.0, _AlwaysEqual()], [1.0, 2.0], name="answer")


def test_strings_none_and_big_ints_compare_exactly():
    assert_close(["holds", None, 6], ["holds", None, 6])
    assert_close(2**70, 2**70)
    assert_close(np.str_("a"), "a")
    for a, b in (("holds", "inconclusive"), (None, 0), ("1", 1), (2**70, 2**70 + 1)):
        with pytest.raises(AssertionError):
            assert_close(a, b)
    with pytest.raises(AssertionError, match="lie about equality"):
        max_abs_diff({"a": _AlwaysEqual()}, {"a": 1.0})


def test_equal_infinities_compare_without_a_numpy_warning():
    import warnings

    import numpy as np

    from course_utils.parity import assert_close

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(np.array([np.inf, 1.0]), np.array([np.inf, 1.0]))
