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
# # 06 · Exercises: the ecosystems
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/06_ecosystem_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/06_ecosystem_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/06_ecosystem_exercises.ipynb)
#
# Four exercises on what lesson 06 showed. Replace each `raise NotImplementedError()` with
# your code, then run the check cell below it. It prints "passed", says what is wrong, or
# says "not implemented yet".

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
    "opt_steps": (40, 15),  # optimiser steps compared
    "ckpt_steps": (5, 3),  # training steps before and after the checkpoint
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import importlib.util
import tempfile
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
import torch
from flax import nnx

from course_utils import config
from course_utils.exercises import check
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch.set_num_threads(1)  # tiny models: one thread is quicker (see lesson 06)
tmp_root = Path(tempfile.mkdtemp(prefix="course06x-"))  # every file these exercises write
HAVE_FLATBUFFERS = importlib.util.find_spec("flatbuffers") is not None  # jax.export serialisation


# %% [markdown]
# ## Exercise 1 · An Optax chain that matches a `torch.optim` setup
#
# A colleague trains with this PyTorch configuration. Read it carefully:

# %%
def colleague_optimizer(w: torch.nn.Parameter):
    """The colleague's optimiser and scheduler for the parameter ``w``."""
    opt = torch.optim.Adam([w], lr=0.05, betas=(0.8, 0.99), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
    return opt, sched


def colleague_step(w: torch.nn.Parameter, opt, sched) -> None:
    """One step, once backward() has filled ``w.grad``."""
    torch.nn.utils.clip_grad_norm_([w], max_norm=0.5)
    opt.step()
    sched.step()


def torch_trajectory(w0: np.ndarray, A: np.ndarray, y: np.ndarray, steps: int) -> list[np.ndarray]:
    """Least squares 0.5·mean((A w − y)²) with the colleague's optimiser; w after each step."""
    w = torch.nn.Parameter(torch.from_numpy(w0.copy()))
    opt, sched = colleague_optimizer(w)
    At, yt = torch.from_numpy(A), torch.from_numpy(y)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * ((At @ w - yt) ** 2).mean()).backward()
        colleague_step(w, opt, sched)
        out.append(w.detach().numpy().copy())
    return out


def optax_trajectory(tx, w0, A, y, steps):
    """The same loop with an Optax transformation ``tx``."""
    @jax.jit
    def step(w, state):
        grad = jax.grad(lambda w: 0.5 * jnp.mean((A @ w - y) ** 2))(w)
        updates, state = tx.update(grad, state, w)
        return optax.apply_updates(w, updates), state

    w, state, out = jnp.asarray(w0), tx.init(jnp.asarray(w0)), []
    for _ in range(steps):
        w, state = step(w, state)
        out.append(np.asarray(w))
    return out


# %% [markdown]
# Write `make_tx()`, returning the Optax transformation that reproduces it step for step.
# Three things to get right. `torch.optim.Adam(weight_decay=...)` adds `wd·w` to the
# **gradient**: coupled L2, not AdamW's decoupled decay. `clip_grad_norm_` runs on the raw
# gradient, before `step()` adds that term. `StepLR` halves the rate every 5 steps, which is
# `optax.exponential_decay(..., staircase=True)`. About 5 lines.

# %%
# EXERCISE: optax-match
def make_tx() -> optax.GradientTransformation:
    """The Optax twin of Adam(lr=0.05, betas=(0.8, 0.99), weight_decay=0.01) + StepLR(5, 0.5) + clipping at 0.5."""
    ### BEGIN SOLUTION
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.add_decayed_weights(0.01),
        optax.adam(schedule, b1=0.8, b2=0.99),
    )
    ### END SOLUTION


# %% [markdown]
# The check feeds both optimisers the same gradients with the weights held still, so that
# each probe isolates one setting, and then compares whole trajectories.

