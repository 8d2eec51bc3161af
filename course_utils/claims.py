"""``course claims``: the source articles' popular claims, re-measured on this machine.

Each :class:`Claim` names what an article said, where, and what ratio would
confirm it (``threshold``: the direction of the claim, or the low end of a
claimed range). A benchmark in :mod:`course_utils.claim_benchmarks` measures
the ratio several times (paired, interleaved rounds from
:func:`course_utils.timing.compare`), and :func:`verdict` turns the samples
into one of:

- **holds**: the lower quartile of the ratio is above the threshold;
- **does not hold**: the upper quartile is below it;
- **inconclusive**: the interquartile range straddles it (noise or a tie);
- **not testable here**: the claim needs hardware or scale this machine lacks;
- **skipped in smoke mode**: too slow for smoke mode; run without ``--smoke``.

:func:`run` measures, prints a table, and writes ``claims.json`` and
``claims.png``. Importing this module imports neither jax nor torch.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from course_utils.notebooks import CourseError

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
SKIPPED = "skipped in smoke mode"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE, SKIPPED)

SOURCES = {
    "000": "000 (2026 selection guide)",
    "001": "001 (PyTorch 2.0 vs JAX for decision makers)",
    "004": "004 (is JAX autodiff faster?)",
}


@dataclass(frozen=True)
class Claim:
    """A popular claim and the ratio that would confirm it.

    ``ratio`` says what is divided by what, oriented so that a larger number
    favours the claim; ``threshold`` is the ratio above which it holds.
    """

    id: str
    text: str
    source: str
    claimed: str
    ratio: str
    threshold: float

    def __post_init__(self) -> None:
        if not (isinstance(self.threshold, int | float) and self.threshold > 0):
            raise ValueError(f"Claim {self.id!r}: threshold must be a positive number")


class NotTestable(Exception):
    """Raised by a benchmark when this machine cannot test the claim; the message says why."""


class SkippedInSmoke(Exception):
    """Raised by a benchmark that only runs outside smoke mode; the message says why."""


@dataclass
class Measured:
    """What a benchmark returns: ratio samples (claim's orientation) and how they were taken."""

    samples: list[float]
    what: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """A claim, what was measured, and the verdict."""

    claim: Claim
    verdict: str
    why: str
    samples: list[float] = field(default_factory=list)
    what: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def quartiles(self) -> tuple[float, float] | None:
        return quartiles(self.samples) if self.samples else None

    def measured_text(self) -> str:
        if not self.samples:
            return "—"
        q1, q3 = self.quartiles
        return f"{self.median:.2f}x (IQR {q1:.2f}–{q3:.2f}, n={len(self.samples)})"

    def to_dict(self) -> dict[str, Any]:
        q = self.quartiles
        return {
            **asdict(self.claim),
            "verdict": self.verdict,
            "why": self.why,
            "what": self.what,
            "median": self.median,
            "q1": q[0] if q else None,
            "q3": q[1] if q else None,
            "n": len(self.samples),
            "samples": self.samples,
            "details": self.details,
            "seconds": round(self.seconds, 2),
        }


# --------------------------------------------------------------- verdicts


def quartiles(samples: Sequence[float]) -> tuple[float, float]:
    """Lower and upper quartile (inclusive method); both equal the value for one sample."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("quartiles: no samples")
    if len(values) == 1:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def verdict(samples: Sequence[float], threshold: float) -> tuple[str, str]:
    """``(verdict, why)`` for ratio samples against a claim's threshold."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("verdict: no samples")
    bad = [s for s in values if not math.isfinite(s) or s <= 0]
    if bad:
        raise ValueError(f"verdict: ratios must be positive and finite, got {bad[:3]}")
    q1, q3 = quartiles(values)
    med = statistics.median(values)
    if q1 > threshold:
        return HOLDS, f"even the lower quartile {q1:.2f}x is above {threshold:g}x"
    if q3 < threshold:
        return DOES_NOT_HOLD, f"even the upper quartile {q3:.2f}x is below {threshold:g}x"
    return INCONCLUSIVE, (
        f"median {med:.2f}x, but the IQR {q1:.2f}–{q3:.2f}x straddles {threshold:g}x"
    )


def paired_ratios(numerator: Sequence[float], denominator: Sequence[float]) -> list[float]:
    """Per-round ratios of two interleaved timing series (round i of each)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError(
            f"paired_ratios: need two equally long, non-empty series, got "
            f"{len(numerator)} and {len(denominator)}"
        )
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def evaluate(claim: Claim, measure: Callable[[], Measured]) -> Outcome:
    """Run one benchmark and judge the claim (a benchmark may raise NotTestable/SkippedInSmoke)."""
    start = time.perf_counter()
    try:
        m = measure()
    except NotTestable as why:
        return Outcome(claim, NOT_TESTABLE, str(why), seconds=time.perf_counter() - start)
    except SkippedInSmoke as why:
        return Outcome(claim, SKIPPED, str(why), seconds=time.perf_counter() - start)
    v, why = verdict(m.samples, claim.threshold)
    return Outcome(claim, v, why, list(m.samples), m.what, dict(m.details), time.perf_counter() - start)


# ------------------------------------------------------------------ output


def table(outcomes: Iterable[Outcome]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| claim | source | claimed | measured here | verdict | why |",
        "|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        what = f" ({o.what})" if o.what else ""
        cells = [o.claim.text, o.claim.source, o.claim.claimed, o.measured_text() + what,
                 f"**{o.verdict}**", o.why]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def text_table(outcomes: Iterable[Outcome]) -> str:
    """The results for a terminal: one block per claim."""
    blocks = []
    for o in outcomes:
        blocks.append(
            f"[{o.verdict}] {o.claim.text}\n"
            f"    source: {o.claim.source}; claimed: {o.claim.claimed}\n"
            f"    measured: {o.measured_text()}  ratio = {o.claim.ratio}\n"
            + (f"    how: {o.what}\n" if o.what else "")
            + f"    why: {o.why}"
        )
    return "\n".join(blocks)


@dataclass
class ClaimsReport:
    """Everything :func:`run` produced; shows as a table in a notebook."""

    outcomes: list[Outcome]
    smoke: bool
    machine: dict[str, Any]
    seconds: float
    json_path: Path | None = None
    png_path: Path | None = None

    def outcome(self, claim_id: str) -> Outcome:
        for o in self.outcomes:
            if o.claim.id == claim_id:
                return o
        raise KeyError(f"no claim {claim_id!r}; have {[o.claim.id for o in self.outcomes]}")

    def counts(self) -> dict[str, int]:
        return {v: sum(o.verdict == v for o in self.outcomes) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "smoke": self.smoke,
            "seconds": round(self.seconds, 1),
            "machine": self.machine,
            "claims": [o.to_dict() for o in self.outcomes],
        }

    def _repr_markdown_(self) -> str:
        mode = "smoke mode" if self.smoke else "full mode"
        warning = f"\n\n**Warning:** {self.machine['warning']}" if "warning" in self.machine else ""
        return (
            table(self.outcomes)
            + f"\n\n(on this machine: {self.machine.get('summary', '')}; {mode}, "
            f"{self.seconds:.0f} s){warning}"
        )

    def __str__(self) -> str:
        return text_table(self.outcomes)


def write_json(report: ClaimsReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    return path


_COLOURS = {HOLDS: "#2e7d32", DOES_NOT_HOLD: "#c62828", INCONCLUSIVE: "#f9a825"}


def plot(outcomes: Sequence[Outcome], ax=None):
    """Measured ratio (median, IQR whiskers, log scale) per claim, threshold marked; returns ax."""
    from course_utils.plots import _axes

    ax = _axes(ax)
    labels, y = [], 0
    for o in outcomes:
        label = o.claim.id
        if o.samples:
            q1, q3 = o.quartiles
            med = o.median
            ax.errorbar(
                med, y, xerr=[[med - q1], [q3 - med]], fmt="o", capsize=4,
                color=_COLOURS.get(o.verdict, "#555555"),
            )
            ax.plot([o.claim.threshold] * 2, [y - 0.35, y + 0.35], color="k", lw=1.5)
        else:
            ax.annotate(f"  {o.verdict}", (1.0, y), va="center", fontsize=8, color="#555555")
        labels.append(label)
        y += 1
    ax.set_xscale("log")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first claim on top, none on the frame
    ax.set_xlabel("measured ratio (median, IQR); black tick: where the claim starts to hold")
    ax.set_title("popular claims, re-measured on this machine")
    ax.grid(axis="x", alpha=0.3)
    return ax


def save_plot(outcomes: Sequence[Outcome], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.5 * len(outcomes) + 1.5))
    plot(outcomes, ax=ax)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -------------------------------------------------------------------- run


def _machine() -> dict[str, Any]:
    from course_utils import env, timing

    info = dict(env.report().info)
    info["threads"] = timing.thread_settings()
    info["summary"] = (
        f"benchmarks on the CPU ({info.get('cpu_count')} cores, torch {info.get('torch_threads')} "
        f"threads; accelerator present: {info.get('accelerator', 'cpu')})"
    )
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        info["load_average_1min"] = round(load, 2)
        info["summary"] += f", load average {load:.1f}"
        if load >= (os.cpu_count() or 1):
            info["warning"] = (
                f"the machine was busy (load {load:.1f} on {os.cpu_count()} cores): other "
                "programs competed for the CPU, so these timings are noisier than usual"
            )
    return info


def run(
    *,
    smoke: bool | None = None,
    out: str | Path | None = None,
    only: Sequence[str] | None = None,
    measured: Mapping[str, Measured] | None = None,
    verbose: bool = True,
) -> ClaimsReport:
    """Measure every claim (or ``only`` those ids), print the table, write JSON and PNG to ``out``.

    ``measured`` supplies measurements already taken (a notebook that timed the
    same thing in its own cells) by claim id; those claims are judged from them
    instead of being measured again.
    """
    from course_utils import claim_benchmarks, config

    smoke = config.smoke(smoke)
    ids = [c.id for c in claim_benchmarks.CLAIMS]
    measured = dict(measured or {})
    for where, given in (("claim", only or []), ("measured claim", measured)):
        unknown = [i for i in given if i not in ids]
        if unknown:
            raise CourseError(f"unknown {where} {unknown[0]!r}; claims: {', '.join(ids)}")
    bad = [k for k, v in measured.items() if not isinstance(v, Measured)]
    if bad:
        raise TypeError(f"run: measured[{bad[0]!r}] must be a claims.Measured")
    out_dir = Path(out) if out is not None else None
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise CourseError(f"--out {out_dir} is a file; give a folder")
    start = time.perf_counter()
    outcomes = []
    for claim in claim_benchmarks.CLAIMS:
        if only and claim.id not in only:
            continue
        if verbose:
            print(f"measuring {claim.id} ...", flush=True)
        if claim.id in measured:
            given = measured[claim.id]
            given.details.setdefault("measured_by", "the caller (already timed)")
            outcome = evaluate(claim, lambda g=given: g)
        else:
            outcome = evaluate(claim, lambda c=claim: claim_benchmarks.measure(c.id, smoke=smoke))
        if verbose:
            print(f"  {outcome.verdict}: {outcome.measured_text()} ({outcome.seconds:.1f} s)", flush=True)
        outcomes.append(outcome)
    report = ClaimsReport(outcomes, smoke, _machine(), time.perf_counter() - start)
    if out_dir is not None:
        report.json_path = write_json(report, out_dir / "claims.json")
        report.png_path = save_plot(outcomes, out_dir / "claims.png")
    if verbose:
        print()
        print(text_table(outcomes))
        print(f"\n{len(outcomes)} claims in {report.seconds:.0f} s "
              f"({'smoke' if smoke else 'full'} mode); {report.machine['summary']}")
        if "warning" in report.machine:
            print(f"warning: {report.machine['warning']}")
        if out_dir is not None:
            print(f"wrote {report.json_path} and {report.png_path}")
    return report


# --------------------------------------------------------------------- CLI


def cmd_claims(args: Any) -> int:
    from course_utils import config
    from course_utils.notebooks import course_root

    smoke = True if args.smoke else config.smoke()
    out = Path(args.out) if args.out else course_root() / "build" / "claims"
    run(smoke=smoke, out=out, only=args.only)
    return 0


def add_commands(sub: Any) -> None:
    """Register ``course claims [--smoke] [--out DIR] [--only ID ...]``."""
    p = sub.add_parser(
        "claims",
        help="re-measure the source articles' popular claims on this machine",
        description="Run compact versions of the course's claim benchmarks; print a table of "
        "claim, source, measured ratio (median and IQR) and verdict; write claims.json "
        "and claims.png.",
    )
    p.add_argument("--smoke", action="store_true", help="small sizes (about a minute)")
    p.add_argument("--out", metavar="DIR", help="where claims.json and claims.png go (default build/claims)")
    p.add_argument("--only", metavar="ID", action="append",
                   help="measure only this claim (repeatable)")
    p.set_defaults(func=cmd_claims)
