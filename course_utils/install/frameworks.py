"""Install PyTorch and JAX's accelerator plugin the right way for this machine.

Run with the target environment's Python (standard library only, so it works
before anything else is installed)::

    python course_utils/install/frameworks.py torch [-c CONSTRAINTS]  # before the package
    python course_utils/install/frameworks.py jax [-c CONSTRAINTS]    # after the package
    python course_utils/install/frameworks.py plan                    # say what it would do

:func:`detect` gathers the facts (system, installed torch and its CUDA version,
installed jax and its plugins, the CUDA major version the NVIDIA driver
supports, TPU, Colab, Kaggle); :func:`plan` turns them into what to install:

- torch already installed (Colab, Kaggle, a prepared environment): keep it.
  Colab and Kaggle keep their jax too; a jax without the plugin for the GPU
  gets the plugin matching torch's CUDA major version.
- Linux, NVIDIA driver for CUDA 13 (>= 580): PyPI's torch (a CUDA 13 build)
  and ``jax[cuda13]``, which loads the same CUDA 13 libraries.
- Linux, NVIDIA driver for CUDA 12 only: torch from PyTorch's cu126 index
  (torch 2.12 to 2.14 publish cu126, cu130 and cu132; cu128 ended with 2.11)
  and ``jax[cuda12]``.
- TPU VM: PyTorch's CPU build and ``jax[tpu]``.
- Linux without an accelerator: PyTorch's CPU build (a few hundred MB instead of
  several GB); jax's CPU build comes with the package.
- macOS and Windows: PyPI's torch (CPU/MPS there) and jax's CPU build.

jax itself comes with the package's dependencies (and constraints); the ``jax``
step only adds the extra for the accelerator at the installed jax version, so
``jax[cuda13]==<that version>`` pulls the plugin built for it.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TORCH_VERSION = "2.13.0"
TORCH_VERSION = os.environ.get("COURSE_TORCH_VERSION", DEFAULT_TORCH_VERSION)
# PyTorch's CPU builds; COURSE_TORCH_CPU_INDEX names another (make test-versions SET=pre: the
# test channel, with the release candidates)
CPU_INDEX = os.environ.get(
    "COURSE_TORCH_CPU_INDEX", "https://download.pytorch.org/whl/cpu"
)
CUDA12_INDEX = "https://download.pytorch.org/whl/cu126"
PIP_NETWORK = ["--retries", "1", "--timeout", "30"]
# Lowest Linux driver for each CUDA major version (NVIDIA's compatibility table).
DRIVER_FOR_CUDA = {13: 580, 12: 525}
# The distributions that give jax an accelerator, by the jax extra that installs them.
JAX_PLUGINS = {
    "cuda13": ("jax-cuda13-plugin",),
    "cuda12": ("jax-cuda12-plugin",),
    "tpu": ("libtpu", "libtpu-nightly"),
}
_GOOGLE_PCI_VENDOR = "0x1ae0"
_TPU_PCI_DEVICES = set("0x0027 0x0056 0x005e 0x0062 0x0063 0x006f 0x0076".split())


@dataclass(frozen=True)
class Facts:
    """What the install depends on; :func:`detect` reads them from this machine."""

    system: str = "Linux"
    torch: str | None = None  # installed torch version
    torch_cuda: str | None = None  # torch.version.cuda of that build ("13.0")
    torch_xla: bool = False
    jax: str | None = None  # installed jax version
    jax_plugins: tuple[str, ...] = ()  # extras already satisfied: "cuda12", "tpu", ...
    driver_cuda: int | None = None  # CUDA major the NVIDIA driver runs; None: no GPU
    tpu: bool = False
    colab: bool = False
    kaggle: bool = False


@dataclass(frozen=True)
class Plan:
    """What to install: pip arguments for torch, the jax extra, and why."""

    torch: list[str] | None  # pip arguments; None keeps the installed torch
    jax_extra: str | None  # "cuda13", "cuda12", "tpu"; None: the CPU build or keep
    summary: str  # one line for people
    warnings: tuple[str, ...] = field(default=())

    def jax_args(self, jax_version: str | None) -> list[str] | None:
        """pip arguments for jax's extra at ``jax_version`` (the installed one)."""
        if self.jax_extra is None:
            return None
        pin = f"=={jax_version}" if jax_version else ""
        return ["install", f"jax[{self.jax_extra}]{pin}"]

    @property
    def nothing_to_do(self) -> bool:
        return self.torch is None and self.jax_extra is None and not self.warnings


