"""``course gradescope build``: a Gradescope autograder bundle that grades with the course.

The zip holds ``setup.sh`` and ``run_autograder`` (from ``templates/``), the master, the
index of the course's notebooks next to it (``master/course-notebooks.json``: another
lesson's notebook is named, :mod:`..inputs.assignment`), ``gradescope.json`` (which master,
the limits, when hidden tests become visible, the submission limits) and the course
itself (``course/``, what ``setup.sh`` installs). Gradescope runs ``run_autograder`` once
per submission; it runs :func:`run` (``python -m course_utils.grading.integrations.gradescope
ROOT``), which checks the submission limits against ``ROOT/submission_metadata.json``,
grades the one notebook in ``ROOT/submission`` with ``course grade`` and writes
``ROOT/results/results.json``, also when the submission or the grader fails.

Submission limits follow Gradescope's documented scheme (docs: "Submission Metadata",
rate limiting): a submission over the limit, or too soon after the last graded one, is
not graded; its results repeat those of the student's last graded submission, with a
message on top, so the score Gradescope keeps (the latest submission's) does not drop.
Each ``results.json`` says in ``extra_data.counted`` whether it was graded; one that
was not (over the limit, no notebook, another assignment's notebook, a failure of the
grader) does not count towards the limit.

Per-student variants (``--variant-secret FILE``): the bundle carries the secret
(``secret/variant-secret``) and grades each submission on the variant of the
submitter's Gradescope email (``submission_metadata.json``'s ``users``, trimmed and
lower-cased: :func:`..inputs.seeds.email_id`), never on the notebook's word. A group
submission is graded on the variant of the member whose copy the notebook is (its
``VARIANT`` line names a member, with that member's seed), else on the first listed
member's, and says which (:func:`whose_variant`). Such a bundle grades only in the
sandbox, where the secret's file is bound over by ``/dev/null``: where bubblewrap
cannot run, a submission is not graded (the student's code would run as root beside
the secret).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from course_utils.errors import CourseError

TEMPLATES = Path(__file__).resolve().with_name("templates")
CONFIG = "gradescope.json"
STUDENT = "submission"
METADATA = "submission_metadata.json"  # written by Gradescope for each submission
# When hidden tests (and so the total score) become visible to students: Gradescope's
# "after_published" (when the instructor publishes grades) or "after_due_date".
HIDDEN_VISIBILITY = ("after_published", "after_due_date")
NOT_COUNTED = ("invalid", "error")  # a grade whose student code never ran
# What setup.sh installs from the course: the package and its known-good versions.
COURSE_FILES = ("pyproject.toml", "README.md", "LICENSE", "constraints/known-good.txt")
SECRET = "secret/variant-secret"  # in the bundle, with --variant-secret


def _executable(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    info.external_attr = (0o100755 & 0xFFFF) << 16
    return info


def _course_files(root: Path) -> list[str]:
    from course_utils.grading.integrations.release import tracked_files

    return [
        rel
        for rel in tracked_files(root)
        if (rel in COURSE_FILES or rel.startswith("course_utils/"))
        and "__pycache__" not in rel
        and (root / rel).is_file()
    ]


def course_root(source: Path, root: str | Path | None) -> Path:
    """The course checkout whose package the bundle installs: ``--root``, else the
    checkout that holds the master (as ``course grade`` finds the course), else the one
    this ``course`` command runs from."""
    import course_utils
    from course_utils.grading.inputs.assignment import checkout

    if root is not None:
        return Path(root).resolve()
    found = checkout(source)
    if found is None:
        here = Path(course_utils.__file__).resolve().parent.parent
        found = here if (here / "pyproject.toml").is_file() else None
    if found is None:
        raise CourseError(
            f"--source {source}: not inside a course checkout, and this course command "
            "is not one: give --root, the checkout whose package the bundle installs"
        )
    return found


def _out_folder(out: Path) -> None:
    """Make the folder the zip goes into, or say in one line why it cannot be made."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CourseError(
            f"--out {out}: cannot make its folder {out.parent}: {err.strerror or err}"
        ) from None


