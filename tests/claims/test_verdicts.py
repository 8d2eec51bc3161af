"""course_utils.claims.verdicts: verdicts from comparisons, the generated sentences, evaluate."""

import pytest

from course_utils import timing
from course_utils.claims import registry, verdict_rule
from course_utils.claims import verdicts as judge
from course_utils.contention import Contention
from tests.claims.fakes import CLAIM
from tests.claims.test_verdict_rule import rounds


def comparison(a: list[float], b: list[float], reason: str | None = None):
    """A timing.Comparison of variants 'A' and 'B' with these per-round times."""
    threads = {"cores": 2, "torch": 2, "jax": 2}
    ms = {
        name: timing.Measurement(name, times, 1, times[0], threads=threads)
        for name, times in (("A", a), ("B", b))
    }
    return timing.Comparison(
        ms, "A", contention=Contention(2, 0.5, 0.5, 0.0, 1.0, threads, reason)
    )


@pytest.mark.parametrize(
    "ratio, verdict, words",
    [
        (
            3.0,
            verdict_rule.HOLDS,
            ["B 3.00× faster than A", "holds (stated 1.5–2x)"],
        ),
        (
            1.2,
            verdict_rule.DOES_NOT_HOLD,
            ["B 1.20× faster than A", "does not hold (stated 1.5–2x)"],
        ),
        (
            0.5,
            verdict_rule.DOES_NOT_HOLD,
            ["A 2.00× faster than B", "does not hold (stated 1.5–2x)"],
        ),
        (
            1.5,
            verdict_rule.INCONCLUSIVE,
            ["inconclusive (stated 1.5–2x)", "reaches across 1.5x"],
        ),
    ],
)
def test_the_sentence_follows_the_outcome(ratio, verdict, words):
    cmp = comparison([ratio * t for t in rounds(1.0)], rounds(1.0, wobble=0.0))
    v = judge.judge("compile-fusion", cmp, "A", "B")
    assert v.verdict == verdict
    for w in words:
        assert w in v.explanation
    assert v.threads == {"cores": 2, "torch": 2, "jax": 2}


def test_a_contended_comparison_names_the_cause_and_the_remedy():
    cmp = comparison(rounds(5.0), rounds(1.0, wobble=0.0), reason="load 4.1 on 2 cores")
    v = judge.judge("compile-fusion", cmp, "A", "B")
    assert (v.verdict, v.reason) == (
        verdict_rule.INCONCLUSIVE,
        "contended (load 4.1 on 2 cores)",
    )
    assert v.line() == "B 5.00× faster than A (4.24–5.89×): not judged (contended)"
    assert v.measured() == "B 5.00× faster than A (4.24–5.89×)"
    assert judge.not_testable("eager-launch", "no GPU").measured() == "–"
    assert v.explanation.endswith(
        "Contended (load 4.1 on 2 cores): rerun the cell when no other program "
        "keeps the cores busy (`uptime` shows the load)."
    )
    assert "contended" in v.conditions()


def test_a_noisy_comparison_says_noisy_with_its_spread():
    v = judge.judge("compile-fusion", rounds(3.0, wobble=0.9))
    assert v.verdict == verdict_rule.INCONCLUSIVE and v.reason.startswith(
        "noisy (spread "
    )
    assert v.line().endswith(": not judged (noisy)")
    assert "larger timing target" in v.explanation


def test_the_advice_names_rounds_when_the_rounds_were_set():
    """With rounds= given, compare ignores target_s: the advice names rounds= alone."""
    cases = [  # (per-round times of A, of B, the reason)
        (rounds(2.0, n=4), rounds(1.0, n=4, wobble=0.0), "too few rounds"),
        (rounds(3.0, wobble=0.9), rounds(1.0, wobble=0.0), "noisy"),
        (
            [1.5 * t for t in rounds(1.0)],
            rounds(1.0, wobble=0.0),
            "the interval straddles",
        ),
    ]
    for a, b, reason in cases:
        cmp = comparison(a, b)
        assert not cmp.rounds_fixed
        assert "target_s" in judge.judge("compile-fusion", cmp, "A", "B").explanation
        cmp.rounds_fixed = True  # as timing.compare records rounds=
        v = judge.judge("compile-fusion", cmp, "A", "B")
        assert v.reason.startswith(reason)
        assert "a larger rounds=" in v.explanation and "target_s" not in v.explanation
    given = judge.judge("compile-fusion", rounds(3.0, n=4), rounds_fixed=True)
    assert (
        "a larger rounds=" in given.explanation and "target_s" not in given.explanation
    )


