"""The lessons' parity checks hold on a GPU that rounds matmuls to TF32, emulated on the CPU.

Ampere-and-newer GPUs run float32 matmuls and convolutions with TF32 inputs when
a framework allows it (JAX's default precision, cuDNN's default). The course sets
full float32 with ``env.set_precision("float32")``; these tests replay the
parity cells of lessons 01, 04 and 07 under ``tests/tf32_emulation.py`` and check
that they pass at the lessons' own tolerances, and that with TF32 allowed they
would not (so the emulation, and the test, can fail).
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import torch
import torch.nn.functional as F
from flax import nnx
from torch.nn.attention import SDPBackend, sdpa_kernel

from course_utils import convert, data, env, models, numpy_mlp
from course_utils.parity import assert_close, to_numpy
from tests.tf32_emulation import (
    BF16_BITS,
    TF32_BITS,
    TorchTF32Mode,
    emulate_jax,
    round_mantissa_jax,
    round_mantissa_np,
    round_mantissa_torch,
)

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def kept_precision():
    """Put both frameworks' precision settings back as they were on the way out."""
    jax_before = jax.config.jax_default_matmul_precision
    knobs = [
        (torch.backends.cuda.matmul, "fp32_precision"),
        (torch.backends.cudnn.conv, "fp32_precision"),
        (torch.backends.cudnn.rnn, "fp32_precision"),
    ]
    torch_before = [getattr(obj, attr) for obj, attr in knobs]
    # The course sets torch's legacy flags (env.set_precision); restoring only the new
    # per-backend ones leaves a mix that makes every later legacy read raise.
    legacy_before = (
        torch.get_float32_matmul_precision(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    try:
        yield
    finally:
        jax.config.update("jax_default_matmul_precision", jax_before)
        for (obj, attr), value in zip(knobs, torch_before, strict=True):
            setattr(obj, attr, value)
        torch.set_float32_matmul_precision(legacy_before[0])
        torch.backends.cuda.matmul.allow_tf32 = legacy_before[1]
        torch.backends.cudnn.allow_tf32 = legacy_before[2]


@pytest.fixture(autouse=True)
def restore_precision():
    with kept_precision():
        yield


# ------------------------------------------------------------ the emulation


def test_rounding_to_tf32_and_bf16_known_values():
    ulp = 2.0**-10  # TF32's spacing just above 1
    x = np.array(
        [
            1.0,
            1 + ulp / 2,
            1 + 1.5 * ulp,
            1 + ulp / 2 + 2**-20,
            -(1 + 0.75 * ulp),
            3.0,
            np.inf,
            -np.inf,
            np.nan,
        ],
        dtype=np.float32,
    )
    want = np.array(
        [1.0, 1.0, 1 + 2 * ulp, 1 + ulp, -(1 + ulp), 3.0, np.inf, -np.inf, np.nan],
        dtype=np.float32,
    )  # ties go to even; above a tie rounds up; the sign is kept
    for got in (
        round_mantissa_np(x, TF32_BITS),
        round_mantissa_torch(torch.from_numpy(x), TF32_BITS).numpy(),
        np.asarray(round_mantissa_jax(jnp.asarray(x), TF32_BITS)),
    ):
        np.testing.assert_array_equal(got, want)
    assert round_mantissa_np(np.float32(1 + 2**-8), BF16_BITS) == 1.0  # a bfloat16 tie
    rng = np.random.default_rng(0)
    r = (rng.standard_normal(10_000) * 10.0 ** rng.integers(-20, 20, 10_000)).astype(
        np.float32
    )
    t = round_mantissa_np(r, TF32_BITS)
    assert not (t.view(np.uint32) & np.uint32(0x1FFF)).any()  # 13 low bits cleared
    rel = np.abs(t.astype(np.float64) - r) / np.abs(r)
    assert rel.max() <= 2.0**-11 and rel.max() > 2.0**-12  # half a TF32 ulp at most


def _mlp_torch_and_jax():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((64, 32)).astype(np.float32)
    W1 = rng.standard_normal((32, 48)).astype(np.float32) / 6
    W2 = rng.standard_normal((48, 8)).astype(np.float32) / 7

    def run_torch():
        x = torch.from_numpy(X)
        w1, w2 = (torch.from_numpy(w).requires_grad_() for w in (W1, W2))
        loss = torch.relu(x @ w1).matmul(w2).pow(2).mean()
        loss.backward()
        return [t.detach().clone() for t in (loss, w1.grad, w2.grad)]

    def loss_jax(w1, w2, x):
        return ((jax.nn.relu(x @ w1) @ w2) ** 2).mean()

    args = (jnp.asarray(W1), jnp.asarray(W2), jnp.asarray(X))
    return run_torch, jax.value_and_grad(loss_jax, argnums=(0, 1)), args


def test_float32_precision_rounds_nothing():
    env.set_precision("float32")
    run_torch, f_jax, args = _mlp_torch_and_jax()
    plain = run_torch()
    with TorchTF32Mode() as mode:
        emulated = run_torch()
    assert mode.seen.get("mm", 0) >= 3 and not mode.rounded
    for a, b in zip(plain, emulated, strict=True):
        assert torch.equal(a, b)  # bit for bit
    emulated_jax = emulate_jax(f_jax)
    out = emulated_jax(*args)
    assert (
        emulated_jax.stats.seen["dot_general"] >= 3 and not emulated_jax.stats.rounded
    )
    for a, b in zip(
        jax.tree.leaves(jax.jit(f_jax)(*args)), jax.tree.leaves(out), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _relative_error(got, want64) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.linalg.norm(got - want64) / np.linalg.norm(want64))


def test_tf32_precision_rounds_matmuls_to_tf32_accuracy():
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((256, 256)).astype(np.float32) for _ in range(2))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    ra, rb = (round_mantissa_np(m, TF32_BITS).astype(np.float64) for m in (a, b))
    tf32_inputs = ra @ rb  # what tensor cores compute, before float32 accumulation
    err_f32 = _relative_error(a @ b, exact)
    env.set_precision("tf32")
    with TorchTF32Mode() as mode:
        got_torch = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
    assert mode.rounded == {"mm": 1}
    emulated = emulate_jax(jnp.matmul)
    got_jax = np.asarray(emulated(jnp.asarray(a), jnp.asarray(b)))
    assert emulated.stats.rounded == {"dot_general": 1}
    for got in (got_torch, got_jax):
        # float32 accumulation of the rounded inputs...
        assert _relative_error(got, tf32_inputs) < 3 * err_f32
        # ...which is TF32's error: inputs rounded to 11 significant bits give a
        # relative error of about 2**-11 / sqrt(3) per product, 3e-4.
        err_tf32 = _relative_error(got, exact)
        assert 1e-4 < err_tf32 < 1e-3, err_tf32
        assert err_tf32 > 100 * err_f32, (err_tf32, err_f32)


def test_each_framework_setting_is_honoured_separately():
    x = torch.randn(2, 1, 6, 6)
    w = torch.randn(3, 1, 3, 3)
    env.set_precision("float32")
    torch.backends.cudnn.conv.fp32_precision = "tf32"  # cuDNN's own default
    with TorchTF32Mode() as mode:
        F.conv2d(x, w) @ torch.randn(4, 4)
    assert mode.rounded == {"convolution": 1}

    a = jnp.ones((4, 4))
    f = emulate_jax(lambda a: jnp.dot(a, a, precision="default") + jnp.dot(a, a))
    f(a)  # the config says float32; an explicit DEFAULT is still TF32 on a GPU
    assert f.stats.rounded == {"dot_general": 1}
    env.set_precision("tf32")
    g = emulate_jax(lambda a: jnp.dot(a, a, precision="highest") + jnp.dot(a, a))
    g(a)
    assert g.stats.rounded == {"dot_general": 1}


def test_biases_are_added_in_float32_after_the_tf32_product():
    env.set_precision("tf32")
    b = torch.full((3,), 1 + 2.0**-20)  # not a TF32 number
    x = torch.full((2, 4), 1 + 2.0**-20)
    with TorchTF32Mode() as mode:
        out = F.linear(x, torch.zeros(3, 4), b)  # addmm: bias + x @ 0
        conv = F.conv2d(x.reshape(1, 1, 2, 4), torch.zeros(3, 1, 1, 1), b)
    assert mode.rounded == {"addmm": 1, "convolution": 1}
    assert torch.equal(out, b.expand(2, 3)) and torch.equal(conv[0, :, 0, 0], b)
    with TorchTF32Mode():
        prod = F.linear(x, torch.ones(1, 4))  # the product's operands are rounded
    assert torch.equal(prod, torch.full((2, 1), 4.0))


def test_the_emulation_refuses_what_it_cannot_round():
    env.set_precision("tf32")

    def loop(a):
        return jax.lax.fori_loop(0, 2, lambda i, c: c @ a, a)

    with pytest.raises(NotImplementedError, match="scan. contains a dot_general"):
        emulate_jax(loop)(jnp.ones((3, 3)))
    # a loop without a contraction is evaluated as it is
    assert (
        float(
            emulate_jax(lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c * 2, a))(1.0)
        )
        == 8
    )
    q = torch.randn(1, 2, 4, 8)
    with (
        pytest.raises(NotImplementedError, match="scaled_dot_product"),
        TorchTF32Mode(),
    ):
        F.scaled_dot_product_attention(q, q, q)  # CPU's fused kernel


