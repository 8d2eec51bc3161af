"""Lower a jitted JAX program for GPUs and TPUs on a CPU, and say what failed.

``jax.export.export(jax.jit(f), platforms=["cuda"])`` runs JAX's GPU lowering
(its MLIR emission, Pallas' Mosaic GPU or Triton lowering, the sharding
annotations) without a GPU. :func:`check` does that for one :class:`Program`
(a closed jaxpr and the shapes, dtypes and shardings of its inputs) on each of
:data:`PLATFORMS`, after two rewrites:

- every ``pallas_call`` runs with ``interpret=False``: an interpreted kernel
  lowers as plain HLO and proves nothing about the kernel;
- the jaxpr's constants become inputs, so no array is copied into the module.

Each platform gets an :class:`Outcome`: ``pass``, ``fail`` (the error's first
line) or ``skip`` with the reason, for a program that cannot be exported for a
reason that has nothing to do with the platform: host callbacks
(``pure_callback``, ``jax.debug.print``), which only a live backend lowers, or
any error the same export for ``cpu`` raises too.

What a pass proves: the program lowers to StableHLO for that platform, with
its shardings on a mesh of as many devices. What it does not prove: that XLA
then compiles it for that chip (PTX, Mosaic's later passes, shared memory or
VMEM limits), nor its numbers or speed. :mod:`course_utils.tooling.lowering.record`
records the programs a notebook runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from course_utils.kernels import MOSAIC_GPU_FLAG

PLATFORMS = ("cuda", "tpu")
CONTROL = "cpu"  # the platform whose export tells a platform failure from any other
# Primitives that call back into Python: lowering them needs the target's live backend.
CALLBACKS = frozenset(
    {
        "pure_callback",
        "io_callback",
        "debug_callback",
        "debug_print",
        "buffer_callback",
        "inspect_sharding",
    }
)
PASS, FAIL, SKIP = "pass", "fail", "skip"
# JAX settings a program was traced under, set again when it is lowered after its cell
# (a cell may trace inside ``with jax.enable_x64():``); names as ``jax.config`` has them.
# A jax without one skips it (settings_now): the Pallas GPU route's flag exists from
# jax 0.7 to 0.11.1 (lesson 10 turns it off there) and is gone from 0.11.2.
SETTINGS = (
    "jax_enable_x64",
    MOSAIC_GPU_FLAG,
    "jax_default_matmul_precision",
)
# What ``jax.export`` says when a module holds custom calls it was not told to allow.
UNSTABLE_CALLS = "Cannot serialize code with custom calls"


def setting(name: str) -> Any:
    """The JAX setting ``name`` (a context manager with a ``.value``), or ``None``.

    Looked up in ``jax.config``'s registry, where every version keeps it: jax 0.7
    defines ``jax_pallas_use_mosaic_gpu`` in Pallas, not in ``jax._src.config``, and
    jax 0.11.2 and newer have no such setting (``None``).
    """
    import jax

    return jax.config._value_holders.get(name)


def settings_now() -> tuple[tuple[str, Any], ...]:
    """The current value of each of :data:`SETTINGS` (those this jax has)."""
    found = ((n, setting(n)) for n in SETTINGS)
    return tuple((n, s.value) for n, s in found if s is not None)


@dataclass(frozen=True)
class Program:
    """One jitted program: its jaxpr and the types of its inputs.

    ``specs`` holds a ``jax.ShapeDtypeStruct`` per input (with its sharding when it
    spans several devices); ``out_shardings`` is ``None`` or one per output.
    """

    name: str
    jaxpr: Any  # jax's ClosedJaxpr (a Jaxpr with its constants from jax 0.12)
    specs: tuple[Any, ...]
    out_shardings: tuple[Any, ...] | None = None
    mesh: Any = None  # the mesh current when it was traced (jax.set_mesh), if any
    settings: tuple[tuple[str, Any], ...] = ()  # settings_now() when it was traced

    @property
    def kernels(self) -> tuple[str, ...]:
        """The Pallas kernels it launches, by the kernel function's name."""
        return tuple(
            kernel_name(e)
            for e in eqns(self.jaxpr)
            if e.primitive.name == "pallas_call"
        )

    @property
    def callbacks(self) -> tuple[str, ...]:
        """The host-callback primitives it holds, each named once."""
        found = (e.primitive.name for e in eqns(self.jaxpr))
        return tuple(sorted({n for n in found if n in CALLBACKS}))

    def label(self) -> str:
        """``step`` or ``pallas_call (kernel softmax_kernel)``, for a report line."""
        kernels = sorted(set(self.kernels))
        if not kernels:
            return self.name
        return f"{self.name} (kernel {', '.join(kernels)})"


