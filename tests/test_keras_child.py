"""The Keras child process: its command line, the native twins, waiting for a file."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from course_utils import keras_backends as kb
from course_utils import keras_child as kc


def test_import_is_light():
    code = (
        "import sys, course_utils.keras_child; "
        "bad = [m for m in ('keras', 'jax', 'torch') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_child_refuses_a_backend_not_in_the_list(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    with pytest.raises(SystemExit):
        kc.main(["--backend", "tensorflow", "--workdir", str(tmp_path)])


def test_child_refuses_wrong_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    with pytest.raises(SystemExit):
        kc.main(["--backend", "torch", "--workdir", str(tmp_path)])


def _weights(width=16, seed=0):
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal((kb.N_IN, width)).astype(np.float32) * 0.2,
        rng.standard_normal(width).astype(np.float32),
        rng.uniform(0.5, 1.5, width).astype(np.float32),
        rng.standard_normal(width).astype(np.float32),
        rng.standard_normal((width, kb.N_OUT)).astype(np.float32) * 0.2,
        rng.standard_normal(kb.N_OUT).astype(np.float32),
    ]


def test_native_models_match_numpy_oracle():
    pytest.importorskip("jax")
    torch = pytest.importorskip("torch")
    weights = _weights()
    x = kc.inputs(5, seed=3)
    expected = kb.numpy_reference(x, weights)
    got_jax = np.asarray(kc.jax_native(weights)(x))
    with torch.no_grad():
        got_torch = kc.torch_native(weights)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got_jax, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_torch, expected, rtol=1e-4, atol=1e-5)
    # The oracle uses Keras's epsilon: torch's default 1e-5 gives a different answer.
    assert kb.LN_EPS == 1e-3


def test_wait_for_file_times_out_with_a_clear_error(tmp_path):
    with pytest.raises(TimeoutError, match="waited 0.1 s for"):
        kc.wait_for_file(tmp_path / "never.json", 0.1, poll_s=0.01)


def test_wait_for_file_returns_once_the_file_exists(tmp_path):
    import threading

    target = tmp_path / "report.json"
    threading.Timer(0.1, target.write_text, args=("{}",)).start()
    kc.wait_for_file(target, 10.0, poll_s=0.01)
    assert target.is_file()


@pytest.mark.slow
def test_child_uses_full_float32_matmuls():
    """On a GPU the defaults round through TF32; the child's parity check needs float32."""
    import importlib.util

    if importlib.util.find_spec("keras") is None:  # importing it here needs a backend
        pytest.skip("keras is not installed")
    backend, probe = "jax", "import jax; print(jax.config.jax_default_matmul_precision)"
    pytest.importorskip(backend)
    code = (
        "import argparse, course_utils.keras_child as kc; "
        f"kc._import_keras(argparse.Namespace(backend={backend!r}, torch_threads=1)); "
        + probe
    )
    env = {**os.environ, "KERAS_BACKEND": backend}
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.stdout.strip().splitlines()[-1] == "highest"
