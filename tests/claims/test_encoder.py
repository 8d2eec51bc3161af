"""course_utils.claims.encoder: the shared encoder pair and its token batches."""

import numpy as np

from course_utils.claims import encoder, harness


def test_random_tokens_are_reproducible_ids_in_the_vocabulary():
    a, b = encoder.random_tokens(2, 5, seed=7), encoder.random_tokens(2, 5, seed=7)
    assert a.shape == (2, 5) and a.dtype == np.int32
    np.testing.assert_array_equal(a, b)
    assert 0 <= a.min() and a.max() < 1000
    assert not np.array_equal(a, encoder.random_tokens(2, 5, seed=8))


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
