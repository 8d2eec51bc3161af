"""One small Keras 3 model under the JAX and the PyTorch backend, each in its own process.

Keras 3 fixes its backend when it is imported (``KERAS_BACKEND``), so each
backend runs in a fresh interpreter: :func:`run` starts
``python -m course_utils.keras_child --backend NAME ...`` with the
variable set, and reads back the JSON report the child writes;
:func:`run_both` runs JAX then PyTorch, overlapping only their start-up. The
child (:mod:`course_utils.keras_child`)

1. builds the model (Dense -> GELU -> LayerNormalization -> Dense), either
   initialised from ``seed`` and saved as ``<backend>.weights.h5``, or loaded
   from another backend's weights file;
2. runs it on a fixed input and saves the outputs and the weights (``.npz``);
3. writes the same model by hand in the backend's own framework, and times
   both with :func:`course_utils.timing.compare`, which first checks that
   they agree; the report keeps every round's times and the contention
   record, so :func:`ratios` gives the paired ratios a verdict is judged from.

Keras is optional: :func:`available` says whether it is installed without
importing it. Importing this module imports neither keras, jax nor torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from course_utils.env import child_env

BACKENDS = ("jax", "torch")
N_IN, N_OUT = 64, 10  # digits: 8x8 pixels in, 10 classes out
LN_EPS = 1e-3  # Keras's LayerNormalization default (torch's LayerNorm uses 1e-5)


def available() -> bool:
    """Whether Keras 3 is installed (checked without importing it)."""
    return importlib.util.find_spec("keras") is not None


def weights_file(workdir: str | os.PathLike, backend: str) -> Path:
    return Path(workdir) / f"{backend}.weights.h5"


def report_file(workdir: str | os.PathLike, backend: str) -> Path:
    return Path(workdir) / f"{backend}.json"


def _check_sizes(batch: int, width: int) -> None:
    for name, value in (("batch", batch), ("width", width)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


def _start(
    backend: str,
    workdir: Path,
    *,
    weights_from: str | os.PathLike | None,
    wait_for: Path | None,
    batch: int,
    width: int,
    target_s: float,
    seed: int,
    torch_threads: int | None,
    wait_s: float,
    ready_file: Path | None = None,
) -> subprocess.Popen:
    """Start one child; it writes ``<backend>.json`` in ``workdir`` when done.

    The child writes ``ready_file`` (if given) once its imports are done, then
    waits for ``wait_for`` (if given) before it does any work.
    """
    report_file(workdir, backend).unlink(missing_ok=True)
    cmd = [
        sys.executable, "-m", "course_utils.keras_child", "--backend", backend,
        "--workdir", str(workdir), "--batch", str(batch), "--width", str(width),
        "--target-s", str(target_s), "--seed", str(seed), "--wait-s", str(wait_s),
    ]  # fmt: skip
    if weights_from is not None:
        cmd += ["--weights-from", str(weights_from)]
    if wait_for is not None:
        cmd += ["--wait-for", str(wait_for)]
    if ready_file is not None:
        ready_file.unlink(missing_ok=True)
        cmd += ["--ready-file", str(ready_file)]
    if torch_threads is not None:
        cmd += ["--torch-threads", str(int(torch_threads))]
    # KERAS_HOME keeps Keras's config file out of the user's home directory.
    # env.child_env: the CPU for the child's JAX where this process holds a TPU.
    env = {
        **child_env(),
        "KERAS_BACKEND": backend,
        "KERAS_HOME": str(workdir / ".keras"),
    }
    return subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(
    backend: str, workdir: Path, proc: subprocess.Popen, timeout_s: float
) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(
            f"the Keras {backend} subprocess ran past {timeout_s:g} s"
        ) from None
    report = report_file(workdir, backend)
    if proc.returncode != 0 or not report.is_file():
        raise RuntimeError(
            f"the Keras {backend} subprocess failed (exit {proc.returncode}):\n"
            + (err or out)[-3000:]
        )
    return json.loads(report.read_text())


def _prepare(workdir: str | os.PathLike, batch: int, width: int) -> Path:
    _check_sizes(batch, width)
    if not available():
        raise RuntimeError("Keras 3 is not installed: pip install keras")
    path = Path(workdir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def run(
    backend: str,
    workdir: str | os.PathLike,
    *,
    weights_from: str | os.PathLike | None = None,
    batch: int = 64,
    width: int = 128,
    target_s: float = 0.25,
    seed: int = 0,
    torch_threads: int | None = None,
    timeout_s: float = 300.0,
) -> dict[str, Any]:
    """Run the model under ``backend`` in a subprocess and return its JSON report.

    ``workdir`` receives the weights, outputs and report; ``weights_from`` is
    a ``.weights.h5`` file saved by another backend (None: initialise from
    ``seed`` and save). ``torch_threads`` sets PyTorch's intra-op threads in
    the child (pass the caller's ``torch.get_num_threads()`` to match it;
    None: the course's thread policy, as ``env.setup()`` applies it).
    Raises RuntimeError with the child's error output if it fails.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    path = _prepare(workdir, batch, width)
    if weights_from is not None and not Path(weights_from).is_file():
        raise FileNotFoundError(f"weights_from: no file at {weights_from}")
    proc = _start(
        backend, path, weights_from=weights_from, wait_for=None, batch=batch, width=width,
        target_s=target_s, seed=seed, torch_threads=torch_threads, wait_s=0.0,
    )  # fmt: skip
    return _finish(backend, path, proc, timeout_s)


def _until_ready(proc: subprocess.Popen, ready: Path, timeout_s: float) -> None:
    """Wait until ``ready`` exists, ``proc`` has ended, or ``timeout_s`` has passed."""
    deadline = time.monotonic() + timeout_s
    while not ready.is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def run_both(
    workdir: str | os.PathLike,
    *,
    batch: int = 64,
    width: int = 128,
    target_s: float = 0.25,
    seed: int = 0,
    torch_threads: int | None = None,
    timeout_s: float = 300.0,
) -> dict[str, dict[str, Any]]:
    """JAX first (initialises and saves the weights), then PyTorch (loads them).

    Both processes start at once and import their libraries side by side
    (the slow part of starting). The JAX one works only once the PyTorch one
    has finished importing (``torch.ready``), and the PyTorch one only once
    the JAX one has finished (its report exists), so no timed section overlaps
    the other process's work. Returns ``{"jax": report, "torch": report}``.
    """
    path = _prepare(workdir, batch, width)
    common = dict(
        batch=batch, width=width, target_s=target_s, seed=seed,
        torch_threads=torch_threads, wait_s=timeout_s,
    )  # fmt: skip
    ready = path / "torch.ready"
    ready.unlink(missing_ok=True)
    procs = {"jax": _start("jax", path, weights_from=None, wait_for=ready, **common)}
    procs["torch"] = _start(
        "torch", path, weights_from=weights_file(path, "jax"),
        wait_for=report_file(path, "jax"), ready_file=ready, **common,
    )  # fmt: skip
    try:
        _until_ready(procs["torch"], ready, timeout_s)
        # A PyTorch child that ended before it was ready failed: report its error first.
        order = ("torch", "jax") if procs["torch"].poll() is not None else BACKENDS
        reports = {name: _finish(name, path, procs[name], timeout_s) for name in order}
        return {name: reports[name] for name in BACKENDS}
    finally:
        for proc in procs.values():
            if (
                proc.poll() is None
            ):  # the JAX child failed: do not leave the other waiting
                proc.kill()
                proc.communicate()


def numpy_reference(x: Any, weights: list[Any]) -> Any:
    """The model in float64 NumPy: the oracle both backends are checked against."""
    import math

    import numpy as np

    W1, b1, gamma, beta, W2, b2 = (np.asarray(w, dtype=np.float64) for w in weights)
    h = np.asarray(x, dtype=np.float64) @ W1 + b1
    h = 0.5 * h * (1.0 + np.vectorize(math.erf)(h / math.sqrt(2.0)))  # exact GELU
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + LN_EPS)
    return (h * gamma + beta) @ W2 + b2


def ratios(report: dict[str, Any], variant: str) -> list[float]:
    """Per-round time ratios native / ``variant`` from a child's report (above 1: ``variant`` faster).

    Round i of every variant ran back to back in the child, so each ratio pairs
    two timings taken under the same conditions; ``claims.judge`` takes them.
    """
    times = report["times"]
    if variant not in times:
        raise KeyError(f"ratios: no variant {variant!r}; variants: {list(times)}")
    native = times[report["native"]]
    return [n / v for n, v in zip(native, times[variant], strict=True)]


def load_arrays(report: dict[str, Any]) -> dict[str, Any]:
    """The input, outputs and weights (in Keras's order) a child saved."""
    import numpy as np

    with np.load(report["arrays"]) as f:
        n = sum(1 for k in f.files if k.startswith("weight_"))
        return {
            "x": f["x"],
            "outputs": f["outputs"],
            "weights": [f[f"weight_{i}"] for i in range(n)],
        }
