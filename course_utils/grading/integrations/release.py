"""``course release OUT``: the student-facing copy of the course, with no solution in it.

The tree holds the lessons, the student exercises (rendered afresh from the masters),
``course_utils`` and the files that install and run them; never ``solutions/``, the
tests, the instructor's documents, or any hidden test. After writing it, ``release``
scans every file of it for every solution and hidden-test line of every master
(:func:`leaks`) and fails, naming file and line, if one is found.

``course release OUT --variants ROSTER --variant-secret FILE`` writes instead one folder
per student of the roster, holding their own copy of each exercise notebook that has
per-student variants (a ``VARIANT = None`` line in its ``parameters`` cell), with their
variant written into that line and a line to open the file itself where the badges
were (:func:`build_variants`), scanned the same way, and ``variants.csv`` (student,
folder, seed) for the instructor.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from course_utils import lessons, student_version
from course_utils.errors import CourseError
from course_utils.grading.inputs.names import folder_name, shown
from course_utils.grading.inputs.seeds import email_id, load_secret, variant
from course_utils.tooling.notebooks import REPOSITORY
from course_utils.variants import NAME

SHIPPED = (
    "README.md",
    "README.zh.md",
    "LICENSE",
    "Makefile",
    "pyproject.toml",
    "binder",
    "constraints",
)
SHIPPED += ("notebooks", "course_utils", "docs")
INSTRUCTOR_DOCS = ("docs/GRADING.md", "docs/GRADING_DEPLOY.md", "docs/AUTHORING.md")
INSTRUCTOR_DOCS += ("docs/TEACHING.md", "docs/POINTS.md")
MARKERS = (
    student_version.BEGIN_SOLUTION,
    student_version.BEGIN_HIDDEN,
    student_version.BEGIN_MD,
)
HIDDEN_BEGIN, HIDDEN_END = student_version.BEGIN_HIDDEN, student_version.END_HIDDEN
# A shorter line (`return out`, `loss.backward()`) is an idiom, not an answer.
SHORT = 20


@dataclass(frozen=True)
class Secret:
    """A solution region or a hidden test cell of a master: its lines, stripped."""

    master: str
    kind: str  # "solution" or "hidden test"
    lines: tuple[str, ...]


def _cell_text(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def secrets(master: Path) -> list[Secret]:
    """Every solution region and hidden test cell of ``master`` (an ``.ipynb``)."""
    nb = json.loads(master.read_text(encoding="utf-8"))
    found = []
    for cell in nb.get("cells", []):
        lines = [s.strip() for s in _cell_text(cell).splitlines()]
        header = student_version.test_header(cell)
        if header and header[2]:
            body = [x for x in lines[1:] if x and x not in (HIDDEN_BEGIN, HIDDEN_END)]
            found.append(Secret(master.name, "hidden test", tuple(body)))
            continue
        inside: list[str] | None = None
        for line in lines:
            if line in (student_version.BEGIN_SOLUTION, student_version.BEGIN_MD):
                inside = []
            elif (
                line in (student_version.END_SOLUTION, student_version.END_MD)
                and inside is not None
            ):
                found.append(
                    Secret(master.name, "solution", tuple(filter(None, inside)))
                )
                inside = None
            elif inside is not None:
                inside.append(line)
    return found


def file_lines(path: Path) -> list[str]:
    """A file's lines, stripped; a notebook's are its cells' lines and text outputs'."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return text_lines(text, notebook=path.suffix == ".ipynb")


def text_lines(text: str, notebook: bool) -> list[str]:
    """:func:`file_lines` of a file's text."""
    if not notebook:
        return [s.strip() for s in text.splitlines()]
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return [s.strip() for s in text.splitlines()]
    out = []
    for cell in cells:
        out += [s.strip() for s in _cell_text(cell).splitlines()]
        for output in cell.get("outputs", []):
            for value in [output.get("text", "")] + list(
                output.get("data", {}).values()
            ):
                value = "".join(value) if isinstance(value, list) else str(value)
                out += [s.strip() for s in value.splitlines()]
    return out


