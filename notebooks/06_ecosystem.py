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
# # 06 · The ecosystems, side by side
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/06_ecosystem.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/06_ecosystem.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/06_ecosystem.ipynb)
#
# A framework is also the libraries around it. PyTorch ships its optimisers, checkpoints and
# data loader in the box. JAX keeps its core small and leaves them to separate libraries:
# Optax, Orbax, Grain. This lesson puts each pair side by side, proves that they compute the
# same thing, and finds the defaults that differ.
#
# **Learning objectives.** After this notebook you can
# 1. place each JAX library next to its PyTorch counterpart, and make an Optax chain follow a
#    `torch.optim` setup step for step;
# 2. checkpoint and resume training bit for bit with Orbax and with PyTorch, and export a
#    model with `torch.export` and `jax.export`;
# 3. hand arrays between the frameworks with DLPack without being surprised by a write, call
#    a jitted JAX function inside a PyTorch training step, and run one Keras 3 model on both
#    backends.

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
    "n_examples": (None, 600),  # digits used (None: all 1,797)
    "hidden": (64, 32),  # hidden width of the MLP
    "batch": (64, 64),  # minibatch size
    "opt_steps": (100, 20),  # optimiser steps compared step by step
    "ckpt_steps": (15, 5),  # steps before, and again after, the checkpoint (2k > one epoch)
    "busy_side": (1024, 512),  # side of the matmul that keeps JAX busy in section 6.1
    "alias_tries": (20, 20),  # tries per case of the in-place write
    "keras_batch": (256, 64),  # Keras model: batch
    "keras_width": (256, 128),  # Keras model: hidden width
    "target_s": (1.0, 0.2),  # seconds spent per timed variant
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import io
import inspect
import re
import itertools
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax
import orbax.checkpoint as ocp
import torch
import torch.nn.functional as F
from flax import nnx
from IPython.display import Markdown, display

from course_utils import claims, compat, config, data, keras_backends, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close, max_abs_diff

S = config.sizes(SIZES, SMOKE)
tmp_root = Path(tempfile.mkdtemp(prefix="course06-"))  # every file this lesson writes
print(env.report().line())


# %% [markdown]
# The line records the versions, each framework's device and the float32 precision. This
# lesson compares the frameworks, so both run on one device kind: on a TPU machine, the CPU.
#
# ## 1. The library map
#
# **Key concepts**
# - PyTorch bundles models, optimisers, data loading and checkpoints in one package. JAX's
#   core is arrays and transformations; the rest comes from separate libraries.
# - What lets those libraries fit together is a convention, not a base class: each one takes
#   and returns **pytrees** of arrays.
#
# An Optax optimiser state, a Flax NNX model's state and what Orbax saves are all pytrees, so
# the libraries compose without adapters. In PyTorch, `nn.Module`, `optim.Optimizer` and
# `state_dict()` are classes of one package that know each other. In JAX you pin several
# libraries whose defaults were set by different people, and §2 finds where they differ.
#
# | job | PyTorch | JAX | here |
# |---|---|---|---|
# | models | `torch.nn` | Flax NNX; Equinox | [§3](#3.-Checkpoints); Equinox not shown |
# | optimisers | `torch.optim`, `lr_scheduler` | Optax | [§2](#2.-Optimisers) |
# | checkpoints | `torch.save`; `torch.distributed.checkpoint` | Orbax | [§3](#3.-Checkpoints) |
# | data loading | `DataLoader` | Grain, or any NumPy iterator | [§4](#4.-Data-loading); Grain not shown |
# | export | `torch.export` → ExecuTorch, AOTInductor | `jax.export` → StableHLO | [§5](#5.-Export) |
# | interop | `torch.from_dlpack` | `jax.dlpack.from_dlpack` | [§6](#6.-Interop) |
# | multi-backend | Keras 3 on `torch` | Keras 3 on `jax` | [§7](#7.-Keras-3) |
# | model hubs | Hugging Face Hub | Hugging Face Hub, Kaggle Models, KerasHub | not shown: no network at run time |
# | training loops | PyTorch Lightning | hand-written loops, Keras `fit` | not shown |

# %% [markdown]
# ## 2. Optimisers
#
# **Key concepts**
# - **Optax** builds an optimiser as a chain of gradient transformations, such as
#   `clip_by_global_norm` then `adamw`. The schedule is a function of the step count kept in
#   the optimiser state.
# - **`torch.optim`** changes the parameters in `step()`. Clipping is a separate call,
#   `clip_grad_norm_`, and the schedule a separate object from `lr_scheduler`.
# - Same maths, **different defaults**: the same code with default arguments follows a
#   different trajectory.
#
# The two libraries also differ in shape. In PyTorch, `loss.backward()` writes `.grad`, and
# `opt.step()` changes the parameters in place. In Optax an optimiser is a pair of pure
# functions: `tx.init(params)` returns a state, and `tx.update(grads, state, params)` returns
# the updates and the new state. `optax.apply_updates` adds the updates, already scaled by
# the negative learning rate. Because the state is a value, a whole training step fits
# inside one `jax.jit`.
#
# The task: a two-layer MLP on the digits, trained with clipping, AdamW, and a warm-up
# followed by cosine decay. Both sides start from one NumPy dict of weights and read one
# list of NumPy batches, so the optimisers are the only difference left. The batches come
# from a plain generator, the natural data loader in JAX.

# %%
def batch_indices(n, batch, seed, epoch=0):
    """One epoch's minibatches of row indices; the last, short batch is dropped."""
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return [order[i : i + batch] for i in range(0, n - n % batch, batch)]


def numpy_batches(X, y, batch, seed, epochs=1):
    for epoch in range(epochs):
        for rows in batch_indices(len(X), batch, seed, epoch):
            yield X[rows], y[rows]


