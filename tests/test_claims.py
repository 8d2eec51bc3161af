"""course_utils.claims: verdicts, tables, files and the command; claim_benchmarks' oracles."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_utils import claim_benchmarks, claims
from course_utils.notebooks import CourseError

ROOT = Path(__file__).resolve().parents[1]

CLAIM = claims.Claim("fake", "fake claim | with a pipe", "000 (test)", "2x", "a / b", 1.0)
HIGH = claims.Claim("high", "needs ten times", "001 (test)", "10x", "a / b", 10.0)


# ----------------------------------------------------------------- verdicts


@pytest.mark.parametrize(
    "samples, threshold, expected",
    [
        ([2.0, 2.1, 2.2, 2.3, 2.4], 1.0, claims.HOLDS),
        ([0.5, 0.6, 0.7, 0.8], 1.0, claims.DOES_NOT_HOLD),
        ([0.8, 0.9, 1.1, 1.2], 1.0, claims.INCONCLUSIVE),
        ([1.6], 1.5, claims.HOLDS),
        ([1.4], 1.5, claims.DOES_NOT_HOLD),
        ([12.0, 15.0, 20.0], 10.0, claims.HOLDS),
        ([1.0, 1.0, 1.0], 1.0, claims.INCONCLUSIVE),  # a tie is not a win
    ],
)
def test_verdict_uses_the_quartiles(samples, threshold, expected):
    verdict, why = claims.verdict(samples, threshold)
    assert verdict == expected
    assert f"{threshold:g}x" in why


def test_one_outlier_does_not_flip_a_verdict():
    # The median alone would pass; the quartiles see that half the rounds fail.
    assert claims.verdict([0.9, 0.95, 1.05, 1.1, 50.0], 1.0)[0] == claims.INCONCLUSIVE
    assert claims.verdict([2.0, 2.1, 2.2, 2.3, 0.01], 1.0)[0] == claims.HOLDS


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [1.0, -2.0], [0.0], [math.inf]])
def test_verdict_rejects_unusable_samples(bad):
    with pytest.raises(ValueError):
        claims.verdict(bad, 1.0)


def test_quartiles_match_statistics_inclusive():
    import statistics

    values = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    q = statistics.quantiles(values, n=4, method="inclusive")
    assert claims.quartiles(values) == (q[0], q[2])
    assert claims.quartiles([7.0]) == (7.0, 7.0)


def test_paired_ratios_pair_rounds_and_check_lengths():
    assert claims.paired_ratios([2.0, 6.0], [1.0, 2.0]) == [2.0, 3.0]
    with pytest.raises(ValueError, match="equally long"):
        claims.paired_ratios([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        claims.paired_ratios([], [])


def test_claim_needs_a_positive_threshold():
    with pytest.raises(ValueError, match="threshold"):
        claims.Claim("x", "x", "s", "1x", "a / b", 0.0)


# ----------------------------------------------------------------- evaluate


def test_evaluate_turns_exceptions_into_verdicts():
    def not_testable():
        raise claims.NotTestable("needs a TPU")

    def skipped():
        raise claims.SkippedInSmoke("too slow")

    out = claims.evaluate(CLAIM, not_testable)
    assert (out.verdict, out.why, out.samples, out.measured_text()) == (claims.NOT_TESTABLE, "needs a TPU", [], "—")
    assert claims.evaluate(CLAIM, skipped).verdict == claims.SKIPPED
    measured = claims.evaluate(CLAIM, lambda: claims.Measured([3.0, 3.5, 4.0], "fake", {"k": 1}))
    assert measured.verdict == claims.HOLDS
    assert measured.median == 3.5 and measured.details == {"k": 1}
    assert measured.measured_text().startswith("3.50x (IQR ")


def test_other_errors_from_a_benchmark_propagate():
    def broken():
        raise RuntimeError("a bug, not a verdict")

    with pytest.raises(RuntimeError, match="a bug"):
        claims.evaluate(CLAIM, broken)


# ------------------------------------------------------------------- output


def _outcomes():
    return [
        claims.evaluate(CLAIM, lambda: claims.Measured([2.0, 2.5, 3.0], "what | with pipe")),
        claims.evaluate(HIGH, lambda: claims.Measured([2.0, 3.0], "too slow")),
        claims.Outcome(HIGH, claims.NOT_TESTABLE, "no cluster"),
    ]


def test_markdown_table_has_one_row_per_claim_and_escapes_pipes():
    text = claims.table(_outcomes())
    lines = text.splitlines()
    assert lines[0].startswith("| claim | source | claimed | measured here | verdict | why |")
    assert len(lines) == 2 + 3
    for line in lines[2:]:
        assert line.replace("\\|", "").count("|") == 7, line  # six cells
    assert "**holds**" in lines[2] and "**does not hold**" in lines[3] and "**not testable here**" in lines[4]
    assert "fake claim \\| with a pipe" in lines[2]


def test_text_table_names_verdict_source_and_ratio():
    text = claims.text_table(_outcomes())
    assert "[holds] fake claim" in text and "source: 000 (test)" in text
    assert "ratio = a / b" in text and "why: no cluster" in text


def test_report_json_and_png(tmp_path):
    report = claims.ClaimsReport(_outcomes(), smoke=True, machine={"summary": "test box"}, seconds=1.5)
    assert report.counts()[claims.HOLDS] == 1 and report.counts()[claims.NOT_TESTABLE] == 1
    assert report.outcome("fake").claim is CLAIM
    with pytest.raises(KeyError, match="no claim 'nope'"):
        report.outcome("nope")
    path = claims.write_json(report, tmp_path / "sub" / "claims.json")
    data = json.loads(path.read_text())
    assert data["smoke"] is True and len(data["claims"]) == 3
    first = data["claims"][0]
    assert first["id"] == "fake" and first["verdict"] == "holds" and first["median"] == 2.5
    assert first["q1"] <= first["median"] <= first["q3"] and first["samples"] == [2.0, 2.5, 3.0]
    png = claims.save_plot(report.outcomes, tmp_path / "claims.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "test box" in report._repr_markdown_()


# -------------------------------------------------------------------- run()


@pytest.fixture
def fake_benchmarks(monkeypatch):
    calls = []

    def measure(claim_id, *, smoke):
        calls.append((claim_id, smoke))
        if claim_id == "high":
            raise claims.NotTestable("no cluster")
        return claims.Measured([1.5, 2.0, 2.5], "fake")

    monkeypatch.setattr(claim_benchmarks, "CLAIMS", (CLAIM, HIGH))
    monkeypatch.setattr(claim_benchmarks, "measure", measure)
    monkeypatch.setattr(claims, "_machine", lambda: {"summary": "fake machine"})
    return calls


def test_run_measures_prints_and_writes(fake_benchmarks, tmp_path, capsys):
    report = claims.run(smoke=True, out=tmp_path)
    assert fake_benchmarks == [("fake", True), ("high", True)]
    assert [o.verdict for o in report.outcomes] == [claims.HOLDS, claims.NOT_TESTABLE]
    printed = capsys.readouterr().out
    assert "[holds] fake claim" in printed and "[not testable here] needs ten times" in printed
    assert (tmp_path / "claims.json").exists() and (tmp_path / "claims.png").exists()


def test_run_only_and_measured(fake_benchmarks):
    report = claims.run(smoke=False, only=["high"], verbose=False)
    assert [o.claim.id for o in report.outcomes] == ["high"] and fake_benchmarks == [("high", False)]
    given = claims.Measured([0.5, 0.6, 0.7], "timed by the caller")
    report = claims.run(smoke=True, measured={"fake": given}, verbose=False)
    assert report.outcome("fake").verdict == claims.DOES_NOT_HOLD
    assert report.outcome("fake").details["measured_by"]
    assert ("fake", True) not in fake_benchmarks[1:]  # not measured a second time


def test_run_rejects_bad_arguments(fake_benchmarks, tmp_path):
    with pytest.raises(CourseError, match="unknown claim 'nope'; claims: fake, high"):
        claims.run(only=["nope"], verbose=False)
    with pytest.raises(CourseError, match="unknown measured claim 'nope'"):
        claims.run(measured={"nope": claims.Measured([1.0], "x")}, verbose=False)
    with pytest.raises(TypeError, match="claims.Measured"):
        claims.run(measured={"fake": [1.0, 2.0]}, verbose=False)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(CourseError, match="is a file"):
        claims.run(out=a_file, verbose=False)


# --------------------------------------------------------- the claim list


def test_every_claim_has_a_benchmark_and_a_source():
    ids = [c.id for c in claim_benchmarks.CLAIMS]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(claim_benchmarks._BENCHMARKS)
    for c in claim_benchmarks.CLAIMS:
        assert any(s in c.source for s in claims.SOURCES.values()), c.id
    with pytest.raises(KeyError, match="no benchmark"):
        claim_benchmarks.measure("nope", smoke=True)


def test_claims_beyond_one_machine_say_why():
    for claim_id in ("tpu-llm", "huge-scale"):
        with pytest.raises(claims.NotTestable, match="needs"):
            claim_benchmarks.measure(claim_id, smoke=True)
    with pytest.raises(claims.SkippedInSmoke, match="without --smoke"):
        claim_benchmarks.measure("compile-training", smoke=True)


def test_third_derivative_oracle_matches_finite_differences():
    x = np.linspace(-2, 2, 41)
    h = 1e-3

    def f(x):
        return np.sin(x**2) + np.exp(np.cos(x))

    fd = (f(x + 2 * h) - 2 * f(x + h) + 2 * f(x - h) - f(x - 2 * h)) / (2 * h**3)
    np.testing.assert_allclose(claim_benchmarks.third_derivative_analytic(x), fd, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------- CLI


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "course_utils.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def test_cli_help_and_bad_claim():
    out = _cli("claims", "--help")
    assert out.returncode == 0 and "--smoke" in out.stdout and "--out" in out.stdout
    out = _cli("claims", "--only", "nope")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("course: error: unknown claim 'nope'")


@pytest.mark.slow
def test_cli_smoke_end_to_end(tmp_path):
    out = _cli("claims", "--smoke", "--only", "higher-order", "--only", "tpu-llm", "--out", str(tmp_path),
               timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "claims.json").read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    assert set(by_id) == {"higher-order", "tpu-llm"} and data["smoke"] is True
    higher = by_id["higher-order"]
    assert higher["verdict"] in (claims.HOLDS, claims.DOES_NOT_HOLD, claims.INCONCLUSIVE)
    assert higher["n"] >= 5 and higher["q1"] <= higher["median"] <= higher["q3"]
    assert by_id["tpu-llm"]["verdict"] == claims.NOT_TESTABLE
    assert (tmp_path / "claims.png").stat().st_size > 1000
    assert "[not testable here]" in out.stdout and "claims.json" in out.stdout
