"""course_utils.convert: layouts, and the CNN converted both ways with equal outputs and gradients."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
nnx = pytest.importorskip("flax.nnx")
optax = pytest.importorskip("optax")

import jax.numpy as jnp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from course_utils import convert  # noqa: E402
from course_utils.models import NNXCNN, TorchCNN  # noqa: E402
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


# ------------------------------------------------------------- the whole CNN


def _batch(n, size, classes, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 1, size, size), dtype=np.float32)
    y = rng.integers(0, classes, n)
    return x, y


def _torch_loss_and_grads(model, x, y):
    model.zero_grad(set_to_none=True)
    logits = model(torch.from_numpy(x))
    loss = F.cross_entropy(logits, torch.from_numpy(y))
    loss.backward()
    return (
        logits.detach(),
        loss.detach(),
        {n: p.grad for n, p in model.named_parameters()},
    )


@nnx.jit  # one compilation per model size instead of one per eager operation
def _nnx_value_and_grad(model, x, y):
    def loss_fn(model):
        logits = model(x)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
        return loss, logits

    (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
    return logits, loss, grads


def _nnx_loss_and_grads(model, x, y):
    return _nnx_value_and_grad(
        model, jnp.asarray(x.transpose(0, 2, 3, 1)), jnp.asarray(y)
    )


CONFIGS = [
    {"channels": (16, 32), "hidden": 64, "num_classes": 10, "image_size": 8},
    {"channels": (3, 5), "hidden": 7, "num_classes": 4, "image_size": 6},
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_torch_to_nnx_equal_outputs_and_gradients(cfg):
    torch.manual_seed(1)
    tm = TorchCNN(**cfg)
    jm = convert.torch_cnn_to_nnx(tm, NNXCNN(**cfg, rngs=nnx.Rngs(0)))
    x, y = _batch(9, cfg["image_size"], cfg["num_classes"])
    logits_t, loss_t, grads_t = _torch_loss_and_grads(tm, x, y)
    logits_j, loss_j, grads_j = _nnx_loss_and_grads(jm, x, y)
    assert_close(logits_j, logits_t, rtol=1e-5, atol=1e-5, name="logits")
    assert_close(loss_j, loss_t, rtol=1e-5, atol=1e-6, name="loss")
    assert_close(
        nnx.to_pure_dict(grads_j),
        convert.torch_cnn_tensors_to_jax(grads_t, tm.feature_chw),
        rtol=1e-4,
        atol=1e-6,
        name="grads",
    )


@pytest.mark.parametrize("cfg", CONFIGS)
def test_nnx_to_torch_equal_outputs_and_gradients(cfg):
    jm = NNXCNN(**cfg, rngs=nnx.Rngs(3))
    tm = convert.nnx_cnn_to_torch(jm, TorchCNN(**cfg))
    x, y = _batch(7, cfg["image_size"], cfg["num_classes"], seed=1)
    logits_t, loss_t, grads_t = _torch_loss_and_grads(tm, x, y)
    logits_j, loss_j, grads_j = _nnx_loss_and_grads(jm, x, y)
    assert_close(logits_t, logits_j, rtol=1e-5, atol=1e-5, name="logits")
    assert_close(loss_t, loss_j, rtol=1e-5, atol=1e-6, name="loss")
    assert_close(
        convert.jax_cnn_tensors_to_torch(grads_j, jm.feature_hwc),
        {n: g for n, g in grads_t.items()},
        rtol=1e-4,
        atol=1e-6,
        name="grads",
    )


def test_round_trip_is_exact():
    torch.manual_seed(2)
    tm = TorchCNN()
    back = convert.nnx_cnn_to_torch(
        convert.torch_cnn_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0))), TorchCNN()
    )
    for (name, p), q in zip(tm.named_parameters(), back.parameters(), strict=True):
        assert torch.equal(p, q), name


def test_torch_cnn_to_nnx_fills_an_abstract_model():
    """Lessons build the JAX model with nnx.eval_shape (no arrays) before loading weights."""
    torch.manual_seed(5)
    tm = TorchCNN()
    abstract = nnx.eval_shape(lambda: NNXCNN(rngs=nnx.Rngs(0)))
    jm = convert.torch_cnn_to_nnx(tm, abstract)
    assert all(
        isinstance(leaf, jax.Array)
        for leaf in jax.tree.leaves(nnx.state(jm, nnx.Param))
    )
    x, _ = _batch(4, 8, 10, seed=5)
    assert_close(
        jm(jnp.asarray(x.transpose(0, 2, 3, 1))),
        tm(torch.from_numpy(x)),
        rtol=1e-5,
        atol=1e-5,
        name="logits",
    )


def test_without_the_permutation_the_models_disagree():
    """The fc1 permutation matters: a plain transpose gives different logits."""
    torch.manual_seed(4)
    tm = TorchCNN()
    jm = convert.torch_cnn_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0)))
    kernel, _ = convert.linear_torch_to_jax(tm.fc1.weight)
    jm.fc1.kernel[...] = kernel
    x, _ = _batch(4, 8, 10)
    diff = np.abs(
        np.asarray(jm(jnp.asarray(x.transpose(0, 2, 3, 1))))
        - tm(torch.from_numpy(x)).detach().numpy()
    )
    assert diff.max() > 1e-3


def test_converting_merged_gradients_works():
    """Lesson 07 merges a gradient state back into the model's graph and converts it."""
    jm = NNXCNN(rngs=nnx.Rngs(5))
    tm = convert.nnx_cnn_to_torch(jm, TorchCNN())
    x, y = _batch(5, 8, 10)
    _, _, grads_t = _torch_loss_and_grads(tm, x, y)
    _, _, grads_j = _nnx_loss_and_grads(jm, x, y)
    graphdef, _, rest = nnx.split(jm, nnx.Param, ...)
    target = convert.nnx_cnn_to_torch(
        nnx.merge(graphdef, grads_j, rest), copy.deepcopy(tm)
    )
    assert_close(dict(target.named_parameters()), grads_t, rtol=1e-4, atol=1e-6)