def leaks(tree: Path, masters: list[Path], public: set[str]) -> list[str]:
    """Where ``tree`` holds a master's solution or hidden test: ``file:line: what``.

    A line counts when it is at least ``SHORT`` characters and not in ``public`` (the
    lessons' and student notebooks' own lines); in ``course_utils``' Python sources, the
    library students import, only a whole solution region of two lines or more counts
    (in order, blank lines aside), unless the lessons hold each of its lines. A marker line (``### BEGIN SOLUTION``…) always counts.
    """
    found = [s for m in masters for s in secrets(m)]
    single = {}
    for s in found:
        for line in s.lines:
            if len(line) >= SHORT and line not in public:
                single.setdefault(line, s)
    blocks = {
        "\n".join(s.lines): s
        for s in found
        if len(s.lines) >= 2 and not set(s.lines) <= public  # a lesson teaches it
    }
    out = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        rel = path.relative_to(tree).as_posix()
        lines = file_lines(path)
        library = rel.startswith("course_utils/") and path.suffix == ".py"
        for n, line in enumerate(lines, 1):
            hit = single.get(line) if not library else None
            if line in MARKERS:
                out.append(f"{rel}:{n}: marker {line!r}")
            elif hit:
                out.append(f"{rel}:{n}: {hit.kind} line of {hit.master}: {line[:60]}")
        text = "\n".join(s for s in lines if s)
        out += [
            f"{rel}: a whole {s.kind} of {s.master} ({len(s.lines)} lines)"
            for block, s in blocks.items()
            if block in text
        ]
    return out


def tracked_files(root: Path) -> list[str]:
    """The course's files: git's list when ``root`` is a checkout, else every file."""
    done = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, text=True
    )
    if done.returncode == 0 and done.stdout:
        return [f for f in done.stdout.split("\0") if f]
    return [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]


def _wanted(rel: str) -> bool:
    top = rel.split("/", 1)[0]
    # the translated student notebooks ship as written (the English ones are rendered)
    shipped = top in SHIPPED or rel.startswith(TRANSLATED_EXERCISES)
    return shipped and rel not in INSTRUCTOR_DOCS and "__pycache__" not in rel


TRANSLATED_EXERCISES = "exercises/zh/"
# The upstream repository in an address: with a ref (a badge's blob/tag, Binder's
# /tag, pip's @tag) or bare (a clone line). Not a longer name that starts with it.
_REPO_REF = re.compile(
    rf"(?<![\w.-]){re.escape(REPOSITORY)}(/blob/|/tree/|/|@)(v\d[\w.-]*)(?![\w-])"
)
_REPO_BARE = re.compile(rf"(?<![\w.-]){re.escape(REPOSITORY)}(?![\w.-])")
_REPO_ARG = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)(@(?P<tag>[A-Za-z0-9][\w./-]*))?$"
)


def parse_repo(text: str) -> tuple[str, str | None]:
    """``OWNER/NAME[@TAG]`` of ``--repo``: (repository, tag or None)."""
    m = _REPO_ARG.match(text.strip())
    if m is None:
        raise CourseError(
            f"--repo {text!r}: expected OWNER/NAME or OWNER/NAME@TAG, the GitHub "
            "repository (and tag) the students' copy of the course lives in"
        )
    return m["repo"], m["tag"]


def point_at(tree: Path, repo: str, tag: str | None) -> list[str]:
    """Rewrite every address of the upstream repository in ``tree`` (badges, the setup
    cell's install line, clone lines) to ``repo`` at ``tag`` (default: the same tag);
    returns the files changed."""
    changed = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if REPOSITORY not in text:
            continue
        new = _REPO_REF.sub(lambda m: f"{repo}{m[1]}{tag or m[2]}", text)
        new = _REPO_BARE.sub(repo, new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path.relative_to(tree).as_posix())
    return changed


