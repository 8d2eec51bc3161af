"""course_utils.timing as a package: every name lessons, claims and benchmarks use, light."""

from __future__ import annotations

import subprocess
import sys

from course_utils import timing
from course_utils.timing import counters

USED = (
    "CompileCounter CompileReport Comparison EAGER MIN_ROUNDS Measurement "
    "NOISE_THRESHOLD RecompilationError bench break_even_calls cold_inductor_cache "
    "compare compile_report compile_table device_kinds format_calls format_seconds "
    "jax_persistent_cache_off mixed_devices new_process_first_calls no_recompile sync "
    "thread_settings"
).split()


def test_the_package_offers_every_name_in_use():
    assert sorted(timing.__all__) == sorted(USED + ["MIN_BLOCK_S"])
    assert all(callable(getattr(timing, n)) for n in USED if not n.isupper())
    assert timing.CompileCounter is counters.CompileCounter


def test_importing_timing_imports_no_framework():
    code = (
        "import sys, course_utils.timing\n"
        "print([m for m in ('jax', 'torch', 'flax') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
