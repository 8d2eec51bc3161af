"""What lessons call: :func:`judge` a registered claim from a comparison, and print the verdict.

Every verdict a lesson prints comes from here: :func:`judge` looks the claim up
in the registry, takes the paired per-round ratios and the contention record
from a ``timing.compare`` result (or ratios given directly), applies the one
rule (:func:`~course_utils.claims.verdict_rule.rule`) and returns a
:class:`Verdict` whose sentence is generated for the outcome that happened
(:func:`explain`). :func:`faster` asks the course's own neutral question (which
of two variants is faster?) through the same rule; :func:`fact` judges a yes/no
claim from a check the lesson ran; :func:`not_testable` says why a claim is not
judged here, :func:`skipped` why smoke mode leaves it out. :func:`evaluate` is
what ``course claims`` runs per benchmark.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from course_utils import cell_notes
from course_utils.claims import registry
from course_utils.claims.verdict_rule import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    INTERVAL_LABEL,
    NOISY_REMEDY,
    NOISY_REMEDY_ROUNDS,
    NOT_TESTABLE,
    SKIPPED,
    Claim,
    Measured,
    NotTestable,
    Outcome,
    Pairing,
    SkippedInSmoke,
    Stats,
    fmt,
    rule,
)
from course_utils.contention import REMEDY
from course_utils.stats import format_factor, speed

CONTENDED_REMEDY = REMEDY  # said once per notebook cell (course_utils.cell_notes)


@dataclass
class Verdict:
    """One judged claim: the word, why, the numbers, and the generated sentence.

    ``explanation`` is the whole record (the line, then why it was not judged and
    what to do, for ``claims.json``); ``str(verdict)`` is what a lesson prints:
    :meth:`line`, with the reason's detail once per notebook cell
    (:mod:`course_utils.cell_notes`). ``side`` and ``factor`` read the paired
    ratios as :func:`course_utils.stats.speed` does: side 1 when the second name
    (the denominator) was faster, -1 when the first was; ``factor`` at least 1.
    """

    claim: Claim
    verdict: str
    reason: str
    explanation: str
    stats: Stats | None = None
    pairing: Pairing | None = None
    names: tuple[str, str] | None = None
    contention: dict[str, Any] | None = None
    threads: dict[str, Any] | None = None
    side: int = 0
    factor: float | None = None
    rounds_fixed: bool = False

    def line(self) -> str:
        """One short line: who was faster and by how much, then the verdict in a word or two."""
        if self.stats is None or self.names is None:
            if self.verdict in (NOT_TESTABLE, SKIPPED):
                return f"{self.verdict}: {self.reason}"
            return f"{self.verdict}: {self.explanation}"
        return _line(self)

    def measured(self) -> str:
        """The line's first half: who was faster, by how much, the interval ('–' if untimed)."""
        return "–" if self.stats is None or self.names is None else _speed(self)

    def __str__(self) -> str:
        return _with_detail(self.line(), _detail(self), self._note())

    def _note(self) -> str:
        judged = self.verdict != INCONCLUSIVE or self.reason.startswith("the interval")
        return (self.claim.notes.get(self.verdict) or "") if judged else ""

    def _repr_markdown_(self) -> str:
        return f"**{self.claim.text}** ({self.claim.source}): {self}"

    def conditions(self) -> str:
        """Pairing, threads and contention, as measured ('' when nothing was timed)."""
        parts = []
        if self.pairing is not None:
            fair = "fair" if self.pairing.fair else "the article's, not fair"
            parts.append(f"pairing: {self.pairing.id} ({fair})")
        if self.threads and "cores" in self.threads:
            from course_utils.contention import policy_text

            parts.append(policy_text(self.threads))
        if self.contention:
            parts.append(
                "contended" if self.contention.get("reason") else "quiet machine"
            )
        return "; ".join(parts)

    def plot_row(self, label: str | None = None) -> dict[str, Any]:
        """This verdict as a row of :func:`course_utils.plots.speedups` (× faster)."""
        s, c = self.stats, self.claim
        row: dict[str, Any] = {
            "label": label or c.id,
            "verdict": self.verdict,
            "band": (c.threshold, c.high) if c.id != "faster" else None,
            "median": s.median if s else None,
        }
        if s:
            row.update(low=s.low, high=s.high, interval_label=INTERVAL_LABEL)
        return row

    def to_dict(self) -> dict[str, Any]:
        s = self.stats
        return {
            "claim": self.claim.id,
            "verdict": self.verdict,
            "reason": self.reason,
            "explanation": self.explanation,
            "median": s.median if s else None,
            "interval": [s.low, s.high] if s else None,
            "spread": s.spread if s else None,
            "n": s.n if s else 0,
            "pairing": self.pairing.id if self.pairing else None,
            "contention": self.contention,
        }


