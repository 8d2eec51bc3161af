"""What a launched script uses: its inputs, its report, and the torch process group.

A script started by :mod:`course_utils.distributed.launch` finds its run folder in
``COURSE_DIST_OUT``: it reads ``problem.npz`` there and writes ``rank{N}.json``
(plain values) and ``rank{N}.npz`` (arrays). Started by hand (``torchrun -m
course_utils.distributed.torch_ddp`` on a cluster), the same script makes its own
problem from a seed and prints its results instead.
"""

from __future__ import annotations

import json
import os
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from course_utils._files import write_atomic
from course_utils.distributed import problem as _problem
from course_utils.distributed.launch import OUT_ENV

PROBLEM_FILE = "problem.npz"
GROUP_TIMEOUT = timedelta(seconds=90)  # a collective waiting longer than this fails


def strict() -> None:
    """Framework deprecations are errors here too, as in the notebooks and tests."""
    from course_utils import strict as _strict

    _strict.install()
    # CommDebugMode's module tracker registers full backward hooks, which wrap module
    # outputs in views: torch then notes that the inputs need no grad, and FSDP2 that
    # its module returned a view. Both come from the instrumentation (without
    # CommDebugMode the output is no view), not from the code being measured.
    warnings.filterwarnings(
        "ignore", message="Full backward hook is firing", category=UserWarning
    )
    warnings.filterwarnings(
        "ignore",
        message="FSDP2-wrapped module .* returned a view",
        category=UserWarning,
    )


def out_dir() -> Path | None:
    """The run folder, or None when the script was started by hand."""
    value = os.environ.get(OUT_ENV)
    return Path(value) if value else None


def load_problem(seed: int = 0) -> dict[str, np.ndarray]:
    """The launch's ``problem.npz``, or a fresh problem from ``seed`` when there is none."""
    folder = out_dir()
    if folder is not None and (folder / PROBLEM_FILE).exists():
        return _problem.load(folder / PROBLEM_FILE)
    return _problem.make_problem(seed)


def save_report(rank: int, report: dict[str, Any]) -> None:
    """Write this rank's report (arrays to ``.npz``, the rest to ``.json``), or print it."""
    arrays = {k: np.asarray(v) for k, v in report.items() if isinstance(v, np.ndarray)}
    plain = {k: v for k, v in report.items() if k not in arrays}
    folder = out_dir()
    if folder is None:
        shown = {**plain, **{k: f"array{v.shape}" for k, v in arrays.items()}}
        print(f"rank {rank}: {shown}", flush=True)
        return
    if arrays:
        np.savez(folder / f"rank{rank}.npz", **arrays)
    # a report is complete or absent
    write_atomic(folder / f"rank{rank}.json", json.dumps(plain, default=str))


# ----------------------------------------------------------------- PyTorch


def torch_setup():
    """Join the process group torchrun described; return ``(rank, world, device)``.

    NCCL on one GPU per process when there are enough GPUs, gloo on the CPU otherwise.
    """
    import torch
    import torch.distributed as dist

    strict()
    # [init_process_group]
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))  # set by torchrun
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if torch.cuda.is_available() and torch.cuda.device_count() >= local_world:
        device = torch.device("cuda", local_rank)  # one GPU per process
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", timeout=GROUP_TIMEOUT, device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=GROUP_TIMEOUT)
    # [/init_process_group]
    return dist.get_rank(), dist.get_world_size(), device


def torch_teardown() -> None:
    """Leave the process group cleanly.

    DDP models caught in reference cycles are otherwise freed only at interpreter
    exit, after the group is gone, and that can hang the exit (seen with torch
    2.13 on gloo); collecting them first avoids it.
    """
    import gc

    import torch.distributed as dist

    gc.collect()
    if dist.is_initialized():
        dist.destroy_process_group()


def torch_mlp(prob: dict[str, np.ndarray], device: Any = "cpu"):
    """The problem's MLP as ``nn.Module`` (``fc1``, ``fc2``), weights copied from JAX layout."""
    import torch
    from torch import nn

    class MLP(nn.Module):
        def __init__(self, d_in: int, d_hidden: int, d_out: int):
            super().__init__()
            self.fc1 = nn.Linear(d_in, d_hidden)
            self.fc2 = nn.Linear(d_hidden, d_out)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    d_in, d_hidden = prob["W1"].shape
    model = MLP(d_in, d_hidden, prob["W2"].shape[1])
    with torch.no_grad():
        model.fc1.weight.copy_(
            torch.from_numpy(prob["W1"].T.copy())
        )  # (d_hidden, d_in)
        model.fc1.bias.copy_(torch.from_numpy(prob["b1"]))
        model.fc2.weight.copy_(torch.from_numpy(prob["W2"].T.copy()))
        model.fc2.bias.copy_(torch.from_numpy(prob["b2"]))
    return model.to(device)


def full(t: Any) -> Any:
    """A DTensor's full value (gathered); a plain tensor as is."""
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def jax_layout(fc1_weight, fc1_bias, fc2_weight, fc2_bias) -> dict[str, np.ndarray]:
    """Four torch tensors (or DTensors) as ``W1, W2, b1, b2`` numpy arrays in JAX layout."""

    def np_(t):
        return full(t).detach().cpu().numpy()

    return {
        "W1": np_(fc1_weight).T.copy(),
        "W2": np_(fc2_weight).T.copy(),
        "b1": np_(fc1_bias),
        "b2": np_(fc2_bias),
    }


def grads_of(model) -> dict[str, np.ndarray]:
    """``.grad`` of an MLP from :func:`torch_mlp`, in JAX layout."""
    return jax_layout(
        model.fc1.weight.grad,
        model.fc1.bias.grad,
        model.fc2.weight.grad,
        model.fc2.bias.grad,
    )


def params_of(model) -> dict[str, np.ndarray]:
    """The parameters of an MLP from :func:`torch_mlp`, in JAX layout."""
    return jax_layout(
        model.fc1.weight, model.fc1.bias, model.fc2.weight, model.fc2.bias
    )


def prefixed(prefix: str, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {f"{prefix}{k}": v for k, v in arrays.items()}


def comm_counts(mode) -> dict[str, int]:
    """A ``CommDebugMode``'s collective counts as ``{"all_reduce": 1, ...}``."""
    out: dict[str, int] = {}
    for op, count in mode.get_comm_counts().items():
        name = str(getattr(op, "__name__", op)).split(".")[-1].strip("_")
        name = {"allreduce": "all_reduce", "allgather_base": "all_gather",
                "allgather": "all_gather", "reduce_scatter_base": "reduce_scatter",
                "all_gather_into_tensor": "all_gather",
                "reduce_scatter_tensor": "reduce_scatter"}.get(name, name)  # fmt: skip
        out[name] = out.get(name, 0) + int(count)
    return out