split = data.load_digits(seed=0, limit=S.n_examples)
X_np = split.X_train.reshape(len(split.X_train), -1)  # (n, 64): flattened 8x8 images
y_np = split.y_train
epochs = -(-S.opt_steps // (len(X_np) // S.batch))  # enough epochs for opt_steps batches
batch_list = list(itertools.islice(numpy_batches(X_np, y_np, S.batch, seed=0, epochs=epochs), S.opt_steps))

# %%
rng = np.random.default_rng(0)
init = {  # JAX layout, keys in the order jax sorts them: W is (in, out)
    "W1": (rng.standard_normal((64, S.hidden)) / 8).astype(np.float32),
    "W2": (rng.standard_normal((S.hidden, 10)) / np.sqrt(S.hidden)).astype(np.float32),
    "b1": np.zeros(S.hidden, np.float32),
    "b2": np.zeros(10, np.float32),
}
hp = dict(peak_lr=1e-2, start_factor=0.1, warmup=S.opt_steps // 5, total=S.opt_steps,
          end_lr=1e-4, clip=1.0, beta1=0.9, beta2=0.999, eps=1e-8)
print(f"{len(batch_list)} batches of {S.batch}; hyper-parameters: {hp}")


# %% [markdown]
# The schedule starts at a tenth of the peak, warms up over the first fifth of the steps,
# then follows a cosine down to `end_lr`. A PyTorch `Linear` stores its weight as
# `(out, in)`, the transpose of JAX's layout, so two helpers convert.

# %%
# PyTorch: the same MLP, loaded from `init` and read back in JAX layout
def make_torch_mlp(params):
    model = torch.nn.Sequential(torch.nn.Linear(64, S.hidden), torch.nn.Tanh(), torch.nn.Linear(S.hidden, 10))
    with torch.no_grad():
        for layer, i in ((model[0], 1), (model[2], 2)):
            layer.weight.copy_(torch.from_numpy(np.array(params[f"W{i}"]).T))
            layer.bias.copy_(torch.from_numpy(np.array(params[f"b{i}"])))
    return model


def torch_params(model):
    """Parameters as numpy arrays in JAX layout (W transposed back to (in, out))."""
    return {"W1": model[0].weight.detach().T.numpy().copy(), "W2": model[2].weight.detach().T.numpy().copy(),
            "b1": model[0].bias.detach().numpy().copy(), "b2": model[2].bias.detach().numpy().copy()}


# %% [markdown]
# PyTorch needs three objects that cooperate: `AdamW`, a `SequentialLR` of linear warm-up and
# cosine annealing, and `clip_grad_norm_`. Clipping sits between `backward()` and `step()`,
# and `sched.step()` comes after `opt.step()`. Each run keeps the parameters after every
# step.

# %%
# PyTorch
def make_optimizer_torch(model, weight_decay=None):
    kw = {} if weight_decay is None else {"weight_decay": weight_decay}
    opt = torch.optim.AdamW(model.parameters(), lr=hp["peak_lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"], **kw)
    warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=hp["start_factor"], total_iters=hp["warmup"])
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=hp["total"] - hp["warmup"], eta_min=hp["end_lr"])
    return opt, torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[hp["warmup"]])


def train_torch(weight_decay=None):
    model = make_torch_mlp(init)
    opt, sched = make_optimizer_torch(model, weight_decay)
    trajectory = []
    for X, y in batch_list:
        loss = F.cross_entropy(model(torch.from_numpy(X)), torch.from_numpy(y))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp["clip"])
        opt.step()
        sched.step()
        trajectory.append(torch_params(model))
    return trajectory


# %% [markdown]
# In JAX the schedule is one function, and clipping is the first link of the chain, so there
# is no separate call to forget or to misplace. `adamw` calls the schedule with the step
# count it keeps in its own state.

# %%
# JAX
schedule_jax = optax.warmup_cosine_decay_schedule(
    init_value=hp["peak_lr"] * hp["start_factor"], peak_value=hp["peak_lr"],
    warmup_steps=hp["warmup"], decay_steps=hp["total"], end_value=hp["end_lr"])


def make_tx(weight_decay=None):
    kw = {} if weight_decay is None else {"weight_decay": weight_decay}
    return optax.chain(optax.clip_by_global_norm(hp["clip"]),
                       optax.adamw(schedule_jax, b1=hp["beta1"], b2=hp["beta2"], eps=hp["eps"], **kw))


def loss_jax(params, X, y):
    logits = jnp.tanh(X @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


# %% [markdown]
# The jitted step computes the gradient, the optimiser update and the new parameters; `tx` is
# part of the compiled program. Labels are cast to `int32`, JAX's default integer.

# %%
# JAX
def train_jax(tx):
    params = jax.tree.map(jnp.asarray, init)
    opt_state = tx.init(params)

    @jax.jit
    def step(params, opt_state, X, y):
        grads = jax.grad(loss_jax)(params, X, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    trajectory = []
    for X, y in batch_list:
        params, opt_state = step(params, opt_state, X, y.astype(np.int32))
        trajectory.append(params)
    return trajectory


# %% [markdown]
# ### 2.1 The sharp bit: "the same optimiser" with default arguments
#
# Both sides spell out every hyper-parameter except the weight decay, which each leaves at
# its default. Ports usually look like this. Compare the parameters after every step, with
# a tolerance of `1e-5`:

# %%
traj_torch = train_torch()
traj_jax = train_jax(make_tx())
gap_default = [max_abs_diff(a, b) for a, b in zip(traj_torch, traj_jax, strict=True)]
tol = 1e-5
first_bad = next((k for k, d in enumerate(gap_default) if d > tol), None)
print(f"largest parameter difference after {S.opt_steps} steps: {max(gap_default):.2e}")
print(f"the runs differ by more than {tol:g}",
      "at no step" if first_bad is None else f"from step {first_bad + 1} of {S.opt_steps} on")

# %% [markdown]
# Every other hyper-parameter matches, so what is left to differ is a default. Ask the
# installed libraries, since defaults change between releases:

# %%
defaults = {
    "torch.optim.AdamW": inspect.signature(torch.optim.AdamW).parameters["weight_decay"].default,
    "optax.adamw": inspect.signature(optax.adamw).parameters["weight_decay"].default,
    "torch.optim.Adam": inspect.signature(torch.optim.Adam).parameters["weight_decay"].default,
}
defaults

# %% [markdown]
# The two AdamWs decay by different defaults, and `torch.optim.Adam` by none. Both AdamWs
# apply the decay the same *decoupled* way: `p ← p − lr·(adam_update + wd·p)`. So one
# weight decay on both sides should close the gap:

# %%
wd = 0.01
traj_torch = train_torch(weight_decay=wd)
traj_jax = train_jax(make_tx(weight_decay=wd))
gap_matched = [max_abs_diff(a, b) for a, b in zip(traj_torch, traj_jax, strict=True)]
print(f"largest parameter difference over {S.opt_steps} steps: {max(gap_matched):.2e}")
assert_close(traj_torch[-1], traj_jax[-1], rtol=1e-4, atol=tol, name="params after the last step")

# %% [markdown]
# The last parameters now pass `assert_close`. The plot shows both comparisons step by step,
# against the dotted tolerance:

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.semilogy(range(1, S.opt_steps + 1), gap_default, label="default weight decays")
ax.semilogy(range(1, S.opt_steps + 1), np.maximum(gap_matched, 1e-9), label=f"weight_decay={wd} on both")
ax.axhline(tol, color="grey", ls=":", label=f"tolerance {tol:g}")
ax.set(xlabel="step", ylabel="max |θ_torch − θ_jax|", title="Optax vs torch.optim, same start, same batches")
ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))  # steps are whole numbers
ax.legend()
fig.tight_layout()


# %% [markdown]
# ### 2.2 Two more conventions
#
# - **`torch.optim.Adam(weight_decay=...)` is not AdamW.** It adds `wd·p` to the *gradient*
#   before the moments: coupled L2 regularisation. Its Optax twin is
#   `optax.chain(optax.add_decayed_weights(wd), optax.adam(lr))`. The coupled decay passes
#   through Adam's division by the root of the second moment, so parameters with large
#   gradients decay less. The exercises make you match it.
# - **Clipping and schedules differ at the edges.** `clip_grad_norm_` scales by
#   `max_norm / (norm + 1e-6)`, `clip_by_global_norm` by `max_norm / norm`. Past its end,
#   PyTorch's cosine climbs back up while Optax holds `end_value`.
#
# The `1e-6` is negligible at ordinary gradient norms. The schedule's end matters whenever a
# finished run is resumed "for a few more epochs". Trace the schedule for one and a half
# times its length. PyTorch keeps the rate in an optimiser, so the trace builds and steps
# one; the Optax schedule is simply evaluated:

