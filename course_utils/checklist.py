"""Migration checklists that run: the stepwise port and the MVP checklist, on a pair of models.

Both take a PyTorch model and a Flax NNX model that are meant to compute the
same function, run real checks and return a :class:`ChecklistReport` (a table
of pass / warn / fail lines) that prints itself:

- :func:`stepwise_port`: semantic rewrite (same number of parameters), equal
  in eager mode, equal under ``jax.jit``, equal when the batch is sharded over
  every JAX device;
- :func:`mvp_checklist`: the checks to run before switching frameworks: the
  outputs agree, a same-hardware benchmark that pairs like with like (eager
  against eager, compiled against compiled), operator coverage of each
  compiler, what dynamic shapes cost in recompilation, and whether the
  ecosystem packages the project needs are installed.

Inputs are numpy arrays in PyTorch's layout; ``to_jax`` converts them for the
NNX model (for example ``course_utils.data.nchw_to_nhwc`` for images).

The checks come one function each and also run on their own: the models'
parameter counts, their outputs compared, a same-hardware benchmark
(:func:`same_hardware_benchmark`, the fair pairs of :data:`FAIR_PAIRS`), what each
compiler captures (:func:`operator_coverage`), what changing input shapes cost
(:func:`dynamic_shapes`), which ecosystem packages are installed
(:func:`dependencies_status`). Most return ``(status, detail)`` for one line of a
:class:`ChecklistReport`; a detail of several rows (the benchmark's medians, one per
variant) holds them one a line. Both sides run through :mod:`course_utils.forwards`.

Importing this module imports neither framework.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from course_utils.forwards import jit_forward, torch_forward

STATUSES = ("pass", "warn", "fail", "skip")
_MARK = {"pass": "✓", "warn": "!", "fail": "✗", "skip": "–"}


@dataclass
class CheckItem:
    """One line of a checklist: what was checked, how it went, and the evidence."""

    name: str
    status: str
    detail: str
    facts: dict[str, Any] = field(default_factory=dict)  # the numbers behind the detail

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

    def add(
        self, name: str, status: str, detail: str, facts: dict[str, Any] | None = None
    ) -> CheckItem:
        item = CheckItem(name, status, detail, dict(facts or {}))
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

    def item(self, name: str) -> CheckItem:
        """The check called ``name``."""
        for i in self.items:
            if i.name == name:
                return i
        raise KeyError(f"no check named {name!r}; have {[i.name for i in self.items]}")

    def table(self) -> str:
        lines = [f"| {self.title} | | |", "|---|:---:|---|"]
        for i in self.items:
            # a literal | would end the table cell; a detail's rows become line breaks
            detail = i.detail.replace("|", "\\|").replace("\n", "<br>")
            lines.append(f"| {i.name} | {_MARK[i.status]} {i.status} | {detail} |")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.table() + "\n\n(on this machine)"

    def __str__(self) -> str:
        """One line per check; a detail of several rows continues, indented, below it."""
        width = max((len(i.name) for i in self.items), default=0)
        lines = [self.title]
        for i in self.items:
            first, *rows = i.detail.split("\n")
            lines.append(
                f"  {_MARK[i.status]} {i.name:<{width}}  {i.status:<4}  {first}"
            )
            lines += [f"      {row}" for row in rows]
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
    models must be in eval mode. Steps 3 and 4 are skipped once an earlier step fails.
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
        f"batch split over {_count(len(devices), 'device')}, output sharding "
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

    - **outputs agree**: eager PyTorch vs NNX on ``example`` (if not, the next three
      checks are skipped and only the ecosystem check runs);
    - **same-hardware benchmark**: :func:`same_hardware_benchmark`, eager against
      eager and ``torch.compile`` against ``jax.jit``, interleaved, on the CPU;
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
        facts: dict[str, Any] = {}
        timed = same_hardware_benchmark(
            torch_model,
            nnx_model,
            example,
            to_jax,
            rtol=rtol,
            atol=atol,
            target_s=target_s,
            facts=facts,
        )
        report.add("same-hardware benchmark", *timed, facts=facts)
        facts = {}
        covered = operator_coverage(
            torch_model, nnx_model, example, to_jax, facts=facts
        )
        report.add("operator coverage", *covered, facts=facts)
        facts = {}
        shaped = _shapes_item(nnx_model, torch_model, shapes, to_jax, facts)
        report.add("dynamic shapes", *shaped, facts=facts)
    facts = {}
    report.add(
        "ecosystem dependencies", *_dependencies_item(dependencies, facts), facts=facts
    )
    if verbose:
        print(report)
    return report


def _dependencies_item(
    dependencies: Mapping[str, Sequence[str]] | None,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """The ecosystem line of :func:`mvp_checklist`, one row per side, skipped when none are named."""
    if not dependencies:
        return "skip", "give dependencies={side: [package, ...]}"
    status, detail = dependencies_status(dependencies, facts=facts)
    return status, detail.replace("; ", "\n")


def _shapes_item(
    nnx_model: Any,
    torch_model: Any,
    shapes: Sequence[np.ndarray],
    to_jax: Callable,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """The dynamic-shapes line of :func:`mvp_checklist`, skipped with fewer than two."""
    if len(shapes) < 2:
        return "skip", "give shapes= (two or more inputs of different sizes)"
    return dynamic_shapes(nnx_model, torch_model, shapes, to_jax, facts=facts)


def reading(report: ChecklistReport) -> str:
    """The MVP checklist's result read in plain sentences, one a line, from its numbers.

    One sentence per fair pair of the benchmark (who was faster, by how much, and
    whether the run could judge it), one on operator coverage, one on the new
    shapes' compilations, one on missing packages. A check that was skipped says so.
    """
    lines = []
    for item in report.items:
        if item.name == "outputs agree":
            continue
        if item.status == "skip" or not item.facts:
            lines.append(f"{item.name}: skipped ({item.detail}).")
        elif item.name == "same-hardware benchmark":
            lines += [
                _read_pair(a, b, v, item.facts["medians"])
                for a, b, v in item.facts["verdicts"].values()
            ]
        elif item.name == "operator coverage":
            f = item.facts
            traced = "traced it" if f["traced"] else "could not trace it"
            lines.append(
                f"torch.compile captured the block in {_count(f['graphs'], 'graph')} "
                f"with {_count(f['breaks'], 'graph break')}, and jax.jit {traced}."
            )
        elif item.name == "dynamic shapes":
            f = item.facts
            lo, hi = min(f["first_calls_s"]), max(f["first_calls_s"])
            span = (
                _seconds(lo)
                if _seconds(lo) == _seconds(hi)
                else f"{_seconds(lo)} to {_seconds(hi)}"
            )
            lines.append(
                f"{f['shapes']} new input shapes cost jax.jit {_count(f['compiles'], 'compilation')}, "
                f"with first calls of {span}; torch.compile captured {_count(f['graphs'], 'graph')}."
            )
        elif item.name == "ecosystem dependencies":
            missing = item.facts.get("missing", {})
            if not missing:
                lines.append("Every package named is installed here.")
            else:
                parts = [
                    f"{' and '.join(names)} on the {side}"
                    for side, names in missing.items()
                ]
                lines.append(
                    f"Missing here: {', '.join(parts)}. That is this installation, "
                    "not a limit of either framework."
                )
    return "\n".join(lines)


def _read_pair(a: str, b: str, verdict: Any, medians: Mapping[str, float]) -> str:
    """One benchmark pair in a sentence: who was faster, by how much, judged or not."""
    from course_utils.claims.verdict_rule import INCONCLUSIVE

    times = f"{a} took {_seconds(medians[a])} a call and {b} {_seconds(medians[b])}"
    if verdict.factor is None or not verdict.side:
        return f"{times}: {verdict.line()}."
    if verdict.verdict == INCONCLUSIVE and verdict.reason.startswith("the interval"):
        return f"{times}, too close for the rule to name a winner."
    fast = b if verdict.side > 0 else a
    said = f"{times}, so {fast} was {verdict.factor:.1f}× faster"
    if verdict.verdict != INCONCLUSIVE:
        return said + "."
    return (
        said + f"; the run was {verdict.reason.split(' (')[0]}, so this is not judged."
    )


def _seconds(s: float) -> str:
    from course_utils.timing import format_seconds

    return format_seconds(s)


# ---------------------------------------------------------------- the checks


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
    torch_model: Any,
    nnx_model: Any,
    example: np.ndarray,
    to_jax,
    *,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """Does ``torch.compile`` capture the model in one graph, and can ``jax.jit`` trace it.

    ``facts``, when given, receives ``graphs``, ``breaks`` and ``traced``.
    """
    facts = {} if facts is None else facts
    import jax
    import torch
    import torch._dynamo

    with torch.inference_mode():
        explained = torch._dynamo.explain(torch_model)(
            torch.from_numpy(np.asarray(example))
        )
    torch._dynamo.reset()
    facts.update(
        graphs=explained.graph_count, breaks=explained.graph_break_count, traced=False
    )
    parts = [
        f"torch.compile: {_count(explained.graph_count, 'graph')}, "
        f"{_count(explained.graph_break_count, 'break')}"
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
    facts["traced"] = True
    parts.append(f"jax.jit: traced, {len(prims)} distinct primitives at the top level")
    return status, "; ".join(parts)


def dynamic_shapes(
    nnx_model: Any,
    torch_model: Any,
    inputs: Sequence[np.ndarray],
    to_jax,
    *,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """How many compilations inputs of different shapes cause in each framework.

    ``facts``, when given, receives ``shapes``, ``compiles``, ``first_calls_s``
    (each input's first call, compiling included) and ``graphs``.
    """
    import torch
    import torch._dynamo

    from course_utils.timing.counters import CompileCounter, DynamoGraphs

    forward, state = jit_forward(nnx_model)
    compiles, firsts = 0, []
    for x in inputs:
        xj = jax_asarray(to_jax(x))
        before = CompileCounter.snapshot()
        start = time.perf_counter()
        forward(state, xj).block_until_ready()
        firsts.append(time.perf_counter() - start)
        compiles += CompileCounter.delta(before)
    graphs = DynamoGraphs()
    torch._dynamo.reset()
    compiled = torch.compile(torch_model, backend=graphs)
    with torch.inference_mode():
        for x in inputs:
            compiled(torch.from_numpy(np.asarray(x)))
    torch._dynamo.reset()
    shapes = len({np.asarray(x).shape for x in inputs})
    if facts is not None:
        facts.update(
            shapes=shapes, compiles=compiles, first_calls_s=firsts, graphs=len(graphs)
        )
    detail = (
        f"{shapes} input shapes: jax.jit compiled {_count(compiles, 'time')} "
        f"(first calls {1e3 * min(firsts):.0f}–{1e3 * max(firsts):.0f} ms), "
        f"torch.compile captured {_count(len(graphs), 'graph')}"
    )
    if len(graphs) < shapes:
        detail += (
            " (from the second size on, one graph with a dynamic size serves them all)"
        )
    detail += "."
    status = "warn" if compiles >= shapes > 1 else "pass"
    if status == "warn":
        detail += " Pad or bucket the shapes to bound JAX's compilations."
    return status, detail


def _count(n: int, word: str) -> str:
    """``'1 graph'``, ``'2 graphs'``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def jax_asarray(x: Any) -> Any:
    """``jnp.asarray(x)``, importing jax only when called."""
    import jax.numpy as jnp

    return jnp.asarray(x)


def dependencies_status(
    dependencies: Mapping[str, Sequence[str]], *, facts: dict[str, Any] | None = None
) -> tuple[str, str]:
    """``(status, detail)``: which of ``{side: [module, ...]}`` are importable here, with versions.

    ``facts``, when given, receives ``missing``: ``{side: [module, ...]}`` of those not found.
    """
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
                if facts is not None:
                    facts.setdefault("missing", {}).setdefault(side, []).append(name)
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


FAIR_PAIRS = {  # label: (the first variant, the second), each pair changing one thing
    "eager vs eager": ("PyTorch eager", "JAX eager"),
    "compiled vs compiled": ("torch.compile", "JAX jit"),
}


def same_hardware_benchmark(
    torch_model: Any,
    nnx_model: Any,
    example: np.ndarray,
    to_jax: Callable[[np.ndarray], Any],
    *,
    rtol: float,
    atol: float,
    target_s: float | None,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """Both models eager and compiled, timed interleaved on the CPU: :data:`FAIR_PAIRS`.

    The PyTorch model runs on the CPU (it is fed numpy batches), so the NNX
    model's state and input are put on JAX's CPU device too, whatever
    accelerator JAX has: a pair judged across device kinds would say nothing
    about the frameworks. ``torch.compile``'s first call compiles (seconds);
    :func:`course_utils.timing.compare` times it apart from the steady state.
    """
    import jax
    import torch
    import torch._dynamo
    from flax import nnx

    cpu = jax.devices("cpu")[0]
    graphdef, state = nnx.split(nnx_model)
    state, x = jax.device_put((state, jax_asarray(to_jax(example))), cpu)
    eager_nnx = nnx.merge(graphdef, state)  # the NNX model, called op by op
    forward, state = jit_forward(eager_nnx)
    run_torch = torch_forward(torch_model)
    run_compiled = torch_forward(torch.compile(torch_model))
    try:
        return benchmark(
            {
                "PyTorch eager": lambda: run_torch(example),
                "JAX eager": lambda: eager_nnx(x),
                "torch.compile": lambda: run_compiled(example),
                "JAX jit": lambda: forward(state, x),
            },
            FAIR_PAIRS,
            rtol=rtol,
            atol=atol,
            target_s=target_s,
            facts=facts,
        )
    finally:
        torch._dynamo.reset()  # the later checks start from an empty Dynamo cache


def benchmark(
    variants: Mapping[str, Callable[[], Any]],
    pairs: Mapping[str, tuple[str, str]],
    *,
    rtol: float,
    atol: float,
    target_s: float | None,
    facts: dict[str, Any] | None = None,
) -> tuple[str, str]:
    """Time ``variants`` through :func:`course_utils.timing.compare`; judge each of ``pairs``.

    ``pairs`` maps a label to two variant names. Which of a pair is faster is
    said by the course's one rule (``claims.faster``); a pair the rule does not
    judge (a noisy or contended run) makes the step warn, and its reason is
    given once however many pairs it stopped (``claims.compact``). The detail
    has rows: the line ``medians per call on <device kind>:``, one row per
    variant with its median, then one line per pair, then each reason once.
    ``facts``, when given, receives ``medians`` (seconds per variant) and
    ``verdicts`` (label: ``(a, b, Verdict)``).
    """
    from course_utils import timing
    from course_utils.claims import verdicts as claim_verdicts
    from course_utils.claims.verdict_rule import INCONCLUSIVE

    faster, compact = claim_verdicts.faster, claim_verdicts.compact

    cmp = timing.compare(dict(variants), rtol=rtol, atol=atol, target_s=target_s)
    kinds = "/".join(sorted(set(cmp.devices.values()))) or "?"
    width = max(len(name) for name in cmp.measurements)
    rows = [f"medians per call on {kinds}:"]
    rows += [
        f"  {name:<{width}}  {timing.format_seconds(m.median)}"
        for name, m in cmp.measurements.items()
    ]
    verdicts = {label: faster(cmp, a, b) for label, (a, b) in pairs.items()}
    unjudged = any(v.verdict == INCONCLUSIVE for v in verdicts.values())
    status = "warn" if unjudged else "pass"
    rows.append(compact(verdicts))
    if facts is not None:
        facts["medians"] = {n: m.median for n, m in cmp.measurements.items()}
        facts["verdicts"] = {k: (*pairs[k], v) for k, v in verdicts.items()}
    return status, "\n".join(rows)
