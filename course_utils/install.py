"""Install PyTorch the right way for this machine, before the course package itself.

Run with the target environment's Python (standard library only, so it works
before anything else is installed)::

    .venv/bin/python course_utils/install.py

- torch already importable (Colab, a prepared environment): keep it.
- an NVIDIA GPU (``nvidia-smi`` answers): PyPI's default build, which bundles CUDA.
- Linux without one: the CPU build from PyTorch's CPU index (a few hundred MB
  instead of several GB); a local ``+cpu`` wheel that pip's own configuration
  points at is used as well, since it sorts first.
- macOS and Windows: PyPI's build, which is CPU/MPS already.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys

TORCH_VERSION = os.environ.get("COURSE_TORCH_VERSION", "2.13.0")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def nvidia_gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def plan(*, torch_installed: bool, gpu: bool, system: str) -> list[str] | None:
    """The pip arguments to install torch, or None to keep what is there."""
    if torch_installed:
        return None
    if gpu or system != "Linux":
        return ["install", f"torch=={TORCH_VERSION}"]
    return [
        "install",
        f"torch=={TORCH_VERSION}",
        "--extra-index-url",
        CPU_INDEX,
        "--retries",
        "1",
        "--timeout",
        "30",
    ]


def main() -> int:
    installed = importlib.util.find_spec("torch") is not None
    gpu = nvidia_gpu_present()
    args = plan(torch_installed=installed, gpu=gpu, system=platform.system())
    if args is None:
        from importlib.metadata import version

        print(f"install: keeping the installed torch {version('torch')}")
        return 0
    kind = "CUDA build (NVIDIA GPU found)" if gpu else "CPU build (no NVIDIA GPU found)"
    print(f"install: installing torch, {kind}: pip {' '.join(args)}")
    return subprocess.call([sys.executable, "-m", "pip", *args])


if __name__ == "__main__":
    sys.exit(main())