# --------------------------------------------- the lessons' parity computations


def built(make):
    """``make()`` with JAX's precision at its default, whatever the setting under test.

    JAX keys the programs it compiles by that setting, so a model's initializers
    would compile again under each one. Initializers do no matmul: the weights are
    the same under every setting.
    """
    with kept_precision():
        jax.config.update("jax_default_matmul_precision", None)
        return make()


def lesson01_mlp() -> list[tuple]:
    """Lesson 01, section 2: the same MLP in NumPy, PyTorch and JAX, one SGD step."""
    d_in, d_hidden, d_out, lr = 4, 64, 1, 0.2  # the lesson's full sizes
    X_np, y_np = numpy_mlp.toy_regression(1024, d_in, d_out, seed=0)
    init = numpy_mlp.init_params(d_in, d_hidden, d_out, seed=0)

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = torch.nn.Linear(d_in, d_hidden)
            self.linear2 = torch.nn.Linear(d_hidden, d_out)

        def forward(self, X):
            return self.linear2(torch.relu(self.linear1(X)))

    model = MLP()
    with torch.no_grad():
        for layer, w, b in ((model.linear1, "w1", "b1"), (model.linear2, "w2", "b2")):
            layer.weight.copy_(torch.from_numpy(init[w].T))
            layer.bias.copy_(torch.from_numpy(init[b]))
    X, y = torch.from_numpy(X_np), torch.from_numpy(y_np)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    with TorchTF32Mode():
        out_torch = model(X).detach()
        optimizer.zero_grad()
        (0.5 * ((model(X) - y) ** 2).sum(dim=1).mean()).backward()
        optimizer.step()
    step_torch = {
        "b1": model.linear1.bias,
        "b2": model.linear2.bias,
        "w1": model.linear1.weight.T,
        "w2": model.linear2.weight.T,
    }

    def mlp(params, X):
        return (
            jax.nn.relu(X @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
        )

    def loss_jax(params, X, y):
        return 0.5 * ((mlp(params, X) - y) ** 2).sum(axis=1).mean()

    @jax.jit
    def sgd_step(params, X, y, lr):
        grads = jax.grad(loss_jax)(params, X, y)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads)

    params = jax.tree.map(jnp.asarray, init)
    out_jax = emulate_jax(mlp)(params, jnp.asarray(X_np))
    step_jax = emulate_jax(sgd_step)(params, jnp.asarray(X_np), jnp.asarray(y_np), lr)
    grads_np = numpy_mlp.grads(init, X_np, y_np)
    step_numpy = {k: init[k] - lr * grads_np[k] for k in init}
    return [  # (name, a, b, rtol, atol), as in the lesson's parity cell
        ("01 output", out_torch, out_jax, 1e-5, 1e-5),
        ("01 one SGD step, torch vs jax", step_torch, step_jax, 1e-5, 1e-6),
        ("01 one SGD step, jax vs numpy", step_jax, step_numpy, 1e-5, 1e-6),
    ]


