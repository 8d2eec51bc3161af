# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-nbgrader
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · Exercises: automatic differentiation
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/02_autodiff_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/02_autodiff_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/02_autodiff_exercises.ipynb)
#
# Five exercises on lesson 02, each in both frameworks. Replace each
# `raise NotImplementedError()` with your code, then run the check cell below it.
# It prints "passed", explains what is wrong, or says "not implemented yet".

# %%
# Setup: where the course helpers are missing (Colab, Kaggle, a bare Jupyter),
# install them, keeping the runtime's own torch and jax. Elsewhere: nothing to do.
import importlib
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("course_utils") is None:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "jax-pytorch-side-by-side @ git+https://github.com/jax-pytorch-side-by-side/course@v0.1.0"],
        check=True,
    )
    importlib.invalidate_caches()
    from course_utils import hosted

    hosted.install_dependencies()

# %% tags=["parameters"]
SMOKE = None  # None: follow COURSE_SMOKE; papermill: -p SMOKE True
SIZES = {  # name: (full, smoke)
    "n_digits": (1797, 300),  # digits images loaded
    "batch": (128, 32),  # examples in the gradient batches
    "hvp_n": (400, 40),  # input size of the Hessian-vector product
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
import torch.func as tf
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from course_utils import config, data
from course_utils.exercises import check
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)

digits = data.load_digits(seed=0, limit=S.n_digits)
X_np = digits.X_train.reshape(len(digits.X_train), -1)[: S.batch]  # (batch, 64)
y_np = digits.y_train[: S.batch]  # (batch,)
W1_np = (0.2 * np.random.default_rng(0).standard_normal((64, 32))).astype(np.float32)
W2_np = (0.2 * np.random.default_rng(1).standard_normal((32, 10))).astype(np.float32)


def make_torch_model(dtype=torch.float32) -> torch.nn.Module:
    """64 -> 32 -> 10 MLP with tanh, holding the shared initial weights."""
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Tanh(), torch.nn.Linear(32, 10))
    with torch.no_grad():
        model[0].weight.copy_(torch.from_numpy(W1_np.T))
        model[0].bias.fill_(0.1)
        model[2].weight.copy_(torch.from_numpy(W2_np.T))
        model[2].bias.fill_(-0.1)
    return model.to(dtype)


def mlp_jax(params, X):
    return jnp.tanh(X @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def loss_jax(params, X, y):  # mean cross-entropy over the batch
    return optax.softmax_cross_entropy_with_integer_labels(mlp_jax(params, X), y).mean()


params = {"b1": jnp.full(32, 0.1), "b2": jnp.full(10, -0.1), "w1": jnp.asarray(W1_np), "w2": jnp.asarray(W2_np)}


def torch_grads_as_jax(model) -> dict:
    """A PyTorch model's .grad fields in the JAX params layout (weights transposed)."""
    return {"b1": model[0].bias.grad, "b2": model[2].bias.grad,
            "w1": model[0].weight.grad.T, "w2": model[2].weight.grad.T}


# %% [markdown]
# ## Exercise 1 · Gradient accumulation over micro-batches
#
# When a batch does not fit in memory, you split it into `n_micro` equal micro-batches and add
# up their gradients. With the mean loss of each micro-batch scaled by `1 / n_micro`, the sum
# equals the gradient of the mean loss over the whole batch.
#
# - **PyTorch** `accumulate_torch(model, X, y, n_micro)`: fill `model`'s `.grad` fields with the
#   accumulated gradient by calling `backward()` once per micro-batch. Here `.grad` accumulating
#   is what you want. Make sure gradients left over from earlier calls do not count.
# - **JAX** `accumulate_jax(params, X, y, n_micro)`: return the accumulated gradient pytree,
#   summing the micro-batch gradients with `jax.tree.map`. The checks compile it with
#   `jax.jit`, `n_micro` static.
#
# Use `torch.nn.functional.cross_entropy` and `loss_jax` above. About 5 lines each.

# %%
# EXERCISE: grad-accum
def accumulate_torch(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor, n_micro: int) -> None:
    """Leave the accumulated full-batch gradient in model's .grad fields."""
    ### BEGIN SOLUTION
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro), strict=True):
        (torch.nn.functional.cross_entropy(model(X_micro), y_micro) / n_micro).backward()
    ### END SOLUTION


