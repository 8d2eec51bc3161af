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
# # 12 · Exercises: the GPT at speed and scale
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/12_gpt_at_scale_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/12_gpt_at_scale_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/12_gpt_at_scale_exercises.ipynb)
#
# Two exercises on lesson 12's GPT at scale, each in both frameworks: a data-parallel loss,
# with JAX shardings and with the gradients PyTorch's ranks average, and a resume from a
# checkpoint that continues bit for bit, with Orbax and DCP. Replace each
# `raise NotImplementedError()` with your code, then run the check cell below it: it prints
# "passed", explains what is wrong, or says "not implemented yet".

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
SIZES = {"seq": (32, 8), "batch": (32, 8), "steps": (6, 3)}  # name: (full, smoke)

# %%
from course_utils import env

SETUP = env.setup(one_kind=True, cpu_devices=8)  # first: 8 simulated JAX devices, JAX
# before PyTorch, float32, one device kind for both (on a TPU, the CPU: PyTorch stays there)

import tempfile
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import torch
import torch.distributed.checkpoint as dcp
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from course_utils import config, gpt
from course_utils.exercises import check
from course_utils.gpt.model import GPTConfig, NNXGPT
from course_utils.parity import assert_close
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

S = config.sizes(SIZES, SMOKE)
CFG = GPTConfig(vocab_size=32, block_size=S.seq, d_model=16, n_heads=4, n_layers=2, d_ff=32)
from course_utils import meshes

DEVICES = meshes.devices(8)  # the meshes' devices: 8 accelerators if there are, else simulated CPUs
print(CFG)


# %% [markdown]
# ## Exercise 1 · A data-parallel loss with `jax.jit` shardings
#
# `loss_fn(params, x, y)` is the GPT's mean cross-entropy over a batch. Data parallelism in
# JAX needs no new code: it is the same function, jitted with shardings. Write
# `data_parallel(loss_fn, mesh)`. It returns `jax.jit(loss_fn, ...)` whose `in_shardings` keep
# the parameters replicated on every device of `mesh` and split `x` and `y` by their first
# axis, the batch, over the mesh axis `"data"`. Its `out_shardings` make the loss replicated.
# The loss must equal the one-device loss. About 4 lines, with `NamedSharding(mesh, P(...))`.
#
# The PyTorch half. There, data parallelism is one process per device, DDP or FSDP2. Each
# computes the loss of its own rows and its gradients, then an all-reduce averages the
# gradients. Write `data_parallel_grads_torch(model, x, y, world)`: compute in one process
# what each of the `world` ranks would, rank by rank, each with its rows of `x` **and** `y`.
# Return the gradients after the all-reduce, `{name: gradient}`; they must equal the gradients
# of the whole batch. About 6 lines, with `tensor.chunk` and `model.zero_grad()`.

# %%
# EXERCISE: dp-loss
def data_parallel(loss_fn, mesh):
    """jax.jit(loss_fn) with params replicated, x and y split on axis 0 over 'data', loss replicated."""
    ### BEGIN SOLUTION
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
    ### END SOLUTION


def data_parallel_grads_torch(model, x, y, world: int) -> dict:
    """PyTorch: each of `world` ranks' gradients on its rows of (x, y), averaged as DDP's all-reduce does."""
    ### BEGIN SOLUTION
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
    ### END SOLUTION


# %%
graphdef, params, rest = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(0)))
loss_fn = gpt.train.jax_loss(graphdef, rest)
mesh8 = gpt.shard.mesh((8,), ("data",))
tokens = np.random.default_rng(3).integers(0, CFG.vocab_size, (S.batch, S.seq + 1)).astype(np.int32)
x_np, y_np = tokens[:, :-1], tokens[:, 1:]
expected_loss = jax.jit(loss_fn)(params, x_np, y_np)  # one device


def _dp_loss():
    return data_parallel(loss_fn, mesh8)(params, x_np, y_np)


