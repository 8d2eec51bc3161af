"""What a claims run shows and writes: tables, :class:`ClaimsReport`, ``claims.json`` and the plot.

:func:`table` is the Markdown table (a notebook shows a :class:`ClaimsReport`
as one), :func:`brief_table` its four-column digest, :func:`text_table` the
terminal's version; :func:`write_json` and
:func:`save_plot` write the files ``course claims`` leaves in its output folder.
matplotlib is imported only when a plot is drawn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.claims.verdict_rule import (
    INCONCLUSIVE,
    INTERVAL_LABEL,
    NOT_TESTABLE,
    SKIPPED,
    VERDICTS,
    Outcome,
    fmt,
)
from course_utils.claims.verdicts import _x
from course_utils.contention import REMEDY
from course_utils.stats import format_factor, speed

# A contended row's sentence ends with the cause and the remedy; a table says them once.
_CONTENDED_DETAIL = re.compile(r" Contended \(.*?\): " + re.escape(REMEDY) + r"\.")


def _why(o: Outcome) -> str:
    """A row's sentence, without the contended cause and remedy that the table says once."""
    return _CONTENDED_DETAIL.sub("", o.explanation or o.why)


def _contended_note(outcomes: Sequence[Outcome]) -> str:
    """One line for all contended rows, or ''."""
    if not any(_CONTENDED_DETAIL.search(o.explanation or "") for o in outcomes):
        return ""
    return f"Rows not judged because the run was contended: to judge them, {REMEDY}."


