"""course_utils.gpt.sample: with and without the KV cache, both frameworks, one text."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils import gpt  # noqa: E402
from tests.gpt.test_model import CFG  # noqa: E402


@pytest.fixture(scope="module")
def pair():
    from course_utils.gpt.convert import make_gpt_pair

    return make_gpt_pair(CFG, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_cache_no_cache_and_both_frameworks_agree(pair, temperature):
    tm, jm = pair
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    kw = {"temperature": temperature, "seed": 7}
    ref = gpt.sample.torch_generate(tm, prompt, 5, **kw)
    assert ref.shape == (2, 8)
    np.testing.assert_array_equal(ref[:, :3], prompt)
    for out in (
        gpt.sample.torch_generate(tm, prompt, 5, use_cache=False, **kw),
        gpt.sample.nnx_generate(jm, prompt, 5, **kw),
        gpt.sample.nnx_generate(jm, prompt, 5, use_cache=False, **kw),
    ):
        np.testing.assert_array_equal(out, ref)


def test_sliding_context_and_the_cache_limit(pair):
    tm, jm = pair
    prompt = np.array([[1, 2, 3, 4, 5, 6]])
    long_t = gpt.sample.torch_generate(tm, prompt, 8, use_cache=False, seed=1)
    long_j = gpt.sample.nnx_generate(jm, prompt, 8, use_cache=False, seed=1)
    np.testing.assert_array_equal(long_t, long_j)
    with pytest.raises(ValueError, match="exceed block_size=8"):
        gpt.sample.torch_generate(tm, prompt, 8)
    assert gpt.sample.uniforms(3, 2, 0).dtype == np.float32


def test_generate_fn_depends_only_on_the_logits_and_the_seed(pair):
    import torch

    table = np.random.default_rng(0).standard_normal((11, 11)).astype(np.float32)

    def logits(tokens):  # a bigram model: the next token's logits from the current one
        return table[tokens]

    kw = {"temperature": 0.7, "seed": 3}
    a = gpt.sample.generate_fn(logits, np.zeros((2, 1)), 12, 8, **kw)
    b = gpt.sample.generate_fn(
        lambda t: torch.as_tensor(table)[torch.as_tensor(t).long()],
        np.zeros((2, 1)),
        12,
        8,
        **kw,
    )
    c = gpt.sample.generate_fn(logits, np.zeros((2, 1)), 12, 8, temperature=0.7, seed=4)
    assert a.shape == (2, 13) and (a == b).all() and not (a == c).all()
    greedy = gpt.sample.generate_fn(logits, np.zeros((1, 1)), 3, 8, temperature=0.0)
    assert greedy[0, 1] == table[0].argmax()
    with pytest.raises(ValueError, match="at least one token"):
        gpt.sample.generate_fn(logits, np.zeros((1, 0)), 1, 8)


def test_generate_fn_draws_what_the_model_samplers_draw(pair):
    import torch

    tm, _ = pair
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    with torch.no_grad():
        tm.eval()
        got = gpt.sample.generate_fn(
            lambda t: tm(torch.as_tensor(t).long()),
            prompt,
            5,
            CFG.block_size,
            temperature=1.5,
            seed=7,
        )
    ref = gpt.sample.torch_generate(
        tm, prompt, 5, temperature=1.5, seed=7, use_cache=False
    )
    np.testing.assert_array_equal(got, ref)


def test_teacher_forced_replays_a_sample_and_measures_near_ties(pair):
    table = np.random.default_rng(1).standard_normal((11, 11)).astype(np.float32)

    def logits(tokens):
        return table[tokens]

    kw = {"temperature": 0.9, "seed": 5}
    sample = gpt.sample.generate_fn(logits, np.array([[1], [2]]), 9, 4, **kw)
    picks, margins = gpt.sample.teacher_forced(logits, sample, 1, 4, **kw)
    assert picks.shape == margins.shape == (2, 9)
    np.testing.assert_array_equal(picks, sample[:, 1:])  # its own sample: every pick
    assert (margins > 0).all() and (margins <= 0.5).all()
    # the margin is |u - nearest CDF edge|: a logit shift that moves the edge past u flips the pick
    u = gpt.sample.uniforms(9, 2, 5)
    z = table[sample[0, 0]] / 0.9
    cdf = np.cumsum(np.exp(z - z.max()) / np.exp(z - z.max()).sum())
    k = sample[0, 1]
    edges = [cdf[k - 1] if k else 0.0, cdf[k]]
    assert np.isclose(margins[0, 0], min(abs(u[0, 0] - e) for e in edges), atol=1e-6)
    other = gpt.sample.teacher_forced(
        lambda t: np.roll(table, 1, axis=1)[t], sample, 1, 4, **kw
    )[0]
    assert (other != sample[:, 1:]).any()  # another model: other picks
    greedy, gap = gpt.sample.teacher_forced(logits, sample, 1, 4, temperature=0.0)
    top2 = np.sort(table[sample[:, :-1]], -1)[..., -2:]
    np.testing.assert_array_equal(greedy, table[sample[:, :-1]].argmax(-1))
    np.testing.assert_allclose(gap, top2[..., 1] - top2[..., 0])
    with pytest.raises(ValueError, match="at least one token"):
        gpt.sample.teacher_forced(logits, sample, 0, 4)


@pytest.mark.slow
@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_the_compiled_decode_loop_draws_the_per_token_samplers_text(
    use_cache, temperature
):
    _, model = gpt.convert.make_gpt_pair(CFG, seed=3)
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    steps = CFG.block_size - prompt.shape[1]
    want = gpt.sample.nnx_generate(
        model, prompt, steps, temperature=temperature, seed=2
    )
    got = gpt.sample.nnx_generate_compiled(
        model, prompt, steps, temperature=temperature, seed=2, use_cache=use_cache
    )
    np.testing.assert_array_equal(got, want)


def test_the_compiled_decode_loop_refuses_more_than_block_size():
    _, model = gpt.convert.make_gpt_pair(CFG, seed=3)
    with pytest.raises(ValueError, match="block_size"):
        gpt.sample.nnx_generate_compiled(model, np.ones((1, 2)), CFG.block_size)
