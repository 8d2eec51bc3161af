"""gpt_keep: resumes are bit for bit, exports reload equal."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

from course_utils import gpt_keep, gpt_train  # noqa: E402
from course_utils.models.gpt import NNXGPT, GPTConfig, TorchGPT  # noqa: E402

CFG = GPTConfig(vocab_size=11, block_size=8, d_model=8, n_heads=2, n_layers=2, d_ff=16)


def _batches(n):
    rng = np.random.default_rng(2)
    return [tuple(rng.integers(0, 11, (2, 8)) for _ in "xy") for _ in range(n)]


def test_dcp_resume_is_bit_for_bit(tmp_path):
    torch.manual_seed(0)
    model = TorchGPT(CFG)
    opt = gpt_train.torch_adamw(model)
    batches = _batches(4)
    gpt_train.torch_run(model, opt, batches[:2])
    gpt_keep.dcp_save(tmp_path / "ck", model, opt)
    after = gpt_train.torch_run(model, opt, batches[2:])
    model2 = TorchGPT(CFG)
    opt2 = gpt_train.torch_adamw(model2)
    gpt_keep.dcp_load(tmp_path / "ck", model2, opt2)
    assert gpt_train.torch_run(model2, opt2, batches[2:]) == after
    assert all(
        torch.equal(a, b)
        for a, b in zip(model.parameters(), model2.parameters(), strict=True)
    )


def test_orbax_resume_is_bit_for_bit(tmp_path):
    from flax import nnx

    graphdef, params, rest = gpt_train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(0)))
    tx = gpt_train.jax_adamw()
    step = jax.jit(gpt_train.jax_step(graphdef, rest, tx))
    batches = [tuple(a.astype(np.int32) for a in b) for b in _batches(4)]
    params, opt_state, _ = gpt_train.jax_run(step, params, tx.init(params), batches[:2])
    gpt_keep.orbax_save(tmp_path / "ck", {"params": params, "opt": opt_state})
    p1, _, after = gpt_train.jax_run(step, params, opt_state, batches[2:])
    back = gpt_keep.orbax_load(
        tmp_path / "ck", gpt_keep.abstract_like({"params": params, "opt": opt_state})
    )
    p2, _, again = gpt_train.jax_run(step, back["params"], back["opt"], batches[2:])
    assert again == after
    assert all(
        (a == b).all()
        for a, b in zip(jax.tree.leaves(p1), jax.tree.leaves(p2), strict=True)
    )


def test_both_exports_reload_to_the_live_logits():
    import jax.numpy as jnp
    from flax import nnx

    graphdef, params, rest = nnx.split(NNXGPT(CFG, rngs=nnx.Rngs(0)), nnx.Param, ...)
    params, rest = nnx.to_pure_dict(params), nnx.to_pure_dict(rest)

    def logits(p, tokens):
        return nnx.merge(graphdef, p, rest)(tokens)

    exported = gpt_keep.jax_load(gpt_keep.jax_export(logits, params))
    tokens = np.arange(15).reshape(3, 5) % 11
    live = jax.jit(logits)(params, jnp.asarray(tokens, jnp.int32))
    np.testing.assert_array_equal(
        exported.call(params, jnp.asarray(tokens, jnp.int32)), live
    )

    model = TorchGPT(CFG)
    loaded = gpt_keep.torch_load(
        gpt_keep.torch_export(model, torch.zeros((2, 4), dtype=torch.long), 8)
    )
    t = torch.as_tensor(tokens)
    with torch.no_grad():
        assert torch.equal(loaded(t), model(t))
