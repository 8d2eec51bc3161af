"""course_utils.gpt.data: the shipped corpus, the tokenizer, one batch order in both pipelines."""

import numpy as np
import pytest

from course_utils import gpt


def test_corpus_and_tokenizer_round_trip():
    text = gpt.data.load_corpus()
    assert len(text) > 400_000
    tok = gpt.data.CharTokenizer.from_text(text)
    assert tok.vocab_size == len(set(text))
    sample = text[1000:1500]
    assert tok.decode(tok.encode(sample)) == sample
    with pytest.raises(ValueError, match="not in the vocabulary"):
        gpt.data.CharTokenizer("ab").encode("abc")


def test_split_and_windows():
    ids = np.arange(100)
    train, val = gpt.data.split_ids(ids, 0.2)
    assert (len(train), len(val)) == (80, 20) and val[0] == 80
    x, y = gpt.data.windows(ids, np.array([[3, 10]]), 4)
    assert x.shape == (1, 2, 4)
    np.testing.assert_array_equal(y, x + 1)  # targets: the next token
    with pytest.raises(ValueError, match="too few"):
        gpt.data.batch_order(4, 4, 2, 2, seed=0)


def test_both_pipelines_yield_the_same_batches():
    pytest.importorskip("torch")
    ids = np.random.default_rng(0).integers(0, 50, 500)
    order = gpt.data.batch_order(len(ids), 8, 4, 5, seed=3)
    assert order.shape == (5, 4)
    np.testing.assert_array_equal(
        order, gpt.data.batch_order(len(ids), 8, 4, 5, seed=3)
    )
    pairs = list(
        zip(
            gpt.data.torch_loader(ids, order, 8),
            gpt.data.numpy_batches(ids, order, 8),
            strict=True,
        )
    )
    assert len(pairs) == 5
    for (xt, yt), (xn, yn) in pairs:
        np.testing.assert_array_equal(xt.numpy(), xn)
        np.testing.assert_array_equal(yt.numpy(), yn)
