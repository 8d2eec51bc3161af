"""A throwaway single-node Slurm cluster on localhost, for the tests of grading on Slurm.

Everything it needs (munge key and socket, ``slurm.conf``, state, spool, logs, pid files)
lives under one folder; ``stop()`` ends its three daemons (``munged``, ``slurmctld``,
``slurmd``) and every job step they left, by process id. It needs root, ``slurm-wlm`` and
``munge`` (Debian packages); ``problem()`` says in one line why it cannot start.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "sacct", "scontrol")
CONF = """\
ClusterName=coursegrade
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
AuthInfo=socket={root}/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MaxArraySize=1001
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=localnode NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=grading Nodes=localnode Default=YES MaxTime=INFINITE State=UP
"""


def problem() -> str | None:
    """Why a throwaway cluster cannot start here (one line), or ``None``."""
    if os.geteuid() != 0:
        return "starting Slurm's daemons needs root"
    missing = [t for t in (*DAEMONS, *CLIENTS) if not _which(t)]
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install slurm-wlm munge)"
    return None


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """``with Cluster(folder) as c:``: ``c.env`` reaches it (``SLURM_CONF``)."""

    def __init__(self, root: Path, cpus: int = 2):
        self.root = Path(root)
        self.cpus = cpus
        self.pids: dict[str, int] = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = dict(os.environ, SLURM_CONF=str(self.root / "slurm.conf"))

    def __enter__(self) -> Cluster:
        if self.pids:  # started already
            return self
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, limit: float = 60) -> None:
        """Write the configuration, start the daemons, wait until the node is idle."""
        r = self.root
        for sub in ("munge", "state", "spool"):
            (r / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        (r / "munge" / "key").write_bytes(os.urandom(1024))
        os.chmod(r / "munge" / "key", 0o400)
        mem = psutil.virtual_memory().total // 2**20 // 2
        (r / "slurm.conf").write_text(
            CONF.format(
                host=socket.gethostname().split(".")[0],
                root=r,
                ctld_port=_free_port(),
                slurmd_port=_free_port(),
                cpus=self.cpus,
                mem=mem,
            )
        )
        m = r / "munge"
        self._daemon(
            "munged",
            "-F",
            "-f",
            f"--key-file={m}/key",
            f"--socket={m}/socket",
            f"--pid-file={m}/pid",
            f"--log-file={m}/log",
            f"--seed-file={m}/seed",
        )
        self._daemon("slurmctld", "-D", "-i", "-f", str(r / "slurm.conf"))
        self._daemon("slurmd", "-D", "-N", "localnode", "-f", str(r / "slurm.conf"))
        self._wait_idle(limit)

    def _daemon(self, name: str, *args: str) -> None:
        """Start a daemon in the foreground, in a session of its own."""
        log = (self.root / f"{name}.out").open("ab")
        proc = subprocess.Popen(
            [_which(name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=self.env,
        )
        self.pids[name] = proc.pid
        self.procs[name] = proc

    def _wait_idle(self, limit: float) -> None:
        end = time.monotonic() + limit
        while time.monotonic() < end:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited ({proc.returncode}): {self.log(name)}"
                    )
            out = self.run("sinfo", "-h", "-o", "%T", check=False)
            if out.returncode == 0 and out.stdout.strip() in ("idle", "mixed"):
                return
            time.sleep(0.3)
        raise RuntimeError(
            f"the node did not become idle in {limit:.0f} s: {self.log('slurmd')}"
        )

    def log(self, name: str) -> str:
        """The last lines of a daemon's output and log file."""
        text = ""
        for path in (self.root / f"{name}.out", self.root / f"{name}.log"):
            if path.exists():
                text += path.read_text(errors="replace")
        return " | ".join(text.strip().splitlines()[-8:])

    def run(
        self, tool: str, *args: str, check: bool = True
    ) -> subprocess.CompletedProcess:
        """Run a Slurm client command against this cluster."""
        out = subprocess.run(
            [_which(tool) or tool, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )
        if check and out.returncode:
            raise RuntimeError(f"{tool} {' '.join(args)}: {out.stderr.strip()}")
        return out

    def wait(self, job: str, limit: float) -> None:
        """Wait until no task of ``job`` is pending or running."""
        end = time.monotonic() + limit
        while self.run("squeue", "-h", "-j", job, check=False).stdout.strip():
            if time.monotonic() > end:
                raise TimeoutError(f"job {job} not done in {limit:.0f} s")
            time.sleep(0.5)

    def processes(self) -> list[psutil.Process]:
        """The daemons and every process below them (job steps included)."""
        found = []
        for pid in self.pids.values():
            try:
                top = psutil.Process(pid)
                found += [top, *top.children(recursive=True)]
            except psutil.NoSuchProcess:
                continue
        # slurmstepd daemonizes away from slurmd: find it by its spool folder
        for proc in psutil.process_iter(["name"]):
            if proc.info["name"] == "slurmstepd" and _uses(proc, self.root):
                found.append(proc)
        return found

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s, to everything this cluster started."""
        procs = self.processes()
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            for proc in procs:
                try:
                    proc.send_signal(sig)
                except psutil.NoSuchProcess:
                    continue
            _, procs = psutil.wait_procs(procs, timeout=wait)
            if not procs:
                break
        for proc in self.procs.values():
            proc.poll()


def _uses(proc: psutil.Process, root: Path) -> bool:
    try:
        return any(str(root) in f.path for f in proc.open_files()) or str(
            root
        ) in " ".join(proc.cmdline() + [proc.cwd()])
    except psutil.Error:
        return False
