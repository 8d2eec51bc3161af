"""course_utils.models.gpt_sampling: with and without the KV cache, both frameworks, one text."""

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("flax")

from course_utils.models import gpt_sampling  # noqa: E402
from tests.models.test_gpt import CFG  # noqa: E402


@pytest.fixture(scope="module")
def pair():
    from course_utils.convert.gpt import make_gpt_pair

    return make_gpt_pair(CFG, seed=3)


@pytest.mark.parametrize("temperature", [0.0, 1.5])
def test_cache_no_cache_and_both_frameworks_agree(pair, temperature):
    tm, jm = pair
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    kw = {"temperature": temperature, "seed": 7}
    ref = gpt_sampling.generate_torch(tm, prompt, 5, **kw)
    assert ref.shape == (2, 8)
    np.testing.assert_array_equal(ref[:, :3], prompt)
    for out in (
        gpt_sampling.generate_torch(tm, prompt, 5, use_cache=False, **kw),
        gpt_sampling.generate_nnx(jm, prompt, 5, **kw),
        gpt_sampling.generate_nnx(jm, prompt, 5, use_cache=False, **kw),
    ):
        np.testing.assert_array_equal(out, ref)


def test_sliding_context_and_the_cache_limit(pair):
    tm, jm = pair
    prompt = np.array([[1, 2, 3, 4, 5, 6]])
    long_t = gpt_sampling.generate_torch(tm, prompt, 8, use_cache=False, seed=1)
    long_j = gpt_sampling.generate_nnx(jm, prompt, 8, use_cache=False, seed=1)
    np.testing.assert_array_equal(long_t, long_j)
    with pytest.raises(ValueError, match="exceed block_size=8"):
        gpt_sampling.generate_torch(tm, prompt, 8)
    assert gpt_sampling.uniforms(3, 2, 0).dtype == np.float32
