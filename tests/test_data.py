import numpy as np
import pytest

from course_utils import data


def test_digits_split_is_seeded():
    a = data.load_digits(seed=0)
    b = data.load_digits(seed=0)
    c = data.load_digits(seed=1)
    assert a.X_train.shape[1:] == (1, 8, 8)
    assert a.X_train.dtype == np.float32 and a.y_train.dtype == np.int64
    assert 0.0 <= a.X_train.min() and a.X_train.max() <= 1.0
    assert len(a.X_train) + len(a.X_test) == 1797
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.y_test, c.y_test)


def test_limit_and_bad_arguments():
    s = data.load_digits(seed=0, limit=100)
    assert len(s.X_train) + len(s.X_test) == 100
    with pytest.raises(ValueError, match="test_fraction"):
        data.load_digits(test_fraction=1.5)


def test_nchw_to_nhwc_moves_channels_last():
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    y = data.nchw_to_nhwc(x)
    assert y.shape == (2, 4, 5, 3)
    assert y[1, 2, 3, 0] == x[1, 0, 2, 3] and y[0, 1, 4, 2] == x[0, 2, 1, 4]


def test_batches_same_order_for_same_seed():
    X = np.arange(20, dtype=np.float32)[:, None]
    y = np.arange(20)
    first = [yb.tolist() for _, yb in data.batches(X, y, 4, seed=3, epochs=2)]
    again = [yb.tolist() for _, yb in data.batches(X, y, 4, seed=3, epochs=2)]
    other = [yb.tolist() for _, yb in data.batches(X, y, 4, seed=4, epochs=2)]
    assert first == again and first != other
    assert len(first) == 10
    assert sorted(sum(first[:5], [])) == list(
        range(20)
    )  # one epoch covers every example once
    assert first[:5] != first[5:]  # epochs are shuffled differently


def test_batches_errors_and_drop_last():
    X, y = np.zeros((10, 1)), np.zeros(10)
    assert len(list(data.batches(X, y, 4, seed=0))) == 2
    assert len(list(data.batches(X, y, 4, seed=0, drop_last=False))) == 3
    with pytest.raises(ValueError, match="batch_size"):
        list(data.batches(X, y, 0, seed=0))
    with pytest.raises(ValueError, match="rows"):
        list(data.batches(X, y[:5], 2, seed=0))
