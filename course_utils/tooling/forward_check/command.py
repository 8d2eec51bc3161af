"""The ``course forward-check`` command: the course against the newest releases, read, not run.

jax >= 0.11 and flax >= 0.12.9 need Python 3.12 or newer, so the newest releases never
run on the course's Python 3.11 machines. This check reads them instead:

1. the newest jax, flax, optax and orbax-checkpoint wheels for Python 3.13 (pure
   Python), fetched with ``pip download --no-deps --only-binary=:all:``, and the ``.py``
   files of the newest torch CPU wheel (PyPI's macOS arm64 build: PyPI's Linux wheels
   are CUDA builds), fetched by HTTP range requests from the wheel on PyPI, about 13 MiB
   of its 132 MiB (torch's Python files are the same in every build but ``version.py``);
2. what they deprecate or remove (:mod:`course_utils.tooling.forward_check.records`);
3. every name the lessons, the masters, the student notebooks and ``course_utils`` use
   from them (:mod:`course_utils.tooling.forward_check.uses`), resolved in each release; a
   name the installed release has and the newest lacks is reported as removed.

It fails naming the file and line of each use. Downloads are cached (``build/forward/``
by default); without network, or with ``--offline``, the newest cached release of each
is read, and the report says so. Nothing is installed or imported from the releases.

What a pass proves, and what only a run on Python 3.13 would: docs/VERSIONS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import re
import subprocess
import sys
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path
from typing import Any

from course_utils.tooling.errors import CourseError
from course_utils.tooling.forward_check.records import FOUND, MISSING, Record, Release
from course_utils.tooling.forward_check.uses import (
    OLDER_PATHS,
    Use,
    course_files,
    module_constants,
    uses,
)

PROJECTS = ("jax", "flax", "optax", "orbax-checkpoint")
PYTHON = "3.13"
PYPI = "https://pypi.org"
# PyPI's torch CPU build: its Linux wheels are CUDA builds, its macOS arm64 wheel is not.
TORCH_WHEEL = re.compile(r"torch-[^-]+-cp313-cp313-macosx_[0-9_]+_arm64\.whl$")
TIMEOUT_S = 60
# Members of the torch wheel closer than this are fetched in one request.
GAP = 1 << 20


class Unreachable(CourseError):
    """The index could not be reached and nothing usable is cached."""


@dataclass(frozen=True)
class Hit:
    """One use of a name that the newest release deprecates or removed."""

    use: Use
    record: Record
    release: str

    def line(self) -> str:
        rec = self.record
        name = f"{rec.name}({rec.keyword}=...)" if rec.keyword else rec.name
        if self.use.option:
            name = f"the jax option {self.use.name!r}"
        elif rec.name != self.use.name and not rec.keyword:
            name = f"{self.use.name} ({rec.name})"
        message = f': "{rec.message}"' if rec.message else ""
        where = f" ({rec.where}, {rec.how})" if rec.where else f" ({rec.how})"
        return f"{self.use.place}: {name} is {rec.status} in {self.release}{message}{where}"


# ------------------------------------------------------------------ downloads


def _wheel_prefix(project: str) -> str:
    return re.sub(r"[-_.]+", "_", project).lower()


def _version_key(path: Path) -> Any:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(path.name.split("-")[1])
    except (InvalidVersion, IndexError):
        return Version("0")


def cached(cache: Path, project: str, suffix: str = ".whl") -> Path | None:
    """The newest release of ``project`` in the cache, or None."""
    prefix = _wheel_prefix(project) if suffix == ".whl" else project
    found = [
        p for p in cache.glob(f"*{suffix}") if p.name.split("-")[0].lower() == prefix
    ]
    return max(found, key=_version_key) if found else None


def download_wheels(
    projects: Sequence[str], cache: Path, pins: dict[str, str], offline: bool
) -> tuple[list[Path], list[str]]:
    """The newest wheel of each project for Python 3.13, and notes on what was cached.

    ``pip download`` into ``cache`` (pip reuses a file already there). Where pip fails
    (no network) the newest cached wheel stands in, with a note.
    """
    cache.mkdir(parents=True, exist_ok=True)
    notes = []
    output = ""
    if not offline:
        specs = [pins.get(p, p) for p in projects]
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            PYTHON,
            "--progress-bar",
            "off",
            "--disable-pip-version-check",
            "-d",
            str(cache),
            *specs,
        ]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            output, failed = done.stdout + done.stderr, done.returncode != 0
        except subprocess.TimeoutExpired:
            output, failed = "timed out after 600 s", True
        if failed:
            last = [x for x in output.splitlines() if x.strip()][-1:] or ["no output"]
            notes.append(f"pip download failed ({last[0].strip()}): reading the cache")
            output = ""
    wheels = []
    for project in projects:
        named = re.findall(
            rf"({_wheel_prefix(project)}-[^\s/'\"]+?\.whl)", output, re.IGNORECASE
        )
        path = cache / named[-1] if named else None
        if path is None or not path.is_file():
            path = _cached_wheel(cache, project, pins.get(project, ""))
            if path is None:
                raise Unreachable(
                    f"no {pins.get(project, project)} wheel: pip could not download it "
                    f"and {cache} holds none; run once with network"
                )
            if not offline:
                notes.append(f"{path.name}: from the cache")
        wheels.append(path)
    if offline:
        notes.append(f"offline: {', '.join(w.name for w in wheels)} from {cache}")
    return wheels, notes


def _cached_wheel(cache: Path, project: str, pin: str) -> Path | None:
    """The pinned release's wheel in the cache, or the newest one there."""
    if not pin:
        return cached(cache, project)
    version = pin.partition("==")[2]
    found = sorted(cache.glob(f"{_wheel_prefix(project)}-{version}-*.whl"))
    return found[0] if found else None


