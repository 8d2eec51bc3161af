"""The machine's facts for ``course check-device``: the probe and the installed versions.

The checking process itself never imports a framework, so it holds no accelerator
memory while the lessons run: :func:`probe` runs in a child (:func:`probe_in_child`).
"""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from course_utils.tooling.device_check import steps

VERSIONED = (
    "jax",
    "jaxlib",
    "flax",
    "optax",
    "orbax-checkpoint",
    "torch",
    "torch-xla",
    "libtpu",
    "libtpu-nightly",
    "numpy",
    "keras",
)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def probe() -> dict[str, Any]:
    """Host facts, as ``env.report()`` gives them, plus what torch says of CUDA."""
    from course_utils import env
    from course_utils.install import frameworks as install

    info = dict(env.report().info)
    host: dict[str, Any] = {
        "env": info,
        "nvidia_smi_gpu": install.nvidia_gpu_present(),
        "tpu_host": install.tpu_present(),
    }
    for key in ("accelerator", "jax_backend", "jax_devices", "torch_device"):
        host[key] = info.get(key)
    host["gpu_name"] = info.get("torch_gpu")
    cuda: dict[str, Any] = {}
    if info.get("jax"):
        import jax

        host["jax_device_list"] = [str(d) for d in jax.devices()]
        if not host["gpu_name"] and host["accelerator"] != "cpu":
            host["gpu_name"] = jax.devices()[0].device_kind
    if info.get("torch"):
        import torch

        if torch.cuda.is_available():
            total = torch.cuda.get_device_properties(0).total_memory
            host["gpu_memory_gib"] = round(total / 2**30, 1)
        cuda = {
            "cuda": torch.version.cuda,
            "hip": getattr(torch.version, "hip", None),
            "cudnn": torch.backends.cudnn.version()
            if torch.backends.cudnn.is_available()
            else None,
        }
    return {"host": host, "torch_cuda": cuda}


def probe_in_child(root: Path, timeout: float) -> dict[str, Any]:
    """:func:`probe` in a child process, so this one never holds accelerator memory."""
    code, out = steps.run_command(
        [sys.executable, "-m", "course_utils.tooling.device_check.probe", "--probe"],
        timeout=timeout,
        cwd=root,
    )
    lines = out.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return {
            "host": {"accelerator": "unknown", "error": steps.tail(out, 5)},
            "torch_cuda": {},
        }


def versions(torch_cuda: dict[str, Any] | None = None) -> dict[str, Any]:
    """Installed versions of the course's frameworks and the accelerator plugins."""
    import importlib
    import platform

    importlib.invalidate_caches()
    found = {
        _norm(d.metadata["Name"] or ""): d.version for d in metadata.distributions()
    }
    out: dict[str, Any] = {"python": platform.python_version()}
    out.update({name: found.get(name) for name in VERSIONED})
    out["jax_plugins"] = {
        n: v for n, v in sorted(found.items()) if re.match(r"jax-(cuda|rocm)\d+-", n)
    }
    out.update({f"torch_{k}": v for k, v in (torch_cuda or {}).items()})
    return out


def pins() -> list[str]:
    """``name==version`` for the machine's own framework builds (as the setup cell keeps them)."""
    from course_utils.install import hosted

    found = {
        _norm(d.metadata["Name"] or ""): d.version for d in metadata.distributions()
    }
    return hosted.pins(found)


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        print(json.dumps(probe(), default=str))
