"""Cold compilation caches: JAX's persistent cache off, Inductor in an empty directory.

A first call from cold caches is what a new process without a disk cache pays;
:func:`cold_inductor_cache` gives torch.compile an empty, throw-away cache
directory, and :func:`jax_persistent_cache_off` switches JAX's persistent
cache off for one call. :func:`new_process_first_calls` times the other side:
a new process's first call with the disk caches empty, then filled.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass


def jax_persistent_cache_on() -> bool:
    """Whether JAX's persistent compilation cache is configured (a directory, enabled)."""
    import jax

    return bool(
        jax.config.jax_compilation_cache_dir and jax.config.jax_enable_compilation_cache
    )


@contextlib.contextmanager
def jax_persistent_cache_off() -> Iterator[None]:
    """Switch JAX's persistent compilation cache off inside the block, then restore it."""
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    saved = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()  # JAX decides once whether the cache is used
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", saved)
        compilation_cache.reset_cache()


def _clear_inductor_memory() -> None:
    """Drop Inductor's in-memory code caches (compiled modules keyed by their source)."""
    import torch._inductor.utils as inductor_utils

    clear = getattr(inductor_utils, "clear_caches", None) or getattr(
        inductor_utils, "clear_inductor_caches", None
    )
    if clear is not None:
        clear()


def _probe_vector_isa() -> None:
    """Let Inductor find which vector instructions this CPU has, where it keeps the answer.

    Inductor probes the CPU by compiling and loading a small C++ program per
    instruction set (seconds each), caching the programs in its cache
    directory and the answer in memory. It is a fact about the machine, not
    part of compiling a graph: asked here, before the empty directory, it is
    answered once per process from the usual directory.
    """
    try:
        from torch._inductor import cpu_vec_isa
    except ImportError:  # pragma: no cover - another torch layout
        return
    probe = getattr(cpu_vec_isa, "valid_vec_isa_list", None)
    if probe is not None:
        probe()


@contextlib.contextmanager
def cold_inductor_cache() -> Iterator[str]:
    """An empty, throw-away Inductor cache directory for the block (yields its path).

    Inside it torch.compile finds no FX graph, AOTAutograd or kernel cache
    entry and no in-memory compiled code, and remote caches are off, so it
    compiles from scratch. Which vector instructions the CPU supports (a
    probe of the machine, not of the graph) is settled before, outside it.
    Call ``torch._dynamo.reset()`` first for a cold start of Dynamo too.
    Outside the block the previous directory is back.
    """
    import tempfile

    import torch._inductor.config as inductor_config

    _probe_vector_isa()
    saved = {
        k: os.environ.get(k) for k in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
    }
    with tempfile.TemporaryDirectory(prefix="course-inductor-") as path:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
        os.environ["TRITON_CACHE_DIR"] = os.path.join(path, "triton")
        _clear_inductor_memory()
        try:
            remote = ("fx_graph_remote_cache", "autotune_remote_cache")
            remote += ("bundled_autotune_remote_cache",)
            off = {k: False for k in remote if hasattr(inductor_config, k)}
            with inductor_config.patch(off):
                yield path
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _clear_inductor_memory()


# The child process of new_process_first_calls: JAX's disk cache in argv[1], storing
# every program (by default only those that took a second to compile); Inductor's FX
# graph cache is on by default, in TORCHINDUCTOR_CACHE_DIR. Two matmuls, which
# Inductor hands to BLAS, so no C++ compiler runs. One line per framework:
# first-call seconds, cache hits, device.
_CACHE_CHILD = """
import sys
import course_utils.strict; course_utils.strict.install()
import jax, jax.numpy as jnp, torch
from course_utils import timing
from torch._dynamo.utils import counters
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
hits = []
jax.monitoring.register_event_listener(
    lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)

def f(x):
    return x @ x @ x

first = timing.bench(jax.jit(f), jnp.eye(64), target_s=0.01, min_repeats=1).first_call_s
print(first, len(hits), jax.default_backend())
first = timing.bench(torch.compile(f), torch.eye(64), target_s=0.01, min_repeats=1).first_call_s
print(first, counters["inductor"]["fxgraph_cache_hit"], "cpu")
"""


@dataclass
class NewProcessFirstCall:
    """One framework's first call in a new process, with its disk cache empty, then filled."""

    framework: str
    device: str
    empty_s: float
    empty_hits: int
    filled_s: float
    filled_hits: int

    def __str__(self) -> str:
        from course_utils.timing.measurement import format_seconds

        return (
            f"{self.framework}, new process on the {self.device.upper()}: first call "
            f"{format_seconds(self.empty_s)} with an empty cache ({self.empty_hits} hits), "
            f"{format_seconds(self.filled_s)} with it filled ({self.filled_hits} hits)"
        )


def new_process_first_calls() -> list[NewProcessFirstCall]:
    """Time a first call in two new processes that share one empty cache folder.

    Each process sets ``jax_compilation_cache_dir`` (and lowers
    ``jax_persistent_cache_min_compile_time_secs`` to 0) and gets its own
    ``TORCHINDUCTOR_CACHE_DIR``; the second finds what the first stored. The
    hit counters say whether a cache was read: JAX's also counts the small
    programs that build ``jnp.eye(64)``. Each time is one call in one process,
    so no verdict is drawn from it. ``env.child_env``: on a TPU, which one
    process at a time may open, the children's JAX uses the CPU.
    """
    from course_utils import env

    with tempfile.TemporaryDirectory(prefix="course-caches-") as cache:
        child_env = {
            **env.child_env(),
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor"),
        }
        runs = []
        for _ in range(2):  # the first fills the cache, the second reads it
            out = subprocess.run(
                [sys.executable, "-c", _CACHE_CHILD, os.path.join(cache, "jax")],
                env=child_env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append([line.split() for line in out.stdout.splitlines()[-2:]])
    return [
        NewProcessFirstCall(
            name,
            empty[2],
            float(empty[0]),
            int(empty[1]),
            float(filled[0]),
            int(filled[1]),
        )
        for name, empty, filled in zip(
            ("jax.jit", "torch.compile"), runs[0], runs[1], strict=True
        )
    ]
