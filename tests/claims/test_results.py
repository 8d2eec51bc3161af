"""course_utils.claims.results: fingerprinted result files, refused when malformed, merged."""

import json

import pytest

from course_utils.claims import report, results, verdict_rule, verdicts
from course_utils.errors import CourseError
from tests.claims.fakes import cli
from tests.claims.test_verdict_rule import rounds


def _write(tmp_path, name, claim_id="compile-fusion", center=3.0, cpu=None):
    from course_utils.claims import registry

    o = verdicts.evaluate(
        registry.get(claim_id), lambda: verdict_rule.Measured(rounds(center), "fake")
    )
    rep = report.ClaimsReport([o], smoke=False, machine={"torch": "2.13"}, seconds=1.0)
    path = report.write_json(rep, tmp_path / name / "claims.json")
    if cpu:
        data = json.loads(path.read_text())
        data["fingerprint"]["cpu"] = cpu
        path.write_text(json.dumps(data))
    return path


def test_a_written_file_loads_with_its_fingerprint(tmp_path):
    data = results.load(_write(tmp_path, "a").parent)
    f = data["fingerprint"]
    assert f["cpu"] and f["cores"] >= 1 and f["torch"] == "2.13" and "when" in f
    assert "cores" in f["threads"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.pop("schema"), "schema is None"),
        (lambda d: d.pop("fingerprint"), "fingerprint is missing"),
        (lambda d: d.update(claims="x"), "claims is missing or not a list"),
        (lambda d: d["claims"][0].update(verdict="probably"), "claims\\[0\\].verdict"),
        (lambda d: d["claims"][0].pop("id"), "claims\\[0\\].id is missing"),
        (lambda d: d["claims"][0].update(interval=[1]), "interval must be"),
    ],
)
def test_a_malformed_file_is_refused_naming_file_and_field(tmp_path, edit, message):
    path = _write(tmp_path, "a")
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(CourseError, match=message) as err:
        results.load(path)
    assert str(path) in str(err.value)


def test_unreadable_and_missing_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CourseError, match="unreadable JSON"):
        results.load(bad)
    with pytest.raises(CourseError, match="no such result file"):
        results.load(tmp_path / "none")


def test_merge_puts_machines_side_by_side(tmp_path):
    a = results.load(_write(tmp_path, "a", cpu="Alpha CPU"))
    b = results.load(_write(tmp_path, "b", center=1.0, cpu="Beta CPU"))
    table = results.merge_table([a, b]).splitlines()
    assert "Alpha CPU" in table[0] and "Beta CPU" in table[0]
    row = table[2]
    assert row.startswith("| compile-fusion | cpu | 1.5–2x | holds: 3.00x (")
    assert "does not hold: 1.00x" in row
    with pytest.raises(CourseError, match="at least one"):
        results.merge_table([])


def test_an_accelerator_file_gets_its_own_column_and_rows(tmp_path):
    """A TPU file beside a CPU file from the same processor: headed apart, its rows apart."""
    cpu = results.load(_write(tmp_path, "cpu", cpu="AMD EPYC"))
    path = _write(tmp_path, "tpu", center=1.0, cpu="AMD EPYC")
    data = json.loads(path.read_text())
    data["fingerprint"].update(accelerator="tpu", jax_devices="1 x TPU v5 lite")
    data["claims"][0]["device"] = "tpu"
    path.write_text(json.dumps(data))
    tpu = results.load(path)
    assert results.machine_label(cpu).startswith("AMD EPYC (")
    assert "+ 1 x TPU v5 lite, " in results.machine_label(tpu)
    data["fingerprint"].update(accelerator="gpu", jax_devices="1 x cpu")
    assert "+ GPU, " in results.machine_label(data)  # PyTorch's GPU, JAX on the CPU
    table = results.merge_table([cpu, tpu]).splitlines()
    assert "TPU v5 lite" in table[0] and table[0].count("AMD EPYC") == 2
    assert table[2].startswith("| compile-fusion | cpu |") and table[2].endswith(
        "| — |"
    )
    assert table[3].startswith("| compile-fusion | tpu | 1.5–2x | — |")