def accumulate_jax(params, X: jax.Array, y: jax.Array, n_micro: int):
    """The accumulated full-batch gradient, a pytree shaped like params."""
    ### BEGIN SOLUTION
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, n_micro), jnp.split(y, n_micro), strict=True):
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g / n_micro, total, g)
    return total
    ### END SOLUTION


# %%
# TESTS: grad-accum points=2
full_batch = jax.jit(jax.grad(loss_jax))(params, jnp.asarray(X_np), jnp.asarray(y_np))  # the oracle
accumulate_jit = jax.jit(accumulate_jax, static_argnums=3)


def _torch_accumulated(n_micro):
    model = make_torch_model()
    accumulate_torch(model, torch.from_numpy(X_np), torch.from_numpy(y_np), n_micro)
    return torch_grads_as_jax(model)


X_jax, y_jax = jnp.asarray(X_np), jnp.asarray(y_np)
check("grad-accum", lambda: accumulate_jit(params, X_jax, y_jax, 1), full_batch, rtol=1e-4, atol=1e-6,
      hint="JAX: with n_micro = 1 the batch is one piece: jnp.split takes the number of pieces, unlike "
      "torch.split's piece size")
check("grad-accum", lambda: accumulate_jit(params, X_jax, y_jax, 4), full_batch, rtol=1e-4, atol=1e-6,
      hint="JAX: divide each micro-batch gradient by n_micro before adding")
check("grad-accum", lambda: _torch_accumulated(1), full_batch, rtol=1e-4, atol=1e-6,
      hint="PyTorch: with n_micro = 1 the batch is one piece: torch.split takes a piece size, torch.chunk "
      "a number of pieces")


def _torch_not_only_the_last():
    got = _torch_accumulated(4)
    k = len(X_np) // 4
    last = jax.tree.map(lambda g: g / 4, jax.grad(loss_jax)(params, X_jax[-k:], y_jax[-k:]))
    only_last = all(np.allclose(got[n].numpy(), last[n], rtol=1e-4, atol=1e-6) for n in last)
    assert not only_last, ("PyTorch: only the last micro-batch's gradient is left: clear .grad once "
                           "before the micro-batches, not per micro-batch")


check("grad-accum", _torch_not_only_the_last)  # its assertion is the hint
check("grad-accum", lambda: _torch_accumulated(4), full_batch, rtol=1e-4, atol=1e-6,
      hint="PyTorch: scale each micro-batch loss by 1 / n_micro, with one backward() per micro-batch")


def _torch_accumulated_twice(n_micro):
    model = make_torch_model()
    for _ in range(2):  # a second call must not add to what the first left in .grad
        accumulate_torch(model, torch.from_numpy(X_np), torch.from_numpy(y_np), n_micro)
    return torch_grads_as_jax(model)


check("grad-accum", lambda: _torch_accumulated_twice(4), full_batch, rtol=1e-4, atol=1e-6,
      hint="a second call doubled the gradient: .grad keeps what earlier backward() calls "
           "left, so start with model.zero_grad()")

# %%
# HIDDEN TESTS: grad-accum points=3
### BEGIN HIDDEN TESTS
model = make_torch_model()
torch.nn.functional.cross_entropy(model(torch.from_numpy(X_np)), torch.from_numpy(y_np)).backward()
accumulate_torch(model, torch.from_numpy(X_np), torch.from_numpy(y_np), 2)  # stale .grad present
assert_close(torch_grads_as_jax(model), full_batch, rtol=1e-4, atol=1e-6, name="with stale .grad fields")
accumulate_torch(model, torch.from_numpy(X_np), torch.from_numpy(y_np), 8)  # called twice
assert_close(torch_grads_as_jax(model), full_batch, rtol=1e-4, atol=1e-6, name="second call")
assert_close(accumulate_jit(params, jnp.asarray(X_np), jnp.asarray(y_np), 1), full_batch,
             rtol=1e-5, atol=1e-7, name="one micro-batch")