def test_faster_names_the_winner_or_none():
    fast_b = comparison(rounds(2.0), rounds(1.0, wobble=0.0))
    assert str(judge.faster(fast_b, "A", "B")) == "B 2.00× faster than A (1.70–2.35×)"
    fast_a = comparison(rounds(0.5), rounds(1.0, wobble=0.0))
    assert str(judge.faster(fast_a, "A", "B")).startswith("A 2.00× faster than B (")
    tie = judge.faster(comparison(rounds(1.0), rounds(1.0, wobble=0.0)), "A", "B")
    assert tie.line().endswith(": no clear winner")


def test_a_verdict_line_is_short_and_names_the_faster_side_in_words():
    busy = "other processes used 90% of the 2 cores, load 10.8"
    for a, b, reason, winner in (
        (rounds(3.0), rounds(1.0), None, "B"),
        (rounds(1.0), rounds(3.0), None, "A"),
        (rounds(3.0), rounds(1.0), busy, "B"),
        (rounds(1.0), rounds(3.0, wobble=0.9), None, "A"),
    ):
        line = judge.faster(comparison(a, b, reason=reason), "A", "B").line()
        assert line.startswith(f"{winner} "), line
        assert " faster than " in line and len(line.split()) <= 14, line
        for jargon in ("time of", "widened", "n=", "95 %", "median"):
            assert jargon not in line, line


def test_judge_checks_its_arguments():
    cmp = comparison(rounds(2.0), rounds(1.0))
    with pytest.raises(TypeError, match="numerator and denominator"):
        judge.judge("faster", cmp)
    with pytest.raises(KeyError, match="no variant 'C'"):
        judge.judge("faster", cmp, "A", "C")
    with pytest.raises(KeyError, match="no claim 'nope'"):
        judge.judge("nope", cmp, "A", "B")
    with pytest.raises(KeyError, match="no pairing 'eager'"):
        judge.judge("compile-fusion", cmp, "A", "B", pairing="eager")


def test_seconds_claims_read_as_seconds():
    v = judge.judge("first-call", rounds(1.5))
    assert v.verdict == verdict_rule.HOLDS
    assert v.line().startswith("JAX's first call took 1.5 s (")


def test_fact_and_not_testable():
    assert (
        judge.fact("dp-cheapest", True, "it sent least").verdict == verdict_rule.HOLDS
    )
    no = judge.fact("pmap-pjit-needed", False, "jax.jit did both")
    assert (no.verdict, no.explanation) == (
        verdict_rule.DOES_NOT_HOLD,
        "jax.jit did both",
    )
    nt = judge.not_testable("eager-launch", "no GPU here")
    assert nt.verdict == verdict_rule.NOT_TESTABLE and "no GPU here" in str(nt)


def test_plot_rows_carry_the_interval_and_the_stated_band():
    v = judge.judge("compile-fusion", rounds(3.0))
    row = v.plot_row("fusion")
    assert row["label"] == "fusion" and row["band"] == (1.5, 2.0)
    assert row["low"] < row["median"] < row["high"]
    assert (
        judge.faster(comparison(rounds(2.0), rounds(1.0)), "A", "B").plot_row()["band"]
        is None
    )


def test_evaluate_turns_exceptions_into_verdicts():
    def not_testable():
        raise verdict_rule.NotTestable("needs a TPU")

    out = judge.evaluate(CLAIM, not_testable)
    assert (out.verdict, out.why, out.samples, out.measured_text()) == (
        verdict_rule.NOT_TESTABLE,
        "needs a TPU",
        [],
        "—",
    )
    skipped = judge.evaluate(
        CLAIM, lambda: (_ for _ in ()).throw(verdict_rule.SkippedInSmoke("slow"))
    )
    assert skipped.verdict == verdict_rule.SKIPPED
    with pytest.raises(RuntimeError, match="a bug"):
        judge.evaluate(CLAIM, lambda: (_ for _ in ()).throw(RuntimeError("a bug")))


