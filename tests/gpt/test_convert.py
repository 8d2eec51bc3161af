"""course_utils.gpt.convert: same logits, loss and gradients from converted weights; exact round trip."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils import gpt  # noqa: E402
from course_utils.gpt.model import NNXGPT, GPTConfig, TorchGPT  # noqa: E402
from course_utils.parity import assert_close  # noqa: E402
from tests.gpt.test_model import CFG  # noqa: E402

# Both GPTs built and compiled for every test: the full suite runs these.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pair():
    return gpt.convert.make_gpt_pair(CFG, seed=1)


def _batch():
    rng = np.random.default_rng(4)
    return rng.integers(0, 13, (3, 8)), rng.integers(0, 13, (3, 8))


@pytest.mark.slow
def test_logits_loss_and_gradients_agree(pair):
    import jax
    import jax.numpy as jnp
    import torch
    from flax import nnx

    tm, jm = pair
    x, y = _batch()
    with jax.default_matmul_precision("highest"):
        logits = nnx.jit(lambda m, t: m(t))(jm, jnp.asarray(x))
        loss, grads = nnx.jit(nnx.value_and_grad(lambda m, a, b: m.loss(a, b)))(
            jm, jnp.asarray(x), jnp.asarray(y)
        )
    tm.zero_grad()
    t_loss = tm.loss(torch.from_numpy(x), torch.from_numpy(y))
    t_loss.backward()
    assert_close(logits, tm(torch.from_numpy(x)), rtol=1e-5, atol=1e-5, name="logits")
    assert_close(loss, t_loss, rtol=1e-6, atol=1e-6, name="loss")
    converted = gpt.convert.gpt_nnx_tensors_to_torch(grads)
    assert set(converted) == {n for n, _ in tm.named_parameters()}
    assert_close(
        converted, {n: p.grad for n, p in tm.named_parameters()}, rtol=1e-4, atol=1e-6
    )


def test_round_trip_is_exact(pair):
    from flax import nnx

    tm, jm = pair
    back = gpt.convert.gpt_nnx_to_torch(jm, TorchGPT(CFG))
    assert_close(back.state_dict(), tm.state_dict(), rtol=0, atol=0)
    again = gpt.convert.gpt_torch_to_nnx(back, NNXGPT(CFG, rngs=nnx.Rngs(9)))
    assert_close(nnx.state(again, nnx.Param), nnx.state(jm, nnx.Param), rtol=0, atol=0)


def test_layout_is_transposed_and_stacked(pair):
    tm, jm = pair
    w = tm.blocks[2].attn.qkv.weight.detach().numpy()  # (out, in)
    k = np.asarray(jm.blocks.attn.qkv.kernel[...])  # (layers, in, out)
    assert k.shape == (3, 16, 48)
    np.testing.assert_array_equal(k[2], w.T)


def test_converters_name_the_mismatch(pair):
    tm, jm = pair
    other = GPTConfig(**{**CFG.__dict__, "n_layers": 2})
    with pytest.raises(ValueError, match="different sizes"):
        gpt.convert.gpt_nnx_to_torch(jm, TorchGPT(other))
    with pytest.raises(TypeError, match="expected a TorchGPT and an NNXGPT"):
        gpt.convert.gpt_nnx_to_torch(tm, tm)
    tensors = dict(tm.state_dict())
    del tensors["blocks.1.fc2.bias"]
    with pytest.raises(KeyError, match="blocks.1.fc2.bias"):
        gpt.convert.gpt_torch_tensors_to_nnx(tensors)
