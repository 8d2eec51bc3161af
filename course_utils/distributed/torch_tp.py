"""Tensor parallelism in PyTorch: a DeviceMesh, DTensor and ``parallelize_module``.

One machine:  torchrun --nproc-per-node 2 -m course_utils.distributed.torch_tp
Many hosts:   the same module under torchrun --nnodes N ... (see torch_ddp)

``fc1`` is split by columns (its output features) and ``fc2`` by rows (its
input features), so the hidden activation never leaves its rank and one
all-reduce after ``fc2`` completes the forward pass. Every rank sees the whole
batch. Reported: the sharded model's output and gradients (gathered), the
unsharded reference's, each rank's local weight shapes, and the collectives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.debug import CommDebugMode
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

from course_utils.distributed import worker


def run(rank: int, world: int, device, prob: dict) -> dict:
    """This rank's part of the demo; returns its report."""
    X, y = (
        torch.from_numpy(prob["X"]).to(device),
        torch.from_numpy(prob["y"]).to(device),
    )

    reference = worker.torch_mlp(prob, device)
    out_ref = reference(X)
    F.mse_loss(out_ref, y).backward()

    # [tp]
    mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("model",))
    model = parallelize_module(
        worker.torch_mlp(prob, device),  # the full model, then split in place
        mesh,
        {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()},
    )
    out = model(X)  # a plain tensor again: RowwiseParallel all-reduced it
    F.mse_loss(out, y).backward()
    # [/tp]

    measured = parallelize_module(  # once more, counting what is sent
        worker.torch_mlp(prob, device),
        mesh,
        {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()},
    )
    with CommDebugMode() as comm:
        F.mse_loss(measured(X), y).backward()

    local = model.fc1.weight.to_local()
    return {
        "rank": rank, "world": world, "device": str(device),
        "fc1_weight_placements": str(model.fc1.weight.placements),
        "fc2_weight_placements": str(model.fc2.weight.placements),
        "fc1_local_shape": list(local.shape),
        "fc2_local_shape": list(model.fc2.weight.to_local().shape),
        "tp_comm": worker.comm_counts(comm),
        "out": out.detach().cpu().numpy(),
        "out_ref": out_ref.detach().cpu().numpy(),
        **worker.prefixed("ref_", worker.grads_of(reference)),
        **worker.prefixed("tp_", worker.grads_of(model)),
    }  # fmt: skip


def main() -> None:
    rank, world, device = worker.torch_setup()
    worker.save_report(rank, run(rank, world, device, worker.load_problem()))
    worker.torch_teardown()


if __name__ == "__main__":
    main()