# %%
# TESTS: optax-match points=3
def updates_torch(grads, w):
    """Each step's update by the colleague's optimiser, fed ``grads`` with the weights held at ``w``."""
    p = torch.nn.Parameter(torch.from_numpy(w.copy()))
    opt, sched = colleague_optimizer(p)
    out = []
    for g in grads:
        p.grad = torch.from_numpy(g.copy())
        colleague_step(p, opt, sched)
        out.append(p.detach().numpy() - w)
        with torch.no_grad():
            p.copy_(torch.from_numpy(w))
    return out


def updates_optax(tx, grads, w):
    """The same with an Optax transformation: ``tx.update`` with ``w`` as the params."""
    state, out = tx.init(jnp.asarray(w)), []
    for g in grads:
        u, state = tx.update(jnp.asarray(g), state, jnp.asarray(w))
        out.append(np.asarray(u))
    return out


rng = np.random.default_rng(0)
zero = np.zeros(4)
PROBES = [  # (gradients, weights held at, what a difference there means)
    ([[0.1, -0.2, 0.05, 0.15]] * 12, zero,  # one gradient again and again: only the rate matters
     "the learning rate of a later step differs: StepLR halves it every 5 steps, all at once"),
    ([0.1 * rng.standard_normal(4) for _ in range(4)], zero,  # small gradients that vary
     "Adam's moments differ from step 2 on: use the colleague's betas, not optax's defaults"),
    ([s * rng.standard_normal(4) for s in (2, 9, 4, 6)], zero,  # large gradients
     "torch's clip_grad_norm_ rescales the whole raw gradient to a norm of at most 0.5, before Adam"),
    ([0.05 * rng.standard_normal(4) for _ in range(4)], [2.0, -1.0, 3.0, 0.5],  # weights not zero
     "torch's Adam adds weight_decay·w to the gradient before its moments (coupled L2), "
     "not to the update as AdamW does"),
    ([0.1 * rng.standard_normal(4) for _ in range(4)], [40.0, -30.0, 20.0, 10.0],  # a large decay term
     "clip_grad_norm_ sees the raw gradient only: torch's Adam adds the decay later, inside step()"),
]


def probes_agree():
    for grads, w, meaning in PROBES:
        grads, w = [np.asarray(g, np.float32) for g in grads], np.asarray(w, np.float32)
        got, want = updates_optax(make_tx(), grads, w), updates_torch(grads, w)
        for n, (u_jax, u_torch) in enumerate(zip(got, want, strict=True), start=1):
            assert np.allclose(u_jax, u_torch, rtol=1e-4, atol=1e-6), (
                f"fed the same gradients with the weights held still, step {n}'s update is "
                f"{np.round(u_jax, 5)} in JAX but {np.round(u_torch, 5)} in torch. Likely cause: {meaning}")


check("optax-match", probes_agree)
A = rng.standard_normal((32, 4)).astype(np.float32)
y = (A @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.1 * rng.standard_normal(32)).astype(np.float32)
w0 = np.full(4, 2.0, np.float32)
check("optax-match", lambda: optax_trajectory(make_tx(), w0, A, y, S.opt_steps),
      torch_trajectory(w0, A, y, S.opt_steps), rtol=1e-4, atol=1e-5,
      hint="each probe agrees, yet the trajectory differs: compare the order of your chain with the "
           "order of the colleague's calls")

# %%
# HIDDEN TESTS: optax-match points=4
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(7)
A2 = (3 * rng.standard_normal((20, 6))).astype(np.float32)  # large gradients: clipping active
y2 = rng.standard_normal(20).astype(np.float32)
w2 = rng.standard_normal(6).astype(np.float32) * 4
steps = max(S.opt_steps, 23)  # past several StepLR boundaries
assert_close(optax_trajectory(make_tx(), w2, A2, y2, steps), torch_trajectory(w2, A2, y2, steps),
             rtol=1e-4, atol=1e-5, name="trajectory")
