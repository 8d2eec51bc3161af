"""Each submission's isolation, a bubblewrap sandbox: the command that starts a kernel inside one, and whether it works.

The kernel and everything it starts run in namespaces of their own: a PID
namespace (the grader, the worker and other submissions' processes are not
visible, so they cannot be signalled or read from ``/proc``), no network, a
user namespace in which they are uid 65534, and a mount namespace in which the
whole filesystem is read-only except a private ``/tmp`` and ``/dev/shm``
(size-capped tmpfs, gone with the sandbox), the folder of the kernel's
``ipc`` sockets. The submission's IPython folder is read-only; the kernel
starts from a copy of it in its ``/tmp``. The report folder, the master's folder and
the submissions folder are hidden behind empty tmpfs (a file to hide, such as the
variant secret, behind ``/dev/null``, which cannot be opened there), and of the course checkout
only ``course_utils/`` (and an interpreter inside it) stays visible: not its
solutions, its ``build/`` folder or its git history. ``--die-with-parent`` ends the sandbox, and every process in it,
when the worker's kernel manager goes; the worker also kills the tree.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import course_utils

SANDBOX_UID = 65534
# Accelerators: the sandbox's /dev is a fresh minimal one, these are bound into it.
DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/accel*", "/dev/vfio")
SCRATCH = "/tmp/work"  # the kernel's working folder and HOME inside the sandbox
# Kept visible: the Pythons, and the folder holding the package (a checkout or site-packages).
PACKAGE_PARENT = str(Path(course_utils.__file__).resolve().parent.parent)
HIDE_KEEP = (sys.prefix, sys.base_prefix, PACKAGE_PARENT)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _needed(path: Path) -> bool:
    """Hiding ``path`` would hide the interpreter or the course package."""
    p = str(path.resolve())
    return any(k == p or k.startswith(p.rstrip("/") + "/") for k in HIDE_KEEP)


def checkout() -> str | None:
    """The course checkout this package runs from, or None for an installed package."""
    root = Path(HIDE_KEEP[2])
    return str(root) if (root / "notebooks").is_dir() else None


def _course_and_interpreter() -> list[str]:
    """Mounts that leave a kernel the package and the interpreter, and no more of the course.

    A checkout also holds the solutions, executed masters under ``build/`` and the
    git history: only ``course_utils/`` and an interpreter inside it stay visible.
    What lies under ``/tmp`` (hidden by the private tmpfs) is bound back.
    """
    root = checkout()
    inside = [k for k in HIDE_KEEP[:2] if root and k.startswith(root.rstrip("/") + "/")]
    cmd = ["--tmpfs", root] if root else []
    for keep in [str(Path(root, "course_utils"))] if root else []:
        cmd += ["--ro-bind", keep, keep]
    for keep in inside:
        cmd += ["--ro-bind", keep, keep]
    for keep in HIDE_KEEP:
        if (
            keep.startswith(("/tmp/", "/dev/shm/"))
            and keep != root
            and keep not in inside
        ):
            cmd += ["--ro-bind", keep, keep]
    return cmd


def device_nodes() -> list[str]:
    """The accelerator devices of this machine (GPUs, TPUs), bound into each sandbox."""
    return sorted({p for pattern in DEVICES for p in glob.glob(pattern)})


def command(
    argv: list[str],
    *,
    ipc: Path,
    ipython: Path,
    tmp_mb: float,
    hide: tuple[Path, ...] = (),
) -> list[str]:
    """``argv`` run inside a fresh sandbox (``bwrap`` must exist)."""
    size = str(int(max(16.0, tmp_mb) * 2**20))
    cmd = [bwrap_path() or "bwrap", "--die-with-parent", "--new-session"]
    cmd += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    cmd += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    cmd += ["--unshare-cgroup-try", "--ro-bind", "/", "/"]
    cmd += ["--dev", "/dev", "--proc", "/proc"]
    for node in device_nodes():
        cmd += ["--dev-bind", node, node]
    cmd += ["--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm"]
    cmd += _course_and_interpreter()
    # a folder behind an empty tmpfs; a file (the variant secret) behind /dev/null, a
    # device node that cannot be opened in the sandbox's user namespace (EACCES)
    for path in hide:
        if path.is_dir() and not _needed(path):
            cmd += ["--tmpfs", str(path.resolve())]
        elif path.exists() and not path.is_dir():
            cmd += ["--ro-bind", "/dev/null", str(path.resolve())]
    cmd += ["--bind", str(ipc), str(ipc), "--ro-bind", str(ipython), str(ipython)]
    cmd += ["--dir", SCRATCH, "--chdir", SCRATCH]
    cmd += ["--setenv", "HOME", SCRATCH, "--setenv", "TMPDIR", "/tmp"]
    # ipykernel exits when its parent is not this pid: bwrap's init is its parent
    cmd += ["--unsetenv", "JPY_PARENT_PID"]
    if checkout():  # last: later mounts may need mount points in it
        cmd += ["--remount-ro", checkout()]
    return [*cmd, "--", *argv]


@functools.lru_cache(maxsize=1)
def problem() -> str | None:
    """Why the sandbox cannot be used here (one line), or None when it works."""
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed"
    argv = [sys.executable, "-c", "import course_utils.grading.sandbox.kernel_process"]
    with tempfile.TemporaryDirectory(prefix="course-sandbox-probe-") as tmp:
        (Path(tmp) / "ipc").mkdir()
        (Path(tmp) / "ipython").mkdir()
        cmd = command(
            argv, ipc=Path(tmp, "ipc"), ipython=Path(tmp, "ipython"), tmp_mb=16
        )
        try:
            done = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"bubblewrap cannot start a sandbox: {err}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot start a sandbox (exit {done.returncode}): {last}"
    return None


def tmpfs_bytes(pid: int) -> int:
    """Bytes held in the sandbox's ``/tmp`` and ``/dev/shm`` (seen through a process in it)."""
    total = 0
    for mount in ("tmp", "dev/shm"):
        try:
            st = os.statvfs(f"/proc/{pid}/root/{mount}")
        except OSError:
            continue
        total += (st.f_blocks - st.f_bfree) * st.f_frsize
    return total


def inner_pids(pid: int) -> tuple[int | None, int | None]:
    """bwrap's init in the sandbox started by ``pid`` and the kernel (the first process
    init started; later ones are orphans), seen from outside."""
    from course_utils.grading.sandbox.process_tree import child_pids

    init = child_pids(pid)
    kids = child_pids(init[0]) if init else []
    return (init[0] if init else None), (min(kids) if kids else None)


def folder_bytes(path: str, max_entries: int = 1000) -> int:
    """Bytes in the files under ``path`` (the ipc folder: writable, on the host's disk),
    without following links; more than ``max_entries`` entries count as 1 TiB (too many
    to count ten times a second: over any memory limit)."""
    total, seen, todo = 0, 0, [path]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        seen += len(entries)
        if seen > max_entries:
            return 2**40
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def exit_status(code: int | None) -> int | None:
    """The kernel's exit status from bwrap's: bwrap reports a signal N as 128 + N."""
    if code is not None and 128 < code < 128 + 65:
        return -(code - 128)
    return code