class _RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests, from prefetched spans where it can."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0
        self.spans: dict[int, bytes] = {}
        self.requests, self.received = 0, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def fetch(self, start: int, end: int) -> bytes:
        request = urllib.request.Request(
            self.url, headers={"Range": f"bytes={start}-{end - 1}"}
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            if response.status != 206:
                raise Unreachable(
                    f"{self.url} does not answer range requests (HTTP {response.status})"
                )
            data = response.read()
        self.requests += 1
        self.received += len(data)
        return data

    def prefetch(self, spans: Iterable[tuple[int, int]]) -> None:
        for start, end in spans:
            self.spans[start] = self.fetch(start, end)

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        for start, data in self.spans.items():
            if start <= self.pos and end <= start + len(data):
                out = data[self.pos - start : end - start]
                self.pos = end
                return out
        out = self.fetch(self.pos, end) if end > self.pos else b""
        self.pos = end
        return out


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return json.load(response)


def torch_sources(cache: Path, pin: str, offline: bool) -> tuple[Path, list[str]]:
    """The ``.py`` files of the newest torch CPU wheel for Python 3.13, as a zip in ``cache``.

    Only the central directory and the ``.py`` members are fetched (HTTP range
    requests); ``torch-VERSION-sources.zip`` keeps them, with the wheel's name and the
    bytes fetched beside it (``.json``).
    """
    cache.mkdir(parents=True, exist_ok=True)
    version = pin.partition("==")[2]
    if not offline:
        try:
            return _fetch_torch(cache, version)
        except (
            OSError,
            ValueError,
            KeyError,
            HTTPException,
            zipfile.BadZipFile,
            Unreachable,
        ) as err:
            reason = getattr(err, "reason", err)
            note = f"torch from PyPI failed ({reason}): reading the cache"
    else:
        note = ""
    if version:
        path = cache / f"torch-{version}-sources.zip"
        path = path if path.is_file() else None
    else:
        path = cached(cache, "torch", "-sources.zip")
    if path is None:
        raise Unreachable(
            f"no {pin or 'torch'} sources: PyPI was not reachable and {cache} holds "
            "none; run once with network"
        )
    return path, [note] if note else []


def _fetch_torch(cache: Path, version: str) -> tuple[Path, list[str]]:
    index = _get_json(f"{PYPI}/pypi/torch/{version + '/' if version else ''}json")
    version = index["info"]["version"]
    out = cache / f"torch-{version}-sources.zip"
    if out.is_file():
        return out, []
    files = index["urls"]
    wheel = next((f for f in files if TORCH_WHEEL.search(f["filename"])), None)
    if wheel is None:
        raise Unreachable(f"torch {version} has no macOS arm64 wheel for Python 3.13")
    url = urllib.parse.urljoin(f"{PYPI}/pypi/torch/json", wheel["url"])
    remote = _RangeFile(url, int(wheel["size"]))
    archive = zipfile.ZipFile(remote)
    members = sorted(archive.infolist(), key=lambda i: i.header_offset)
    ends = [m.header_offset for m in members[1:]] + [archive.start_dir]
    spans: list[list[int]] = []
    for member, end in zip(members, ends, strict=True):
        if not member.filename.endswith(".py"):
            continue
        if spans and member.header_offset - spans[-1][1] < GAP:
            spans[-1][1] = end
        else:
            spans.append([member.header_offset, end])
    remote.prefetch((s, e) for s, e in spans)
    partial = out.with_suffix(".part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for member in members:
            if member.filename.endswith(".py"):
                z.writestr(member.filename, archive.read(member))
    partial.replace(out)
    fetched = {
        "wheel": wheel["filename"],
        "size": int(wheel["size"]),
        "fetched": remote.received,
        "requests": remote.requests,
    }
    out.with_suffix(".json").write_text(json.dumps(fetched, indent=1) + "\n")
    return out, [
        f"torch {version}: read the .py files of {wheel['filename']}, "
        f"{remote.received / 2**20:.1f} of {int(wheel['size']) / 2**20:.0f} MiB "
        f"in {remote.requests} range requests"
    ]


# ---------------------------------------------------------------------- check


def installed_releases(projects: Iterable[str]) -> dict[str, Release]:
    """The installed release of each project, by its top-level package names."""
    out = {}
    for project in projects:
        release = Release.from_installed(project)
        if release is not None:
            for top in release.tops:
                out[top] = release
    return out


def check(
    found: Iterable[Use],
    newest: dict[str, Release],
    installed: dict[str, Release],
) -> list[Hit]:
    """The uses that meet a deprecation or removal in the newest releases."""
    hits: dict[tuple, Hit] = {}
    options_new = options_old = None
    for use in found:
        if use.option:
            if "jax" not in newest or "jax" not in installed or use.guarded:
                continue
            if options_new is None:
                options_new = newest["jax"].options()
                options_old = installed["jax"].options()
            if use.name in options_old and use.name not in options_new:
                release = newest["jax"]
                record = Record(
                    use.name,
                    "removed",
                    f"an option of {installed['jax'].label}, not of {release.label}",
                    "",
                    "",
                )
                hits.setdefault((use.place, use.name), Hit(use, record, release.label))
            continue
        release = newest.get(use.name.split(".")[0])
        if release is None:
            continue
        if use.absent and release.resolve(use.absent).found:
            continue  # the branch for releases without use.absent: not this one
        for record in _records(use, release, installed):
            key = (use.place, record.name, record.keyword, record.status)
            hits.setdefault(key, Hit(use, record, release.label))
    return sorted(
        hits.values(), key=lambda h: (h.use.path, h.use.cell or 0, h.use.line)
    )


def _records(use: Use, release: Release, installed: dict[str, Release]) -> list[Record]:
    resolution = release.resolve(use.name)
    records = [
        r
        for r in resolution.records
        if not (r.status == "removed" and use.guarded)
        and not (r.on_call and not use.call)
    ]
    if resolution.state in FOUND:
        for keyword in use.keywords:
            record = release.keyword_record(resolution.target, keyword)
            if record is not None:
                records.append(record)
    if resolution.state == MISSING and not use.guarded and not records:
        old = installed.get(use.name.split(".")[0])
        before = (
            old.resolve(older_path(use.name), records=False)
            if old is not None
            else None
        )
        if before is not None and before.found:
            records.append(
                Record(
                    use.name,
                    "removed",
                    f"present in {old.label} ({before.where or before.target}), "
                    f"absent from {release.label}",
                    "",
                    "",
                )
            )
    return records


def older_path(name: str) -> str:
    """``name`` as a release from before a module moved spells it (:data:`OLDER_PATHS`)."""
    for new, old in OLDER_PATHS.items():
        if name == new or name.startswith(new + "."):
            return old + name[len(new) :]
    return name


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off, and back on after.

    The releases' syntax trees are millions of objects, kept to the end. The collector
    walks them again and again as more are built, about 40% of the check's CPU time. It
    finds nothing there to free: a syntax tree holds no reference cycle.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@_collector_paused()
def run(
    paths: Sequence[Path],
    root: Path,
    releases: Sequence[Release],
    installed: dict[str, Release],
) -> tuple[list[Hit], dict[str, Any]]:
    """Check ``paths`` against ``releases``; the hits and what was read."""
    newest = {top: r for r in releases for top in r.tops}
    tops = frozenset(newest)
    for release in releases:
        release.records()  # every record, so the summary counts them all
    constants = module_constants(root)
    found, unparsed = [], []
    for path in paths:
        file_uses, bad = uses(path, root, tops, constants)
        found += file_uses
        unparsed += bad
    hits = check(found, newest, installed)
    facts = {
        "files": len(paths),
        "uses": len(found),
        "unparsed": unparsed,
        "conditional": {r.label: r.conditional for r in releases},
        "unreadable": {r.label: len(r.unreadable) for r in releases if r.unreadable},
    }
    return hits, facts


def report(
    hits: Sequence[Hit],
    facts: dict[str, Any],
    releases: Sequence[Release],
    installed: dict[str, Release],
    notes: Sequence[str],
) -> str:
    """The command's output: what was read, each hit, and a summary."""
    labels = ", ".join(r.label for r in releases)
    old = ", ".join(sorted({r.label for r in installed.values()})) or "none"
    lines = [
        f"forward check: {labels} (wheels for Python {PYTHON}, read, not installed); "
        f"removals judged against the installed {old}",
        *notes,
        f"read {facts['files']} files of the course: {facts['uses']} uses of these "
        "packages",
    ]
    lines += [f"could not parse {u}" for u in facts["unparsed"]]
    lines += [h.line() for h in hits]
    conditional = ", ".join(f"{k} {v}" for k, v in facts["conditional"].items())
    lines.append(
        f"warnings under conditions only a run decides (not matched): {conditional}"
    )
    if facts["unreadable"]:
        text = ", ".join(f"{k} {v}" for k, v in facts["unreadable"].items())
        lines.append(f"files this Python cannot parse (names there unknown): {text}")
    places = sorted({h.use.path for h in hits})
    verdict = (
        f"{len(hits)} use(s) of deprecated or removed names in {len(places)} file(s)"
        if hits
        else "no use of a deprecated or removed name"
    )
    lines.append(verdict)
    return "\n".join(lines)


def cmd_forward_check(args: argparse.Namespace) -> int:
    from course_utils.tooling.notebooks import course_root

    root = course_root()
    cache = Path(args.cache) if args.cache else root / "build" / "forward"
    pins = {}
    for spec in args.pin:
        name, sep, version = spec.partition("==")
        if not sep or not version:
            raise CourseError(f"--pin {spec!r}: write it as NAME==VERSION")
        pins[name.lower()] = spec
    notes: list[str] = []
    if args.wheel:
        sources = [Path(w) for w in args.wheel]
        for path in sources:
            if not path.is_file():
                raise CourseError(f"--wheel {path}: no such file")
    else:
        sources, notes = download_wheels(PROJECTS, cache, pins, args.offline)
        if not args.no_torch:
            torch, torch_notes = torch_sources(
                cache, pins.get("torch", ""), args.offline
            )
            sources.append(torch)
            notes += torch_notes
    releases = [Release.from_wheel(p) for p in sources]
    installed = installed_releases([*PROJECTS, "torch"])
    paths = [Path(p) for p in args.paths] or course_files(root)
    for path in paths:
        if not path.is_file():
            raise CourseError(f"{path}: no such file")
    hits, facts = run(paths, root, releases, installed)
    print(report(hits, facts, releases, installed, notes))
    return 1 if hits else 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "forward-check",
        help="read the newest jax, flax, optax, orbax and torch (not installed) for "
        "what they deprecate or removed, and fail on each use in the course",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="FILE",
        help="files to check (default: lessons, masters, student notebooks, course_utils)",
    )
    p.add_argument(
        "--offline", action="store_true", help="read the cache only, never the network"
    )
    p.add_argument(
        "--cache",
        metavar="DIR",
        help="where downloads are kept (default build/forward)",
    )
    p.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="NAME==VERSION",
        help="a given release instead of the newest (jax==0.12.1, torch==2.15.0)",
    )
    p.add_argument("--no-torch", action="store_true", help="leave torch out")
    p.add_argument(
        "--wheel",
        action="append",
        default=[],
        metavar="PATH",
        help="read these wheels (or sources zips) instead of downloading",
    )
    p.set_defaults(func=cmd_forward_check)