@dataclass(frozen=True)
class Outcome:
    """What lowering one program for one platform gave."""

    function: str
    platform: str
    status: str  # PASS, FAIL or SKIP
    reason: str = ""  # the error's first line (FAIL) or why it was not checked (SKIP)


def closed_jaxpr_type() -> type | None:
    """jax's ``ClosedJaxpr`` (a jaxpr and its constants); None from jax 0.12, whose
    ``Jaxpr`` carries its constants itself."""
    from jax._src import core

    return getattr(core, "ClosedJaxpr", None)


def jaxprs_in(value: Any) -> Iterator[Any]:
    """The jaxprs an equation parameter holds (none, one, or a tuple of branches)."""
    from jax._src import core

    closed = closed_jaxpr_type()
    for v in value if type(value) in (tuple, list) else (value,):
        if closed is not None and isinstance(v, closed):
            yield v.jaxpr
        elif isinstance(v, core.Jaxpr):
            yield v


def eqns(jaxpr: Any) -> Iterator[Any]:
    """Every equation of a (closed) jaxpr, nested jaxprs included."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in inner.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in jaxprs_in(value):
                yield from eqns(sub)


def kernel_name(eqn: Any) -> str:
    """The Python function a ``pallas_call`` equation runs (``?`` when unknown)."""
    info = getattr(eqn.params.get("jaxpr"), "debug_info", None)
    name = getattr(info, "func_name", None) or eqn.params.get("name") or "?"
    return str(name).split(" at ")[0]


def _rewrite(value: Any, eqn_fn: Callable[[Any], Any]) -> Any:
    from jax._src import core

    closed = closed_jaxpr_type()
    if closed is not None and isinstance(value, closed):
        return value.replace(jaxpr=_rewrite(value.jaxpr, eqn_fn))
    if isinstance(value, core.Jaxpr):
        return value.replace(eqns=[eqn_fn(e) for e in value.eqns])
    if type(value) in (tuple, list):  # not a NamedTuple such as ScatterDimensionNumbers
        return type(value)(_rewrite(v, eqn_fn) for v in value)
    return value


def interpret_off(jaxpr: Any) -> Any:
    """The same jaxpr with every ``pallas_call`` compiled (``interpret=False``)."""

    def fix(eqn: Any) -> Any:
        params = {k: _rewrite(v, fix) for k, v in eqn.params.items()}
        if eqn.primitive.name == "pallas_call" and "interpret" in params:
            params["interpret"] = False
        return eqn.replace(params=params)

    return _rewrite(jaxpr, fix)


_STUB: list[Any] = []


def _stub_primitive() -> Any:
    """A primitive standing for a host callback: zeros of its outputs, on any platform."""
    if _STUB:
        return _STUB[0]
    from jax import lax
    from jax._src import core
    from jax._src.interpreters import mlir

    stub = core.Primitive("host_callback_stub")
    stub.multiple_results = True
    stub.def_abstract_eval(lambda *args, out_avals: list(out_avals))

    def zeros(*args: Any, out_avals: tuple[Any, ...]) -> list[Any]:
        return [lax.full(a.shape, 0, a.dtype) for a in out_avals]

    mlir.register_lowering(stub, mlir.lower_fun(zeros, multiple_results=True))
    _STUB.append(stub)
    return stub


def callbacks_off(jaxpr: Any) -> Any:
    """The same jaxpr with every host callback replaced by zeros of its outputs."""
    from jax._src import core

    stub = _stub_primitive()

    def fix(eqn: Any) -> Any:
        if eqn.primitive.name in CALLBACKS:
            avals = tuple(v.aval for v in eqn.outvars)
            return eqn.replace(
                primitive=stub, params={"out_avals": avals}, effects=core.no_effects
            )
        return eqn.replace(params={k: _rewrite(v, fix) for k, v in eqn.params.items()})

    return _rewrite(jaxpr, fix)


def spec_of(aval: Any, sharding: Any = None) -> Any:
    """A ``ShapeDtypeStruct`` for one input, keeping a sharding over several devices."""
    import jax

    keep = sharding is not None and len(getattr(sharding, "device_set", ())) > 1
    return jax.ShapeDtypeStruct(
        aval.shape,
        aval.dtype,
        sharding=sharding if keep else None,
        weak_type=getattr(aval, "weak_type", False),
    )


def trace(fn: Callable[..., Any], *args: Any, name: str | None = None) -> Program:
    """The :class:`Program` ``jax.jit(fn)(*args)`` would compile (for tests and authors)."""
    import jax

    traced = jax.jit(fn).trace(*args)
    leaves = jax.tree.leaves(args)
    specs = tuple(spec_of(jax.typeof(x), getattr(x, "sharding", None)) for x in leaves)
    return Program(
        name or traced.fun_name, traced.jaxpr, specs, settings=settings_now()
    )


def _callable(
    program: Program, kernels_compiled: bool = True
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A jitted function taking the constants first, and the specs it is exported for."""
    import jax
    from jax._src import core
    from jax._src.interpreters import partial_eval as pe

    closed = interpret_off(program.jaxpr) if kernels_compiled else program.jaxpr
    open_jaxpr = pe.convert_constvars_jaxpr(closed.jaxpr)
    const_specs = tuple(
        spec_of(jax.typeof(c), getattr(c, "sharding", None)) for c in closed.consts
    )
    specs = const_specs + program.specs

    def run(*args: Any) -> tuple[Any, ...]:  # a tuple, as out_shardings is one
        return tuple(core.eval_jaxpr(open_jaxpr, (), *args))

    run.__name__ = run.__qualname__ = program.name
    in_shardings = tuple(s.sharding for s in specs)
    kwargs: dict[str, Any] = {"in_shardings": in_shardings}
    if program.out_shardings is not None:
        kwargs["out_shardings"] = program.out_shardings
    return jax.jit(run, **kwargs), specs