def test_outcomes_carry_interval_conditions_and_contention_into_json():
    cond = {
        "device_name": "NVIDIA H200",
        "precision": {"jax_matmul": "highest"},
        "dtype": "float32",
        "threads": {"torch_threads": 4},
    }
    m = verdict_rule.Measured(
        rounds(3.0),
        "x",
        {"k": 1},
        cond,
        contention={"reason": None, "cores": 2},
        names=("eager", "compiled"),
    )
    o = judge.evaluate(CLAIM, lambda: m, "gpu")
    d = o.to_dict()
    assert o.verdict == verdict_rule.HOLDS and o.measured_text().startswith("3.00x (")
    assert (d["device"], d["device_name"], d["dtype"]) == (
        "gpu",
        "NVIDIA H200",
        "float32",
    )
    assert d["interval"][0] < d["median"] < d["interval"][1]
    assert d["contention"] == {"reason": None, "cores": 2}
    assert "compiled 3.00× faster than eager" in d["explanation"]
    assert o.conditions_text() == (
        "gpu (NVIDIA H200); float32; matmul precision jax_matmul highest; torch threads 4"
    )


def test_every_registered_claim_can_be_judged():
    for c in registry.CLAIMS + registry.LESSON_CLAIMS:
        if c.unit == "fact":
            continue
        v = judge.judge(c, rounds(c.threshold * 3))
        assert v.verdict == verdict_rule.HOLDS, c.id


def test_the_interval_is_turned_the_way_the_sentence_reads():
    v = judge.faster(comparison(rounds(0.05), rounds(1.0, wobble=0.0)), "A", "B")
    assert v.verdict == verdict_rule.DOES_NOT_HOLD  # A is clearly faster
    text = v.line()
    k = float(text.split("A ")[1].split("× faster")[0])
    lo, hi = (float(x) for x in text.split("(")[1].rstrip("×)").split("–"))
    assert lo <= k <= hi


def test_a_run_not_judged_says_so_beside_the_median_side():
    busy = "load 4.1 on 2 cores"
    for v in (
        judge.faster(
            comparison(rounds(0.05, wobble=0.9), rounds(1.0, wobble=0.0)), "A", "B"
        ),
        judge.judge("compile-fusion", rounds(3.0), contention={"reason": busy}),
    ):
        assert v.verdict == verdict_rule.INCONCLUSIVE
        assert ": not judged (" in v.line(), v.line()
    slower_b = judge.faster(comparison(rounds(1.0), rounds(3.0), reason=busy), "A", "B")
    slower_a = judge.faster(comparison(rounds(3.0), rounds(1.0), reason=busy), "A", "B")
    assert slower_b.line().startswith("A 3.00× faster than B")
    assert slower_a.line().startswith("B 3.00× faster than A")


def test_the_table_and_the_verdict_give_the_same_number_for_the_same_pair():
    """Even rounds, skewed: a ratio of medians and a median of ratios differ here."""
    a = [1.0, 1.0, 1.0, 1.0, 9.0, 9.0, 9.0, 9.0]
    b = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    cmp = comparison(a, b)
    assert cmp.measurements["A"].median / cmp.measurements["B"].median == 2.5
    for numerator, denominator in (("A", "B"), ("B", "A")):
        v = judge.faster(cmp, numerator, denominator)
        side, k = cmp.speed("B")
        assert (side, f"{k:.2f}") == (1, "2.50") or k == v.factor
        assert v.factor == k
        speed_cell = cmp.speed_text("B")  # the table's cell for B against A
        assert speed_cell.split("×")[0] in v.line()
        assert speed_cell.endswith("faster") == v.line().startswith("B ")
    assert cmp.speedup("B") == pytest.approx(1 / cmp.ratio("B"))


def test_skipped_says_smoke_mode_left_it_out():
    v = judge.skipped("faster", "timed in full mode only")
    assert v.verdict == verdict_rule.SKIPPED and "full mode only" in v.explanation


def test_a_comparison_named_as_registered_needs_no_names():
    cmp = comparison(rounds(3.0), rounds(1.0, wobble=0.0))
    cmp.measurements = {
        "eager": cmp.measurements["A"],
        "torch.compile": cmp.measurements["B"],
    }
    v = judge.judge("compile-fusion", cmp, pairing="compile")
    assert v.names == ("eager", "torch.compile") and v.verdict == verdict_rule.HOLDS


@pytest.fixture
def cell(monkeypatch):
    """A notebook cell the test moves through: ``cell[0] = 7`` runs cell 7."""
    from course_utils import cell_notes

    now = [1]
    cell_notes.reset()
    monkeypatch.setattr(cell_notes, "cell", lambda: now[0])
    yield now
    cell_notes.reset()