# %%
def lr_trace_torch(n):
    opt, sched = make_optimizer_torch(torch.nn.Linear(1, 1))  # only the learning rate matters
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return np.array(out)


n_lr = int(1.5 * hp["total"])
lr_torch, lr_jax = lr_trace_torch(n_lr), np.array([schedule_jax(k) for k in range(n_lr)])
assert_close(lr_torch[: hp["total"]], lr_jax[: hp["total"]], rtol=1e-6, atol=1e-9, name="lr within the schedule")
print(f"after the schedule's end: torch {lr_torch[-1]:.2e}, optax {lr_jax[-1]:.2e}")

# %%
fig, ax = plt.subplots(figsize=(7, 3))
steps = range(1, n_lr + 1)  # lr_torch[i] and lr_jax[i]: the learning rate of step i + 1
ax.plot(steps, lr_torch, label="torch SequentialLR(LinearLR, CosineAnnealingLR)")
ax.plot(steps, lr_jax, "--", label="optax.warmup_cosine_decay_schedule")
ax.axvline(hp["total"], color="grey", ls=":")
ax.set(xlabel="step", ylabel="learning rate", title="the same schedule, until it ends")
ax.legend(fontsize=8)
fig.tight_layout()


# %% [markdown]
# Within the configured steps the two schedules agree to `rtol=1e-6`. Past the dotted line,
# Optax holds `end_lr` while PyTorch's cosine, which is periodic, turns upward. To extend a
# run, build the scheduler or the schedule again for the new length.

# %% [markdown]
# ## 3. Checkpoints
#
# **Key concepts**
# - A checkpoint that resumes training holds **everything the next step reads**: the model,
#   the optimiser state, the **data position**, the **random state**, and in PyTorch the
#   **scheduler**.
# - PyTorch: `state_dict()` → `torch.save`, or `torch.distributed.checkpoint` for shards. JAX:
#   Orbax saves any pytree and restores it into an **abstract target** of shapes, dtypes and
#   shardings.
# - A resume is proven the strict way: equal to a run that never stopped, **bit for bit**.
#
# A resumed run that is merely "close" hides bugs. On one machine, with the same program and
# inputs, a correct resume has no reason to differ at all, so the test is equality.
#
# On restore, a PyTorch user notices one difference. `load_state_dict` copies into objects
# you already built, while Orbax must be told what to build. This lesson uses Orbax's newer
# API, `ocp.v1.save(path, tree)` and `ocp.v1.load(path, abstract_tree)`. Orbax 0.12 still
# files it under `orbax.checkpoint.experimental.v1`, and many tutorials use the older
# `StandardCheckpointer`.
#
# A fixed list of batches and a model without randomness would hide two kinds of state. So
# the data come from an endless shuffled iterator whose whole position is two integers, the
# way Grain's iterators checkpoint, and the hidden layer has dropout.

# %%
class ResumableBatches:
    """Endless shuffled minibatches; `state()` is the whole position, and resumes it."""

    def __init__(self, X, y, batch, seed, epoch=0, index=0):
        self.X, self.y, self.batch, self.seed = X, y, batch, seed
        self.epoch, self.index = epoch, index  # the next batch: `index` of epoch `epoch`

    def state(self):
        return {"epoch": self.epoch, "index": self.index}

    def __iter__(self):
        return self

    def __next__(self):
        order = batch_indices(len(self.X), self.batch, self.seed, self.epoch)  # section 2's function
        rows = order[self.index]
        self.index += 1
        if self.index == len(order):  # the epoch is over: the next one reshuffles
            self.epoch, self.index = self.epoch + 1, 0
        return self.X[rows], self.y[rows]


new_batches = lambda **position: ResumableBatches(X_np, y_np, S.batch, seed=1, **position)  # noqa: E731
p_drop = 0.1  # dropout rate on the hidden layer
k = S.ckpt_steps  # steps before the checkpoint, and again after it
per_epoch = len(batch_indices(len(X_np), S.batch, seed=1))
assert 2 * k > per_epoch and k % per_epoch, "sizes: the runs must cross an epoch, the checkpoint fall mid-epoch"
print(f"{per_epoch} batches per epoch; the runs take 2 × {k} steps, so they cross an epoch boundary, "
      f"and the checkpoint falls in the middle of epoch {k // per_epoch}")


# %% [markdown]
# The `assert` makes both traps live: restarting the epoch would replay batches, and the
# reshuffle must happen at the same step. `new_batches(**position)` rebuilds the iterator.
#
# The JAX side uses Flax NNX: the MLP as a module, dropout from an explicit key, and an
# `nnx.Optimizer` around the Optax chain of section 2. The loop splits the key once per
# step, so the key it returns is the run's whole random state. `nnx.jit` writes the new
# state of the module and the optimiser back after each step.

# %%
# JAX: the MLP as an NNX module, dropout from an explicit key
class MLP(nnx.Module):
    def __init__(self, params, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(64, S.hidden, rngs=rngs)
        self.l2 = nnx.Linear(S.hidden, 10, rngs=rngs)
        for layer, i in ((self.l1, 1), (self.l2, 2)):
            layer.kernel[...] = jnp.asarray(params[f"W{i}"])  # Flax kernels are (in, out)
            layer.bias[...] = jnp.asarray(params[f"b{i}"])

    def __call__(self, x, key=None):  # key: dropout while training; None: no dropout
        h = jnp.tanh(self.l1(x))
        if key is not None:
            keep = jax.random.bernoulli(key, 1 - p_drop, h.shape)
            h = jnp.where(keep, h / (1 - p_drop), 0.0)
        return self.l2(h)


@nnx.jit
def nnx_step(model, optimizer, X, y, key):
    def loss_fn(model):
        return optax.softmax_cross_entropy_with_integer_labels(model(X, key), y).mean()
    grads = nnx.grad(loss_fn)(model)
    optimizer.update(model, grads)


def train_nnx(model, optimizer, batches, key, steps):
    for _ in range(steps):
        X, y = next(batches)
        key, step_key = jax.random.split(key)
        nnx_step(model, optimizer, X, y.astype(np.int32), step_key)
    return key  # the random state after `steps` steps


new_model = lambda: MLP(init, nnx.Rngs(0))  # noqa: E731
tx = make_tx(weight_decay=wd)  # one transformation for every optimizer: nnx_step compiles once
new_optimizer = lambda model: nnx.Optimizer(model, tx, wrt=nnx.Param)  # noqa: E731

# %% [markdown]
# The factories `new_model` and `new_optimizer` build fresh objects for each run, and later
# Orbax's target. First the reference, `2k` steps in one go. Then the interrupted run: `k`
# steps, one `ocp.v1.save` of model, optimiser, data position and key, and every object
# deleted. The typed key and the position's two Python integers go in as they are.

# %%
# JAX: the uninterrupted run
model_jax = new_model()
optimizer_jax = new_optimizer(model_jax)
train_nnx(model_jax, optimizer_jax, new_batches(), jax.random.key(0), 2 * k)
uninterrupted_jax = nnx.state(model_jax, nnx.Param)

# JAX: the interrupted run, up to the checkpoint
model_jax = new_model()
optimizer_jax = new_optimizer(model_jax)
batches = new_batches()
key_jax = train_nnx(model_jax, optimizer_jax, batches, jax.random.key(0), k)
ckpt_jax = tmp_root / "orbax" / f"step_{k}"
ocp.v1.save(ckpt_jax, {"model": nnx.state(model_jax), "optimizer": nnx.state(optimizer_jax),
                       "data": batches.state(), "key": key_jax})
print("checkpoint at step", k, "| data position:", batches.state(), "| files:",
      sorted(p.name for p in ckpt_jax.iterdir()))
del model_jax, optimizer_jax, batches, key_jax

# %% [markdown]
# Orbax wrote a directory, with the arrays under `state` and metadata beside them.
#
# Now resume in fresh objects, starting with the target. `nnx.eval_shape` runs the
# constructors abstractly: every array becomes a `ShapeDtypeStruct`, a shape and a dtype.
# `nnx.split` separates the structure, the `graphdef`, from that abstract state. Each leaf
# also gets the sharding to restore onto.

# %%
# JAX: the abstract target
graphdef_model, abstract_model = nnx.split(nnx.eval_shape(new_model))
graphdef_opt, abstract_opt = nnx.split(nnx.eval_shape(lambda: new_optimizer(new_model())))
abstract_key = jax.eval_shape(lambda: jax.random.key(0))
one_device = compat.single_device_sharding(SETUP.jax_device)  # the device this lesson computes on
abstract = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=one_device),
                        {"model": abstract_model, "optimizer": abstract_opt, "key": abstract_key})
