"""The child process of :mod:`course_utils.keras_backends`: one Keras backend, measured.

Run as ``python -m course_utils.keras_child --backend NAME --workdir DIR ...``
with ``KERAS_BACKEND=NAME`` set (Keras fixes its backend when it is imported).
The child builds the model (Dense -> GELU -> LayerNormalization -> Dense),
initialised from ``seed`` and saved, or loaded from another backend's weights;
runs it on a fixed input; writes the same model by hand in the backend's own
framework (:func:`jax_native`, :func:`torch_native`); times them all with
:func:`course_utils.timing.compare`; and writes its outputs, weights (``.npz``)
and a JSON report into ``workdir``: the per-round times of every variant
(``times``, paired round by round, for a verdict) and what the contention
monitor saw while they ran (``contention``), with the timing table. PyTorch's
threads follow the course's policy (:func:`course_utils.contention.set_threads`),
or ``--torch-threads`` to match a parent process.

Importing this module imports neither keras, jax nor torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from course_utils._files import write_atomic
from course_utils.keras_backends import (
    BACKENDS,
    LN_EPS,
    N_IN,
    N_OUT,
    report_file,
    weights_file,
)


def inputs(batch: int, seed: int):
    """The fixed input batch both backends run on."""
    import numpy as np

    return (
        np.random.default_rng(seed + 1)
        .standard_normal((batch, N_IN))
        .astype(np.float32)
    )


def jax_native(weights):
    """The same model written directly in JAX, jitted."""
    import jax
    import jax.numpy as jnp

    W1, b1, gamma, beta, W2, b2 = (jnp.asarray(w) for w in weights)

    @jax.jit
    def forward(x):
        h = jax.nn.gelu(x @ W1 + b1, approximate=False)
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        h = (h - mean) / jnp.sqrt(var + LN_EPS) * gamma + beta
        return h @ W2 + b2

    return forward


def torch_native(weights):
    """The same model as a torch.nn.Sequential (Linear stores W transposed)."""
    import torch

    W1, b1, gamma, beta, W2, b2 = (torch.from_numpy(w) for w in weights)
    model = torch.nn.Sequential(
        torch.nn.Linear(W1.shape[0], W1.shape[1]),
        torch.nn.GELU(),
        torch.nn.LayerNorm(W1.shape[1], eps=LN_EPS),
        torch.nn.Linear(W2.shape[0], W2.shape[1]),
    ).eval()
    with torch.no_grad():
        for param, value in zip(
            model.parameters(), (W1.T, b1, gamma, beta, W2.T, b2), strict=True
        ):
            param.copy_(value)
    return model


def wait_for_file(path: str | os.PathLike, wait_s: float, poll_s: float = 0.05) -> None:
    """Block until ``path`` exists; TimeoutError after ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while not Path(path).is_file():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {wait_s:g} s for {path}")
        time.sleep(poll_s)


def _strict_warnings() -> None:
    """The frameworks' and Keras's deprecation warnings become errors, but one."""
    import warnings

    from course_utils import strict

    strict.install()
    warnings.filterwarnings("error", category=DeprecationWarning, module=r"keras(\.|$)")
    # Keras's own Variable.__array__ lacks NumPy 2's ``copy`` argument, so NumPy warns
    # when Keras converts its variables (saving weights); no course code can avoid it.
    warnings.filterwarnings(
        "ignore", message=r"__array__ implementation doesn't accept a copy keyword",
        category=DeprecationWarning, module=r"keras(\.|$)",
    )  # fmt: skip


def _model(keras: Any, args: argparse.Namespace, workdir: Path) -> Any:
    """The Keras model: seeded and saved, or loaded from another backend's weights."""
    keras.utils.set_random_seed(args.seed)
    model = keras.Sequential(
        [
            keras.Input((N_IN,)),
            keras.layers.Dense(args.width, activation="gelu"),
            keras.layers.LayerNormalization(epsilon=LN_EPS),
            keras.layers.Dense(N_OUT),
        ]
    )
    if args.weights_from:
        model.load_weights(args.weights_from)
    else:
        model.save_weights(weights_file(workdir, args.backend))
    return model


def jax_variants(model: Any, weights: list, x_np: Any) -> tuple[dict, str, dict, Any]:
    """``(variants, jax version, facts, x)``: the native model and two Keras calls."""
    import jax
    import jax.numpy as jnp

    x = jnp.asarray(x_np)
    tv = [v.value for v in model.trainable_variables]
    ntv = [v.value for v in model.non_trainable_variables]
    stateless = jax.jit(lambda tv, ntv, x: model.stateless_call(tv, ntv, x)[0])
    native = jax_native(weights)
    variants = {
        "native (jax.jit)": lambda: native(x),
        "Keras, jitted stateless_call": lambda: stateless(tv, ntv, x),
        "Keras, eager model(x)": lambda: model(x),
    }
    return variants, jax.__version__, {}, x


