"""Fully sharded data parallelism in PyTorch: FSDP2's ``fully_shard``.

One machine:  torchrun --nproc-per-node 2 -m course_utils.distributed.torch_fsdp
Many hosts:   the same module under torchrun --nnodes N ... (see torch_ddp)

Each layer, then the root module, is wrapped with ``fully_shard``: every
parameter becomes a DTensor sharded on dim 0, all-gathered just before a layer
runs and freed after; gradients are reduce-scattered (averaged). Each rank
takes its block of the batch. Reported: gradients and the parameters after one
SGD step (gathered), the single-process reference's, and the collectives.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.debug import CommDebugMode

from course_utils.distributed import worker
from course_utils.distributed.problem import shard_rows

LR = 0.1


def run(rank: int, world: int, device, prob: dict) -> dict:
    """This rank's part of the demo; returns its report."""
    X, y = (
        torch.from_numpy(prob["X"]).to(device),
        torch.from_numpy(prob["y"]).to(device),
    )

    reference = worker.torch_mlp(prob, device)
    F.mse_loss(reference(X), y).backward()
    ref_grads = worker.grads_of(reference)
    torch.optim.SGD(reference.parameters(), lr=LR).step()

    # [fsdp]
    mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("data",))
    model = worker.torch_mlp(prob, device)
    for layer in (model.fc1, model.fc2):
        fully_shard(layer, mesh=mesh)  # each layer gathers and frees its own weights
    fully_shard(model, mesh=mesh)  # the root: whatever parameters are left
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)  # steps on the local shards
    X_local = torch.from_numpy(shard_rows(prob["X"], rank, world)).to(device)
    y_local = torch.from_numpy(shard_rows(prob["y"], rank, world)).to(device)
    F.mse_loss(model(X_local), y_local).backward()  # grads arrive reduce-scattered
    optimizer.step()  # each rank updates only its own shards
    # [/fsdp]
    grads = worker.grads_of(model)  # gathered from the shards, for the check only

    measured = worker.torch_mlp(prob, device)  # once more, counting what is sent
    for module in (measured.fc1, measured.fc2, measured):
        fully_shard(module, mesh=mesh)
    with CommDebugMode() as comm:
        F.mse_loss(measured(X_local), y_local).backward()

    shard = model.fc1.weight.to_local()
    return {
        "rank": rank, "world": world, "device": str(device),
        "fc1_weight_placements": str(model.fc1.weight.placements),
        "fc1_local_shape": list(shard.shape),
        "fc1_global_shape": list(model.fc1.weight.shape),
        "fsdp_comm": worker.comm_counts(comm),
        **worker.prefixed("ref_", ref_grads),
        **worker.prefixed("fsdp_", grads),
        **worker.prefixed("ref_step_", worker.params_of(reference)),
        **worker.prefixed("fsdp_step_", worker.params_of(model)),
    }  # fmt: skip


def main() -> None:
    rank, world, device = worker.torch_setup()
    worker.save_report(rank, run(rank, world, device, worker.load_problem()))
    worker.torch_teardown()


if __name__ == "__main__":
    main()