def build(
    source: Path,
    out: Path,
    config: dict,
    root: Path,
    secret: bytes | None = None,
    *,
    no_hidden_tests: bool = False,
) -> list[str]:
    """Write the bundle ``out`` (a zip) for the master ``source``; returns its names.
    With ``secret`` (the variant secret), the bundle grades per-student variants. A
    master without hidden tests is refused unless ``no_hidden_tests``, and a ``root``
    without the course's files is an error: the bundle would fail only when Gradescope
    builds its image."""
    from course_utils.grading.batch.grader import has_hidden_tests
    from course_utils.grading.inputs import assignment
    from course_utils.grading.inputs.master import in_sync, load_master

    master = load_master(source)  # refuses a notebook that is not a master
    in_sync(master)
    if not no_hidden_tests:
        has_hidden_tests(master)
    files = _course_files(root)
    if "pyproject.toml" not in files or not any(
        f.startswith("course_utils/") for f in files
    ):
        raise CourseError(
            f"--root {root}: no file of the course there (pyproject.toml and "
            "course_utils/ are needed): give --root, the course checkout"
        )
    _out_folder(out)
    config = {"master": f"master/{master.path.name}", **config}
    if secret is not None:
        from course_utils.grading.inputs.seeds import fingerprint

        config["variants"] = {
            "secret": SECRET, "id": "email", "fingerprint": fingerprint(secret)
        }  # fmt: skip
        config["sandbox"] = "require"  # the secret never beside unsandboxed code
    index = assignment.course_index(root).to_json()
    names = []
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.unlink(missing_ok=True)  # a killed build's: its mode is not this one's
    # A bundle that holds the secret is as private as the secret's own file.
    mode = 0o600 if secret is not None else 0o666
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
        for name, template in (
            ("setup.sh", "gradescope-setup.sh"),
            ("run_autograder", "gradescope-run_autograder"),
        ):
            text = (TEMPLATES / template).read_text()
            z.writestr(_executable(zipfile.ZipInfo(name)), text)
            names.append(name)
        z.write(master.path, config["master"])
        z.writestr(CONFIG, json.dumps(config, indent=1) + "\n")
        z.writestr(f"master/{assignment.INDEX_FILE}", index)
        names += [config["master"], CONFIG, f"master/{assignment.INDEX_FILE}"]
        if secret is not None:
            info = zipfile.ZipInfo(SECRET)
            info.external_attr = (0o100600 & 0xFFFF) << 16
            z.writestr(info, secret + b"\n")
            names.append(SECRET)
        for rel in files:
            z.write(root / rel, f"course/{rel}")
            names.append(f"course/{rel}")
    os.replace(tmp, out)
    return names


