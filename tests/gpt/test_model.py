"""course_utils.gpt.model: the config is validated; the KV cache equals the full forward; causal."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils import gpt  # noqa: E402

# One size for every GPT test module (tests/models, tests/convert): JAX compiles
# each initializer once per shape, so sharing the sizes shares those compiles.
CFG = gpt.model.GPTConfig(
    vocab_size=13, block_size=8, d_model=16, n_heads=2, n_layers=3, d_ff=32
)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_model": 10, "n_heads": 4}, "divisible by n_heads"),
        ({"n_layers": 0}, "n_layers must be a positive int"),
        ({"dropout": 1.0}, "dropout must be in"),
    ],
)
def test_config_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gpt.model.GPTConfig(**kwargs)


@pytest.mark.parametrize(
    "shared",
    [
        {"d_model": 0},
        {"n_heads": -1},
        {"d_ff": 1.5},
        {"d_model": 30, "n_heads": 4},
        {"dropout": 1.0},
        {"dropout": -0.1},
        {"d_model": 48, "n_heads": 3, "d_ff": 96, "dropout": 0.5},  # valid in both
    ],
)
def test_the_gpt_and_the_block_validate_their_shared_sizes_alike(shared):
    """GPTConfig and models.BlockConfig check the fields they share in step."""
    from course_utils.models.transformer import BlockConfig

    said = []
    for config in (gpt.model.GPTConfig, BlockConfig):
        try:
            config(**shared)
            said.append(None)
        except ValueError as err:
            said.append(str(err).replace(config.__name__, "Config"))
    assert said[0] == said[1]


def _tokens(shape=(2, 8)):
    return np.random.default_rng(0).integers(0, CFG.vocab_size, shape)


def test_check_positions_refuses_only_what_it_can_know():
    check = gpt.model.check_positions
    check(8, 0, 8)
    with pytest.raises(ValueError, match="positions 7..8 do not fit block_size=8"):
        check(2, 7, 8)
    check(8, object(), 8)  # a traced position: only the length is checked
    with pytest.raises(ValueError, match="positions 0..8 do not fit"):
        check(9, object(), 8)
    check(object(), 7, 8)  # a symbolic length: nothing to check


def test_torch_cache_equals_full_forward_and_is_causal():
    import torch

    torch.manual_seed(0)
    model = gpt.model.TorchGPT(CFG).eval()
    t = torch.from_numpy(_tokens())
    with torch.no_grad():
        full = model(t)
        cache = model.new_cache(2)
        assert cache[0].shape == (3, 2, 2, 8, 8)
        parts = [model.decode(t[:, :3], cache, 0)[0]]
        parts += [model.decode(t[:, p : p + 1], cache, p)[0] for p in range(3, 8)]
        np.testing.assert_allclose(torch.cat(parts, 1), full, rtol=1e-5, atol=1e-6)
        changed = t.clone()
        changed[:, 5:] = (changed[:, 5:] + 1) % CFG.vocab_size
        np.testing.assert_array_equal(model(changed)[:, :5], full[:, :5])
    with pytest.raises(ValueError, match="do not fit block_size"):
        model.decode(t[:, :2], cache, 7)


@pytest.fixture(scope="module")
def nnx_dropout_model():
    from flax import nnx

    return gpt.model.NNXGPT(
        gpt.model.GPTConfig(**{**CFG.__dict__, "dropout": 0.5}), rngs=nnx.Rngs(0)
    )


@pytest.mark.slow
def test_nnx_cache_equals_full_forward_and_is_causal(nnx_dropout_model):
    import jax.numpy as jnp
    from flax import nnx

    from course_utils import compat

    model = compat.eval_view(nnx_dropout_model)
    assert model.blocks.fc1.kernel[...].shape == (3, 16, 32)  # stacked layers
    t = jnp.asarray(_tokens())
    forward = nnx.jit(lambda m, t: m(t))
    full = forward(model, t)
    step = nnx.jit(lambda m, t, c, p: m.decode(t, c, p))
    logits, cache = step(model, t[:, :3], model.new_cache(2), 0)
    parts = [logits]
    for p in range(3, 8):
        logits, cache = step(model, t[:, p : p + 1], cache, p)
        parts.append(logits)
    np.testing.assert_allclose(jnp.concatenate(parts, 1), full, rtol=1e-5, atol=1e-6)
    changed = t.at[:, 5:].set((t[:, 5:] + 1) % CFG.vocab_size)
    np.testing.assert_array_equal(forward(model, changed)[:, :5], full[:, :5])
    assert model.new_cache(1)[0].dtype == model.tok_emb.embedding[...].dtype
    with pytest.raises(ValueError, match="do not fit block_size"):
        model.decode(t[:, :2], model.new_cache(2), 7)  # a Python int position
    with pytest.raises(ValueError, match="do not fit block_size"):
        forward(model, jnp.zeros((1, CFG.block_size + 1), jnp.int32))


@pytest.mark.slow
def test_nnx_dropout_and_bfloat16_policy(nnx_dropout_model):
    import jax.numpy as jnp
    from flax import nnx

    from course_utils import compat

    model = nnx_dropout_model
    t = jnp.asarray(_tokens())
    f = nnx.jit(lambda m, t: m(t))
    assert not np.array_equal(f(model, t), f(model, t))  # a new mask per call
    view = compat.eval_view(model)
    np.testing.assert_array_equal(f(view, t), f(view, t))
    half = gpt.model.NNXGPT(CFG, dtype=jnp.bfloat16, rngs=nnx.Rngs(0))
    assert half.blocks.fc1.kernel[...].dtype == jnp.float32
    assert nnx.jit(lambda m, t: m.loss(t, t))(half, t).dtype == jnp.float32


def test_nnx_float64_parameters_compute_in_float64(nnx_dropout_model):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from course_utils import compat

    graphdef, params, rest = nnx.split(
        compat.eval_view(nnx_dropout_model), nnx.Param, ...
    )
    t = _tokens()
    with compat.enable_x64():  # the float64 control of lesson 11
        wide = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), params)
        loss = nnx.jit(lambda m, t: m.loss(t, t))(nnx.merge(graphdef, wide, rest), t)
        assert loss.dtype == jnp.float64