assert_close(accumulate_jit(params, jnp.asarray(X_np), jnp.asarray(y_np), 8), _torch_accumulated(8),
             rtol=1e-4, atol=1e-6, name="jax vs torch, 8 micro-batches")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Per-example gradient norms
#
# Differentially private SGD clips each example's gradient to a maximum norm, so it first needs
# the norm of every example's gradient over **all** parameters:
#
# $$ \text{norm}_i = \sqrt{\textstyle\sum_{\text{leaves } p} \lVert \nabla_p\, \ell(x_i, y_i) \rVert^2} $$
#
# Return a vector of shape `(batch,)`, without a Python loop over examples. The JAX version is
# checked under `jax.jit`.
#
# - **JAX** `per_example_norms_jax(params, X, y)` with `jax.vmap(jax.grad(...))`;
# - **PyTorch** `per_example_norms_torch(model, X, y)` with `torch.func.vmap`,
#   `torch.func.grad` and `torch.func.functional_call`.
#
# The loss of one example is its cross-entropy. About 6 lines each.

# %%
# EXERCISE: per-example-norms
def per_example_norms_jax(params, X: jax.Array, y: jax.Array) -> jax.Array:
    """(batch,) gradient norms, one per example."""
    ### BEGIN SOLUTION
    def loss_one(params, x, label):
        return loss_jax(params, x[None], label[None])

    grads = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(params, X, y)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    return jnp.sqrt(sum(squares))
    ### END SOLUTION


def per_example_norms_torch(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """(batch,) gradient norms, one per example."""
    ### BEGIN SOLUTION
    p = {name: value.detach() for name, value in model.named_parameters()}

    def loss_one(p, x, label):
        logits = tf.functional_call(model, p, (x[None],))
        return torch.nn.functional.cross_entropy(logits, label[None])

    grads = tf.vmap(tf.grad(loss_one), in_dims=(None, 0, 0))(p, X, y)
    return torch.sqrt(sum(g.flatten(1).pow(2).sum(dim=1) for g in grads.values()))
    ### END SOLUTION


# %%
# TESTS: per-example-norms points=2
def loop_norms_float64(X_np, y_np):
    """The oracle: a Python loop of float64 PyTorch backward passes."""
    model = make_torch_model(torch.float64)
    norms = []
    for x, label in zip(torch.from_numpy(X_np).double(), torch.from_numpy(y_np), strict=True):
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x[None]), label[None]).backward()
        norms.append(torch.sqrt(sum((p.grad**2).sum() for p in model.parameters())))
    return torch.stack(norms)


expected_norms = loop_norms_float64(X_np, y_np)
check("per-example-norms", lambda: jax.jit(per_example_norms_jax)(params, jnp.asarray(X_np), jnp.asarray(y_np)),
      expected_norms, rtol=1e-4, atol=1e-6, hint="JAX: one norm per example over all leaves together: the square root of the sum of "
      "squares of every leaf",
      crash_hint="JAX: vmap maps every argument over axis 0 unless in_axes says None for it: the parameters are "
                 "shared by all examples")
check("per-example-norms", lambda: per_example_norms_torch(make_torch_model(), torch.from_numpy(X_np), torch.from_numpy(y_np)),
      expected_norms, rtol=1e-4, atol=1e-6, hint="PyTorch: one norm per example over all parameters together: the square root of the sum "
      "of squares of every parameter",
      crash_hint="PyTorch: torch.func.vmap maps every argument over dim 0 unless in_dims says None for it: the "
                 "parameters are shared by all examples")