def torch_variants(model: Any, weights: list, x_np: Any) -> tuple[dict, str, dict, Any]:
    """``(variants, torch version, facts, x)``: the native model and the Keras call."""
    import torch

    x = torch.from_numpy(x_np)
    native = torch_native(weights)

    def native_call():
        with torch.no_grad():
            return native(x)

    def keras_call():
        with torch.no_grad():
            return model(x)

    variants = {
        "native (torch.nn eager)": native_call,
        "Keras, eager model(x)": keras_call,
    }
    facts = {"model is a torch.nn.Module": isinstance(model, torch.nn.Module)}
    return variants, torch.__version__, facts, x


def _timings(comparison: Any) -> dict[str, Any]:
    """The timing table, every round's times (paired across variants) and the contention."""
    c = comparison.contention
    return {
        "timings": comparison.rows(),
        "times": {name: m.times for name, m in comparison.measurements.items()},
        "contention": c.to_dict() if c is not None else None,
        "conditions": comparison.conditions(),
        "warnings": comparison.warnings,
    }


def _import_keras(args: argparse.Namespace) -> Any:
    """Keras on the asked backend, PyTorch's threads set by the course's policy.

    Full float32 matmuls, as the course's parity checks use everywhere: on a recent
    NVIDIA GPU JAX's default is TF32, and two programs that round differently (Keras's
    and the native one) would then differ by about 1e-4.
    """
    _strict_warnings()
    if args.backend == "torch":
        import torch  # loaded first, so the thread policy can set it

        from course_utils import contention

        contention.set_threads(args.torch_threads)  # None: the policy's own count
        torch.set_float32_matmul_precision("highest")  # the model has no convolution
    else:
        import jax

        jax.config.update("jax_default_matmul_precision", "highest")

    import keras

    if keras.backend.backend() != args.backend:
        raise RuntimeError(
            f"asked for backend {args.backend!r} but Keras started with "
            f"{keras.backend.backend()!r}; set KERAS_BACKEND before importing keras"
        )
    return keras


def _child(args: argparse.Namespace) -> dict[str, Any]:
    """Build, run, save and time one backend's model; return the report."""
    keras = _import_keras(args)
    import numpy as np

    from course_utils import timing

    workdir = Path(args.workdir)
    imported_at = time.time()
    if args.ready_file:  # imports done: the other process may start its timed work
        write_atomic(Path(args.ready_file), f"{imported_at}\n")
    if args.wait_for:  # now wait until the other process allows this one to work
        wait_for_file(args.wait_for, args.wait_s)
    started_at = time.time()  # wall clock, comparable across the two processes
    model = _model(keras, args, workdir)
    weights = [np.asarray(w) for w in model.get_weights()]
    x_np = inputs(args.batch, args.seed)
    variants_of = jax_variants if args.backend == "jax" else torch_variants
    variants, framework_version, facts, x = variants_of(model, weights, x_np)
    native_name = next(iter(variants))

    y = model(x)
    facts["model(x) returns"] = f"{type(y).__module__}.{type(y).__qualname__}"
    outputs = np.asarray(keras.ops.convert_to_numpy(y))
    comparison = timing.compare(
        variants, baseline=native_name, target_s=args.target_s, rtol=1e-5, atol=1e-5
    )
    np.savez(
        workdir / f"{args.backend}.npz",
        x=x_np,
        outputs=outputs,
        **{f"weight_{i}": w for i, w in enumerate(weights)},
    )
    return {
        "backend": args.backend,
        "keras": keras.__version__,
        "framework": framework_version,
        "batch": args.batch,
        "width": args.width,
        "weights_loaded_from": str(args.weights_from) if args.weights_from else None,
        "arrays": str(workdir / f"{args.backend}.npz"),
        "native": native_name,
        "facts": facts,
        **_timings(comparison),
        "threads": timing.thread_settings(),
        "imported_at": imported_at,
        "started_at": started_at,
        "finished_at": time.time(),
    }


def main(argv: list[str] | None = None) -> int:
    """Run one backend as told on the command line; write ``<backend>.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=BACKENDS, required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--weights-from", default=None)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--target-s", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--torch-threads", type=int, default=None)
    parser.add_argument(
        "--wait-for", default=None, help="a file to wait for after importing"
    )
    parser.add_argument(
        "--ready-file", default=None, help="a file to write once the imports are done"
    )
    parser.add_argument("--wait-s", type=float, default=300.0)
    args = parser.parse_args(argv)
    if os.environ.get("KERAS_BACKEND") != args.backend:
        parser.error(
            f"set KERAS_BACKEND={args.backend} in the environment (Keras reads it at import)"
        )
    result = _child(args)
    report = report_file(args.workdir, args.backend)
    # appears whole: another process may be waiting for it
    write_atomic(report, json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