def cuda_major_for_driver(driver: str) -> int | None:
    """The newest CUDA major version a Linux driver version ("580.65.06") runs."""
    m = re.match(r"\s*(\d+)", driver)
    if not m:
        return None
    branch = int(m.group(1))
    for major, floor in sorted(DRIVER_FOR_CUDA.items(), reverse=True):
        if branch >= floor:
            return major
    return 11


def parse_nvidia_smi(text: str) -> tuple[str | None, int | None]:
    """(driver version, CUDA major) from ``nvidia-smi``'s header or from
    ``nvidia-smi --query-gpu=driver_version --format=csv,noheader``."""
    driver = re.search(r"Driver Version:\s*(\d+(?:\.\d+)*)", text)
    cuda = re.search(r"CUDA Version:\s*(\d+)\.\d+", text)
    if driver is None:
        driver = re.search(r"^\s*(\d+\.\d+(?:\.\d+)?)\s*$", text, re.MULTILINE)
    version = driver.group(1) if driver else None
    if cuda:
        return version, int(cuda.group(1))
    return version, cuda_major_for_driver(version) if version else None


def _smi(*args: str) -> str | None:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def nvidia_gpu_present() -> bool:
    out = _smi("-L")
    return out is not None and "GPU" in out


def nvidia_driver_cuda() -> int | None:
    """The CUDA major version this machine's NVIDIA driver runs; None without one."""
    if not nvidia_gpu_present():
        return None
    for args in ((), ("--query-gpu=driver_version", "--format=csv,noheader")):
        text = _smi(*args)
        if text:
            _, major = parse_nvidia_smi(text)
            if major is not None:
                return major
    return None


def tpu_present(env: Mapping[str, str] | None = None, root: str = "/") -> bool:
    """Whether this is a TPU host, without importing jax: a Cloud TPU chip on the PCI
    bus (as jax looks for it) or a TPU runtime's variables (Colab, Cloud TPU VMs)."""
    env = os.environ if env is None else env
    if any(env.get(k) for k in ("TPU_ACCELERATOR_TYPE", "TPU_NAME", "COLAB_TPU_ADDR")):
        return True
    for vendor in glob.glob(os.path.join(root, "sys/bus/pci/devices/*/vendor")):
        try:
            if Path(vendor).read_text().strip() != _GOOGLE_PCI_VENDOR:
                continue
            device = (Path(vendor).parent / "device").read_text().strip()
        except OSError:
            continue
        if device in _TPU_PCI_DEVICES:
            return True
    return False


