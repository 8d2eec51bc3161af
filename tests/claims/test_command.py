"""course_utils.claims.command: run() on fake and real benchmarks, and the claims command."""

import json

import pytest

from course_utils.claims import (
    benchmarks,
    command,
    devices,
    harness,
    jit,
    registry,
    results,
    verdict_rule,
)
from course_utils.cli import main as course_main
from course_utils.errors import CourseError
from tests.claims.fakes import CLAIM, CPU_ONLY, GPU_BOTH, HIGH, TPU, cli
from tests.claims.test_verdict_rule import rounds


@pytest.fixture
def fake_benchmarks(monkeypatch):
    calls = []

    def measure(claim_id, *, smoke, target):
        calls.append((claim_id, smoke))
        if claim_id == "high":
            raise verdict_rule.NotTestable("no cluster")
        return verdict_rule.Measured(rounds(2.0), "fake")

    monkeypatch.setattr(registry, "CLAIMS", (CLAIM, HIGH))
    monkeypatch.setattr(benchmarks, "measure", measure)
    monkeypatch.setattr(
        devices,
        "detect_devices",
        lambda requested: devices.plan_devices(requested, **CPU_ONLY),
    )
    monkeypatch.setattr(
        command, "_machine", lambda plan=None: {"summary": "fake machine"}
    )
    return calls


def test_run_measures_prints_and_writes(fake_benchmarks, tmp_path, capsys):
    report = command.run(smoke=True, out=tmp_path)
    assert fake_benchmarks == [("fake", True), ("high", True)]
    assert [o.verdict for o in report.outcomes] == [
        verdict_rule.HOLDS,
        verdict_rule.NOT_TESTABLE,
    ]
    printed = capsys.readouterr().out
    assert (
        "[holds] fake claim" in printed
        and "[not testable here] needs ten times" in printed
    )
    assert (tmp_path / "claims.json").exists() and (tmp_path / "claims.png").exists()


def test_run_only_and_measured(fake_benchmarks):
    report = command.run(smoke=False, only=["high"], verbose=False)
    assert [o.claim.id for o in report.outcomes] == ["high"] and fake_benchmarks == [
        ("high", False)
    ]
    given = verdict_rule.Measured(rounds(0.6), "timed by the caller")
    report = command.run(smoke=True, measured={"fake": given}, verbose=False)
    assert report.outcome("fake").verdict == verdict_rule.DOES_NOT_HOLD
    assert report.outcome("fake").details["measured_by"]
    assert ("fake", True) not in fake_benchmarks[1:]  # not measured a second time


def test_the_busy_warning_comes_from_the_measurements_contention_not_the_start_load(
    fake_benchmarks, tmp_path
):
    """A quiet run has no warning whatever the load was at the start; a contended one names the claim."""
    report = command.run(smoke=True, out=tmp_path, verbose=False)
    assert "warning" not in report.machine
    busy = {"reason": "other processes used 80% of the 2 cores"}
    given = verdict_rule.Measured(
        rounds(2.0), "timed beside other work", contention=busy
    )
    report = command.run(
        smoke=True, measured={"fake": given}, out=tmp_path, verbose=False
    )
    assert report.outcome("fake").verdict == verdict_rule.INCONCLUSIVE
    assert report.machine["warning"].startswith(
        "the machine was busy while fake was measured"
    )
    assert "that claim is inconclusive" in report.machine["warning"]
    assert (
        json.loads((tmp_path / "claims.json").read_text())["machine"]["warning"]
        == (report.machine["warning"])
    )


def test_the_busy_warning_names_a_reason_the_rule_checked_first(fake_benchmarks):
    """Too few rounds withhold the verdict before contention does: the note says so."""
    busy = {"reason": "other processes used 80% of the 2 cores"}
    given = verdict_rule.Measured(
        rounds(2.0)[:2], "two rounds beside other work", contention=busy
    )
    report = command.run(smoke=True, measured={"fake": given}, verbose=False)
    warning = report.machine["warning"]
    assert warning.startswith("the machine was busy while fake was measured")
    first = "fake is inconclusive for a reason the rule checks first: too few rounds"
    assert first in warning
    assert "that claim is inconclusive" not in warning


