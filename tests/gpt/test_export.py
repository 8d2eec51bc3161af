"""course_utils.gpt.export: both exported programs reload to the live model's logits."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

from course_utils import gpt  # noqa: E402
from course_utils.gpt.model import NNXGPT, TorchGPT  # noqa: E402
from tests.gpt.test_checkpoint import CFG  # noqa: E402


@pytest.mark.slow
def test_both_exports_reload_to_the_live_logits():
    import jax.numpy as jnp
    from flax import nnx

    graphdef, params, rest = nnx.split(NNXGPT(CFG, rngs=nnx.Rngs(0)), nnx.Param, ...)
    params, rest = nnx.to_pure_dict(params), nnx.to_pure_dict(rest)

    def logits(p, tokens):
        return nnx.merge(graphdef, p, rest)(tokens)

    exported = gpt.export.jax_load(gpt.export.jax_export(logits, params))
    tokens = np.arange(15).reshape(3, 5) % 11
    live = jax.jit(logits)(params, jnp.asarray(tokens, jnp.int32))
    np.testing.assert_array_equal(
        exported.call(params, jnp.asarray(tokens, jnp.int32)), live
    )
    blob = gpt.export.jax_export(logits, params, platform="tpu")  # for another platform
    assert gpt.export.jax_load(blob).platforms == ("tpu",)

    model = TorchGPT(CFG)
    loaded = gpt.export.torch_load(
        gpt.export.torch_export(model, torch.zeros((2, 4), dtype=torch.long), 8)
    )
    t = torch.as_tensor(tokens)
    with torch.no_grad():
        assert torch.equal(loaded(t), model(t))