def test_one_sgd_step_gives_equal_parameters():
    torch.manual_seed(6)
    tm = TorchCNN()
    jm = convert.torch_cnn_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0)))
    x, y = _batch(16, 8, 10)
    opt_t = torch.optim.SGD(tm.parameters(), lr=0.5)
    _torch_loss_and_grads(tm, x, y)
    opt_t.step()
    opt_j = nnx.Optimizer(jm, optax.sgd(0.5), wrt=nnx.Param)
    _, _, grads_j = _nnx_loss_and_grads(jm, x, y)
    opt_j.update(jm, grads_j)
    assert_close(
        nnx.to_pure_dict(nnx.state(jm, nnx.Param)),
        convert.torch_cnn_tensors_to_jax(dict(tm.named_parameters()), tm.feature_chw),
        rtol=1e-5,
        atol=1e-6,
    )


def test_mismatched_models_name_the_problem():
    small = CONFIGS[1]  # sizes already built above, so no new initialiser compilations
    with pytest.raises(ValueError, match=r"nnx_model\.fc1\.kernel"):
        convert.torch_cnn_to_nnx(TorchCNN(hidden=32), NNXCNN(rngs=nnx.Rngs(0)))
    with pytest.raises(ValueError, match="flatten different feature maps"):
        convert.torch_cnn_to_nnx(TorchCNN(), NNXCNN(**small, rngs=nnx.Rngs(0)))
    with pytest.raises(ValueError, match=r"torch_model\.fc1\.weight"):
        convert.nnx_cnn_to_torch(
            NNXCNN(**small, rngs=nnx.Rngs(0)), TorchCNN(**{**small, "hidden": 9})
        )
    with pytest.raises(TypeError, match="torch_model must be"):
        convert.torch_cnn_to_nnx(torch.nn.Linear(2, 2), NNXCNN(rngs=nnx.Rngs(0)))
    with pytest.raises(TypeError, match="nnx_model must be"):
        convert.nnx_cnn_to_torch(object(), TorchCNN())
    with pytest.raises(KeyError, match="conv1.weight"):
        convert.torch_cnn_tensors_to_jax({}, (32, 4, 4))