# %%
# HIDDEN TESTS: per-example-norms points=3
### BEGIN HIDDEN TESTS
X_other = np.random.default_rng(11).uniform(0, 1, (7, 64)).astype(np.float32)
y_other = np.random.default_rng(12).integers(0, 10, 7)
expected_other = loop_norms_float64(X_other, y_other)
got_jax = jax.jit(per_example_norms_jax)(params, jnp.asarray(X_other), jnp.asarray(y_other))
got_torch = per_example_norms_torch(make_torch_model(), torch.from_numpy(X_other), torch.from_numpy(y_other))
assert got_jax.shape == (7,) and tuple(got_torch.shape) == (7,), "one norm per example"
assert_close(got_jax, expected_other, rtol=1e-4, atol=1e-6, name="jax norms (jitted)")
assert_close(got_torch, expected_other, rtol=1e-4, atol=1e-6, name="torch norms")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · A Hessian-vector product without the Hessian
#
# For a scalar function `f` of a vector `x`, return `H(x) v`, where `H` is the Hessian of `f`,
# **without ever building an n × n array**. Write `hvp_jax(f, x, v)` and `hvp_torch(f, x, v)`.
# One line each.

# %%
# EXERCISE: hvp
def hvp_jax(f, x: jax.Array, v: jax.Array) -> jax.Array:
    """H(x) @ v for scalar f, in O(n) memory."""
    ### BEGIN SOLUTION
    return jax.jvp(jax.grad(f), (x,), (v,))[1]
    ### END SOLUTION


def hvp_torch(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x) @ v for scalar f, in O(n) memory."""
    ### BEGIN SOLUTION
    return tf.jvp(tf.grad(f), (x,), (v,))[1]
    ### END SOLUTION


# %%
# TESTS: hvp points=2
def chain_jax(x):  # a Rosenbrock-like chain: its Hessian is tridiagonal plus a diagonal
    return jnp.sum((x[1:] - x[:-1] ** 2) ** 2) + jnp.sum(jnp.cos(x))


def chain_torch(x):
    return torch.sum((x[1:] - x[:-1] ** 2) ** 2) + torch.sum(torch.cos(x))


n = S.hvp_n
x_np, v_np = (np.random.default_rng(k).standard_normal(n).astype(np.float32) for k in (20, 21))
H64 = tf.hessian(chain_torch)(torch.from_numpy(x_np).double())  # the float64 oracle, (n, n)
expected_hvp = (H64 @ torch.from_numpy(v_np).double()).numpy()
check("hvp", lambda: hvp_jax(chain_jax, jnp.asarray(x_np), jnp.asarray(v_np)), expected_hvp,
      rtol=1e-4, atol=1e-4, hint="JAX: H v is the derivative of the gradient in the direction v (forward mode over reverse); no Hessian needed")
check("hvp", lambda: hvp_torch(chain_torch, torch.from_numpy(x_np), torch.from_numpy(v_np)), expected_hvp,
      rtol=1e-4, atol=1e-4, hint="PyTorch: H v is the derivative of the gradient in the direction v (forward mode over reverse); no Hessian needed")


def _inner_jaxprs(param) -> list:
    """The jaxprs inside an equation's parameter: a nested jit, a scan or while body, cond branches."""
    if hasattr(param, "eqns"):
        return [param]
    if hasattr(getattr(param, "jaxpr", None), "eqns"):
        return [param.jaxpr]
    if isinstance(param, (tuple, list)):
        return [j for p in param for j in _inner_jaxprs(p)]
    return []


def _largest_jax(jaxpr) -> int:
    """Largest intermediate (in elements) in a jaxpr, nested jaxprs included."""
    sizes = [int(np.prod(v.aval.shape)) for e in jaxpr.eqns for v in e.outvars if hasattr(v.aval, "shape")]
    inner = [_largest_jax(j) for e in jaxpr.eqns for p in e.params.values() for j in _inner_jaxprs(p)]
    return max(sizes + inner + [0])


