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
# # 01 · Design philosophy: objects that change vs functions that return
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/01_design_philosophy.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/01_design_philosophy.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/01_design_philosophy.ipynb)
#
# PyTorch is imperative Python: a model is an object that owns its tensors and changes them
# in place, and each line runs as it is read. JAX is a set of transformations, such as `grad`,
# `jit` and `vmap`, over pure functions of immutable arrays. This lesson writes one small
# network both ways, starting from plain NumPy. It shows what each style makes easy and what it
# makes risky.
#
# **Learning objectives.** After this notebook you can
# 1. rewrite a model that mutates its weights in place as pure functions over a pytree, and
#    name the bug class this removes: aliasing through shared arrays;
# 2. predict what in-place updates, `print`, global variables and random numbers do in eager
#    PyTorch and under `jax.jit`, and use `.at[]`, `jax.debug.print` and explicit keys instead;
# 3. place `nn.Module`, JAX pytrees and Flax NNX on the line from objects to functions, and
#    tell eager define-by-run execution from trace-and-compile.
#
# The pairs follow lesson 00's naming: `model_torch` and `X_torch` in PyTorch cells,
# `params_jax` and `X_jax` in JAX cells, and no suffix on what both share, such as the NumPy
# data `X_np` and the initial weights `init`.

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
    "n_samples": (1024, 256),  # rows of the toy regression
    "d_hidden": (64, 16),  # hidden width of the MLP
    "num_steps": (200, 30),  # SGD steps in the NumPy comparison
    "n_draws": (1_000_000, 20_000),  # random numbers drawn for the statistics check
    "busy_n": (1000, 800),  # side of the matmul that keeps JAX busy in section 3.1
    "rounds": (None, 10),  # timing rounds per comparison (None: as many as the time target allows)
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both, and one device kind for both (this lesson compares them throughout).
SETUP = env.setup(one_kind=True)

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch
from flax import nnx

from course_utils import claims, config, numpy_mlp, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())

# %% [markdown]
# ## 1. Imperative vs functional, in plain NumPy
#
# Before any framework, one design question: who owns the weights? In the imperative style an
# object owns them, and its methods change them in place. Anyone holding a reference sees the
# change. In the functional style the weights are a value: a function takes them and returns
# new ones, and what it was given stays as it was.
#
# PyTorch's `nn.Module` and `torch.optim` follow the first style. JAX requires the second,
# because its transformations need **pure functions**. A pure function's result depends only on
# its arguments, and it changes nothing outside itself. `jax.grad` can only differentiate with
# respect to an argument, and `jax.jit` compiles what the function computes from its arguments,
# not what it does to the world around it. Plain NumPy shows the two styles apart from
# everything else the frameworks add.
#
# **Key concepts**
# - *Imperative*: an object holds the weights and `train_step` changes them in place with `-=`.
# - *Functional*: the weights are a value, a dict of arrays, passed in. An update returns new
#   values and changes nothing it was given.
# - NumPy arrays are mutable and Python passes references, so a dict of an object's arrays is
#   a window onto its state, not a copy of it.
#
# The starting point is a two-layer MLP. Its weights are stored `(in, out)`, so `X @ w1`
# works for a batch `X` of shape `(batch, in)`:

# %%
d_in, d_out, lr = 4, 1, 0.2
X_np, y_np = numpy_mlp.toy_regression(S.n_samples, d_in, d_out, seed=0)  # (n, 4), (n, 1)
init = numpy_mlp.init_params(d_in, S.d_hidden, d_out, seed=0)  # float32, layout (in, out)
{name: value.shape for name, value in init.items()}


# %% [markdown]
# The first of three ways to write the model: NumPy, with backprop by hand. The loss is half
# the squared error, summed over outputs and averaged over the batch. The backward pass applies
# the chain rule layer by layer, from the loss back to the first weights:

# %%
# NumPy: the forward pass, the loss and its gradient, written by hand
def forward_np(params, X):
    return np.maximum(X @ params["w1"] + params["b1"], 0) @ params["w2"] + params["b2"]


def loss_np(params, X, y):
    return float(0.5 * np.mean(np.sum((forward_np(params, X) - y) ** 2, axis=1)))


def grads_np(params, X, y):
    z1 = X @ params["w1"] + params["b1"]  # (n, d_hidden)
    a1 = np.maximum(z1, 0)
    dz2 = (a1 @ params["w2"] + params["b2"] - y) / len(X)  # d loss / d output, (n, d_out)
    dz1 = (dz2 @ params["w2"].T) * (z1 > 0)  # back through w2 and the ReLU, (n, d_hidden)
    return {"b1": dz1.sum(axis=0), "b2": dz2.sum(axis=0), "w1": X.T @ dz1, "w2": a1.T @ dz2}


# the course keeps the same code in course_utils.numpy_mlp, as the exercises' oracle
assert_close(grads_np(init, X_np, y_np), numpy_mlp.grads(init, X_np, y_np), rtol=0, atol=0, name="grads")


# %% [markdown]
# The imperative version. The object owns four arrays, `params()` hands them out, and
# `train_step` subtracts the gradient from them in place.

# %%
class SimpleMLP:
    """Imperative style: the object owns its weights and changes them in place."""

    def __init__(self, params):
        self.w1, self.b1, self.w2, self.b2 = (params[k].copy() for k in ("w1", "b1", "w2", "b2"))

    def params(self):
        """The object's own arrays by name: not copies."""
        return {"b1": self.b1, "b2": self.b2, "w1": self.w1, "w2": self.w2}

    def train_step(self, X, y, lr):
        grads = grads_np(self.params(), X, y)
        for name, p in self.params().items():
            p -= lr * grads[name]  # in place: every reference to p sees the change


# %% [markdown]
# The functional version: parameters in, new parameters out.

# %%
def sgd_update(params, grads, lr):
    """Functional style: return new parameters; the inputs stay as they were."""
    return {k: params[k] - lr * grads[k] for k in params}


def train_functional(params, X, y, lr, num_steps):
    for _ in range(num_steps):
        params = sgd_update(params, grads_np(params, X, y), lr)
    return params


