"""Data parallelism in PyTorch: DDP, and the same gradient averaging written by hand.

One machine:  torchrun --nproc-per-node 2 -m course_utils.distributed.torch_ddp
Many hosts:   torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \
                  --rdzv-endpoint HOST0:29500 --rdzv-id job1 -m course_utils.distributed.torch_ddp

Each rank takes its block of the batch. Three gradients are reported: the
single-process full-batch reference, DDP's, a plain model's after a
hand-written ``all_reduce``, and DDP's with a summed (not averaged) loss; plus
the collectives DDP issued and how many elements it all-reduced.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.tensor.debug import CommDebugMode
from torch.nn.parallel import DistributedDataParallel as DDP

from course_utils.distributed import worker
from course_utils.distributed.problem import shard_rows


# [average_gradients]
def average_gradients(model: torch.nn.Module) -> None:
    """After backward(): every rank's .grad becomes the mean over all ranks."""
    world = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)  # in place, on every rank
        p.grad /= world


# [/average_gradients]


def run(rank: int, world: int, device, prob: dict) -> dict:
    """This rank's part of the demo; returns its report."""
    X, y = (
        torch.from_numpy(prob["X"]).to(device),
        torch.from_numpy(prob["y"]).to(device),
    )

    reference = worker.torch_mlp(prob, device)  # one process, the whole batch
    F.mse_loss(reference(X), y).backward()

    # [ddp]
    X_local = torch.from_numpy(shard_rows(prob["X"], rank, world)).to(device)
    y_local = torch.from_numpy(shard_rows(prob["y"], rank, world)).to(device)
    model = DDP(worker.torch_mlp(prob, device))  # same initial weights on every rank
    loss = F.mse_loss(model(X_local), y_local)  # the mean over MY rows only
    loss.backward()  # DDP all-reduces and averages the gradients during backward()
    # [/ddp]

    # [by_hand]
    plain = worker.torch_mlp(prob, device)  # no wrapper
    F.mse_loss(plain(X_local), y_local).backward()  # local gradients only
    average_gradients(plain)
    # [/by_hand]

    # [ddp_sum]
    summed = DDP(worker.torch_mlp(prob, device))
    F.mse_loss(summed(X_local), y_local, reduction="sum").backward()
    # [/ddp_sum]

    measured = DDP(worker.torch_mlp(prob, device))  # once more, counting what is sent
    payload: list[int] = []
    measured.register_comm_hook(
        None, lambda _, bucket: _allreduce_mean(bucket, payload)
    )
    # [comm]
    # measured: another DDP copy of the model, whose hook also records the elements sent
    with CommDebugMode() as comm:  # counts the collectives run inside the block
        F.mse_loss(measured(X_local), y_local).backward()
    # [/comm]

    return {
        "rank": rank, "world": world, "device": str(device), "backend": dist.get_backend(),
        "local_batch": int(X_local.shape[0]),
        "ddp_comm": worker.comm_counts(comm),
        "ddp_allreduced_elements": int(sum(payload)),
        "n_params": int(sum(p.numel() for p in reference.parameters())),
        **worker.prefixed("ref_", worker.grads_of(reference)),
        **worker.prefixed("ddp_", worker.grads_of(model.module)),
        **worker.prefixed("hand_", worker.grads_of(plain)),
        **worker.prefixed("ddp_sum_", worker.grads_of(summed.module)),
    }  # fmt: skip


def _allreduce_mean(bucket, payload: list[int]):
    """DDP's default averaging, as a communication hook that also records the payload."""
    buffer = bucket.buffer()
    payload.append(buffer.numel())
    buffer.div_(dist.get_world_size())
    return (
        dist.all_reduce(buffer, async_op=True)
        .get_future()
        .then(lambda fut: fut.value()[0])
    )


def main() -> None:
    rank, world, device = worker.torch_setup()
    worker.save_report(rank, run(rank, world, device, worker.load_problem()))
    worker.torch_teardown()


if __name__ == "__main__":
    main()