def _x(value: float) -> str:
    """An interval end without its sign: '0.88', '15.6', '0.004'."""
    return f"{value:.2g}" if value < 0.1 else format_factor(value)[:-1]


def _speed(v: Verdict) -> str:
    """'JAX jit 1.31× faster than PyTorch eager (0.88–1.73×)', the interval turned alike."""
    num, den = v.names
    s = v.stats
    if v.claim.unit == "s":
        return f"{den} took {fmt(s.median, 's')} ({fmt(s.low, 's')}–{fmt(s.high, 's')})"
    if v.side >= 0:
        fast, slow, lo, hi = den, num, s.low, s.high
    else:
        fast, slow, lo, hi = num, den, 1 / s.high, 1 / s.low
    if v.side == 0:
        return f"{den} as fast as {num} ({_x(lo)}–{_x(hi)}×)"
    return f"{fast} {format_factor(v.factor)} faster than {slow} ({_x(lo)}–{_x(hi)}×)"


def _head(reason: str) -> str:
    """A reason without its measured detail: 'contended', 'noisy', 'too few rounds'."""
    return reason.split(" (")[0]


def _line(v: Verdict) -> str:
    """The short line of a timed verdict (see :meth:`Verdict.line`)."""
    what = v.measured()
    if v.verdict == INCONCLUSIVE and not v.reason.startswith("the interval"):
        return f"{what}: not judged ({_head(v.reason)})"
    if v.claim.id == "faster":
        return what if v.verdict != INCONCLUSIVE else f"{what}: no clear winner"
    if v.verdict == INCONCLUSIVE:
        return f"{what}: inconclusive (stated {v.claim.claimed})"
    return f"{what}: {v.verdict} (stated {v.claim.claimed})"


def _detail(v: Verdict) -> tuple[str, str, str] | None:
    """Why a verdict was not judged and what to do: ``(key, whole, again)`` or None.

    ``whole`` is said the first time in a notebook cell; ``again`` where the cell
    before said it; nothing where this cell already did (:func:`_with_detail`).
    """
    if v.verdict != INCONCLUSIVE or v.stats is None:
        return None
    reason = v.reason
    inner = reason[reason.find("(") + 1 : reason.rfind(")")] if "(" in reason else ""
    if reason.startswith("contended"):
        return (
            "contended",
            f"Contended ({inner}): {CONTENDED_REMEDY}.",
            f"Contended again ({inner}).",
        )
    if reason.startswith("too few"):
        more = "a larger rounds=" if v.rounds_fixed else "rounds=, or a larger target_s"
        return (
            "verdict: too few",
            f"Too few rounds ({inner}): time more of them ({more}).",
            f"Too few rounds again ({inner}).",
        )
    if reason.startswith("noisy"):
        remedy = NOISY_REMEDY_ROUNDS if v.rounds_fixed else NOISY_REMEDY
        return (
            "verdict: noisy",
            f"Noisy ({inner} of the median per-round ratio): {remedy}.",
            f"Noisy again ({inner}).",
        )
    more = "a larger rounds=" if v.rounds_fixed else "a larger target_s"
    bar = "1" if v.claim.id == "faster" else reason.split("straddles ")[-1]
    return (
        "verdict: straddles",
        f"The interval reaches across {bar}: more rounds ({more}) would narrow it.",
        "",
    )


def _with_detail(line: str, detail: tuple[str, str, str] | None, note: str = "") -> str:
    """``line``, and the detail as often as :mod:`course_utils.cell_notes` allows."""
    text = line
    if detail is not None:
        key, whole, again = detail
        said = cell_notes.seen(key)
        extra = (
            whole
            if said == cell_notes.NEW
            else again
            if said == cell_notes.PREVIOUS
            else ""
        )
        if extra:
            text += f". {extra}"
    return f"{text}. {note}" if note and detail is None else text