# A markdown link with a plain label: [label](target)
_LINK = re.compile(r"(?<!!)\[([^\[\]]*)\]\(([^)\s]+)\)")


def unlink_missing(tree: Path) -> list[str]:
    """In the release's markdown files, a link to a file the release does not hold
    (the instructor's documents, ``solutions/``) becomes its label; returns
    ``file: target`` for each."""
    done = []
    for md in sorted(tree.rglob("*.md")):
        text = md.read_text(encoding="utf-8")

        def keep(m: re.Match, md: Path = md) -> str:
            target = m[2]
            if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
                return m[0]
            if (md.parent / target.split("#", 1)[0]).exists():
                return m[0]
            done.append(f"{md.relative_to(tree).as_posix()}: {target}")
            return m[1]

        new = _LINK.sub(keep, text)
        if new != text:
            md.write_text(new, encoding="utf-8")
    return done


def public_lines(root: Path, tree: Path) -> set[str]:
    """Lines students get by design: the lessons' and the student exercises'."""
    lines: set[str] = set()
    for path in [
        *lessons.files(root, lessons.LESSONS, ".py"),
        *lessons.files(tree, lessons.STUDENTS, ""),
    ]:
        lines.update(file_lines(path))
    return lines


def build(
    root: Path, out: Path, repo: str | None = None
) -> tuple[list[str], list[str]]:
    """Write the release of the course at ``root`` into ``out`` (which must not exist,
    or be empty). Returns (files written, leaks found); with leaks, ``out`` is kept for
    inspection and the caller fails. ``repo`` (``OWNER/NAME[@TAG]``) points the badges
    and the setup cells' install line at the instructor's repository."""
    where = parse_repo(repo) if repo else None
    from course_utils.tooling import notebooks

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CourseError(f"{out} exists and is not empty: give a new folder")
    masters = lessons.files(root, lessons.MASTERS, ".py")
    if not masters:
        raise CourseError(f"no masters in {root / 'solutions'}: not a course checkout")
    stage = Path(
        tempfile.mkdtemp(
            prefix=".release-", dir=out.parent if out.parent.exists() else None
        )
    )
    written = []
    for rel in tracked_files(root):
        src = root / rel
        if _wanted(rel) and src.is_file() and not src.is_symlink():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, stage / rel)
            written.append(rel)
    (stage / "exercises").mkdir(exist_ok=True)
    for master in masters:
        rel = f"exercises/{master.stem}.ipynb"
        (stage / rel).write_text(
            notebooks.render_student(master, root), encoding="utf-8"
        )
        written.append(rel)
    if where is not None:
        point_at(stage, *where)
    unlink_missing(stage)
    found = leaks(
        stage, lessons.files(root, lessons.MASTERS), public_lines(root, stage)
    )
    if out.exists():
        out.rmdir()
    stage.rename(out)
    return sorted(written), found


# The parameters cell's line that a student's copy gets their variant in.
VARIANT_LINE = re.compile(rf"^{NAME} = None\b.*$", re.MULTILINE)
INDEX = "variants.csv"  # student, folder, seed: the instructor's


