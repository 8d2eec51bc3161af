"""The Keras 3 backend runner: argument checks, the oracle, and a real run on both backends."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from course_utils import keras_backends as kb


def test_import_is_light():
    code = (
        "import sys, course_utils.keras_backends; "
        "bad = [m for m in ('keras', 'jax', 'torch') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"backend": "tensorflow"}, ValueError, "backend must be one of"),
        ({"backend": "jax", "batch": 0}, ValueError, "batch must be a positive int"),
        ({"backend": "jax", "width": 2.5}, ValueError, "width must be a positive int"),
        (
            {"backend": "torch", "batch": True},
            ValueError,
            "batch must be a positive int",
        ),
    ],
)
def test_run_rejects_bad_arguments(tmp_path, kwargs, err, match):
    backend = kwargs.pop("backend")
    with pytest.raises(err, match=match):
        kb.run(backend, tmp_path, **kwargs)


@pytest.mark.slow
@pytest.mark.skipif(not kb.available(), reason="keras is not installed")
def test_run_both_reports_a_child_that_failed_while_the_other_waited(tmp_path):
    # An impossible --torch-threads value makes the PyTorch child fail before it is
    # ready; the JAX child, waiting for it, must not hold the run until the timeout.
    with pytest.raises(RuntimeError, match="Keras torch subprocess failed"):
        kb.run_both(tmp_path, batch=2, width=4, torch_threads=0, timeout_s=60)


def test_ratios_pair_each_round_with_the_native_one():
    report = {
        "native": "native",
        "times": {"native": [1.0, 2.0, 3.0], "Keras": [2.0, 2.0, 1.5]},
    }
    assert kb.ratios(report, "Keras") == [0.5, 1.0, 2.0]
    assert kb.ratios(report, "native") == [1.0, 1.0, 1.0]
    with pytest.raises(KeyError, match="no variant 'other'"):
        kb.ratios(report, "other")


@pytest.mark.skipif(not kb.available(), reason="keras is not installed")
def test_run_rejects_missing_weights_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="weights_from"):
        kb.run("torch", tmp_path, weights_from=tmp_path / "nope.weights.h5")


@pytest.mark.slow
@pytest.mark.skipif(not kb.available(), reason="keras is not installed")
def test_both_backends_agree_with_shared_weights(tmp_path):
    reports = kb.run_both(tmp_path, batch=8, width=16, target_s=0.02, torch_threads=1)
    rj, rt = reports["jax"], reports["torch"]
    assert rt["weights_loaded_from"] == str(kb.weights_file(tmp_path, "jax"))
    assert rj["weights_loaded_from"] is None
    aj, at = kb.load_arrays(rj), kb.load_arrays(rt)
    assert len(aj["weights"]) == 6
    for wj, wt in zip(aj["weights"], at["weights"], strict=True):
        np.testing.assert_array_equal(wj, wt)
    expected = kb.numpy_reference(aj["x"], aj["weights"])
    np.testing.assert_allclose(aj["outputs"], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(at["outputs"], expected, rtol=1e-4, atol=1e-5)
    assert rt["facts"]["model is a torch.nn.Module"] is True
    assert rt["facts"]["model(x) returns"].startswith("torch")
    assert rj["facts"]["model(x) returns"].startswith("jax")
    for report in (rj, rt):
        rows = {r["variant"]: r for r in report["timings"]}
        assert rows[report["native"]]["ratio"] == pytest.approx(1.0)
        assert all(r["median_s"] > 0 for r in rows.values())
    assert rt["threads"]["torch_threads"] == 1
    for report in (rj, rt):  # what a verdict needs: paired rounds and the contention
        times = report["times"]
        assert set(times) == {r["variant"] for r in report["timings"]}
        assert len({len(t) for t in times.values()}) == 1
        ratios = kb.ratios(report, "Keras, eager model(x)")
        assert len(ratios) == len(times[report["native"]]) >= 8
        assert {"cores", "reason", "wait_share"} <= set(report["contention"])
    assert rt["contention"]["threads"]["torch"] == 1  # the parent's count, as passed
    # The PyTorch child timed nothing before the JAX child had finished, and the
    # JAX child worked only once the PyTorch child had finished importing.
    assert rt["started_at"] >= rj["finished_at"]
    assert rj["started_at"] >= rt["imported_at"]