# A decoupled (AdamW-style) decay would not match: the test above can tell them apart.
decoupled = optax.chain(optax.clip_by_global_norm(0.5),
                        optax.adamw(optax.exponential_decay(0.05, 5, 0.5, staircase=True), b1=0.8, b2=0.99, weight_decay=0.01))
gap = max(np.abs(a - b).max() for a, b in zip(optax_trajectory(decoupled, w2, A2, y2, steps),
                                               torch_trajectory(w2, A2, y2, steps), strict=True))
assert gap > 1e-4, gap
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · A checkpoint round trip with Orbax
#
# Write `save_checkpoint(path, model, optimizer)` and
# `restore_checkpoint(path, model, optimizer)` for a Flax NNX model and its `nnx.Optimizer`.
# Save **both** states with `ocp.v1.save(path, tree)`, as lesson 06 does in section 3. Restore into the given fresh
# `model` and `optimizer` **in place**: build an abstract target from their current states, a
# `jax.ShapeDtypeStruct` per array with its shape, dtype and sharding. Then call
# `ocp.v1.load(path, abstract)` and `nnx.update` each object. Training after a restore must
# continue exactly as if it had never stopped. About 8 lines.

# %%
class TinyNet(nnx.Module):
    def __init__(self, d_in: int, d_hidden: int, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(d_in, d_hidden, rngs=rngs)
        self.l2 = nnx.Linear(d_hidden, 1, rngs=rngs)

    def __call__(self, x):
        return self.l2(jax.nn.gelu(self.l1(x)))[:, 0]


@nnx.jit
def train_step(model, optimizer, x, y):
    grads = nnx.grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    optimizer.update(model, grads)


# %%
# EXERCISE: orbax-resume
def save_checkpoint(path: Path, model: nnx.Module, optimizer: nnx.Optimizer) -> None:
    """Write model and optimizer state to the new directory ``path`` with Orbax."""
    ### BEGIN SOLUTION
    ocp.v1.save(Path(path).absolute(), {"model": nnx.state(model), "optimizer": nnx.state(optimizer)})
    ### END SOLUTION


def restore_checkpoint(path: Path, model: nnx.Module, optimizer: nnx.Optimizer) -> None:
    """Load what save_checkpoint wrote into ``model`` and ``optimizer``, in place."""
    ### BEGIN SOLUTION
    target = {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), target)
    restored = ocp.v1.load(Path(path).absolute(), abstract)
    nnx.update(model, restored["model"])
    nnx.update(optimizer, restored["optimizer"])
    ### END SOLUTION


