"""course_utils.models: the course CNN in PyTorch and Flax NNX."""

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
nnx = pytest.importorskip("flax.nnx")

from course_utils.models import NNXCNN, TorchCNN  # noqa: E402


def _torch_n_params(m):
    return sum(p.numel() for p in m.parameters())


def _nnx_n_params(m):
    return sum(x.size for x in jax.tree.leaves(nnx.state(m, nnx.Param)))


@pytest.mark.parametrize(
    # the sizes test_convert uses too, so a test worker compiles each size once
    "channels, hidden, classes, size",
    [((16, 32), 64, 10, 8), ((3, 5), 7, 4, 6)],
)
def test_shapes_and_parameter_counts_match(channels, hidden, classes, size):
    tm = TorchCNN(channels, hidden, classes, size)
    jm = NNXCNN(channels, hidden, classes, size, rngs=nnx.Rngs(0))
    half = size // 2
    assert tm.feature_chw == (channels[1], half, half)
    assert jm.feature_hwc == (half, half, channels[1])
    assert tuple(tm(torch.zeros(5, 1, size, size)).shape) == (5, classes)
    assert jm(jax.numpy.zeros((5, size, size, 1))).shape == (5, classes)
    expected = (9 * channels[0] + channels[0]) + (
        9 * channels[0] * channels[1] + channels[1]
    )
    expected += channels[1] * half * half * hidden + hidden + hidden * classes + classes
    assert _torch_n_params(tm) == _nnx_n_params(jm) == expected


def test_defaults_are_the_documented_ones():
    tm = TorchCNN()
    assert tm.conv1.padding == (1, 1) and tm.conv1.kernel_size == (3, 3)
    assert (tm.conv1.out_channels, tm.conv2.out_channels) == (16, 32)
    assert (tm.fc1.in_features, tm.fc1.out_features, tm.fc2.out_features) == (
        512,
        64,
        10,
    )
    jm = NNXCNN(rngs=nnx.Rngs(0))
    assert jm.conv1.padding == ((1, 1), (1, 1))
    assert jm.fc1.kernel.shape == (512, 64) and jm.fc2.kernel.shape == (64, 10)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"channels": (16,)}, "channels"),
        ({"channels": (16, 0)}, r"channels\[1\]"),
        ({"hidden": 0}, "hidden"),
        ({"num_classes": -1}, "num_classes"),
        ({"image_size": 7}, "image_size"),
    ],
)
def test_bad_sizes_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TorchCNN(**kwargs)
    with pytest.raises(ValueError, match=match):
        NNXCNN(**kwargs, rngs=nnx.Rngs(0))


def test_wrong_layout_is_a_clear_error():
    with pytest.raises(ValueError, match="NCHW"):
        TorchCNN()(torch.zeros(2, 8, 8, 1))
    with pytest.raises(ValueError, match="NHWC"):
        NNXCNN(rngs=nnx.Rngs(0))(jax.numpy.zeros((2, 1, 8, 8)))


def test_torch_model_pickles_by_name():
    assert (
        TorchCNN.__qualname__ == "TorchCNN"
        and TorchCNN.__module__ == "course_utils.models.cnn"
    )
    tm = TorchCNN(hidden=8)
    clone = pickle.loads(pickle.dumps(tm))
    x = torch.rand(3, 1, 8, 8)
    assert torch.equal(clone(x), tm(x))


def test_nnx_model_seeds_are_explicit():
    a = NNXCNN(rngs=nnx.Rngs(1))
    b = NNXCNN(rngs=nnx.Rngs(1))
    c = NNXCNN(rngs=nnx.Rngs(2))
    ka, kb, kc = (np.asarray(m.conv2.kernel[...]) for m in (a, b, c))
    assert np.array_equal(ka, kb) and not np.array_equal(ka, kc)


def test_both_models_learn_a_separable_problem():
    """A few optimiser steps on two easy classes lower the loss in both frameworks."""
    import optax

    rng = np.random.default_rng(0)
    X = rng.random((32, 1, 6, 6), dtype=np.float32)
    y = (X[:, 0, :3].mean(axis=(1, 2)) > X[:, 0, 3:].mean(axis=(1, 2))).astype(np.int64)
    X[y == 1, 0, :3] += 1.0

    torch.manual_seed(0)
    sizes = {"channels": (3, 5), "hidden": 7, "num_classes": 4, "image_size": 6}
    tm = TorchCNN(**sizes)
    opt = torch.optim.Adam(tm.parameters(), lr=1e-2)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    losses_t = []
    for _ in range(15):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(tm(Xt), yt)
        loss.backward()
        opt.step()
        losses_t.append(loss.item())

    jm = NNXCNN(**sizes, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(jm, optax.adam(1e-2), wrt=nnx.Param)
    Xj, yj = jax.numpy.asarray(X.transpose(0, 2, 3, 1)), jax.numpy.asarray(y)

    @nnx.jit
    def step(model, optimizer, x, y):
        def loss_fn(model):
            return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    losses_j = [float(step(jm, optimizer, Xj, yj)) for _ in range(15)]
    assert losses_t[-1] < 0.5 * losses_t[0]
    assert losses_j[-1] < 0.5 * losses_j[0]