def _largest_intermediate_jax(m=64):
    traced = jax.make_jaxpr(lambda x, v: hvp_jax(chain_jax, x, v))(jnp.ones(m), jnp.ones(m))
    biggest = _largest_jax(traced.jaxpr)
    assert biggest < m * m, f"an intermediate of {biggest} elements for n = {m}: the n x n Hessian was built"


class LargestTensor(TorchDispatchMode):
    """Records the largest tensor any PyTorch operation makes while it is active
    (inside torch.func transforms and torch.compile'd functions too)."""

    def __init__(self):
        super().__init__()
        self.biggest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        made = [t.numel() for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        self.biggest = max([self.biggest, *made])
        return out


def _largest_torch(x, v) -> int:
    with LargestTensor() as seen:
        hvp_torch(chain_torch, x, v)
    return seen.biggest


def _largest_intermediate_torch(m=64):
    biggest = _largest_torch(torch.ones(m), torch.ones(m))
    assert biggest < m * m, f"an intermediate of {biggest} elements for n = {m}: the n x n Hessian was built"


check("hvp", _largest_intermediate_jax, hint="JAX: O(n) memory means no n x n Hessian; differentiate the gradient along v instead")
check("hvp", _largest_intermediate_torch, hint="PyTorch: O(n) memory means no n x n Hessian; differentiate the gradient along v instead")

# %%
# HIDDEN TESTS: hvp points=3
### BEGIN HIDDEN TESTS
m = 64
x_m, v_m = jnp.linspace(-1, 1, m), jnp.linspace(1, -1, m)
traced = jax.make_jaxpr(lambda x, v: hvp_jax(chain_jax, x, v))(x_m, v_m)
assert _largest_jax(traced.jaxpr) < m * m, "hvp_jax builds an n x n array"
assert _largest_torch(torch.linspace(-1, 1, m), torch.linspace(1, -1, m)) < m * m, "hvp_torch builds an n x n array"
assert_close(hvp_jax(chain_jax, x_m, v_m), hvp_torch(chain_torch, torch.linspace(-1, 1, m), torch.linspace(1, -1, m)),
             rtol=1e-4, atol=1e-4, name="jax vs torch")
assert_close(jax.jit(hvp_jax, static_argnums=0)(chain_jax, jnp.asarray(x_np), jnp.asarray(v_np)), expected_hvp,
             rtol=1e-4, atol=1e-4, name="jitted")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · A custom VJP that clips the backward pass
#
# `clip_gradient(x, lo, hi)` returns `x` unchanged, but on the way back it clips the incoming
# cotangent elementwise to `[lo, hi]`: a common trick to tame exploding gradients in one spot.
# `lo` and `hi` are numbers and get no gradient.
#
# - **JAX**: `lo` and `hi` are ordinary arguments of the `jax.custom_vjp` function, as JAX's
#   `custom_vjp` update guide recommends. The older `nondiff_argnums=(1, 2)` breaks as soon as
#   `lo` or `hi` is a traced value, under `jit` or `vmap`. Write the forward rule, which returns
#   the output and the residuals, here `lo` and `hi` themselves. Write the backward rule, which
#   returns one cotangent per input, `None` for `lo` and `hi`.
# - **PyTorch**: fill in the `torch.autograd.Function`'s `forward`, `setup_context` and
#   `backward`. `backward` returns one gradient per input of `forward`, `None` for `lo` and `hi`.
#
# About 6 lines in all.

# %%
# EXERCISE: clip-vjp
@jax.custom_vjp
def clip_gradient_jax(x, lo, hi):
    """Identity in the forward pass; the backward pass is defined below."""
    return x


def clip_gradient_fwd(x, lo, hi):
    """Forward pass: return (output, residuals saved for the backward pass)."""
    ### BEGIN SOLUTION
    return x, (lo, hi)  # the backward pass needs only the bounds
    ### END SOLUTION


def clip_gradient_bwd(residuals, g):
    """Backward pass: return a tuple with one cotangent per input (x, lo, hi)."""
    ### BEGIN SOLUTION
    lo, hi = residuals
    return jnp.clip(g, lo, hi), None, None
    ### END SOLUTION


clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)


