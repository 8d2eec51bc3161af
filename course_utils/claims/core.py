"""``course claims``: the source articles' popular claims, re-measured on this machine.

Each :class:`Claim` names what an article said, where, and what ratio would
confirm it (``threshold``: the direction of the claim, or the low end of a
claimed range). A benchmark in :mod:`course_utils.claims.benchmarks` measures
the ratio several times (paired, interleaved rounds from
:func:`course_utils.timing.compare`), and :func:`verdict` turns the samples
into one of:

- **holds**: the lower quartile of the ratio is above the threshold;
- **does not hold**: the upper quartile is below it;
- **inconclusive**: the interquartile range straddles it (noise or a tie);
- **not testable here**: the claim needs hardware or scale this machine lacks;
- **skipped in smoke mode**: too slow for smoke mode; run without ``--smoke``.

Every claim is measured once per **device kind** (:func:`plan_devices`): on the
CPU, and on the accelerator when one is present (a GPU or a TPU), with both
frameworks on the same kind of device, or a "not testable here" outcome that
says why they cannot be (:func:`why_not_testable`). Each :class:`Outcome` names
the device kind, and the matmul precision, dtype and thread counts it ran with.

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

from course_utils.tooling.errors import CourseError

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
SKIPPED = "skipped in smoke mode"
VERDICTS = (HOLDS, DOES_NOT_HOLD, INCONCLUSIVE, NOT_TESTABLE, SKIPPED)

DEVICE_CHOICES = ("all", "cpu", "accelerator")
FRAMEWORK_NAMES = {"jax": "JAX", "torch": "PyTorch"}

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
    """What a benchmark returns: ratio samples (claim's orientation) and how they were taken.

    ``conditions`` holds what both frameworks ran with: ``precision`` (a dict),
    ``dtype``, ``threads`` (a dict) and ``device_name``.
    """

    samples: list[float]
    what: str
    details: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, Any] = field(default_factory=dict)


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
    device: str = "cpu"
    device_name: str = ""
    precision: dict[str, Any] = field(default_factory=dict)
    dtype: str = ""
    threads: dict[str, Any] = field(default_factory=dict)

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
            "device": self.device,
            "device_name": self.device_name,
            "precision": self.precision,
            "dtype": self.dtype,
            "threads": self.threads,
        }

    def conditions_text(self) -> str:
        """Device, dtype, matmul precision and threads in one line ('' when nothing ran)."""
        parts = [
            f"{self.device}" + (f" ({self.device_name})" if self.device_name else "")
        ]
        if self.dtype:
            parts.append(self.dtype)
        if self.precision:
            parts.append(
                "matmul precision "
                + ", ".join(f"{k} {v}" for k, v in self.precision.items())
            )
        if "torch_threads" in self.threads:
            parts.append(f"torch threads {self.threads['torch_threads']}")
        return "; ".join(parts)


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
        return (
            DOES_NOT_HOLD,
            f"even the upper quartile {q3:.2f}x is below {threshold:g}x",
        )
    return INCONCLUSIVE, (
        f"median {med:.2f}x, but the IQR {q1:.2f}–{q3:.2f}x straddles {threshold:g}x"
    )


def paired_ratios(
    numerator: Sequence[float], denominator: Sequence[float]
) -> list[float]:
    """Per-round ratios of two interleaved timing series (round i of each)."""
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError(
            f"paired_ratios: need two equally long, non-empty series, got "
            f"{len(numerator)} and {len(denominator)}"
        )
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def evaluate(
    claim: Claim, measure: Callable[[], Measured], device: str = "cpu"
) -> Outcome:
    """Run one benchmark and judge the claim (a benchmark may raise NotTestable/SkippedInSmoke).

    ``device`` is the device kind the benchmark ran on; the outcome carries it,
    and the precision, dtype and threads from the measurement's ``conditions``.
    """
    start = time.perf_counter()
    try:
        m = measure()
    except NotTestable as why:
        return Outcome(
            claim,
            NOT_TESTABLE,
            str(why),
            seconds=time.perf_counter() - start,
            device=device,
        )
    except SkippedInSmoke as why:
        return Outcome(
            claim, SKIPPED, str(why), seconds=time.perf_counter() - start, device=device
        )
    v, why = verdict(m.samples, claim.threshold)
    c = m.conditions
    return Outcome(
        claim,
        v,
        why,
        list(m.samples),
        m.what,
        dict(m.details),
        time.perf_counter() - start,
        device=device,
        device_name=str(c.get("device_name", "")),
        precision=dict(c.get("precision", {})),
        dtype=str(c.get("dtype", "")),
        threads=dict(c.get("threads", {})),
    )


# ------------------------------------------------------------------ devices


@dataclass(frozen=True)
class DeviceTarget:
    """One device kind the claims run on, and which framework can reach it.

    ``kind`` is ``cpu``, ``gpu`` or ``tpu``; ``jax`` says whether JAX has a
    device of that kind, ``torch`` is the torch device type there (``cpu``,
    ``cuda``) or None, and ``missing`` says, per framework without one, why.
    """

    kind: str
    name: str = ""
    jax: bool = True
    torch: str | None = "cpu"
    missing: dict[str, str] = field(default_factory=dict)

    def has(self, framework: str) -> bool:
        return self.jax if framework == "jax" else self.torch is not None


@dataclass
class DevicePlan:
    """The device kinds to measure on, and a note for the report (e.g. no accelerator)."""

    targets: list[DeviceTarget]
    note: str = ""
    accelerator_present: bool = False


def _missing_reason(framework: str, kind: str, *, torch_xla: bool) -> str:
    if framework == "torch" and kind == "tpu":
        if torch_xla:
            return (
                "PyTorch reaches the TPU only through torch_xla, whose lazy tensors "
                "these benchmarks are not written for"
            )
        return "PyTorch has no TPU device without torch_xla, which is not installed"
    if framework == "torch" and kind == "gpu":
        return (
            "PyTorch sees no CUDA GPU (torch.cuda.is_available() is False: a CPU "
            "build of torch, or a driver it cannot use)"
        )
    if framework == "jax" and kind == "gpu":
        return (
            "JAX sees no GPU (jax.devices() lists none: jax is installed without its "
            'CUDA plugin; pip install "jax[cuda13]" matches torch\'s CUDA 13 build)'
        )
    if kind == "cpu":
        return f"{FRAMEWORK_NAMES[framework]} was started without its CPU backend"
    return f"{FRAMEWORK_NAMES[framework]} has no {kind.upper()} device here"


def plan_devices(
    requested: str,
    *,
    jax_kinds: Iterable[str],
    torch_kinds: Iterable[str],
    names: Mapping[str, str] | None = None,
    torch_xla: bool = False,
) -> DevicePlan:
    """Which device kinds to measure on (pure; :func:`detect_devices` feeds it).

    ``requested`` is ``all`` (the CPU, then every accelerator present), ``cpu``
    or ``accelerator``. ``jax_kinds`` / ``torch_kinds`` are the device kinds
    each framework reaches (``cpu``, ``gpu``, ``tpu``). An accelerator only one
    framework reaches is still a target: single-framework claims run there, and
    paired ones say why they cannot.
    """
    if requested not in DEVICE_CHOICES:
        raise CourseError(
            f"--device must be one of {', '.join(DEVICE_CHOICES)}, got {requested!r}"
        )
    jax_kinds, torch_kinds = set(jax_kinds), set(torch_kinds)
    names = dict(names or {})
    order = ("gpu", "tpu")
    accelerators = [k for k in order if k in jax_kinds | torch_kinds]
    accelerators += sorted((jax_kinds | torch_kinds) - set(order) - {"cpu"})
    kinds = (["cpu"] if requested in ("all", "cpu") else []) + (
        accelerators if requested in ("all", "accelerator") else []
    )
    note = ""
    if not accelerators:
        seen = "JAX sees only the CPU and torch.cuda.is_available() is False"
        if requested == "accelerator":
            raise CourseError(
                f"--device accelerator: no accelerator is present ({seen}); "
                "use --device cpu or all"
            )
        note = f"no accelerator was present ({seen}): measured on the CPU only"
    targets = []
    for kind in kinds:
        missing = {
            fw: _missing_reason(fw, kind, torch_xla=torch_xla)
            for fw, reach in (("jax", jax_kinds), ("torch", torch_kinds))
            if kind not in reach
        }
        torch_type = (
            None if kind not in torch_kinds else ("cuda" if kind == "gpu" else kind)
        )
        targets.append(
            DeviceTarget(
                kind, names.get(kind, ""), kind in jax_kinds, torch_type, missing
            )
        )
    return DevicePlan(targets, note, bool(accelerators))


def why_not_testable(
    target: DeviceTarget,
    frameworks: Sequence[str],
    only_on: Sequence[str] = (),
    only_why: str = "",
) -> str | None:
    """Why a claim cannot be measured on ``target`` (None when it can).

    ``frameworks`` are those the benchmark uses; a claim measured only on some
    device kinds names them in ``only_on``, with the reason in ``only_why``.
    Two frameworks must both reach the target: they are compared on the same
    device kind or not at all.
    """
    if only_on and target.kind not in only_on:
        kinds = " or ".join(k.upper() for k in only_on)
        return f"measured on the {kinds} only" + (f": {only_why}" if only_why else "")
    absent = [fw for fw in frameworks if not target.has(fw)]
    if not absent:
        return None
    reasons = "; ".join(
        target.missing.get(fw, f"{FRAMEWORK_NAMES[fw]} has no device here")
        for fw in absent
    )
    if len(frameworks) > 1:
        return (
            f"both frameworks must run on the same device kind ({target.kind.upper()}), "
            f"but {reasons}"
        )
    return reasons


# ------------------------------------------------------------------ output


def table(outcomes: Iterable[Outcome]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| claim | device | source | claimed | measured here | verdict | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        what = f" ({o.what})" if o.what else ""
        cells = [
            o.claim.text,
            o.device,
            o.claim.source,
            o.claim.claimed,
            o.measured_text() + what,
            f"**{o.verdict}**",
            o.why,
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def text_table(outcomes: Iterable[Outcome]) -> str:
    """The results for a terminal: one block per claim and device kind."""
    blocks = []
    for o in outcomes:
        blocks.append(
            f"[{o.verdict}] {o.claim.text}\n"
            f"    source: {o.claim.source}; claimed: {o.claim.claimed}\n"
            f"    measured: {o.measured_text()}  ratio = {o.claim.ratio}\n"
            f"    on: {o.conditions_text()}\n"
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
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    device_note: str = ""

    def outcome(self, claim_id: str, device: str | None = None) -> Outcome:
        """The outcome for ``claim_id`` on ``device`` (default: the first measured, the CPU's)."""
        for o in self.outcomes:
            if o.claim.id == claim_id and device in (None, o.device):
                return o
        have = sorted({(o.claim.id, o.device) for o in self.outcomes})
        raise KeyError(
            f"no claim {claim_id!r}"
            + (f" on {device}" if device else "")
            + f"; have {have}"
        )

    def counts(self) -> dict[str, int]:
        return {v: sum(o.verdict == v for o in self.outcomes) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "smoke": self.smoke,
            "seconds": round(self.seconds, 1),
            "machine": self.machine,
            "devices": self.devices,
            "device_note": self.device_note,
            "claims": [o.to_dict() for o in self.outcomes],
        }

    def _repr_markdown_(self) -> str:
        mode = "smoke mode" if self.smoke else "full mode"
        warning = (
            f"\n\n**Warning:** {self.machine['warning']}"
            if "warning" in self.machine
            else ""
        )
        note = (
            f"\n\n{self.device_note[0].upper()}{self.device_note[1:]}."
            if self.device_note
            else ""
        )
        return (
            table(self.outcomes)
            + f"\n\n(on this machine: {self.machine.get('summary', '')}; {mode}, "
            f"{self.seconds:.0f} s){note}{warning}"
        )

    def __str__(self) -> str:
        return text_table(self.outcomes)


def write_json(report: ClaimsReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(report.to_dict(), indent=2, default=str) + "\n", encoding="utf-8"
    )
    return path


_COLOURS = {HOLDS: "#2e7d32", DOES_NOT_HOLD: "#c62828", INCONCLUSIVE: "#f9a825"}


def plot(outcomes: Sequence[Outcome], ax=None):
    """Measured ratio (median, IQR whiskers, log scale) per claim, threshold marked; returns ax."""
    from course_utils.plots import _axes

    ax = _axes(ax)
    labels, y = [], 0
    several = len({o.device for o in outcomes}) > 1
    for o in outcomes:
        label = f"{o.claim.id} ({o.device})" if several else o.claim.id
        if o.samples:
            q1, q3 = o.quartiles
            med = o.median
            ax.errorbar(
                med,
                y,
                xerr=[[med - q1], [q3 - med]],
                fmt="o",
                capsize=4,
                color=_COLOURS.get(o.verdict, "#555555"),
            )
            ax.plot([o.claim.threshold] * 2, [y - 0.35, y + 0.35], color="k", lw=1.5)
        else:
            ax.annotate(
                f"  {o.verdict}", (1.0, y), va="center", fontsize=8, color="#555555"
            )
        labels.append(label)
        y += 1
    ax.set_xscale("log")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first claim on top, none on the frame
    ax.set_xlabel(
        "measured ratio (median, IQR); black tick: where the claim starts to hold"
    )
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


def _machine(plan: DevicePlan | None = None) -> dict[str, Any]:
    from course_utils import env, timing

    info = dict(env.report().info)
    info["threads"] = timing.thread_settings()
    kinds = [t.kind for t in plan.targets] if plan else ["cpu"]
    named = (
        [f"{t.kind} ({t.name})" if t.name else t.kind for t in plan.targets]
        if plan
        else kinds
    )
    info["summary"] = (
        f"benchmarks on {' and '.join(named)}; CPU {info.get('cpu_count')} cores, torch "
        f"{info.get('torch_threads')} threads; float32 matmuls at 'highest' precision in both "
        "frameworks"
    )
    if plan and plan.note:
        info["summary"] += f"; {plan.note}"
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
    measured_on: str = "cpu",
    device: str = "all",
    verbose: bool = True,
) -> ClaimsReport:
    """Measure every claim (or ``only`` those ids), print the table, write JSON and PNG to ``out``.

    ``device`` is ``all`` (the CPU, and the accelerator when one is present),
    ``cpu`` or ``accelerator``; every claim is measured once per device kind.
    ``measured`` supplies measurements already taken (a notebook that timed the
    same thing in its own cells) by claim id, on the device kind ``measured_on``;
    those claims are judged from them there instead of being measured again.
    """
    from course_utils import config
    from course_utils.claims import benchmarks as claim_benchmarks

    smoke = config.smoke(smoke)
    ids = [c.id for c in claim_benchmarks.CLAIMS]
    measured = dict(measured or {})
    for where, given in (("claim", only or []), ("measured claim", measured)):
        unknown = [i for i in given if i not in ids]
        if unknown:
            raise CourseError(
                f"unknown {where} {unknown[0]!r}; claims: {', '.join(ids)}"
            )
    bad = [k for k, v in measured.items() if not isinstance(v, Measured)]
    if bad:
        raise TypeError(f"run: measured[{bad[0]!r}] must be a claims.Measured")
    out_dir = Path(out) if out is not None else None
    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise CourseError(f"--out {out_dir} is a file; give a folder")
    plan = claim_benchmarks.detect_devices(device)
    start = time.perf_counter()
    outcomes = []
    for target in plan.targets:
        for claim in claim_benchmarks.CLAIMS:
            if only and claim.id not in only:
                continue
            if verbose:
                print(f"measuring {claim.id} on {target.kind} ...", flush=True)
            if claim.id in measured and target.kind == measured_on:
                given = measured[claim.id]
                given.details.setdefault("measured_by", "the caller (already timed)")
                outcome = evaluate(claim, lambda g=given: g, target.kind)
            else:
                outcome = evaluate(
                    claim,
                    lambda c=claim, t=target: claim_benchmarks.measure(
                        c.id, smoke=smoke, target=t
                    ),
                    target.kind,
                )
            outcome.device_name = outcome.device_name or target.name
            if verbose:
                print(
                    f"  {outcome.verdict}: {outcome.measured_text()} ({outcome.seconds:.1f} s)",
                    flush=True,
                )
            outcomes.append(outcome)
    report = ClaimsReport(
        outcomes,
        smoke,
        _machine(plan),
        time.perf_counter() - start,
        devices=[t.kind for t in plan.targets],
        device_note=plan.note,
    )
    if out_dir is not None:
        report.json_path = write_json(report, out_dir / "claims.json")
        report.png_path = save_plot(outcomes, out_dir / "claims.png")
    if verbose:
        print()
        print(text_table(outcomes))
        print(
            f"\n{len(outcomes)} outcomes in {report.seconds:.0f} s "
            f"({'smoke' if smoke else 'full'} mode); {report.machine['summary']}"
        )
        if "warning" in report.machine:
            print(f"warning: {report.machine['warning']}")
        if out_dir is not None:
            print(f"wrote {report.json_path} and {report.png_path}")
    return report


# --------------------------------------------------------------------- CLI


def cmd_claims(args: Any) -> int:
    from course_utils import config
    from course_utils.tooling.notebooks import course_root

    smoke = True if args.smoke else config.smoke()
    out = Path(args.out) if args.out else course_root() / "build" / "claims"
    run(smoke=smoke, out=out, only=args.only, device=args.device)
    return 0


def add_commands(sub: Any) -> None:
    """Register ``course claims [--smoke] [--out DIR] [--only ID ...] [--device KIND]``."""
    p = sub.add_parser(
        "claims",
        help="re-measure the source articles' popular claims on this machine",
        description="Run compact versions of the course's claim benchmarks on the CPU and, "
        "when one is present, on the GPU or TPU (both frameworks on the same device kind, "
        "float32 matmuls at 'highest' precision); print a table of claim, device, source, "
        "measured ratio (median and IQR) and verdict; write claims.json and claims.png.",
    )
    p.add_argument("--smoke", action="store_true", help="small sizes (about a minute)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where claims.json and claims.png go (default build/claims)",
    )
    p.add_argument(
        "--only",
        metavar="ID",
        action="append",
        help="measure only this claim (repeatable)",
    )
    p.add_argument(
        "--device",
        choices=DEVICE_CHOICES,
        default="all",
        help="where to measure: all (the CPU, and the accelerator when present; "
        "the default), cpu, or accelerator",
    )
    p.set_defaults(func=cmd_claims)