# %%
# TESTS: orbax-resume points=3
def _holds_a_step_count(path):
    """Whether the checkpoint at ``path`` holds a uint32 leaf, as nnx.Optimizer's step count is."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Orbax: no target, so no sharding was given
        return any(np.asarray(leaf).dtype == np.uint32 for leaf in jax.tree.leaves(ocp.v1.load(path)))


def _resume_matches(d_in, d_hidden, seed, subpath="ckpt"):
    where = Path(tempfile.mkdtemp(dir=tmp_root)) / subpath  # a new directory on every run
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((16, d_in)).astype(np.float32) for _ in range(2 * S.ckpt_steps)]
    ys = [x.sum(1) for x in xs]
    tx = optax.adamw(1e-2)
    model = TinyNet(d_in, d_hidden, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, tx, wrt=nnx.Param)
    for x, y in zip(xs[: S.ckpt_steps], ys[: S.ckpt_steps], strict=True):
        train_step(model, optimizer, x, y)
    save_checkpoint(where, model, optimizer)
    saved_weights = [np.array(a) for a in jax.tree.leaves(nnx.state(model, nnx.Param))]
    for x, y in zip(xs[S.ckpt_steps :], ys[S.ckpt_steps :], strict=True):
        train_step(model, optimizer, x, y)
    fresh = TinyNet(d_in, d_hidden, nnx.Rngs(seed + 100))  # different weights on purpose
    fresh_opt = nnx.Optimizer(fresh, tx, wrt=nnx.Param)
    restore_checkpoint(where, fresh, fresh_opt)
    weights = jax.tree.leaves(nnx.state(fresh, nnx.Param))
    assert all(np.array_equal(a, b) for a, b in zip(saved_weights, weights, strict=True)), (
        "after restore_checkpoint the model passed in still holds other weights than the saved ones. "
        "Likely cause: the restored state went into a new object instead of the model you were given: "
        "update `model` and `optimizer` in place, as load_state_dict does in PyTorch")
    if int(fresh_opt.step[...]) != S.ckpt_steps:
        raise AssertionError("the optimizer's step count was not restored. Likely cause: " + (
            "the checkpoint holds the optimizer's state, but restore_checkpoint never put it back into `optimizer`"
            if _holds_a_step_count(where) else
            "the checkpoint holds no optimizer state: Adam's moments and the step count live in "
            "nnx.state(optimizer), so save that too"))
    for x, y in zip(xs[S.ckpt_steps :], ys[S.ckpt_steps :], strict=True):
        train_step(fresh, fresh_opt, x, y)
    for a, b in zip(jax.tree.leaves(nnx.state(model)), jax.tree.leaves(nnx.state(fresh)), strict=True):
        assert np.array_equal(a, b), "resumed training differs from the uninterrupted run"
    return fresh, fresh_opt


check("orbax-resume", lambda: _resume_matches(8, 16, 0))

# %%
# HIDDEN TESTS: orbax-resume points=3
### BEGIN HIDDEN TESTS
fresh, fresh_opt = _resume_matches(5, 7, 3, subpath="nested/dir/ckpt")
assert fresh.l1.kernel[...].dtype == jnp.float32
leaves = jax.tree.leaves(nnx.state(fresh_opt))
assert any(leaf.dtype == jnp.uint32 for leaf in leaves), "step counter missing"
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · Export with a dynamic batch
#
# Export `mlp` with `jax.export` so that one exported program accepts **any batch size**.
# The weights keep their concrete shapes, and the input `x` has `n_features` columns and a
# symbolic first dimension, `jax.export.symbolic_shape("batch")`. An export runs only on the
# platforms it was lowered for, so export for `PLATFORM`, the device kind this notebook's
# JAX computes on. Return the `jax.export.Exported`. About 5 lines.

# %%
import jax.export  # a submodule that jax 0.7 does not load with `import jax`


def mlp(params: dict, x: jax.Array) -> jax.Array:
    return jnp.tanh(x @ params["W"] + params["b"]) @ params["V"]


PLATFORM = SETUP.jax_device.platform  # "cpu", "cuda" or "tpu": where this notebook's JAX computes
rng = np.random.default_rng(1)
params = {"W": rng.standard_normal((6, 5)).astype(np.float32), "b": rng.standard_normal(5).astype(np.float32),
          "V": rng.standard_normal((5, 2)).astype(np.float32)}


# %%
# EXERCISE: export-dynamic
def export_mlp(params: dict, n_features: int) -> jax.export.Exported:
    """jax.export of jax.jit(mlp) for these params and inputs of shape (batch, n_features), batch symbolic."""
    ### BEGIN SOLUTION
    (batch,) = jax.export.symbolic_shape("batch")
    param_specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.float32), params)
    x_spec = jax.ShapeDtypeStruct((batch, n_features), jnp.float32)
    return jax.export.export(jax.jit(mlp), platforms=[PLATFORM])(param_specs, x_spec)
    ### END SOLUTION


# %%
# TESTS: export-dynamic points=2
def _round_trip(exported):
    """Serialise and deserialise (needs the flatbuffers package), as another process would."""
    return jax.export.deserialize(exported.serialize()) if HAVE_FLATBUFFERS else exported


def _only_the_batch_is_symbolic(exported):
    shapes = [a.shape for a in exported.in_avals]  # the parameters' leaves, then x
    symbolic = [(i, d) for i, shape in enumerate(shapes) for d, size in enumerate(shape)
                if jax.export.is_symbolic_dim(size)]
    assert symbolic == [(len(shapes) - 1, 0)], (
        f"JAX: the export's input shapes are {', '.join('(' + ', '.join(map(str, s)) + ')' for s in shapes)}: "
        "only x's first dimension (the batch) may be symbolic; the weights and the feature "
        "dimension keep their concrete sizes")


def _calls_for_two_batches():
    loaded = _round_trip(export_mlp(params, 6))
    try:
        outs = [loaded.call(params, jnp.ones((n, 6))) for n in (3, 11)]
    except ValueError as err:  # jax's shape check: the batch was exported as a constant
        if "exported for platforms" in str(err):
            raise AssertionError(f"the export cannot run here: {err} Pass platforms=[PLATFORM]") from None
        raise AssertionError(f"the export does not accept batches of 3 and 11: {err}") from None
    _only_the_batch_is_symbolic(loaded)
    return outs


def _export_crash_hint(err):
    text = str(err)
    if "result of `jit`" in text:
        return "JAX: jax.export.export takes a function wrapped in jax.jit, not the plain Python function"
    if "contracting dimensions" in text:
        return "x's spec is (batch, n_features): the batch comes first, as x @ W needs"
    if "abstract array" in text or "None" in text:
        return ("JAX: a ShapeDtypeStruct's shape holds sizes; a batch that varies needs a symbolic size "
                "(jax.export.symbolic_shape), not None as in Keras or TensorFlow shapes")
    return ""


check("export-dynamic", _calls_for_two_batches,
      [mlp(params, jnp.ones((n, 6))) for n in (3, 11)], rtol=1e-6, atol=1e-6,
      hint="make the input spec jax.ShapeDtypeStruct((batch, n_features), jnp.float32) with a symbolic batch",
      crash_hint=_export_crash_hint)

# %%
# HIDDEN TESTS: export-dynamic points=3
### BEGIN HIDDEN TESTS
exported = _round_trip(export_mlp(params, 6))
assert jax.export.is_symbolic_dim(exported.in_avals[-1].shape[0]), exported.in_avals
assert exported.in_avals[-1].shape[1] == 6
x1 = np.random.default_rng(5).standard_normal((1, 6)).astype(np.float32)
assert_close(exported.call(params, x1), mlp(params, x1), rtol=1e-6, atol=1e-6, name="batch of 1")
wide = {"W": np.ones((9, 5), np.float32), "b": np.zeros(5, np.float32), "V": np.ones((5, 2), np.float32)}
assert_close(export_mlp(wide, 9).call(wide, jnp.ones((4, 9))), mlp(wide, jnp.ones((4, 9))),
             rtol=1e-6, atol=1e-6, name="other n_features")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · A JAX function with a PyTorch backward
#
# Fill in `JaxLogSumExp`, a `torch.autograd.Function` like lesson 06's `JaxHead`. Its
# forward runs the JAX function `lse_jax`, a row-wise log-sum-exp, and its backward uses the
# VJP that JAX returns, so that PyTorch can backpropagate through it. Move tensors with
# DLPack: `jax.dlpack.from_dlpack(tensor.detach())` and `torch.from_dlpack(array)`. Keep the
# VJP function on `ctx`. Unlike the lesson's scalar loss, this output is a vector, and the
# incoming gradient may not be contiguous: `.contiguous()` it first. About 8 lines.

# %%
lse_jax = jax.jit(lambda x: jax.nn.logsumexp(x, axis=-1))  # (batch, n) -> (batch,)


# %%
# EXERCISE: jax-backward
class JaxLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        """lse_jax(x) computed by JAX, returned as a torch tensor; store the VJP on ctx."""
        ### BEGIN SOLUTION
        out, vjp_fn = jax.vjp(lse_jax, jax.dlpack.from_dlpack(x.detach()))
        ctx.vjp_fn = vjp_fn
        return torch.from_dlpack(out)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor) -> torch.Tensor:
        """The gradient with respect to x, computed by JAX's VJP."""
        ### BEGIN SOLUTION
        (grad_x,) = ctx.vjp_fn(jax.dlpack.from_dlpack(grad_out.contiguous()))
        return torch.from_dlpack(grad_x)
        ### END SOLUTION


