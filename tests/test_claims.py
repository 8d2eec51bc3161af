"""course_utils.claims.core: verdicts, tables, files and the command; claim_benchmarks' oracles."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_utils.claims import benchmarks as claim_benchmarks
from course_utils.claims import core as claims
from course_utils.tooling.errors import CourseError

ROOT = Path(__file__).resolve().parents[1]
CPU_ONLY = {"jax_kinds": {"cpu"}, "torch_kinds": {"cpu"}}

CLAIM = claims.Claim(
    "fake", "fake claim | with a pipe", "000 (test)", "2x", "a / b", 1.0
)
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


@pytest.mark.parametrize(
    "bad", [[], [1.0, float("nan")], [1.0, -2.0], [0.0], [math.inf]]
)
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
    assert (out.verdict, out.why, out.samples, out.measured_text()) == (
        claims.NOT_TESTABLE,
        "needs a TPU",
        [],
        "—",
    )
    assert claims.evaluate(CLAIM, skipped).verdict == claims.SKIPPED
    measured = claims.evaluate(
        CLAIM, lambda: claims.Measured([3.0, 3.5, 4.0], "fake", {"k": 1})
    )
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
        claims.evaluate(
            CLAIM, lambda: claims.Measured([2.0, 2.5, 3.0], "what | with pipe")
        ),
        claims.evaluate(HIGH, lambda: claims.Measured([2.0, 3.0], "too slow")),
        claims.Outcome(HIGH, claims.NOT_TESTABLE, "no cluster"),
    ]


def test_markdown_table_has_one_row_per_claim_and_escapes_pipes():
    text = claims.table(_outcomes())
    lines = text.splitlines()
    assert lines[0].startswith(
        "| claim | device | source | claimed | measured here | verdict | why |"
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
    text = claims.text_table(_outcomes())
    assert "[holds] fake claim" in text and "source: 000 (test)" in text
    assert "ratio = a / b" in text and "why: no cluster" in text


def test_report_json_and_png(tmp_path):
    report = claims.ClaimsReport(
        _outcomes(), smoke=True, machine={"summary": "test box"}, seconds=1.5
    )
    assert (
        report.counts()[claims.HOLDS] == 1 and report.counts()[claims.NOT_TESTABLE] == 1
    )
    assert report.outcome("fake").claim is CLAIM
    with pytest.raises(KeyError, match="no claim 'nope'"):
        report.outcome("nope")
    path = claims.write_json(report, tmp_path / "sub" / "claims.json")
    data = json.loads(path.read_text())
    assert data["smoke"] is True and len(data["claims"]) == 3
    first = data["claims"][0]
    assert (
        first["id"] == "fake" and first["verdict"] == "holds" and first["median"] == 2.5
    )
    assert first["q1"] <= first["median"] <= first["q3"] and first["samples"] == [
        2.0,
        2.5,
        3.0,
    ]
    png = claims.save_plot(report.outcomes, tmp_path / "claims.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "test box" in report._repr_markdown_()


# -------------------------------------------------------------------- run()


@pytest.fixture
def fake_benchmarks(monkeypatch):
    calls = []

    def measure(claim_id, *, smoke, target):
        calls.append((claim_id, smoke))
        if claim_id == "high":
            raise claims.NotTestable("no cluster")
        return claims.Measured([1.5, 2.0, 2.5], "fake")

    monkeypatch.setattr(claim_benchmarks, "CLAIMS", (CLAIM, HIGH))
    monkeypatch.setattr(claim_benchmarks, "measure", measure)
    monkeypatch.setattr(
        claim_benchmarks,
        "detect_devices",
        lambda requested: claims.plan_devices(requested, **CPU_ONLY),
    )
    monkeypatch.setattr(
        claims, "_machine", lambda plan=None: {"summary": "fake machine"}
    )
    return calls


def test_run_measures_prints_and_writes(fake_benchmarks, tmp_path, capsys):
    report = claims.run(smoke=True, out=tmp_path)
    assert fake_benchmarks == [("fake", True), ("high", True)]
    assert [o.verdict for o in report.outcomes] == [claims.HOLDS, claims.NOT_TESTABLE]
    printed = capsys.readouterr().out
    assert (
        "[holds] fake claim" in printed
        and "[not testable here] needs ten times" in printed
    )
    assert (tmp_path / "claims.json").exists() and (tmp_path / "claims.png").exists()


def test_run_only_and_measured(fake_benchmarks):
    report = claims.run(smoke=False, only=["high"], verbose=False)
    assert [o.claim.id for o in report.outcomes] == ["high"] and fake_benchmarks == [
        ("high", False)
    ]
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
    assert (
        set(ids)
        == set(claim_benchmarks._BENCHMARKS)
        == set(claim_benchmarks.FRAMEWORKS)
    )
    assert set(claim_benchmarks.ONLY_ON) <= set(ids)
    for frameworks in claim_benchmarks.FRAMEWORKS.values():
        assert frameworks and set(frameworks) <= {"jax", "torch"}
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
    np.testing.assert_allclose(
        claim_benchmarks.third_derivative_analytic(x), fd, rtol=1e-4, atol=1e-4
    )


# ------------------------------------------------------------------- CLI


def _cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "course_utils.tooling.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def test_cli_help_and_bad_claim():
    out = _cli("claims", "--help")
    assert out.returncode == 0 and "--smoke" in out.stdout and "--out" in out.stdout
    assert "--device {all,cpu,accelerator}" in out.stdout
    out = _cli("claims", "--only", "nope")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "course: error: unknown claim 'nope'"
    )


@pytest.mark.slow
def test_cli_smoke_end_to_end(tmp_path):
    out = _cli(
        "claims",
        "--smoke",
        "--only",
        "higher-order",
        "--only",
        "tpu-llm",
        "--out",
        str(tmp_path),
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "claims.json").read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    assert set(by_id) == {"higher-order", "tpu-llm"} and data["smoke"] is True
    higher = by_id["higher-order"]
    assert higher["verdict"] in (
        claims.HOLDS,
        claims.DOES_NOT_HOLD,
        claims.INCONCLUSIVE,
    )
    assert higher["n"] >= 5 and higher["q1"] <= higher["median"] <= higher["q3"]
    assert by_id["tpu-llm"]["verdict"] == claims.NOT_TESTABLE
    assert higher["device"] == "cpu" and higher["dtype"] == "float32"
    assert higher["precision"] == {"jax_matmul": "highest", "torch_matmul": "highest"}
    assert higher["threads"]["torch_threads"] >= 1
    assert (
        data["devices"] == ["cpu"]
        and "no accelerator was present" in data["device_note"]
    )
    assert (tmp_path / "claims.png").stat().st_size > 1000
    assert "[not testable here]" in out.stdout and "claims.json" in out.stdout


# ------------------------------------------------------------ device kinds

GPU_BOTH = {
    "jax_kinds": {"cpu", "gpu"},
    "torch_kinds": {"cpu", "gpu"},
    "names": {"gpu": "NVIDIA H200"},
}
GPU_JAX_ONLY = {"jax_kinds": {"cpu", "gpu"}, "torch_kinds": {"cpu"}}
GPU_TORCH_ONLY = {"jax_kinds": {"cpu"}, "torch_kinds": {"cpu", "gpu"}}
TPU = {
    "jax_kinds": {"cpu", "tpu"},
    "torch_kinds": {"cpu"},
    "names": {"tpu": "TPU v5 lite"},
}


def test_plan_on_a_cpu_only_machine_says_no_accelerator():
    plan = claims.plan_devices("all", **CPU_ONLY)
    assert [t.kind for t in plan.targets] == ["cpu"] and not plan.accelerator_present
    assert plan.note.startswith("no accelerator was present")
    assert claims.plan_devices("cpu", **CPU_ONLY).targets == plan.targets
    with pytest.raises(CourseError, match="no accelerator is present"):
        claims.plan_devices("accelerator", **CPU_ONLY)
    with pytest.raises(CourseError, match="--device must be one of"):
        claims.plan_devices("gpu", **CPU_ONLY)


def test_plan_with_a_gpu_measures_cpu_and_gpu_with_both_frameworks():
    plan = claims.plan_devices("all", **GPU_BOTH)
    cpu, gpu = plan.targets
    assert (cpu.kind, cpu.torch, cpu.jax) == ("cpu", "cpu", True)
    assert (gpu.kind, gpu.torch, gpu.jax, gpu.name) == (
        "gpu",
        "cuda",
        True,
        "NVIDIA H200",
    )
    assert plan.note == "" and plan.accelerator_present and gpu.missing == {}
    assert [t.kind for t in claims.plan_devices("accelerator", **GPU_BOTH).targets] == [
        "gpu"
    ]
    assert [t.kind for t in claims.plan_devices("cpu", **GPU_BOTH).targets] == ["cpu"]


@pytest.mark.parametrize(
    "reach, kind, absent, reason",
    [
        (GPU_JAX_ONLY, "gpu", "torch", "torch.cuda.is_available() is False"),
        (GPU_TORCH_ONLY, "gpu", "jax", "jax[cuda13]"),
        (TPU, "tpu", "torch", "without torch_xla, which is not installed"),
    ],
)
def test_plan_says_which_framework_cannot_reach_the_accelerator(
    reach, kind, absent, reason
):
    target = claims.plan_devices("accelerator", **reach).targets[0]
    assert target.kind == kind and not target.has(absent)
    assert set(target.missing) == {absent} and reason in target.missing[absent]
    present = ({"jax", "torch"} - {absent}).pop()
    assert target.has(present)


def test_torch_xla_installed_still_leaves_pytorch_off_the_tpu():
    target = claims.plan_devices("accelerator", **TPU, torch_xla=True).targets[0]
    assert target.torch is None and "lazy tensors" in target.missing["torch"]


def test_paired_claims_need_both_frameworks_on_the_same_device_kind():
    tpu = claims.plan_devices("accelerator", **TPU).targets[0]
    why = claims.why_not_testable(tpu, ("torch", "jax"))
    assert why.startswith("both frameworks must run on the same device kind (TPU)")
    assert "torch_xla" in why
    assert claims.why_not_testable(tpu, ("jax",)) is None  # JAX alone runs on the TPU
    assert "torch_xla" in claims.why_not_testable(tpu, ("torch",))
    gpu = claims.plan_devices("accelerator", **GPU_BOTH).targets[0]
    assert claims.why_not_testable(gpu, ("torch", "jax")) is None
    cpu = claims.plan_devices("cpu", **GPU_BOTH).targets[0]
    assert claims.why_not_testable(cpu, ("torch", "jax"), ("gpu",), "counters") == (
        "measured on the GPU only: counters"
    )
    assert claims.why_not_testable(gpu, ("torch", "jax"), ("gpu",), "counters") is None


@pytest.mark.parametrize(
    "claim_id, reach, kind, match",
    [
        (
            "higher-order",
            TPU,
            "tpu",
            r"same device kind \(TPU\), but PyTorch has no TPU",
        ),
        ("compile-matmul", TPU, "tpu", "PyTorch has no TPU device without torch_xla"),
        (
            "train-throughput",
            GPU_JAX_ONLY,
            "gpu",
            r"same device kind \(GPU\), but PyTorch sees",
        ),
        ("first-call", GPU_TORCH_ONLY, "gpu", "JAX sees no GPU"),
        ("batch1-latency", GPU_BOTH, "gpu", "measured on the CPU only"),
        ("train-memory", GPU_BOTH, "cpu", "measured on the GPU only"),
        ("train-memory", TPU, "tpu", "measured on the GPU only"),
    ],
)
def test_measure_refuses_a_device_kind_with_the_reason(claim_id, reach, kind, match):
    target = next(
        t for t in claims.plan_devices("all", **reach).targets if t.kind == kind
    )
    with pytest.raises(claims.NotTestable, match=match):
        claim_benchmarks.measure(claim_id, smoke=True, target=target)


class _FakeAccelerator:
    platform = "gpu"
    device_kind = "Fake GPU"


def test_detect_devices_reads_jax_devices_and_torch_cuda(monkeypatch):
    import jax
    import torch

    assert (
        claim_benchmarks.detect_devices("all").targets[0].kind == "cpu"
    )  # this machine
    real = jax.devices

    def devices(backend=None):
        return real("cpu") if backend == "cpu" else [_FakeAccelerator()]

    monkeypatch.setattr(jax, "devices", devices)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    plan = claim_benchmarks.detect_devices("all")
    assert [(t.kind, t.jax, t.torch) for t in plan.targets] == [
        ("cpu", True, "cpu"),
        ("gpu", True, None),
    ]
    assert (
        plan.targets[1].name == "Fake GPU"
        and "torch.cuda" in plan.targets[1].missing["torch"]
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Fake GPU (torch)")
    gpu = claim_benchmarks.detect_devices("accelerator").targets
    assert [(t.kind, t.jax, t.torch) for t in gpu] == [("gpu", True, "cuda")]
    monkeypatch.setattr(jax, "devices", real)  # a CPU-only jax beside a CUDA torch
    only_torch = claim_benchmarks.detect_devices("accelerator").targets[0]
    assert (only_torch.jax, only_torch.torch, only_torch.name) == (
        False,
        "cuda",
        "Fake GPU (torch)",
    )
    assert "JAX sees no GPU" in only_torch.missing["jax"]
    monkeypatch.setattr(jax, "devices", devices)
    _FakeAccelerator.platform, _FakeAccelerator.device_kind = "tpu", "TPU v6 lite"
    try:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        tpu = claim_benchmarks.detect_devices("accelerator").targets[0]
    finally:
        _FakeAccelerator.platform, _FakeAccelerator.device_kind = "gpu", "Fake GPU"
    assert (tpu.kind, tpu.jax, tpu.torch, tpu.name) == (
        "tpu",
        True,
        None,
        "TPU v6 lite",
    )


# ----------------------------------------------------- precision and devices


def test_measure_matches_precision_records_it_and_restores_it(monkeypatch):
    import jax
    import torch

    seen = {}

    def fake_benchmark(ctx):
        seen["jax"] = jax.config.jax_default_matmul_precision
        seen["torch"] = torch.get_float32_matmul_precision()
        seen["tf32"] = (
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )
        seen["devices"] = (ctx.torch_device.type, ctx.jax_device.platform)
        return claims.Measured([2.0, 2.0], "fake")

    monkeypatch.setitem(claim_benchmarks._BENCHMARKS, "compile-matmul", fake_benchmark)
    gpu = claims.plan_devices("accelerator", **GPU_TORCH_ONLY).targets[0]
    before = torch.get_float32_matmul_precision()
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        m = claim_benchmarks.measure("compile-matmul", smoke=True, target=gpu)
        after = (
            jax.config.jax_default_matmul_precision,
            torch.get_float32_matmul_precision(),
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )
    finally:
        torch.set_float32_matmul_precision(before)
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
    assert seen == {
        "jax": "highest",
        "torch": "highest",
        "tf32": (False, False),
        "devices": ("cuda", "cpu"),
    }  # PyTorch on CUDA; JAX unused, left on the CPU
    assert after == (None, "high", True, True)
    c = m.conditions
    assert (
        c["device"] == "gpu"
        and c["dtype"] == "float32"
        and c["frameworks"] == ["torch"]
    )
    assert c["precision"] == {
        "jax_matmul": "highest",
        "torch_matmul": "highest",
        "torch_cuda_tf32": False,
        "torch_cudnn_tf32": False,
    }
    assert c["threads"]["torch_threads"] == torch.get_num_threads()


def test_measure_puts_both_frameworks_on_the_targets_device_kind(monkeypatch):
    import jax
    import torch

    cpu0 = jax.devices("cpu")[0]
    real = jax.devices
    monkeypatch.setattr(
        jax,
        "devices",
        lambda backend=None: [cpu0] if backend == "gpu" else real(backend),
    )
    seen = []

    def fake_benchmark(ctx):
        seen.append(
            (ctx.torch_device, ctx.jax_device, ctx.jax_put(np.ones(2)).devices())
        )
        return claims.Measured([1.0], "fake")

    monkeypatch.setitem(claim_benchmarks._BENCHMARKS, "higher-order", fake_benchmark)
    gpu = claims.plan_devices("accelerator", **GPU_BOTH).targets[0]
    claim_benchmarks.measure("higher-order", smoke=True, target=gpu)
    assert seen == [
        (torch.device("cuda"), cpu0, {cpu0})
    ]  # the fake "gpu" is the CPU here


def test_outcomes_carry_the_device_and_conditions_into_json(tmp_path):
    cond = {
        "device_name": "NVIDIA H200",
        "precision": {"jax_matmul": "highest"},
        "dtype": "float32",
        "threads": {"torch_threads": 4},
    }
    o = claims.evaluate(
        CLAIM, lambda: claims.Measured([2.0, 3.0], "x", conditions=cond), "gpu"
    )
    nt = claims.evaluate(
        CLAIM, lambda: (_ for _ in ()).throw(claims.NotTestable("no")), "tpu"
    )
    d = o.to_dict()
    assert (d["device"], d["device_name"], d["dtype"]) == (
        "gpu",
        "NVIDIA H200",
        "float32",
    )
    assert d["precision"] == {"jax_matmul": "highest"} and d["threads"] == {
        "torch_threads": 4
    }
    assert {
        "id",
        "verdict",
        "why",
        "median",
        "q1",
        "q3",
        "n",
        "samples",
        "details",
    } <= set(d)
    assert (nt.verdict, nt.device, nt.precision) == (claims.NOT_TESTABLE, "tpu", {})
    assert o.conditions_text() == (
        "gpu (NVIDIA H200); float32; matmul precision jax_matmul highest; torch threads 4"
    )


# ------------------------------------------------------- run() on devices


def _fake_run(monkeypatch, reach):
    calls = []

    def measure(claim_id, *, smoke, target):
        calls.append((claim_id, target.kind))
        if claim_id == "high":
            raise claims.NotTestable(f"no cluster on {target.kind}")
        return claims.Measured([1.5, 2.0, 2.5], "fake", conditions={"dtype": "float32"})

    monkeypatch.setattr(claim_benchmarks, "CLAIMS", (CLAIM, HIGH))
    monkeypatch.setattr(claim_benchmarks, "measure", measure)
    monkeypatch.setattr(
        claim_benchmarks,
        "detect_devices",
        lambda requested: claims.plan_devices(requested, **reach),
    )
    monkeypatch.setattr(
        claims, "_machine", lambda plan=None: {"summary": "fake machine"}
    )
    return calls


def test_run_on_a_gpu_machine_measures_every_claim_on_cpu_and_gpu(
    monkeypatch, tmp_path, capsys
):
    calls = _fake_run(monkeypatch, GPU_BOTH)
    given = claims.Measured([0.5, 0.6, 0.7], "timed by the caller on the CPU")
    report = claims.run(smoke=True, out=tmp_path, measured={"fake": given})
    assert calls == [
        ("high", "cpu"),
        ("fake", "gpu"),
        ("high", "gpu"),
    ]  # fake on cpu: given
    assert [(o.claim.id, o.device) for o in report.outcomes] == [
        ("fake", "cpu"),
        ("high", "cpu"),
        ("fake", "gpu"),
        ("high", "gpu"),
    ]
    assert report.outcome("fake").verdict == claims.DOES_NOT_HOLD  # the CPU's, first
    assert report.outcome("fake", device="gpu").verdict == claims.HOLDS
    with pytest.raises(KeyError, match="on tpu"):
        report.outcome("fake", device="tpu")
    data = json.loads((tmp_path / "claims.json").read_text())
    assert data["devices"] == ["cpu", "gpu"] and data["device_note"] == ""
    assert [(c["id"], c["device"]) for c in data["claims"]] == [
        (o.claim.id, o.device) for o in report.outcomes
    ]
    assert data["claims"][3]["why"] == "no cluster on gpu"
    printed = capsys.readouterr().out
    assert (
        "measuring fake on gpu" in printed
        and "on: gpu (NVIDIA H200); float32" in printed
    )
    assert "| fake claim \\| with a pipe | gpu |" in report._repr_markdown_()


def test_run_device_choice_and_cpu_only_note(monkeypatch, tmp_path):
    calls = _fake_run(monkeypatch, GPU_BOTH)
    claims.run(smoke=True, device="accelerator", verbose=False)
    assert {kind for _, kind in calls} == {"gpu"}
    calls = _fake_run(monkeypatch, CPU_ONLY)
    report = claims.run(smoke=True, out=tmp_path, verbose=False)
    assert report.devices == ["cpu"] and {kind for _, kind in calls} == {"cpu"}
    assert "No accelerator was present" in report._repr_markdown_()
    assert (
        "no accelerator"
        in json.loads((tmp_path / "claims.json").read_text())["device_note"]
    )
    with pytest.raises(CourseError, match="no accelerator is present"):
        claims.run(smoke=True, device="accelerator", verbose=False)


def test_run_on_a_tpu_judges_each_pairing_with_the_real_rules(monkeypatch, tmp_path):
    import jax

    cpu0 = jax.devices("cpu")[0]
    real = jax.devices
    monkeypatch.setattr(
        jax,
        "devices",
        lambda backend=None: [cpu0] if backend == "tpu" else real(backend),
    )
    monkeypatch.setattr(
        claim_benchmarks,
        "detect_devices",
        lambda requested: claims.plan_devices(requested, **TPU),
    )
    monkeypatch.setattr(
        claims, "_machine", lambda plan=None: {"summary": "fake TPU VM"}
    )
    ran = []
    for cid in ("higher-order", "first-call", "compile-matmul"):
        monkeypatch.setitem(
            claim_benchmarks._BENCHMARKS,
            cid,
            lambda ctx, c=cid: (
                ran.append((c, ctx.target.kind))
                or claims.Measured([20.0, 30.0], "fake")
            ),
        )
    report = claims.run(
        smoke=True,
        device="accelerator",
        out=tmp_path,
        verbose=False,
        only=["higher-order", "first-call", "compile-matmul"],
    )
    assert ran == [("first-call", "tpu")]
    by_id = {
        c["id"]: c for c in json.loads((tmp_path / "claims.json").read_text())["claims"]
    }
    assert {c["device"] for c in by_id.values()} == {"tpu"}
    assert by_id["first-call"]["verdict"] == claims.HOLDS
    assert by_id["first-call"]["precision"]["jax_matmul"] == "highest"
    for cid in ("higher-order", "compile-matmul"):
        assert (
            by_id[cid]["verdict"] == claims.NOT_TESTABLE
            and "torch_xla" in by_id[cid]["why"]
        )
    assert "same device kind (TPU)" in by_id["higher-order"]["why"]
    assert report.devices == ["tpu"]


def test_cli_device_accelerator_on_a_cpu_machine_is_one_clear_error():
    out = _cli("claims", "--device", "accelerator", "--only", "tpu-llm")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no accelerator is present" in lines[0]


# ------------------------------------------------------------ memory claim


def test_step_memory_compares_resident_plus_each_allocators_peak():
    m = claim_benchmarks.step_memory_measured(
        torch_resident=1000,
        torch_above=[500, 600],
        jax_resident=1010,
        jax_above=[290, 190],
        donated_bytes=900,
        batch=8,
    )
    assert m.samples == [1500 / 1300, 1600 / 1200]
    assert m.details["jax_donated_bytes"] == 900 and m.details["torch_above_bytes"] == [
        500,
        600,
    ]
    assert "batch 8" in m.what and "donates 900 B" in m.what
    with pytest.raises(claims.NotTestable, match="not like with like"):
        claim_benchmarks.step_memory_measured(
            torch_resident=1000,
            torch_above=[1],
            jax_resident=2000,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )
    with pytest.raises(ValueError, match="equally many"):
        claim_benchmarks.step_memory_measured(
            torch_resident=1,
            torch_above=[1, 2],
            jax_resident=1,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )
    with pytest.raises(ValueError, match="measuring error"):
        claim_benchmarks.step_memory_measured(
            torch_resident=1,
            torch_above=[-1],
            jax_resident=1,
            jax_above=[1],
            donated_bytes=0,
            batch=1,
        )


def _main_signature(lowered) -> str:
    return next(
        line
        for line in lowered.as_text().splitlines()
        if "func.func public @main" in line
    )


def test_jax_train_step_donates_exactly_the_parameters_and_adam_state():
    import jax

    ctx = claim_benchmarks._Ctx(smoke=True)
    for donate in (False, True):
        pair = claim_benchmarks._train_steps(ctx, 2, donate=donate)
        state = (pair.box["params"], pair.box["opt"])
        main = _main_signature(pair.jax_train_step.lower(*state, *pair.jax_batch))
        # Every parameter and Adam-state array is written back into its own buffer
        # (one alias per leaf); the batch (two more arguments) is not donated.
        n_state = len(jax.tree_util.tree_leaves(state))
        assert main.count("%arg") == n_state + 2
        assert main.count("tf.aliasing_output") == (n_state if donate else 0)


def test_train_memory_on_a_gpu_target_without_both_frameworks_is_not_testable():
    gpu = claims.plan_devices("accelerator", **GPU_JAX_ONLY).targets[0]
    with pytest.raises(claims.NotTestable, match="CUDA GPU only"):
        claim_benchmarks._train_memory(claim_benchmarks._Ctx(True, gpu))


def test_gpu_memory_benchmark_wiring_with_fake_allocator_readers(monkeypatch):
    import jax

    from course_utils import memory

    cpu0 = jax.devices("cpu")[0]
    real = jax.devices
    monkeypatch.setattr(
        jax,
        "devices",
        lambda backend=None: [cpu0] if backend == "gpu" else real(backend),
    )
    rounds = []

    def torch_peak_above(step, *, before, device):
        before()
        step()
        rounds.append("torch")
        return 3_000

    def jax_peak_above(step, device):
        assert device == cpu0  # the target's device kind ("gpu", faked by the CPU here)
        step()
        rounds.append("jax")
        return 2_000

    monkeypatch.setattr(memory, "torch_peak_above", torch_peak_above)
    monkeypatch.setattr(memory, "jax_peak_above", jax_peak_above)
    target = claims.DeviceTarget("gpu", "fake", jax=True, torch="cpu")
    m = claim_benchmarks._train_memory_gpu(claim_benchmarks._Ctx(True, target))
    assert rounds == ["torch", "jax"] * 3  # interleaved
    d = m.details
    # Params + Adam moments (+ step counters) + batch: the same state on both sides.
    assert (
        abs(d["torch_resident_bytes"] - d["jax_resident_bytes"])
        < 0.01 * d["jax_resident_bytes"]
    )
    assert d["jax_donated_bytes"] > 0.9 * d["jax_resident_bytes"]
    expected = (d["torch_resident_bytes"] + 3_000) / (d["jax_resident_bytes"] + 2_000)
    assert m.samples == pytest.approx([expected] * 3)