def test_the_contended_reason_is_said_once_per_cell(cell):
    busy = "load 4.1 on 2 cores"
    cmp = comparison(rounds(5.0), rounds(1.0, wobble=0.0), reason=busy)
    shown = cmp._repr_markdown_()  # the table and its footer
    texts = [str(judge.faster(cmp, "A", "B")) for _ in range(3)]
    everything = "\n".join([shown, *texts])
    assert everything.count(judge.CONTENDED_REMEDY) == 1
    assert shown.count(judge.CONTENDED_REMEDY) == 1
    assert all(t.endswith(": not judged (contended)") for t in texts)
    cell[0] = 2  # the next cell: the same cause again, in a few words
    again = str(judge.faster(cmp, "A", "B"))
    assert (
        again.endswith(f"Contended again ({busy}).")
        and judge.CONTENDED_REMEDY not in again
    )
    cell[0] = 5  # a later cell says it whole
    assert judge.CONTENDED_REMEDY in str(judge.faster(cmp, "A", "B"))


def test_without_its_table_the_first_verdict_of_a_cell_says_the_remedy(cell):
    cmp = comparison(rounds(5.0), rounds(1.0, wobble=0.0), reason="load 4.1 on 2 cores")
    first, second = (str(judge.faster(cmp, "A", "B")) for _ in range(2))
    assert judge.CONTENDED_REMEDY in first and judge.CONTENDED_REMEDY not in second


def test_outside_a_notebook_every_line_is_complete():
    cmp = comparison(rounds(5.0), rounds(1.0, wobble=0.0), reason="load 4.1 on 2 cores")
    texts = [str(judge.faster(cmp, "A", "B")) for _ in range(2)]
    assert all(judge.CONTENDED_REMEDY in t for t in texts)


def test_break_even_is_judged_only_with_its_per_call_verdict():
    fast = comparison(rounds(2.0), rounds(1.0, wobble=0.0))
    judged = judge.break_even(judge.faster(fast, "A", "B"), 1.0, 0.01, 0.02)
    assert judged == "Break-even: B's first call pays for itself after 99 calls."
    busy = comparison(
        rounds(2.0), rounds(1.0, wobble=0.0), reason="load 4.1 on 2 cores"
    )
    unjudged = judge.break_even(judge.faster(busy, "A", "B"), 1.0, 0.01, 0.02)
    assert unjudged.startswith(
        "Break-even, not judged (contended): B's first call pays for itself after "
        "99 calls."
    )
    slow = comparison(rounds(0.5), rounds(1.0, wobble=0.0))
    slower = judge.break_even(judge.faster(slow, "A", "B"), 1.0, 0.02, 0.01)
    assert slower == (
        "Break-even: B's first call never pays for itself: it is not faster per call."
    )


def test_break_even_follows_the_verdicts_factor_not_the_medians():
    """The eager time per call is the compiled median times the verdict's factor."""
    fast = judge.faster(comparison(rounds(2.0), rounds(1.0, wobble=0.0)), "A", "B")
    # medians that say 3x: the count still rests on the verdict's 2x
    assert judge.break_even_count(fast, 1.0, 0.01, 0.03) == 99


def test_compact_gives_a_line_per_verdict_and_a_shared_reason_once(cell):
    busy = "load 4.1 on 2 cores"
    shown = {
        "quiet pair": judge.faster(
            comparison(rounds(2.0), rounds(1.0, wobble=0.0)), "A", "B"
        ),
        "busy one": judge.faster(
            comparison(rounds(3.0), rounds(1.0), reason=busy), "A", "B"
        ),
        "busy two": judge.faster(
            comparison(rounds(5.0), rounds(1.0), reason=busy), "A", "B"
        ),
        "a fact": judge.fact("faster", True, "shown above"),
    }
    text = judge.compact(shown)
    lines = text.splitlines()
    assert len(lines) == 5, lines
    assert lines[0] == "quiet pair: B 2.00× faster than A (1.70–2.35×)"
    assert lines[1].endswith(": not judged (contended)")
    assert lines[3] == "a fact: holds: shown above"
    assert lines[4] == f"Contended ({busy}): {judge.CONTENDED_REMEDY}."
    assert text.count(busy) == 1
    assert judge.CONTENDED_REMEDY not in judge.compact(shown)  # said in this cell


def test_compact_takes_verdicts_without_labels(cell):
    lines = judge.compact(
        [
            judge.faster(comparison(rounds(2.0), rounds(1.0, wobble=0.0)), "A", "B"),
            judge.faster(comparison(rounds(0.5), rounds(1.0, wobble=0.0)), "A", "B"),
        ]
    ).splitlines()
    assert lines[0] == "B 2.00× faster than A (1.70–2.35×)"
    assert lines[1].startswith("A 2.00× faster than B (")
