"""Run a function from an exercise on every rank and report what it did.

Started by :func:`course_utils.distributed.launch.torchrun_function`:
    torchrun --nproc-per-node 2 -m course_utils.distributed.torch_check --code F.py --name average_gradients

Task ``average-gradients``: each rank computes gradients on its block of the
batch, calls the submitted ``fn(model)`` to average them over all ranks, and
reports them next to DDP's gradients and the full-batch reference. The
submitted code runs with ``torch``, ``dist`` (``torch.distributed``) and ``nn``
already imported.
"""

from __future__ import annotations

import argparse
import traceback
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from course_utils.distributed import worker
from course_utils.distributed.problem import shard_rows


def load_function(path: str, name: str):
    namespace = {"torch": torch, "dist": dist, "nn": nn, "__name__": "submitted"}
    exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102 - the exercise's own code
    if name not in namespace:
        raise NameError(f"{path} defines no function named {name!r}")
    return namespace[name]


def average_gradients_task(fn, rank: int, world: int, device) -> dict:
    prob = worker.load_problem()
    X, y = (
        torch.from_numpy(prob["X"]).to(device),
        torch.from_numpy(prob["y"]).to(device),
    )
    X_local = torch.from_numpy(shard_rows(prob["X"], rank, world)).to(device)
    y_local = torch.from_numpy(shard_rows(prob["y"], rank, world)).to(device)

    reference = worker.torch_mlp(prob, device)
    F.mse_loss(reference(X), y).backward()
    ddp = DDP(worker.torch_mlp(prob, device))
    F.mse_loss(ddp(X_local), y_local).backward()

    model = worker.torch_mlp(prob, device)
    F.mse_loss(model(X_local), y_local).backward()
    local = worker.grads_of(model)
    returned = fn(model)
    return {
        "returned_none": returned is None,
        **worker.prefixed("ref_", worker.grads_of(reference)),
        **worker.prefixed("ddp_", worker.grads_of(ddp.module)),
        **worker.prefixed("local_", local),
        **worker.prefixed("yours_", worker.grads_of(model)),
    }


TASKS = {"average-gradients": average_gradients_task}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="run a submitted function on every rank")
    ap.add_argument("--code", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--task", default="average-gradients", choices=sorted(TASKS))
    args = ap.parse_args(argv)
    rank, world, device = worker.torch_setup()
    report: dict = {"rank": rank, "world": world}
    try:
        report.update(
            TASKS[args.task](load_function(args.code, args.name), rank, world, device)
        )
    except NotImplementedError:
        report["not_implemented"] = True
    except Exception:
        report["error"] = traceback.format_exc(limit=4)
    worker.save_report(rank, report)
    worker.torch_teardown()


if __name__ == "__main__":
    main()
