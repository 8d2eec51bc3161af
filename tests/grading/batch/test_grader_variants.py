"""Per-student variants: each student is graded on the variant of the id they hand in
under, computed from the instructor's secret, never from the notebook; without a secret
the grader is what it was.

One class (``tests/grading/variant_class.py``) is graded once with the secret named by
``$COURSE_VARIANT_SECRET_FILE``, one of its students again without a secret, and one
student's copy is checked with ``course check``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import nbformat
import pytest

from course_utils.cli import main as course_main
from course_utils.grading.batch import grader
from course_utils.grading.inputs import seeds
from tests.grading import variant_class as vc
from tests.grading.generated_class import OPTIONS
from tests.grading.helpers import graded, quiet, require_sandbox

pytestmark = pytest.mark.slow  # every test reads the class the `run` fixture grades

LIMITS = grader.Limits(timeout=10, total_timeout=90, memory_mb=1000)  # OPTIONS'
PEEK = (
    "\n\nimport os\ntry:\n    _seen = open({path!r}).read()\nexcept OSError as err:\n"
    "    _seen = type(err).__name__\n"
    "print('SECRET FILE:', repr(_seen), "
    "sorted(k for k in os.environ if k.startswith('COURSE_VARIANT')))"
)


def _secret_folder(tmp_path: Path) -> Path:
    """A folder the sandbox would see if nothing hid the secret (not /tmp: private)."""
    try:
        return Path(tempfile.mkdtemp(prefix="course-variant-test-", dir="/var/tmp"))
    except OSError:
        return tmp_path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The class graded with the secret: (folder, report folder, master, secret file)."""
    require_sandbox()
    tmp = tmp_path_factory.mktemp("variants")
    where = _secret_folder(tmp)
    secret = where / "variant-secret"
    secret.write_bytes(vc.SECRET + b"\n")
    where.chmod(0o755)  # readable by anyone: only the sandbox's hiding keeps it out
    secret.chmod(0o644)
    master = vc.write_master(tmp / "master")
    subs = vc.write_class(tmp / "subs", master)
    eve = nbformat.read(subs / "eve.ipynb", as_version=4)  # also looks for the secret
    for cell in eve.cells:
        if cell.source.startswith("# EXERCISE: scale"):
            cell.source = vc.SOLVED + PEEK.format(path=str(secret))
    nbformat.write(eve, subs / "eve.ipynb")
    out = tmp / "graded"
    argv = ["grade", str(subs), "--source", str(master), "--out", str(out), *OPTIONS]
    os.environ[seeds.SECRET_ENV] = str(secret)  # the secret named by the environment
    try:
        assert course_main([*argv, "--jobs", "2"]) == 0
    finally:
        del os.environ[seeds.SECRET_ENV]
    yield subs, out, master, secret
    if where != tmp:
        secret.unlink()
        where.rmdir()


def test_each_student_is_graded_on_the_variant_of_their_id(run):
    _, out, _, _ = run
    scales = {s: vc.scale_of(s) for s in vc.ROSTER}
    assert len(set(scales.values())) == len(scales)  # the test needs them apart
    records = graded(out)
    assert {s: r["total"] for s, r in records.items()} == vc.EXPECTED
    for student, record in records.items():
        assert record["variant"] == seeds.variant(vc.SECRET, student).as_dict()
        assert record["options"]["variants"] == seeds.fingerprint(vc.SECRET)
    # two correct students with different variants both pass; ada's numbers pass only for ada
    assert records["cy"]["exercises"]["scale"]["status"] == "failed"
    assert (
        f"[{scales['cy']}, {2 * scales['cy']}]" in records["cy"]["tests"][0]["message"]
    )


def test_a_notebook_claiming_another_variant_is_graded_on_the_rosters(run):
    _, out, _, _ = run
    records = graded(out)
    ada, dee = (seeds.variant(vc.SECRET, s) for s in ("ada", "dee"))
    assert records["dee"]["variant"] == dee.as_dict()
    assert "other variant" in records["dee"]["flags"]
    assert (
        "this notebook's VARIANT line was ignored: it says it is the variant of 'ada' "
        f"(seed {ada.seed}); it was graded on the roster's variant of 'dee' (seed "
        f"{dee.seed})"
    ) in records["dee"]["notes"]
    assert (
        records["eve"]["total"] == vc.TOTAL
        and "other variant" in records["eve"]["flags"]
    )
    assert all("other variant" not in records[s]["flags"] for s in ("ada", "bob", "cy"))
    shown = (out / "_instructor" / "dee" / "executed.ipynb").read_text()
    assert f"your variant: dee (seed {dee.seed})" in shown
    assert "your variant: ada" not in shown


def test_the_secret_reaches_no_kernel_and_no_report(run):
    _, out, _, _ = run
    executed = json.loads((out / "_instructor" / "eve" / "executed.ipynb").read_text())
    printed = "".join(
        "".join(o.get("text", ""))
        for c in executed["cells"]
        for o in c.get("outputs", [])
    )
    # the file is there, readable by anyone outside, bound over inside; no variable names it
    assert "SECRET FILE: 'PermissionError' ['COURSE_VARIANT']" in printed
    for path in out.rglob("*"):
        if path.is_file():
            assert vc.SECRET not in path.read_bytes(), path


def test_a_report_folder_keeps_one_variant_secret(run, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    subs, out, master, _ = run
    other = tmp_path / "other-secret"
    other.write_bytes(b"another secret, also long enough")
    for extra, words in (
        (["--variant-secret", str(other)], "with another variant secret"),
        ([], "grading without --variant-secret"),
        (["--only", "scale"], "grading without --variant-secret"),  # a regrade
    ):
        cmd = ["grade", str(subs), "--source", str(master), "--out", str(out), *extra]
        assert course_main(cmd) == 2
        err = capsys.readouterr().err
        assert words in err and f"--out {out}" in err, err


def test_without_a_secret_the_grader_is_what_it_was(run, tmp_path, monkeypatch):
    monkeypatch.delenv(seeds.SECRET_ENV, raising=False)
    subs, _, master, _ = run
    alone = tmp_path / "subs"
    alone.mkdir()
    nb = nbformat.read(subs / "cy.ipynb", as_version=4)  # the default variant's number
    for cell in nb.cells:
        if cell.source.startswith("# EXERCISE: scale"):
            cell.source = vc.hard_coded(vc.scale_of("cy", None))
    nbformat.write(nb, alone / "cy.ipynb")
    out = tmp_path / "out"
    grader.grade(alone, master, out, limits=LIMITS, echo=quiet, progress=False)
    records = graded(out)
    assert {s: r["total"] for s, r in records.items()} == {"cy": vc.TOTAL}
    for record in records.values():
        assert "variant" not in record and "other variant" not in record["flags"]
        assert record["options"] == grader._options(LIMITS, True, True)
    shown = (out / "_instructor" / "cy" / "executed.ipynb").read_text()
    assert "the default variant" in shown


def test_course_check_runs_the_copys_own_variant(run):
    subs, _, master, _ = run
    # dee's notebook is ada's copy with ada's numbers: its own check passes (as ada's
    # would); the grader, on dee's variant, fails it (above)
    record = grader.check(subs / "dee.ipynb", master)
    assert record["exercises"]["scale"]["status"] == "passed", record["exercises"]
    assert record["total"] == 4  # every visible test