def _submission(folder: Path, master_name: str) -> Path:
    """The notebook a student submitted: the only one, or the one named like the master."""
    found = sorted(
        p
        for p in folder.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    named = [p for p in found if p.name == master_name]
    if len(named) == 1 or len(found) == 1:
        return (named or found)[0]
    if not found:
        raise CourseError("no .ipynb file in the submission: upload your notebook")
    names = ", ".join(p.name for p in found)
    raise CourseError(f"several notebooks ({names}): upload only {master_name}")


def _failed(message: str, started: float) -> dict:
    return {
        "score": 0.0,
        "execution_time": round(time.monotonic() - started, 2),
        "output": message,
        "stdout_visibility": "hidden",
        "tests": [],
    }


def submitters(path: Path) -> list[str]:
    """The ids of the submission's users (their emails, :func:`..seeds.email_id`), in
    the metadata's order; a :class:`CourseError` when there are none to be read."""
    from course_utils.grading.inputs.seeds import email_id

    why = "the submission's metadata does not say who submitted it"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CourseError(f"{why} ({path.name}: {err})") from None
    users = data.get("users") if isinstance(data, dict) else None
    emails = (
        [u.get("email") for u in users if isinstance(u, dict)]
        if isinstance(users, list)
        else []
    )
    if (
        not emails
        or len(emails) != len(users)
        or not all(isinstance(e, str) and e.strip() for e in emails)
    ):
        raise CourseError(f"{why} ({path.name}: no users, each with an email)")
    return list(dict.fromkeys(email_id(e) for e in emails))


def whose_variant(secret: bytes, ids: list[str], notebook: Path) -> tuple[str, str]:
    """(the id whose variant the submission is graded on, a line for its output). One
    user: theirs, with a note when the notebook's ``VARIANT`` line names another
    variant (as ``course grade`` flags it ``other variant``). A group: the member
    whose copy the notebook is, when its ``VARIANT`` line names a member with that
    member's own seed (the seed is computed here; the
    notebook only says which member's copy it is), else the first listed member's."""
    from course_utils.grading.inputs.ipynb import SubmissionError, read_cells
    from course_utils.grading.inputs.seeds import variant
    from course_utils.variants import VariantError, claimed

    try:
        said = claimed(read_cells(notebook))
    except (SubmissionError, VariantError, OSError):
        said = None
    if len(ids) == 1:
        mine = variant(secret, ids[0])
        line = f"Graded on your variant ({ids[0]}, seed {mine.seed})."
        if said is not None and said.seed is not None and said != mine:
            # course grade's "other variant": a classmate's copy, or copies released
            # from other ids than Gradescope's emails (docs/TEACHING.md, section 7)
            line += (
                f" This notebook's VARIANT line names another variant "
                f"({said.student!r}, seed {said.seed}), whose numbers are not yours: "
                "it was ignored. If this is the copy you were given, tell your "
                "instructor."
            )
        return ids[0], line
    members = ", ".join(ids)
    for sid in ids:
        if said is not None and said == variant(secret, sid):
            return sid, (
                f"A group submission ({members}): graded on the variant of {sid} "
                f"(seed {said.seed}), whose copy this notebook is."
            )
    first = variant(secret, ids[0])
    return ids[0], (
        f"A group submission ({members}): this notebook is no member's copy, so it was "
        f"graded on the variant of the first listed, {ids[0]} (seed {first.seed})."
    )


def _grade(root: Path, config: dict, work: Path) -> tuple[dict, bool]:
    """Grade the submission with ``course grade``: its ``results.json``, and whether
    the student's code ran (a grade that counts towards a submission limit)."""
    from course_utils.grading.batch import grader
    from course_utils.grading.inputs.seeds import fingerprint, load_secret
    from course_utils.grading.sandbox import isolation

    master = root / "source" / config["master"]
    notebook = _submission(root / "submission", master.name)
    (work / "subs").mkdir()
    shutil.copyfile(notebook, work / "subs" / f"{STUDENT}.ipynb")
    problem = isolation.problem()
    if problem and config.get("sandbox") == "require":
        raise CourseError(f"the grader's sandbox cannot run here: {problem}")
    secret_file, ids, whose = None, None, ""
    if config.get("variants"):
        secret_file = root / "source" / config["variants"]["secret"]
        secret = load_secret(secret_file)
        if (
            secret is None
            or fingerprint(secret[0]) != config["variants"]["fingerprint"]
        ):
            raise CourseError(
                "the bundle's variant secret is not the one it was built with"
            )
        sid, whose = whose_variant(
            secret[0], submitters(root / METADATA), work / "subs" / f"{STUDENT}.ipynb"
        )
        ids = {STUDENT: sid}
    limits = grader.Limits(
        timeout=config["timeout"],
        total_timeout=config["total_timeout"],
        memory_mb=config["memory_mb"],
    )
    # no_hidden_tests: the build checked the master's hidden tests
    grader.grade(
        work / "subs", master, work / "out", limits=limits, jobs=1,
        smoke=not config.get("full"), progress=False, unsafe_no_sandbox=bool(problem),
        variant_secret=secret_file, variant_ids=ids, no_hidden_tests=True,
    )  # fmt: skip
    record = json.loads((work / "out" / STUDENT / "grade.json").read_text())
    if record["status"] == "error":  # the grader's failure: no grade to give
        raise CourseError(
            f"the autograder failed on this submission ({record['reason']}); submit "
            "again, and tell your instructor if it fails again"
        )
    result = json.loads((work / "out" / STUDENT / "results.json").read_text())
    hidden = {t["name"] for t in record["tests"] if t.get("hidden")}
    shown = config.get("hidden_visibility", HIDDEN_VISIBILITY[0])
    for test in result["tests"]:
        if test["name"] in hidden:
            test["visibility"] = shown
    where = "without the sandbox (" + problem + ")" if problem else "in the sandbox"
    result["output"] += f"\nGraded {where}, from {notebook.name}."
    if whose:
        result["output"] += f"\n{whose}"
    return result, record["status"] not in NOT_COUNTED


class MetadataError(Exception):
    """``submission_metadata.json`` is missing or not what Gradescope documents."""


@dataclass(frozen=True)
class Previous:
    """One of ``previous_submissions``: when, its score and its ``results.json``."""

    at: _dt.datetime
    score: float
    results: dict

    @property
    def counted(self) -> bool:
        """Graded (ours say so in ``extra_data``; any other counts, to be safe)."""
        extra = self.results.get("extra_data")
        return not (isinstance(extra, dict) and extra.get("counted") is False)


def _time(value, where: str) -> _dt.datetime:
    try:
        at = _dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise MetadataError(f"{where} is {value!r}, not a time") from None
    return at if at.tzinfo else at.replace(tzinfo=_dt.UTC)


def _score(entry: dict, where: str) -> float:
    value = entry.get("score", entry.get("results", {}).get("score"))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MetadataError(f"{where}.score is {value!r}, not a number") from None


def read_metadata(path: Path) -> tuple[_dt.datetime | None, list[Previous]]:
    """(this submission's time, the earlier submissions in time order) from Gradescope's
    ``submission_metadata.json``; :class:`MetadataError` when it is missing or malformed.
    Earlier means submitted before ``created_at`` (a regrade of an old submission does
    not count the ones that came after it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MetadataError(f"{path.name} is missing") from None
    except (OSError, ValueError) as err:
        raise MetadataError(f"{path.name} cannot be read: {err}") from None
    if not isinstance(data, dict):
        raise MetadataError(f"{path.name} is not a JSON object")
    created = data.get("created_at")
    created = _time(created, "created_at") if created is not None else None
    entries = data.get("previous_submissions", [])
    if not isinstance(entries, list):
        raise MetadataError("previous_submissions is not a list")
    previous = []
    for i, entry in enumerate(entries):
        where = f"previous_submissions[{i}]"
        if not isinstance(entry, dict) or "submission_time" not in entry:
            raise MetadataError(f"{where} has no submission_time")
        results = entry.get("results")
        results = results if isinstance(results, dict) else {}
        at = _time(entry["submission_time"], f"{where}.submission_time")
        if created is None or at < created:
            previous.append(
                Previous(at, _score(entry | {"results": results}, where), results)
            )
    return created, sorted(previous, key=lambda p: p.at)


def _when(at: _dt.datetime) -> str:
    return at.astimezone(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


@dataclass
class Gate:
    """What the submission limits say about this submission: ``held`` is the result to
    give instead of grading it (the last graded submission's), ``note`` a line for a
    graded one's output; ``checked`` is False when the metadata could not be read."""

    held: dict | None = None
    note: str = ""
    graded_before: int = 0
    checked: bool = True


# The keys of a previous results.json that a repeated one keeps (Gradescope's format).
KEPT = ("visibility", "stdout_visibility", "output_format", "test_output_format")
KEPT += ("test_name_format",)


def _repeat(last: Previous, why: str, started: float) -> dict:
    """The last graded submission's results again, with why this one was not graded."""
    before = last.results
    tests = before.get("tests")
    extra = before.get("extra_data")
    return {k: before[k] for k in KEPT if k in before} | {
        "score": last.score,
        "execution_time": round(time.monotonic() - started, 2),
        "output": (
            f"Not graded: {why}.\nYour score stays {last.score:g}, from your last "
            f"graded submission ({_when(last.at)}), whose results are repeated below: "
            "Gradescope keeps the score of the latest submission.\n\n"
            + str(before.get("output", ""))
        ).strip(),
        "tests": tests if isinstance(tests, list) else [],
        "extra_data": (dict(extra) if isinstance(extra, dict) else {})
        | {"counted": False, "repeats": last.at.isoformat()},
    }


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def gate(root: Path, config: dict, started: float) -> Gate:
    """Check ``max_submissions`` and ``min_interval_minutes`` against the metadata."""
    most, gap = config.get("max_submissions"), config.get("min_interval_minutes")
    if not most and not gap:
        return Gate()
    try:
        created, previous = read_metadata(root / METADATA)
    except MetadataError as err:
        note = f"Submission limits not checked: {err}; none was applied."
        return Gate(note=note, checked=False)
    graded = [p for p in previous if p.counted]
    last = graded[-1] if graded else None
    if most and last and len(graded) >= most:
        have = "has" if len(graded) == 1 else "have"
        why = (
            f"this assignment grades at most {_plural(most, 'submission')}, and "
            f"{len(graded)} of yours {have} been graded"
        )
        return Gate(held=_repeat(last, why, started), graded_before=len(graded))
    note = ""
    if gap and last and created is None:
        note = (
            "The time since the last graded submission was not checked: "
            "the metadata has no created_at."
        )
    elif gap and last and created < last.at + _dt.timedelta(minutes=gap):
        why = (
            f"this assignment grades one submission every {gap:g} minutes; your last "
            f"graded one was at {_when(last.at)}, so the next can be graded from "
            f"{_when(last.at + _dt.timedelta(minutes=gap))}"
        )
        return Gate(held=_repeat(last, why, started), graded_before=len(graded))
    return Gate(note=note, graded_before=len(graded))


def _limits_note(config: dict, checked: Gate, counted: bool) -> str:
    """The lines a submission that was not held gets about the limits."""
    most = config.get("max_submissions")
    notes = [checked.note] if checked.note else []
    if most and checked.checked and counted:
        notes.append(f"Graded submission {checked.graded_before + 1} of {most}.")
    elif most and checked.checked:
        notes.append(
            f"This submission was not graded: it does not count towards the {most} allowed."
        )
    return "\n".join(notes)


def run(root: Path) -> dict:
    """Gradescope's run: grade ``root/submission``, write ``root/results/results.json``."""
    started = time.monotonic()
    config, checked, counted = {}, Gate(), False
    try:
        config = json.loads((root / "source" / CONFIG).read_text())
        checked = gate(root, config, started)
        if checked.held is not None:
            result = checked.held
        else:
            with tempfile.TemporaryDirectory(prefix="course-gradescope-") as work:
                result, counted = _grade(root, config, Path(work))
    except CourseError as err:
        result = _failed(f"Not graded: {err}", started)
    except Exception as err:  # the grader's own failure: still a results.json
        result = _failed(
            f"The autograder failed ({type(err).__name__}: {err})", started
        )
    if checked.held is None:
        note = _limits_note(config, checked, counted)
        result["output"] = "\n".join(x for x in (result["output"], note) if x)
        extra = result.get("extra_data")
        result["extra_data"] = (extra if isinstance(extra, dict) else {}) | {
            "counted": counted
        }
    (root / "results").mkdir(exist_ok=True)
    tmp = root / "results" / ".results.json.tmp"
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, root / "results" / "results.json")
    return result


def cmd_build(args) -> int:
    """``course gradescope build --source MASTER --out autograder.zip``."""
    out = Path(args.out)
    if out.suffix != ".zip":
        raise CourseError(f"--out must name a .zip file, got {out}")
    config = {
        "timeout": args.timeout,
        "total_timeout": args.total_timeout,
        "memory_mb": args.memory,
        "full": args.full,
        "sandbox": "require" if args.require_sandbox else "auto",
        "hidden_visibility": args.hidden_visibility,
        "max_submissions": args.max_submissions,
        "min_interval_minutes": args.min_interval,
    }
    secret = None
    if args.variant_secret:  # only by option: a bundle holds it for Gradescope
        from course_utils.grading.inputs.seeds import load_secret

        secret = load_secret(args.variant_secret)[0]
    root = course_root(Path(args.source), args.root)
    names = build(
        Path(args.source), out, config, root, secret,
        no_hidden_tests=args.no_hidden_tests,
    )  # fmt: skip
    limits = [
        f"at most {args.max_submissions} graded submissions"
        if args.max_submissions
        else "",
        f"one every {args.min_interval:g} minutes" if args.min_interval else "",
    ]
    limits = " and ".join(x for x in limits if x) or "no submission limit"
    if secret is not None:
        limits += (
            "; per-student variants from the submitter's email (graded only in the "
            "sandbox)"
        )
    print(
        f"wrote {out}: setup.sh, run_autograder, {names[2]}, {CONFIG}, {names[4]}"
        + (f", {SECRET}" if secret is not None else "")
        + f" and {sum(n.startswith('course/') for n in names)} files of the course "
        f"from {root}; "
        f"hidden tests {args.hidden_visibility}, "
        f"{limits}; upload it as the autograder "
        "(docs/GRADING_DEPLOY.md: memory and CPU to choose)"
    )
    return 0


def try_layout(bundle: Path, submission: Path, root: Path, email: str) -> Path:
    """A local copy of Gradescope's ``/autograder`` for ``bundle`` and ``submission``
    (a notebook, or a folder uploaded as it is), with a ``submission_metadata.json``
    of one submitter and no earlier submissions."""
    try:
        with zipfile.ZipFile(bundle) as z:
            z.extractall(root / "source")
    except (OSError, zipfile.BadZipFile) as err:
        raise CourseError(f"BUNDLE {bundle}: not an autograder zip: {err}") from None
    if not (root / "source" / CONFIG).is_file():
        raise CourseError(
            f"BUNDLE {bundle}: no {CONFIG}: not a course gradescope build"
        )
    for name in ("run_autograder", "setup.sh"):
        if (root / "source" / name).exists():
            (root / "source" / name).chmod(0o755)
    if submission.is_dir():
        shutil.copytree(submission, root / "submission")
    elif submission.is_file():
        (root / "submission").mkdir()
        shutil.copy(submission, root / "submission" / submission.name)
    else:
        raise CourseError(f"SUBMISSION {submission}: no such file or folder")
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    metadata = {
        "id": 1,
        "created_at": now,
        "users": [{"email": email, "id": 1, "name": "A student"}],
        "previous_submissions": [],
    }
    (root / METADATA).write_text(json.dumps(metadata, indent=1) + "\n")
    return root


def cmd_try(args) -> int:
    """``course gradescope try BUNDLE SUBMISSION``: run the bundle here, print its results."""
    import subprocess

    keep = Path(args.keep) if args.keep else None
    if keep is not None and keep.exists() and any(keep.iterdir()):
        raise CourseError(f"--keep {keep}: exists and is not empty: give a new folder")
    with tempfile.TemporaryDirectory(prefix="course-gradescope-try-") as tmp:
        root = (keep or Path(tmp) / "autograder").resolve()
        root.mkdir(parents=True, exist_ok=True)
        try_layout(Path(args.bundle), Path(args.submission), root, args.email)
        # The bundle's own course, as setup.sh installs it on Gradescope.
        course = root / "source" / "course"
        path = os.pathsep.join(
            x for x in (str(course), os.environ.get("PYTHONPATH")) if x
        )
        env = dict(os.environ, COURSE_AUTOGRADER_ROOT=str(root),
                   COURSE_PYTHON=sys.executable, PYTHONPATH=path)  # fmt: skip
        # its stdout is results.json's score and output, printed below with each test
        done = subprocess.run(
            [str(root / "source" / "run_autograder")], env=env,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        results = root / "results" / "results.json"
        if not results.is_file():
            print(done.stdout, end="")
            raise CourseError(
                f"run_autograder wrote no results.json (exit {done.returncode})"
            )
        result = json.loads(results.read_text())
        for line in _try_lines(result):
            print(line)
    if keep is not None:
        print(f"the layout is kept in {keep} (results/results.json)")
    return 0


def _try_lines(result: dict) -> list[str]:
    tests = result.get("tests", [])
    top = sum(float(t.get("max_score", 0)) for t in tests)
    lines = [
        f"score {result.get('score', 0):g} / {top:g}",
        str(result.get("output", "")),
    ]
    for t in tests:
        lines.append(
            f"  {t.get('name')}: {t.get('score', 0):g} / {t.get('max_score', 0):g} "
            f"({t.get('visibility', 'visible')})"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    result = run(Path(argv[0] if argv else "/autograder"))
    print(f"score {result['score']:g}: {result['output']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
