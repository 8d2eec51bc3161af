"""Weight layouts between PyTorch and JAX/Flax: the converters of the models in :mod:`course_utils.models`.

- ``layouts``: arrays (linear, conv, a linear layer after a flatten) and the
  CNN's parameter dictionaries; works on torch tensors, jax or numpy arrays
- ``cnn``: a whole ``TorchCNN`` into an ``NNXCNN`` and back
- ``transformer``: the transformer block and encoder, ``make_pair`` and
  ``grads_nnx_to_torch``

The GPT's converter sits with the GPT, in :mod:`course_utils.gpt.convert` (it
uses ``layouts``).

The names below are re-exported, so ``convert.linear_torch_to_jax(...)`` works
after ``from course_utils import convert``. Importing this package imports torch
and flax (its ``cnn`` and ``transformer`` modules import them at the top).
"""

from __future__ import annotations

from course_utils.convert.cnn import cnn_nnx_to_torch, cnn_torch_to_nnx
from course_utils.convert.layouts import (
    CNN_LAYERS,
    cnn_jax_tensors_to_torch,
    cnn_torch_tensors_to_jax,
    conv_jax_to_torch,
    conv_torch_to_jax,
    flatten_linear_jax_to_torch,
    flatten_linear_torch_to_jax,
    linear_jax_to_torch,
    linear_torch_to_jax,
)
from course_utils.convert.transformer import (
    block_nnx_to_torch,
    block_torch_to_nnx,
    encoder_nnx_to_torch,
    encoder_torch_to_nnx,
    grads_nnx_to_torch,
    make_pair,
)

__all__ = [
    "CNN_LAYERS",
    "block_nnx_to_torch",
    "block_torch_to_nnx",
    "conv_jax_to_torch",
    "conv_torch_to_jax",
    "encoder_nnx_to_torch",
    "encoder_torch_to_nnx",
    "flatten_linear_jax_to_torch",
    "flatten_linear_torch_to_jax",
    "cnn_jax_tensors_to_torch",
    "linear_jax_to_torch",
    "linear_torch_to_jax",
    "make_pair",
    "cnn_nnx_to_torch",
    "grads_nnx_to_torch",
    "cnn_torch_tensors_to_jax",
    "cnn_torch_to_nnx",
]
