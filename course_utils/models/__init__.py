"""The course's models, each written once in PyTorch and once in Flax NNX, the same model.

- ``cnn``: ``TorchCNN`` and ``NNXCNN``, the small CNN of lessons 04 and 07
- ``transformer``: ``BlockConfig``, ``TorchBlock``/``NNXBlock`` and
  ``TorchEncoder``/``NNXEncoder``, the pre-LayerNorm block of lesson 07

The classes are re-exported here (``from course_utils.models import TorchCNN``).
Importing this package imports torch and flax; ``import course_utils`` does not
import it. Weight converters are in :mod:`course_utils.convert`; the GPT of lessons 11
and 12, with its sampler and converter, is in :mod:`course_utils.gpt`.
"""

from __future__ import annotations

from course_utils.models.cnn import NNXCNN, TorchCNN, check_sizes
from course_utils.models.transformer import (
    TORCH_LAYERNORM_EPS,
    BlockConfig,
    NNXBlock,
    NNXEncoder,
    TorchBlock,
    TorchEncoder,
)

__all__ = [
    "NNXCNN",
    "TORCH_LAYERNORM_EPS",
    "BlockConfig",
    "NNXBlock",
    "NNXEncoder",
    "TorchBlock",
    "TorchCNN",
    "TorchEncoder",
    "check_sizes",
]
