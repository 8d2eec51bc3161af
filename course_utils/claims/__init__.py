"""``course claims``: the source articles' claims, re-measured on this machine.

Modules, each importing only those above it:

- ``verdicts``: the one rule: ``Claim``, ``Measured``, ``Outcome``, the verdict words, ``verdict``, ``evaluate``
- ``registry``: the claims (``CLAIMS``), their sources, and which frameworks and device kinds each needs
- ``devices``: which device kinds to measure on (``plan_devices``, ``detect_devices``), and why one is not testable
- ``report``: the Markdown and terminal tables, ``ClaimsReport``, ``claims.json`` and the plot
- ``harness``: what every benchmark runs inside (``Ctx``, matched float32 precision, per-round ratios)
- ``encoder``: the transformer encoder pair shared by the latency and training benchmarks
- ``transforms``: third derivatives (grad³) and vmap over CartPole environments
- ``latency``: compile warm-up (first call), batch-1 latency, recompiling for new shapes
- ``torch_compile``: ``torch.compile`` against eager PyTorch (matmul, fusion, a train step)
- ``training``: a training step in both frameworks: throughput, and GPU memory with donation
- ``benchmarks``: every claim's benchmark (``BENCHMARKS``) and ``measure``, one claim on one device kind
- ``command``: ``run`` (measure, judge, report) and the ``claims`` command

What a lesson uses is re-exported here (``from course_utils import claims``, then
``claims.run(...)``, ``claims.verdict(...)``, ``claims.Measured(...)``). Importing
this package or any of its modules imports neither jax, torch nor flax; the
benchmarks import them when they run.
"""

from __future__ import annotations

from course_utils.claims.command import run
from course_utils.claims.report import ClaimsReport, plot, table, text_table
from course_utils.claims.verdicts import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    NOT_TESTABLE,
    SKIPPED,
    VERDICTS,
    Claim,
    Measured,
    NotTestable,
    Outcome,
    SkippedInSmoke,
    evaluate,
    paired_ratios,
    quartiles,
    verdict,
)

__all__ = [
    "DOES_NOT_HOLD",
    "HOLDS",
    "INCONCLUSIVE",
    "NOT_TESTABLE",
    "SKIPPED",
    "VERDICTS",
    "Claim",
    "ClaimsReport",
    "Measured",
    "NotTestable",
    "Outcome",
    "SkippedInSmoke",
    "evaluate",
    "paired_ratios",
    "plot",
    "quartiles",
    "run",
    "table",
    "text_table",
    "verdict",
]
