"""Lessons 11 and 12's GPT, every piece in one folder (as in nanoGPT and Flax's examples).

Lesson 11 writes the model, the data pipeline, the converter and the samplers on its
page, lesson 12 the sharding, checkpoint and export calls; the same code lives here for
later cells, the exercises and the tests (``tests/gpt/test_pages.py`` keeps them equal):

- ``model``: ``GPTConfig``, ``TorchGPT`` and ``NNXGPT`` (blocks scanned), with a KV cache
- ``sample``: ``torch_generate``/``nnx_generate``, with and without the KV cache, and ``generate_fn`` for any logits callable; one random stream
- ``convert``: ``TorchGPT`` <-> ``NNXGPT`` (stacked layers), tensors or gradients by name, ``make_gpt_pair``
- ``data``: a corpus shipped with Python, a character tokenizer, one batch order in a DataLoader and a NumPy iterator
- ``train``: the training step in each framework, one pure JAX step for every sharding
- ``shard``: that step data- and tensor-parallel on a JAX mesh: shardings by parameter path
- ``checkpoint``: Orbax and DCP checkpoints that resume bit for bit
- ``export``: ``jax.export`` and ``torch.export`` programs, serialised and loaded back

PyTorch's FSDP2 and tensor-parallel runs of the same model are a launched script,
:mod:`course_utils.distributed.torch_gpt`.

``model``, ``sample``, ``convert`` and ``data`` import their frameworks at the top; the others
import the frameworks inside their functions. Importing this package imports
neither: ``from course_utils import gpt`` then ``gpt.train.jax_step`` imports
``course_utils.gpt.train`` on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = (
    "checkpoint",
    "convert",
    "data",
    "export",
    "model",
    "sample",
    "shard",
    "train",
)

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