# %% [markdown]
# Both train the same network to the same weights:

# %%
model = SimpleMLP(init)
for _ in range(S.num_steps):
    model.train_step(X_np, y_np, lr)
trained = train_functional(init, X_np, y_np, lr, S.num_steps)

assert_close(model.params(), trained, rtol=1e-5, atol=1e-6, name="trained")
print(f"loss {loss_np(init, X_np, y_np):.4f} -> {loss_np(trained, X_np, y_np):.4f}"
      f" after {S.num_steps} steps, identical in both styles")

# %% [markdown]
# Same loss before, same loss after, same weights. The style decides where the weights live
# and who may change them, not the arithmetic. The rest of the lesson is about what each choice
# makes easy and what it lets go wrong.
#
# ### 1.1 The sharp bit: aliasing
#
# Suppose you keep "the initial weights" to compare with later, the natural way:
# `snapshot = model.params()`. Then you train.

# %%
model = SimpleMLP(init)
snapshot = model.params()  # meant as a record of the starting point
loss_at_start = loss_np(snapshot, X_np, y_np)
for _ in range(S.num_steps):
    model.train_step(X_np, y_np, lr)
loss_of_snapshot = loss_np(snapshot, X_np, y_np)
print(f"loss of the snapshot: {loss_at_start:.4f} when taken, {loss_of_snapshot:.4f} after training")
print('snapshot["w1"] is model.w1:', snapshot["w1"] is model.w1)

# %% [markdown]
# The "snapshot" trained along with the model: it *is* the model's arrays. Its loss moved from
# the starting value to the trained one, and the identity check printed `True`. The dict holds
# the very arrays `train_step` subtracts from. The bug runs the other way too: an in-place edit
# through the dict silently rewrites the model.

# %%
experiment = model.params()
experiment["w1"] *= 0.0  # "zero the first layer in my copy to see what happens"
print("model.w1 is now all zeros:", not model.w1.any())
assert not model.w1.any()

# %% [markdown]
# Functional code cannot have this bug. `sgd_update` never writes into its inputs, so an old
# `params` stays what it was, and new values live in new arrays.

# %%
grads = grads_np(init, X_np, y_np)
before = {k: v.copy() for k, v in init.items()}
new = sgd_update(init, grads, lr)

assert_close(init, before, rtol=0, atol=0, name="init after the update")  # untouched
assert not any(np.shares_memory(new[k], init[k]) for k in init)
print("the update returned new arrays and left its input alone")


# %% [markdown]
# The two checks say it precisely: `init` is bit for bit what it was, and no array of the
# result shares memory with an array of the input. Inside the imperative style the fix is
# discipline, a copy on the way out, which nothing enforces. The functional style pays with a
# new array on every update. Lesson 03 §7.2 shows when `jax.jit` may reuse the old buffer.
#
# ## 2. The same model in PyTorch, JAX and Flax NNX
#
# Now the same network in the frameworks. In PyTorch the module object *is* the model. Its
# parameters are attributes, the forward pass is a method, and `optimizer.step()` rewrites the
# parameters in place.
#
# In JAX the model is two things kept apart: a function that says how to compute,
# `mlp_jax(params, X)`, and a **pytree** that holds the numbers, `params_jax`. A pytree is any
# nesting of lists, tuples, dicts and registered classes with arrays at the leaves.
# `jax.tree.map(f, a, b)` walks two pytrees of the same structure together and applies `f` to
# each pair of leaves, which is all an SGD step needs. Flax NNX sits in between: modules that
# look like `nn.Module`, which JAX also sees as pytrees.
#
# **Key concepts**
# - `nn.Module` keeps parameters as attributes; `torch.optim` updates them in place.
# - In JAX the model is a pure function of a **pytree**. `jax.grad` returns a pytree of the
#   same structure, and the update is one `jax.tree.map`.
# - **Flax NNX** modules are PyTorch-like objects that are pytrees themselves. A module goes
#   straight into `jax.jit` and `jax.grad`, and `nnx.jit` also carries in-place updates back
#   out. `nnx.split` and `nnx.merge` remain for when you want the state on its own.
# - Same initial weights everywhere. `nn.Linear` stores its weight as `(out, in)`, so it gets
#   the transpose of the NumPy `(in, out)` array; NNX's `kernel` is `(in, out)` already.