def first_line(err: BaseException) -> str:
    """``ValueError: ...``: the error's first line (and the next, after a colon), cut at 300."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    text = (
        " ".join(lines[:2]) if lines and lines[0].endswith(":") else "".join(lines[:1])
    )
    return f"{type(err).__name__}: {text}"[:300]


# The GPU a CUDA lowering targets on a machine without one, where jax must be told.
ABSTRACT_GPU = ("NVIDIA H100", 132)


def export(program: Program, platform: str, kernels_compiled: bool = True) -> Any:
    """``jax.export`` of the program for one platform (raises what the lowering raises).

    ``kernels_compiled=False`` keeps each ``pallas_call``'s ``interpret`` flag as it was.
    jax 0.12 lowers a ``pallas_call`` for CUDA through Triton, which reads the GPU's
    compute capability: with no GPU it asks for an ``AbstractDevice``. The lowering is
    then retried for :data:`ABSTRACT_GPU`, every equation traced as if under it.
    """
    try:
        return _export(program, platform, kernels_compiled)
    except RuntimeError as err:
        if platform != "cuda" or "AbstractDevice" not in str(err):
            raise
    with _named_gpu():
        named = replace(program, jaxpr=_in_current_context(program.jaxpr))
        return _export(named, platform, kernels_compiled)


def _named_gpu() -> Any:
    """The abstract mesh in force, naming :data:`ABSTRACT_GPU` as its device."""
    import jax

    sharding = jax.sharding
    mesh = sharding.get_abstract_mesh()
    kind, cores = ABSTRACT_GPU
    gpu = sharding.AbstractDevice(device_kind=kind, num_cores=cores, platform="gpu")
    return sharding.use_abstract_mesh(
        sharding.AbstractMesh(
            mesh.axis_sizes, mesh.axis_names, mesh.axis_types, abstract_device=gpu
        )
    )


def _in_current_context(jaxpr: Any) -> Any:
    """The same jaxpr, each equation given the context in force now.

    An equation keeps the abstract mesh it was traced under, and lowers under it.
    """
    from jax._src import core

    ctx = core.JaxprEqnContext()

    def fix(eqn: Any) -> Any:
        params = {k: _rewrite(v, fix) for k, v in eqn.params.items()}
        return eqn.replace(params=params, ctx=ctx)

    return _rewrite(jaxpr, fix)


def _export(program: Program, platform: str, kernels_compiled: bool) -> Any:
    import contextlib

    import jax
    from jax import export as jax_export  # jax 0.7 does not load jax.export on import

    fn, specs = _callable(program, kernels_compiled)
    # Custom calls without a stability promise (Triton's) are fine here: nothing is stored.
    allowed = ["ALL"]
    with contextlib.ExitStack() as stack:
        for name, value in program.settings:
            stack.enter_context(setting(name)(value))
        if program.mesh is not None and program.mesh.shape:
            stack.enter_context(jax.set_mesh(program.mesh))
        while True:
            checks = [jax_export.DisabledSafetyCheck.custom_call(t) for t in allowed]
            try:
                return jax_export.export(
                    fn, platforms=[platform], disabled_checks=checks
                )(*specs)
            except ValueError as err:
                refused = sorted(set(unstable_targets(err)) - set(allowed))
                if not refused:
                    raise
                allowed += refused  # a jax without "ALL" (0.7): name each target


def unstable_targets(err: BaseException) -> list[str]:
    """The custom-call targets ``jax.export`` refused for lack of a stability promise.

    Newer jax (0.10) takes ``DisabledSafetyCheck.custom_call("ALL")``; jax 0.7 allows
    only the targets it is given by name, and lists those it refuses in its error.
    """
    import re

    text = str(err)
    if not text.startswith(UNSTABLE_CALLS):
        return []
    return re.findall(r'stablehlo\.custom_call @"?([^\s("]+)', text)


def _try(program: Program, platform: str, kernels_compiled: bool = True) -> str:
    """``""`` when the program lowers for ``platform``, else why not (one line).

    The warning filters in force hold (a lesson may ignore one warning on purpose), but
    a warning they would raise as an error (``course_utils.strict`` does so for the
    frameworks' deprecations) is recorded instead, so that the lowering goes on and a
    later error is the one reported; failing that, the warning is.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.filters[:] = [
            ("always", *f[1:]) if f[0] == "error" else f for f in warnings.filters
        ]
        getattr(warnings, "_filters_mutated", lambda: None)()
        try:
            export(program, platform, kernels_compiled)
        except Exception as err:  # noqa: BLE001 - every error is classified by the caller
            return first_line(err)
    for w in caught:
        if issubclass(w.category, DeprecationWarning | FutureWarning):
            text = str(w.message).strip().splitlines()[0]
            if len(text) > 160:  # the reason, not the message, must survive
                text = text[:159] + "…"
            why = "a deprecation is an error under the course's strict warnings"
            return f"{w.category.__name__}: {text} ({why})"
    return ""


def _lower(program: Program, platform: str, control: dict[str, str]) -> Outcome:
    name = program.label()
    if program.callbacks:
        # The callbacks cannot lower here; the rest of the program can, with them stubbed.
        why = f"host callback ({', '.join(program.callbacks)}) lowers only on a live backend"
        stubbed = replace(program, jaxpr=callbacks_off(program.jaxpr))
        reason = _try(stubbed, platform)
        if reason:
            return Outcome(name, platform, FAIL, f"{reason} (host callbacks stubbed)")
        return Outcome(name, platform, SKIP, f"{why}; the rest lowers")
    reason = _try(program, platform)
    if not reason:
        return Outcome(name, platform, PASS)
    if CONTROL not in control:
        # As the notebook ran it here: interpreted kernels (the CPU has no Pallas backend).
        control[CONTROL] = _try(program, CONTROL, kernels_compiled=False)
    if control[CONTROL]:
        why = f"not exportable for {CONTROL} either: {control[CONTROL]}"
        return Outcome(name, platform, SKIP, why)
    return Outcome(name, platform, FAIL, reason)


def check(program: Program, platforms: Sequence[str] = PLATFORMS) -> list[Outcome]:
    """Lower ``program`` for each platform: one :class:`Outcome` each."""
    control: dict[str, str] = {}
    return [_lower(program, p, control) for p in platforms]
