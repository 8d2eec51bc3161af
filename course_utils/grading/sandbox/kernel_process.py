"""The grading kernel: an IPython kernel started under a CPU-time limit.

``python -m course_utils.grading.sandbox.kernel_process -f CONNECTION_FILE ...`` sets
``RLIMIT_CPU`` from ``COURSE_GRADER_CPU_S`` (inherited by every process the
student's code starts) and ``RLIMIT_NPROC`` from ``COURSE_GRADER_NPROC``, caps
the size of the messages it sends, then runs ipykernel as usual. No address-space limit:
JAX and PyTorch reserve large virtual ranges; the grader watches resident
memory instead.
"""

from __future__ import annotations

import os
import sys

CPU_ENV = "COURSE_GRADER_CPU_S"
NPROC_ENV = "COURSE_GRADER_NPROC"
IPYTHON_ENV = (
    "COURSE_GRADER_IPYTHON"  # a read-only profile to start from (in a sandbox)
)
MESSAGE_BYTES = 4 * 2**20  # below the worker's limit, which drops larger messages


def private_ipython() -> None:
    """Copy the read-only profile named by ``COURSE_GRADER_IPYTHON`` into the sandbox's own
    ``/tmp`` and point IPython at the copy: it wants its folder writable, and a copy
    written there stays inside the sandbox's capped scratch space."""
    source = os.environ.pop(IPYTHON_ENV, "")
    if source:
        import shutil
        import tempfile

        dest = os.path.join(tempfile.gettempdir(), "ipython")
        shutil.copytree(source, dest, dirs_exist_ok=True)
        os.environ["IPYTHONDIR"] = dest


def limit_processes() -> None:
    """``RLIMIT_NPROC`` from ``COURSE_GRADER_NPROC`` (set in a sandbox, where the count is
    the sandbox's own; the kernel exempts a process whose real user is root)."""
    count = int(os.environ.get(NPROC_ENV, "0") or 0)
    if count > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_NPROC, (count, count))


def _shrink(value, cap: int):
    if isinstance(value, str):
        return (
            value if len(value) <= cap else value[:cap] + "\n[truncated by the grader]"
        )
    if isinstance(value, list):
        return [_shrink(v, cap) for v in value[:200]]
    if isinstance(value, dict):
        return {k: _shrink(v, cap) for k, v in value.items()}
    return value


def cap_messages(limit: int = MESSAGE_BYTES) -> None:
    """Shorten the strings of any message the kernel sends that would exceed ``limit``
    bytes (a huge error message), so that it still arrives, cut."""
    from jupyter_client.session import Session

    serialize = Session.serialize

    def capped(self, msg, ident=None):
        frames = serialize(self, msg, ident)
        cap = limit // 2
        while sum(len(f) for f in frames) > limit and cap > 64:
            frames = serialize(
                self, {**msg, "content": _shrink(msg["content"], cap)}, ident
            )
            cap //= 4
        return frames

    Session.serialize = capped


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
    limit_processes()
    die_with_parent()
    private_ipython()
    cap_messages()
    from ipykernel import kernelapp

    import course_utils.exercises  # noqa: F401  fixes grading() before student code runs

    sys.argv[0] = "ipykernel_launcher"
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