def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, None when it is not installed."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_cuda_of(version: str | None, version_py: str | None) -> str | None:
    """torch.version.cuda without importing torch: from ``torch/version.py``'s text,
    else from a local version label (``2.11.0+cu128`` -> ``12.8``)."""
    if version_py:
        m = re.search(r"^cuda\b[^=\n]*=\s*['\"]([\d.]+)['\"]", version_py, re.MULTILINE)
        if m:
            return m.group(1)
        if re.search(r"^cuda\b[^=\n]*=\s*None", version_py, re.MULTILINE):
            return None
    m = re.search(r"\+cu(\d+)(\d)$", version or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _torch_facts() -> tuple[str | None, str | None]:
    version = installed_version("torch")
    if version is None:
        return None, None
    text = None
    spec = importlib.util.find_spec("torch")
    for base in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = (Path(base) / "version.py").read_text()
            break
        except OSError:
            continue
    return version, torch_cuda_of(version, text)


def _colab(env: dict[str, str]) -> bool:
    if any(
        env.get(k) for k in ("COLAB_RELEASE_TAG", "COLAB_GPU", "COLAB_BACKEND_VERSION")
    ):
        return True
    try:
        return importlib.util.find_spec("google.colab") is not None
    except (ImportError, ValueError):
        return False


def detect(env: dict[str, str] | None = None) -> Facts:
    """The facts of this machine and environment (standard library only, no framework import)."""
    env = dict(os.environ) if env is None else env
    torch, torch_cuda = _torch_facts()
    plugins = tuple(
        extra
        for extra, dists in JAX_PLUGINS.items()
        if any(installed_version(d) for d in dists)
    )
    system = platform.system()
    return Facts(
        system=system,
        torch=torch,
        torch_cuda=torch_cuda,
        torch_xla=installed_version("torch-xla") is not None
        or installed_version("torch_xla") is not None,
        jax=installed_version("jax"),
        jax_plugins=plugins,
        driver_cuda=nvidia_driver_cuda() if system == "Linux" else None,
        tpu=system == "Linux" and tpu_present(env),
        colab=_colab(env),
        kaggle=bool(env.get("KAGGLE_KERNEL_RUN_TYPE") or env.get("KAGGLE_URL_BASE")),
    )


def _torch_spec(version: str) -> str:
    return "torch" if version in ("", "latest") else f"torch=={version}"


def _major(cuda: str | None) -> int | None:
    return int(cuda.split(".")[0]) if cuda else None


def plan(facts: Facts, torch_version: str | None = None) -> Plan:
    """What to install on a machine with these facts (a pure function)."""
    version = TORCH_VERSION if torch_version is None else torch_version
    where = "Colab" if facts.colab else "Kaggle" if facts.kaggle else None
    warnings: list[str] = []
    gpu, driver = _usable_gpu(facts, warnings)
    torch_args, torch_major, torch_text = _torch_plan(
        facts, _torch_spec(version), where, gpu, driver, warnings
    )
    jax_extra, jax_text, device = _jax_plan(
        facts, where, gpu, driver, torch_major, warnings
    )
    label = f"{where} {device}" if where else device
    summary = f"install plan for {label}: {torch_text}; {jax_text}"
    return Plan(torch_args, jax_extra, summary, tuple(warnings))


def _usable_gpu(facts: Facts, warnings: list[str]) -> tuple[bool, int]:
    """Whether the plan is for an NVIDIA GPU, and the CUDA major its driver runs."""
    gpu = facts.system == "Linux" and facts.driver_cuda is not None
    driver = facts.driver_cuda or 0
    if gpu and driver < 12:
        warnings.append(
            f"the NVIDIA driver runs CUDA {driver} only; neither framework ships CUDA "
            f"{driver} builds any more: update the driver to >= {DRIVER_FOR_CUDA[12]} "
            f"(>= {DRIVER_FOR_CUDA[13]} for CUDA 13) to use the GPU"
        )
        gpu = False
    return gpu, driver


def _torch_plan(
    facts: Facts,
    spec: str,
    where: str | None,
    gpu: bool,
    driver: int,
    warnings: list[str],
) -> tuple[list[str] | None, int | None, str]:
    """torch's pip arguments (None: keep it), its CUDA major, and the words for it."""
    torch_major = _major(facts.torch_cuda)
    if facts.torch:
        owner = f"{where}'s" if where else "the installed"
        torch_text = f"keeping {owner} torch {facts.torch}"
        if facts.torch_xla:
            torch_text += " (with torch-xla)"
        if gpu and torch_major is None:
            warnings.append(
                f"torch {facts.torch} is a CPU build on a machine with an NVIDIA GPU: "
                f"`pip uninstall torch` and run `make install` to get its CUDA build"
            )
        elif gpu and torch_major > driver:
            warnings.append(
                f"torch {facts.torch} needs CUDA {torch_major} but the driver runs CUDA "
                f"{driver}: update the driver to >= {DRIVER_FOR_CUDA.get(torch_major)}"
            )
        return None, torch_major, torch_text
    if gpu and driver >= 13:
        return ["install", spec], 13, f"{spec} from PyPI (its CUDA 13 build)"
    if gpu:
        args = ["install", spec, "--index-url", CUDA12_INDEX, *PIP_NETWORK]
        return args, 12, f"{spec} from {CUDA12_INDEX} (CUDA 12)"
    if facts.system == "Linux":
        args = ["install", spec, "--extra-index-url", CPU_INDEX, *PIP_NETWORK]
        return args, torch_major, f"{spec}, CPU build"
    return ["install", spec], torch_major, f"{spec} from PyPI"


def _jax_plan(
    facts: Facts,
    where: str | None,
    gpu: bool,
    driver: int,
    torch_major: int | None,
    warnings: list[str],
) -> tuple[str | None, str, str]:
    """jax's extra (the accelerator's, unless a plugin for it is there already),
    the words for it, and the device the plan is for."""
    if gpu:
        want = f"cuda{min(torch_major or driver, driver)}"
        device = f"NVIDIA GPU (driver runs CUDA {driver})"
    elif facts.tpu and facts.system == "Linux":
        want, device = "tpu", "TPU"
    else:
        want, device = None, "CPU" if facts.system == "Linux" else facts.system
    have = [p for p in facts.jax_plugins if p.startswith("cuda" if gpu else "tpu")]
    jax_extra = want if want and not have else None
    jax_name = " ".join(
        w for w in (f"{where}'s" if where and facts.jax else "", "jax", facts.jax) if w
    )
    if jax_extra and facts.jax:
        jax_text = f"keeping {jax_name}, adding jax[{want}]=={facts.jax}"
    elif jax_extra:
        jax_text = f"jax[{want}] at the package's jax version"
    if jax_extra and want.startswith("cuda"):
        jax_text += f" (CUDA {want[4:]}, the same libraries as torch's build)"
    elif have:
        jax_text = f"keeping {jax_name} with its {have[0]} plugin"
        if gpu and torch_major and have[0] != f"cuda{torch_major}":
            warnings.append(
                f"jax's {have[0]} plugin and torch's CUDA {torch_major} build load two "
                f"CUDA versions in one process: install jax[cuda{torch_major}]"
            )
    elif facts.jax:
        jax_text = f"keeping {jax_name} (CPU)"
    else:
        jax_text = "jax's CPU build (with the package)"
    if facts.torch_xla or facts.tpu:
        jax_text += "; PyTorch stays on the CPU unless a lesson uses torch-xla"
    return jax_extra, jax_text, device


def _pip(args: list[str], constraints: str | None) -> int:
    extra = ["-c", constraints] if constraints else []
    print(f"install: pip {' '.join(args + extra)}", flush=True)
    return subprocess.call([sys.executable, "-m", "pip", *args, *extra])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="frameworks.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "step", nargs="?", choices=("all", "torch", "jax", "plan"), default="all"
    )
    parser.add_argument(
        "-c", "--constraints", help="a pip constraints file for the jax step"
    )
    args = parser.parse_args(argv)
    facts = detect()
    the_plan = plan(facts)
    print(f"install: {the_plan.summary}", flush=True)
    for warning in the_plan.warnings:
        print(f"install: warning: {warning}", file=sys.stderr)
    if args.step == "plan":
        return 0
    if args.step in ("all", "torch") and the_plan.torch is not None:
        rc = _pip(the_plan.torch, None)
        if rc or args.step == "torch":
            return rc
    if args.step in ("all", "jax"):
        jax_args = the_plan.jax_args(installed_version("jax"))
        if jax_args is not None:
            return _pip(jax_args, args.constraints)
    return 0


if __name__ == "__main__":
    sys.exit(main())
