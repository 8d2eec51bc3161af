"""The GPT of lessons 11 and 12 trained with FSDP2 and with tensor parallelism, in one launch (lesson 12).

One machine:  torchrun --nproc-per-node 2 -m course_utils.distributed.torch_gpt [fsdp] [tp]
Many GPUs:    torchrun --nproc-per-node 8 -m course_utils.distributed.torch_gpt
Many hosts:   torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \\
                  --rdzv-endpoint HOST0:29500 -m course_utils.distributed.torch_gpt

The launch's run folder holds ``gpt.npz`` (:func:`save_inputs`): the model's
config, its initial weights and the batches. Both demos start from those
weights and train on those batches with AdamW, each reporting its loss at
every step (the mean over the whole batch) for comparison with one process:

- ``fsdp``: every block, then the root, wrapped with ``fully_shard``; each rank
  takes its block of every batch, and the gradients are reduce-scattered
  (averaged) onto each rank's shard of the parameters;
- ``tp``: Megatron's layout with ``parallelize_module``: the attention's fused
  ``qkv`` and the MLP's ``fc1`` split by output columns (``ColwiseParallel``),
  ``proj`` and ``fc2`` by input rows (``RowwiseParallel``), embeddings and
  LayerNorms replicated. Every rank sees the whole batch and holds
  ``n_heads / world`` heads; the fused ``qkv`` rows are first reordered so that
  each rank's column block holds its own heads' query, key and value.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

from course_utils import gpt
from course_utils.distributed import worker
from course_utils.gpt.model import GPTConfig, TorchGPT

INPUTS = "gpt.npz"


def save_inputs(folder: str | Path, cfg: GPTConfig, model: TorchGPT, x, y) -> None:
    """Write the launch's inputs: config, initial weights, batches ``x, y`` (steps, B, T)."""
    weights = {
        f"w.{k}": v.detach().cpu().numpy() for k, v in model.state_dict().items()
    }
    np.savez(
        Path(folder) / INPUTS,
        config=json.dumps(cfg.__dict__),
        x=np.asarray(x),
        y=np.asarray(y),
        **weights,
    )


def load_inputs(folder: Path) -> tuple[GPTConfig, dict, np.ndarray, np.ndarray]:
    with np.load(folder / INPUTS) as f:
        cfg = GPTConfig(**json.loads(str(f["config"])))
        weights = {k[2:]: torch.from_numpy(f[k]) for k in f.files if k.startswith("w.")}
        return cfg, weights, f["x"], f["y"]


def fresh_model(cfg: GPTConfig, weights: dict, device) -> TorchGPT:
    model = TorchGPT(cfg)
    model.load_state_dict(weights)
    return model.to(device)


def run_fsdp(rank, world, device, cfg, weights, x, y) -> dict:
    """FSDP2: each rank trains on its rows of every batch; returns the losses."""
    # [fsdp]
    mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("data",))
    model = fresh_model(cfg, weights, device)
    for block in model.blocks:
        fully_shard(block, mesh=mesh)  # each block gathers and frees its own weights
    fully_shard(model, mesh=mesh)  # the root: embeddings (tied to the head) and ln_f
    optimizer = gpt.train.torch_adamw(model)  # steps on this rank's shards
    rows = np.array_split(np.arange(x.shape[1]), world)[rank]
    losses = []
    for xb, yb in zip(x, y, strict=True):
        loss = gpt.train.torch_step(model, optimizer, *(
            torch.from_numpy(a[rows]).long().to(device) for a in (xb, yb)))  # fmt: skip
        torch.distributed.all_reduce(loss, op=torch.distributed.ReduceOp.AVG)
        losses.append(float(loss))
    # [/fsdp]
    shard = model.blocks[0].fc1.weight
    return {
        "losses": losses,
        "placements": str(shard.placements),
        "local_shape": list(shard.to_local().shape),
        "global_shape": list(shard.shape),
    }


# [heads]
def heads_first(weight: torch.Tensor, world: int) -> torch.Tensor:
    """Reorder a fused ``qkv`` weight (or bias) so rank r's rows are its q, k, v heads."""
    q, k, v = weight.chunk(3, dim=0)  # each (C, ...): heads contiguous
    parts = [t.chunk(world, dim=0) for t in (q, k, v)]  # each rank's heads of q, k, v
    return torch.cat([p[r] for r in range(world) for p in parts], dim=0)


def local_heads_forward(self, x, cache=None, pos: int = 0):
    """The attention on this rank's heads: ``qkv`` and ``proj`` are sharded modules."""
    B, T, _ = x.shape
    q, k, v = self.qkv(x).chunk(3, dim=-1)  # this rank's heads only: (B, T, C / world)
    q, k, v = (t.view(B, T, -1, self.cfg.head_dim).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H / world, T, hd)
    return self.proj(y.transpose(1, 2).reshape(B, T, -1))  # RowwiseParallel all-reduces


# [/heads]


def run_tp(rank, world, device, cfg, weights, x, y) -> dict:
    """Tensor parallel over ``world`` ranks, the whole batch on each; returns the losses."""
    if cfg.n_heads % world:
        raise ValueError(
            f"tp: n_heads={cfg.n_heads} must be divisible by {world} ranks"
        )
    # [tp]
    weights = dict(weights)
    for name in [k for k in weights if ".attn.qkv." in k]:  # the weight and the bias
        weights[name] = heads_first(weights[name], world)
    mesh = init_device_mesh(device.type, (world,), mesh_dim_names=("model",))
    model = fresh_model(cfg, weights, device)
    plan = {"attn.qkv": ColwiseParallel(), "attn.proj": RowwiseParallel(),
            "fc1": ColwiseParallel(), "fc2": RowwiseParallel()}  # fmt: skip
    for block in model.blocks:
        parallelize_module(block, mesh, plan)
        block.attn.forward = types.MethodType(local_heads_forward, block.attn)
    optimizer = gpt.train.torch_adamw(model)
    losses = [
        float(gpt.train.torch_step(model, optimizer, torch.from_numpy(xb).long().to(device),
                                   torch.from_numpy(yb).long().to(device)))
        for xb, yb in zip(x, y, strict=True)
    ]  # fmt: skip
    # [/tp]
    qkv = model.blocks[0].attn.qkv.weight
    return {
        "losses": losses,
        "placements": str(qkv.placements),
        "local_shape": list(qkv.to_local().shape),
        "global_shape": list(qkv.shape),
    }


DEMOS = {"fsdp": run_fsdp, "tp": run_tp}


def main(argv=None) -> None:
    names = list(argv if argv is not None else sys.argv[1:]) or list(DEMOS)
    unknown = [n for n in names if n not in DEMOS]
    if unknown:
        raise SystemExit(
            f"torch_gpt: unknown demo(s) {unknown}; choose from {sorted(DEMOS)}"
        )
    folder = worker.out_dir()
    if folder is None or not (folder / INPUTS).exists():
        raise SystemExit(f"torch_gpt: no {INPUTS} in the run folder (see save_inputs)")
    rank, world, device = worker.torch_setup()
    cfg, weights, x, y = load_inputs(folder)
    report = {}
    for name in names:
        result = DEMOS[name](rank, world, device, cfg, weights, x, y)
        report.update({f"{name}.{k}": v for k, v in result.items()})
    worker.save_report(rank, report)
    worker.torch_teardown()


if __name__ == "__main__":
    main()