# %%
# TESTS: jax-backward points=3
def _grad_through(fn, x, weights):
    x = x.clone().requires_grad_(True)
    (fn(x) * weights).sum().backward()
    return x.grad


x_t = torch.randn(4, 7, generator=torch.Generator().manual_seed(0))
w_t = torch.tensor([1.0, -2.0, 0.5, 3.0])
def _bridge_crash_hint(err):
    text = str(err)
    if "require" in text and "grad" in text:
        return "DLPack carries no autograd history: hand JAX x.detach()"
    if "ArrayImpl" in text:
        return "PyTorch got a JAX array back: convert what JAX returns with torch.from_dlpack, in forward and backward"
    if "capsule" in text or "tuple" in text:
        return "the function jax.vjp returns gives a tuple, one gradient per input: unpack it first"
    return ""


check("jax-backward", lambda: _grad_through(JaxLogSumExp.apply, x_t, w_t),
      _grad_through(lambda x: torch.logsumexp(x, dim=-1), x_t, w_t), rtol=1e-5, atol=1e-6,
      hint="backward gets d(loss)/d(output); pass it to the VJP function from jax.vjp",
      crash_hint=_bridge_crash_hint)


def _grad_of_sum(fn, x):
    """A plain .sum() loss: PyTorch hands backward an expanded (stride-0) gradient."""
    x = x.clone().requires_grad_(True)
    fn(x).sum().backward()
    return x.grad


