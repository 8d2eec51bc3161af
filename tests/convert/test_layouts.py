"""course_utils.convert.layouts: each layer's layout, converted both ways."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
nnx = pytest.importorskip("flax.nnx")
optax = pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from course_utils import convert  # noqa: E402
from course_utils.parity import assert_close  # noqa: E402

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------ single layers


def test_linear_both_ways_computes_the_same_layer():
    W, b, x = _rand(5, 3), _rand(5), _rand(4, 3)
    kernel, bias = convert.linear_torch_to_jax(torch.from_numpy(W), torch.from_numpy(b))
    assert kernel.shape == (3, 5) and isinstance(kernel, jax.Array)
    expected = x.astype(np.float64) @ W.T.astype(np.float64) + b
    assert_close(jnp.asarray(x) @ kernel + bias, expected, rtol=1e-5, atol=1e-5)
    weight, bias_t = convert.linear_jax_to_torch(kernel, bias)
    assert isinstance(weight, torch.Tensor) and weight.is_contiguous()
    assert torch.equal(weight, torch.from_numpy(W)) and torch.equal(
        bias_t, torch.from_numpy(b)
    )
    assert_close(
        F.linear(torch.from_numpy(x), weight, bias_t), expected, rtol=1e-5, atol=1e-5
    )


def test_bias_is_optional():
    kernel, bias = convert.linear_torch_to_jax(_rand(2, 3))
    assert bias is None and kernel.shape == (3, 2)
    weight, bias = convert.conv_jax_to_torch(_rand(3, 3, 2, 4))
    assert bias is None and tuple(weight.shape) == (4, 2, 3, 3)


def test_conv_oihw_to_hwio_computes_the_same_convolution():
    W, b = _rand(6, 3, 3, 3), _rand(6)
    x_nchw = _rand(2, 3, 7, 7)
    out_t = F.conv2d(
        torch.from_numpy(x_nchw), torch.from_numpy(W), torch.from_numpy(b), padding=1
    )
    kernel, bias = convert.conv_torch_to_jax(W, b)
    assert kernel.shape == (3, 3, 3, 6)
    out_j = (
        jax.lax.conv_general_dilated(
            jnp.asarray(x_nchw.transpose(0, 2, 3, 1)),
            kernel,
            (1, 1),
            ((1, 1), (1, 1)),
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )
        + bias
    )
    assert_close(out_j, out_t.permute(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    back, back_b = convert.conv_jax_to_torch(kernel, bias)
    assert torch.equal(back, torch.from_numpy(W)) and torch.equal(
        back_b, torch.from_numpy(b)
    )


def test_conv_asymmetric_kernel_is_not_flipped_or_transposed():
    # A 2x3 kernel catches an H/W swap; distinct in/out channels catch an I/O swap.
    W = _rand(4, 2, 2, 3)
    kernel, _ = convert.conv_torch_to_jax(W)
    assert kernel.shape == (2, 3, 2, 4)
    assert float(kernel[1, 2, 0, 3]) == W[3, 0, 1, 2]


def test_flatten_permutation_is_needed_and_correct():
    C, H, W_, out = 3, 2, 4, 5
    weight, bias = _rand(out, C * H * W_), _rand(out)
    fmap_nchw = _rand(6, C, H, W_)
    expected = fmap_nchw.reshape(6, -1) @ weight.T + bias
    fmap_nhwc = fmap_nchw.transpose(0, 2, 3, 1).reshape(6, -1)
    kernel, b = convert.flatten_linear_torch_to_jax(weight, bias, (C, H, W_))
    assert_close(jnp.asarray(fmap_nhwc) @ kernel + b, expected, rtol=1e-5, atol=1e-5)
    # The plain transpose (no permutation) computes something else.
    naive, _ = convert.linear_torch_to_jax(weight, bias)
    assert np.abs(np.asarray(jnp.asarray(fmap_nhwc) @ naive + b) - expected).max() > 0.1
    w_back, b_back = convert.flatten_linear_jax_to_torch(kernel, b, (H, W_, C))
    assert torch.equal(w_back, torch.from_numpy(weight)) and torch.equal(
        b_back, torch.from_numpy(bias)
    )


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: convert.linear_torch_to_jax(np.zeros((2, 3, 4))),
            ValueError,
            "weight must be 2-D",
        ),
        (
            lambda: convert.linear_jax_to_torch(np.zeros(3)),
            ValueError,
            "kernel must be 2-D",
        ),
        (
            lambda: convert.conv_torch_to_jax(np.zeros((3, 3))),
            ValueError,
            "weight must be 4-D OIHW",
        ),
        (
            lambda: convert.conv_jax_to_torch(np.zeros((3, 3, 1))),
            ValueError,
            "kernel must be 4-D HWIO",
        ),
        (
            lambda: convert.linear_torch_to_jax(np.zeros((2, 3)), np.zeros(3)),
            ValueError,
            r"bias must have shape \(2,\)",
        ),
        (lambda: convert.linear_torch_to_jax(None), TypeError, "weight is None"),
        (
            lambda: convert.linear_torch_to_jax("abc"),
            TypeError,
            "weight must be a numeric array",
        ),
        (
            lambda: convert.flatten_linear_torch_to_jax(
                np.zeros((2, 12)), None, (3, 2, 3)
            ),
            ValueError,
            "chw",
        ),
        (
            lambda: convert.flatten_linear_torch_to_jax(
                np.zeros((2, 12)), None, (3, 2)
            ),
            ValueError,
            "chw must be three",
        ),
        (
            lambda: convert.flatten_linear_jax_to_torch(
                np.zeros((12, 2)), None, (2, 2, 2)
            ),
            ValueError,
            "hwc",
        ),
    ],
)
def test_bad_input_names_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
