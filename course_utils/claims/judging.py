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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

CONTENDED_REMEDY = REMEDY  # said once per timed table (timing.Comparison.remedy_said)


@dataclass
class Verdict:
    """One judged claim: the word, why, the numbers, and the generated sentence."""

    claim: Claim
    verdict: str
    reason: str
    explanation: str
    stats: Stats | None = None
    pairing: Pairing | None = None
    names: tuple[str, str] | None = None
    contention: dict[str, Any] | None = None
    threads: dict[str, Any] | None = None

    def __str__(self) -> str:
        return f"{self.claim.id}: {self.verdict} ({self.reason}). {self.explanation}"

    def _repr_markdown_(self) -> str:
        return (
            f"**{self.claim.text}** ({self.claim.source}; stated: {self.claim.claimed}): "
            f"**{self.verdict}**. {self.explanation}\n\n{self.conditions()}"
        )

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


def _speed(claim: Claim, s: Stats, num: str, den: str) -> str:
    """'B is 2.00x faster than A (95 % interval widened by 15 %: ...)', turned alike."""
    n = f"n={s.n}"
    if s.median >= 1:
        lo, hi = fmt(s.low, claim.unit), fmt(s.high, claim.unit)
        return f"{den} is {s.median:.2f}x faster than {num} ({INTERVAL_LABEL}: {lo}–{hi}, {n})"
    lo, hi = fmt(1 / s.high, claim.unit), fmt(1 / s.low, claim.unit)
    return f"{num} is {1 / s.median:.2f}x faster than {den} ({INTERVAL_LABEL}: {lo}–{hi}, {n})"


def explain(
    claim: Claim,
    verdict: str,
    reason: str,
    s: Stats,
    names: tuple[str, str],
    remedy_said: bool = False,
    rounds_fixed: bool = False,
) -> str:
    """The sentence for the outcome that happened (never a fixed one).

    ``remedy_said``: what to do about a contended run was already printed with
    these rounds (under their table, or in an earlier verdict from them), so
    the sentence gives the cause and not the remedy again. ``rounds_fixed``:
    the rounds were set with ``rounds=``, which ``target_s`` then does not
    change, so the advice to time more of them names ``rounds=`` alone.
    """
    num, den = names
    if claim.unit == "s":
        lo, hi = fmt(s.low, "s"), fmt(s.high, "s")
        what = f"{den} took {fmt(s.median, 's')} ({INTERVAL_LABEL}: {lo}–{hi}, n={s.n})"
    elif verdict == INCONCLUSIVE:  # no winner is named, only the median round's side
        lo, hi = fmt(s.low, "x"), fmt(s.high, "x")
        what = (
            f"{_median_side(s.median, num, den)}; time of {num} / time of {den}: "
            f"median {s.median:.2f} ({INTERVAL_LABEL}: {lo}–{hi}, n={s.n})"
        )
    else:
        what = _speed(claim, s, num, den)
    if verdict == INCONCLUSIVE and not reason.startswith("the interval"):
        remedy = (
            CONTENDED_REMEDY
            if reason.startswith("contended")
            else "time more rounds (a larger rounds=)"
            if reason.startswith("too few") and rounds_fixed
            else "time more rounds (rounds=, or a larger target_s)"
            if reason.startswith("too few")
            else NOISY_REMEDY_ROUNDS
            if rounds_fixed
            else NOISY_REMEDY
        )
        why = f"the run was {reason}" if reason[:5] in ("conte", "noisy") else reason
        text = f"Not judged, {why}: {what}."
        if not (remedy_said and reason.startswith("contended")):
            text += f" To judge it, {remedy}."
    elif claim.id == "faster":
        text = _faster_text(verdict, what, num, den)
    elif verdict == HOLDS:
        text = f"{what}: at or beyond the stated {claim.claimed}."
    elif reason == "the opposite happened":
        text = f"The opposite happened: {what}; the claim expects {den} to be faster."
    elif verdict == DOES_NOT_HOLD:
        text = f"{what}: short of the stated {claim.claimed}."
    else:
        more = "a larger rounds=" if rounds_fixed else "a larger target_s"
        text = (
            f"{what}: the interval straddles the stated {claim.claimed}, so this run "
            f"cannot tell; more rounds ({more}) would narrow it."
        )
    judged = verdict != INCONCLUSIVE or reason.startswith("the interval")
    note = claim.notes.get(verdict) if judged else None
    return f"{text} {note}" if note else text


