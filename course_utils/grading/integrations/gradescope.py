"""``course gradescope build``: a Gradescope autograder bundle that grades with the course.

The zip holds ``setup.sh`` and ``run_autograder`` (from ``templates/``), the master,
``gradescope.json`` (which master, the limits) and the course itself (``course/``, what
``setup.sh`` installs). Gradescope runs ``run_autograder`` once per submission; it runs
:func:`run` (``python -m course_utils.grading.integrations.gradescope ROOT``), which grades the one
notebook in ``ROOT/submission`` with ``course grade`` and writes
``ROOT/results/results.json``, also when the submission or the grader fails.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from course_utils.errors import CourseError

TEMPLATES = Path(__file__).resolve().with_name("templates")
CONFIG = "gradescope.json"
STUDENT = "submission"
# What setup.sh installs from the course: the package and its known-good versions.
COURSE_FILES = ("pyproject.toml", "README.md", "LICENSE", "constraints/known-good.txt")


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


def build(source: Path, out: Path, config: dict, root: Path) -> list[str]:
    """Write the bundle ``out`` (a zip) for the master ``source``; returns its names."""
    from course_utils.grading.inputs.master import load_master

    master = load_master(source)  # refuses a notebook that is not a master
    config = {"master": f"master/{master.path.name}", **config}
    names = []
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, template in (
            ("setup.sh", "gradescope-setup.sh"),
            ("run_autograder", "gradescope-run_autograder"),
        ):
            text = (TEMPLATES / template).read_text()
            z.writestr(_executable(zipfile.ZipInfo(name)), text)
            names.append(name)
        z.write(master.path, config["master"])
        z.writestr(CONFIG, json.dumps(config, indent=1) + "\n")
        names += [config["master"], CONFIG]
        for rel in _course_files(root):
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


def _grade(root: Path, config: dict, work: Path) -> dict:
    """Grade the submission with ``course grade``; returns its ``results.json``."""
    from course_utils.grading.batch import grader
    from course_utils.grading.sandbox import bubblewrap

    master = root / "source" / config["master"]
    notebook = _submission(root / "submission", master.name)
    (work / "subs").mkdir()
    shutil.copyfile(notebook, work / "subs" / f"{STUDENT}.ipynb")
    problem = bubblewrap.problem()
    if problem and config.get("sandbox") == "require":
        raise CourseError(f"the grader's sandbox cannot run here: {problem}")
    limits = grader.Limits(
        timeout=config["timeout"],
        total_timeout=config["total_timeout"],
        memory_mb=config["memory_mb"],
    )
    grader.grade(
        work / "subs", master, work / "out", limits=limits, jobs=1,
        smoke=not config.get("full"), progress=False, unsafe_no_sandbox=bool(problem),
    )  # fmt: skip
    result = json.loads((work / "out" / STUDENT / "results.json").read_text())
    where = "without the sandbox (" + problem + ")" if problem else "in the sandbox"
    result["output"] += f"\nGraded {where}, from {notebook.name}."
    return result


def run(root: Path) -> dict:
    """Gradescope's run: grade ``root/submission``, write ``root/results/results.json``."""
    started = time.monotonic()
    try:
        config = json.loads((root / "source" / CONFIG).read_text())
        with tempfile.TemporaryDirectory(prefix="course-gradescope-") as work:
            result = _grade(root, config, Path(work))
    except CourseError as err:
        result = _failed(f"Not graded: {err}", started)
    except Exception as err:  # the grader's own failure: still a results.json
        result = _failed(
            f"The autograder failed ({type(err).__name__}: {err})", started
        )
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
    }
    names = build(Path(args.source), out, config, Path(args.root).resolve())
    print(
        f"wrote {out}: setup.sh, run_autograder, {names[2]}, {CONFIG} and "
        f"{len(names) - 4} files of the course; upload it as the autograder "
        "(docs/GRADING_DEPLOY.md: memory and CPU to choose)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    result = run(Path(argv[0] if argv else "/autograder"))
    print(f"score {result['score']:g}: {result['output']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
