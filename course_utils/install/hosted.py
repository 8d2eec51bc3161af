"""Hosted runtimes (Colab, Kaggle, any notebook without the course): install the helpers.

Every notebook's setup cell installs the course package (a tagged release, without
its dependencies) when ``course_utils`` is not importable, then calls
:func:`install_dependencies`, which:

1. reads what the runtime already has (``pip list --format=freeze``);
2. stops with one sentence and the fix when a framework is older than the course
   supports, instead of letting pip's resolver print a page of conflicts;
3. pins the runtime's own torch, jax and their accelerator packages, so Colab's and
   Kaggle's CUDA or TPU builds are never replaced, and installs the rest.

Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from importlib import metadata

DIST_NAME = "jax-pytorch-side-by-side"

# The runtime's own builds, kept as they are: the frameworks and the packages that
# carry their CUDA or TPU support.
KEEP = re.compile(
    r"^(torch|torchvision|torchaudio|torch[-_]xla|jax|jaxlib|libtpu|libtpu[-_]nightly"
    r"|jax[-_](cuda|rocm)\d+[-_](plugin|pjrt)|nvidia[-_].*)$",
    re.IGNORECASE,
)


# Tools for running notebooks locally and in CI; a hosted notebook has its own
# front end and kernel, and replacing its ipykernel or Jupyter server could break it.
LOCAL_TOOLS = {"jupyterlab", "ipykernel", "papermill", "nbval", "nbclient", "jupytext"}


class UnsupportedRuntime(SystemExit):
    """The runtime's frameworks are outside what the course supports (a short message)."""


def runtime_name(environ: Mapping[str, str] | None = None) -> str:
    """``colab``, ``kaggle`` or ``other``, from the environment (no imports)."""
    environ = os.environ if environ is None else environ
    if "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in environ:
        return "colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in environ or "KAGGLE_URL_BASE" in environ:
        return "kaggle"
    return "other"


def parse_freeze(text: str) -> dict[str, str]:
    """``{normalised name: version}`` from ``pip list --format=freeze`` output."""
    out = {}
    for line in text.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and name and not name.startswith("#"):
            out[_norm(name)] = version.strip()
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version: ``2.11.0+cu128`` -> (2, 11, 0)."""
    parts = []
    for piece in re.split(r"[.+]", version):
        if not piece.isdigit():
            digits = re.match(r"\d+", piece)
            if digits:
                parts.append(int(digits.group()))
            break
        parts.append(int(piece))
    return tuple(parts)


def floors(requirements: list[str]) -> dict[str, str]:
    """``{name: minimum version}`` for each ``name>=X`` requirement (markers and extras skipped)."""
    out = {}
    for req in requirements:
        if ";" in req and "extra ==" in req:
            continue
        m = re.match(r"^\s*([A-Za-z0-9._-]+)(\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)", req)
        if m:
            out[_norm(m.group(1))] = m.group(3)
    return out


def restart_hint(runtime: str) -> str:
    if runtime == "colab":
        return "then Runtime > Restart session and run this cell again"
    if runtime == "kaggle":
        return "then Run > Restart & clear cell outputs and run this cell again"
    return "then restart the kernel and run this cell again"


def problems(
    installed: Mapping[str, str], minimum: Mapping[str, str], runtime: str
) -> list[str]:
    """One sentence, with the fix, per kept framework package older than the course supports."""
    out = []
    for name, version in sorted(installed.items()):
        floor = minimum.get(name)
        if (
            floor is None
            or not KEEP.match(name)
            or _release(version) >= _release(floor)
        ):
            continue
        if name.startswith("torch"):
            fix = (
                "choose a newer runtime version (Colab: Runtime > Change runtime type)"
                if runtime == "colab"
                else f'run `pip install -U "torch>={floor}"`, {restart_hint(runtime)}'
            )
        else:
            extra = _jax_extra(installed)
            fix = f'run `pip install -U "jax{extra}>={floor}"`, {restart_hint(runtime)}'
        out.append(
            f"This runtime has {name} {version}, but the course needs {name}>={floor}: {fix}."
        )
    return out


def _jax_extra(installed: Mapping[str, str]) -> str:
    """The jax extra matching the runtime's accelerator packages, e.g. ``[cuda12]``."""
    for name in installed:
        m = re.match(r"jax-cuda(\d+)-plugin$", name)
        if m:
            return f"[cuda{m.group(1)}]"
    return "[tpu]" if "libtpu" in installed else ""


def pins(installed: Mapping[str, str]) -> list[str]:
    """Constraint lines keeping the runtime's framework builds exactly as they are."""
    return sorted(
        f"{name}=={version}" for name, version in installed.items() if KEEP.match(name)
    )


def pip_install(*args: str, constraint: str | os.PathLike) -> list[str]:
    """``python -m pip install -q ARGS --constraint FILE``: the install that keeps what
    the constraints pin (the setup cell's dependencies, the device check's install)."""
    return [
        sys.executable,
        *("-m", "pip", "install", "-q"),
        *args,
        *("--constraint", os.fspath(constraint)),
    ]


def install_dependencies(
    *,
    freeze: str | None = None,
    requirements: list[str] | None = None,
    run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Check the runtime, then install the course's dependencies around its own frameworks.

    Returns the pip command it ran. Raises :class:`UnsupportedRuntime` (a one-line
    message, no traceback in a notebook) when a framework is too old.
    """
    runtime = runtime_name(environ)
    if freeze is None:
        freeze = run(
            [sys.executable, "-m", "pip", "list", "--format=freeze"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    installed = parse_freeze(freeze)
    if requirements is None:
        requirements = metadata.requires(DIST_NAME) or []
    found = problems(installed, floors(requirements), runtime)
    if found:
        raise UnsupportedRuntime("\n".join(found))
    needed = [
        r
        for r in requirements
        if "extra ==" not in r
        and _norm(re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0]) not in LOCAL_TOOLS
    ]
    with tempfile.NamedTemporaryFile("w", suffix="-course-pins.txt", delete=False) as f:
        f.write("\n".join(pins(installed)) + "\n")
    cmd = pip_install(*needed, constraint=f.name)
    # pip's own report lists the course's local tools as missing: noise on a hosted
    # runtime, so its output is shown only when the install fails.
    done = run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"installing the course's dependencies failed:\n{tail}")
    kept = ", ".join(f"{n} {installed[n]}" for n in ("torch", "jax") if n in installed)
    print(
        f"course helpers installed on {runtime}" + (f", keeping {kept}" if kept else "")
    )
    return cmd
