"""Migration checklists that run: the stepwise port and the MVP checklist, on a pair of models.

Both take a PyTorch model and a Flax NNX model that are meant to compute the
same function, run real checks and return a :class:`ChecklistReport` (a table
of pass / warn / fail lines) that prints itself:

- :func:`stepwise_port`: semantic rewrite (same number of parameters), equal
  in eager mode, equal under ``jax.jit``, equal when the batch is sharded over
  every JAX device;
- :func:`mvp_checklist`: the checks to run before switching frameworks: the
  outputs agree, a same-hardware benchmark, operator coverage of each
  compiler, what dynamic shapes cost in recompilation, and whether the
  ecosystem packages the project needs are installed.

Inputs are numpy arrays in PyTorch's layout; ``to_jax`` converts them for the
NNX model (for example ``course_utils.data.nchw_to_nhwc`` for images).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

STATUSES = ("pass", "warn", "fail", "skip")
_MARK = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "–"}


@dataclass
class CheckItem:
    """One line of a checklist: what was checked, how it went, and the evidence."""

    name: str
    status: str
    detail: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(
                f"CheckItem: status must be one of {STATUSES}, got {self.status!r}"
            )


@dataclass
class ChecklistReport:
    """The checks that ran, in order; ``ok`` when none failed."""

    title: str
    items: list[CheckItem] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str) -> CheckItem:
        item = CheckItem(name, status, detail)
        self.items.append(item)
        return item

    @property
    def ok(self) -> bool:
        return all(i.status != "fail" for i in self.items)

    def status(self, name: str) -> str:
        """The status of the check called ``name``."""
        for i in self.items:
            if i.name == name:
                return i.status
        raise KeyError(f"no check named {name!r}; have {[i.name for i in self.items]}")

    def table(self) -> str:
        lines = [f"| {self.title} | | |", "|---|:---:|---|"]
        for i in self.items:
            detail = i.detail.replace(
                "|", "\\|"
            )  # a literal | would end the table cell
            lines.append(f"| {i.name} | {_MARK[i.status]} {i.status} | {detail} |")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.table() + "\n\n(on this machine)"

    def __str__(self) -> str:
        width = max((len(i.name) for i in self.items), default=0)
        lines = [self.title]
        lines += [
            f"  {_MARK[i.status]} {i.name:<{width}}  {i.status:<4}  {i.detail}"
            for i in self.items
        ]
        return "\n".join(lines)


# ------------------------------------------------------------------ runners


def _torch_forward(torch_model: Any) -> Callable[[np.ndarray], Any]:
    import torch

    def run(x: np.ndarray):
        with torch.inference_mode():
            return torch_model(torch.from_numpy(np.asarray(x)))

    return run


def jit_forward(nnx_model: Any) -> Callable:
    """A ``jax.jit`` forward pass ``f(state, x)`` of an NNX model, and its state: ``(f, state)``.

    Splitting the model into a graph definition and a state pytree keeps the
    weights as arguments (not compile-time constants) and the call free of
    NNX's Python bookkeeping.
    """
    import jax
    from flax import nnx

    graphdef, state = nnx.split(nnx_model)

    @jax.jit
    def forward(state, x):
        return nnx.merge(graphdef, state)(x)

    return forward, state


def _n_params_torch(model: Any) -> int:
    return sum(p.numel() for p in model.parameters())


def _n_params_nnx(model: Any) -> int:
    import jax
    from flax import nnx

    return sum(
        int(np.prod(x.shape)) for x in jax.tree.leaves(nnx.state(model, nnx.Param))
    )


def _compare_outputs(a: Any, b: Any, rtol: float, atol: float) -> tuple[bool, str]:
    from course_utils.parity import assert_close, max_abs_diff

    try:
        assert_close(a, b, rtol=rtol, atol=atol, name="output")
    except AssertionError as err:
        return False, str(err).split("\n")[1].strip() if "\n" in str(err) else str(err)
    return True, f"max |diff| {max_abs_diff(a, b):.2g} (rtol {rtol:g}, atol {atol:g})"


def stepwise_port(
    torch_model: Any,
    nnx_model: Any,
    example: np.ndarray,
    *,
    to_jax: Callable[[np.ndarray], Any] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    verbose: bool = True,
) -> ChecklistReport:
    """Run the four steps of a port and report each: rewrite, eager, ``jit``, distribution.

    ``example`` is a batch in PyTorch's layout whose leading (batch) axis is
    split over ``jax.devices()`` in the last step; both models must be in eval
    mode. Later steps are skipped once one fails.
    """
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    to_jax = to_jax or (lambda a: a)
    report = ChecklistReport("stepwise port")
    n_t, n_j = _n_params_torch(torch_model), _n_params_nnx(nnx_model)
    report.add(
        "1. semantic rewrite",
        "pass" if n_t == n_j else "fail",
        f"{n_t:,} parameters in PyTorch, {n_j:,} in NNX",
    )
    expected = _torch_forward(torch_model)(example)
    eager = nnx_model(jax.numpy.asarray(to_jax(example)))
    good, detail = _compare_outputs(eager, expected, rtol, atol)
    report.add("2. equal in eager mode", "pass" if good else "fail", detail)

    forward, state = jit_forward(nnx_model)
    x = jax.numpy.asarray(to_jax(example))
    if report.ok:
        good, detail = _compare_outputs(forward(state, x), expected, rtol, atol)
        report.add("3. equal under jax.jit", "pass" if good else "fail", detail)
    else:
        report.add("3. equal under jax.jit", "skip", "an earlier step failed")

    devices = jax.devices()
    if not report.ok:
        report.add("4. equal when sharded", "skip", "an earlier step failed")
    elif len(example) % len(devices):
        report.add(
            "4. equal when sharded",
            "skip",
            f"batch of {len(example)} does not split over {len(devices)} devices",
        )
    else:
        mesh = jax.make_mesh((len(devices),), ("data",), devices=devices)
        x_sharded = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data")))
        state_repl = jax.device_put(state, NamedSharding(mesh, PartitionSpec()))
        out = forward(state_repl, x_sharded)
        good, detail = _compare_outputs(out, expected, rtol, atol)
        report.add(
            "4. equal when sharded",
            "pass" if good else "fail",
            f"batch split over {len(devices)} device(s), output sharding "
            f"{out.sharding.spec}; {detail}",
        )
    if verbose:
        print(report)
    return report


def _operator_coverage(
    torch_model: Any, nnx_model: Any, example: np.ndarray, to_jax
) -> tuple[str, str]:
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


def _dynamic_shapes(
    nnx_model: Any, torch_model: Any, inputs: Sequence[np.ndarray], to_jax
) -> tuple[str, str]:
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


def mvp_checklist(
    torch_model: Any,
    nnx_model: Any,
    example: np.ndarray,
    *,
    to_jax: Callable[[np.ndarray], Any] | None = None,
    shapes: Sequence[np.ndarray] = (),
    dependencies: Mapping[str, Sequence[str]] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    target_s: float | None = None,
    verbose: bool = True,
) -> ChecklistReport:
    """Run the MVP checklist on a PyTorch model and its NNX port; print and return the report.

    - **outputs agree**: eager PyTorch vs NNX on ``example`` (nothing else runs if not);
    - **same-hardware benchmark**: PyTorch eager vs ``jax.jit`` through
      :func:`course_utils.timing.compare`, interleaved, on this machine;
    - **operator coverage**: does ``torch.compile`` capture the model in one
      graph (``torch._dynamo.explain``), and can ``jax.jit`` trace it;
    - **dynamic shapes**: how many compilations ``shapes`` (inputs of
      different sizes) cause in each framework;
    - **ecosystem dependencies**: which of ``dependencies`` (``{"JAX side":
      ["optax", ...], ...}``) are installed.
    """
    from course_utils import timing

    if not isinstance(example, np.ndarray):
        raise TypeError(
            f"mvp_checklist: example must be a numpy array, got {type(example).__name__}"
        )
    to_jax = to_jax or (lambda a: a)
    report = ChecklistReport("MVP checklist")
    run_torch = _torch_forward(torch_model)
    expected = run_torch(example)
    forward, state = jit_forward(nnx_model)
    xj = jax_asarray(to_jax(example))
    good, detail = _compare_outputs(forward(state, xj), expected, rtol, atol)
    report.add("outputs agree", "pass" if good else "fail", detail)
    if not good:
        for name in ("same-hardware benchmark", "operator coverage", "dynamic shapes"):
            report.add(name, "skip", "the outputs differ: fix the port first")
    else:
        cmp = timing.compare(
            {
                "PyTorch eager": lambda: run_torch(example),
                "JAX jit": lambda: forward(state, xj),
            },
            rtol=rtol,
            atol=atol,
            target_s=target_s,
        )
        ratio = cmp.ratio("JAX jit")
        faster = "JAX jit" if ratio < 1 else "PyTorch eager"
        report.add(
            "same-hardware benchmark",
            "warn" if cmp.warnings else "pass",
            f"PyTorch eager {timing.format_seconds(cmp.measurements['PyTorch eager'].median)}, "
            f"JAX jit {timing.format_seconds(cmp.measurements['JAX jit'].median)} per call: "
            f"{faster} is {max(ratio, 1 / ratio):.2f}x faster on this machine"
            + (" (noisy)" if cmp.warnings else ""),
        )
        report.add(
            "operator coverage",
            *_operator_coverage(torch_model, nnx_model, example, to_jax),
        )
        if len(shapes) >= 2:
            report.add(
                "dynamic shapes",
                *_dynamic_shapes(nnx_model, torch_model, shapes, to_jax),
            )
        else:
            report.add(
                "dynamic shapes",
                "skip",
                "give shapes= (two or more inputs of different sizes)",
            )
    if dependencies:
        report.add("ecosystem dependencies", *dependencies_status(dependencies))
    else:
        report.add(
            "ecosystem dependencies", "skip", "give dependencies={side: [package, ...]}"
        )
    if verbose:
        print(report)
    return report
