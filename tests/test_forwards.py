"""course_utils.forwards: each framework's model as a plain function of a batch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils import forwards


def test_torch_forward_runs_a_numpy_batch_in_inference_mode():
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    out = forwards.torch_forward(layer)(np.ones((4, 3), np.float32))
    assert out.shape == (4, 2) and not out.requires_grad
    torch.testing.assert_close(out, layer(torch.ones(4, 3)).detach())


def test_jit_forward_takes_the_weights_as_an_argument():
    layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    forward, state = forwards.jit_forward(layer)
    x = jnp.ones((4, 3))
    np.testing.assert_allclose(forward(state, x), layer(x), rtol=1e-6)
    doubled = jax.tree.map(lambda v: v * 2, state)  # kernel and bias: twice the output
    np.testing.assert_allclose(forward(doubled, x), 2 * layer(x), rtol=1e-6)
    assert forward._cache_size() == 1  # new weights, the same compiled program
