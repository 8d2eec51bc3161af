"""course_utils.convert.cnn: the CNN converted both ways with equal outputs and gradients."""

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


# ------------------------------------------------------------- the whole CNN


# One batch size for every test: the jitted loss and gradients below compile once per
# model size (each new input shape is another compilation), and what the tests compare
# does not depend on the batch size. The seeds give each test its own data.
BATCH = 9


def _batch(size, classes, seed=0, n=BATCH):
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


@pytest.mark.slow
@pytest.mark.parametrize("cfg", CONFIGS)
def test_torch_to_nnx_equal_outputs_and_gradients(cfg):
    torch.manual_seed(1)
    tm = TorchCNN(**cfg)
    jm = convert.cnn_torch_to_nnx(tm, NNXCNN(**cfg, rngs=nnx.Rngs(0)))
    x, y = _batch(cfg["image_size"], cfg["num_classes"])
    logits_t, loss_t, grads_t = _torch_loss_and_grads(tm, x, y)
    logits_j, loss_j, grads_j = _nnx_loss_and_grads(jm, x, y)
    assert_close(logits_j, logits_t, rtol=1e-5, atol=1e-5, name="logits")
    assert_close(loss_j, loss_t, rtol=1e-5, atol=1e-6, name="loss")
    assert_close(
        nnx.to_pure_dict(grads_j),
        convert.cnn_torch_tensors_to_jax(grads_t, tm.feature_chw),
        rtol=1e-4,
        atol=1e-6,
        name="grads",
    )


@pytest.mark.parametrize("cfg", CONFIGS)
def test_nnx_to_torch_equal_outputs_and_gradients(cfg):
    jm = NNXCNN(**cfg, rngs=nnx.Rngs(3))
    tm = convert.cnn_nnx_to_torch(jm, TorchCNN(**cfg))
    x, y = _batch(cfg["image_size"], cfg["num_classes"], seed=1)
    logits_t, loss_t, grads_t = _torch_loss_and_grads(tm, x, y)
    logits_j, loss_j, grads_j = _nnx_loss_and_grads(jm, x, y)
    assert_close(logits_t, logits_j, rtol=1e-5, atol=1e-5, name="logits")
    assert_close(loss_t, loss_j, rtol=1e-5, atol=1e-6, name="loss")
    assert_close(
        convert.cnn_jax_tensors_to_torch(grads_j, jm.feature_hwc),
        {n: g for n, g in grads_t.items()},
        rtol=1e-4,
        atol=1e-6,
        name="grads",
    )


def test_round_trip_is_exact():
    torch.manual_seed(2)
    tm = TorchCNN()
    back = convert.cnn_nnx_to_torch(
        convert.cnn_torch_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0))), TorchCNN()
    )
    for (name, p), q in zip(tm.named_parameters(), back.parameters(), strict=True):
        assert torch.equal(p, q), name


def test_cnn_torch_to_nnx_fills_an_abstract_model():
    """Lessons build the JAX model with nnx.eval_shape (no arrays) before loading weights."""
    torch.manual_seed(5)
    tm = TorchCNN()
    abstract = nnx.eval_shape(lambda: NNXCNN(rngs=nnx.Rngs(0)))
    jm = convert.cnn_torch_to_nnx(tm, abstract)
    assert all(
        isinstance(leaf, jax.Array)
        for leaf in jax.tree.leaves(nnx.state(jm, nnx.Param))
    )
    x, _ = _batch(8, 10, seed=5)
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
    jm = convert.cnn_torch_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0)))
    kernel, _ = convert.linear_torch_to_jax(tm.fc1.weight)
    jm.fc1.kernel[...] = kernel
    x, _ = _batch(8, 10, seed=4)
    diff = np.abs(
        np.asarray(jm(jnp.asarray(x.transpose(0, 2, 3, 1))))
        - tm(torch.from_numpy(x)).detach().numpy()
    )
    assert diff.max() > 1e-3


def test_converting_merged_gradients_works():
    """Lesson 07 merges a gradient state back into the model's graph and converts it."""
    jm = NNXCNN(rngs=nnx.Rngs(5))
    tm = convert.cnn_nnx_to_torch(jm, TorchCNN())
    x, y = _batch(8, 10, seed=3)
    _, _, grads_t = _torch_loss_and_grads(tm, x, y)
    _, _, grads_j = _nnx_loss_and_grads(jm, x, y)
    graphdef, _, rest = nnx.split(jm, nnx.Param, ...)
    target = convert.cnn_nnx_to_torch(
        nnx.merge(graphdef, grads_j, rest), copy.deepcopy(tm)
    )
    assert_close(dict(target.named_parameters()), grads_t, rtol=1e-4, atol=1e-6)


def test_one_sgd_step_gives_equal_parameters():
    torch.manual_seed(6)
    tm = TorchCNN()
    jm = convert.cnn_torch_to_nnx(tm, NNXCNN(rngs=nnx.Rngs(0)))
    x, y = _batch(8, 10, seed=6)
    opt_t = torch.optim.SGD(tm.parameters(), lr=0.5)
    _torch_loss_and_grads(tm, x, y)
    opt_t.step()
    opt_j = nnx.Optimizer(jm, optax.sgd(0.5), wrt=nnx.Param)
    _, _, grads_j = _nnx_loss_and_grads(jm, x, y)
    opt_j.update(jm, grads_j)
    assert_close(
        nnx.to_pure_dict(nnx.state(jm, nnx.Param)),
        convert.cnn_torch_tensors_to_jax(dict(tm.named_parameters()), tm.feature_chw),
        rtol=1e-5,
        atol=1e-6,
    )


def test_mismatched_models_name_the_problem():
    small = CONFIGS[1]  # sizes already built above, so no new initialiser compilations
    with pytest.raises(ValueError, match=r"nnx_model\.fc1\.kernel"):
        convert.cnn_torch_to_nnx(TorchCNN(hidden=32), NNXCNN(rngs=nnx.Rngs(0)))
    with pytest.raises(ValueError, match="flatten different feature maps"):
        convert.cnn_torch_to_nnx(TorchCNN(), NNXCNN(**small, rngs=nnx.Rngs(0)))
    with pytest.raises(ValueError, match=r"torch_model\.fc1\.weight"):
        convert.cnn_nnx_to_torch(
            NNXCNN(**small, rngs=nnx.Rngs(0)), TorchCNN(**{**small, "hidden": 9})
        )
    with pytest.raises(TypeError, match="torch_model must be"):
        convert.cnn_torch_to_nnx(torch.nn.Linear(2, 2), NNXCNN(rngs=nnx.Rngs(0)))
    with pytest.raises(TypeError, match="nnx_model must be"):
        convert.cnn_nnx_to_torch(object(), TorchCNN())
    with pytest.raises(KeyError, match="conv1.weight"):
        convert.cnn_torch_tensors_to_jax({}, (32, 4, 4))
