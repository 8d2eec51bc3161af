"""course_utils.claims.encoder: the shared encoder pair and its token batches."""

import numpy as np
import pytest

from course_utils.claims import encoder, harness, registry


def test_random_tokens_are_reproducible_ids_in_the_vocabulary():
    a, b = encoder.random_tokens(2, 5, seed=7), encoder.random_tokens(2, 5, seed=7)
    assert a.shape == (2, 5) and a.dtype == np.int32
    np.testing.assert_array_equal(a, b)
    assert 0 <= a.min() and a.max() < 1000
    assert not np.array_equal(a, encoder.random_tokens(2, 5, seed=8))


@pytest.mark.slow
def test_encoder_pair_is_built_once_and_both_halves_compute_the_same():
    import torch

    from course_utils.parity import assert_close

    ctx = harness.Ctx(True)
    tm, jm, sizes = encoder.encoder_setup(ctx)
    again = encoder.encoder_setup(ctx)
    assert again[0] is tm and again[1] is jm and sizes["seq"] == 16
    tokens = encoder.random_tokens(1, sizes["seq"])
    forward, state = encoder.jax_forward(ctx, jm)
    with torch.inference_mode():
        expected = tm(ctx.torch_put(tokens))
    assert_close(
        forward(state, ctx.jax_put(tokens)), expected, rtol=1e-4, atol=1e-5, name="nnx"
    )


def test_the_bert_proxy_has_the_shape_the_registry_states():
    sizes = encoder.SHAPES["bert-base"]
    assert sizes["vocab"] == 30522 and sizes["d_ff"] == 3072
    here = registry.get("first-call").here
    for part in encoder.describe("bert-base").split(", "):
        if "MLP" not in part:
            assert part in here, part


@pytest.mark.slow
def test_checked_pair_refuses_halves_that_compute_differently(monkeypatch):
    import torch

    ctx = harness.Ctx(True)
    tm, _, _ = encoder.encoder_setup(ctx)
    monkeypatch.setattr(encoder, "_CHECKED", set())
    head = tm.head.bias
    saved = head.detach().clone()
    try:
        with torch.no_grad():
            head += 1.0
        with pytest.raises(AssertionError, match="JAX against PyTorch"):
            encoder.checked_pair(ctx)
    finally:
        with torch.no_grad():
            head.copy_(saved)
    assert encoder.checked_pair(ctx)[0] is tm and len(encoder._CHECKED) == 1