def table(outcomes: Iterable[Outcome]) -> str:
    """The results as a Markdown table (the contended remedy said once, under it)."""
    outcomes = list(outcomes)
    lines = [
        "| claim | device | source | stated | measured here | verdict | why |",
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
            _why(o),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    note = _contended_note(outcomes)
    return "\n".join(lines) + (f"\n\n{note}" if note else "")


def _measured_brief(o: Outcome) -> str:
    """'JAX jit 2.04× faster than PyTorch eager (1.75–2.44×)', or a dash when nothing was measured.

    Read as a verdict line reads the same ratios (:func:`course_utils.stats.speed`,
    a ratio being its pairing's numerator time over its denominator time);
    whether the run could judge it is the verdict's word.
    """
    if not o.samples:
        return "—"
    u = o.claim.unit
    lo, hi = o.interval or o.quartiles
    pairing = o.claim.pairing(o.pairing) if u == "x" else None
    if pairing is None:
        return f"{fmt(o.median, u)} ({fmt(lo, u)}–{fmt(hi, u)})"
    side, k = speed(o.samples)
    num, den = pairing.numerator, pairing.denominator
    if side < 0:
        num, den, lo, hi = den, num, 1 / hi, 1 / lo
    return f"{den} {format_factor(k)} faster than {num} ({_x(lo)}–{_x(hi)}×)"


def _reason_head(o: Outcome) -> str:
    """Why a row was not judged, without its numbers or detail ('contended')."""
    if o.verdict == INCONCLUSIVE:
        if o.why.startswith(("contended", "noisy")):
            return o.why.split(" (")[0]
        return o.why
    return o.why.replace(";", ":").split(":")[0]


def _unjudged_lines(outcomes: Sequence[Outcome], several: bool) -> list[str]:
    """One line per verdict that judged nothing and its reason, naming the rows."""

    def name(o: Outcome) -> str:
        return f"`{o.claim.id}`" + (f" ({o.device})" if several else "")

    groups: dict[tuple[str, str], list[str]] = {}
    for verdict in (INCONCLUSIVE, SKIPPED, NOT_TESTABLE):
        for o in outcomes:
            if o.verdict == verdict:
                head = "" if verdict == SKIPPED else f", {_reason_head(o)}"
                groups.setdefault((verdict, head), []).append(name(o))
    lines = []
    for (verdict, head), names in groups.items():
        line = f"- *{verdict}{head}*: {', '.join(names)}."
        if verdict == SKIPPED:
            line += " They run in full mode."
        elif head == ", contended":
            line += f" To judge them, {REMEDY}."
        lines.append(line)
    return lines


def brief_table(outcomes: Iterable[Outcome], timed_only: bool = False) -> str:
    """The results in four columns (five with several device kinds), each reason said once.

    A row gives the claim, the stated magnitude, the faster side with its
    factor and interval, and the verdict; the rows not judged are named under
    the table, one line per verdict and reason. ``timed_only`` leaves out the
    rows with nothing measured (not testable, skipped): the lines under the
    table still name them. :func:`table` and ``claims.json`` keep every row's
    whole sentence.
    """
    outcomes = list(outcomes)
    several = len({o.device for o in outcomes}) > 1
    device = " device |" if several else ""
    lines = [
        f"| claim |{device} stated | measured here | verdict |",
        "|---|" + "---|" * (4 if several else 3),
    ]
    for o in outcomes:
        if timed_only and o.verdict in (NOT_TESTABLE, SKIPPED):
            continue
        cells = [f"`{o.claim.id}`: {o.claim.text}"]
        cells += [o.device] if several else []
        cells += [o.claim.claimed, _measured_brief(o), f"**{o.verdict}**"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines + [""] + _unjudged_lines(outcomes, several))


def text_table(outcomes: Iterable[Outcome]) -> str:
    """The results for a terminal: one block per claim and device kind."""
    outcomes = list(outcomes)
    blocks = []
    for o in outcomes:
        blocks.append(
            f"[{o.verdict}] {o.claim.text}\n"
            f"    source: {o.claim.source}; claimed: {o.claim.claimed}\n"
            f"    measured: {o.measured_text()}  ratio = {o.claim.ratio}\n"
            f"    on: {o.conditions_text()}\n"
            + (f"    how: {o.what}\n" if o.what else "")
            + f"    why: {_why(o)}"
        )
    note = _contended_note(outcomes)
    return "\n".join(blocks + ([note] if note else []))


@dataclass
class ClaimsReport:
    """Everything :func:`course_utils.claims.command.run` produced; shows as a table in a notebook."""

    outcomes: list[Outcome]
    smoke: bool
    machine: dict[str, Any]
    seconds: float
    json_path: Path | None = None
    png_path: Path | None = None
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    device_note: str = ""
    complete: bool = True  # False while the run is still going, or if it was stopped

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
        from course_utils.claims.results import SCHEMA, fingerprint

        return {
            "schema": SCHEMA,
            "fingerprint": fingerprint(self.machine),
            "smoke": self.smoke,
            "seconds": round(self.seconds, 1),
            "machine": self.machine,
            "devices": self.devices,
            "device_note": self.device_note,
            "complete": self.complete,
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

    def brief(self, timed_only: bool = False) -> str:
        """:func:`brief_table` and the machine's line, in Markdown (what lesson 08 shows)."""
        mode = "smoke mode" if self.smoke else "full mode"
        return (
            brief_table(self.outcomes, timed_only)
            + f"\n\n(on this machine: {self.machine.get('summary', '')}; {mode}, "
            f"{self.seconds:.0f} s)"
        )

    def __str__(self) -> str:
        return text_table(self.outcomes)


def write_json(report: ClaimsReport, path: Path) -> Path:
    """Write the report whole, atomically: a reader never sees half a file."""
    from course_utils._files import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(
        path, json.dumps(report.to_dict(), indent=2, default=str) + "\n"
    )


CLIP = (
    20.0  # the plot's axis ends at 1/20x and 20x; a row past them is marked at the edge
)


def plot(outcomes: Sequence[Outcome], ax=None):
    """Speed-ups as × faster with widened intervals, the stated band and 1x; returns ax.

    Claims stated in seconds (a first call, a launch) are not speed-ups; they
    are listed by their verdict only, as are claims not measured here. The axis
    is clipped at :data:`CLIP` (one recompiling stream is hundreds of times
    slower, and would squeeze every other row), with a legend of the colours.
    """
    from course_utils.plots import speedups

    several = len({o.device for o in outcomes}) > 1
    rows = []
    for o in outcomes:
        label = f"{o.claim.id} ({o.device})" if several else o.claim.id
        row: dict[str, Any] = {"label": label, "verdict": o.verdict, "median": None}
        if o.samples and o.claim.unit == "x" and o.interval:
            pairing = o.claim.pairing(o.pairing)  # above 1: its denominator is faster
            if pairing is not None:
                row["label"] = f"{label}\n(above 1: {pairing.denominator} faster)"
            row.update(
                median=o.median,
                low=o.interval[0],
                high=o.interval[1],
                band=(o.claim.threshold, o.claim.high),
                interval_label=INTERVAL_LABEL,
            )
        rows.append(row)
    return speedups(
        rows,
        ax=ax,
        title="popular claims, re-measured on this machine",
        clip=CLIP,
        legend=True,
    )


def save_plot(outcomes: Sequence[Outcome], path: Path) -> Path:
    """Write :func:`plot` to ``path`` as a PNG without touching pyplot.

    The figure is a bare :class:`matplotlib.figure.Figure` drawn by the Agg
    canvas, so a running notebook keeps its backend (``inline``) and its
    figures still show; nothing is left open in pyplot's figure list.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 0.5 * len(outcomes) + 1.5))
    FigureCanvasAgg(fig)
    plot(outcomes, ax=fig.add_subplot())
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