abstract["data"] = new_batches().state()  # two Python integers: they restore as integers
print("first kernel:", jax.tree.leaves(abstract["model"]["l1"]["kernel"])[0])
print("key:", abstract["key"])

# %% [markdown]
# The target holds shapes, dtypes and shardings, with no numbers behind them. `nnx.eval_shape`
# traces the constructors but allocates no array, so even a model too large to build twice
# gets its target. `ocp.v1.load` fills the target, `nnx.merge` rebuilds the objects, and
# the resumed run takes its last `k` steps:

# %%
# JAX: load, rebuild, resume
restored = ocp.v1.load(ckpt_jax, abstract)
model2_jax = nnx.merge(graphdef_model, restored["model"])
optimizer2_jax = nnx.merge(graphdef_opt, restored["optimizer"])
batches2 = new_batches(**restored["data"])
train_nnx(model2_jax, optimizer2_jax, batches2, restored["key"], k)
resumed_jax = nnx.state(model2_jax, nnx.Param)
assert_close(resumed_jax, uninterrupted_jax, rtol=0, atol=0, name="Orbax resume vs uninterrupted")
print(f"Orbax: resumed == uninterrupted, bit for bit (step counter {int(optimizer2_jax.step[...])}, "
      f"data position {batches2.state()})")


# %% [markdown]
# Zero tolerance passed, the step counter reads `2k`, and the iterator ended past the epoch
# boundary.
#
# PyTorch does the same with `torch.save` of five entries: three state dicts, the
# iterator's position and the generator's state. Dropout draws its masks from an explicit
# `torch.Generator`, the counterpart of the JAX key, so no other draw can shift them.

# %%
# PyTorch
def torch_setup():
    model = make_torch_mlp(init)
    return model, *make_optimizer_torch(model, weight_decay=wd)  # the optimiser and scheduler of §2


def torch_forward(model, X, gen):  # model[0]: Linear, model[1]: Tanh, model[2]: Linear
    h = model[1](model[0](X))
    keep = torch.rand(h.shape, generator=gen) < 1 - p_drop
    return model[2](torch.where(keep, h / (1 - p_drop), 0.0))


def torch_train(model, opt, sched, batches, gen, steps):
    for _ in range(steps):
        X, y = next(batches)
        opt.zero_grad()
        F.cross_entropy(torch_forward(model, torch.from_numpy(X), gen), torch.from_numpy(y)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), hp["clip"])
        opt.step()
        sched.step()


# %%
# PyTorch: the uninterrupted run, then the interrupted one up to the checkpoint
model_ref_torch, opt_ref_torch, sched_ref_torch = torch_setup()
torch_train(model_ref_torch, opt_ref_torch, sched_ref_torch, new_batches(), torch.Generator().manual_seed(0), 2 * k)

model_torch, opt_torch, sched_torch = torch_setup()
batches_i, gen_torch = new_batches(), torch.Generator().manual_seed(0)
torch_train(model_torch, opt_torch, sched_torch, batches_i, gen_torch, k)
buffer = io.BytesIO()
torch.save({"model": model_torch.state_dict(), "optim": opt_torch.state_dict(), "sched": sched_torch.state_dict(),
            "data": batches_i.state(), "rng": gen_torch.get_state()}, buffer)
del model_torch, opt_torch, sched_torch, batches_i, gen_torch

# %%
# PyTorch: resume in fresh objects
model2_torch, opt2_torch, sched2_torch = torch_setup()
buffer.seek(0)
ckpt = torch.load(buffer)  # weights_only=True by default: tensors and plain containers only
model2_torch.load_state_dict(ckpt["model"])
opt2_torch.load_state_dict(ckpt["optim"])
sched2_torch.load_state_dict(ckpt["sched"])
gen2_torch = torch.Generator()
gen2_torch.set_state(ckpt["rng"])
torch_train(model2_torch, opt2_torch, sched2_torch, new_batches(**ckpt["data"]), gen2_torch, k)
assert_close(dict(model2_torch.named_parameters()), dict(model_ref_torch.named_parameters()), rtol=0, atol=0,
             name="torch.save resume vs uninterrupted")
print("torch.save: resumed == uninterrupted, bit for bit; data position saved:", ckpt["data"])


# %% [markdown]
# PyTorch resumes exactly too. The two frameworks draw different dropout masks, so they are
# not compared with each other here.

# %% [markdown]
# ### 3.1 Pitfalls
#
# **Forgetting part of the state.** A fresh optimiser restarts Adam's moments and the
# warm-up, a fresh iterator replays the epoch's first batches, and a fresh key replays the
# first dropout masks. Each gap is measured against the uninterrupted run:

# %%
def resume_jax_without(part):
    model = nnx.merge(graphdef_model, restored["model"])
    optimizer = new_optimizer(model) if part == "optimizer" else nnx.merge(graphdef_opt, restored["optimizer"])
    batches = new_batches() if part == "data" else new_batches(**restored["data"])
    key = jax.random.key(0) if part == "key" else restored["key"]
    train_nnx(model, optimizer, batches, key, k)
    return max_abs_diff(uninterrupted_jax, nnx.state(model, nnx.Param))


drifts = {part: resume_jax_without(part) for part in ("optimizer", "data", "key")}
for part, drift in drifts.items():
    print(f"resumed without the {part:9s} state: parameters differ by up to {drift:.2e}")
assert all(d > 100 * tol for d in drifts.values())

