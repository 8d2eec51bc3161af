"""The checks behind the migration checklists, one function each, on a pair of models.

A PyTorch model and a Flax NNX model meant to compute the same function: run
each (:func:`~course_utils.forwards.torch_forward`,
:func:`~course_utils.forwards.jit_forward`), count their parameters, compare their outputs, time them on this machine, see what each compiler
captures (:func:`operator_coverage`), what changing input shapes cost
(:func:`dynamic_shapes`), and which ecosystem packages are installed
(:func:`dependencies_status`). Most return ``(status, detail)`` for one line of
a :class:`course_utils.checklist.ChecklistReport`; :mod:`course_utils.checklist`
puts them in order.

Importing this module imports neither framework.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from course_utils.forwards import (
    jit_forward,
    torch_forward,  # noqa: F401 (checklist takes it from here)
)


def torch_n_params(model: Any) -> int:
    """The number of parameters of a torch module."""
    return sum(p.numel() for p in model.parameters())


def nnx_n_params(model: Any) -> int:
    """The number of parameters (``nnx.Param`` entries) of an NNX module."""
    import jax
    from flax import nnx

    return sum(
        int(np.prod(x.shape)) for x in jax.tree.leaves(nnx.state(model, nnx.Param))
    )


def compare_outputs(a: Any, b: Any, rtol: float, atol: float) -> tuple[bool, str]:
    """``(equal, evidence)``: the largest difference, or the first line that differs."""
    from course_utils.parity import assert_close, max_abs_diff

    try:
        assert_close(a, b, rtol=rtol, atol=atol, name="output")
    except AssertionError as err:
        return False, str(err).split("\n")[1].strip() if "\n" in str(err) else str(err)
    return True, f"max |diff| {max_abs_diff(a, b):.2g} (rtol {rtol:g}, atol {atol:g})"


def operator_coverage(
    torch_model: Any, nnx_model: Any, example: np.ndarray, to_jax
) -> tuple[str, str]:
    """Does ``torch.compile`` capture the model in one graph, and can ``jax.jit`` trace it."""
    import jax
    import torch
    import torch._dynamo

    with torch.inference_mode():
        explained = torch._dynamo.explain(torch_model)(
            torch.from_numpy(np.asarray(example))
        )
    torch._dynamo.reset()
    parts = [
        f"torch.compile: {explained.graph_count} graph(s), {explained.graph_break_count} break(s)"
    ]
    status = "pass"
    if explained.graph_break_count:
        status = "warn"
        reason = str(explained.break_reasons[0].reason).split("\n")[0][:80]
        parts.append(f"first break: {reason}")
    forward, state = jit_forward(nnx_model)
    try:
        jaxpr = forward.trace(state, jax.numpy.asarray(to_jax(example))).jaxpr
    except (
        Exception
    ) as err:  # a layer JAX cannot trace is exactly what this check looks for
        return "fail", "; ".join(
            parts + [f"jax.jit cannot trace it: {type(err).__name__}: {err}"[:160]]
        )
    prims = sorted({str(e.primitive) for e in jaxpr.jaxpr.eqns})
    parts.append(f"jax.jit: traced, {len(prims)} distinct primitives at the top level")
    return status, "; ".join(parts)


def dynamic_shapes(
    nnx_model: Any, torch_model: Any, inputs: Sequence[np.ndarray], to_jax
) -> tuple[str, str]:
    """How many compilations inputs of different shapes cause in each framework."""
    import torch
    import torch._dynamo

    from course_utils.timing import _CompileCounter

    forward, state = jit_forward(nnx_model)
    compiles, firsts = 0, []
    for x in inputs:
        xj = jax_asarray(to_jax(x))
        before = _CompileCounter.snapshot()
        start = time.perf_counter()
        forward(state, xj).block_until_ready()
        firsts.append(time.perf_counter() - start)
        compiles += _CompileCounter.delta(before)
    graphs = 0

    def counting_backend(gm, example_inputs):
        nonlocal graphs
        graphs += 1
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(torch_model, backend=counting_backend)
    with torch.inference_mode():
        for x in inputs:
            compiled(torch.from_numpy(np.asarray(x)))
    torch._dynamo.reset()
    shapes = len({np.asarray(x).shape for x in inputs})
    detail = (
        f"{shapes} input shapes: jax.jit compiled {compiles} time(s) "
        f"(first calls {1e3 * min(firsts):.0f}–{1e3 * max(firsts):.0f} ms); "
        f"torch.compile captured {graphs} graph(s) (it marks a changing size dynamic)"
    )
    status = "warn" if compiles >= shapes > 1 else "pass"
    if status == "warn":
        detail += "; pad or bucket the shapes to bound JAX's compilations"
    return status, detail


def jax_asarray(x: Any) -> Any:
    """``jnp.asarray(x)``, importing jax only when called."""
    import jax.numpy as jnp

    return jnp.asarray(x)


def dependencies_status(dependencies: Mapping[str, Sequence[str]]) -> tuple[str, str]:
    """``(status, detail)``: which of ``{side: [module, ...]}`` are importable here, with versions."""
    parts, missing = [], []
    distributions = importlib.metadata.packages_distributions()  # slow: read it once
    for side, names in dependencies.items():
        found = []
        for name in names:
            top = name.split(".")[0]
            try:
                spec = importlib.util.find_spec(name)
            except ModuleNotFoundError:
                spec = None
            if spec is None:
                missing.append(name)
                found.append(f"{name} missing")
                continue
            dists = distributions.get(top, [top])
            try:
                version = importlib.metadata.version(dists[0])
            except importlib.metadata.PackageNotFoundError:
                version = "installed"
            found.append(f"{name} {version}")
        parts.append(f"{side}: " + ", ".join(found))
    return ("warn" if missing else "pass"), "; ".join(parts)


def benchmark(
    run_torch: Callable[[], Any],
    run_jax: Callable[[], Any],
    *,
    rtol: float,
    atol: float,
    target_s: float | None,
) -> tuple[str, str]:
    """PyTorch eager against ``jax.jit`` through :func:`course_utils.timing.compare`.

    Which is faster is said by the course's one rule (``claims.faster``); a noisy
    or contended run says so and the step warns. The pairing changes two things
    at once (framework and compiling), and the detail says that too.
    """
    from course_utils import timing
    from course_utils.claims.judging import faster
    from course_utils.claims.verdicts import INCONCLUSIVE

    cmp = timing.compare(
        {"PyTorch eager": run_torch, "JAX jit": run_jax},
        rtol=rtol,
        atol=atol,
        target_s=target_s,
    )
    verdict = faster(cmp, "PyTorch eager", "JAX jit")
    seconds = {k: timing.format_seconds(m.median) for k, m in cmp.measurements.items()}
    detail = (
        f"PyTorch eager {seconds['PyTorch eager']}, JAX jit {seconds['JAX jit']} per call "
        f"(medians; eager against compiled, the port's own pairing): {verdict.explanation}"
    )
    return ("warn" if verdict.verdict == INCONCLUSIVE else "pass"), detail
