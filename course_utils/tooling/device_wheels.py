"""The wheels a prepared GPU machine without network needs to run ``course check-device``.

Such a machine (a lent H200 image, say) already has Python 3.12 with its own CUDA builds
of jax and torch, and flax, optax, orbax-checkpoint, matplotlib, scikit-learn and
pytest (:data:`PREINSTALLED`). What the course needs beyond those (:data:`NEEDED`, from
pyproject.toml's dependencies and what the check's children run) travels as wheels:
``python -m course_utils.tooling.device_wheels DIR`` (or ``make device-wheels``) downloads
them and their dependencies for Python 3.12 on x86-64 Linux, then drops the wheels of
what the machine has, so the folder stays small (the machine takes at most 64 MiB of
carried files). On the machine they are unpacked beside the course
(docs/DEVICE_CHECK.md, "On a lent GPU machine without network").
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# What the course needs that such a machine lacks: pyproject.toml's dependencies less
# the preinstalled ones and jupyterlab (for students, not for running notebooks).
NEEDED = (
    "papermill>=2.6",  # the runner
    "nbclient>=0.10",
    "nbformat>=5.10",
    "ipykernel>=6.29",  # the kernels papermill and nbval start
    "nbval>=0.11",  # the notebook tests
    "jupytext>=1.16",  # course doctor's pairing check
    "tqdm>=4.66",
    "psutil>=5.9",  # stopping a child's process tree
    "keras>=3.13.2",  # lesson 06
    "flatbuffers>=24.3.25",  # jax.export serialisation (lesson 06)
    "pytest-timeout>=2.3.1",  # the course's tests use its marker
)
# What a prepared image already has, and the dependencies that come with it.
PREINSTALLED = (
    "jax",
    "jaxlib",
    "ml-dtypes",
    "numpy",
    "scipy",
    "opt-einsum",
    "flax",
    "optax",
    "chex",
    "orbax-checkpoint",
    "absl-py",
    "rich",
    "markdown-it-py",
    "mdurl",
    "pygments",
    "msgpack",
    "pyyaml",
    "typing-extensions",
    "etils",
    "torch",
    "filelock",
    "fsspec",
    "jinja2",
    "markupsafe",
    "networkx",
    "sympy",
    "mpmath",
    "setuptools",
    "matplotlib",
    "pillow",
    "packaging",
    "pyparsing",
    "python-dateutil",
    "six",
    "cycler",
    "kiwisolver",
    "fonttools",
    "contourpy",
    "scikit-learn",
    "joblib",
    "threadpoolctl",
    "pytest",
    "pluggy",
    "iniconfig",
)
PLATFORM_ARGS = (
    "--only-binary=:all:",
    "--python-version",
    "3.12",
    "--platform",
    "manylinux2014_x86_64",
    "--platform",
    "manylinux_2_17_x86_64",
    "--platform",
    "manylinux_2_28_x86_64",
)


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_name(path: Path) -> str:
    """The distribution a wheel file holds, normalised."""
    return norm(path.name.split("-", 1)[0])


def download_command(folder: Path) -> list[str]:
    """``pip download`` of :data:`NEEDED` for Python 3.12 on x86-64 Linux."""
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "-q",
        *PLATFORM_ARGS,
        "-d",
        str(folder),
        *NEEDED,
    ]


def prune(folder: Path) -> list[Path]:
    """Remove the wheels of :data:`PREINSTALLED` from ``folder``; the ones removed."""
    have = {norm(n) for n in PREINSTALLED}
    gone = [w for w in sorted(folder.glob("*.whl")) if wheel_name(w) in have]
    for w in gone:
        w.unlink()
    return gone


def size_mib(folder: Path) -> float:
    return sum(w.stat().st_size for w in folder.glob("*.whl")) / 2**20


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "wheels")
    folder.mkdir(parents=True, exist_ok=True)
    code = subprocess.call(download_command(folder))
    if code != 0:
        print(f"device-wheels: pip download failed (exit {code})", file=sys.stderr)
        return code
    dropped = prune(folder)
    kept = sorted(folder.glob("*.whl"))
    print(
        f"device-wheels: {len(kept)} wheels, {size_mib(folder):.1f} MiB in {folder} "
        f"({len(dropped)} dropped: the machine has them)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