# %% [markdown]
# The `assert` checks that every gap is at least 100 times section 2's tolerance: these are
# different runs. Nothing crashes and nothing warns, which is the danger.
#
# **Dtypes follow the target, silently.** Orbax casts to the target's dtype, and
# `load_state_dict` copies into the existing parameter's dtype. Neither warns:

# %%
as_bf16 = jax.tree.map(lambda s: s.update(dtype=jnp.bfloat16) if s.dtype == jnp.float32 else s, abstract["model"])
restored_bf16 = ocp.v1.load(ckpt_jax, {**abstract, "model": as_bf16})
model_bf16 = make_torch_mlp(init).to(torch.bfloat16)
model_bf16.load_state_dict(ckpt["model"])
print("Orbax restored kernel:", restored_bf16["model"]["l1"]["kernel"][...].dtype,
      "| torch loaded weight:", model_bf16[0].weight.dtype, "| saved as float32 in both")

# %% [markdown]
# Both came back as `bfloat16` from `float32` files: 16 bits of every weight are gone, and a
# resumed training run is no longer the same run.
#
# **Shardings follow the target too.** A checkpoint written on 8 devices restores onto 4 if
# the target asks for 4, so build the target from the *new* mesh of lesson 05.

# %% [markdown]
# ## 4. Data loading
#
# **Key concepts**
# - PyTorch's `DataLoader` batches a `Dataset`. JAX has no loader of its own: any iterator of
#   NumPy arrays works, and Grain adds deterministic, checkpointable loading.
# - The **same seed does not give the same order** across libraries. To feed both frameworks
#   the same batches, share the *indices*.
#
# So far both sides read the same NumPy batches, by choice. Natural code uses a `DataLoader`
# in PyTorch and a NumPy generator such as `numpy_batches` in JAX. A reader who seeds both
# with 0 expects the same batches. A `DataLoader` can feed JAX too, and `drop_last=True`
# keeps the batch shape fixed, so the JAX step compiles once.

# %%
# PyTorch: a DataLoader shuffling with its own generator, seeded with 0
dataset = torch.utils.data.TensorDataset(torch.from_numpy(X_np), torch.from_numpy(y_np))
loader = torch.utils.data.DataLoader(dataset, batch_size=S.batch, shuffle=True, drop_last=True,
                                     generator=torch.Generator().manual_seed(0))
first_torch = next(iter(loader))[1]

# %%
# JAX: any iterator of NumPy arrays; section 2's shuffles with NumPy, seeded with 0
first_numpy = next(numpy_batches(X_np, y_np, S.batch, seed=0))[1]

# %%
print("labels, DataLoader(seed 0):", first_torch[:10].tolist())
print("labels, NumPy      (seed 0):", first_numpy[:10].tolist())

# %% [markdown]
# The generators are different algorithms, so no seed on one side reproduces the other's
# order. The fix:
# compute the epoch's index batches once, with section 2's `batch_indices`, and give them to
# the `DataLoader` as its `batch_sampler`.

# %%
indices = batch_indices(len(X_np), S.batch, seed=0)  # epoch 0's batches of row indices
loader = torch.utils.data.DataLoader(dataset, batch_sampler=indices)
for (Xt, yt), (Xn, yn) in zip(loader, numpy_batches(X_np, y_np, S.batch, seed=0), strict=True):
    assert torch.equal(Xt, torch.from_numpy(Xn)) and torch.equal(yt, torch.from_numpy(yn))
print(f"{len(indices)} identical batches")

# %% [markdown]
# Every batch compared equal, and `zip(..., strict=True)` checks that neither side yields an
# extra one.
#
# One warning for a `DataLoader` with `num_workers > 0` that feeds JAX. On Linux before
# Python 3.14 its workers start with `fork` by default. A forked copy of a multithreaded
# process such as JAX can deadlock, and JAX warns when it forks.
# `multiprocessing_context="spawn"` starts the workers as fresh interpreters instead.
#
# ## 5. Export
#
# **Key concepts**
# - `torch.export.export(model, args)` captures an `ExportedProgram`, an ATen graph with no
#   Python in it, which ExecuTorch or AOTInductor compile for deployment.
# - `jax.export.export(jax.jit(f))(*specs)` lowers to StableHLO. `serialize()` gives bytes
#   that another process calls without the Python source.
# - Both fix the example's shapes unless a dimension is declared dynamic: `torch.export.Dim`,
#   `jax.export.symbolic_shape`.
#
# A checkpoint holds numbers and needs the model's Python code to mean anything. An export
# holds the computation itself, for a server without your training code or a phone. Both
# frameworks get there by tracing. `torch.export` refuses code it cannot capture where
# `torch.compile` would fall back to Python. `jax.export` traces as `jax.jit` does and keeps
# the StableHLO instead of compiling it.
#
# Export the MLP trained in section 2, with the same weights in both frameworks:

# %%
# PyTorch
params_final = traj_jax[-1]
model_eval = make_torch_mlp(params_final).eval()
X_eval = X_np[:7]
batch_dim = torch.export.Dim("batch")
exported_t = torch.export.export(model_eval, (torch.from_numpy(X_eval),), dynamic_shapes={"input": {0: batch_dim}})
blob_t = io.BytesIO()
torch.export.save(exported_t, blob_t)
blob_t.seek(0)
loaded_t = torch.export.load(blob_t)
print(f"torch.export: {len(blob_t.getvalue()):,} bytes; the graph:")
print(loaded_t.graph_module.code.strip())

# %% [markdown]
# After a round trip through bytes, the weights are inputs, and each layer is one
# `torch.ops.aten` call: the `Sequential` is gone. `"input"` in `dynamic_shapes` is the
# name of `Sequential.forward`'s argument.
#
# The JAX export starts from a function of `(params, X)`. A symbolic dimension `b` goes into
# the input's `ShapeDtypeStruct`. An export runs only on the platforms it was lowered for,
# so `platforms` names the device kind this lesson computes on.

# %%
# JAX
import jax.export  # a submodule that jax 0.7 does not load with `import jax`


def forward_jax(params, X):
    return jnp.tanh(X @ params["W1"] + params["b1"]) @ params["W2"] + params["b2"]


(b,) = jax.export.symbolic_shape("b")
specs = (jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params_final),
         jax.ShapeDtypeStruct((b, 64), jnp.float32))
# platforms: without it, JAX's default backend, which on a TPU machine is the TPU
exported_j = jax.export.export(jax.jit(forward_jax), platforms=[SETUP.jax_device.platform])(*specs)
try:
    blob_j = exported_j.serialize()  # needs the `flatbuffers` package
    loaded_j = jax.export.deserialize(blob_j)
    print(f"jax.export: {len(blob_j):,} bytes for platforms {loaded_j.platforms}; input avals {loaded_j.in_avals}")
except ImportError as err:
    loaded_j = exported_j
    print(f"serialisation skipped ({err}); calling the in-memory export instead")

# %%
hlo = exported_j.mlir_module().splitlines()
start = next(i for i, line in enumerate(hlo) if "func.func public @main" in line)
for line in hlo[start : start + 5]:  # the StableHLO entry point, up to its shape check
    line = re.sub(r" loc\([^)]*\)", "", line)  # drop the source locations
    print(line if len(line) < 250 else line[:110] + " ...")