torch.manual_seed(0)
model_dp_torch = gpt.model.TorchGPT(CFG)
x_dp_torch, y_dp_torch = torch.from_numpy(x_np).long(), torch.from_numpy(y_np).long()
model_dp_torch.zero_grad()
model_dp_torch.loss(x_dp_torch, y_dp_torch).backward()
expected_grads_torch = {name: p.grad.clone() for name, p in model_dp_torch.named_parameters()}  # the whole batch
WORLD = 4  # ranks
x_same, y_same = x_dp_torch[: S.batch // WORLD].repeat(WORLD, 1), y_dp_torch[: S.batch // WORLD].repeat(WORLD, 1)
model_dp_torch.zero_grad()
model_dp_torch.loss(x_same, y_same).backward()  # a batch whose WORLD parts are the same rows
same_grads_torch = {name: p.grad.clone() for name, p in model_dp_torch.named_parameters()}


def _grads_times(factor, x=x_dp_torch, y=y_dp_torch, expected=expected_grads_torch):
    """Whether the PyTorch answer is the expected gradients times factor (a slip's fingerprint)."""
    model_dp_torch.zero_grad(set_to_none=True)  # every call starts as a fresh rank would
    got = data_parallel_grads_torch(model_dp_torch, x, y, WORLD)
    return all(torch.allclose(got[n], factor * g, rtol=1e-4, atol=1e-7) for n, g in expected.items())


def _rows_per_rank():
    """The rows of x each model.loss call got in data_parallel_grads_torch: one call per rank."""
    seen, loss = [], model_dp_torch.loss
    model_dp_torch.loss = lambda x, y: (seen.append(len(x)), loss(x, y))[1]  # an instance attribute, removed after
    try:
        data_parallel_grads_torch(model_dp_torch, x_dp_torch, y_dp_torch, WORLD)
    finally:
        del model_dp_torch.loss
    return seen


_PARAMS_SPLIT = ("JAX: the parameters were split over 'data', where data parallelism would not split the "
                 "parameters at all")
DP_CRASHES = {  # a piece of JAX's error -> the one cause it points to
    "wrong length": "JAX: in_shardings needs one entry per argument: params, x and y",
    "non-empty mesh": "JAX: a bare PartitionSpec names no devices, so jit cannot tell which mesh to shard the "
                      "arrays onto",
    "not found in mesh": "JAX: a PartitionSpec names the mesh's own axes, and mesh8 has one, 'data'",
    "evenly divide": _PARAMS_SPLIT,
    "should be divisible by": _PARAMS_SPLIT,  # jax 0.7's words for "evenly divide"
    "incompatible with its sharding": "JAX: the loss is a scalar, which out_shardings can only replicate",
}


def _dp_crash_hint():
    """The crash hint for the JAX half: the cause JAX's own error points to, else a general one."""
    try:
        data_parallel(loss_fn, mesh8)(params, x_np, y_np)
    except Exception as err:  # noqa: BLE001 - read, not handled: the check below reports it
        return next((hint for piece, hint in DP_CRASHES.items() if piece in str(err)),
                    "JAX: jax.jit could not place the arrays with the shardings it was given")
    return ""


def _dp_x_spec():
    """How the compiled function takes x: the mesh axis each of its dimensions is split over."""
    sharding = data_parallel(loss_fn, mesh8).lower(params, x_np, y_np).compile().input_shardings[0][1]
    spec = getattr(sharding, "spec", None)  # a SingleDeviceSharding has none: nothing split
    return tuple(spec) if spec else ()


# %%
# TESTS: dp-loss points=3
check("dp-loss", lambda: _rows_per_rank() != [S.batch], True,
      hint="PyTorch: model.loss ran once, on the whole batch: its gradients are the ones to match, but data "
           "parallelism has each of the world ranks compute the loss of its own rows only",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", lambda: S.batch in _rows_per_rank(), False,
      hint="PyTorch: a rank's model.loss got every row of the batch: the batch was cut along another axis "
           "than its first (chunk's dim=1 cuts every sequence), where each rank takes whole sequences, its "
           "own rows",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
check("dp-loss", _rows_per_rank, [S.batch // WORLD] * WORLD,
      hint="PyTorch: world ranks, each with batch / world rows: world is the number of pieces of the batch, "
           "not the size of each piece (the chunk count, not the chunk size)",
      crash_hint="PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs "
                 "with another number of targets")
ROWS = ("PyTorch: a rank's x and y do not have the same rows: model.loss got one rank's inputs with another "
        "number of targets")
check("dp-loss", lambda: _grads_times(WORLD), False,
      hint="PyTorch: the ranks' gradients were summed rather than averaged, as DDP's all-reduce does",
      crash_hint=ROWS)
check("dp-loss", lambda: _grads_times(WORLD / S.batch), False,
      hint="PyTorch: the summed gradients were divided by another count than world, the batch size: each "
           "rank's loss is already a mean over its rows")
check("dp-loss", lambda: _grads_times((WORLD + 1) / 2, x_same, y_same, same_grads_torch), False,
      hint="PyTorch: each rank's backward() added to the gradients the rank before it left in .grad: "
           "gradients accumulate until zero_grad clears them")
check("dp-loss", lambda: model_dp_torch.zero_grad(set_to_none=True) or data_parallel_grads_torch(
          model_dp_torch, x_dp_torch, y_dp_torch, WORLD), expected_grads_torch, rtol=1e-4, atol=1e-6,
      hint="PyTorch: every rank's entry holds the last rank's gradients: the final .grad returned alone, or "
           "p.grad kept without a copy, which the next rank's zero_grad and backward overwrite")
check("dp-loss", _dp_loss, expected_loss, rtol=1e-5, atol=1e-6,
      hint="the loss of the whole batch is the mean of the shards' losses, not their sum",
      crash_hint=_dp_crash_hint())
check("dp-loss", lambda: "data" in _dp_x_spec(), True,
      hint="JAX: the batch is not split: the compiled function takes x whole on every device, so each "
           "device computes the loss of the whole batch")
check("dp-loss", lambda: _dp_x_spec()[:1] == ("data",), True,
      hint="JAX: x is split over 'data', but along another axis than its first: each device gets a slice "
           "of every sequence, not whole sequences, the rows of its own part of the batch")


def _dp_shardings():
    """(y split over 'data', every parameter replicated) in the compiled function."""
    (params_in, _, y_in), _ = data_parallel(loss_fn, mesh8).lower(params, x_np, y_np).compile().input_shardings
    y_spec = getattr(y_in, "spec", None)
    return (tuple(y_spec)[:1] if y_spec else ()), all(s.is_fully_replicated for s in jax.tree.leaves(params_in))


check("dp-loss", lambda: _dp_shardings()[0] == ("data",), True,
      hint="JAX: x is split over 'data' but y is not: each device holds every target and only its own "
           "rows of inputs")
check("dp-loss", lambda: _dp_shardings()[1], True,
      hint="JAX: the parameters are split over the devices, which is FSDP's layout, not data "
           "parallelism's, where every device holds all of them")

# %%
# HIDDEN TESTS: dp-loss points=2
### BEGIN HIDDEN TESTS
_dp = data_parallel(loss_fn, mesh8)
_tok = np.random.default_rng(9).integers(0, CFG.vocab_size, (16, S.seq + 1)).astype(np.int32)
assert_close(_dp(params, _tok[:, :-1], _tok[:, 1:]), jax.jit(loss_fn)(params, _tok[:, :-1], _tok[:, 1:]),
             rtol=1e-5, atol=1e-6, name="dp loss, batch 16")
_compiled = _dp.lower(params, x_np, y_np).compile()
assert all(s.is_fully_replicated for s in jax.tree.leaves(_compiled.input_shardings[0][0]))
assert _compiled.output_shardings.is_fully_replicated
_g2 = data_parallel_grads_torch(model_dp_torch, x_dp_torch, y_dp_torch, 2)
assert_close(_g2, expected_grads_torch, rtol=1e-4, atol=1e-6, name="PyTorch, 2 ranks")
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · Resume from a checkpoint, bit for bit
#
# A run trained `k` steps, then saved with Orbax the pytree
# `{"params": ..., "opt_state": ..., "step": ...}`: the parameters, AdamW's state with its step
# count, and the number of batches consumed. It used `gpt.checkpoint.orbax_save`, lesson 12's
# `ocp.v1.save`. Write `resume(path, params_like, opt_state_like)`. It reads the checkpoint
# back into the structure, shapes and devices of `params_like` and `opt_state_like`, a fresh
# model's parameters and `tx.init` of them. It returns `(params, opt_state, next_batch)`.
# Orbax accepts live arrays as the target. The solution passes their abstract form,
# `gpt.checkpoint.abstract_like`: shapes, dtypes and shardings, which is all a real restart
# has. Training on from there must give the uninterrupted run's losses and parameters
# **exactly**. About 4 lines.
#
# Then the PyTorch half, with `torch.distributed.checkpoint` (DCP). A run saved
# `{"model": ..., "optim": ..., "step": tensor(k)}`, the state dicts from
# `get_state_dict(model, optimizer)`. Write `resume_torch(path, model, optimizer)`. DCP loads
# *in place* into a state dict of the same structure: build one from the fresh model and
# optimizer you are given, `dcp.load` it with `no_dist=True`, and return the next batch. In
# one process that dict holds the model's own tensors, so the checks cannot tell whether you
# then call `set_state_dict`. The solution does: it is the public way back, and it still works
# where the state dict holds copies. About 5 lines.

# %%
# EXERCISE: resume
def resume(path, params_like, opt_state_like):
    """-> (params, opt_state, next_batch) from a checkpoint {'params', 'opt_state', 'step'}."""
    ### BEGIN SOLUTION
    target = gpt.checkpoint.abstract_like({"params": params_like, "opt_state": opt_state_like,
                                           "step": jnp.zeros((), jnp.int32)})
    saved = ocp.v1.load(path, target)
    return saved["params"], saved["opt_state"], int(saved["step"])
    ### END SOLUTION


def resume_torch(path, model, optimizer) -> int:
    """PyTorch: fill the fresh model and optimizer from the DCP checkpoint at path, in place; -> next_batch."""
    ### BEGIN SOLUTION
    msd, osd = get_state_dict(model, optimizer)
    state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["step"])
    ### END SOLUTION


# %%
tx = gpt.train.jax_adamw()
train_step = jax.jit(gpt.train.jax_step(graphdef, rest, tx))
rng = np.random.default_rng(4)
batches = [tuple(a.astype(np.int32) for a in np.split(rng.integers(0, CFG.vocab_size, (S.batch, 2 * S.seq)), 2, 1))
           for _ in range(2 * S.steps)]
ckpt_dir = Path(tempfile.mkdtemp(prefix="course-12-"))
p_k, o_k, _ = gpt.train.jax_run(train_step, params, tx.init(params), batches[: S.steps])
gpt.checkpoint.orbax_save(ckpt_dir / "step", {"params": p_k, "opt_state": o_k, "step": jnp.asarray(S.steps, jnp.int32)})
p_end, _, losses_after = gpt.train.jax_run(train_step, p_k, o_k, batches[S.steps :])  # uninterrupted
print(f"checkpoint after {S.steps} steps; the uninterrupted run's next losses: {np.round(losses_after, 4)}")


torch.manual_seed(0)
model_k_torch = gpt.model.TorchGPT(CFG)
opt_k_torch = gpt.train.torch_adamw(model_k_torch)
batches_torch = [tuple(a.astype(np.int64) for a in b) for b in batches]  # cross_entropy wants int64 targets
gpt.train.torch_run(model_k_torch, opt_k_torch, batches_torch[: S.steps])
gpt.checkpoint.dcp_save(ckpt_dir / "dcp", model_k_torch, opt_k_torch, step=S.steps)
losses_after_torch = gpt.train.torch_run(model_k_torch, opt_k_torch, batches_torch[S.steps :])  # uninterrupted
params_end_torch = {name: p.detach().clone() for name, p in model_k_torch.named_parameters()}


def _resumed_torch():
    torch.manual_seed(1)  # other weights, an empty optimizer: all must come back
    model = gpt.model.TorchGPT(CFG)
    optimizer = gpt.train.torch_adamw(model)
    with warnings.catch_warnings():  # DCP without a process group says it assumes one process
        warnings.filterwarnings("ignore", message="torch.distributed is disabled", category=UserWarning)
        nxt = resume_torch(ckpt_dir / "dcp", model, optimizer)
    losses = gpt.train.torch_run(model, optimizer, batches_torch[nxt:])
    return losses, {name: p.detach() for name, p in model.named_parameters()}


def _resumed():
    fresh = gpt.train.jax_split(NNXGPT(CFG, rngs=nnx.Rngs(1)))[1]  # other weights: all must come back
    p, o, nxt = resume(ckpt_dir / "step", fresh, tx.init(fresh))
    p, _, losses = gpt.train.jax_run(train_step, p, o, batches[nxt:])
    return losses, p


# %%
# TESTS: resume points=3
check("resume", lambda: len(_resumed()[0]), len(losses_after), rtol=0, atol=0,
      hint="the resumed run trains on another number of batches than the uninterrupted one: it does not "
           "start from the saved step",
      crash_hint="Orbax restores into a target of the checkpoint's own structure, the three keys that were "
                 "saved: 'params', 'opt_state' and 'step'. Without a target it returns plain dicts, where "
                 "optax's named tuples were saved")
check("resume", lambda: _resumed()[0][:1], losses_after[:1], rtol=0, atol=0,
      hint="the first loss after the resume differs from the uninterrupted run's: the parameters it starts "
           "from are not the saved ones")
check("resume", lambda: _resumed(), (losses_after, p_end), rtol=0, atol=0,
      hint="the losses match at first and then part: the run resumes with a fresh optimizer state (zero "
           "moments, step count 0), not the saved AdamW state")
check("resume", lambda: len(_resumed_torch()[0]), len(losses_after_torch), rtol=0, atol=0,
      hint="PyTorch: the resumed run trains on another number of batches than the uninterrupted one: it "
           "does not start from the saved step",
      crash_hint="PyTorch: dcp.load fills, in place, a state dict of the saved structure, {'model', 'optim', "
                 "'step'}, every entry a tensor, the step too and not a Python int. torch.load reads "
                 "torch.save's single file, not DCP's directory")
check("resume", lambda: _resumed_torch()[0][:1], losses_after_torch[:1], rtol=0, atol=0,
      hint="PyTorch: the first loss after the resume differs: the model trains on with its fresh weights, "
           "not the saved ones")
check("resume", lambda: _resumed_torch(), (losses_after_torch, params_end_torch), rtol=0, atol=0,
      hint="PyTorch: the losses match at first and then part: AdamW resumes with a fresh state (no moments, "
           "step count 0), not the saved AdamW state (a fresh optimizer's own state_dict() has no moments "
           "for the checkpoint to fill)")

# %%
# HIDDEN TESTS: resume points=2
### BEGIN HIDDEN TESTS
_losses, _p = _resumed()
assert _losses == losses_after, (_losses, losses_after)
assert all((np.asarray(a) == np.asarray(b)).all() for a, b in zip(jax.tree.leaves(_p), jax.tree.leaves(p_end), strict=True))
_losses_t, _p_t = _resumed_torch()
assert _losses_t == losses_after_torch
assert all(torch.equal(_p_t[n], params_end_torch[n]) for n in params_end_torch)
### END HIDDEN TESTS

# %% [markdown]
# ## Done
#
# You wrote a loss that runs on eight devices unchanged, the gradients PyTorch's ranks average,
# and a resume that loses nothing, with Orbax and DCP: lesson 12's scale-out and checkpoints in
# miniature.
