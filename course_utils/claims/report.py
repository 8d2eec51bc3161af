"""What a claims run shows and writes: tables, :class:`ClaimsReport`, ``claims.json`` and the plot.

:func:`table` is the Markdown table (a notebook shows a :class:`ClaimsReport`
as one), :func:`text_table` the terminal's version; :func:`write_json` and
:func:`save_plot` write the files ``course claims`` leaves in its output folder.
matplotlib is imported only when a plot is drawn.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.claims.verdicts import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    VERDICTS,
    Outcome,
)


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
    """Everything :func:`course_utils.claims.command.run` produced; shows as a table in a notebook."""

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
