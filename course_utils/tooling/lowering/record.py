"""Record the programs JAX compiles while a notebook runs; lower each for GPUs and TPUs.

Loaded in a kernel as an IPython extension (the test suite's IPython startup does it
when ``COURSE_LOWERING_CHECK=1``), it wraps ``jax._src.pjit._resolve_and_lower``,
the step every ``jax.jit`` call takes at a cache miss, once JAX is imported (it
imports nothing itself). After each cell, each new program is lowered for
:data:`~course_utils.tooling.lowering.export.PLATFORMS` by
:func:`course_utils.tooling.lowering.export.check`; :func:`write_report` writes what was
found, cell by cell, as JSON.

Skipped without a check: the one-primitive programs JAX compiles for eager operations
(``jnp.sin(x)`` outside ``jit``), counted by primitive, and programs already checked
(the same jaxpr text and input types). An eager ``pallas_call`` or any eager operation
holding a jaxpr (``lax.scan``, ``shard_map``) is checked.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from course_utils.tooling.lowering import export as lowering

ENV = "COURSE_LOWERING_CHECK"
STARTUP_NAME = "01-course-lowering-check.py"
STARTUP_SCRIPT = (
    "# Written by course_utils.tooling.lowering.record: with COURSE_LOWERING_CHECK=1,\n"
    "# every program JAX compiles is lowered for GPUs and TPUs after its cell.\n"
    "import os\n"
    f"if os.environ.get({ENV!r}) == '1':\n"
    "    get_ipython().extension_manager.load_extension(\n"
    "        'course_utils.tooling.lowering.record'\n"
    "    )\n"
)
_TARGET = "jax._src.pjit"


def _is_trivial(jaxpr: Any) -> bool:
    """One primitive (or none), holding no jaxpr: what an eager operation compiles."""
    found = jaxpr.jaxpr.eqns
    if len(found) > 1:
        return False
    return not found or (
        found[0].primitive.name != "pallas_call"
        and not any(
            True for v in found[0].params.values() for _ in lowering.jaxprs_in(v)
        )
    )


def _caller() -> str:
    """The notebook function running now (``cell code`` at a cell's top level, else ``""``)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if "ipykernel_" in path or path.startswith("<ipython-input"):
            name = frame.f_code.co_name
            return "cell code" if name == "<module>" else name
        frame = frame.f_back
    return ""


def _name(jaxpr: Any, name: str) -> str:
    """Who ran what: ``step``, or ``softmax_pallas: pallas_call`` for JAX's own programs.

    An eager operation or a JAX wrapper (``pallas_call``'s jit is named ``wrapped``) is
    named by its primitive when it holds one, after the notebook function that ran it.
    """
    info = getattr(jaxpr.jaxpr.debug_info, "func_src_info", None) or ""
    found = jaxpr.jaxpr.eqns
    if "/jax/_src/" not in info.replace("\\", "/"):
        return name  # the notebook's own function
    name = found[0].primitive.name if len(found) == 1 else name
    caller = _caller()
    return f"{caller}: {name}" if caller not in ("", name) else name


class Recorder:
    """The programs seen so far, those not yet checked, and the outcomes, cell by cell."""

    def __init__(self, platforms: tuple[str, ...] = lowering.PLATFORMS) -> None:
        self.platforms = platforms
        self.pending: list[lowering.Program] = []
        self.seen: set[str] = set()
        self.cells: list[dict[str, Any]] = []
        self.eager: Counter[str] = Counter()
        self.repeats = 0
        self.seconds = 0.0
        self.errors: list[str] = []
        # While checking, the checker's own compilations are not recorded.
        self.busy = False
        # JAX's default backend, read at the first check.
        self.backend: str | None = None

    def record(self, meta_tys: Any, params: dict[str, Any]) -> None:
        """Keep one program that ``jit`` is about to lower (``_resolve_and_lower``'s args)."""
        jaxpr = params["jaxpr"]
        if _is_trivial(jaxpr):
            eqn = jaxpr.jaxpr.eqns[:1]
            self.eager[eqn[0].primitive.name if eqn else "(no operation)"] += 1
            return
        import jax
        from jax.sharding import Sharding

        # jax 0.10 passes each argument's type (aval and sharding); jax 0.7 passes the
        # arguments themselves, a Python scalar among them.
        specs = tuple(
            lowering.spec_of(
                m.aval if hasattr(m, "aval") else jax.typeof(m),
                s if isinstance(s, Sharding) else getattr(m, "sharding", None),
            )
            for m, s in zip(meta_tys, params["in_shardings"], strict=True)
        )
        outs = tuple(params["out_shardings"])
        self.pending.append(
            lowering.Program(
                _name(jaxpr, params.get("name") or "?"),
                jaxpr,
                specs,
                outs if any(isinstance(s, Sharding) for s in outs) else None,
                params.get("ctx_mesh"),
                lowering.settings_now(),
            )
        )

    def _key(self, program: lowering.Program) -> str:
        text = (
            f"{program.name}\n{program.jaxpr}\n{program.specs}\n{program.out_shardings}"
        )
        return hashlib.sha1(text.encode()).hexdigest()

    def flush(self, cell: int | None, source: str) -> None:
        """Lower the programs recorded since the last call; file them under this cell.

        Never raises (an error in IPython's ``post_run_cell`` fails the cell): a crash
        of the checker is kept in ``errors``, which the test reports as a failure.
        """
        programs, self.pending = self.pending, []
        start, self.busy = time.perf_counter(), True
        outcomes: list[dict[str, Any]] = []
        try:
            if programs and not self._off():
                for program in programs:
                    key = self._key(program)
                    if key in self.seen:
                        self.repeats += 1
                        continue
                    self.seen.add(key)
                    outcomes += [
                        vars(o) for o in lowering.check(program, self.platforms)
                    ]
        except Exception as err:  # noqa: BLE001 - a checker crash is reported, not raised
            self.errors.append(f"cell {cell}: {lowering.first_line(err)}")
        finally:
            self.busy = False
            self.seconds += time.perf_counter() - start
        if outcomes:
            # IPython's execution count (nbval runs cells without one: the test names
            # the cell by its source instead, see cell_labels)
            entry = {"execution_count": cell, "source": source, "outcomes": outcomes}
            self.cells.append(entry)

    def _off(self) -> bool:
        """On a GPU or TPU the notebook built its programs for that chip: nothing to check."""
        if self.backend is None:
            import jax

            self.backend = jax.default_backend()
        return self.backend != "cpu"

    def disabled(self) -> str:
        """Why nothing was checked (``""`` when the checks ran)."""
        if self.backend in (None, "cpu"):
            return ""
        return (
            f"JAX runs on {self.backend} here: the notebook built its programs for it "
            "(interpret flags, compiler parameters), and running them tests them"
        )

    def report(self) -> dict[str, Any]:
        """Everything recorded, as JSON-ready data."""
        return {
            "platforms": list(self.platforms),
            "disabled": self.disabled(),
            "programs": len(self.seen),
            "repeats": self.repeats,
            "eager": dict(self.eager),
            "seconds": round(self.seconds, 3),
            "errors": self.errors,
            "cells": self.cells,
        }


def patch(pjit: Any, recorder: Recorder) -> None:
    """Wrap ``pjit._resolve_and_lower`` so that each lowering for this machine is recorded."""
    original = getattr(pjit, "_resolve_and_lower", None)
    if (
        original is None
    ):  # another jax: record nothing, say so, and never break the import
        recorder.errors.append(
            "this jax has no pjit._resolve_and_lower: nothing recorded"
        )
        return
    if getattr(original, "_course_recorder", None) is not None:
        return

    def _resolve_and_lower(meta_tys: Any, **params: Any) -> Any:
        if params.get("lowering_platforms") is None and not recorder.busy:
            try:
                recorder.record(meta_tys, params)
            except Exception as err:  # noqa: BLE001 - never break the notebook's own call
                recorder.errors.append(f"recording {params.get('name')}: {err!r}")
        return original(meta_tys, **params)

    _resolve_and_lower._course_recorder = recorder  # type: ignore[attr-defined]
    pjit._resolve_and_lower = _resolve_and_lower


class _PatchOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Patches ``jax._src.pjit`` right after it is first imported."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.spec: Any = None

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _TARGET or self.spec is not None:
            return None
        self.spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if self.spec is None:
            return None
        self.inner, self.spec.loader = self.spec.loader, self
        return self.spec

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        patch(module, self.recorder)


RECORDER = Recorder()  # the kernel's one recorder


def install(recorder: Recorder = RECORDER) -> None:
    """Record from now on: patch JAX now if it is loaded, else as soon as it loads."""
    if _TARGET in sys.modules:
        patch(sys.modules[_TARGET], recorder)
    elif not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport(recorder))


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext course_utils.tooling.lowering.record``: check after every cell."""
    install(RECORDER)

    def after(result: Any) -> None:
        RECORDER.flush(result.execution_count, result.info.raw_cell)

    ip.events.register("post_run_cell", after)


def write_report(path: str) -> None:
    """Check what is still pending, then write :meth:`Recorder.report` to ``path``."""
    RECORDER.flush(None, "")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(RECORDER.report(), indent=1), encoding="utf-8")


def cell_labels(report: dict[str, Any], sources: list[str]) -> list[str]:
    """``Cell 12`` (nbval's count of code cells) for each reported cell, in order."""
    labels, start = [], 0
    for entry in report["cells"]:
        source = entry["source"]
        found = sources.index(source, start) if source in sources[start:] else None
        if found is None and source in sources:
            found = sources.index(source)
        if found is not None:
            start = found
            labels.append(f"Cell {found}")
        else:
            labels.append("after the last cell" if not source else "an unknown cell")
    return labels


def findings(report: dict[str, Any], sources: list[str]) -> tuple[list[str], list[str]]:
    """``(failures, skips)``: a line each, ``Cell 12, softmax (kernel k), cuda: ...``.

    ``sources`` are the notebook's code cells in order; a checker crash is a failure.
    """
    failures = [f"the checker itself: {e}" for e in report["errors"]]
    skips = []
    for label, entry in zip(cell_labels(report, sources), report["cells"], strict=True):
        for o in entry["outcomes"]:
            line = f"{label}, {o['function']}, {o['platform']}: {o['reason']}"
            if o["status"] == lowering.FAIL:
                failures.append(line)
            elif o["status"] == lowering.SKIP:
                skips.append(line)
    return failures, skips


def counts(report: dict[str, Any]) -> dict[str, Counter[str]]:
    """``{"cuda": Counter(pass=12, fail=1), ...}``: the outcomes by platform."""
    out: dict[str, Counter[str]] = {p: Counter() for p in report["platforms"]}
    for entry in report["cells"]:
        for o in entry["outcomes"]:
            out[o["platform"]][o["status"]] += 1
    return out


def ipython_startup(root: str) -> None:
    """Add the startup script that loads the extension to IPython directory ``root``."""
    startup = Path(root) / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    path = startup / STARTUP_NAME
    if not path.exists() or path.read_text(encoding="utf-8") != STARTUP_SCRIPT:
        path.write_text(STARTUP_SCRIPT, encoding="utf-8")
