"""Cold compilation caches: JAX's persistent cache off, Inductor in an empty directory.

A first call from cold caches is what a new process without a disk cache pays;
:func:`cold_inductor_cache` gives torch.compile an empty, throw-away cache
directory, and :func:`jax_persistent_cache_off` switches JAX's persistent
cache off for one call.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


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
