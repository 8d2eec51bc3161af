"""The wheels a prepared GPU machine without network needs to run ``course check-device``.

Such a machine (the lent H200 image, say) already has Python 3.12 with its own CUDA builds
of jax and torch, and flax, optax, orbax-checkpoint, matplotlib, scikit-learn, pytest and
many more (:data:`PREINSTALLED`). What the course needs beyond those (:data:`NEEDED`, from
pyproject.toml's dependencies and what the check's children run) travels as wheels:
``python -m course_utils.tooling.device_check.wheels DIR`` (or ``make device-wheels``) downloads
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
# the preinstalled ones (tqdm, psutil, flatbuffers too) and jupyterlab (for students,
# not for running notebooks).
NEEDED = (
    "papermill>=2.6",  # the runner
    "nbclient>=0.10",
    "nbformat>=5.10",
    "ipykernel>=6.29",  # the kernels papermill and nbval start
    "nbval>=0.11",  # the notebook tests
    "jupytext>=1.16",  # course doctor's pairing check
    "keras>=3.13.2",  # lesson 06
)
# What the lent H200 image holds (its package list as read on 2026-11-17): the wheels
# of these are dropped, whichever package pulled them in.
PREINSTALLED = tuple(
    """
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio
attrs botorch build certifi charset-normalizer chex click cloudpickle cmake colorama
contourpy coverage cuda-bindings cuda-core cuda-pathfinder cuda-toolkit cupy-cuda13x
cycler cython diffrax e3nn einops equinox etils execnet filelock flatbuffers flax
fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax
jax-cuda13-pjrt jax-cuda13-plugin jaxlib jaxtyping jinja2 joblib kiwisolver
lazy-loader lightning lightning-utilities linear-operator lineax llvmlite lxml
markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath
msgpack multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja
numba numba-cuda numpy numpyro nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc
nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft nvidia-cufile nvidia-curand
nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py nvidia-nccl-cu13
nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless opt-einsum opt-einsum-fx optax optimistix orbax-checkpoint
packaging pandas pathspec patsy peft pillow pip pluggy portalocker prometheus-client
propcache protobuf psutil py-cpuinfo pyarrow pybind11 pygments pyparsing
pyproject-hooks pyre-extensions pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests
rich sacrebleu safetensors scikit-build-core scikit-image scikit-learn scipy seaborn
sentence-transformers sentencepiece setuptools shellingham simplejson six
sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server
tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch
torch-geometric torchaudio torchdiffeq torchmetrics torchvision tqdm transformers
treescope triton typer typing-extensions typing-inspect urllib3 uvloop wadler-lindig
werkzeug wheel wrapt xarray xxhash yarl zipp
""".split()
)
# pip matches a manylinux_2_N tag only for the N given: name the common ones.
PLATFORM_ARGS = (
    "--only-binary=:all:",
    "--python-version",
    "3.12",
    "--implementation",
    "cp",
    *(
        arg
        for tag in ("1", "2014", "_2_17", "_2_24", "_2_26", "_2_27", "_2_28")
        for arg in ("--platform", f"manylinux{tag}_x86_64")
    ),
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
