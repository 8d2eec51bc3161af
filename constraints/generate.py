"""Write the version sets in this folder, and read their headers.

Standard library only (runs before anything is installed)::

    python constraints/generate.py known-good --python .venv/bin/python
    python constraints/generate.py floors
    python constraints/generate.py show colab   # python=3.13 and torch=2.11.0

``known-good.txt`` is the environment the suite last passed in (``pip list`` of
that venv, less the course itself, torch without its ``+cpu`` label so a CUDA
machine satisfies it too, plus jax's accelerator plugins at the jax version).
``floors.txt`` is every ``>=`` floor of ``pyproject.toml`` turned into ``==``,
so the oldest versions the course claims to support are the ones tested.

Each file starts with ``# python: X.Y`` and ``# torch: X.Y.Z`` lines: the Python
and the torch that go with the set (``make test-versions`` and the scheduled
workflow read them; torch itself is installed by ``course_utils/install/frameworks.py``).
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COURSE_DIST = "jax-pytorch-side-by-side"
# Packaging tools, not what the suite runs on.
SKIP = {"pip", "setuptools", "wheel", "distribute"}
# jax's accelerator plugins are released with jax, one version for all of them.
JAX_PLUGINS = (
    "jax-cuda12-plugin",
    "jax-cuda12-pjrt",
    "jax-cuda13-plugin",
    "jax-cuda13-pjrt",
)
_FLOOR = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*"
    r">=\s*(?P<version>[^\s,;]+)\s*(?:,[^;]*)?(?P<marker>;.*)?$"
)


def normalise(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _toml(text: str) -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads(text)


def requirements(pyproject: str, extras: tuple[str, ...] = ("dev",)) -> list[str]:
    """The runtime dependencies of ``pyproject.toml``, then those of ``extras``."""
    project = _toml(pyproject)["project"]
    out = list(project.get("dependencies", []))
    for extra in extras:
        out += project.get("optional-dependencies", {}).get(extra, [])
    return out


def floors(pyproject: str) -> list[str]:
    """``name==floor`` (markers kept) for each ``name>=floor`` requirement."""
    out = []
    for req in requirements(pyproject):
        m = _FLOOR.match(req)
        if m:
            marker = f"; {m['marker'][1:].strip()}" if m["marker"] else ""
            out.append(f"{m['name']}=={m['version']}{marker}")
    return out


def python_floor(pyproject: str) -> str:
    spec = _toml(pyproject)["project"].get("requires-python", "")
    m = re.search(r">=\s*(\d+\.\d+)", spec)
    return m.group(1) if m else ""


def known_good(pip_list: str) -> list[str]:
    """Pins from ``pip list --format=freeze``: no course, no local labels, plus
    jax's accelerator plugins at the installed jax version."""
    pins: dict[str, str] = {}
    for line in pip_list.splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)$", line.strip())
        if not m or normalise(m[1]) in SKIP or normalise(m[1]) == COURSE_DIST:
            continue
        pins[m[1]] = m[2].split("+")[0]
    out = [
        f"{name}=={version}"
        for name, version in sorted(pins.items(), key=lambda kv: normalise(kv[0]))
    ]
    jax = next((v for n, v in pins.items() if normalise(n) == "jax"), None)
    if jax:
        present = {normalise(n) for n in pins}
        extra = [f"{p}=={jax}" for p in JAX_PLUGINS if p not in present]
        if extra:
            out += [
                "# jax's CUDA plugins, released with jax at one version: `jax[cuda12]` and",
                "# `jax[cuda13]` (install/frameworks.py on an NVIDIA machine) resolve to these.",
                "# `jax[tpu]` pins its libtpu itself.",
                *extra,
            ]
    return out


def meta(text: str) -> dict[str, str]:
    """The ``# key: value`` lines at the top of a set's file."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^#\s*(python|torch):\s*(\S+)\s*$", line)
        if m:
            out[m[1]] = m[2]
    return out


def _write(path: Path, header: list[str], lines: list[str]) -> None:
    path.write_text(
        "\n".join([*(f"# {h}" if h else "#" for h in header), *lines]) + "\n"
    )
    print(
        f"wrote {path.relative_to(ROOT)} ({sum(not x.startswith('#') for x in lines)} pins)"
    )


def write_known_good(python: str, out: Path) -> None:
    listing = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    info = subprocess.run(
        [
            python,
            "-c",
            "import platform, sys; print('%d.%d' % sys.version_info[:2], platform.system(), platform.machine())",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    pins = known_good(listing)
    torch = next((p.split("==")[1] for p in pins if p.startswith("torch==")), "")
    _write(
        out,
        [
            "Known-good: the exact versions the test suite last passed with.",
            f"Generated {datetime.date.today()} by `make constraints` (constraints/generate.py)",
            f"from the environment of {python} ({info[1]} {info[2]}); do not edit by hand.",
            "`make test` and `make course` install with `-c` this file; `make test LATEST=1`",
            "tests the latest releases instead. torch is installed by course_utils/install/frameworks.py",
            "(its line is the version recorded here; local labels such as +cpu are dropped",
            "so that a CUDA build satisfies it too).",
            f"python: {info[0]}",
            f"torch: {torch}",
            "",
        ],
        pins,
    )


def write_floors(pyproject: Path, out: Path) -> None:
    text = pyproject.read_text()
    pins = floors(text)
    torch = next(
        (p.split("==")[1].split(";")[0] for p in pins if p.startswith("torch==")), ""
    )
    _write(
        out,
        [
            "Floors: the lowest version of each dependency pyproject.toml accepts (its `>=`).",
            f"Generated {datetime.date.today()} from pyproject.toml by `make constraints`",
            "(constraints/generate.py); tests/test_versions.py fails when they drift apart.",
            f"python: {python_floor(text)}",
            f"torch: {torch}",
            "",
        ],
        pins,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="generate.py", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="what", required=True)
    kg = sub.add_parser("known-good", help="pin the versions of a passing environment")
    kg.add_argument(
        "--python", default=".venv/bin/python", help="that environment's Python"
    )
    sub.add_parser("floors", help="turn pyproject.toml's floors into pins")
    show = sub.add_parser("show", help="print a set's python= and torch= lines")
    show.add_argument("set")
    args = parser.parse_args(argv)
    if args.what == "known-good":
        write_known_good(args.python, HERE / "known-good.txt")
    elif args.what == "floors":
        write_floors(ROOT / "pyproject.toml", HERE / "floors.txt")
    else:
        path = HERE / f"{args.set}.txt"
        info = meta(path.read_text()) if path.exists() else {}
        for key in ("python", "torch"):
            print(f"{key}={info.get(key, '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
