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
NNX model (for example ``course_utils.data.nchw_to_nhwc`` for images). The
checks themselves live in :mod:`course_utils.port_checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# The checks themselves; jit_forward, jax_asarray and dependencies_status are
# also called from here by lessons and other modules.
from course_utils.port_checks import (
    benchmark,
    compare_outputs,
    dependencies_status,
    dynamic_shapes,
    jax_asarray,
    jit_forward,
    nnx_n_params,
    operator_coverage,
    torch_forward,
    torch_n_params,
)

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


# ------------------------------------------------------------------ the checklists


def stepwise_port(
    torch_model: Any,
    nnx_model: Any,
    example: np.ndarray,
    *,
    to_jax: Callable[[np.ndarray], Any] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-5,
    verbose: bool = True,
    devices: Sequence[Any] | None = None,
) -> ChecklistReport:
    """Run the four steps of a port and report each: rewrite, eager, ``jit``, distribution.

    ``example`` is a batch in PyTorch's layout whose leading (batch) axis is
    split over ``devices`` in the last step (default: every accelerator
    :func:`course_utils.meshes.accelerators` sees, else every CPU device); both
    models must be in eval mode. Later steps are skipped once one fails.
    """
    import jax

    to_jax = to_jax or (lambda a: a)
    report = ChecklistReport("stepwise port")
    n_t, n_j = torch_n_params(torch_model), nnx_n_params(nnx_model)
    report.add(
        "1. semantic rewrite",
        "pass" if n_t == n_j else "fail",
        f"{n_t:,} parameters in PyTorch, {n_j:,} in NNX",
    )
    expected = torch_forward(torch_model)(example)
    eager = nnx_model(jax.numpy.asarray(to_jax(example)))
    good, detail = compare_outputs(eager, expected, rtol, atol)
    report.add("2. equal in eager mode", "pass" if good else "fail", detail)

    forward, state = jit_forward(nnx_model)
    x = jax.numpy.asarray(to_jax(example))
    if report.ok:
        good, detail = compare_outputs(forward(state, x), expected, rtol, atol)
        report.add("3. equal under jax.jit", "pass" if good else "fail", detail)
    else:
        report.add("3. equal under jax.jit", "skip", "an earlier step failed")
    if report.ok:
        sharded = _sharded(forward, state, x, expected, rtol, atol, devices)
    else:
        sharded = ("skip", "an earlier step failed")
    report.add("4. equal when sharded", *sharded)
    if verbose:
        print(report)
    return report


def _sharded(
    forward: Callable,
    state: Any,
    x: Any,
    expected: Any,
    rtol: float,
    atol: float,
    devices: Sequence[Any] | None,
) -> tuple[str, str]:
    """Step 4 of :func:`stepwise_port`: the batch split over ``devices``."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from course_utils import meshes

    devices = list(devices or meshes.accelerators() or jax.devices("cpu"))
    if len(x) % len(devices):
        return "skip", f"batch of {len(x)} does not split over {len(devices)} devices"
    mesh = jax.make_mesh((len(devices),), ("data",), devices=devices)
    x_sharded = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data")))
    state_repl = jax.device_put(state, NamedSharding(mesh, PartitionSpec()))
    out = forward(state_repl, x_sharded)
    good, detail = compare_outputs(out, expected, rtol, atol)
    return (
        "pass" if good else "fail",
        f"batch split over {len(devices)} device(s), output sharding "
        f"{out.sharding.spec}; {detail}",
    )


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
    if not isinstance(example, np.ndarray):
        raise TypeError(
            f"mvp_checklist: example must be a numpy array, got {type(example).__name__}"
        )
    to_jax = to_jax or (lambda a: a)
    report = ChecklistReport("MVP checklist")
    run_torch = torch_forward(torch_model)
    expected = run_torch(example)
    forward, state = jit_forward(nnx_model)
    xj = jax_asarray(to_jax(example))
    good, detail = compare_outputs(forward(state, xj), expected, rtol, atol)
    report.add("outputs agree", "pass" if good else "fail", detail)
    if not good:
        for name in ("same-hardware benchmark", "operator coverage", "dynamic shapes"):
            report.add(name, "skip", "the outputs differ: fix the port first")
    else:
        timed = benchmark(
            lambda: run_torch(example),
            lambda: forward(state, xj),
            rtol=rtol,
            atol=atol,
            target_s=target_s,
        )
        report.add("same-hardware benchmark", *timed)
        report.add(
            "operator coverage",
            *operator_coverage(torch_model, nnx_model, example, to_jax),
        )
        report.add(
            "dynamic shapes", *_shapes_item(nnx_model, torch_model, shapes, to_jax)
        )
    report.add("ecosystem dependencies", *_dependencies_item(dependencies))
    if verbose:
        print(report)
    return report


def _dependencies_item(
    dependencies: Mapping[str, Sequence[str]] | None,
) -> tuple[str, str]:
    """The ecosystem line of :func:`mvp_checklist`, skipped when none are named."""
    if not dependencies:
        return "skip", "give dependencies={side: [package, ...]}"
    return dependencies_status(dependencies)


def _shapes_item(
    nnx_model: Any, torch_model: Any, shapes: Sequence[np.ndarray], to_jax: Callable
) -> tuple[str, str]:
    """The dynamic-shapes line of :func:`mvp_checklist`, skipped with fewer than two."""
    if len(shapes) < 2:
        return "skip", "give shapes= (two or more inputs of different sizes)"
    return dynamic_shapes(nnx_model, torch_model, shapes, to_jax)
