import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch.utils.checkpoint import checkpoint

from course_utils import residuals


def test_parse_lines_counts_bytes_and_arguments():
    saved = residuals.parse_residual_lines(
        "f32[4,16] from the argument x\nbf16[3] output of sin from f.py:1 (f)\nf32[] output of mul\n\n"
    )
    assert saved.count == 3
    assert [r.nbytes for r in saved.items] == [256, 6, 4]
    assert saved.nbytes == 266 and saved.activation_bytes == 10
    assert [r.is_argument for r in saved.items] == [True, False, False]
    assert saved.items[0].shape == (4, 16) and saved.items[2].shape == ()


def test_parse_rejects_unreadable_lines():
    with pytest.raises(ValueError, match="cannot read"):
        residuals.parse_residual_lines("not a residual")


def test_dtype_bytes():
    assert residuals.dtype_bytes("f32") == 4
    assert residuals.dtype_bytes("bf16") == 2
    assert residuals.dtype_bytes("i8") == 1
    assert residuals.dtype_bytes("bool") == 1
    assert residuals.dtype_bytes("weird") is None


def _net_jax(Ws, x):
    for W in Ws:
        x = jnp.tanh(x @ W)
    return jnp.sum(x)


def test_jax_checkpoint_saves_only_the_arguments():
    Ws = [jnp.ones((8, 8)) * 0.1 for _ in range(3)]
    x = jnp.ones((2, 8))
    plain = residuals.jax_saved_residuals(_net_jax, Ws, x)
    remat = residuals.jax_saved_residuals(jax.checkpoint(_net_jax), Ws, x)
    assert len(plain.activations) >= 3  # at least one tanh output per layer
    assert remat.activations == []
    assert remat.nbytes == 3 * 8 * 8 * 4 + 2 * 8 * 4
    with pytest.raises(TypeError, match="fn must be callable"):
        residuals.jax_saved_residuals(3, x)


def _net_torch(x, *Ws):
    for W in Ws:
        x = torch.tanh(x @ W)
    return x


def test_torch_saved_tensors_with_and_without_checkpoint():
    Ws = [torch.full((8, 8), 0.1, requires_grad=True) for _ in range(3)]
    x = torch.ones(2, 8)
    with residuals.torch_saved_tensors() as plain:
        _net_torch(x, *Ws).sum()
    assert len(plain.activations) == 3  # one tanh output per layer
    assert plain.activation_bytes == 3 * 2 * 8 * 4
    with residuals.torch_saved_tensors() as remat:
        out = checkpoint(_net_torch, x, *Ws, use_reentrant=False).sum()
    assert remat.activations == []
    out.backward()  # the hooks are gone: backward still works
    assert Ws[0].grad is not None and np.isfinite(Ws[0].grad.numpy()).all()
    assert "saved arrays" in str(remat) and "| **total** |" in remat.table()