# %%
# PyTorch
class MLP(torch.nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.linear1 = torch.nn.Linear(d_in, d_hidden)
        self.linear2 = torch.nn.Linear(d_hidden, d_out)

    def forward(self, X):
        return self.linear2(torch.relu(self.linear1(X)))


def loss_torch(model, X, y):
    return 0.5 * ((model(X) - y) ** 2).sum(dim=1).mean()


# %%
# PyTorch
model_torch = MLP(d_in, S.d_hidden, d_out)
with torch.no_grad():  # copy in the shared initial weights (transposed for nn.Linear)
    for layer, w, b in ((model_torch.linear1, "w1", "b1"), (model_torch.linear2, "w2", "b2")):
        layer.weight.copy_(torch.from_numpy(init[w].T))
        layer.bias.copy_(torch.from_numpy(init[b]))
X_torch, y_torch = torch.from_numpy(X_np), torch.from_numpy(y_np)
optimizer_torch = torch.optim.SGD(model_torch.parameters(), lr=lr)

out_torch = model_torch(X_torch).detach()
optimizer_torch.zero_grad()
loss_torch(model_torch, X_torch, y_torch).backward()
optimizer_torch.step()  # rewrites the model's weights in place
step_torch = {"b1": model_torch.linear1.bias, "b2": model_torch.linear2.bias,  # keys sorted, as JAX orders them
              "w1": model_torch.linear1.weight.T, "w2": model_torch.linear2.weight.T}
step_torch = {k: v.detach().clone() for k, v in step_torch.items()}  # values, not live parameters (§1.1)


# %% [markdown]
# The JAX version needs no backward pass of its own: `jax.grad(loss_jax)` is the function that
# `grads_np` wrote by hand.

# %%
# JAX
def mlp_jax(params, X):
    return jax.nn.relu(X @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def loss_jax(params, X, y):
    return 0.5 * ((mlp_jax(params, X) - y) ** 2).sum(axis=1).mean()


@jax.jit
def sgd_step_jax(params, X, y, lr):
    grads = jax.grad(loss_jax)(params, X, y)  # a dict shaped like params
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


# %%
# JAX
params_jax = jax.tree.map(jnp.asarray, init)
X_jax, y_jax = jnp.asarray(X_np), jnp.asarray(y_np)

out_jax = mlp_jax(params_jax, X_jax)
step_jax = sgd_step_jax(params_jax, X_jax, y_jax, lr)  # a new pytree; params_jax is unchanged
jax.tree.map(jnp.shape, step_jax)

# %%
# Parity: same outputs, same step, and both equal the NumPy functional update.
step_numpy = sgd_update(init, grads_np(init, X_np, y_np), lr)
assert_close(out_torch, out_jax, rtol=1e-5, atol=1e-5, name="output")
assert_close(step_torch, step_jax, rtol=1e-5, atol=1e-6, name="one SGD step")
assert_close(step_jax, step_numpy, rtol=1e-5, atol=1e-6, name="one SGD step")
assert_close(params_jax, init, rtol=0, atol=0, name="params_jax")  # the JAX input is untouched
print("NumPy, PyTorch and JAX agree on the output and on one SGD step")


# %% [markdown]
# Three implementations, one step. The outputs agree to float32 rounding, and one SGD step
# gives the same new weights in NumPy, PyTorch and JAX. `step_torch` holds copies of PyTorch's
# new weights, transposed and with JAX's sorted keys, so that `assert_close` can compare the
# trees leaf by leaf. The last assertion is the functional contract again: `params_jax` still
# holds the initial weights exactly.
#
# ### 2.1 Flax NNX: objects on a functional core
#
# NNX modules look like PyTorch modules: layers are attributes and calling the object runs it.
# Two differences show in the cell. A module gets its random number streams as an explicit
# `rngs=nnx.Rngs(0)` argument rather than from a global generator; section 5 explains why. And
# a `Variable`'s array is read and written with `[...]`, here to copy in the shared weights.

# %%
# JAX: Flax NNX
class MLPNNX(nnx.Module):
    def __init__(self, d_in, d_hidden, d_out, *, rngs):
        self.linear1 = nnx.Linear(d_in, d_hidden, rngs=rngs)
        self.linear2 = nnx.Linear(d_hidden, d_out, rngs=rngs)

    def __call__(self, X):
        return self.linear2(jax.nn.relu(self.linear1(X)))


model_nnx = MLPNNX(d_in, S.d_hidden, d_out, rngs=nnx.Rngs(0))
for layer, w, b in ((model_nnx.linear1, "w1", "b1"), (model_nnx.linear2, "w2", "b2")):
    layer.kernel[...] = jnp.asarray(init[w])  # (in, out), like the NumPy layout
    layer.bias[...] = jnp.asarray(init[b])


# %% [markdown]
# An NNX module is also a **pytree**: its leaves are the arrays inside its `Variable`s. So
# everything that takes a pytree takes the module. `jax.grad` of a loss over the module returns
# a module of the same class holding the gradients. `jax.tree.map` over the model and its
# gradients returns an updated model: the JAX step of section 2, with the object in place of
# the dict.

# %%
def loss_nnx(model, X, y):
    return 0.5 * ((model(X) - y) ** 2).sum(axis=1).mean()


@jax.jit
def sgd_step_module(model, X, y, lr):
    grads = jax.grad(loss_nnx)(model, X, y)  # a MLPNNX whose arrays are the gradients
    return jax.tree.map(lambda p, g: p - lr * g, model, grads)  # a new MLPNNX


stepped_module = sgd_step_module(model_nnx, X_jax, y_jax, lr)
print("flax", flax.__version__, "| leaves of the module:", [a.shape for a in jax.tree.leaves(model_nnx)])
print("the step returned a new", type(stepped_module).__name__, "| the old one is unchanged:",
      bool(jnp.array_equal(model_nnx.linear1.kernel[...], init["w1"])))


# %% [markdown]
# The printed leaves are the module's four arrays, in the order JAX's pytree code visits them.
# The step returned a new `MLPNNX`, and `model_nnx` still holds the initial kernel.
#
# `jax.jit` treats the module as a value, like any pytree. The function gets a copy, so a
# change it makes *inside* stays inside unless it returns the module. `nnx.jit`, `nnx.grad` and
# the other NNX transforms write in-place updates back into the objects you passed. A
# PyTorch-style `optimizer.update(...)` needs exactly that.

# %%
def bump_bias(model):
    model.linear2.bias[...] = model.linear2.bias[...] + 1.0  # an in-place update


bias_before = model_nnx.linear2.bias[...]
jax.jit(bump_bias)(model_nnx)
after_jax_jit = model_nnx.linear2.bias[...]
nnx.jit(bump_bias)(model_nnx)
after_nnx_jit = model_nnx.linear2.bias[...]
print("bias moved by jax.jit:", float((after_jax_jit - bias_before).max()),
      "| by nnx.jit:", float((after_nnx_jit - bias_before).max()))
assert jnp.array_equal(after_jax_jit, bias_before)
assert_close(after_nnx_jit, bias_before + 1.0, rtol=0, atol=1e-6, name="bias after nnx.jit")
model_nnx.linear2.bias[...] = bias_before  # undo, so the model is back at the shared weights

# %% [markdown]
# `jax.jit` moved the bias by 0 and `nnx.jit` by 1, as the assertions check. Under `jax.jit`,
# as for any pure function, the only way out is the return value.
#
# NNX's other spelling is its object style. `nnx.Optimizer` updates the module in place, like
# `torch.optim`, and `nnx.jit` writes the changes back. Before the step, the cell keeps two
# records of the weights. `nnx.split` separates the module into its `graphdef`, the structure,
# and its `state`, a pytree of its variables. `nnx.to_pure_dict` turns that state into plain
# arrays.

# %%
graphdef, state = nnx.split(model_nnx)  # the structure, and the module's variables
snapshot = nnx.to_pure_dict(state)  # the same weights as plain arrays: immutable values
optimizer_nnx = nnx.Optimizer(model_nnx, optax.sgd(lr), wrt=nnx.Param)


@nnx.jit
def train_step_nnx(model, optimizer, X, y):
    optimizer.update(model, nnx.grad(loss_nnx)(model, X, y))  # changes both objects in place


train_step_nnx(model_nnx, optimizer_nnx, X_jax, y_jax)


# %%
def as_flat(tree):  # NNX's nested names -> the flat names of section 2: {'w1', 'b1', ...}
    return {"b1": tree["linear1"]["bias"], "b2": tree["linear2"]["bias"],
            "w1": tree["linear1"]["kernel"], "w2": tree["linear2"]["kernel"]}


assert_close(as_flat(nnx.to_pure_dict(nnx.state(stepped_module))), step_jax, rtol=1e-5, atol=1e-6,
             name="NNX module as a pytree")
assert_close(as_flat(nnx.to_pure_dict(nnx.state(model_nnx))), step_jax, rtol=1e-5, atol=1e-6,
             name="NNX object style")
assert_close(as_flat(nnx.to_pure_dict(state)), step_jax, rtol=1e-5, atol=1e-6, name="state from nnx.split")
assert_close(as_flat(snapshot), init, rtol=0, atol=0, name="snapshot")  # still the start
print("state refers to the module's own Variable:", state["linear1"]["kernel"] is model_nnx.linear1.kernel)
assert state["linear1"]["kernel"] is model_nnx.linear1.kernel

# %% [markdown]
# Both NNX spellings give the JAX step of section 2, and so PyTorch's. The two records show
# what NNX shares. The `state` holds the module's own `Variable` objects, so it now shows the
# updated weights, like the NumPy dict of section 1.1. The snapshot still holds the initial
# weights. The arrays inside a `Variable` are immutable: the update put new arrays in, and the
# snapshot kept the old ones.
#
# So NNX keeps one layer of the imperative style: the `Variable` objects are shared, not the
# arrays. To keep a value, keep the arrays with `nnx.to_pure_dict`, or a whole module with
# `nnx.clone`. Use `nnx.split` when you want the state alone: to save it with Orbax, to keep
# only some kinds of variables, or to jit a pure step that `nnx.merge`s the model back, as
# lesson 04 §5 does.

# %% [markdown]
# ## 3. Arrays: in place and views vs immutable
#
# The same choice, one level down. A PyTorch tensor is a mutable buffer. `add_`, item
# assignment and every method ending in `_` write into it, and slices and `view`s are windows
# onto the same memory. That is efficient and familiar from NumPy, and it is the source of
# aliasing bugs like the one in section 1.1.
#
# A JAX array is a value. Nothing writes into it, so a slice cannot change its parent, and an
# array you kept cannot change behind your back. JAX needs this because its transformations
# treat a program as data flow, each array computed once from others. An array that meant one
# thing before a write and another after it would have no single meaning for `grad`, `vmap` or
# `jit` to work on. So an update is an expression that returns a new array.
#
# **Key concepts**
# - PyTorch tensors change in place with `add_` or `t[i] = v`; slices and `view` share storage.
# - JAX arrays never change. Item assignment raises, and `x.at[idx].set/add/mul/...` returns a
#   new array. Under `jit`, XLA may write the update into the old buffer when the array was made
#   inside the function. It reuses an argument's buffer, such as the parameters', only when the
#   caller donates it (lesson 03 §7.2).

# %%
# PyTorch: a slice is a view of the same storage
x_torch = torch.zeros(5)
window = x_torch[1:3]
window.add_(1.0)  # in place through the view...
x_torch[0] = 7.0  # ...and item assignment
print(x_torch, "| the slice shares x_torch's storage:",
      window.untyped_storage().data_ptr() == x_torch.untyped_storage().data_ptr())
updated_torch = x_torch.clone()

# %% [markdown]
# `window` and `x_torch` share one storage, the same data pointer, so the `add_` through the
# view shows up in `x_torch`. `updated_torch` is a clone of the result, kept for the
# comparison. The same natural code in JAX raises:

# %%
# JAX
x_jax = jnp.zeros(5)
with expect_error(TypeError):
    x_jax[0] = 7.0

# %% [markdown]
# The `TypeError` names the fix. `x_jax.at[idx]` is not an array but a helper that records the
# index. `.set`, `.add`, `.mul`, `.min`, `.max` and a few more then build the updated array.
# Chained, they read like the in-place code they replace, and `x_jax` stays as it was:

# %%
# JAX
x_jax = jnp.zeros(5)
updated_jax = x_jax.at[1:3].add(1.0).at[0].set(7.0)
print(updated_jax, "| x_jax is still", x_jax)

# %%
assert_close(updated_torch, updated_jax, rtol=0, atol=0, name="updated array")
assert not x_jax.any()  # the original never changed

# %% [markdown]
# Repeated indices are a sharp bit on the PyTorch side. `t[idx] += 1` reads `t[idx]`, adds one
# and writes back, so a repeated index is written, not accumulated. PyTorch documents the
# result with duplicates as undefined. `index_add_` accumulates, and so does JAX's `.at[].add`.

# %%
idx_np = np.array([0, 2, 2, 2])
counts = np.zeros(4, np.float32)
np.add.at(counts, idx_np, 1.0)  # the NumPy oracle: [1, 0, 3, 0]

# %%
# PyTorch
naive_torch = torch.zeros(4)
naive_torch[torch.from_numpy(idx_np)] += 1.0  # repeated index 2 is not accumulated
counts_torch = torch.zeros(4).index_add_(0, torch.from_numpy(idx_np), torch.ones(4))

# %%
# JAX
counts_jax = jnp.zeros(4).at[idx_np].add(1.0)

# %%
print("t[idx] += 1:", naive_torch, "| index_add_:", counts_torch, "| .at[].add:", counts_jax)
assert_close(counts_torch, counts, name="index_add_")
assert_close(counts_jax, counts, name=".at[].add")
assert naive_torch[2] != counts[2]  # the natural PyTorch code undercounts

# %% [markdown]
# Index 2 appears three times. `naive_torch` counted it once, while `index_add_`, `.at[].add`
# and NumPy's `np.add.at` counted three. In JAX the natural spelling, `.at[idx].add`, is the
# safe one: a JAX array has no in-place `+=`. This operation is behind histograms, embedding-gradient updates
# and segment sums.
#
# In-place operations also meet autograd. Changing a tensor that the backward pass needs is
# caught, but only when `backward()` runs:

# %%
# PyTorch
w_torch = torch.ones(3, requires_grad=True)
h_torch = torch.sigmoid(2 * w_torch)  # sigmoid saves its output for the backward pass
h_torch.mul_(2.0)  # ...which this line overwrites
with expect_error(RuntimeError):
    h_torch.sum().backward()

# %% [markdown]
# The message explains the mechanism. Every tensor carries a version counter that in-place
# operations increment. Autograd remembers the version of each tensor it saved, and the
# backward pass compares the two. It catches in-place operations on the tensor and its views,
# but only in `backward()`, which may be far from the line that caused it. The hint about
# anomaly detection is how you find that line. A write through `.data` escapes the check and
# gives a silently wrong gradient.
#
# The fix is the out-of-place `h_torch = h_torch * 2`. In JAX there is nothing to overwrite, so
# this class of error does not exist:

# %%
# PyTorch
w_torch = torch.ones(3, requires_grad=True)
h_torch = torch.sigmoid(2 * w_torch)
h_torch = h_torch * 2.0
h_torch.sum().backward()

# %%
# JAX
grad_jax = jax.grad(lambda w: (jax.nn.sigmoid(2 * w) * 2.0).sum())(jnp.ones(3))

# %%
assert_close(w_torch.grad, grad_jax, rtol=1e-6, atol=1e-7, name="gradient")
print("same gradient:", grad_jax)

# %% [markdown]
# The same gradient, `4 σ(2)(1 − σ(2))` in each component. In JAX the bug cannot be written: no
# operation scales `h` in place.

# %% [markdown]
# ### 3.1 The sharp bit: immutable only once the copy has happened
#
# A JAX array never changes, but *making* one from NumPy or PyTorch memory may be a copy made
# later, or no copy at all. JAX transfers asynchronously: its documentation of `jax.device_put`
# says "This function is always asynchronous". On the CPU it may also read the NumPy buffer in
# place. Either way, a write to the source after the conversion can show in the JAX array. An
# optimizer step on weights you have just converted is such a write. The window is widest
# while JAX is busy, so this cell queues a matmul first:

# %%
busy = jnp.ones((S.busy_n, S.busy_n))
matmul = jax.jit(lambda a: a @ a)
matmul(busy).block_until_ready()  # compile outside the experiment
saw_later_write = []
for _ in range(10):
    matmul(busy)  # JAX has work queued
    w_torch = torch.zeros(8)  # PyTorch weights...
    w_jax = jnp.asarray(w_torch.numpy())  # ...converted to JAX...
    w_torch.add_(1.0)  # ...then updated in place, as optimizer.step() does
    saw_later_write.append(bool(w_jax[0] == 1.0))
print(f"the JAX array saw the later in-place write in {sum(saw_later_write)} of 10 tries")

# %% [markdown]
# Read the count as an existence proof, not a rate. Any number above 0 means that a JAX array,
# which is supposed never to change, showed a value written after it was made. A count of 0 on
# your machine does not make the pattern safe, only lucky this time.
#
# Waiting with `block_until_ready()` before changing the source is not a fix. On the CPU, JAX
# may keep using the NumPy buffer instead of copying it, and even `jnp.array`, which promises a
# copy, may make it later. The fix that holds on every version and device is a copy made on the
# host first, which nothing else will change: `w_torch.clone()` or `np.array(..., copy=True)`.

# %%
saw_later_write = []
for _ in range(10):
    matmul(busy)
    w_torch = torch.zeros(8)
    w_jax = jnp.asarray(w_torch.clone().numpy())  # JAX gets a copy no one else holds
    w_torch.add_(1.0)
    saw_later_write.append(bool(w_jax[0] == 1.0))
assert not any(saw_later_write)
print("made from a clone, the JAX array kept the values it was made from")

# %% [markdown]
# With the clone, nothing else holds the memory JAX reads from, so no later write can reach it;
# the assertion checks all ten tries. The rule holds whenever JAX may read memory that PyTorch
# owns, through `.numpy()` or through DLPack: if the source may change, hand over a copy.
# Lesson 06 returns to zero-copy exchange between the frameworks.

# %% [markdown]
# ## 4. Side effects under `jax.jit`
#
# A PyTorch user reads a function's body as what happens each time it is called. Under
# `jax.jit` that holds only for the first call with a given input shape and dtype. `jit` calls
# your Python function once with **tracers**, stand-ins that carry a shape and a dtype but no
# values, and compiles the JAX operations they pass through. So anything else the function does
# happens once, during tracing: printing, appending to a list, reading a global. That is the
# price of purity; section 6.1 shows the payoff.
#
# **Key concepts**
# - `jax.jit` runs your Python function **once per input shape and dtype**. Later calls run the
#   compiled program and skip the Python.
# - So `print` and `list.append` run at trace time only. `jax.debug.print` is an operation in
#   the program and runs on every call.
# - A global read inside a jitted function is frozen into the program at trace time. Pass it as
#   an argument instead.
# - Eager PyTorch runs every line on every call, so none of this happens there. Lesson 03 shows
#   the guards `torch.compile` puts on the Python values it compiled in.

# %%
# PyTorch: eager
log_torch = []


def double_torch(x):
    print("  running double_torch with", x)
    log_torch.append(x)
    return x * 2


results_torch = [double_torch(torch.tensor(v)) for v in (1.0, 2.0, 3.0)]
print("python body ran", len(log_torch), "times")

# %%
# JAX: under jit
log_jax = []


@jax.jit
def double_jax(x):
    print("  tracing double_jax with", x)
    log_jax.append(x)
    return x * 2


results_jax = [double_jax(jnp.asarray(v)) for v in (1.0, 2.0, 3.0)]
print("python body ran", len(log_jax), "time(s); it saw", log_jax[0])

# %%
assert_close(results_torch, results_jax, name="double")
assert len(log_jax) == 1  # traced once; the other calls reused the compiled program
print("same results; the jitted print ran once, at trace time")


# %% [markdown]
# PyTorch ran the body three times and printed three values. The jitted body ran once, and what
# it printed and kept in `log_jax` was a tracer, not a number. Its printed form, worded
# differently across jax versions, shows a float32 scalar with no value yet. The results still
# agree, because the compiled program does the arithmetic; only the Python around it was
# skipped.
#
# To see values on every call, make the print part of the program with `jax.debug.print`:

# %%
@jax.jit
def double_debug(x):
    jax.debug.print("  inside the compiled program: x = {x}", x=x)
    return x * 2


for v in (1.0, 2.0, 3.0):
    double_debug(jnp.asarray(v)).block_until_ready()

# %% [markdown]
# Three calls, three lines, with the actual values. `jax.debug.print` is an operation in the
# compiled program, which calls back into Python when the program runs. Use it for debugging
# and take it out afterwards: on an accelerator each call has to bring the value back to the
# host.
#
# Globals are read once, while tracing. Change the global afterwards and the compiled program
# does not notice:

# %%
scale = 2.0


@jax.jit
def apply_scale(x):
    return x * scale  # the value of scale is baked in when this is traced


first = apply_scale(jnp.ones(3))
scale = 10.0
second = apply_scale(jnp.ones(3))  # same shape and dtype: the cached program runs
print("before:", first, "after changing scale:", second)


# %% [markdown]
# Both calls returned 2s. The second call ran the program compiled during the first, in which
# `scale` is the constant 2.0. Eager PyTorch reads the global on every call. The JAX fix is to
# make `scale` an argument, an input of the program rather than a constant inside it:

# %%
# PyTorch: eager
def apply_scale_torch(x):
    return x * scale


# %%
# JAX
@jax.jit
def apply_scale_jax(x, scale):
    return x * scale


# %%
assert_close(second, jnp.full(3, 2.0), name="stale global")  # still the old 2.0
assert_close(apply_scale_torch(torch.ones(3)), apply_scale_jax(jnp.ones(3), scale), name="scale")
print("with scale as an argument both frameworks use the current value:", scale)

# %% [markdown]
# As an argument, a new `scale` is used without recompiling, since a new Python float has the
# same shape and dtype. The rule that follows: a jitted function reads its inputs from its
# arguments, and everything else it touches stays constant for the life of the program.

# %% [markdown]
# ## 5. Randomness: a global generator vs explicit keys
#
# Random numbers are state: a generator holds a position in its sequence and moves it on every
# draw. PyTorch keeps that state in a hidden global generator. That is convenient, and it makes
# results depend on every draw anywhere in the program, in the order they happened.
#
# A hidden state cannot live in a pure function, so JAX passes it explicitly. A **key** is a
# value. A random function is a pure function of the key and the shape, and the same key always
# gives the same numbers. You make new keys with `split`, several independent keys from one, or
# `fold_in`, a key derived from a key and an integer. This also lets randomness compose with the
# transformations: under `jit` the key is an input of the program, and under `vmap` each example
# can get its own key.
#
# **Key concepts**
# - PyTorch draws from a hidden **global generator** that `torch.manual_seed` resets. A
#   `torch.Generator` gives a private stream.
# - A typed JAX key from `jax.random.key(seed)` is a value, and the same key always gives the
#   same numbers. `split` and `fold_in` make new keys.
# - The classic JAX mistake is reusing a key, which silently repeats the "random" numbers.

# %%
# PyTorch
torch.manual_seed(0)
a_torch = torch.randn(3)
torch.manual_seed(0)
torch.randn(1)  # an unrelated draw elsewhere (a new layer, a dropout)...
b_torch = torch.randn(3)  # ...changes every number drawn after it
c_torch = torch.randn(3, generator=torch.Generator().manual_seed(0))  # a private stream
print("a:", a_torch, "\nb:", b_torch, "\nc:", c_torch)
assert not torch.equal(a_torch, b_torch) and torch.equal(a_torch, c_torch)

# %%
# JAX
key, key_init, key_dropout = jax.random.split(jax.random.key(0), 3)  # one key per purpose, made first
a_jax = jax.random.normal(key, (3,))
jax.random.normal(jax.random.key(1), (1,))  # other draws cannot interfere
b_jax = jax.random.normal(key, (3,))
print("a:", a_jax, "\nb:", b_jax, "\nkey:", key)
assert jnp.array_equal(a_jax, b_jax)

# %% [markdown]
# In PyTorch, `a_torch` and `b_torch` came from the same seed, yet differ: the one-number draw in
# between shifted the stream by one. The private generator gave `c_torch` the same numbers as
# `a_torch`, because no other code draws from it. In JAX, `a_jax` and `b_jax` are identical. The
# draw in between used its own key, and the printed key is just a value, unchanged by use.
#
# The two frameworks use different generators: Mersenne Twister or Philox in PyTorch, Threefry
# in JAX. So they never produce the same numbers from "the same" seed. What must agree is the
# distribution:

# %%
draws_torch = torch.randn(S.n_draws, generator=torch.Generator().manual_seed(2))
draws_jax = jax.random.normal(jax.random.key(2), (S.n_draws,))  # a seed not used above
moments = {name: (float(d.mean()), float(d.std())) for name, d in
           (("PyTorch", draws_torch), ("JAX", draws_jax))}
tol = 5 / np.sqrt(S.n_draws)  # five standard errors
assert_close(moments["PyTorch"], (0.0, 1.0), rtol=0, atol=tol, name="torch N(0,1)")
assert_close(moments["JAX"], (0.0, 1.0), rtol=0, atol=tol, name="jax N(0,1)")
moments

# %% [markdown]
# Both sample means lie within `5 / √n_draws` of 0, and both standard deviations within the
# same distance of 1. That is the tolerance the assertions use, five standard errors of the
# mean: two different generators, one distribution.
#
# ### 5.1 The sharp bit: reusing a key
#
# Nothing fails: the numbers are just not independent. Two layers initialised with one key get
# the same weights, and a dropout mask drawn with the same key every step never changes.

# %%
w_layer1 = jax.random.normal(key, (4,))
w_layer2 = jax.random.normal(key, (4,))  # same key: same "random" weights
masks = [jax.random.bernoulli(key, 0.5, (8,)) for step in range(3)]  # same mask each step
print("layer weights equal:", bool(jnp.array_equal(w_layer1, w_layer2)))
print("dropout masks:\n", jnp.stack(masks).astype(int))

# %% [markdown]
# Identical layer weights, and one mask three times over. Nothing warns, because nothing is
# wrong as far as JAX can tell: a key always gives the same numbers, which is exactly what makes
# JAX's randomness reproducible. The fix: one key per use, from `split`, and one key per step,
# from `fold_in`.

# %%
key_layer1, key_layer2 = jax.random.split(key_init)  # key_init has not been used yet
w_layer1 = jax.random.normal(key_layer1, (4,))
w_layer2 = jax.random.normal(key_layer2, (4,))
masks = [jax.random.bernoulli(jax.random.fold_in(key_dropout, step), 0.5, (8,)) for step in range(3)]
print("dropout masks:\n", jnp.stack(masks).astype(int))
assert not jnp.array_equal(w_layer1, w_layer2)
assert not all(jnp.array_equal(masks[0], m) for m in masks[1:])

# %% [markdown]
# Now the steps draw different masks, and the two layers get different weights. A habit that
# prevents the mistake: treat a key as used up once it has gone into a random function, and
# derive a fresh one for every other use.
#
# Lesson 09, section 4, returns to randomness: why one seed gives two different masks,
# deterministic kernels and one stream per rank.

# %% [markdown]
# ## 6. Define-by-run vs trace-and-compile
#
# Sections 1 to 5 were about state; this one is about execution. Both frameworks run
# operations one by one by default. They differ in what they keep. Eager PyTorch builds the
# autograd graph during every forward pass whose inputs require a gradient, and frees it after
# `backward()`. JAX keeps nothing while it runs eagerly. Its transformations work on a
# **jaxpr**, the program that tracing produces. `grad` differentiates it, `vmap` batches it,
# and `jit` hands it to the XLA compiler.
#
# **Key concepts**
# - PyTorch records the autograd graph **while** the forward pass runs. This is called
#   define-by-run: Python control flow on tensor values just works, and the graph is rebuilt on
#   every step.
# - JAX runs op by op too, until you `jit`. Then it traces the function into a **jaxpr**,
#   compiles that with **XLA**, and caches the result per input shape and dtype.
# - A Python `if` on a traced value cannot be decided while tracing. Use `jnp.where` or
#   `jax.lax.cond`, which become part of the program.
#
# Here is the whole graph PyTorch recorded for one loss of the model from section 2. Each node
# is a backward function, and `next_functions` lists the nodes it sends gradients on to,
# towards the inputs. A breadth-first walk from the loss prints every node once, with its
# distance from the loss. `AccumulateGrad` nodes are the leaves: they add the gradient into a
# parameter's `.grad`.

# %%
# PyTorch
root = loss_torch(model_torch, X_torch, y_torch).grad_fn
depth, order = {root: 0}, [root]
for node in order:  # breadth first: `order` grows while the loop walks it
    for child, _ in node.next_functions:
        if child is not None and child not in depth:  # None: an input with no gradient (X, y)
            depth[child] = depth[node] + 1
            order.append(child)

param_names = {id(p): name for name, p in model_torch.named_parameters()}
print("depth  node")
for node in order:
    leaf = f" ({param_names[id(node.variable)]})" if hasattr(node, "variable") else ""
    print(f"{depth[node]:>5}  {type(node).__name__}{leaf}")
print(len(order), "nodes, of which", sum(hasattr(n, "variable") for n in order), "are parameters")

# %% [markdown]
# Read the table from the top. The loss is `MulBackward0`, for the `0.5 *`; then come the mean,
# sum, square and difference, then the second layer, `AddmmBackward0`, a fused matmul plus bias.
# The four parameters are `AccumulateGrad` leaves. The `TBackward0` nodes are the transposes
# `nn.Linear` applies to its `(out, in)` weights. This graph was built during the forward pass
# just run, and `backward()` would walk it once and free it.
#
# JAX records nothing while an eager function runs. `jax.make_jaxpr` shows the program that
# tracing produces, which is what `jit` hands to XLA and what `grad` transforms:

# %%
# JAX
print(jax.make_jaxpr(loss_jax)(params_jax, X_jax, y_jax).pretty_print(use_color=False))


# %% [markdown]
# The jaxpr first lists its typed inputs, such as `a:f32[16]`: the four parameters in the
# pytree's flattened order, then `X` and `y`. Then comes one line per primitive: `dot_general`
# for each matmul, `broadcast_in_dim` for the bias, `relu` as a small named sub-program, and the
# reductions of the loss. The shapes are fixed in it, which is why `jit` compiles again for a
# new input shape. It holds no gradient: `grad` would produce a second jaxpr from this one.
#
# Control flow that depends on values is where the two models part. In PyTorch it is ordinary
# Python:

# %%
# PyTorch
def damp_if_negative(x):
    if x.sum() > 0:
        return x
    return 0.1 * x


v_np = np.array([-1.0, -2.0, 0.5], np.float32)
damped_torch = damp_if_negative(torch.from_numpy(v_np))
damped_torch

# %% [markdown]
# Under `jit` the same function sees a tracer, whose sum has no value yet, so `if` cannot
# choose:

# %%
# JAX
with expect_error(jax.errors.TracerBoolConversionError, lines=2):
    jax.jit(damp_if_negative)(jnp.asarray(v_np))


# %% [markdown]
# The `TracerBoolConversionError` says exactly that. Python asked the tracer for `True` or
# `False`, and the answer depends on the argument `x`, which has no value while tracing. Without
# `jit` the same function runs fine on a JAX array, since eager values are concrete.
#
# The fix puts the branch into the program with `jax.lax.cond`, or `jnp.where` for an
# elementwise choice:

# %%
# JAX
@jax.jit
def damp_if_negative_jax(x):
    return jax.lax.cond(x.sum() > 0, lambda x: x, lambda x: 0.1 * x, x)


damped_jax = damp_if_negative_jax(jnp.asarray(v_np))
assert_close(damped_torch, damped_jax, name="damped")
damped_jax


# %% [markdown]
# Same result as PyTorch. `lax.cond` puts both branches into the program and chooses at run
# time. Under `vmap` with a batched predicate it becomes a `select` that computes both, and
# under `grad` it differentiates the branch that was taken. Lesson 03 covers loops and the cost
# of each form of control flow under compilation.

# %% [markdown]
# ### 6.1 What tracing buys: one measurement
#
# Eager execution pays Python and dispatch costs for every operation; a compiled program pays
# them once. Here is the loss and gradient of the small MLP, eager in both frameworks and jitted
# in JAX. `compare` first checks that the variants agree, then times them:

# %%
def grads_torch():
    model_torch.zero_grad()
    loss = loss_torch(model_torch, X_torch, y_torch)
    loss.backward()
    return loss.detach(), {"b1": model_torch.linear1.bias.grad, "b2": model_torch.linear2.bias.grad,
                           "w1": model_torch.linear1.weight.grad.T, "w2": model_torch.linear2.weight.grad.T}


# model_torch has taken one SGD step in section 2: JAX starts from the same weights, step_torch
params_now = {k: jnp.asarray(v.numpy()) for k, v in step_torch.items()}  # clones no one writes to
dev, _ = SETUP.pair()  # the device kind both frameworks share (lesson 00): the CPU on a TPU machine
model_torch.to(dev)
X_torch, y_torch = X_torch.to(dev), y_torch.to(dev)
value_and_grad = jax.value_and_grad(loss_jax)
value_and_grad_jit = jax.jit(value_and_grad)

# %%
comparison = timing.compare(
    {
        "PyTorch eager": grads_torch,
        "JAX eager": lambda: value_and_grad(params_now, X_jax, y_jax),
        "JAX jit": lambda: value_and_grad_jit(params_now, X_jax, y_jax),
    },
    baseline="JAX eager", rtol=1e-4, atol=1e-5, rounds=S.rounds,
)
comparison

# %% [markdown]
# Two fair questions each change one thing: the framework, PyTorch eager against JAX eager,
# and compiling, JAX eager against JAX jit. Both share JAX eager, the baseline of the
# `vs JAX eager` column. `claims.faster` judges each question from the per-round ratios, with
# lesson 00's rule.

# %%
for b in ("PyTorch eager", "JAX jit"):
    print(claims.faster(comparison, "JAX eager", b))

# %% [markdown]
# The first line is the cost of the framework, the second what tracing saves. Eager JAX
# dispatches every operation of the loss and its gradient on its own, each with its own Python
# overhead, and a model this small is dominated by that overhead. `jit` removes it. On a GPU
# each eager operation also launches a kernel, and a compiled program launches fewer by fusing
# operations.
#
# The `first call` column is where JAX pays for compiling. `JAX jit` traces and compiles the
# whole function once per input shape and dtype. Eager JAX compiles each operation the first
# time it meets a new shape and dtype, so its first call pays too, one small program per
# operation. Later calls reuse the cached programs. Lesson 03 measures compile times and
# `torch.compile`.

# %% [markdown]
# ## Summary
#
# One choice runs through the lesson. PyTorch lets objects own state and change it; JAX makes
# state a value that goes into a function and comes out new. Flax NNX gives back the object
# style where it helps, on top of the same functional core.
#
# | task | PyTorch | JAX |
# |---|---|---|
# | hold parameters | `nn.Module` attributes | a pytree of arrays: a dict, or an NNX module; `nnx.split` → `graphdef, state` for the state alone |
# | one SGD step | `opt.zero_grad(); loss.backward(); opt.step()`, in place | `jax.tree.map(lambda p, g: p - lr * g, params, jax.grad(loss)(params, ...))` |
# | update an element | `t[i] = v`, `t.add_(1)` | `x = x.at[i].set(v)`, `x.at[i].add(1)` |
# | scatter-add | `t.index_add_(0, idx, src)` | `x.at[idx].add(src)` |
# | print inside | `print(t)` | `jax.debug.print("{}", x)` under `jit` |
# | seed | `torch.manual_seed(0)` or a `torch.Generator` | `key = jax.random.key(0)`; `split`, `fold_in` |
# | branch on a value | `if t.sum() > 0:` | `jax.lax.cond(x.sum() > 0, f, g, x)` |
#
# **Common misconceptions**, each corrected above:
# - *"`model.params()` gives me a copy."* It gives the model's own arrays, §1.1.
# - *"An NNX module must be split before `jax.jit` or `jax.grad`."* It is a pytree and goes in
#   directly. What `jax.jit` loses is an in-place update made inside, which `nnx.jit` writes
#   back, §2.1.
# - *"`nnx.split` copies the model."* Its state holds the module's `Variable`s; only the arrays
#   inside are immutable, §2.1.
# - *"A print inside a jitted function shows every call."* It runs once, at trace time, §4.
# - *"Changing a global changes the jitted function."* The value was baked in at trace time, §4.
# - *"The same seed gives the same numbers in both frameworks."* Different generators; only the
#   distribution agrees, §5.
# - *"`t[idx] += 1` counts repeated indices."* It does not; `index_add_` and `.at[].add` do, §3.
# - *"A JAX array made from a tensor can never change."* Not while it may still read the
#   tensor's memory: hand JAX a clone if the tensor will change, §3.1.
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("01_design_philosophy")

# %% [markdown]
# **Next:** the exercises in `exercises/01_design_philosophy_exercises.ipynb`. You write a pure
# SGD update over a pytree, a scatter-add in both frameworks, dropout keys over several steps,
# a jit-safe running statistic, and a port of a PyTorch module to Flax NNX. Then lesson 02,
# automatic differentiation.