def _median_side(median: float, num: str, den: str) -> str:
    """Which variant was faster in the median round, in words (a ratio is num / den time)."""
    if median == 1:
        return "in the median round neither was faster"
    return f"in the median round {den if median > 1 else num} was faster"


def _faster_text(verdict: str, what: str, num: str, den: str) -> str:
    if verdict in (HOLDS, DOES_NOT_HOLD):
        return f"{what}."
    return f"No clear winner between {num} and {den}: {what}, which straddles 1."


def _contention_of(measured: Any, given: Any) -> dict[str, Any] | None:
    c = given if given is not None else getattr(measured, "contention", None)
    if c is None:
        return None
    return c.to_dict() if hasattr(c, "to_dict") else dict(c)


def compact(verdicts: dict[str, Verdict]) -> str:
    """One line per verdict (its word and paired ratio), and each reason not to judge once.

    ``verdicts`` maps a label to a :class:`Verdict`; a reason shared by several
    inconclusive verdicts (a contended machine, say) is printed once, naming them.
    """
    lines, by_reason = [], {}
    for label, v in verdicts.items():
        s = v.stats
        if s is not None and v.names:
            ratio = (
                f"time of {v.names[0]} / time of {v.names[1]}: median {s.median:.2f} "
                f"({INTERVAL_LABEL} {s.low:.2f}–{s.high:.2f}, n={s.n})"
            )
        else:
            ratio = v.explanation
        lines.append(f"{label}: {v.verdict}; {ratio}")
        if v.verdict == INCONCLUSIVE:
            by_reason.setdefault(v.reason, []).append(label)
    for reason, labels in by_reason.items():
        lines.append(f"not judged ({'; '.join(labels)}): {reason}")
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
    said = bool(getattr(measured, "remedy_said", False)) and contention is None
    if rounds_fixed is None:
        rounds_fixed = bool(getattr(measured, "rounds_fixed", False))
    text = explain(
        c, v, reason, stats, names, remedy_said=said, rounds_fixed=rounds_fixed
    )
    if reason.startswith("contended") and hasattr(measured, "remedy_said"):
        measured.remedy_said = True  # the next verdict from these rounds skips it
    return Verdict(c, v, reason, text, stats, p, names, cont, threads)


def faster(comparison: Any, a: str, b: str) -> Verdict:
    """Which of two timed variants is faster: ``b`` over ``a``, through the same rule."""
    return judge("faster", comparison, a, b)


def break_even(
    per_call: Verdict, first_call_s: float, compiled_s: float, eager_s: float
) -> str:
    """The break-even sentence, judged only as far as the per-call verdict it rests on.

    ``per_call`` is :func:`faster`'s verdict on (eager, compiled), in that
    order; ``compiled_s`` and ``eager_s`` are the two medians. Which variant is
    faster per call decides whether compiling ever pays off, so when the
    verdict named a winner the count follows from the medians; when it did not
    (contended, noisy, or an interval across 1) the count is given as the
    medians' alone, marked not judged.
    """
    from course_utils.timing import break_even_calls, format_calls

    eager, compiled = per_call.names or ("eager", "compiled")
    calls = break_even_calls(first_call_s, compiled_s, eager_s)
    if math.isinf(calls):
        outcome = f"{compiled}'s total time never drops below {eager}'s"
        outcome += " (its steady state is not faster)"
    else:
        outcome = (
            f"{compiled}'s total time, first call included, drops below {eager}'s "
            f"after {format_calls(calls)}"
        )
    if per_call.verdict in (HOLDS, DOES_NOT_HOLD):
        return f"Break-even: {outcome}."
    return (
        f"Break-even not judged: the per-call comparison it rests on was not "
        f"({per_call.reason}); from the medians alone, {outcome}."
    )


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