# %% [markdown]
# The export accepts four parameter arrays at fixed shapes and `float32[b,64]`. The
# StableHLO entry point writes the batch as `tensor<?x64xf32>` and adds a `shape_assertion`
# that checks at call time that the batch is at least 1. The export carries its own input
# checks, because its caller may not be Python.
#
# Each round trip must reproduce its original exactly, and the two exports must agree to
# float32 rounding, on a batch size other than the example's:

# %%
X_new = X_np[7:20]  # 13 rows: the batch dimension is symbolic in both exports
out_t = loaded_t.module()(torch.from_numpy(X_new))
out_j = loaded_j.call(params_final, jnp.asarray(X_new))
with torch.no_grad():
    assert_close(out_t, model_eval(torch.from_numpy(X_new)), rtol=0, atol=0, name="torch export")
assert_close(out_j, jax.jit(forward_jax)(params_final, jnp.asarray(X_new)), rtol=0, atol=0, name="jax export")
assert_close(out_t, out_j, rtol=1e-5, atol=1e-5, name="torch export vs jax export")
print("both exports reproduce their originals exactly, and agree with each other")

# %% [markdown]
# Called on 13 rows, each export gives bit for bit what its own original gives. The two
# exports agree with each other to float32 rounding.
#
# The sharp bit: export with concrete shapes, then call with another batch size.

# %%
fixed = jax.export.export(jax.jit(forward_jax), platforms=[SETUP.jax_device.platform])(params_final, jnp.asarray(X_eval))
with expect_error(ValueError, match="Shape mismatch"):
    fixed.call(params_final, jnp.asarray(X_new))


# %% [markdown]
# Without a symbolic dimension, the contract is the example's exact shape. The fix is the
# symbolic `b` above, and `torch.export` fails the same way without `Dim`. JAX documents a
# compatibility window for serialised exports, so archive the source code too.
#
# The two loaded objects mirror their frameworks. The loaded `ExportedProgram`'s `.module()`
# is an `nn.Module` with the weights inside. The `Exported`'s `.call(params, X)` takes the
# weights as an argument: in JAX, parameters stay data that you pass in.

# %% [markdown]
# ## 6. Interop
#
# **Key concepts**
# - **DLPack** hands a buffer to the other framework without copying:
#   `jax.dlpack.from_dlpack(tensor)` and `torch.from_dlpack(array)`.
# - A JAX array is **immutable by contract**, a torch tensor is not. After handing a tensor
#   to JAX, do not write into it in place, whether the hand-over shared or copied.
# - A `torch.autograd.Function` around `jax.vjp` puts a jitted JAX function **inside** a
#   PyTorch training step, gradients included.
#
# Real migrations are gradual: a PyTorch team that wants one JAX piece passes tensors across
# the boundary. Crossing costs either a copy of every byte or a description of the buffer.
# DLPack is that description: a pointer, shape, strides, dtype and device. When the buffer
# suits the receiver, it is adopted as it is.
#
# ### 6.1 Zero copy, and when a copy is not one
#
# A tensor's `data_ptr()` and a JAX array's `unsafe_buffer_pointer()` both give the address
# of the first element. Equal addresses mean one buffer:

# %%
def same_buffer(t, a):
    """Whether torch tensor `t` and single-device jax array `a` start at the same address."""
    return t.data_ptr() == a.unsafe_buffer_pointer()


# PyTorch: a tensor handed to JAX
shared_torch = torch.arange(12, dtype=torch.float32).reshape(3, 4)
shared_jax = jax.dlpack.from_dlpack(shared_torch)
print(f"torch data_ptr() {shared_torch.data_ptr():#x}, jax unsafe_buffer_pointer() {shared_jax.unsafe_buffer_pointer():#x}")
assert same_buffer(shared_torch, shared_jax)

# %% [markdown]
# Both frameworks report the same address. Now write through PyTorch and read through JAX:

# %%
shared_torch[0, 0] = 100.0  # an in-place write in torch
print(shared_jax[0])  # JAX sees it: the same bytes
assert float(shared_jax[0, 0]) == 100.0

# %% [markdown]
# JAX prints `100.`, a value it never computed: both objects view one buffer. JAX assumes
# `shared_jax` never changes, so queued work may read either value.
#
# The other direction shares memory too, on a device that both frameworks can address:

# %%
# JAX: an array handed to PyTorch
torch_dev, jax_dev = SETUP.pair()
back_jax = jax.device_put(jnp.linspace(0.0, 1.0, 5), jax_dev)
back_torch = torch.from_dlpack(back_jax)
assert same_buffer(back_torch, back_jax)
print(back_torch, "| same buffer:", same_buffer(back_torch, back_jax))

# %% [markdown]
# Here an in-place PyTorch operation on `back_torch`, such as `add_` or an optimiser step,
# changes an array that JAX treats as immutable: clone it first. On a TPU machine, PyTorch
# runs on the CPU and cannot view the chip's memory.

# %% [markdown]
# **The sharp bit: a copy that still sees the write.** If sharing is the danger, an explicit
# copy looks safe: `jnp.array(t.numpy(), copy=True)`. But JAX may read the host buffer after
# the call returns, once the work it has already queued is done. The
# cell counts the tries in which a later `t.add_(1)` reached JAX's "copy": with a jitted
# matmul still queued, with JAX idle, and with the fix.

# %%
matmul_jax = jax.jit(lambda a: a @ a @ a)
busy_jax = jnp.ones((S.busy_side, S.busy_side))
jax.block_until_ready(matmul_jax(busy_jax))  # compiled before the tries


def write_reached_jax(hand_over, busy):
    t = torch.zeros(1000)
    queued = matmul_jax(busy_jax) if busy else None  # work JAX has not finished
    a = hand_over(t)
    t.add_(1)  # the in-place write, after the hand-over returned
    seen = bool(a[0] != 0)
    jax.block_until_ready(queued)
    return seen


copying = lambda t: jnp.array(t.numpy(), copy=True)  # noqa: E731  the natural code
own_copy = lambda t: jnp.array(t.numpy().copy())  # noqa: E731  the fix: a host copy no one writes
for label, hand_over, busy in [("copy=True, JAX busy", copying, True), ("copy=True, JAX idle", copying, False),
                               ("own host copy, JAX busy", own_copy, True)]:
    seen = sum(write_reached_jax(hand_over, busy) for _ in range(S.alias_tries))
    print(f"{label:24s} the write reached JAX in {seen:2d} of {S.alias_tries} tries")

# %% [markdown]
# Any count above zero for `copy=True` is the bug; how often it shows depends on the machine.
# The fix's count is zero by construction, since no one writes the host copy. The rule:
# before writing in place into a tensor you handed to JAX, give JAX a host copy you own,
# `t.numpy().copy()` or `t.clone()`, or call `jax.block_until_ready` on the result first.
#
# **The opposite surprise: DLPack calls that copy.** A float64 tensor passes through
# `jax.dlpack.from_dlpack` without complaint while JAX runs in 32-bit mode. So does a slice
# that starts one element into its buffer. Compare the addresses:

