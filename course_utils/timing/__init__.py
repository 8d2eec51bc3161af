"""Honest timing for JAX and PyTorch: synchronise, separate compile from steady state, repeat.

The timing rules (CONTRIBUTING.md, "Timing") live here so notebooks never hand-roll
a timer: every output is synchronised inside the timed region, the first call is
timed on its own, the garbage collector is off while timing, repetition adapts to
a target time, the median and IQR are reported, noisy runs and compilations in
the timed region are flagged, and compared variants are checked for equal results
and timed interleaved. Modules, each importing only those above it:

- ``synchronize``: ``sync`` (wait for every array of a pytree), ``device_kinds``, ``mixed_devices``
- ``counters``: ``CompileCounter`` and the frameworks' own records of their compilations
- ``measurement``: ``bench``, one function timed adaptively, and its ``Measurement``
- ``comparison``: ``compare``, variants checked for equal results then timed interleaved, ``Comparison``
- ``caches``: ``cold_inductor_cache`` and ``jax_persistent_cache_off``, for cold first calls; ``new_process_first_calls``
- ``compilation``: ``compile_report`` (first call against steady state and eager), ``compile_table``, ``break_even_calls``
- ``recompilation``: ``no_recompile``, a block in which nothing may compile

Lessons use the names below (``from course_utils import timing``, then
``timing.compare(...)``). Importing this package imports neither jax nor torch.
"""

from __future__ import annotations

from course_utils.timing.caches import (
    cold_inductor_cache,
    jax_persistent_cache_off,
    new_process_first_calls,
)
from course_utils.timing.comparison import MIN_BLOCK_S, MIN_ROUNDS, Comparison, compare
from course_utils.timing.compilation import (
    EAGER,
    CompileReport,
    break_even_calls,
    compile_report,
    compile_table,
    format_calls,
)
from course_utils.timing.counters import CompileCounter
from course_utils.timing.measurement import (
    NOISE_THRESHOLD,
    Measurement,
    bench,
    format_seconds,
    thread_settings,
)
from course_utils.timing.recompilation import RecompilationError, no_recompile
from course_utils.timing.synchronize import device_kinds, mixed_devices, sync

__all__ = [
    "EAGER",
    "MIN_BLOCK_S",
    "MIN_ROUNDS",
    "NOISE_THRESHOLD",
    "CompileCounter",
    "CompileReport",
    "Comparison",
    "Measurement",
    "RecompilationError",
    "bench",
    "break_even_calls",
    "cold_inductor_cache",
    "jax_persistent_cache_off",
    "compare",
    "compile_report",
    "compile_table",
    "device_kinds",
    "format_calls",
    "format_seconds",
    "mixed_devices",
    "new_process_first_calls",
    "no_recompile",
    "sync",
    "thread_settings",
]
