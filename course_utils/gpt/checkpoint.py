"""Checkpoints of the GPT that resume bit for bit, in each framework (lesson 12).

- JAX: Orbax's v1 API (``ocp.v1.save`` / ``ocp.v1.load``), as lesson 06 uses it:
  the parameters and the optax state go in as one pytree, and come back into an
  abstract target (:func:`abstract_like`) that names each leaf's shape, dtype and
  sharding, so a checkpoint written from 8 devices is restored onto 8 devices.
- PyTorch: ``torch.distributed.checkpoint`` (DCP) in a single process
  (``no_dist=True``), with ``get_state_dict`` / ``set_state_dict``: the form every
  parallelism (DDP, FSDP2, TP) understands.

Exported programs (weights and code in one artefact) are in
:mod:`course_utils.gpt.export`. The frameworks are imported inside the functions.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "abstract_like",
    "dcp_load",
    "dcp_save",
    "one_process",
    "orbax_load",
    "orbax_save",
]


def orbax_save(path: str | Path, tree: Any) -> None:
    """Write ``tree`` (params, optimizer state, anything array-like) with Orbax v1.

    Replica-parallel saving is off: by default each device writes a slice of
    every replicated array, and cutting those slices compiles one small program
    per array shape (seconds for a first save on 8 simulated CPU devices, for
    a state this small). Off, one replica writes each array.
    """
    import orbax.checkpoint as ocp

    context = ocp.v1.Context()
    context.array.saving.use_replica_parallel = False
    with context:
        ocp.v1.save(Path(path), tree)


def abstract_like(tree: Any) -> Any:
    """A ``ShapeDtypeStruct`` (with the array's sharding) for every leaf of ``tree``."""
    import jax

    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), tree
    )


def orbax_load(path: str | Path, abstract: Any) -> Any:
    """Read a checkpoint into ``abstract`` (shapes, dtypes and shardings to restore onto)."""
    import orbax.checkpoint as ocp

    return ocp.v1.load(Path(path), abstract)


@contextlib.contextmanager
def one_process() -> Iterator[None]:
    """DCP without a process group says it assumes one process: that is the point here."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="torch.distributed is disabled", category=UserWarning
        )
        yield


def dcp_save(path: str | Path, model: Any, optimizer: Any, step: int = 0) -> None:
    """Save the model's and optimizer's state dicts with DCP (one process).

    ``step`` (the number of batches consumed) is saved beside them, as a tensor.
    """
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    with one_process():
        msd, osd = get_state_dict(model, optimizer)
        state = {"model": msd, "optim": osd, "step": torch.tensor(step)}
        dcp.save(state, checkpoint_id=Path(path), no_dist=True)


def dcp_load(path: str | Path, model: Any, optimizer: Any) -> int:
    """Load a :func:`dcp_save` checkpoint into ``model`` and ``optimizer`` in place.

    The optimizer must be a fresh one over ``model``'s parameters; DCP fills its
    state (moments and step counts) as it fills the weights. Returns the saved
    ``step``.
    """
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    with one_process():
        msd, osd = get_state_dict(model, optimizer)
        state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
        dcp.load(state, checkpoint_id=Path(path), no_dist=True)
        set_state_dict(
            model,
            optimizer,
            model_state_dict=state["model"],
            optim_state_dict=state["optim"],
        )
    return int(state["step"])