def explain(
    claim: Claim,
    verdict: str,
    reason: str,
    s: Stats,
    names: tuple[str, str],
    remedy_said: bool = False,
    rounds_fixed: bool = False,
    *,
    side: int | None = None,
    factor: float | None = None,
) -> str:
    """The whole sentence for the outcome that happened (never a fixed one).

    The short line, then why it was not judged and what to do, and the claim's
    note for its verdict: what ``claims.json`` and ``course claims`` keep.
    ``side`` and ``factor`` default to the median's reading. ``remedy_said``
    is kept for callers; the detail is always in this record.
    """
    if side is None or factor is None:
        side = 1 if s.median > 1 else -1 if s.median < 1 else 0
        factor = s.median if side >= 0 else 1 / s.median
    v = Verdict(claim, verdict, reason, "", s, None, names, side=side, factor=factor)
    v.rounds_fixed = rounds_fixed
    detail = _detail(v)
    text = v.line() + "."
    if detail is not None:
        text += f" {detail[1]}"
    note = v._note()
    return f"{text} {note}" if note else text


def _contention_of(measured: Any, given: Any) -> dict[str, Any] | None:
    c = given if given is not None else getattr(measured, "contention", None)
    if c is None:
        return None
    return c.to_dict() if hasattr(c, "to_dict") else dict(c)


def compact(verdicts: Mapping[str, Verdict] | Iterable[Verdict]) -> str:
    """One short line per verdict, then each reason not to judge once, with what to do.

    ``verdicts`` maps a label to a :class:`Verdict`, or lists verdicts whose
    lines, which name both variants, need no label. A reason shared by several
    verdicts (a contended machine, say) is explained once, and not again where
    this notebook cell already said it (under a timing table, for example).
    """
    items = (
        verdicts.items()
        if isinstance(verdicts, Mapping)
        else [("", v) for v in verdicts]
    )
    lines, details = [], {}
    for label, v in items:
        lines.append(f"{label}: {v.line()}" if label else v.line())
        detail = _detail(v)
        if detail is not None:
            details.setdefault(detail[0], detail)
        elif v.stats is not None and v._note():
            lines[-1] += f". {v._note()}"
    for detail in details.values():
        extra = _with_detail("", detail)
        if extra:
            lines.append(extra[2:])
    return "\n".join(lines)


def judge(
    claim: str | Claim,
    measured: Any,
    numerator: str | None = None,
    denominator: str | None = None,
    *,
    pairing: str | None = None,
    contention: Any = None,
    rounds_fixed: bool | None = None,
) -> Verdict:
    """Judge a registered claim: the one verdict function lessons call.

    ``measured`` is a ``timing.compare`` result (then ``numerator`` and
    ``denominator`` name its variants; the ratio is numerator time over
    denominator time, so above 1 favours a claim that the denominator is faster)
    or a sequence of paired ratios (seconds, for a claim in seconds).
    ``pairing`` names which of the claim's pairings was timed; when the
    comparison's variants carry that pairing's registered names, the two names
    may be left out. ``rounds_fixed`` says whether the rounds were set with
    ``rounds=`` (None: a ``timing.compare`` result records it; ratios given
    directly are taken as timed to a ``target_s``).
    """
    c = registry.get(claim) if isinstance(claim, str) else claim
    p = c.pairing(pairing)
    threads = None
    if hasattr(measured, "ratios"):
        if numerator is None and denominator is None and p is not None:
            numerator, denominator = p.numerator, p.denominator  # named as registered
        if numerator is None or denominator is None:
            raise TypeError("judge: name the numerator and denominator variants")
        samples = measured.ratios(numerator, denominator)
        threads = dict(next(iter(measured.measurements.values())).threads)
    else:
        samples = list(measured)
    names = (
        numerator or (p.numerator if p else "the first"),
        denominator or (p.denominator if p else "the second"),
    )
    cont = _contention_of(measured, contention)
    v, reason, stats = rule(
        samples, c.threshold, unit=c.unit, contended=(cont or {}).get("reason")
    )
    if rounds_fixed is None:
        rounds_fixed = bool(getattr(measured, "rounds_fixed", False))
    side, factor = speed(samples) if c.unit == "x" else (0, None)
    text = explain(
        c,
        v,
        reason,
        stats,
        names,
        rounds_fixed=rounds_fixed,
        side=side,
        factor=factor,
    )
    return Verdict(
        c, v, reason, text, stats, p, names, cont, threads, side, factor, rounds_fixed
    )


def faster(comparison: Any, a: str, b: str) -> Verdict:
    """Which of two timed variants is faster: ``b`` over ``a``, through the same rule."""
    return judge("faster", comparison, a, b)