def lesson04_cnn() -> list[tuple]:
    """Lesson 04, sections 2-3: TorchCNN and NNXCNN with converted weights."""
    torch.manual_seed(0)
    model_torch = models.TorchCNN()
    model_jax = convert.cnn_torch_to_nnx(
        model_torch, built(lambda: models.NNXCNN(rngs=nnx.Rngs(0)))
    )
    split = data.load_digits(seed=0)
    X_np, y_np = next(data.batches(split.X_train, split.y_train, 64, seed=0))
    x_torch, y_torch = torch.from_numpy(X_np), torch.from_numpy(y_np)
    x_jax, y_jax = jnp.asarray(data.nchw_to_nhwc(X_np)), jnp.asarray(y_np)

    with TorchTF32Mode():
        logits_torch = model_torch(x_torch)
        loss_torch = F.cross_entropy(logits_torch, y_torch)
        loss_torch.backward()
    grads_torch = {name: p.grad for name, p in model_torch.named_parameters()}

    graphdef, params, rest = nnx.split(model_jax, nnx.Param, ...)

    def logits_fn(params, x):
        return nnx.merge(graphdef, params, rest)(x)

    def loss_fn(params, x, y):
        logits = logits_fn(params, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    logits_jax = emulate_jax(logits_fn)(params, x_jax)
    loss_jax, grads_jax = emulate_jax(jax.value_and_grad(loss_fn))(params, x_jax, y_jax)
    grads_torch_as_jax = convert.cnn_torch_tensors_to_jax(
        grads_torch, model_torch.feature_chw
    )
    return [
        ("04 first-batch logits", logits_torch, logits_jax, 1e-5, 1e-5),
        ("04 loss", loss_torch, loss_jax, 1e-6, 1e-6),
        ("04 grads", grads_torch_as_jax, nnx.to_pure_dict(grads_jax), 1e-4, 1e-7),
    ]


def lesson07_block() -> list[tuple]:
    """Lesson 07, section 3: an NNX transformer block ported to PyTorch, output and grads."""
    batch, seq, d_model = 64, 32, 64  # the lesson's full sizes
    cfg = models.BlockConfig(d_model=d_model, n_heads=4, d_ff=2 * d_model, dropout=0.1)
    nnx_block = built(lambda: models.NNXBlock(cfg, rngs=nnx.Rngs(0)))
    torch_block = models.TorchBlock(cfg)
    convert.block_nnx_to_torch(nnx_block, torch_block)
    nnx_block.eval()
    torch_block.eval()
    Xs_np = (
        np.random.default_rng(0)
        .standard_normal((batch, seq, d_model))
        .astype(np.float32)
    )

    # A GPU runs float32 attention in a fused kernel; the math path spells it out as
    # matmuls (bmm) that the emulation can round.
    with sdpa_kernel(SDPBackend.MATH), TorchTF32Mode():
        out_torch = torch_block(torch.from_numpy(Xs_np))
        (out_torch**2).mean().backward()
    grads_torch = {name: p.grad for name, p in torch_block.named_parameters()}

    graphdef, params, rest = nnx.split(nnx_block, nnx.Param, ...)

    def forward(params, x):
        return nnx.merge(graphdef, params, rest)(x)

    def loss(params, x):
        return (forward(params, x) ** 2).mean()

    out_jax = emulate_jax(forward)(params, jnp.asarray(Xs_np))
    grads_jax = emulate_jax(jax.grad(loss))(params, jnp.asarray(Xs_np))
    grads_jax_as_torch = convert.grads_nnx_to_torch(nnx_block, grads_jax, torch_block)
    return [
        ("07 block output", out_torch, out_jax, 1e-5, 1e-5),
        ("07 block grad", grads_jax_as_torch, grads_torch, 1e-4, 1e-6),
    ]


LESSONS = [lesson01_mlp, lesson04_cnn, lesson07_block]


def error_ratio(a, b, rtol: float, atol: float) -> float:
    """The largest ``|a - b| / (atol + rtol * |b|)``: above 1 means assert_close fails."""
    worst = 0.0
    pairs = zip(jax.tree.leaves(to_numpy(a)), jax.tree.leaves(to_numpy(b)), strict=True)
    for x, y in pairs:
        x, y = np.float64(x), np.float64(y)
        worst = max(worst, float(np.max(np.abs(x - y) / (atol + rtol * np.abs(y)))))
    return worst


def gpu_defaults() -> None:
    """What a GPU does when nobody sets a precision: TF32 in JAX and in cuDNN, not cuBLAS."""
    jax.config.update("jax_default_matmul_precision", None)
    torch.backends.cuda.matmul.fp32_precision = "none"  # torch's default: "highest"
    torch.backends.cudnn.conv.fp32_precision = "tf32"


SETTINGS = {"tf32": lambda: env.set_precision("tf32"), "gpu defaults": gpu_defaults}


@pytest.fixture(scope="module")
def measured():
    """Error / tolerance of every parity check under a setting, measured once each."""
    cache: dict[str, dict[str, dict[str, float]]] = {}

    def ratios(setting: str) -> dict[str, dict[str, float]]:
        if setting not in cache:
            with kept_precision():
                SETTINGS[setting]()
                cache[setting] = {
                    lesson.__name__: {
                        name: error_ratio(a, b, rtol, atol)
                        for name, a, b, rtol, atol in lesson()
                    }
                    for lesson in LESSONS
                }
        return cache[setting]

    return ratios


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda f: f.__name__)
def test_parity_holds_at_float32_on_an_emulated_gpu(lesson):
    assert env.set_precision("float32")["name"] == "float32"
    for name, a, b, rtol, atol in lesson():
        assert_close(a, b, rtol=rtol, atol=atol, name=name)


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda f: f.__name__)
def test_the_same_checks_fail_when_tf32_is_allowed(lesson, setting, measured):
    # The negative control: the rounding the course turns off breaks each lesson's
    # parity cell, so the test above can fail.
    ratios = measured(setting)[lesson.__name__]
    print(f"error / tolerance, {setting}:", {k: f"{v:.3g}" for k, v in ratios.items()})
    assert max(ratios.values()) > 2, ratios


def test_leaves_torch_legacy_flags_readable():
    # Runs last in this module: every test above went through kept_precision, and the
    # rest of the suite reads torch's legacy flags (env.precision, claims' harness).
    assert torch.get_float32_matmul_precision() in ("highest", "high", "medium")
    assert isinstance(torch.backends.cuda.matmul.allow_tf32, bool)
    assert isinstance(torch.backends.cudnn.allow_tf32, bool)
