"""What a student's kernel starts with: its environment, its IPython profile and its kernelspec.

The environment keeps only what Python, JAX and PyTorch need from the
instructor's shell (no tokens or credentials), adds the grading switches
(``COURSE_GRADING``, smoke sizes, the CPU-time limit, the run's id that marks
every process of the run), and points IPython at a profile that runs the
course's strict startup followed by one that shows framework warnings instead
of raising them. The kernelspec starts :mod:`course_utils.grading.sandbox.kernel_process` with
no input history on disk. Each submission gets its own profile and
kernelspec, written where its sandbox cannot write.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import course_utils
from course_utils.config import smoke_environ
from course_utils.grading.sandbox.kernel_process import CPU_ENV

KERNEL_NAME = "course-grader"
RUN_ENV = "COURSE_GRADER_RUN"
# Only these reach the student's kernel: no tokens or credentials from the instructor's shell.
ENV_KEEP = (
    "PATH",
    "HOME",
    "LANG",
    "LC_",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "CONDA_",
    "CUDA_",
    "NVIDIA_",
    "LD_LIBRARY_PATH",
    "XLA_",
    "JAX_",
    "TF_CPP_",
    "TORCH",
    "PYTORCH_",
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "TPU_",
    "COURSE_",
)
# ...except these. Only the grader sets ``COURSE_VARIANT``, per student: the instructor's
# own, and the file of the variant secret, never reach a kernel. A compiled-program cache
# named in the shell would be one folder for every student: none reaches a kernel, so no
# student's kernel runs a program that another student's kernel compiled.
ENV_DROP = (
    "COURSE_VARIANT",
    "JAX_COMPILATION_CACHE_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
)

# Runs after course_utils.strict's startup file: framework deprecations are errors in CI,
# but in grading a warning is shown in the output and costs no points.
WARNINGS_STARTUP = (
    "# Written by course_utils.grading.sandbox.environment: warnings are shown, never raised, while grading.\n"
    "import warnings\n"
    "from course_utils import strict\n"
    "for _category in strict.CATEGORIES:\n"
    "    warnings.filterwarnings('always', category=_category, module=strict.MODULES)\n"
)


def submission_kernel_env(cpu_s: float, run_id: str, smoke: bool) -> dict[str, str]:
    """The environment of the kernel that runs one submission: only the variables in
    ``ENV_KEEP`` pass from the grader's own (none starting with ``ENV_DROP``), plus the package path, smoke mode, the run
    id and the CPU-time limit (``IPYTHONDIR`` is set per submission:
    :func:`submission_ipython_dir`). A course notebook run on an author's machine
    inherits the whole environment instead: :func:`course_utils.tooling.execution.runner.kernel_env`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(ENV_KEEP) and not k.startswith(ENV_DROP)
    }
    package_parent = str(Path(course_utils.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_parent, env.get("PYTHONPATH")) if p
    )
    env.update(
        {
            "COURSE_GRADING": "1",
            **smoke_environ(smoke),
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
            RUN_ENV: run_id,
            CPU_ENV: str(int(cpu_s)),
        }
    )
    return env


def worker_env(env: dict[str, str]) -> dict[str, str]:
    """The worker process's environment: the kernel's, without the CPU-time limit."""
    return {k: v for k, v in env.items() if k != CPU_ENV}


def submission_ipython_dir(work: Path) -> str:
    """An IPython folder under ``work`` with the strict startup, then the warnings one.

    Each submission gets a fresh one, read-only inside its sandbox: a startup file
    planted by one student never runs in another's kernel."""
    from course_utils import strict

    root = strict.ipython_dir(str(work / "ipython"))
    startup = Path(root) / "profile_default" / "startup"
    (startup / "01-course-grader-warnings.py").write_text(WARNINGS_STARTUP)
    return root


def kernel_spec(work: Path) -> Path:
    """Write the ``course-grader`` kernelspec under ``work``; returns its kernels folder."""
    spec = work / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "course_utils.grading.sandbox.kernel_process",
        "-f",
        "{connection_file}",
        "--HistoryManager.hist_file=:memory:",
        "--HistoryManager.enabled=False",
    ]
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": argv,
                "display_name": "Python 3 (grader)",
                "language": "python",
                "interrupt_mode": "signal",
            }
        )
    )
    return spec.parent


def wrap_kernel(kernels: Path, wrap: Callable[[list[str]], list[str]]) -> None:
    """Rewrite the kernelspec under ``kernels`` to start ``wrap(argv)`` (say, in a sandbox)."""
    path = kernels / KERNEL_NAME / "kernel.json"
    spec = json.loads(path.read_text())
    spec["argv"] = wrap(spec["argv"])
    path.write_text(json.dumps(spec))
