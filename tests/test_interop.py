"""DLPack transfers share memory, and JAX functions inside torch autograd give torch's gradients."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
import jax.numpy as jnp  # noqa: E402

from course_utils import interop  # noqa: E402
from course_utils.parity import assert_close  # noqa: E402


def test_import_does_not_import_frameworks():
    code = (
        "import sys, course_utils.interop; "
        "assert 'jax' not in sys.modules and 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_to_jax_shares_memory_and_sees_torch_writes():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    a = interop.to_jax(t)
    assert interop.shares_memory(t, a)
    t.mul_(2)  # writes through the shared buffer
    np.testing.assert_array_equal(np.asarray(a), np.arange(12).reshape(3, 4) * 2)


def test_to_torch_shares_memory():
    a = jnp.arange(6.0, dtype=jnp.float32)
    t = interop.to_torch(a)
    assert interop.shares_memory(t, a)
    assert t.dtype == torch.float32 and tuple(t.shape) == (6,)


def test_copy_is_detected():
    t = torch.ones(4)
    copied = jnp.asarray(t.numpy()) + 0
    assert not interop.shares_memory(t, copied)


def test_non_contiguous_is_copied_but_equal():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4).T
    a = interop.to_jax(t)
    np.testing.assert_array_equal(np.asarray(a), t.numpy())


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: torch.ones(3, requires_grad=True), "requires grad"),
        (lambda: torch.ones(3, dtype=torch.float64), "float64"),
        (lambda: torch.ones(3, dtype=torch.int64), "int64"),
        (lambda: np.ones(3), "torch.Tensor"),
    ],
)
def test_to_jax_rejects_with_clear_message(make, match):
    with pytest.raises((TypeError, ValueError), match=match):
        interop.to_jax(make(), name="x")


def test_to_torch_rejects_non_jax():
    with pytest.raises(TypeError, match="jax.Array"):
        interop.to_torch(np.ones(3))


class _FakeTpuArray:
    """Stands in for a jax array on a TPU (none here): what to_torch sees of it."""

    def __init__(self, platform="tpu", n=1):
        self._devices = {
            type("D", (), {"platform": platform, "id": i})() for i in range(n)
        }

    def devices(self):
        return self._devices

    def __dlpack__(self, *a, **k):  # pragma: no cover - must never be reached
        raise BufferError("torch would fail here with a less helpful message")

    def block_until_ready(self):
        return self


def test_to_torch_explains_a_tpu_array_instead_of_a_buffer_error():
    with pytest.raises(interop.CrossDeviceError, match="TPU.*device_put") as err:
        interop.to_torch(_FakeTpuArray("tpu"), name="a")
    assert str(err.value).startswith("to_torch: a lives on a TPU")


def test_to_torch_explains_a_sharded_array():
    assert "sharded" in interop.dlpack_blocker(_FakeTpuArray("cpu", n=2))
    assert interop.dlpack_blocker(jnp.ones(2)) is None


def _head_jax(h, W, b, y):
    logits = h @ W + b
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, y[:, None], axis=-1).mean()


def test_torch_function_gradients_match_pure_torch():
    torch.manual_seed(0)
    lin = torch.nn.Linear(6, 5)
    W = torch.nn.Parameter(torch.randn(5, 3))
    b = torch.nn.Parameter(torch.randn(3))
    X, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    head = interop.torch_function(_head_jax)

    loss = head(torch.tanh(lin(X)), W, b, y.int())
    loss.backward()
    hybrid = {
        n: p.grad.clone()
        for n, p in [("lin.w", lin.weight), ("lin.b", lin.bias), ("W", W), ("b", b)]
    }
    for p in (lin.weight, lin.bias, W, b):
        p.grad = None

    ref = torch.nn.functional.cross_entropy(torch.tanh(lin(X)) @ W + b, y)
    ref.backward()
    pure = {
        n: p.grad
        for n, p in [("lin.w", lin.weight), ("lin.b", lin.bias), ("W", W), ("b", b)]
    }
    assert_close(loss, ref, rtol=1e-6, atol=1e-6, name="loss")
    assert_close(hybrid, pure, rtol=1e-5, atol=1e-6, name="grads")


def test_torch_function_multiple_outputs_and_unused_output():
    f = interop.torch_function(lambda x, w: (jnp.sin(x) * w, jnp.cos(x).sum()))
    x = torch.linspace(-1, 1, 5, requires_grad=True)
    w = torch.full((5,), 2.0, requires_grad=True)
    a, c = f(x, w)
    a.sum().backward()  # c is unused: its gradient arrives as None
    assert_close(x.grad, 2 * torch.cos(x.detach()), rtol=1e-6, atol=1e-6, name="dx")
    assert_close(w.grad, torch.sin(x.detach()), rtol=1e-6, atol=1e-6, name="dw")
    assert isinstance(c, torch.Tensor) and c.shape == ()


def test_torch_function_single_tuple_output_stays_tuple():
    f = interop.torch_function(lambda x: (x * 3,))
    out = f(torch.ones(2))
    assert isinstance(out, tuple) and len(out) == 1


def test_torch_function_compiles_once_per_signature():
    calls = []

    def fn(x):
        calls.append(1)  # runs only while tracing
        return jnp.tanh(x).sum()

    f = interop.torch_function(fn)
    for _ in range(3):
        x = torch.randn(4, requires_grad=True)
        f(x).backward()
    assert len(calls) == 1


def test_torch_function_rejects_non_tensor():
    f = interop.torch_function(jnp.sin, name="sin")
    with pytest.raises(TypeError, match="argument 0 must be a torch.Tensor"):
        f(np.ones(3))


def test_torch_function_integer_output_has_no_gradient():
    f = interop.torch_function(lambda x: (jnp.sin(x), jnp.argmax(x)))
    x = torch.tensor([0.1, 2.0, -1.0], requires_grad=True)
    values, index = f(x)
    assert int(index) == 1 and not index.requires_grad
    values.sum().backward()
    assert_close(x.grad, torch.cos(x.detach()), rtol=1e-6, atol=1e-6, name="dx")
