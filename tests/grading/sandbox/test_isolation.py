"""The bubblewrap sandbox: its command, the check that it works, and what it lets through."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from course_utils.grading.sandbox import isolation
from tests.grading.helpers import ROOT, require_sandbox

LOOK = """
import json, os, socket
def can_write(path):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        return True
    except OSError:
        return False
print(json.dumps({
    "uid": os.getuid(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "root": can_write("/pwned"),
    "repo": can_write(%(repo)r),
    "tmp": can_write("/tmp/ok"),
    "shm": can_write("/dev/shm/ok"),
    "ipc": can_write(%(ipc)r),
    "hidden": os.listdir(%(hidden)r),
    "nets": sorted(name for _, name in socket.if_nameindex()),
    "parent_env": os.environ.get("JPY_PARENT_PID"),
}))
"""


def test_the_command_unshares_everything_and_hides_the_report_folder(tmp_path):
    cmd = isolation.command(
        ["python", "-V"],
        ipc=tmp_path / "ipc",
        ipython=tmp_path / "ipy",
        tmp_mb=100,
        hide=(tmp_path, ROOT, ROOT / "no-such-folder"),
    )
    for flag in (
        "--unshare-pid",
        "--unshare-net",
        "--unshare-user",
        "--die-with-parent",
    ):
        assert flag in cmd
    assert cmd[cmd.index("--uid") + 1] == "65534"
    assert cmd[-3:] == ["--", "python", "-V"]
    assert str(tmp_path.resolve()) in cmd  # hidden
    # Of the checkout only the package stays, read-only: not its solutions, build/, .git
    pairs = [cmd[i : i + 3] for i in range(len(cmd))]
    package = str(ROOT / "course_utils")
    assert ["--tmpfs", str(ROOT)] in [pair[:2] for pair in pairs]
    assert ["--ro-bind", package, package] in pairs
    assert cmd[-5:-3] == ["--remount-ro", str(ROOT)]
    assert str(100 * 2**20) in cmd  # the size of /tmp and /dev/shm


def test_a_file_to_hide_is_bound_over_and_cannot_be_read(tmp_path):
    require_sandbox()
    secret = tmp_path / "variant-secret"
    secret.write_text("s3cr3t")
    for d in ("ipc", "ipy"):
        (tmp_path / d).mkdir()
    code = f"print(open({str(secret)!r}).read())"
    seen = {}
    for hide in ((), (secret, tmp_path / "gone")):
        cmd = isolation.command(
            [sys.executable, "-c", code],
            ipc=tmp_path / "ipc",
            ipython=tmp_path / "ipy",
            tmp_mb=16,
            hide=hide,
        )
        # /tmp is the sandbox's own: bind the folder back (before the hiding), as a
        # folder outside /tmp is seen
        at = cmd.index("/dev/shm") + 1
        cmd[at:at] = ["--ro-bind", str(tmp_path), str(tmp_path)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        seen[bool(hide)] = done.stdout.strip() or done.stderr.strip().splitlines()[-1]
    assert seen[False] == "s3cr3t"  # without hiding, the sandbox would read it
    assert seen[True].startswith("PermissionError")
    assert ["--ro-bind", "/dev/null", str(secret.resolve())] in [
        cmd[i : i + 3] for i in range(len(cmd))
    ]


def test_accelerators_are_bound_into_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "device_nodes", lambda: ["/dev/nvidia0", "/dev/dri"])
    cmd = isolation.command(["true"], ipc=tmp_path, ipython=tmp_path, tmp_mb=16)
    pairs = [cmd[i : i + 3] for i in range(len(cmd))]
    assert ["--dev-bind", "/dev/nvidia0", "/dev/nvidia0"] in pairs
    assert ["--dev-bind", "/dev/dri", "/dev/dri"] in pairs
    assert cmd.index("--dev-bind") > cmd.index("--dev")  # after the fresh /dev


def test_bwrap_exit_status_names_the_signal():
    assert isolation.exit_status(128 + 24) == -24  # SIGXCPU
    assert isolation.exit_status(3) == 3 and isolation.exit_status(None) is None


def test_a_missing_bwrap_is_said_in_one_line(monkeypatch):
    monkeypatch.setattr(isolation, "bwrap_path", lambda: None)
    isolation.problem.cache_clear()
    try:
        assert isolation.problem() == "bubblewrap (bwrap) is not installed"
    finally:
        isolation.problem.cache_clear()


def test_inside_the_sandbox_only_scratch_is_writable_and_nothing_else_is_seen(
    tmp_path,
):
    require_sandbox()
    (tmp_path / "ipc").mkdir()
    (tmp_path / "ipy").mkdir()
    hidden = tmp_path / "report"
    hidden.mkdir()
    (hidden / "grade.json").write_text("{}")
    code = LOOK % {
        "repo": str(ROOT / "pwned"),
        "ipc": str(tmp_path / "ipc" / "ok"),
        "hidden": str(hidden),
    }
    cmd = isolation.command(
        [sys.executable, "-c", code],
        ipc=tmp_path / "ipc",
        ipython=tmp_path / "ipy",
        tmp_mb=50,
        hide=(hidden,),
    )
    env = dict(os.environ, JPY_PARENT_PID=str(os.getpid()))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    seen = json.loads(done.stdout)
    assert seen["uid"] == 65534 and seen["parent_env"] is None
    assert seen["pids"][:2] == [1, 2] and len(seen["pids"]) <= 3  # bwrap, python
    assert not seen["root"] and not seen["repo"] and not (ROOT / "pwned").exists()
    assert seen["tmp"] and seen["shm"] and seen["ipc"]
    assert seen["hidden"] == [] and seen["nets"] in ([], ["lo"])
    assert (tmp_path / "ipc" / "ok").exists()


def test_of_the_checkout_a_kernel_sees_the_package_only(tmp_path):
    require_sandbox()
    (tmp_path / "ipc").mkdir()
    (tmp_path / "ipy").mkdir()
    paths = [ROOT / "solutions", ROOT / ".git", ROOT / "build", ROOT / "notebooks"]
    code = (
        "import os, course_utils.exercises; "
        f"print([os.path.exists(p) for p in {[str(p) for p in paths]!r}])"
    )
    cmd = isolation.command(
        [sys.executable, "-c", code], ipc=tmp_path / "ipc", ipython=tmp_path / "ipy",
        tmp_mb=16,
    )  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr  # the package imports
    assert done.stdout.strip() == str([False] * len(paths))


def test_tmpfs_use_is_measured_through_a_process_inside(tmp_path):
    require_sandbox()
    (tmp_path / "ipc").mkdir()
    (tmp_path / "ipy").mkdir()
    code = (
        "open('/dev/shm/blob', 'wb').write(b'x' * 8_000_000); "
        "import time; print('ok', flush=True); time.sleep(30)"
    )
    cmd = isolation.command(
        [sys.executable, "-c", code],
        ipc=tmp_path / "ipc",
        ipython=tmp_path / "ipy",
        tmp_mb=50,
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ok"
        init, inner = isolation.inner_pids(proc.pid)
        assert init is not None and inner is not None
        assert isolation.tmpfs_bytes(inner) >= 8_000_000
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("size_mb", [20])
def test_the_scratch_space_is_capped(tmp_path, size_mb):
    require_sandbox()
    (tmp_path / "ipc").mkdir()
    (tmp_path / "ipy").mkdir()
    code = (
        "import sys\ntry:\n    open('/dev/shm/big', 'wb').write(b'x' * 40_000_000)\n"
        "except OSError as e:\n    sys.exit(7)\n"
    )
    cmd = isolation.command(
        [sys.executable, "-c", code],
        ipc=tmp_path / "ipc",
        ipython=tmp_path / "ipy",
        tmp_mb=size_mb,
    )
    assert subprocess.run(cmd, timeout=60).returncode == 7


def test_without_a_sandbox_grading_is_refused_unless_the_instructor_says_unsafe(
    tmp_path, monkeypatch
):
    from course_utils.errors import CourseError
    from course_utils.grading.batch import grader
    from course_utils.grading.commands import grade
    from tests.grading.helpers import MASTER, class_folder, quiet

    monkeypatch.setattr(
        isolation, "problem", lambda: "bubblewrap (bwrap) is not installed"
    )
    subs = class_folder(tmp_path / "subs", {"bob": "stub"})
    limits = grader.Limits(timeout=20, total_timeout=60, memory_mb=1000)
    with pytest.raises(CourseError) as err:
        grader.grade(subs, MASTER, tmp_path / "out", limits=limits, echo=quiet)
    assert "\n" not in str(err.value) and "--unsafe-no-sandbox" in str(err.value)
    assert not (tmp_path / "out").exists()
    batch = grader.grade(
        subs,
        MASTER,
        tmp_path / "out",
        limits=limits,
        progress=False,
        echo=quiet,
        unsafe_no_sandbox=True,
    )
    rec = batch.records[0]
    assert rec["total"] == 0 and "unsafe-no-sandbox" in rec["flags"]
    assert "unsafe-no-sandbox" in (tmp_path / "out" / "grades.csv").read_text()
    parser = argparse.ArgumentParser()
    grade.add_commands(parser.add_subparsers())
    args = parser.parse_args(["grade", "s", "--unsafe-no-sandbox"])
    assert args.unsafe_no_sandbox
    assert not parser.parse_args(["grade", "s"]).unsafe_no_sandbox


def test_the_ipc_folder_is_measured_without_following_links(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "blob").write_bytes(b"x" * 100_000)
    (tmp_path / "link").symlink_to("/usr")
    assert 100_000 <= isolation.folder_bytes(str(tmp_path)) < 200_000
    for i in range(5):
        (tmp_path / f"f{i}").touch()
    assert isolation.folder_bytes(str(tmp_path), max_entries=4) == 2**40
