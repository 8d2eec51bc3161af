"""``course gradescope build --variant-secret``: a bundle that grades each submission on
the variant of the submitter's Gradescope email, read from ``submission_metadata.json``
(never from the notebook), a group on the variant of the member whose copy it handed
in, with the secret unreadable from a student's cell; and ``course release --variants``
reading Gradescope's roster, so the copies it writes are the ones the bundle grades.

The class is the variant class (``tests/grading/variant_class.py``), its students named
by email; each runs through the bundle's own ``run_autograder`` in a copy of
Gradescope's ``/autograder`` layout, kept in ``/var/tmp`` (visible in the sandbox, unlike
``/tmp``) and readable by anyone, so only the sandbox's hiding keeps the secret out.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_utils.cli import main
from course_utils.errors import CourseError
from course_utils.grading.inputs import seeds
from course_utils.grading.integrations import gradescope, release
from tests.grading import variant_class as vc
from tests.grading.helpers import ROOT, require_sandbox
from tests.grading.integrations.test_gradescope import _check_format, _layout, _run

# A scale answer that is right only where the secret's file cannot be opened and no
# variable but the kernel's own COURSE_VARIANT names a variant; else it returns what it
# read, which the failed check then prints.
PEEK = """# EXERCISE: scale
import os
try:
    _seen = open({path!r}).read()
except OSError as err:
    _seen = type(err).__name__
_names = sorted(k for k in os.environ if k.startswith("COURSE_VARIANT"))
def scaled(xs):
    if _seen != "PermissionError" or _names != ["COURSE_VARIANT"]:
        return [_seen, _names]
    return [SCALE * x for x in xs]"""

ADA, BOB, CY, DEE = (f"{n}@example.edu" for n in ("ada", "bob", "cy", "dee"))
# Gradescope's roster CSV (its columns; staff rows are no students)
ROSTER = (
    "Full Name,SID,Email,Role,Sections\n"
    "Ada Lovelace,1001,ada@example.edu,Student,A\n"
    "Bob Byte,1002,bob@example.edu,Student,A\n"
    "Cy Ng,,cy@example.edu,Student,B\n"
    "Dee Dee,1004,dee@example.edu,Student,B\n"
    "Ina Structor,,ina@example.edu,Instructor,\n"
)
SECRET_IN_LAYOUT = "source/secret/variant-secret"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """(the bundle, the master, a folder for layouts in /var/tmp)."""
    tmp = tmp_path_factory.mktemp("gs-variants")
    secret = tmp / "secret"
    secret.write_bytes(vc.SECRET + b"\n")
    master = vc.write_master(tmp / "master")
    bundle = tmp / "autograder.zip"
    argv = ["gradescope", "build", "--source", str(master), "--out", str(bundle)]
    argv += ["--root", str(ROOT), "--memory", "1000", "--timeout", "10"]
    assert main([*argv, "--variant-secret", str(secret)]) == 0
    try:
        where = Path(tempfile.mkdtemp(prefix="course-gs-variants-", dir="/var/tmp"))
    except OSError:
        where = tmp
    where.chmod(0o755)
    yield bundle, master, where
    if where != tmp:
        shutil.rmtree(where, ignore_errors=True)


def _copy(master: Path, email: str, scale_answer: str = vc.SOLVED) -> bytes:
    """``email``'s own copy (as ``course release --variants`` writes it) answered."""
    return nbformat.writes(
        vc.answered(vc.student_copy(master, email), scale_answer)
    ).encode()


def _submit(setup, name: str, notebook: bytes, users: list[str]) -> tuple[dict, Path]:
    bundle, _, where = setup
    root = _layout(bundle, where / name, {"hw.ipynb": notebook})
    meta = {
        "id": 1,
        "created_at": "2026-03-01T12:00:00.000000-08:00",
        "users": [{"email": e, "id": i, "name": e.split("@")[0]} for i, e in
                  enumerate(users)],
        "previous_submissions": [],
    }  # fmt: skip
    (root / "submission_metadata.json").write_text(json.dumps(meta))
    for path in (root, *root.rglob("*")):  # readable by anyone outside the sandbox
        path.chmod(path.stat().st_mode | (0o055 if path.is_dir() else 0o044))
    result = _run(root)
    _check_format(result)
    return result, root