# %%
t64 = torch.ones(4, dtype=torch.float64)
a64 = jax.dlpack.from_dlpack(t64)
print(a64.dtype, "| same buffer:", same_buffer(t64, a64))
view = torch.arange(9.0)[1:]  # starts 4 bytes into its buffer
shared = same_buffer(view, jax.dlpack.from_dlpack(view))
print("offset view, same buffer:", shared, "" if shared else "(copied: XLA wants aligned buffers)")


# %% [markdown]
# No call raised, and only the addresses tell whether a copy happened. JAX without
# `jax_enable_x64` holds no float64 arrays, so the first tensor became a float32 copy. The
# cure is on the PyTorch side: `tensor.float()` for the dtype, and `tensor.clone()` for an
# aligned buffer.

# %% [markdown]
# ### 6.2 A JAX function inside a PyTorch training step
#
# A custom `torch.autograd.Function` has a `forward` that computes the output and keeps
# what the backward needs. Its `backward` maps the output's gradient to one gradient per
# input. `jax.vjp(f, *inputs)` returns exactly those two things: the output, and a function
# from an output gradient to the input gradients. So PyTorch's autograd sees one node, and
# JAX computes both directions inside it.
#
# Here the classifier head and its loss are JAX code, while the body of the network stays in
# PyTorch. Both JAX halves are jitted; the VJP function crosses between them as a pytree of
# the values the backward needs. Tensors cross by DLPack, and the integer labels get no
# gradient.

# %%
def head_loss_jax(h, W, b, y):  # h: (batch, hidden), W: (hidden, 10), y: (batch,) int32
    logits = h @ W + b
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def head_forward_jax(h, W, b, y):  # the loss, and the function from its gradient to (dh, dW, db)
    return jax.vjp(lambda h, W, b: head_loss_jax(h, W, b, y), h, W, b)


@jax.jit
def head_backward_jax(vjp_fn, g):
    return vjp_fn(g)


class JaxHead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, W, b, y):
        loss, ctx.vjp_fn = head_forward_jax(*(jax.dlpack.from_dlpack(t.detach()) for t in (h, W, b, y)))
        return torch.from_dlpack(loss)

    @staticmethod
    def backward(ctx, g):
        grads = head_backward_jax(ctx.vjp_fn, jax.dlpack.from_dlpack(g))
        return *(torch.from_dlpack(d) for d in grads), None  # dh, dW, db; none for the labels


# %%
class Hybrid(torch.nn.Module):
    def __init__(self, params):
        super().__init__()
        self.body = make_torch_mlp(params)[:2]  # Linear and Tanh of section 2's MLP
        self.W = torch.nn.Parameter(torch.from_numpy(params["W2"].copy()))
        self.b = torch.nn.Parameter(torch.from_numpy(params["b2"].copy()))

    def loss(self, X, y, jax_head=True):
        h = self.body(X)
        if jax_head:
            return JaxHead.apply(h, self.W, self.b, y.int())  # labels as int32: JAX is 32-bit
        return F.cross_entropy(h @ self.W + self.b, y)  # the pure-PyTorch reference


# %% [markdown]
# Proof: the hybrid's loss and every gradient equal the pure-PyTorch ones, including the
# body's, whose gradients flow back out of JAX. `grads_of` runs one forward and backward
# pass through either head.

# %%
hybrid = Hybrid(init)
Xb, yb = (torch.from_numpy(v) for v in batch_list[0])


def grads_of(jax_head):
    hybrid.zero_grad()
    loss = hybrid.loss(Xb, yb, jax_head=jax_head)
    loss.backward()
    return {"loss": loss.detach(), **{n: p.grad.clone() for n, p in hybrid.named_parameters()}}


assert_close(grads_of(jax_head=True), grads_of(jax_head=False), rtol=1e-5, atol=1e-6, name="hybrid vs pure")
print("loss and gradients agree:", [n for n, _ in hybrid.named_parameters()])

# %% [markdown]
# In a training step, `torch.optim.AdamW` then updates `W` from `W.grad` like any other
# parameter. How fast is the hybrid? Time one forward and backward, hybrid against pure
# PyTorch:

# %%
bridge = timing.compare({"pure PyTorch": lambda: grads_of(False), "JAX head via DLPack": lambda: grads_of(True)},
                        rtol=1e-5, atol=1e-6, target_s=S.target_s)
t_pure, t_hybrid = (bridge.measurements[name].median for name in ("pure PyTorch", "JAX head via DLPack"))
print(f"one forward and backward on {bridge.devices['pure PyTorch']}: pure PyTorch {timing.format_seconds(t_pure)}, "
      f"JAX head {timing.format_seconds(t_hybrid)}, {bridge.ratio('JAX head via DLPack'):.2f} × the pure time")
bridge_verdict = claims.faster(bridge, "pure PyTorch", "JAX head via DLPack")
print(bridge_verdict)

# %% [markdown]
# The ratio compares whole forward and backward passes. Besides the bridge's fixed cost per call, two jitted JAX
# calls and the DLPack hand-overs, it holds the head itself: compiled by XLA on one side,
# eager PyTorch on the other. Either side can win that part, so the ratio can fall below 1.
# The fixed cost weighs less in a larger pass.

# %% [markdown]
# ## 7. Keras 3
#
# **Key concepts**
# - Keras 3 runs one model definition on JAX, PyTorch or TensorFlow. `KERAS_BACKEND` picks the
#   backend **when `keras` is imported**. `keras.config.set_backend` reloads Keras, but every
#   Keras object made before is then unusable, so this lesson gives each backend a process.
# - Weights saved by one backend as a `.weights.h5` file load in another.
# - On JAX, Keras's `fit` and `predict` compile with `jax.jit`; by hand, jit a function of
#   `model.stateless_call`. On PyTorch, Keras layers are `torch.nn.Module`s and run eagerly
#   unless compiled.
#
# Keras promises to make the choice between the frameworks unnecessary: write the model once
# against `keras.layers`, and pick the framework that runs it. This section checks both
# halves of the promise: *the same numbers* on both backends, and *no cost* against the same
# model written natively.
#
# `course_utils.keras_backends` starts one child process per backend. The JAX child builds
# and saves the weights, the PyTorch child loads them, and each times Keras against a native
# twin. Here is the model, and how the JAX child calls it:

# %%
from course_utils import keras_child  # importing it imports neither keras, jax nor torch

display(Markdown("```python\n" + "\n".join(inspect.getsource(f) for f in
                 (keras_child._model, keras_child.jax_variants)) + "```"))

# %% [markdown]
# Nothing in the Keras model names a framework. `stateless_call` takes the weights as
# arguments and returns the outputs with the new non-trainable state, so `jax.jit` can
# compile it like any pure function. The native twins, `jax_native` and `torch_native`, are
# the same layers in `jax.numpy`, jitted, and in `torch.nn`, eager. Run the model on both
# backends:

