"""``course claims``: the source articles' claims, re-measured on this machine.

Modules, each importing only those above it:

- ``verdict_rule``: the one rule (``rule``): ``Claim``, ``Pairing``, ``Measured``, ``Outcome``, the verdict words, the interval
- ``registry``: the claims: the source articles they cite (``SOURCES``), those ``course claims`` measures (``CLAIMS``), those only lessons judge (``LESSON_CLAIMS``, one block per lesson), ``get``, and which frameworks and device kinds each needs
- ``verdicts``: what lessons call: ``judge``, ``faster``, ``fact``, ``not_testable``, ``skipped`` (a ``Verdict`` with its generated sentence), ``compact`` (several verdicts, a line each), and ``evaluate``
- ``results``: result files from several machines: ``fingerprint``, ``load`` (checked), ``merge_table``, ``shipped``
- ``devices``: which device kinds to measure on (``plan_devices``, ``detect_devices``), and why one is not testable
- ``report``: the Markdown and terminal tables, ``ClaimsReport``, ``claims.json`` and the plot
- ``harness``: what every benchmark runs inside (``Ctx``, matched float32 precision, per-round ratios)
- ``encoder``: the transformer encoder pair shared by the latency and training benchmarks
- ``transforms``: third derivatives (grad³) and vmap over CartPole environments
- ``jit``: JAX alone: eager against ``jax.jit``, fused kernels, the first call, ``lax.scan``'s compile time
- ``latency``: compile warm-up (first call), batch-1 latency, recompiling for new shapes
- ``torch_compile``: ``torch.compile`` against eager PyTorch (matmul, fusion, a train step)
- ``training``: a training step in both frameworks: throughput, and GPU memory with donation
- ``benchmarks``: every claim's benchmark (``BENCHMARKS``) and ``measure``, one claim on one device kind
- ``command``: ``run`` (measure, judge, report) and the ``claims`` command

What a lesson uses is re-exported here (``from course_utils import claims``, then
``claims.judge("compile-training", comparison, "PyTorch eager", "torch.compile")``,
``claims.run(...)``, ``claims.Measured(...)``): every verdict a lesson prints comes
from ``judge``, ``faster``, ``fact`` or ``not_testable``, and a break-even count
from ``break_even`` (judged only when the per-call verdict it rests on is). Importing
this package or any of its modules imports neither jax, torch nor flax; the
benchmarks import them when they run.
"""

from __future__ import annotations

from course_utils.claims.command import run
from course_utils.claims.registry import get
from course_utils.claims.report import ClaimsReport, plot, table, text_table
from course_utils.claims.verdict_rule import (
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
    median_interval,
    paired_ratios,
    quartiles,
    rule,
)
from course_utils.claims.verdicts import (
    Verdict,
    break_even,
    compact,
    evaluate,
    fact,
    faster,
    judge,
    not_testable,
    skipped,
)
from course_utils.timing.comparison import read_verdicts_with

# timing's plots and compile reports read a pair as its verdict does
read_verdicts_with(faster)

__all__ = [
    "compact",
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
    "Verdict",
    "break_even",
    "evaluate",
    "fact",
    "faster",
    "get",
    "judge",
    "median_interval",
    "not_testable",
    "paired_ratios",
    "plot",
    "quartiles",
    "rule",
    "run",
    "skipped",
    "table",
    "text_table",
]