check("jax-backward", lambda: _grad_of_sum(JaxLogSumExp.apply, x_t), torch.softmax(x_t, dim=-1),
      rtol=1e-5, atol=1e-6,
      hint="PyTorch's incoming gradient can be non-contiguous (here stride 0), which JAX's DLPack "
           "import refuses: call .contiguous() on it first",
      crash_hint="PyTorch's incoming gradient can be non-contiguous (here stride 0), which JAX's DLPack "
                 "import refuses: call .contiguous() on it first")

# %%
# HIDDEN TESTS: jax-backward points=3
### BEGIN HIDDEN TESTS
x_big = 30 * torch.randn(9, 5, generator=torch.Generator().manual_seed(3))  # large values: stability
assert_close(JaxLogSumExp.apply(x_big), torch.logsumexp(x_big, dim=-1), rtol=1e-6, atol=1e-5, name="forward")
w_big = torch.randn(9, generator=torch.Generator().manual_seed(4))
assert_close(_grad_through(JaxLogSumExp.apply, x_big, w_big),
             _grad_through(lambda x: torch.logsumexp(x, dim=-1), x_big, w_big), rtol=1e-5, atol=1e-6, name="grad")
# A scalar loss: the incoming gradient is an expanded (stride-0) tensor.
x_s = torch.randn(3, 4, requires_grad=True)
JaxLogSumExp.apply(x_s).sum().backward()
assert_close(x_s.grad, torch.softmax(x_s.detach(), dim=-1), rtol=1e-5, atol=1e-6, name="grad of sum")
### END HIDDEN TESTS

# %%
import shutil

shutil.rmtree(tmp_root, ignore_errors=True)  # the checkpoints written above

# %% [markdown]
# ## Done
#
# `course_utils.interop.torch_function` is the general version of exercise 4: any number of
# inputs and outputs, integer inputs passed through, and forward and backward both jitted.
# Next: lesson 07, migrating a model from one framework to the other.
