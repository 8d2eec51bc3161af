"""The grading kernel: an IPython kernel started under a CPU-time limit.

``python -m course_utils.grading.kernel -f CONNECTION_FILE ...`` sets
``RLIMIT_CPU`` from ``COURSE_GRADER_CPU_S`` (inherited by every process the
student's code starts), then runs ipykernel as usual. No address-space limit:
JAX and PyTorch reserve large virtual ranges; the grader watches resident
memory instead.
"""

from __future__ import annotations

import os
import sys

CPU_ENV = "COURSE_GRADER_CPU_S"


def limit_cpu() -> None:
    seconds = int(float(os.environ.get(CPU_ENV, "0") or 0))
    if seconds <= 0:
        return
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    new_hard = seconds + 5 if hard == resource.RLIM_INFINITY else min(hard, seconds + 5)
    # SIGXCPU at the soft limit ends the kernel; SIGKILL at the hard one if it is caught.
    resource.setrlimit(resource.RLIMIT_CPU, (min(seconds, new_hard), new_hard))


def die_with_parent() -> None:
    try:
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        pass


def main() -> None:
    limit_cpu()
    die_with_parent()
    from ipykernel import kernelapp

    sys.argv[0] = "ipykernel_launcher"
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
