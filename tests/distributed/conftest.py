"""The fixture every launching test uses: no process it started may outlive it."""

import time
import warnings

import psutil
import pytest

from course_utils._procs import kill_processes
from course_utils.distributed import launch


@pytest.fixture
def no_orphans():
    """Fail the test if any process it started outlives it."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    tags: list[str] = []
    yield tags  # tests append the tags of their launches
    deadline = time.monotonic() + 10
    while True:
        extra = []
        for p in me.children(recursive=True):
            try:
                if p.pid not in before and p.status() != psutil.STATUS_ZOMBIE:
                    extra.append(p)
            except psutil.NoSuchProcess:
                continue
        tagged = [p for tag in tags for p in launch.tagged_processes(tag)]
        if not extra and not tagged:
            break
        if time.monotonic() > deadline:
            kill_processes(extra + tagged)
            pytest.fail(f"processes left running after the test: {extra + tagged}")
        time.sleep(0.2)


@pytest.fixture
def one_rank(tmp_path):
    """A one-process gloo group in this process: the demos' code runs as rank 0 of 1."""
    pytest.importorskip("torch")
    import torch
    import torch.distributed as dist

    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        with warnings.catch_warnings():
            # what worker.strict() ignores in a launched rank: CommDebugMode's hooks
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* view")
            yield torch.device("cpu")
    finally:
        dist.destroy_process_group()