def read_ids(path: Path) -> list[str]:
    """The roster's student ids, as the grader will see them (the submission's file or
    folder name): one a line (blank lines and ``#`` comments aside), the
    ``submission`` column of a CSV roster (the one ``course grade export`` reads), or,
    in a CSV without one, the ``Email`` column of its students (Gradescope's roster,
    whose emails the Gradescope bundle draws variants from: :func:`..seeds.email_id`;
    a row whose ``Role`` is not Student is left out)."""
    where = f"--variants {path}"
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise CourseError(f"{where}: cannot read it: {err}") from None
    lines = text.splitlines()
    head = next((line for line in lines if line.strip()), "")
    columns = [h.strip().lower() for h in next(csv.reader([head]), [])]
    if "submission" in columns or "email" in columns:
        rows = csv.DictReader(io.StringIO(text))
        found = [
            (n, {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()})
            for n, row in enumerate(rows, start=2)
        ]
        if "submission" in columns:
            pairs = [(n, row.get("submission", "")) for n, row in found]
        else:  # Gradescope's roster: students by email, as the bundle names them
            pairs = [
                (n, email_id(row.get("email", "")))
                for n, row in found
                if row.get("role", "student").lower() in ("student", "")
            ]
    else:
        pairs = [(n, line.strip()) for n, line in enumerate(lines, start=1)]
        pairs = [(n, i) for n, i in pairs if not i.startswith("#")]
    ids: dict[str, int] = {}
    for n, sid in pairs:
        if not sid:
            continue
        if sid != shown(sid) or "/" in sid or sid.startswith("."):
            raise CourseError(
                f"{where}: line {n}: {sid!r} cannot be a submission's file or folder name"
            )
        if sid in ids:
            raise CourseError(f"{where}: line {n}: {sid!r} twice (line {ids[sid]})")
        ids[sid] = n
    if not ids:
        raise CourseError(f"{where}: no student ids in it")
    return list(ids)


def variant_masters(root: Path) -> list[Path]:
    """The masters whose ``parameters`` cell has a ``VARIANT = None`` line."""
    return [
        p
        for p in lessons.files(root, lessons.MASTERS, ".py")
        if VARIANT_LINE.search(p.read_text(encoding="utf-8"))
    ]


# A notebook's Colab, Kaggle and Binder badges (notebooks.badges), on a line of their own
_BADGE_LINE = re.compile(r"^\[!\[Open In Colab\]\(.*$", re.MULTILINE)
# What a student's own copy says instead: a badge opens the release's notebook, whose
# parameters cell holds the default variant, not the student's
OWN_COPY = (
    "**This notebook is your own copy, with your variant:** work in this file, not in "
    "the course's notebook online (another variant). Upload it to Colab (File → Upload "
    "notebook) or Kaggle (File → Import Notebook), or open it in Jupyter."
)


def with_variant(notebook: str, student: str, seed: str, name: str = "") -> str:
    """A student notebook's text (``name``) with ``student``'s variant in its
    ``parameters`` cell, and :data:`OWN_COPY` where its badges were."""
    import nbformat

    nb = nbformat.reads(notebook, as_version=4)
    value = {"student": student, "seed": seed}
    line = f"{NAME} = {value!r}  # yours: keep this line"
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    hits = [c for c in cells if VARIANT_LINE.search(c.source)]
    if len(hits) != 1:
        raise CourseError(
            f"{name or 'the notebook'}: {len(hits)} parameters cells with a "
            f"'{NAME} = None' line; one is needed"
        )
    hits[0].source = VARIANT_LINE.sub(lambda _: line, hits[0].source, count=1)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _BADGE_LINE.sub(lambda _: OWN_COPY, cell.source)
    return nbformat.writes(nb) + "\n"


