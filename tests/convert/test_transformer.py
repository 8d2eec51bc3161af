"""course_utils.models.transformer and course_utils.convert.transformer: the block and encoder, both frameworks, converted both ways."""

import copy

import numpy as np
import pytest

from course_utils import convert, models
from course_utils.parity import assert_close
from tests.blocks import CFG


def test_block_outputs_and_gradients_agree(block_pair, x_block):
    import jax.numpy as jnp
    import torch
    from flax import nnx

    torch_block, nnx_block = block_pair
    tb = copy.deepcopy(torch_block)
    out = tb(torch.from_numpy(x_block))
    (out**2).mean().backward()
    grads = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).mean()))(
        nnx_block, jnp.asarray(x_block)
    )
    assert_close(
        nnx.jit(lambda m, x: m(x))(nnx_block, jnp.asarray(x_block)),
        out,
        rtol=1e-5,
        atol=1e-5,
        name="output",
    )
    converted = convert.grads_nnx_to_torch(nnx_block, grads, tb)
    assert set(converted) == {n for n, _ in tb.named_parameters()}
    assert_close(
        converted, {n: p.grad for n, p in tb.named_parameters()}, rtol=1e-4, atol=1e-6
    )


def test_block_round_trip_is_exact(block_pair):
    from flax import nnx

    torch_block, nnx_block = block_pair
    back = convert.block_nnx_to_torch(nnx_block, models.TorchBlock(CFG))
    assert_close(
        dict(back.named_parameters()),
        dict(torch_block.named_parameters()),
        rtol=0,
        atol=0,
    )
    again = convert.block_torch_to_nnx(back, models.NNXBlock(CFG, rngs=nnx.Rngs(5)))
    assert_close(
        nnx.state(again, nnx.Param), nnx.state(nnx_block, nnx.Param), rtol=0, atol=0
    )


def test_attention_layout(block_pair):
    torch_block, nnx_block = block_pair
    d, h = CFG.d_model, CFG.n_heads
    w_q = torch_block.attn.in_proj_weight.detach().numpy()[:d]  # (out, in)
    k_q = np.asarray(nnx_block.attn.query.kernel[...])  # (in, heads, head_dim)
    assert k_q.shape == (d, h, d // h)
    # output feature j of head i is row i * head_dim + j of PyTorch's query weight
    np.testing.assert_array_equal(k_q[:, 1, 2], w_q[1 * (d // h) + 2])


def test_converters_name_the_mismatch():
    from flax import nnx

    other = models.BlockConfig(d_model=16, n_heads=4, d_ff=48)
    with pytest.raises(ValueError, match="different sizes"):
        convert.block_torch_to_nnx(
            models.TorchBlock(CFG), models.NNXBlock(other, rngs=nnx.Rngs(0))
        )
    with pytest.raises(TypeError, match="nnx_block must be a NNXBlock"):
        convert.block_torch_to_nnx(models.TorchBlock(CFG), models.TorchBlock(CFG))
    with pytest.raises(TypeError, match="only apply with encoder=True"):
        convert.make_pair(CFG, vocab=10)


@pytest.mark.slow
def test_encoder_mask_equals_unpadded_and_converts_both_ways():
    import jax.numpy as jnp
    import torch
    from flax import nnx

    cfg = models.BlockConfig(16, 2, 32, dropout=0.0)
    te, je = convert.make_pair(
        cfg, seed=1, encoder=True, vocab=30, max_len=12, n_layers=2, num_classes=3
    )
    tokens = np.random.default_rng(1).integers(0, 30, (2, 9))
    mask = np.ones((2, 9), bool)
    mask[0, 5:] = False
    with torch.no_grad():
        masked = te(torch.from_numpy(tokens), torch.from_numpy(mask))
        short = te(torch.from_numpy(tokens[:1, :5]))
    assert_close(masked[0], short[0], rtol=1e-5, atol=1e-6, name="masked vs unpadded")
    assert_close(
        nnx.jit(lambda m, t, k: m(t, k))(je, jnp.asarray(tokens), jnp.asarray(mask)),
        masked,
        rtol=1e-5,
        atol=1e-5,
        name="nnx masked",
    )
    back = convert.encoder_nnx_to_torch(
        je, models.TorchEncoder(cfg, vocab=30, max_len=12, n_layers=2, num_classes=3)
    )
    assert_close(
        dict(back.named_parameters()), dict(te.named_parameters()), rtol=0, atol=0
    )
    with pytest.raises(ValueError, match="2 torch blocks vs 1 NNX blocks"):
        convert.encoder_torch_to_nnx(
            te,
            models.NNXEncoder(cfg, vocab=30, max_len=12, n_layers=1, rngs=nnx.Rngs(0)),
        )


@pytest.mark.slow
def test_grads_nnx_to_torch_handles_the_course_cnn():
    import jax.numpy as jnp
    import torch
    from flax import nnx

    from course_utils import convert, models

    torch.manual_seed(0)
    tc, nc = (
        models.TorchCNN(channels=(4, 8), hidden=16),
        models.NNXCNN(channels=(4, 8), hidden=16, rngs=nnx.Rngs(0)),
    )
    convert.cnn_torch_to_nnx(tc, nc)
    x = np.random.default_rng(2).standard_normal((3, 1, 8, 8)).astype(np.float32)
    tc(torch.from_numpy(x)).pow(2).sum().backward()
    grads = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).sum()))(
        nc, jnp.asarray(x.transpose(0, 2, 3, 1))
    )
    assert_close(
        convert.grads_nnx_to_torch(nc, grads, tc),
        {n: p.grad for n, p in tc.named_parameters()},
        rtol=1e-4,
        atol=1e-5,
    )
    with pytest.raises(TypeError, match="no converter for Linear"):
        convert.grads_nnx_to_torch(nnx.Linear(2, 2, rngs=nnx.Rngs(0)), None, tc)
