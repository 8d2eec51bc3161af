"""course_utils.kmeans: seeded data, the float64 reference, the figure grid."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from course_utils import kmeans


def test_blobs_and_initial_centroids_are_seeded():
    X, truth = kmeans.make_blobs(300, 4, seed=1)
    assert X.shape == (300, 2) and X.dtype == np.float32 and truth.shape == (300,)
    assert set(np.unique(truth)) == {0, 1, 2, 3}
    np.testing.assert_array_equal(X, kmeans.make_blobs(300, 4, seed=1)[0])
    C0 = kmeans.initial_centroids(X, 4, seed=5)
    assert C0.shape == (4, 2) and C0.dtype == np.float32
    assert len({tuple(c) for c in C0}) == 4  # distinct points of X
    assert all((X == c).all(axis=1).any() for c in C0)
    np.testing.assert_array_equal(C0, kmeans.initial_centroids(X, 4, seed=5))


def test_reference_finds_well_separated_clusters():
    X, truth = kmeans.make_blobs(600, 3, seed=0, spread=0.4)
    C0 = kmeans.initial_centroids(X, 3, seed=0)
    res = kmeans.numpy_kmeans(X, C0, tol=1e-6, max_iter=100)
    assert res.n_iter < 100 and len(res.history) == res.n_iter
    assert res.history[-1]["shift"] <= 1e-6 < res.history[0]["shift"]
    # Each true cluster maps to exactly one found cluster (labels up to a permutation).
    pairs = {(int(t), int(label)) for t, label in zip(truth, res.labels, strict=True)}
    assert len(pairs) == 3
    # Converged centroids are the means of their points.
    for j in range(3):
        np.testing.assert_allclose(
            res.centroids[j], X[res.labels == j].mean(0), atol=1e-5
        )


def test_one_step_matches_a_hand_computed_example():
    X = np.array([[0.0, 0.0], [0.0, 2.0], [10.0, 0.0], [12.0, 0.0]])
    C = np.array([[1.0, 1.0], [9.0, 0.0], [100.0, 100.0]])
    new, labels = kmeans.numpy_step(X, C)
    np.testing.assert_array_equal(labels, [0, 0, 1, 1])
    np.testing.assert_allclose(
        new, [[0.0, 1.0], [11.0, 0.0], [100.0, 100.0]]
    )  # empty stays


def test_max_iter_stops_the_loop():
    X, _ = kmeans.make_blobs(200, 3, seed=2)
    res = kmeans.numpy_kmeans(X, kmeans.initial_centroids(X, 3), tol=0.0, max_iter=2)
    assert res.n_iter == 2


def test_bad_inputs_name_the_argument():
    X, _ = kmeans.make_blobs(50, 2)
    with pytest.raises(ValueError, match="k must be"):
        kmeans.initial_centroids(X, 0)
    with pytest.raises(ValueError, match="centroids must be"):
        kmeans.numpy_step(X, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="max_iter"):
        kmeans.numpy_kmeans(X, X[:2], max_iter=0)
    with pytest.raises(ValueError, match="X must be"):
        kmeans.numpy_step(np.zeros(5), X[:2])


def test_plot_steps_draws_three_rows():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, _ = kmeans.make_blobs(120, 3, seed=0)
    res = kmeans.numpy_kmeans(X, kmeans.initial_centroids(X, 3), tol=1e-4)
    axes = kmeans.plot_steps(X, res.history, tol=1e-4)
    assert axes.shape[0] == 3 and axes.shape[1] == len(
        {1, min(2, res.n_iter), res.n_iter}
    )
    assert axes[2, -1].get_title().endswith("stop")
    with pytest.raises(ValueError, match="iterations must be in"):
        kmeans.plot_steps(X, res.history, tol=1e-4, iterations=[0])
    plt.close("all")


def test_a_zero_shift_is_drawn_a_decade_below_the_rest():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, _ = kmeans.make_blobs(120, 3, seed=0)
    res = kmeans.numpy_kmeans(X, kmeans.initial_centroids(X, 3), tol=1e-4)
    history = [dict(h) for h in res.history]
    history[-1]["shift"] = 0.0  # converged exactly: the last move is 0
    axes = kmeans.plot_steps(X, history, tol=1e-4)
    smallest = min([h["shift"] for h in history if h["shift"] > 0] + [1e-4])
    low, _ = axes[2, -1].get_ylim()
    assert low > smallest / 100, (
        "a zero shift stretched the log axis far below the data"
    )
    plt.close("all")


def test_importing_the_module_imports_no_framework():
    code = (
        "import sys, course_utils.kmeans; "
        "print(any(m in sys.modules for m in ('jax', 'torch', 'matplotlib')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_record_steps_keeps_what_plot_steps_reads_for_any_step():
    X, _ = kmeans.make_blobs(60, 3, seed=1)
    C0 = kmeans.initial_centroids(X, 3, seed=1)
    ref = kmeans.numpy_kmeans(X, C0, tol=1e-4, max_iter=50)
    steps = kmeans.record_steps(
        kmeans.numpy_step, X, C0.astype(np.float64), tol=1e-4, max_iter=50
    )
    assert len(steps) == ref.n_iter and steps[-1]["shift"] <= 1e-4
    assert set(steps[0]) == {"centroids", "labels", "new_centroids", "shift"}
    np.testing.assert_array_equal(steps[-1]["labels"], ref.labels)
