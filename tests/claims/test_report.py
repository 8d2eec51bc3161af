"""course_utils.claims.report: the tables, the report object, claims.json and the plot."""

import json

import pytest

from course_utils.claims import report, verdict_rule, verdicts
from tests.claims.fakes import CLAIM, HIGH
from tests.claims.test_verdict_rule import rounds


def _outcomes():
    return [
        verdicts.evaluate(
            CLAIM, lambda: verdict_rule.Measured(rounds(2.5), "what | with pipe")
        ),
        verdicts.evaluate(HIGH, lambda: verdict_rule.Measured(rounds(2.5), "too slow")),
        verdict_rule.Outcome(HIGH, verdict_rule.NOT_TESTABLE, "no cluster"),
    ]


def test_markdown_table_has_one_row_per_claim_and_escapes_pipes():
    text = report.table(_outcomes())
    lines = text.splitlines()
    assert lines[0].startswith(
        "| claim | device | source | stated | measured here | verdict | why |"
    )
    assert len(lines) == 2 + 3
    for line in lines[2:]:
        assert line.replace("\\|", "").count("|") == 8, line  # seven cells
        assert line.split(" | ")[1] == "cpu"
    assert (
        "**holds**" in lines[2]
        and "**does not hold**" in lines[3]
        and "**not testable here**" in lines[4]
    )
    assert "fake claim \\| with a pipe" in lines[2]


def test_text_table_names_verdict_source_and_ratio():
    text = report.text_table(_outcomes())
    assert "[holds] fake claim" in text and "source: 000 (test)" in text
    assert "ratio = a / b" in text and "why: no cluster" in text
    assert "95 % interval" in text


def test_report_json_and_png(tmp_path):
    rep = report.ClaimsReport(
        _outcomes(), smoke=True, machine={"summary": "test box"}, seconds=1.5
    )
    assert (
        rep.counts()[verdict_rule.HOLDS] == 1
        and rep.counts()[verdict_rule.NOT_TESTABLE] == 1
    )
    assert rep.outcome("fake").claim is CLAIM
    with pytest.raises(KeyError, match="no claim 'nope'"):
        rep.outcome("nope")
    path = report.write_json(rep, tmp_path / "sub" / "claims.json")
    data = json.loads(path.read_text())
    assert data["smoke"] is True and len(data["claims"]) == 3
    assert data["schema"] == 1 and data["fingerprint"]["cores"] >= 1
    first = data["claims"][0]
    assert (
        first["id"] == "fake" and first["verdict"] == "holds" and first["median"] == 2.5
    )
    assert first["interval"][0] <= first["median"] <= first["interval"][1]
    assert first["samples"] == rounds(2.5)
    png = report.save_plot(rep.outcomes, tmp_path / "claims.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "test box" in rep._repr_markdown_()


def test_save_plot_keeps_the_pyplot_backend_and_figures(tmp_path, monkeypatch):
    """A notebook's inline backend must survive a claims run, or its plots never show."""
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()  # resolves pyplot's backend first
    figures = plt.get_fignums()
    switched = []
    monkeypatch.setattr(matplotlib, "use", lambda *a, **k: switched.append(a))
    monkeypatch.setattr(plt, "switch_backend", lambda *a, **k: switched.append(a))
    png = report.save_plot(_outcomes(), tmp_path / "claims.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert switched == [], f"save_plot switched the backend: {switched}"
    assert matplotlib.get_backend() == before
    assert plt.get_fignums() == figures  # no figure left open in pyplot


def test_a_table_of_contended_outcomes_says_the_remedy_once():
    busy = {"reason": "other processes used 80% of the 2 cores"}
    outcomes = [
        verdicts.evaluate(
            claim,
            lambda: verdict_rule.Measured(rounds(2.5), "timed", contention=busy),
        )
        for claim in (CLAIM, HIGH)
    ]
    assert all(
        verdicts.CONTENDED_REMEDY in o.explanation for o in outcomes
    )  # the record
    for text in (report.table(outcomes), report.text_table(outcomes)):
        assert text.count(verdicts.CONTENDED_REMEDY) == 1, text
        assert text.count("not judged (contended)") == 2


def test_the_brief_table_names_the_faster_side_and_each_reason_once():
    from course_utils.claims import registry

    busy = {"reason": "other processes used 80% of the 2 cores"}
    outcomes = [
        verdicts.evaluate(
            registry.get(claim),
            lambda: verdict_rule.Measured(
                rounds(0.5), "timed", contention=busy, pairing="compiled"
            ),
        )
        for claim in ("higher-order", "jax-2-5x")
    ]
    outcomes.append(
        verdict_rule.Outcome(HIGH, verdict_rule.NOT_TESTABLE, "no GPU: why")
    )
    text = report.brief_table(outcomes)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 3 and all(r.count(" | ") == 3 for r in rows)  # four cells
    assert (
        "| PyTorch torch.compile(torch.func) 2.00× faster than JAX jit (1.70–2.36×) |"
        in rows[0]
    )
    assert text.count("contended") == 1 and text.count(verdicts.CONTENDED_REMEDY) == 1
    assert "- *inconclusive, contended*: `higher-order`, `jax-2-5x`." in text
    assert "- *not testable here, no GPU*: `high`." in text