def test_run_rejects_bad_arguments(fake_benchmarks, tmp_path):
    with pytest.raises(CourseError, match="unknown claim 'nope'; claims: fake, high"):
        command.run(only=["nope"], verbose=False)
    with pytest.raises(CourseError, match="unknown measured claim 'nope'"):
        command.run(
            measured={"nope": verdict_rule.Measured(rounds(1.0), "x")}, verbose=False
        )
    with pytest.raises(TypeError, match="claims.Measured"):
        command.run(measured={"fake": [1.0, 2.0]}, verbose=False)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(CourseError, match="is a file"):
        command.run(out=a_file, verbose=False)


def test_cli_help_and_bad_claim():
    out = cli("claims", "--help")
    assert out.returncode == 0 and "--smoke" in out.stdout and "--out" in out.stdout
    assert "--device {all,cpu,accelerator,auto}" in out.stdout
    out = cli("claims", "--only", "nope")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "course: error: unknown claim 'nope'"
    )


@pytest.mark.slow
def test_cli_smoke_end_to_end(tmp_path, capsys):
    # The command line as `course` parses and runs it, in this process: a new one
    # would import both frameworks again. test_cli_help_and_bad_claim starts it.
    argv = ["claims", "--smoke", "--only", "higher-order", "--only", "tpu-llm"]
    code = course_main([*argv, "--out", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    data = json.loads((tmp_path / "claims.json").read_text())
    by_id = {c["id"]: c for c in data["claims"]}
    assert set(by_id) == {"higher-order", "tpu-llm"} and data["smoke"] is True
    higher = by_id["higher-order"]
    assert higher["verdict"] in (
        verdict_rule.HOLDS,
        verdict_rule.DOES_NOT_HOLD,
        verdict_rule.INCONCLUSIVE,
    )
    assert higher["n"] >= 5 and higher["q1"] <= higher["median"] <= higher["q3"]
    assert by_id["tpu-llm"]["verdict"] == verdict_rule.NOT_TESTABLE
    assert higher["device"] == "cpu" and higher["dtype"] == "float32"
    assert higher["precision"] == {"jax_matmul": "highest", "torch_matmul": "highest"}
    assert higher["threads"]["torch_threads"] >= 1
    assert (
        data["devices"] == ["cpu"]
        and "no accelerator was present" in data["device_note"]
    )
    assert (tmp_path / "claims.png").stat().st_size > 1000
    assert "[not testable here]" in out.out and "claims.json" in out.out


def _fake_run(monkeypatch, reach):
    calls = []

    def measure(claim_id, *, smoke, target):
        calls.append((claim_id, target.kind))
        if claim_id == "high":
            raise verdict_rule.NotTestable(f"no cluster on {target.kind}")
        return verdict_rule.Measured(
            rounds(2.0), "fake", conditions={"dtype": "float32"}
        )

    monkeypatch.setattr(registry, "CLAIMS", (CLAIM, HIGH))
    monkeypatch.setattr(benchmarks, "measure", measure)
    monkeypatch.setattr(
        devices,
        "detect_devices",
        lambda requested: devices.plan_devices(requested, **reach),
    )
    monkeypatch.setattr(
        command, "_machine", lambda plan=None: {"summary": "fake machine"}
    )
    return calls


def test_run_on_a_gpu_machine_measures_every_claim_on_cpu_and_gpu(
    monkeypatch, tmp_path, capsys
):
    calls = _fake_run(monkeypatch, GPU_BOTH)
    given = verdict_rule.Measured(rounds(0.6), "timed by the caller on the CPU")
    report = command.run(
        smoke=True, out=tmp_path, measured={"fake": given}, device="all"
    )
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
    # the CPU's, first
    assert report.outcome("fake").verdict == verdict_rule.DOES_NOT_HOLD
    assert report.outcome("fake", device="gpu").verdict == verdict_rule.HOLDS
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
    command.run(smoke=True, device="accelerator", verbose=False)
    assert {kind for _, kind in calls} == {"gpu"}
    calls = _fake_run(monkeypatch, CPU_ONLY)
    report = command.run(smoke=True, out=tmp_path, verbose=False)
    assert report.devices == ["cpu"] and {kind for _, kind in calls} == {"cpu"}
    assert "No accelerator was present" in report._repr_markdown_()
    assert (
        "no accelerator"
        in json.loads((tmp_path / "claims.json").read_text())["device_note"]
    )
    with pytest.raises(CourseError, match="no accelerator is present"):
        command.run(smoke=True, device="accelerator", verbose=False)


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
        devices,
        "detect_devices",
        lambda requested: devices.plan_devices(requested, **TPU),
    )
    monkeypatch.setattr(
        command, "_machine", lambda plan=None: {"summary": "fake TPU VM"}
    )
    ran = []
    for cid in ("higher-order", "first-call", "compile-matmul"):
        monkeypatch.setitem(
            benchmarks.BENCHMARKS,
            cid,
            lambda ctx, c=cid: (
                ran.append((c, ctx.target.kind))
                or verdict_rule.Measured(rounds(25.0), "fake")
            ),
        )
    report = command.run(
        smoke=True,
        device="accelerator",
        out=tmp_path,
        verbose=False,
        only=["higher-order", "first-call", "compile-matmul"],
    )
    assert ran == []  # first-call is a BERT on a CPU: the registry keeps it there
    by_id = {
        c["id"]: c for c in json.loads((tmp_path / "claims.json").read_text())["claims"]
    }
    assert {c["device"] for c in by_id.values()} == {"tpu"}
    assert by_id["first-call"]["verdict"] == verdict_rule.NOT_TESTABLE
    assert "BERT" in by_id["first-call"]["why"]
    for cid in ("higher-order", "compile-matmul"):
        assert (
            by_id[cid]["verdict"] == verdict_rule.NOT_TESTABLE
            and "torch_xla" in by_id[cid]["why"]
        )
    assert "same device kind (TPU)" in by_id["higher-order"]["why"]
    assert report.devices == ["tpu"]


def test_cli_device_accelerator_on_a_cpu_machine_is_one_clear_error(capsys):
    from course_utils import cli as course

    # In this process (the command's own main): a child would import jax again.
    assert course.main(["claims", "--device", "accelerator", "--only", "tpu-llm"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "no accelerator is present" in lines[0]


@pytest.mark.parametrize(
    "smoke, kinds", [(True, ["gpu"]), (False, ["cpu", "gpu"])], ids=["smoke", "full"]
)
def test_default_devices_smoke_measures_the_accelerator_only(monkeypatch, smoke, kinds):
    calls = _fake_run(monkeypatch, GPU_BOTH)
    report = command.run(smoke=smoke, verbose=False)
    assert report.devices == kinds
    assert sorted({kind for _, kind in calls}) == sorted(kinds)


def test_default_devices_smoke_without_accelerator_measures_the_cpu(monkeypatch):
    calls = _fake_run(monkeypatch, CPU_ONLY)
    report = command.run(smoke=True, verbose=False)
    assert report.devices == ["cpu"] and {kind for _, kind in calls} == {"cpu"}


def test_a_run_stopped_part_way_keeps_what_it_measured(monkeypatch, tmp_path):
    calls = _fake_run(monkeypatch, CPU_ONLY)
    fake_measure = benchmarks.measure

    def stop_at_second(claim_id, *, smoke, target):
        if calls:
            raise KeyboardInterrupt
        return fake_measure(claim_id, smoke=smoke, target=target)

    monkeypatch.setattr(benchmarks, "measure", stop_at_second)
    with pytest.raises(KeyboardInterrupt):
        command.run(smoke=True, out=tmp_path, verbose=False)
    data = results.load(tmp_path)
    assert data["complete"] is False
    assert [c["id"] for c in data["claims"]] == ["fake"]
    assert "stopped part-way" in results.machine_label(data)
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_finished_run_says_it_is_complete(monkeypatch, tmp_path):
    _fake_run(monkeypatch, CPU_ONLY)
    command.run(smoke=True, out=tmp_path, verbose=False)
    data = json.loads((tmp_path / "claims.json").read_text())
    assert data["complete"] is True and len(data["claims"]) == 2


JAX_ALONE = {"vmap-loop", "jit-speedup", "jit-fusion", "warm-up", "scan-compile"}


def _fake_tpu(monkeypatch):
    """JAX with a TPU (answered by the CPU device) and PyTorch without one."""
    import jax

    cpu0 = jax.devices("cpu")[0]
    real = jax.devices
    monkeypatch.setattr(
        jax,
        "devices",
        lambda backend=None: [cpu0] if backend == "tpu" else real(backend),
    )
    monkeypatch.setattr(
        devices,
        "detect_devices",
        lambda requested: devices.plan_devices(requested, **TPU),
    )
    monkeypatch.setattr(
        command, "_machine", lambda plan=None: {"summary": "fake TPU VM"}
    )
    return cpu0


def test_on_a_tpu_exactly_the_claims_of_jax_alone_are_measured(monkeypatch, tmp_path):
    """`course claims --device accelerator` where JAX has a TPU: every benchmark is faked,
    so the claims that reach one are those the device rule lets onto the TPU."""
    cpu0 = _fake_tpu(monkeypatch)
    ran = []

    def fake(ctx, claim_id):
        ran.append((claim_id, ctx.target.kind, ctx.jax_device))
        return verdict_rule.Measured(rounds(3.0), "fake")

    for cid in benchmarks.BENCHMARKS:
        monkeypatch.setitem(benchmarks.BENCHMARKS, cid, lambda ctx, c=cid: fake(ctx, c))
    report = command.run(smoke=True, device="accelerator", out=tmp_path, verbose=False)
    assert (
        {c for c, _, _ in ran}
        == JAX_ALONE
        == {
            c.id
            for c in registry.CLAIMS
            if registry.FRAMEWORKS[c.id] == ("jax",) and c.id not in registry.ONLY_ON
        }
    )
    assert {(kind, dev) for _, kind, dev in ran} == {("tpu", cpu0)}
    data = json.loads((tmp_path / "claims.json").read_text())
    assert report.devices == ["tpu"] and {c["device"] for c in data["claims"]} == {
        "tpu"
    }
    for c in data["claims"]:
        if c["id"] in JAX_ALONE:
            assert c["verdict"] == verdict_rule.HOLDS, c["id"]
            assert c["device_name"] == "TPU v5 lite" and c["dtype"] == "float32"
            continue
        assert c["verdict"] == verdict_rule.NOT_TESTABLE, c["id"]
        why = c["why"]  # one sentence, saying why
        assert why and "." not in why.replace("3.12", "") and "\n" not in why, why
    paired = [
        c
        for c in data["claims"]
        if len(registry.FRAMEWORKS[c["id"]]) == 2 and c["id"] not in registry.ONLY_ON
    ]
    assert paired and all(
        c["why"].startswith("both frameworks must run on the same device kind (TPU)")
        for c in paired
    )


@pytest.mark.slow
def test_on_a_fake_tpu_the_jax_alone_benchmarks_run_on_its_device(monkeypatch):
    """The real benchmarks, smoke sizes, on the fake TPU: arrays on its device, judged."""
    cpu0 = _fake_tpu(monkeypatch)
    seen = []
    real_put = harness.Ctx.jax_put

    def put(self, x):
        out = real_put(self, x)
        seen.append(out.devices())
        return out

    monkeypatch.setattr(harness.Ctx, "jax_put", put)
    monkeypatch.setattr(jit, "RNN_STEPS", (2, 2))  # compiling dominates: keep it short
    report = command.run(
        smoke=True, device="accelerator", only=sorted(JAX_ALONE), verbose=False
    )
    assert seen and all(d == {cpu0} for d in seen)
    for o in report.outcomes:
        assert o.device == "tpu" and len(o.samples) >= verdict_rule.MIN_RATIOS, (
            o.claim.id
        )
        assert o.verdict in (
            verdict_rule.HOLDS,
            verdict_rule.DOES_NOT_HOLD,
            verdict_rule.INCONCLUSIVE,
        )
