"""course_utils.gpt.train: the two AdamWs agree, and each framework's GPT learns one repeated batch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

from course_utils import gpt  # noqa: E402
from course_utils.gpt.model import NNXGPT, GPTConfig, TorchGPT  # noqa: E402

CFG = GPTConfig(vocab_size=11, block_size=8, d_model=8, n_heads=2, n_layers=2, d_ff=16)


def test_the_two_adamws_take_the_same_steps():
    import optax

    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(5).astype(np.float32)
    grads = rng.standard_normal((3, 5)).astype(np.float32)
    tx = gpt.train.jax_adamw()
    p_jax, state = jax.numpy.asarray(p0), None
    state = tx.init(p_jax)
    w = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    opt = gpt.train.torch_adamw(torch.nn.ParameterList([w]))
    for g in grads:
        updates, state = tx.update(jax.numpy.asarray(g), state, p_jax)
        p_jax = optax.apply_updates(p_jax, updates)
        w.grad = torch.from_numpy(g.copy())
        opt.step()
    np.testing.assert_allclose(
        np.asarray(p_jax), w.detach().numpy(), rtol=1e-6, atol=1e-7
    )


def test_check_adam_step_allows_a_gap_only_where_the_gradient_is_near_zero():
    ref = {"w": np.zeros(4, np.float32)}
    grads = {"w": np.array([1.0, 0.5, 1e-12, 0.0], np.float32)}
    after = {"w": np.array([0.0, 5e-7, 3e-3, -3e-3], np.float32)}
    line = gpt.train.check_adam_step(after, ref, grads, atol=1e-6)
    assert "at 2 of 4 elements" in line and "other 2" in line
    after["w"][0] = 1e-3  # a gradient of 1 is far from zero: a real difference
    with pytest.raises(AssertionError, match="w differs"):
        gpt.train.check_adam_step(after, ref, grads, atol=1e-6)


def _batch():
    rng = np.random.default_rng(1)
    x = rng.integers(0, CFG.vocab_size, (4, CFG.block_size))
    return x, np.roll(x, -1, axis=1)


@pytest.mark.slow
def test_the_jax_step_learns_a_repeated_batch():
    from flax import nnx

    graphdef, params, rest = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(0)))
    tx = gpt.train.jax_adamw(lr=1e-2)
    step = jax.jit(gpt.train.jax_step(graphdef, rest, tx))
    x, y = (a.astype(np.int32) for a in _batch())
    _, _, losses = gpt.train.jax_run(step, params, tx.init(params), [(x, y)] * 8)
    assert len(losses) == 8 and all(isinstance(v, float) for v in losses)
    assert losses[-1] < losses[0]


def test_the_torch_step_learns_a_repeated_batch():
    torch.manual_seed(0)
    model = TorchGPT(CFG).eval()  # torch_step switches to training mode itself
    opt = gpt.train.torch_adamw(model, lr=1e-2)
    losses = gpt.train.torch_run(model, opt, [_batch()] * 8)
    assert len(losses) == 8 and losses[-1] < losses[0] and model.training
    assert opt.defaults["weight_decay"] == gpt.train.ADAMW["weight_decay"]
    assert opt.defaults["foreach"] is False
    assert gpt.train.torch_adamw(model, foreach=None).defaults["foreach"] is None


def test_check_recipe_compares_the_schedules_and_the_decayed_tensors():
    import optax
    from flax import nnx

    def recipe(model, no_decay_dims=2):
        groups = [
            {"params": [p for p in model.parameters() if p.dim() >= no_decay_dims]},
            {
                "params": [p for p in model.parameters() if p.dim() < no_decay_dims],
                "weight_decay": 0.0,
            },
        ]
        opt = torch.optim.AdamW(groups, lr=1.0, weight_decay=0.1)
        return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda t: min(1.0, t / 4))

    def mask(params):
        return jax.tree_util.tree_map_with_path(
            lambda path, _: any(
                k in jax.tree_util.keystr(path) for k in ("kernel", "embedding")
            ),
            params,
        )

    schedule = optax.linear_schedule(0.0, 1.0, 4)
    params = nnx.state(NNXGPT(CFG, rngs=nnx.Rngs(0)), nnx.Param)
    model = TorchGPT(CFG)
    line = gpt.train.check_recipe(recipe, model, schedule, mask, params, 6)
    assert "all 6 steps" in line and "the same 10 of 28 tensors" in line
    with pytest.raises(AssertionError, match="one framework only"):
        gpt.train.check_recipe(
            lambda m: recipe(m, no_decay_dims=1), model, schedule, mask, params, 6
        )
    with pytest.raises(AssertionError, match="learning rate"):
        gpt.train.check_recipe(
            recipe, model, optax.constant_schedule(1.0), mask, params, 6
        )