def _scale(result: dict) -> list[dict]:
    return [t for t in result["tests"] if t["name"].startswith("scale")]


def test_the_bundle_carries_the_secret_and_requires_the_sandbox(setup):
    bundle, _, _ = setup
    with zipfile.ZipFile(bundle) as z:
        config = json.loads(z.read("gradescope.json"))
        assert z.read("secret/variant-secret").strip() == vc.SECRET
        mode = z.getinfo("secret/variant-secret").external_attr >> 16
    assert mode & 0o777 == 0o600
    assert config["variants"] == {
        "secret": "secret/variant-secret",
        "id": "email",
        "fingerprint": seeds.fingerprint(vc.SECRET),
    }
    assert config["sandbox"] == "require"


def test_the_bundle_that_holds_the_secret_is_written_private(setup, tmp_path):
    """autograder.zip holds the secret: mode 0600, as the secret's own file; one
    without a secret is as the umask leaves any file."""
    bundle, master, _ = setup
    assert bundle.stat().st_mode & 0o777 == 0o600
    plain = tmp_path / "plain.zip"
    argv = ["gradescope", "build", "--source", str(master), "--out", str(plain)]
    assert main([*argv, "--root", str(ROOT)]) == 0
    umask = os.umask(0)
    os.umask(umask)
    assert plain.stat().st_mode & 0o777 == 0o666 & ~umask


def test_release_reads_gradescopes_roster_by_email(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER.replace("ada@example.edu", "Ada@Example.EDU "))
    assert release.read_ids(roster) == [ADA, BOB, CY, DEE]  # no instructor


@pytest.mark.slow
def test_each_submitter_is_graded_on_their_own_variant(setup):
    require_sandbox()
    _, master, where = setup
    secret_path = where / "ada" / SECRET_IN_LAYOUT
    # ada's copy, right where the secret is unreadable from her cell; Gradescope
    # spells her email its own way
    ada, root = _submit(
        setup, "ada", _copy(master, ADA, PEEK.format(path=str(secret_path))),
        ["Ada@Example.edu"],
    )  # fmt: skip
    assert root / SECRET_IN_LAYOUT == secret_path and secret_path.is_file()
    assert secret_path.read_bytes().strip() == vc.SECRET  # readable outside
    assert ada["score"] == vc.TOTAL, ada["output"]
    mine = seeds.variant(vc.SECRET, ADA)
    assert f"Graded on your variant ({ADA}, seed {mine.seed})." in ada["output"]
    assert all(t["status"] == "passed" for t in _scale(ada))
    assert vc.SECRET.decode() not in json.dumps(ada)
    # bob's own copy with ada's number typed in: right for ada, wrong for bob
    assert vc.scale_of(ADA) != vc.scale_of(BOB)
    bob, _ = _submit(setup, "bob", _copy(master, BOB, vc.hard_coded(vc.scale_of(ADA))),
                     [BOB])  # fmt: skip
    assert bob["score"] == vc.TOTAL - 3, bob["output"]
    visible = next(t for t in _scale(bob) if "hidden" not in t["name"])
    assert visible["status"] == "failed"
    assert str(vc.scale_of(BOB)) in visible["output"]  # bob's own number is expected