def break_even(
    per_call: Verdict, first_call_s: float, compiled_s: float, eager_s: float
) -> str:
    """The break-even line, judged only as far as the per-call verdict it rests on.

    ``per_call`` is :func:`faster`'s verdict on (eager, compiled), in that
    order; ``compiled_s`` is the compiled median. The eager time per call is
    ``compiled_s`` times the verdict's factor (the paired statistic the verdict
    line prints; ``eager_s``, the eager median, only where the verdict has
    none), so the count and the verdict never disagree. The count is judged
    when the verdict named a winner; otherwise it is marked not judged, and why
    is said once per cell.
    """
    calls = break_even_count(per_call, first_call_s, compiled_s, eager_s)
    eager, compiled = per_call.names or ("eager", "compiled")
    if math.isinf(calls):
        outcome = (
            f"{compiled}'s first call never pays for itself: it is not faster per call"
        )
    else:
        outcome = f"{compiled}'s first call pays for itself after {calls:,.0f} calls"
    if per_call.verdict in (HOLDS, DOES_NOT_HOLD):
        return f"Break-even: {outcome}."
    status = f"not judged ({_head(per_call.reason)})"
    if per_call.reason.startswith("the interval"):
        status = "not judged (no clear winner per call)"
    text = _with_detail(f"Break-even, {status}: {outcome}", _detail(per_call))
    return text if text.endswith(".") else text + "."


def break_even_count(
    per_call: Verdict, first_call_s: float, compiled_s: float, eager_s: float
) -> float:
    """Calls until compiling pays off, from the compiled median and the verdict's factor."""
    from course_utils.timing.compilation import break_even_from

    verdict = per_call if per_call.claim.unit == "x" else None
    return break_even_from(verdict, first_call_s, compiled_s, eager_s)


def fact(claim: str, holds: bool, evidence: str) -> Verdict:
    """A yes/no claim judged from a check the lesson ran (``evidence`` says which)."""
    c = registry.get(claim)
    v = HOLDS if holds else DOES_NOT_HOLD
    return Verdict(c, v, "checked in this run", evidence)


def skipped(claim: str, why: str) -> Verdict:
    """A registered claim this lesson judges in full mode only (smoke mode skips it), and why."""
    return Verdict(registry.get(claim), SKIPPED, why, f"Skipped in smoke mode: {why}.")


def not_testable(claim: str, why: str) -> Verdict:
    """A registered claim this machine or this lesson cannot judge, and why."""
    return Verdict(registry.get(claim), NOT_TESTABLE, why, f"Not judged here: {why}.")


def evaluate(
    claim: Claim, measure: Callable[[], Measured], device: str = "cpu"
) -> Outcome:
    """Run one benchmark and judge the claim (a benchmark may raise NotTestable/SkippedInSmoke)."""
    start = time.perf_counter()
    try:
        m = measure()
    except (NotTestable, SkippedInSmoke) as why:
        word = NOT_TESTABLE if isinstance(why, NotTestable) else SKIPPED
        return Outcome(
            claim, word, str(why), seconds=time.perf_counter() - start, device=device
        )
    return outcome_of(claim, m, time.perf_counter() - start, device)


def outcome_of(claim: Claim, m: Measured, seconds: float, device: str) -> Outcome:
    """The :class:`Outcome` of one measurement, judged by :func:`judge`."""
    names = m.names or _names(claim, m.pairing)
    j = judge(
        claim,
        m.samples,
        *names,
        pairing=m.pairing,
        contention=m.contention_dict(),
        rounds_fixed=m.rounds_fixed,
    )
    c = m.conditions
    return Outcome(
        claim,
        j.verdict,
        j.reason,
        list(m.samples),
        m.what,
        dict(m.details),
        seconds,
        device=device,
        device_name=str(c.get("device_name", "")),
        precision=dict(c.get("precision", {})),
        dtype=str(c.get("dtype", "")),
        threads=dict(c.get("threads", {})),
        interval=(j.stats.low, j.stats.high),
        spread=j.stats.spread,
        contention=j.contention,
        pairing=j.pairing.id if j.pairing else None,
        explanation=j.explanation,
    )


def _names(claim: Claim, pairing: str | None) -> tuple[str, str]:
    p = claim.pairing(pairing)
    return (p.numerator, p.denominator) if p else ("the first", "the second")
