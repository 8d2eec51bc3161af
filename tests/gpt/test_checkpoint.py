"""course_utils.gpt.checkpoint: DCP and Orbax resumes are bit for bit."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

from course_utils import gpt  # noqa: E402
from course_utils.gpt.model import NNXGPT, GPTConfig, TorchGPT  # noqa: E402

CFG = GPTConfig(vocab_size=11, block_size=8, d_model=8, n_heads=2, n_layers=2, d_ff=16)


def _batches(n):
    rng = np.random.default_rng(2)
    return [tuple(rng.integers(0, 11, (2, 8)) for _ in "xy") for _ in range(n)]


def test_dcp_resume_is_bit_for_bit(tmp_path):
    torch.manual_seed(0)
    model = TorchGPT(CFG)
    opt = gpt.train.torch_adamw(model)
    batches = _batches(4)
    gpt.train.torch_run(model, opt, batches[:2])
    gpt.checkpoint.dcp_save(tmp_path / "ck", model, opt, step=7)
    after = gpt.train.torch_run(model, opt, batches[2:])
    model2 = TorchGPT(CFG)
    opt2 = gpt.train.torch_adamw(model2)
    assert gpt.checkpoint.dcp_load(tmp_path / "ck", model2, opt2) == 7
    assert gpt.train.torch_run(model2, opt2, batches[2:]) == after
    assert all(
        torch.equal(a, b)
        for a, b in zip(model.parameters(), model2.parameters(), strict=True)
    )


@pytest.mark.slow
def test_orbax_resume_is_bit_for_bit(tmp_path):
    from flax import nnx

    graphdef, params, rest = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(0)))
    tx = gpt.train.jax_adamw()
    step = jax.jit(gpt.train.jax_step(graphdef, rest, tx))
    batches = [tuple(a.astype(np.int32) for a in b) for b in _batches(4)]
    params, opt_state, _ = gpt.train.jax_run(step, params, tx.init(params), batches[:2])
    gpt.checkpoint.orbax_save(tmp_path / "ck", {"params": params, "opt": opt_state})
    p1, _, after = gpt.train.jax_run(step, params, opt_state, batches[2:])
    back = gpt.checkpoint.orbax_load(
        tmp_path / "ck",
        gpt.checkpoint.abstract_like({"params": params, "opt": opt_state}),
    )
    p2, _, again = gpt.train.jax_run(step, back["params"], back["opt"], batches[2:])
    assert again == after
    assert all(
        (a == b).all()
        for a, b in zip(jax.tree.leaves(p1), jax.tree.leaves(p2), strict=True)
    )