def test_the_cli_merges_and_refuses_clearly(tmp_path):
    a, b = _write(tmp_path, "a").parent, _write(tmp_path, "b", center=1.0).parent
    out = cli("claims", "merge", str(a), str(b))
    assert out.returncode == 0, out.stderr
    assert "| compile-fusion | cpu |" in out.stdout
    (b / "claims.json").write_text("[]")
    out = cli("claims", "merge", str(a), str(b))
    assert out.returncode != 0 and "the top level is not an object" in out.stderr


def test_the_shipped_result_files_match_the_format():
    shipped = results.shipped()
    assert shipped, f"no result files in {results.SHIPPED}"
    for data in shipped:
        assert data["fingerprint"]["cpu"]
        assert not data["smoke"] and data["fingerprint"]["cores"] >= 1, data["_path"]


def _run(tmp_path, name, claim_id, *, when, **fingerprint):
    path = _write(tmp_path, name, claim_id=claim_id, cpu="AMD EPYC")
    data = json.loads(path.read_text())
    data["fingerprint"].update(when=when, **fingerprint)
    data["machine"]["warning"] = "the machine was busy"
    path.write_text(json.dumps(data))
    return path


def test_a_later_run_of_the_same_machine_joins_its_file_with_its_date(tmp_path):
    shipped = _run(tmp_path, "shipped", "compile-fusion", when="2026-11-30 19:35 UTC")
    later = _run(tmp_path, "later", "jit-speedup", when="2026-12-06 12:00 UTC")
    data = results.add_run(shipped, later.parent)
    assert [c["id"] for c in data["claims"]] == ["compile-fusion", "jit-speedup"]
    assert "added_when" not in data["claims"][0]
    assert data["claims"][1]["added_when"] == "2026-12-06 12:00 UTC"
    (added,) = data["added"]
    assert added["claims"] == ["jit-speedup (cpu)"]
    assert added["warning"] == "the machine was busy" and "load_average_1min" in added
    assert data["fingerprint"]["when"] == "2026-11-30 19:35 UTC"  # the file's first run
    assert results.machine_label(data).endswith(", 2026-11-30 and 2026-12-06")
    table = results.merge_table([data])
    assert "| jit-speedup | cpu |" in table and "| compile-fusion | cpu |" in table
    with pytest.raises(CourseError, match="already holds jit-speedup \\(cpu\\)"):
        results.add_run(shipped, later)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["fingerprint"].update(cpu="Other CPU"), "its cpu is 'Other CPU'"),
        (lambda d: d["fingerprint"].update(jax="0.0.1"), "its jax is '0.0.1'"),
        (lambda d: d.update(smoke=True), "a smoke-mode run cannot join"),
        (lambda d: d.update(complete=False), "stopped part-way"),
    ],
)
def test_a_run_of_another_machine_or_mode_is_refused(tmp_path, edit, message):
    shipped = _run(tmp_path, "shipped", "compile-fusion", when="2026-11-30 19:35 UTC")
    later = _run(tmp_path, "later", "jit-speedup", when="2026-12-06 12:00 UTC")
    data = json.loads(later.read_text())
    edit(data)
    later.write_text(json.dumps(data))
    before = shipped.read_text()
    with pytest.raises(CourseError, match=message):
        results.add_run(shipped, later)
    assert shipped.read_text() == before


def test_the_cli_adds_a_run_into_a_file(tmp_path):
    shipped = _run(tmp_path, "shipped", "compile-fusion", when="2026-11-30 19:35 UTC")
    later = _run(tmp_path, "later", "jit-speedup", when="2026-12-06 12:00 UTC")
    out = cli("claims", "merge", str(later.parent), "--into", str(shipped))
    assert out.returncode == 0, out.stderr
    assert "2 claims" in out.stdout and "2026-11-30 and 2026-12-06" in out.stdout
    out = cli("claims", "merge", "--into", str(shipped))
    assert out.returncode == 2 and "give the runs to add" in out.stderr
    out = cli("claims", "--into", str(shipped))
    assert out.returncode == 2 and "--into goes with merge" in out.stderr