class ClipGradient(torch.autograd.Function):
    @staticmethod
    def forward(x, lo: float, hi: float):
        """The identity, as a new tensor."""
        ### BEGIN SOLUTION
        return x.clone()
        ### END SOLUTION

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Keep what backward needs on ctx (inputs is (x, lo, hi))."""
        ### BEGIN SOLUTION
        ctx.lo, ctx.hi = inputs[1], inputs[2]
        ### END SOLUTION

    @staticmethod
    def backward(ctx, g):
        """One gradient per input of forward: clipped g for x, None for lo and hi."""
        ### BEGIN SOLUTION
        return g.clamp(ctx.lo, ctx.hi), None, None
        ### END SOLUTION


# %%
# TESTS: clip-vjp points=2
w_np = np.array([-3.0, -0.5, 0.0, 0.7, 2.5], np.float32)
x_np = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)  # outside [-1, 1]: a clipped value shows
expected_clip = np.clip(w_np, -1.0, 1.0)  # d/dx sum(w * x) = w, clipped on the way back


def _grad_jax(lo, hi):
    return jax.grad(lambda x: jnp.sum(jnp.asarray(w_np) * clip_gradient_jax(x, lo, hi)))(jnp.asarray(x_np))


def _grad_torch(lo, hi):
    x = torch.from_numpy(x_np).requires_grad_(True)
    (torch.from_numpy(w_np) * ClipGradient.apply(x, lo, hi)).sum().backward()
    return x.grad


def _other_bounds(fw, grad):
    """Bounds [-0.5, 2.0]: the gradient must be clipped to these, not to others."""
    got = np.asarray(grad(-0.5, 2.0))
    assert not np.allclose(got, np.clip(w_np, -1.0, 1.0)), (
        f"{fw}: bounds [-0.5, 2.0] gave the clip to [-1, 1]: take lo and hi from the call, not from constants")
    assert not np.allclose(got, np.clip(w_np, -2.0, 2.0)), (
        f"{fw}: bounds [-0.5, 2.0] gave the clip to [-2, 2]: clip to [lo, hi], not to a symmetric [-hi, hi]")
    return got


def _crash_jax(err) -> str:
    if "fwd rule" in str(err):
        return "JAX: fwd returns a pair: the output, then the residuals bwd needs, here lo and hi"
    if "bwd rule" in str(err):
        return "JAX: bwd returns a tuple with one cotangent per input (x, lo, hi), None for the bounds"
    if isinstance(err, (jax.errors.ConcretizationTypeError, jax.errors.UnexpectedTracerError)):
        return "JAX: under jit, lo and hi are traced values: keep them as they are in the residuals"
    return ""


def _crash_torch(err) -> str:
    if "save_for_backward" in str(err):
        return "PyTorch: save_for_backward takes tensors only; keep the float bounds as attributes of ctx"
    if "number of gradients" in str(err):
        return "PyTorch: backward returns one gradient per input of forward (x, lo, hi), None for the bounds"
    if isinstance(err, AttributeError):
        return "PyTorch: backward finds on ctx only what setup_context stored there"
    return ""


value = "the forward pass returns x unchanged; only the gradient is clipped, on the way back"
by_value = "clips each element of the incoming gradient to [lo, hi], by value, not by its norm"
check("clip-vjp", lambda: jax.vjp(lambda x: clip_gradient_jax(x, -1.0, 1.0), jnp.asarray(x_np))[0], x_np,
      hint=f"JAX: {value}", crash_hint=_crash_jax)
check("clip-vjp", lambda: _grad_jax(-1.0, 1.0), expected_clip, hint=f"JAX: bwd {by_value}", crash_hint=_crash_jax)
check("clip-vjp", lambda: _other_bounds("JAX", _grad_jax), np.clip(w_np, -0.5, 2.0),
      hint="JAX: fwd saves this call's lo and hi as residuals for bwd", crash_hint=_crash_jax)
check("clip-vjp", lambda: jax.jit(lambda x, lo, hi: jax.grad(
      lambda x: jnp.sum(jnp.asarray(w_np) * clip_gradient_jax(x, lo, hi)))(x))(
      jnp.asarray(x_np), jnp.float32(-1.0), jnp.float32(1.0)), expected_clip,
      hint="JAX: under jit with traced bounds the gradient differs", crash_hint=_crash_jax)
check("clip-vjp", lambda: ClipGradient.apply(torch.from_numpy(x_np), -1.0, 1.0), x_np,
      hint=f"PyTorch: {value}", crash_hint=_crash_torch)
check("clip-vjp", lambda: _grad_torch(-1.0, 1.0), expected_clip, hint=f"PyTorch: backward {by_value}",
      crash_hint=_crash_torch)
check("clip-vjp", lambda: _other_bounds("PyTorch", _grad_torch), np.clip(w_np, -0.5, 2.0),
      hint="PyTorch: setup_context keeps this call's lo and hi on ctx for backward", crash_hint=_crash_torch)

# %%
# HIDDEN TESTS: clip-vjp points=3
### BEGIN HIDDEN TESTS
assert_close(clip_gradient_jax(jnp.asarray(x_np), -1.0, 1.0), x_np, rtol=0, atol=0, name="jax forward")
assert_close(ClipGradient.apply(torch.from_numpy(x_np), -1.0, 1.0), x_np, rtol=0, atol=0, name="torch forward")
# the upstream gradient 3 * x^2 (from x^3) is clipped, then the chain rule continues: 2 * clipped
f_j = lambda x: jnp.sum(2.0 * clip_gradient_jax(x, -0.5, 10.0) ** 3)  # noqa: E731
f_t = lambda x: torch.sum(2.0 * ClipGradient.apply(x, -0.5, 10.0) ** 3)  # noqa: E731
z_np = np.array([-2.0, -0.3, 0.5, 1.5], np.float32)
expected = np.clip(6.0 * z_np.astype(np.float64) ** 2, -0.5, 10.0)
assert_close(jax.jit(jax.grad(f_j))(jnp.asarray(z_np)), expected, rtol=1e-6, name="jax chain rule")
assert_close(tf.grad(f_t)(torch.from_numpy(z_np)), expected, rtol=1e-6, name="torch.func chain rule")
per_row = jax.vmap(jax.grad(lambda x: jnp.sum(clip_gradient_jax(x, -1.0, 1.0) * jnp.arange(1.0, 4.0))))
assert_close(per_row(jnp.ones((2, 3))), np.tile([1.0, 1.0, 1.0], (2, 1)), name="vmap")
# lo and hi as traced values (what nondiff_argnums would refuse): jit with the bounds as arguments
traced = jax.jit(lambda x, lo, hi: jax.grad(lambda x: jnp.sum(jnp.asarray(w_np) * clip_gradient_jax(x, lo, hi)))(x))
assert_close(traced(jnp.asarray(x_np), jnp.float32(-1.0), jnp.float32(1.0)), expected_clip, name="traced bounds")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · A straight-through estimator
#
# Quantisation-aware training rounds values in the forward pass, but `round` has zero gradient
# almost everywhere. The straight-through estimator pretends the rounding was the identity in
# the backward pass: forward `round(x)`, gradient as if it were `x`. Write `round_ste` in both
# frameworks **without** a custom VJP, using `jax.lax.stop_gradient` and `.detach()`
# (lesson 02, section 6.1). One line each.

# %%
# EXERCISE: straight-through
def round_ste_jax(x: jax.Array) -> jax.Array:
    """round(x) forward; identity gradient."""
    ### BEGIN SOLUTION
    return x + jax.lax.stop_gradient(jnp.round(x) - x)
    ### END SOLUTION


def round_ste_torch(x: torch.Tensor) -> torch.Tensor:
    """round(x) forward; identity gradient."""
    ### BEGIN SOLUTION
    return x + (torch.round(x) - x).detach()
    ### END SOLUTION


# %%
# TESTS: straight-through points=2
q_np = np.array([-1.7, -0.2, 0.4, 1.2, 2.9], np.float32)
check("straight-through", lambda: round_ste_jax(jnp.asarray(q_np)), np.round(q_np), hint="JAX: the value is rounded but the gradient must flow as if through the identity; stop the gradient of the rounding part only")
check("straight-through", lambda: round_ste_torch(torch.from_numpy(q_np)), np.round(q_np), hint="PyTorch: the value is rounded but the gradient must flow as if through the identity; detach the rounding part only")
check("straight-through", lambda: jax.grad(lambda x: round_ste_jax(x).sum())(jnp.asarray(q_np)), np.ones(5),
      hint="the gradient must be 1 everywhere, as if no rounding happened")
check("straight-through", lambda: tf.grad(lambda x: round_ste_torch(x).sum())(torch.from_numpy(q_np)), np.ones(5),
      hint="the gradient must be 1 everywhere, as if no rounding happened",
      crash_hint="PyTorch: the output must still depend on x (through the identity part) for a gradient to exist")
w_q = np.array([2.0, -1.0, 0.5, 3.0, -4.0], np.float32)  # d/dx sum(w * round_ste(x)) = w
check("straight-through", lambda: jax.grad(lambda x: (jnp.asarray(w_q) * round_ste_jax(x)).sum())(jnp.asarray(q_np)),
      w_q, hint="JAX: the incoming gradient must pass through unchanged (the identity's gradient times it), not be "
                "replaced by ones")
check("straight-through", lambda: tf.grad(lambda x: (torch.from_numpy(w_q) * round_ste_torch(x)).sum())(
      torch.from_numpy(q_np)), w_q,
      hint="PyTorch: the incoming gradient must pass through unchanged (the identity's gradient times it), not be "
           "replaced by ones")
halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5], np.float32)
check("straight-through", lambda: [round_ste_jax(jnp.asarray(halves)), round_ste_torch(torch.from_numpy(halves))],
      [np.round(halves)] * 2, rtol=0, atol=0,
      hint="halves round to the even neighbour in jnp.round, torch.round and NumPy (2.5 -> 2); "
           "floor(x + 0.5) rounds them up instead")

# %%
# HIDDEN TESTS: straight-through points=3
### BEGIN HIDDEN TESTS
# d/dx sum(round_ste(x)^2) = 2 * round(x): the forward value flows into the chain rule
expected = 2 * np.round(q_np)
assert_close(jax.grad(lambda x: (round_ste_jax(x) ** 2).sum())(jnp.asarray(q_np)), expected, name="jax chain")
assert_close(tf.grad(lambda x: (round_ste_torch(x) ** 2).sum())(torch.from_numpy(q_np)), expected, name="torch chain")
half = np.array([0.5, 1.5, 2.5, -0.5], np.float32)  # both round half to even, like NumPy
assert_close(round_ste_jax(jnp.asarray(half)), np.round(half), rtol=0, atol=0, name="jax halves")
assert_close(round_ste_torch(torch.from_numpy(half)), np.round(half), rtol=0, atol=0, name="torch halves")
assert_close(jax.jit(round_ste_jax)(jnp.asarray(q_np)), np.round(q_np), name="jitted")
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You accumulated gradients on purpose, computed per-example norms for private training,
# multiplied by a Hessian you never built, and changed what autodiff does in two ways: a
# custom backward pass and a straight-through estimator. Lesson 03 compiles all of this.