# %%
KERAS = keras_backends.available()
keras_results, keras_verdicts = {}, {}
if KERAS:
    keras_dir = tmp_root / "keras"
    keras_results = keras_backends.run_both(keras_dir, batch=S.keras_batch, width=S.keras_width,
                                            target_s=S.target_s, torch_threads=torch.get_num_threads())
    assert keras_results["torch"]["started_at"] >= keras_results["jax"]["finished_at"]
    for name, res in keras_results.items():
        print(f"{name}: Keras {res['keras']} on {name} {res['framework']}; {res['facts']}")
else:
    print("Keras 3 is not installed (pip install keras): this section is skipped; "
          "the rest of the lesson does not depend on it.")

# %% [markdown]
# Each line comes from a child and shows that its backend is real. Now the first half of the
# promise: identical weights after the `.h5` round trip, and both backends' outputs against
# a float64 NumPy version of the model.

# %%
if KERAS:
    arrays = {name: keras_backends.load_arrays(res) for name, res in keras_results.items()}
    for w_jax, w_torch in zip(arrays["jax"]["weights"], arrays["torch"]["weights"], strict=True):
        assert np.array_equal(w_jax, w_torch)
    reference = keras_backends.numpy_reference(arrays["jax"]["x"], arrays["jax"]["weights"])
    for name in ("jax", "torch"):
        assert_close(arrays[name]["outputs"], reference, rtol=1e-4, atol=1e-5, name=f"Keras on {name}")
    gap = np.abs(arrays["jax"]["outputs"] - arrays["torch"]["outputs"]).max()
    print(f"same weights; outputs agree with the float64 reference; max |jax − torch| = {gap:.1e}")
else:
    print("skipped: Keras 3 is not installed")

# %% [markdown]
# The gap between the two backends is float32 rounding. The second half of the promise is
# speed. Article 003, one of the published articles this course tests, makes that claim.
# Each child timed its Keras calls against the native model in interleaved rounds. Each line
# gives the native median, then every Keras call's time as a multiple of it:

# %%
if KERAS:
    claim = claims.get("keras-native-speed")
    for name, res in keras_results.items():
        rows = {row["variant"]: row for row in res["timings"]}
        native = rows.pop(res["native"])
        print(f"{name} on {native['device']}: {native['variant']} {timing.format_seconds(native['median_s'])}; "
              + "; ".join(f"{variant} {row['ratio']:.2f} ×" for variant, row in rows.items()))
        natural = "Keras, jitted stateless_call" if name == "jax" else "Keras, eager model(x)"
        keras_verdicts[f"{name} backend"] = claims.judge(
            claim, keras_backends.ratios(res, natural), res["native"], natural, contention=res["contention"])
    print(f"Claim of source article {claim.source}: {claim.text}")
    print(claims.compact(keras_verdicts))
else:
    print("skipped: Keras 3 is not installed")

# %% [markdown]
# The verdicts judge the natural call on each backend. On JAX that is the jitted
# `stateless_call`, which compiles the same layers as the native twin, so its multiple is
# what Keras adds to a compiled program. An eager `model(x)` dispatches one operation at a
# time, so its multiple is the price of skipping `jax.jit`. On PyTorch, Keras's per-layer
# Python bookkeeping makes its eager call slower than the native module, most of all for
# small layers. The practical rule: on the JAX backend, train and predict through `fit`,
# `predict` or a jitted `stateless_call`, never through `model(x)` in a Python loop.
#
# Every file this lesson wrote sits under one temporary folder; remove it:

# %%
import shutil

shutil.rmtree(tmp_root, ignore_errors=True)
print("removed", tmp_root)

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX |
# |---|---|---|
# | optimiser | `torch.optim.AdamW(params, lr)`: decay `0.01` by default | `optax.adamw(lr)`: decay `1e-4` by default |
# | clip gradients | `clip_grad_norm_(params, max_norm)` before `step()` | `optax.clip_by_global_norm(max_norm)`, first in the chain |
# | schedule | `lr_scheduler.SequentialLR(...)` and `sched.step()` | `optax.warmup_cosine_decay_schedule(...)`, count in the state |
# | coupled L2 | `torch.optim.Adam(..., weight_decay=wd)` | `optax.chain(optax.add_decayed_weights(wd), optax.adam(lr))` |
# | checkpoint | `torch.save` of the state dicts, data position and `generator.get_state()`; DCP for shards, lesson 05 | `ocp.v1.save(path, tree)` of the NNX states, data position and key |
# | restore | `load_state_dict(torch.load(f))`, `generator.set_state(...)` | `ocp.v1.load(path, abstract)` with `nnx.eval_shape`, then `nnx.merge` |
# | export | `torch.export.export(m, args, dynamic_shapes=...)` | `jax.export.export(jax.jit(f), platforms=...)(*specs)`, `serialize()` |
# | zero copy | `torch.from_dlpack(jax_array)` | `jax.dlpack.from_dlpack(tensor)` |
# | before an in-place write | `t.clone()` of a tensor JAX may still read | `jnp.array(t.numpy().copy())`: a host copy JAX owns |
# | call the other framework | a `torch.autograd.Function` around `jax.vjp` | — |
#
# **What the source articles said vs what you measured**, computed from §6.2 and §7:

# %%
keras_speed = "; ".join(f"{name}, {v.line()}" for name, v in keras_verdicts.items())
keras_row = (f"one model file and one set of weights ran on both backends, with outputs equal to a float64 "
             f"reference. Speed: {keras_speed}" if keras_verdicts else "not run: Keras 3 is not installed")
display(Markdown(
    "| claim, source | measured here |\n|---|---|\n"
    f"| Keras 3 runs one model on the JAX or the PyTorch backend without costing speed: article 003 | {keras_row} |\n"
    '| "Hybrid migration": move the bottleneck to JAX, keep the rest in PyTorch: article 003 | a jitted JAX loss '
    f"head inside PyTorch's autograd, with gradients equal to pure PyTorch. One forward and backward: {bridge_verdict.line()} |"))

# %% [markdown]
# **Common misconceptions**, each corrected above
# - *"Optax's adamw and torch's AdamW are the same optimiser."* Same maths, different default
#   weight decay, and `torch.optim.Adam(weight_decay=)` is a different method: §2.
# - *"Saving the model is enough to resume."* Without the optimiser and scheduler state, the
#   data position or the random state, the resumed run differs: §3.1.
# - *"The same seed gives the same shuffle."* Not across libraries: §4.
# - *"An export accepts any input a Python function would."* It accepts the shapes it was
#   exported for, and a concrete batch size stays fixed: §5.
# - *"`copy=True` means JAX no longer reads my tensor."* The transfer may read it after the
#   call returns; a host copy you own is safe: §6.1.
# - *"DLPack transfers are always zero-copy."* Not for float64 in 32-bit mode or for
#   misaligned buffers: compare the pointers, §6.1.
# - *"Calling JAX from PyTorch means writing the backward by hand."* `jax.vjp` supplies it,
#   and the `autograd.Function` only passes PyTorch's output gradient to it: §6.2.
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("06_ecosystem")

# %% [markdown]
# **Next:** the exercises in `exercises/06_ecosystem_exercises.ipynb`: an Optax chain that
# matches a `torch.optim` setup, a checkpoint round trip, an export with a dynamic batch, and
# a JAX function with a PyTorch backward.