@pytest.mark.slow
def test_a_group_is_graded_on_the_variant_of_the_member_whose_copy_it_is(setup):
    require_sandbox()
    _, master, _ = setup
    # cy and dee hand in dee's copy, right: graded on dee's variant, and it passes
    group, _ = _submit(setup, "group", _copy(master, DEE), [CY, DEE])
    assert group["score"] == vc.TOTAL, group["output"]
    dee = seeds.variant(vc.SECRET, DEE)
    assert (
        f"A group submission ({CY}, {DEE}): graded on the variant of {DEE} "
        f"(seed {dee.seed}), whose copy this notebook is."
    ) in group["output"]
    # a copy of no member's (ada's, with ada's numbers): the first listed member's
    other, _ = _submit(
        setup, "group2", _copy(master, ADA, vc.hard_coded(vc.scale_of(ADA))), [CY, DEE]
    )
    cy = seeds.variant(vc.SECRET, CY)
    assert other["score"] == vc.TOTAL - 3, other["output"]
    assert (
        "this notebook is no member's copy, so it was graded on the variant of the "
        f"first listed, {CY} (seed {cy.seed})."
    ) in other["output"]


def test_without_users_nobody_is_graded(setup, tmp_path):
    """The metadata is read once the sandbox is known to run (else that is the reason)."""
    (tmp_path / "meta.json").write_text(json.dumps({"users": []}))
    with pytest.raises(CourseError, match="metadata does not say who submitted it"):
        gradescope.submitters(tmp_path / "meta.json")
    require_sandbox()
    bundle, master, _ = setup
    root = _layout(bundle, tmp_path / "nouser", {"hw.ipynb": _copy(master, ADA)})
    (root / "submission_metadata.json").write_text(json.dumps({"users": []}))
    result = _run(root)
    assert result["score"] == 0 and result["extra_data"] == {"counted": False}
    assert (
        "Not graded: the submission's metadata does not say who submitted it"
        in (result["output"])
    )


def test_a_group_notebook_whose_variant_line_cannot_be_read_is_no_members_copy(
    tmp_path,
):
    """``VARIANT = {[1]: 2}`` (TypeError) or a line too deep to parse: the first
    listed member's variant, as for a copy of no member's."""
    cy = seeds.variant(vc.SECRET, CY)
    for value in ("{[1]: 2}", " + ".join(["1"] * 5000)):
        notebook = tmp_path / "hw.ipynb"
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            f"VARIANT = {value}")])  # fmt: skip
        nbformat.write(nb, notebook)
        sid, line = gradescope.whose_variant(vc.SECRET, [CY, DEE], notebook)
        assert sid == CY and f"first listed, {CY} (seed {cy.seed})" in line


def test_without_the_sandbox_nobody_is_graded(setup, tmp_path):
    bundle, master, _ = setup
    no_bwrap = tmp_path / "bin"  # a bare container: no bubblewrap
    no_bwrap.mkdir()
    (no_bwrap / "bash").symlink_to(shutil.which("bash"))
    root = _layout(bundle, tmp_path / "nobwrap", {"hw.ipynb": _copy(master, ADA)})
    (root / "submission_metadata.json").write_text(json.dumps({"users": [
        {"email": ADA}]}))  # fmt: skip
    result = _run(root, PATH=str(no_bwrap))
    assert (
        result["score"] == 0
        and "Not graded: the grader's sandbox" in (result["output"])
    )


def test_a_copy_released_for_another_id_is_noted_in_the_output(setup, tmp_path):
    """Copies released from student ids, submitted from Gradescope (emails): graded
    on the email's variant, and the output says the notebook names another."""
    _, master, _ = setup
    notebook = tmp_path / "hw.ipynb"
    notebook.write_bytes(_copy(master, "gina"))  # released for the id, not the email
    gina, mail = seeds.variant(vc.SECRET, "gina"), "gina@school.edu"
    sid, line = gradescope.whose_variant(vc.SECRET, [mail], notebook)
    mine = seeds.variant(vc.SECRET, mail)
    assert sid == mail and line.startswith(
        f"Graded on your variant ({mail}, seed {mine.seed})."
    )
    assert f"names another variant ('gina', seed {gina.seed})" in line, line
    assert "tell your instructor" in line
    notebook.write_bytes(_copy(master, mail))  # the copy Gradescope's roster gives
    assert gradescope.whose_variant(vc.SECRET, [mail], notebook)[1] == (
        f"Graded on your variant ({mail}, seed {mine.seed})."
    )
