"""A model of either framework as a plain function of a batch: what both sides run.

:func:`torch_forward` runs a torch module in inference mode on a numpy batch;
:func:`jit_forward` splits a Flax NNX model into its graph definition and state
and jits a pure ``forward(state, x)``. The migration checks, the checklists and
the claims' encoder benchmarks all run models through these two, so importing
this module imports neither framework (they are imported when called).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def torch_forward(torch_model: Any) -> Callable[[np.ndarray], Any]:
    """A function running ``torch_model`` on a numpy batch, in inference mode."""
    import torch

    def run(x: np.ndarray):
        with torch.inference_mode():
            return torch_model(torch.from_numpy(np.asarray(x)))

    return run


def jit_forward(nnx_model: Any) -> Callable:
    """A ``jax.jit`` forward pass ``f(state, x)`` of an NNX model, and its state: ``(f, state)``.

    Splitting the model into a graph definition and a state pytree keeps the
    weights as arguments (not compile-time constants) and the call free of
    NNX's Python bookkeeping.
    """
    import jax
    from flax import nnx

    graphdef, state = nnx.split(nnx_model)

    @jax.jit
    def forward(state, x):
        return nnx.merge(graphdef, state)(x)

    return forward, state