def build_variants(
    root: Path, roster: Path, secret: bytes, out: Path, repo: str | None = None
) -> tuple[list[str], list[str]]:
    """Each roster student's copy of every variant master's student notebook, in
    ``out/<student>/``, and ``out/variants.csv``. Returns (files written, leaks found).
    ``repo`` (``OWNER/NAME[@TAG]``) points the copies' install line at the instructor's
    repository, as :func:`build` does; their badges, which would open the release's
    notebook and its default variant, are :data:`OWN_COPY`."""
    from course_utils.tooling import notebooks

    where = parse_repo(repo) if repo else None
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CourseError(f"{out} exists and is not empty: give a new folder")
    ids = read_ids(roster)
    masters = variant_masters(root)
    if not masters:
        raise CourseError(
            f"no master in {root / 'solutions'} has a '{NAME} = None' line in its "
            "parameters cell: none has per-student variants"
        )
    rendered = {m.stem: notebooks.render_student(m, root) for m in masters}
    out.mkdir(parents=True, exist_ok=True)
    written, table = [], [["student", "folder", "seed"]]
    for sid in ids:
        mine = variant(secret, sid)
        folder = folder_name(sid)
        if folder == INDEX:
            raise CourseError(f"--variants {roster}: {sid!r} is the name of the index")
        (out / folder).mkdir()
        for stem, text in rendered.items():
            rel = f"{folder}/{stem}.ipynb"
            (out / rel).write_text(
                with_variant(text, sid, str(mine.seed), f"exercises/{stem}.ipynb"),
                encoding="utf-8",
            )
            written.append(rel)
        table.append([sid, folder, str(mine.seed)])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(table)
    (out / INDEX).write_text(buf.getvalue(), encoding="utf-8")
    if where is not None:
        point_at(out, *where)
    # students get the lessons and these notebooks' own lines by design
    public = {
        line
        for p in lessons.files(root, lessons.LESSONS, ".py")
        for line in file_lines(p)
    }
    public |= {line for t in rendered.values() for line in text_lines(t, True)}
    found = leaks(out, lessons.files(root, lessons.MASTERS), public)
    return written, found


def cmd_release(args) -> int:
    """``course release OUT [--root DIR] [--repo OWNER/NAME[@TAG]] [--variants ROSTER
    --variant-secret FILE]``."""
    root = Path(args.root).resolve()
    if getattr(args, "variants", None):
        return _cmd_variants(args, root)
    if getattr(args, "variant_secret", None):
        raise CourseError("--variant-secret: only with --variants ROSTER")
    repo = getattr(args, "repo", None)
    written, found = build(root, Path(args.out).resolve(), repo)
    for line in found:
        print(f"leak: {line}")
    if found:
        raise CourseError(f"{len(found)} solution or hidden-test line(s) in {args.out}")
    tops = sorted({w.split("/", 1)[0] for w in written})
    print(
        f"wrote {len(written)} files to {args.out} ({', '.join(tops)}); "
        f"no solution or hidden-test line of {len(lessons.files(root, lessons.MASTERS))} masters in it"
    )
    _say_where(repo, "push the folder there (the tag too, when given)")
    return 0


def _say_where(repo: str | None, then: str, badges: bool = True) -> None:
    """The line that says where the badges (unless not ``badges``) and install lines of
    what was written point: the instructor's ``repo``, or upstream with a note."""
    if repo:
        print(f"{'badges and ' if badges else ''}install lines point at {repo}: {then}")
    else:
        print(
            f"note: {'badges and ' if badges else ''}the setup cells' install line "
            f"point{'' if badges else 's'} at {REPOSITORY}, "
            "whose solutions/ holds every hidden test: give --repo OWNER/NAME@TAG, "
            "your own repository (docs/GRADING_DEPLOY.md)"
        )


def _cmd_variants(args, root: Path) -> int:
    secret = load_secret(args.variant_secret)
    if secret is None:
        raise CourseError(
            "--variants: give --variant-secret FILE (or $COURSE_VARIANT_SECRET_FILE), "
            "the secret the grader will use"
        )
    repo = getattr(args, "repo", None)
    written, found = build_variants(
        root, Path(args.variants), secret[0], Path(args.out).resolve(), repo
    )
    for line in found:
        print(f"leak: {line}")
    if found:
        raise CourseError(f"{len(found)} solution or hidden-test line(s) in {args.out}")
    students = len({w.split("/", 1)[0] for w in written})
    names = sorted({w.split("/", 1)[1] for w in written})
    print(
        f"wrote {len(written)} notebooks to {args.out}: {', '.join(names)} for each of "
        f"{students} students, each with their variant; {args.out}/variants.csv lists "
        "them (for you: hand each student their own folder); each copy's badges are a "
        "line telling the student to open it, as a badge opens the release's notebook"
    )
    _say_where(
        repo, "the release students install from (course release --repo)", badges=False
    )
    return 0
