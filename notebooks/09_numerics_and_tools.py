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
# # 09 · Numerics and tools: precision, profilers, debuggers, randomness
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/09_numerics_and_tools.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/09_numerics_and_tools.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/09_numerics_and_tools.ipynb)
#
# Once a model trains in both frameworks, the next questions are about the machinery around
# it: how to train in 16-bit floats without losing the model, where the time of a step goes,
# how to find the NaN or the silent indexing bug inside compiled code, and how to make two runs
# print the same numbers. Each framework answers these with different tools built on different
# beliefs (PyTorch: a mode that rewrites the ops run inside it; JAX: explicit dtypes, explicit
# keys, and a compiler that can be asked what it did). This lesson puts the tools side by side
# on one small model and measures what each shows.
#
# **Learning objectives.** After this notebook you can
# 1. train in bfloat16 with `torch.autocast` and with Flax NNX's `dtype`/`param_dtype`, say where
#    each keeps float32, and explain the gap between a bfloat16 and a float32 loss curve from
#    measured rounding errors;
# 2. record a `torch.profiler` and a `jax.profiler` trace of the same step, read their top ops
#    (and what they say about fusion), and count FLOPs with `cost_analysis` and `FlopCounterMode`;
# 3. hunt NaNs, out-of-bounds indices, tracer errors and graph breaks in compiled code, and make
#    random streams and whole training runs reproducible bit for bit in both frameworks.

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
    "steps": (300, 30),  # training steps per precision run (section 1)
    "batch_size": (128, 64),  # examples per training step
    "hidden": (256, 64),  # hidden units of the MLP
    "profile_steps": (10, 3),  # training steps recorded by each profiler
    "repro_steps": (50, 5),  # steps of each run in the reproducibility check
    "mm_size": (4096, 1024),  # matmul side for the tensor-core claim (GPU only)
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both, and one device kind for both (this lesson compares them throughout).
SETUP = env.setup(one_kind=True)

import tempfile
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax
import torch
import torch.nn.functional as F
from flax import nnx
from IPython.display import Markdown, display
from jax.experimental import checkify
from torch.utils.flop_counter import FlopCounterMode

from course_utils import claims, compat, config, contention, data, profiles, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch_dev, jax_dev = SETUP.pair()  # one kind of device for both frameworks
VERDICTS = {}  # every registered claim this lesson judges, for the table at the end
print(env.report().line())

# %% [markdown]
# The line above records the versions, the device each framework computes on (one kind for
# both) and the float32 precision settings. On a CPU everything below runs as written; on a GPU
# the same cells run there, and the few statements that depend on the hardware (tensor cores,
# deterministic GPU kernels) say which branch this run took.
#
# ## 1. Mixed precision
#
# **Key concepts**
# - float16 has 10 mantissa bits and a narrow exponent (largest value 65,504); bfloat16 keeps
#   float32's 8-bit exponent and only 7 mantissa bits. bfloat16 rarely overflows but rounds
#   coarsely; float16 rounds finer but under- and overflows.
# - PyTorch: `torch.autocast` is a mode. Inside it, ops on its lower-precision list (matmuls,
#   convolutions) cast their inputs to the low dtype, ops on its float32 list cast them up, and
#   the rest run in their inputs' dtype; parameters stay float32. `GradScaler` multiplies the
#   loss so that float16 gradients do not underflow.
# - JAX/Flax NNX: no mode. A layer's `dtype` is the dtype it computes in, `param_dtype` the dtype
#   it stores; Optax updates whatever the parameters are (float32 here: the "master weights").
#   Where float32 is needed (the loss), you cast.
#
# Why bother? On accelerators with matrix units (NVIDIA tensor cores, TPU MXUs) a matmul in a
# 16-bit format the unit takes (bfloat16 on TPUs; float16 on every NVIDIA GPU with tensor cores,
# bfloat16 too since Ampere) has a much higher peak rate than a float32 one and moves half the
# bytes: NVIDIA's A100
# datasheet lists 19.5 TFLOPS for float32 and 312 TFLOPS for bfloat16 or float16 on tensor
# cores (dense, without sparsity), a factor of 16 in peak rate (a real step gains less). Most CPUs have
# no such unit (Intel's AMX, on recent Xeons, is one; section 1.4 reads whether this CPU has it),
# so this section is about *numerics*: what changes in the numbers when a
# step runs in 16 bits, and how each framework decides which ops do. Speed is a GPU/TPU question,
# and the lesson says so where it comes up.
#
# bfloat16 ("brain float") was designed at Google for TPUs with one observation: neural
# networks tolerate coarse rounding far better than they tolerate overflow. Keeping float32's
# exponent means any float32 number converts to bfloat16 by dropping the low 16 bits of its
# mantissa (with rounding), so the range is float32's: only values within a rounding step of
# float32's largest (about 3.4e38) round up to infinity, and no loss scaling is needed. float16 came from graphics, where values are bounded; in training, activations and
# gradients span many orders of magnitude, and float16 needs help (section 1.3) to cover them.
#
# First the formats themselves, read from each framework's `finfo`: the largest finite value,
# the smallest normal value, and the machine epsilon (the gap between 1 and the next number).

# %%
# PyTorch: torch.finfo
finfo_torch = {
    name: torch.finfo(dt) for name, dt in
    [("float32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)]
}
{name: (fi.bits, fi.max, fi.tiny, fi.eps) for name, fi in finfo_torch.items()}

# %%
# JAX: jnp.finfo (the same formats, from ml_dtypes)
finfo_jax = {name: jnp.finfo(jnp.dtype(name)) for name in ["float32", "bfloat16", "float16"]}
{name: (fi.bits, float(fi.max), float(fi.tiny), float(fi.eps)) for name, fi in finfo_jax.items()}

# %%
for name in finfo_torch:
    t, j = finfo_torch[name], finfo_jax[name]
    assert (t.bits, t.max, t.tiny, t.eps) == (j.bits, float(j.max), float(j.tiny), float(j.eps)), name
display(Markdown(
    "| format | bits | largest | smallest normal | epsilon |\n|---|---:|---:|---:|---:|\n"
    + "\n".join(f"| {n} | {fi.bits} | {fi.max:.4g} | {fi.tiny:.3g} | {fi.eps:.3g} |" for n, fi in finfo_torch.items())
))
eps = {name: fi.eps for name, fi in finfo_torch.items()}
print(f"bfloat16's epsilon is {eps['bfloat16'] / eps['float16']:g} times float16's "
      f"and {eps['bfloat16'] / eps['float32']:,g} times float32's")

# %% [markdown]
# Both frameworks describe the same three formats (the cell asserts it). Read the table by
# column: bfloat16's smallest normal is float32's and its largest value nearly so (same
# exponent: 3.39e38 against 3.40e38, the difference being the mantissa bits it lacks, so
# float32's very largest values round to infinity in bfloat16), while float16 stops at 65,504
# and its smallest normal is about 6e-5. bfloat16's epsilon is 2⁻⁷:
# any number in the normal range is stored with a relative rounding error up to 2⁻⁸ ≈ 0.4 %.
# The line under the table divides the epsilons: bfloat16 rounds 2³ = 8 times coarser than float16 (7 mantissa bits
# against 10) and 2¹⁶ times coarser than float32 (against 23).
#
# The consequences, in one cell per framework: 70,000 is infinity in float16 and fine in
# bfloat16; 1 + 0.001 is 1 in bfloat16; a gradient of 1e-8 vanishes in float16 unless it is
# scaled up first (which is what `GradScaler` does).

# %%
# PyTorch: overflow, rounding, underflow
probe_torch = torch.tensor([70_000.0, 1.001, 1e-8])
{name: probe_torch.to(dt).float().tolist() for name, dt in [("bfloat16", torch.bfloat16), ("float16", torch.float16)]} | {
    "float16 of 1e-8 * 2**16": (torch.tensor(1e-8) * 2**16).half().item()}

# %%
# JAX: the same three numbers
probe_jax = jnp.array([70_000.0, 1.001, 1e-8])
{name: probe_jax.astype(name).astype(jnp.float32).tolist() for name in ["bfloat16", "float16"]} | {
    "float16 of 1e-8 * 2**16": float((jnp.float32(1e-8) * 2**16).astype(jnp.float16))}

# %%
for name, dt in [("bfloat16", torch.bfloat16), ("float16", torch.float16)]:  # the 16-bit patterns
    bits_torch = probe_torch.to(dt).view(torch.int16).numpy()
    assert_close(bits_torch, jax.lax.bitcast_convert_type(probe_jax.astype(name), jnp.int16), rtol=0, atol=0)

# %% [markdown]
# The roundings are bit for bit the same in both frameworks: the formats are IEEE-style and
# round to nearest even, so a cast of a number is not a place where they can differ (only the
# bit pattern a NaN is given may). Differences in
# mixed-precision training come from *which* values get rounded, and when.
#
# ### 1.1 Where each framework computes in 16 bits and where it keeps float32
#
# `torch.autocast` decides per op: a matmul-like op ("lower precision" list) casts its inputs
# down, a numerically delicate one ("float32" list) casts up, and the rest run in whatever dtype
# their inputs have. The lists are per device type: PyTorch's "Automatic Mixed Precision"
# reference lists, for CUDA, `softmax`, `log_softmax`, `layer_norm` and the losses among the ops
# autocast runs in float32, while the CPU list is a different one. The cell asks this device's autocast directly, and the line under the table
# names the rows that came back float32 here. JAX has no such lists:
# the mirrored cell shows the dtype each JAX/Flax function returns when it is given bfloat16, which
# is the whole policy (a layer computes in its `dtype`; a function computes in its input's dtype).

# %%
# PyTorch: the dtype each op returns inside autocast (bfloat16) on this device
x_probe_torch = torch.randn(8, 16, device=torch_dev)
lin_torch = torch.nn.Linear(16, 10).to(torch_dev)
labels_probe_torch = torch.zeros(8, dtype=torch.long, device=torch_dev)
with torch.autocast(torch_dev.type, dtype=torch.bfloat16):
    h_torch = lin_torch(x_probe_torch)
    dtypes_torch = {
        "linear": h_torch.dtype, "relu": torch.relu(h_torch).dtype,
        "softmax": torch.softmax(h_torch, -1).dtype, "log_softmax": torch.log_softmax(h_torch, -1).dtype,
        "layer_norm": F.layer_norm(h_torch, (10,)).dtype,
        "cross_entropy": F.cross_entropy(h_torch, labels_probe_torch).dtype, "sum": h_torch.sum().dtype,
    }
dtypes_torch

# %%
# JAX: the dtype each function returns, given a bfloat16 layer (NNX dtype) and its output
x_probe_jax = jax.random.normal(jax.random.key(0), (8, 16))
lin_jax = nnx.Linear(16, 10, dtype=jnp.bfloat16, param_dtype=jnp.float32, rngs=nnx.Rngs(0))
h_jax = lin_jax(x_probe_jax)
dtypes_jax = {
    "linear": h_jax.dtype, "relu": jax.nn.relu(h_jax).dtype,
    "softmax": jax.nn.softmax(h_jax).dtype, "log_softmax": jax.nn.log_softmax(h_jax).dtype,
    "layer_norm": nnx.LayerNorm(10, dtype=jnp.bfloat16, rngs=nnx.Rngs(0))(h_jax).dtype,
    "cross_entropy": optax.softmax_cross_entropy_with_integer_labels(h_jax, jnp.zeros(8, int)).dtype,
    "sum": h_jax.sum().dtype,
}
assert lin_jax.kernel[...].dtype == jnp.float32  # stored in float32, computed in bfloat16
dtypes_jax

# %%
assert str(dtypes_torch["linear"]).endswith("bfloat16") and dtypes_jax["linear"] == jnp.bfloat16
display(Markdown(
    f"| op, given bfloat16 | PyTorch autocast on {torch_dev.type} | JAX / Flax NNX |\n|---|---|---|\n"
    + "\n".join(f"| `{op}` | {str(dtypes_torch[op]).removeprefix('torch.')} | {dtypes_jax[op]} |" for op in dtypes_torch)
))
upcast = [op for op, dt in dtypes_torch.items() if dt == torch.float32]
print(f"autocast on {torch_dev.type} returned float32 for: {', '.join(upcast) or 'no op'}; "
      f"the other {len(dtypes_torch) - len(upcast)} rows stayed bfloat16")

# %% [markdown]
# The parity cell checks the one thing both must agree on (the linear layer computes in
# bfloat16) and prints the rest side by side, with the float32 rows of this device's autocast
# named under the table. Read the rows where the columns differ: wherever PyTorch's column
# says float32, autocast upcast for you; the JAX column in that row says what
# you get without asking, and it is the row where a JAX program must cast by hand
# (`logits.astype(jnp.float32)` before the loss; Flax's normalisation layers also compute
# their statistics in at least float32 internally, whatever `dtype` says: the helper behind
# them, `_compute_stats` in `flax/nnx/nn/normalization.py`, promotes its input to float32
# before it takes the mean and the variance). The training loops
# below do exactly that: PyTorch's loss goes through autocast, JAX's through an explicit cast.
#
# Why keep the *parameters* in float32 even when every matmul runs in 16 bits? Because of the
# update. bfloat16's epsilon is 2⁻⁷ ≈ 0.008: a weight of 1.0 stored in bfloat16 cannot move by
# less than about 0.004, so an SGD update of 1e-4 rounds to no change at all, and training
# stalls while the loss still looks fine. Storing float32 "master weights" and casting them to
# bfloat16 on the way into each matmul avoids this; it is what autocast does implicitly (it never
# touches `model.parameters()`) and what `param_dtype=jnp.float32` does explicitly in Flax. Optax
# has no opinion: it updates the parameters in whatever dtype they have, so a model built with
# `param_dtype=jnp.bfloat16` gets bfloat16 updates and their lost small steps. (Pure-bfloat16
# training exists, but with tricks such as stochastic rounding or Kahan-summed updates that
# this lesson does not need.)
#
# The two designs also differ in *scope*. Autocast is a context: everything the `with` block
# calls on its own thread is affected, including library code you did not write, and nothing
# outside is (its state is thread-local, so a worker thread started inside the block runs
# without it until it enters an autocast of its own).
# Flax's dtype is a property of each layer: a model mixes dtypes by construction (a float32
# final layer or normalisation is a constructor argument), and a plain function such as
# `jax.nn.softmax` simply follows its input's dtype.
#
# ### 1.2 The same model, trained in float32 and in bfloat16, in both frameworks
#
# A two-layer MLP on scikit-learn's 8×8 digits (flattened to 64 features), with one set of
# initial weights drawn in NumPy and copied into both frameworks, one batch order, and plain
# SGD. In float32 the two frameworks must produce the same loss curve; in bfloat16 each may
# round differently, and the question is by how much.
#
# Why an MLP and not the CNN of lesson 04? Mixed precision is about matmuls (a convolution is a
# matmul in disguise), and an MLP's step is nearly all matmul in FLOPs (section 2 counts them),
# so it isolates the effect, though the small elementwise ops take a larger share of the time; it is
# also cheap enough to train for a few hundred steps a dozen times within the lesson's time budget
# (the four runs below, and the eight of the storage comparison after them).

# %%
split = data.load_digits(seed=0)
X_train = split.X_train.reshape(len(split.X_train), -1)  # (n, 64)
per_epoch = len(X_train) // S.batch_size
BATCHES = list(data.batches(X_train, split.y_train, S.batch_size, seed=0, epochs=-(-S.steps // per_epoch)))[: S.steps]
rng = np.random.default_rng(0)
W0 = {  # the initial weights both frameworks copy; kernels are (in, out)
    "W1": (rng.standard_normal((64, S.hidden)) / 8).astype(np.float32), "b1": np.zeros(S.hidden, np.float32),
    "W2": (rng.standard_normal((S.hidden, 10)) / np.sqrt(S.hidden)).astype(np.float32), "b2": np.zeros(10, np.float32),
}
LR = 0.1
len(BATCHES), BATCHES[0][0].shape


# %%
# PyTorch: the MLP, weights copied from W0 (nn.Linear stores (out, in))
class MLPTorch(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(64, S.hidden), torch.nn.Linear(S.hidden, 10)
        with torch.no_grad():
            for layer, k, b in [(self.fc1, "W1", "b1"), (self.fc2, "W2", "b2")]:
                layer.weight.copy_(torch.from_numpy(w[k].T))
                layer.bias.copy_(torch.from_numpy(w[b]))

    def forward(self, x):  # x: (batch, 64)
        return self.fc2(torch.relu(self.fc1(x)))


# %%
# JAX: the same MLP in Flax NNX; dtype = compute dtype, param_dtype = storage (float32)
class MLPNNX(nnx.Module):
    def __init__(self, w, dtype):
        kw = dict(dtype=dtype, param_dtype=jnp.float32, rngs=nnx.Rngs(0))
        self.fc1, self.fc2 = nnx.Linear(64, S.hidden, **kw), nnx.Linear(S.hidden, 10, **kw)
        for layer, k, b in [(self.fc1, "W1", "b1"), (self.fc2, "W2", "b2")]:
            layer.kernel[...], layer.bias[...] = jnp.asarray(w[k]), jnp.asarray(w[b])

    def __call__(self, x):  # x: (batch, 64)
        return self.fc2(jax.nn.relu(self.fc1(x)))


# %%
x_first_np = BATCHES[0][0]  # the first batch, (batch, 64)
with torch.no_grad():
    logits0_torch = MLPTorch(W0)(torch.from_numpy(x_first_np))
assert_close(logits0_torch, MLPNNX(W0, jnp.float32)(jnp.asarray(x_first_np)), rtol=1e-5, atol=1e-5)


# %% [markdown]
# The two models hold the same weights and give the same logits on the first batch (the parity
# cell). Copying one NumPy draw into both is what makes the comparison possible at all: each
# framework's own initialiser draws from its own generator (section 4.1), so two models "built
# the same way" start from different weights and their loss curves cannot be compared step by
# step. Note the transpose: `nn.Linear` stores its weight as (out, in) and computes `x @ W.T`,
# while `nnx.Linear` stores its kernel as (in, out) and computes `x @ kernel`. Next the training
# step and the loop that runs it, mirrored the same way.

# %%
# PyTorch: one SGD step, the forward under autocast
def step_torch(model, opt, x, y, dtype):
    """One SGD step; the forward under autocast when dtype is bfloat16 or float16."""
    with torch.autocast(torch_dev.type, dtype=dtype, enabled=dtype != torch.float32):
        loss = F.cross_entropy(model(x), y)  # autocast runs the loss in float32
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


# %%
# JAX: the loss (float32, cast by hand) and one jitted SGD step
def loss_jax(model, x, y):
    logits = model(x).astype(jnp.float32)  # the loss in float32, cast by hand
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@nnx.jit
def step_jax(model, opt, x, y):
    loss, grads = nnx.value_and_grad(loss_jax)(model, x, y)
    opt.update(model, grads)  # Optax's SGD on the float32 parameters
    return loss


# %% [markdown]
# The two step functions read alike on purpose; the loops below only build a fresh model and
# optimiser from `W0` and run one step per batch, returning the losses and the trained model.

# %%
# PyTorch: the training loop
def train_torch(dtype, batches):
    model = MLPTorch(W0).to(torch_dev)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = [step_torch(model, opt, torch.from_numpy(xb).to(torch_dev), torch.from_numpy(yb).to(torch_dev), dtype)
              for xb, yb in batches]
    return torch.stack(losses).float().cpu().numpy(), model


# %%
# JAX: the training loop
def train_jax(dtype, batches):
    model = MLPNNX(W0, dtype)
    opt = nnx.Optimizer(model, optax.sgd(LR), wrt=nnx.Param)
    losses = [step_jax(model, opt, jnp.asarray(xb), jnp.asarray(yb)) for xb, yb in batches]
    return np.asarray(jnp.stack(losses)), model


# %% [markdown]
# The differences between the two steps are the ones this section is
# about: PyTorch wraps the forward in a mode (`autocast`), and the loss inside it is upcast by
# autocast's float32 list; JAX builds a model whose layers compute in `dtype` and casts the
# logits itself. In both, the parameters and the optimiser's update stay float32. Now the
# four runs: float32 and bfloat16 in each framework.

# %%
# PyTorch: float32 and bfloat16 autocast
runs_torch = {name: train_torch(dt, BATCHES) for name, dt in [("float32", torch.float32), ("bfloat16", torch.bfloat16)]}
curves_torch = {name: losses for name, (losses, _) in runs_torch.items()}  # the models are kept for 1.3
{name: c[-1] for name, c in curves_torch.items()}

# %%
# JAX: float32 and bfloat16 compute (float32 parameters)
runs_jax = {name: train_jax(dt, BATCHES) for name, dt in [("float32", jnp.float32), ("bfloat16", jnp.bfloat16)]}
curves_jax = {name: losses for name, (losses, _) in runs_jax.items()}  # the models are kept for 1.3
{name: c[-1] for name, c in curves_jax.items()}

# %%
assert_close(curves_torch["float32"][0], curves_jax["float32"][0], rtol=1e-6, atol=1e-6)  # the first loss
assert_close(curves_torch["float32"], curves_jax["float32"], rtol=1e-4, atol=1e-4)  # the whole curve
print(f"float32 curves: largest gap {np.abs(curves_torch['float32'] - curves_jax['float32']).max():.2e} over {S.steps} steps")

# %% [markdown]
# In float32 the two frameworks trace one curve: the first loss agrees to float32 rounding and
# the largest gap over the whole run is printed above (the order of the sums inside a matmul,
# and the last bit of functions such as `exp` and `log` in the softmax, are where the two
# libraries' float32 kernels may differ). That makes the bfloat16 runs comparable: any gap
# between them and their float32 curves is the 16-bit arithmetic, not a different experiment.

# %%
fig, (ax, ax_gap) = plt.subplots(1, 2, figsize=(11, 3.5))
for fw, curves in [("PyTorch", curves_torch), ("JAX", curves_jax)]:
    for name, c in curves.items():
        ax.plot(c, label=f"{fw} {name}", linestyle="-" if name == "float32" else "--", alpha=0.8)
    ax_gap.plot(curves["bfloat16"] - curves["float32"], label=f"{fw}: bfloat16 − float32", alpha=0.8)
ax.set(xlabel="step", ylabel="training loss", yscale="log", title="one MLP, one batch order")
ax_gap.axhline(0, color="grey", linewidth=0.5)
ax_gap.set(xlabel="step", ylabel="loss difference", title="the gap to float32, each framework")
ax.legend(fontsize="small")
ax_gap.legend(fontsize="small")
plt.tight_layout()

# %% [markdown]
# On the left, on a log scale, a gap of a fraction of a percent between curves cannot be seen.
# The right panel plots the gap itself, each framework's bfloat16 loss minus its float32 loss
# at every step. Two things can be read off it. Its sign: a gap that changes sign from step to
# step is rounding noise around the float32 curve, while one that keeps one sign (or all but
# a few steps) means the
# bfloat16 run has moved onto a slightly different path through the weights, with a lower or a
# higher loss (one run cannot say whether that sign belongs to bfloat16 or to this run). Its
# size over the run: every step starts from the weights the earlier steps left, so a
# difference in one update is carried into every later step, and a gap that grows is that
# drift adding up. The lines under the table read both off this run, and the table puts numbers on it. "Final" is the last step's loss; the mean of
# the last steps (its header says how many) smooths over the batch-to-batch
# noise; the last column is the mean absolute gap between a run's curve and its own framework's
# float32 curve, over all steps.

# %%
tail = max(1, min(10, S.steps // 3))
rows = []
for fw, curves in [("PyTorch", curves_torch), ("JAX", curves_jax)]:
    for name, c in curves.items():
        gap = np.abs(c - curves["float32"]).mean()
        rows.append(f"| {fw} | {name} | {c[-1]:.5f} | {c[-tail:].mean():.5f} | {gap:.2e} |")
display(Markdown(f"| framework | compute dtype | final loss | mean of the last {tail} | mean gap to float32 |\n"
                 "|---|---|---:|---:|---:|\n" + "\n".join(rows)))
third = max(1, S.steps // 3)  # the first and the last third of the run, for the gap's trend
for fw, curves in [("PyTorch", curves_torch), ("JAX", curves_jax)]:
    gap = curves["bfloat16"] - curves["float32"]
    above, below = int((gap > 0).sum()), int((gap < 0).sum())
    signs = np.sign(gap[gap != 0])
    flips = int((signs[1:] != signs[:-1]).sum())  # sign changes between steps (equal losses skipped)
    side = "above" if above > below else "below" if below > above else "on both sides of"
    if above + below == 0:
        sign = "the bfloat16 loss equals the float32 loss at every step"
    elif flips == 0:
        sign = f"the gap keeps one sign: bfloat16's loss ran {side} float32's"
    elif min(above, below) < (above + below) // 4:  # a few steps on the other side
        sign = f"the gap keeps mostly one sign: bfloat16's loss ran {side} float32's"
    elif flips >= max(2, (len(signs) - 1) // 4):
        sign = f"the gap changes sign from step to step ({flips} times): noise around the float32 curve"
    else:
        sign = (f"the gap changes sign only {flips} time{'s' if flips > 1 else ''}, not from step to step: "
                f"a drift, with bfloat16's loss mostly {side} float32's")
    early, late = np.abs(gap[:third]).mean(), np.abs(gap[-third:]).mean()
    trend = ("it grew" if late > 2 * early else "it shrank" if 2 * late < early else "it stayed about the same size")
    size = f"{late / early:.1f}× that over the first {third}: {trend}" if early else f"{late:.2e}, from 0 at first"
    print(f"{fw}: bfloat16 above float32 on {above} of {len(gap)} steps, below on {below}; {sign}; "
          f"its mean size over the last {third} steps is {size}")

# %% [markdown]
# Where does the gap come from? Not from the optimiser: the parameters and the update are
# float32 in all four runs. It comes from the forward and backward passes, where every input
# to a matmul is rounded to 8 significant bits. The cell below measures that rounding on the
# *initial* model, before any training could amplify it: the relative error of the bfloat16
# logits against the float32 ones, in each framework, next to bfloat16's unit roundoff (half its
# epsilon, 2⁻⁸).

# %%
x0 = BATCHES[0][0]  # (batch, 64), one batch, the initial weights
with torch.no_grad(), torch.autocast(torch_dev.type, dtype=torch.bfloat16):
    logits_bf16_torch = MLPTorch(W0).to(torch_dev)(torch.from_numpy(x0).to(torch_dev)).float().cpu().numpy()
logits_f32 = np.asarray(MLPNNX(W0, jnp.float32)(jnp.asarray(x0)))
logits_bf16_jax = np.asarray(MLPNNX(W0, jnp.bfloat16)(jnp.asarray(x0)).astype(jnp.float32))
rel = {fw: np.abs(lb - logits_f32).max() / np.abs(logits_f32).max()
       for fw, lb in [("PyTorch", logits_bf16_torch), ("JAX", logits_bf16_jax)]}
rel_between = np.abs(logits_bf16_torch - logits_bf16_jax).max() / np.abs(logits_f32).max()
unit_roundoff = float(jnp.finfo(jnp.bfloat16).eps) / 2
{"relative error of bf16 logits": rel, "PyTorch bf16 vs JAX bf16": rel_between, "bf16 unit roundoff": unit_roundoff}

# %%
loss_gap = {fw: float(np.abs(c["bfloat16"] - c["float32"]).mean() / c["float32"].mean())
            for fw, c in [("PyTorch", curves_torch), ("JAX", curves_jax)]}
print("\n".join(
    f"{fw}: bf16 logits off by {rel[fw] / unit_roundoff:.1f} unit roundoffs at step 0; "
    f"the bf16 loss curve sits {100 * loss_gap[fw]:.2f} % (mean) from float32 over {S.steps} steps"
    for fw in rel
) + f"\nPyTorch's and JAX's bf16 logits differ from each other by {rel_between / unit_roundoff:.1f} unit roundoffs")


# %% [markdown]
# These lines are the explanation, computed for this run. At step 0 the bfloat16 logits are
# off by the printed number of unit roundoffs: that is what rounding the inputs, the weights
# and the hidden activations to 8 significant bits, and accumulating the products, costs. Each
# step's gradient goes through the same rounding in the backward pass's matmuls (this cell
# measures the forward only). These errors enter the weights with each update, and every
# later step starts from those weights, so they can add up over the run or be damped by it
# (the lines under the table say whether the gap grew here); the printed percentage is how far
# the bfloat16 loss curve actually sat from float32 on average, to be read against the
# step-to-step wobble of the loss in the plot. The last line compares the two
# frameworks' bfloat16 logits with each other. Both recipes round the same values before the
# first matmul (autocast casts a matmul's inputs and weights; NNX's `dtype` casts the layer's
# inputs and parameters), so they can agree exactly; where they part (how each accumulates
# inside the matmul, the precision of the bias add), the difference is rounding-sized, and the
# table above shows how far apart their loss curves ended.

# %% [markdown]
# **Why the parameters stay float32.** All four runs kept their parameters in float32, the two
# bfloat16 runs included, which computed in bfloat16 from them. The float32 copy, the *master
# weights*, is not a formality: an SGD update `lr * g` is usually far smaller than the
# parameter it changes, and bfloat16 has 8
# significant bits, so the gap between a parameter and the next bfloat16 number is between 2⁻⁸
# and 2⁻⁷ of its size (2⁻⁷ is bfloat16's epsilon, from the `finfo` table opening section 1). An
# update smaller than half that gap rounds away: `p - lr * g == p`, and the step
# is lost for that parameter. How often does that happen to this model? The cells below train
# the same MLP four times in each framework, computing in bfloat16 every time: at each of two
# learning rates (section 1.2's, and one ten times smaller), once with the parameters *stored*
# in bfloat16 (each update applied in bfloat16, no float32 copy anywhere), and once with float32
# master weights (the forward casts a bfloat16 copy; the update lands in float32). At every
# step each run counts the nonzero updates that left their parameter exactly where it was. The
# model is written as plain functions of a parameter dict, identical in both frameworks, so
# that at one learning rate the storage dtype is the only difference between the two runs.

# %%
# PyTorch: SGD with parameters stored in bfloat16, or float32 master weights; compute in bfloat16
def train_storage_torch(storage, lr, batches):
    p = {k: torch.tensor(v, device=torch_dev, dtype=storage, requires_grad=True) for k, v in W0.items()}  # copies
    losses, lost, moved = [], 0, 0
    for xb, yb in batches:
        q = {k: v.to(torch.bfloat16) for k, v in p.items()}  # the compute copy (p itself if bfloat16)
        h = torch.relu(torch.from_numpy(xb).to(torch_dev, torch.bfloat16) @ q["W1"] + q["b1"])
        loss = F.cross_entropy((h @ q["W2"] + q["b2"]).float(), torch.from_numpy(yb).to(torch_dev))
        grads = torch.autograd.grad(loss, list(p.values()))  # each in its parameter's dtype
        with torch.no_grad():
            for w, g in zip(p.values(), grads, strict=True):
                new = w - lr * g  # rounded to the storage dtype
                lost, moved = lost + int(((new == w) & (g != 0)).sum()), moved + int((g != 0).sum())
                w.copy_(new)
        losses.append(loss.item())
    return np.array(losses), lost / max(moved, 1)


STORAGE_LRS = (LR, LR / 10)  # section 1.2's rate, and a fine-tuning-sized one
storage_torch = {(name, lr): train_storage_torch(dt, lr, BATCHES) for lr in STORAGE_LRS
                 for name, dt in [("bfloat16", torch.bfloat16), ("float32", torch.float32)]}


# %%
# JAX: the same runs, one jitted step (a Python float lr is weakly typed: it keeps the storage dtype)
def loss_storage_jax(p, x, y):
    q = jax.tree.map(lambda a: a.astype(jnp.bfloat16), p)  # the compute copy (a no-op if bfloat16)
    h = jax.nn.relu(x.astype(jnp.bfloat16) @ q["W1"] + q["b1"])
    return optax.softmax_cross_entropy_with_integer_labels((h @ q["W2"] + q["b2"]).astype(jnp.float32), y).mean()


@jax.jit
def step_storage_jax(p, x, y, lr):
    loss, g = jax.value_and_grad(loss_storage_jax)(p, x, y)  # each gradient in its parameter's dtype
    new = jax.tree.map(lambda w, gw: w - lr * gw, p, g)  # rounded to the storage dtype
    lost = sum(jnp.sum((n == w) & (gw != 0)) for n, w, gw in zip(*map(jax.tree.leaves, (new, p, g)), strict=True))
    return new, loss, lost, sum(jnp.sum(gw != 0) for gw in jax.tree.leaves(g))


def train_storage_jax(storage, lr, batches):
    p, losses, lost, moved = {k: jnp.asarray(v, storage) for k, v in W0.items()}, [], 0, 0
    for xb, yb in batches:
        p, loss, n_lost, n_moved = step_storage_jax(p, jnp.asarray(xb), jnp.asarray(yb), lr)
        losses, lost, moved = losses + [loss], lost + n_lost, moved + n_moved  # summed on the device
    return np.asarray(jnp.stack(losses)), int(lost) / max(int(moved), 1)


storage_jax = {(name, lr): train_storage_jax(dt, lr, BATCHES) for lr in STORAGE_LRS
               for name, dt in [("bfloat16", jnp.bfloat16), ("float32", jnp.float32)]}

# %%
assert_close(storage_torch["float32", LR][0][0], storage_jax["float32", LR][0][0], rtol=1e-3, atol=1e-3)  # step 0
rows, STALL = [], {}
for fw, runs in [("PyTorch", storage_torch), ("JAX", storage_jax)]:
    for (name, lr), (c, lost) in runs.items():
        rows.append(f"| {fw} | {lr:g} | {name} | {100 * lost:.2g} % | {c[0]:.4f} | {c[-tail:].mean():.4f} |")
    for lr in STORAGE_LRS:  # how far each storage brought the loss down, bfloat16 over float32
        drops = {name: runs[name, lr][0][0] - runs[name, lr][0][-tail:].mean() for name in ("bfloat16", "float32")}
        STALL[fw, lr] = drops["bfloat16"] / drops["float32"] if drops["float32"] > 0 else float("nan")
display(Markdown(f"| framework | lr | parameters stored in | updates lost | first loss | mean of the last {tail} |\n"
                 "|---|---:|---|---:|---:|---:|\n" + "\n".join(rows)))
for fw, runs in [("PyTorch", storage_torch), ("JAX", storage_jax)]:
    print(f"{fw}: " + "; ".join(
        f"at lr {lr:g}, {runs['bfloat16', lr][1]:.0%} of the updates rounded away in bfloat16 storage, "
        f"and it lowered the loss {STALL[fw, lr]:.0%} as much as float32 master weights did" for lr in STORAGE_LRS))


# %% [markdown]
# The table and the lines read the cost directly. Both frameworks' runs start from the same
# first loss (the parity check: they compute in bfloat16 alike, from the same weights), and
# each printed line compares, at each of the two learning rates, how far bfloat16 storage brought the loss
# down with how far float32 master weights did over the same batches. The "updates lost"
# column is the share of all nonzero per-element updates, over the whole run, that left their
# parameter exactly where it was: the `p - lr * g == p` of the paragraph above, counted.
#
# Read the two learning rates against each other. An update is lost when `lr * g` is below
# half the gap around `p`, so a smaller rate puts more of them under that line (for the same
# `p` and `g`, every update lost at the larger rate is lost at the smaller one too); the two
# runs do not see the same `p` and `g` after their first step, so the table's shares, not this
# argument, say how the two rates compared on this run. What the
# losses do with that is the stall. The updates that survive are the large ones, the largest
# gradients and the parameters near zero (where the gap is small); the many small updates that
# would have added up over the steps are rounded away one by one, every step, so a parameter
# that should drift slowly does not move at all. The printed percentage is how much of the
# float32 run's progress bfloat16 storage still made; where it is well below 100 %, training
# stalled for the reason just described, and the float32 master weights, with the same
# bfloat16 arithmetic everywhere else, did not. In float32 an update can be lost too, when it
# is below half of float32's own rounding step, about 2⁻²⁴ of the parameter; the float32 rows
# of the table count those, printed to two significant digits so that a small share does not
# show as 0.
#
# This is why `autocast` leaves parameters float32 and NNX separates `param_dtype` from
# `dtype`: the rounding errors of the forward and backward passes are made afresh at every
# step (the bfloat16-compute curves above printed how far they moved the loss in this run),
# while an update rounded away in a stored parameter is lost for good, step after step. The
# same effect hits every accumulator kept in 16 bits, a running mean, an optimiser's moment, a gradient summed over
# micro-batches: keep sums in float32. Training *entirely* in bfloat16 is possible, and some
# large runs do it to halve the optimiser's memory, but then the update needs a remedy of its
# own, such as stochastic rounding (rounding up or down at random, in proportion to the
# distance, so that small updates survive on average) or a compensated sum that keeps the
# rounding error of each update in a second bfloat16 buffer and adds it back at the next step.
# Neither framework does either by default; both keep the float32 copy.
#
# ### 1.3 float16 and loss scaling
#
# float16 has three more mantissa bits than bfloat16 but its smallest normal number is 6e-5,
# and small gradient entries can be smaller than that. Below it float16 keeps
# fewer and fewer significant bits (the subnormals): the smallest is 2⁻²⁴ ≈ 6e-8, and a value below
# half of it, about 3e-8, becomes 0.
# The cells below measure it on the float32-trained models of 1.2 at their last batch: each
# framework computes the first layer's gradient again with float16 activations, without and
# with the loss multiplied by 2¹⁶ (divided back in float32), and counts the entries that are
# nonzero in float32 but became 0. `torch.amp.GradScaler`
# multiplies the loss by a large factor (65,536 at first) before `backward()`, so the float16
# gradients are scaled into range, then divides them again in float32 before the optimiser
# step; if it finds an inf or NaN it skips the step and halves the factor. That is a GPU tool:
# float16 autocast exists on a CPU (and runs here without warnings), but float16 training is a
# GPU practice, where float16 tensor cores make it pay. JAX has no `GradScaler`: the same three lines are written out (libraries such as
# DeepMind's `jmp` package them). After the table, a second pair of cells takes one such step:
# both compute one float16 gradient on the *first* batch, unscale it in float32, check it for
# inf/NaN, and take the SGD step only if it is finite (`scaler.step` skips it otherwise; the JAX
# cell writes the same rule as an `if`).

# %%
# PyTorch: the trained float32 model's fc1 gradient on the last batch, float16 activations
def fc1_grad_torch(dtype, scale=1.0):
    model = runs_torch["float32"][1]
    model.zero_grad()
    x, y = (torch.from_numpy(a).to(torch_dev) for a in BATCHES[-1])
    with torch.autocast(torch_dev.type, dtype=dtype, enabled=dtype != torch.float32):
        (F.cross_entropy(model(x), y) * scale).backward()
    return model.fc1.weight.grad.T.float().cpu().numpy() / scale  # (64, hidden), float32


g32_torch = fc1_grad_torch(torch.float32)
g16_torch = {scale: fc1_grad_torch(torch.float16, scale) for scale in (1.0, 2.0**16)}


# %%
# JAX: the same gradient, the trained float32 weights in a model that computes in float16
@nnx.jit
def scaled_grads_jax(model, x, y, scale):  # the gradient of loss × scale, compiled once per dtype
    return nnx.grad(lambda m: loss_jax(m, x, y) * scale)(model)


def fc1_grad_jax(dtype, scale=1.0):
    trained = runs_jax["float32"][1]
    w = {k: np.asarray(getattr(getattr(trained, layer), part)[...])
         for k, layer, part in [("W1", "fc1", "kernel"), ("b1", "fc1", "bias"), ("W2", "fc2", "kernel"), ("b2", "fc2", "bias")]}
    x, y = (jnp.asarray(a) for a in BATCHES[-1])
    grads = scaled_grads_jax(MLPNNX(w, dtype), x, y, scale)
    return np.asarray(nnx.to_pure_dict(grads)["fc1"]["kernel"], np.float32) / scale  # (64, hidden)


g32_jax = fc1_grad_jax(jnp.float32)
g16_jax = {scale: fc1_grad_jax(jnp.float16, scale) for scale in (1.0, 2.0**16)}

# %% [markdown]
# The two functions read alike on purpose. Each takes the float32-trained weights, computes the
# loss on the last batch with float16 activations (PyTorch through autocast, which casts a
# matmul's inputs and weights as it runs; JAX through a model whose layers compute in
# float16 and store float32 parameters), multiplies the loss by `scale` before the backward
# pass and divides the first layer's gradient by it afterwards, in float32. With `scale` 1
# nothing is rescaled, which is what training in float16 without `GradScaler` does. The
# float32 gradients of the two frameworks are checked equal first, so the float16 rows below
# compare the same numbers.

# %%
assert_close(g32_torch, g32_jax, rtol=1e-4, atol=1e-6, name="float32 fc1 gradient")
tiny16 = float(np.finfo(np.float16).tiny)
g32s = {"PyTorch": g32_torch, "JAX": g32_jax}
n_nonzero = {fw: int((g32 != 0).sum()) for fw, g32 in g32s.items()}
small = {fw: (np.abs(g32) < tiny16) & (g32 != 0) for fw, g32 in g32s.items()}
F16 = {}  # (framework, scale): (entries that became 0, median relative error of the small entries)
for fw, g16s in [("PyTorch", g16_torch), ("JAX", g16_jax)]:
    for scale, g16 in g16s.items():
        err = np.abs(g16 - g32s[fw])[small[fw]] / np.abs(g32s[fw])[small[fw]]
        F16[fw, scale] = int(np.sum(g16[g32s[fw] != 0] == 0)), np.median(err) if err.size else float("nan")
rows = ["| float32 entries below float16's smallest normal | "  # shares to 2 digits: 0 % means none
        + " | ".join(f"{100 * small[fw].sum() / n_nonzero[fw]:.2g} %" for fw in g32s) + " |"]
for scale in g16_torch:
    rows += [f"| became 0 in float16, loss × {scale:g} | "
             + " | ".join(f"{100 * F16[fw, scale][0] / n_nonzero[fw]:.2g} %" for fw in g32s) + " |",
             f"| median relative error of the small ones, loss × {scale:g} | "
             + " | ".join(f"{F16[fw, scale][1]:.1e}" for fw in g32s) + " |"]
display(Markdown("| fc1 gradient entries | PyTorch | JAX |\n|---|---:|---:|\n" + "\n".join(rows)))

# %%
for fw, g32 in g32s.items():
    (z1, e1), (z2, e2) = F16[fw, 1.0], F16[fw, 2.0**16]
    n_small, n_lifted = int(small[fw].sum()), int(np.sum(np.abs(g32[small[fw]]) >= 2.0**-30))
    cost = f"the subnormals cost {e1 - e2:.1e} of it" if e1 > e2 else "scaling did not lower it"
    print(f"{fw}: lost to 0: {z1:,} unscaled, {z2:,} scaled, of {n_nonzero[fw]:,} nonzero entries; "
          f"the {n_small:,} small ones' median relative error {e1:.1e} unscaled, {e2:.1e} scaled: {cost} "
          f"({n_lifted:,} of them normal float16 once scaled)")

# %% [markdown]
# The first row of the table is the float32 gradient itself: the share of its entries that
# float16 can only hold as subnormals or not at all. The next rows are what float16 made of
# them, without and with scaling: the share of entries lost outright, and the median relative
# error of the small ones (the entries whose float32 value lies below float16's smallest
# normal). That error has two parts: the bits a subnormal lacks, and float16's rounding in the rest of the pass (the
# activations, the products), which every entry carries, small or not. Multiplying the loss by
# 2¹⁶ moves every gradient up by 16 powers of two, which lifts every entry above 2⁻³⁰ ≈ 1e-9
# out of the subnormal range (too large a scale overflows instead: `GradScaler` then skips the
# step and halves the scale), so for the entries it lifts the scaled rows keep only the second
# part. What the small gradients lose to the subnormals is therefore estimated by the difference
# between the unscaled and the scaled medians; the lines under the table compute it for this run, and count how
# many of the small entries scaling made normal (where that is fewer than all of them, the rest
# still sit in the subnormals, or below, after scaling). Read their "lost to 0" counts first:
# where the unscaled count is 0, float16 still held every small entry, with fewer bits, so the
# subnormals' damage in this run is precision, not zeros; where it is above 0, those entries'
# updates were lost outright, the failure `GradScaler` exists to prevent (the table prints its
# shares to two significant digits, so a share shows as 0 % only when no entry is in it). The
# zeros and the difference of the medians are what loss scaling buys, and the lines say what each
# came to in this run, at this batch (nothing, where no entry was lost and scaling did not lower
# the error); `GradScaler` applies the scaling on every step, with a scale it adjusts.
#
# The table measures one moment, the last batch of this run (full mode trains ten times as
# many steps as smoke mode); it does not follow the share over training. The usual pattern is
# that gradients shrink as the loss falls, so more of them sit below float16's smallest normal
# the longer a run goes, and float16 training without a scaler can look fine for a while and
# then stall: the updates that would have continued the descent are the ones rounded away.
# bfloat16 shares float32's smallest normal, so the same
# gradients stay normal numbers there; what bfloat16 loses instead is precision, everywhere.

# %%
# PyTorch: float16 autocast with GradScaler (one step)
model16_torch = MLPTorch(W0).to(torch_dev)
opt16_torch = torch.optim.SGD(model16_torch.parameters(), lr=LR)
scaler = torch.amp.GradScaler(torch_dev.type)
xb_torch, yb_torch = (torch.from_numpy(a).to(torch_dev) for a in BATCHES[0])
with torch.autocast(torch_dev.type, dtype=torch.float16):
    loss16_torch = F.cross_entropy(model16_torch(xb_torch), yb_torch)
scaler.scale(loss16_torch).backward()  # float16 gradients of loss * scale
scaler.unscale_(opt16_torch)  # divided back, in float32, inf/NaN check
grad16_torch = model16_torch.fc1.weight.grad.T.cpu().numpy().copy()  # (64, hidden)
scaler.step(opt16_torch)
scaler.update()
scaler.get_scale(), model16_torch.fc1.weight.dtype

# %%
# JAX: the same loss scaling written out (static scale 2**16)
model16_jax = MLPNNX(W0, jnp.float16)
scale = 2.0**16
xb_jax, yb_jax = (jnp.asarray(a) for a in BATCHES[0])
grads16_jax = scaled_grads_jax(model16_jax, xb_jax, yb_jax, scale)  # compiled, as a training step would be
grads16_jax = jax.tree.map(lambda g: g.astype(jnp.float32) / scale, grads16_jax)  # unscale in float32
finite = all(bool(jnp.isfinite(g).all()) for g in jax.tree.leaves(grads16_jax))
grad16_jax = np.asarray(nnx.to_pure_dict(grads16_jax)["fc1"]["kernel"])
opt16_jax = nnx.Optimizer(model16_jax, optax.sgd(LR), wrt=nnx.Param)
if finite:  # GradScaler's rule: skip the step when a gradient is inf or NaN
    opt16_jax.update(model16_jax, grads16_jax)
finite, model16_jax.fc1.kernel[...].dtype

# %%
grad32 = np.asarray(nnx.to_pure_dict(nnx.grad(loss_jax)(MLPNNX(W0, jnp.float32), xb_jax, yb_jax))["fc1"]["kernel"])
assert_close(grad16_torch, grad16_jax, rtol=0, atol=2e-2 * np.abs(grad32).max())
assert_close(model16_torch.fc1.weight.detach().T, model16_jax.fc1.kernel[...], rtol=0, atol=2e-2 * LR * np.abs(grad32).max())
{fw: float(np.abs(g - grad32).max() / np.abs(grad32).max()) for fw, g in [("PyTorch fp16", grad16_torch), ("JAX fp16", grad16_jax)]}

# %% [markdown]
# Both float16 gradients agree with each other within 2 % of the largest float32 gradient
# entry, and the updated weights within 2 % of the largest update (the learning rate times that
# entry), as the cell asserts; the gradients' relative errors against the float32 gradient are
# printed above. The parameters stayed float32 in both. `GradScaler` kept its factor (no inf appeared) or halved it (one did): its
# printed scale says which happened here. The JAX cell's `if finite:` runs in Python, on a
# concrete boolean, because only the gradient is jitted here; inside a jitted step the same rule is
# written with `jax.lax.cond`, or left to Optax's `optax.apply_if_finite(optimizer, n)`, which
# wraps an optimiser, skips an update whose gradient is not finite, up to `n` such updates in a
# row (after `n` consecutive ones it gives up and applies the next), and counts the non-finite gradients in its state (`jmp`
# adds the dynamic scale that halves and grows like `GradScaler`'s). Loss scaling is only needed for float16; bfloat16 has
# float32's exponent range, which is why it is TPUs' 16-bit format and the usual choice for
# training on NVIDIA GPUs since Ampere (PyTorch's CUDA autocast still defaults to float16:
# pass `dtype=torch.bfloat16`).
#
# ### 1.4 What bfloat16 does for speed on this machine
#
# Before the hardware claim, a measurement that this machine *can* make: one forward and
# backward pass of the MLP on a batch, in float32 and in bfloat16, in each framework (PyTorch
# eager with autocast; JAX jitted with the NNX `dtype`). Each variant returns the loss and the
# gradients' squared norm, which `timing.compare` checks agree within bfloat16's rounding
# before it times the four in interleaved rounds. On a CPU the answer depends on the chip: one
# with bfloat16 vector or matrix instructions (AVX512-BF16, AMX) may gain, one without converts
# every value and may lose. The first cell reads which of those this CPU has: the flags the
# Linux kernel lists in `/proc/cpuinfo`, and the instruction set PyTorch's CPU kernels were
# dispatched for (`torch.backends.cpu.get_cpu_capability()`). Whichever happened here, the
# first two lines under the timing cell say it.

# %%
# This CPU's bfloat16 instructions, as Linux lists them, and PyTorch's kernel dispatch level
cpuinfo = Path("/proc/cpuinfo")
cpu_flags = next((set(line.split(":", 1)[1].split()) for line in (cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
                  if line.startswith("flags")), None)
BF16_FLAGS = None if cpu_flags is None else {flag: flag in cpu_flags for flag in ("avx512_bf16", "amx_bf16")}
print(f"PyTorch's CPU kernels: {torch.backends.cpu.get_cpu_capability()}")
unknown = "unknown (/proc/cpuinfo lists no x86 flags)" if cpuinfo.exists() else "unknown (no /proc/cpuinfo: not Linux)"
print("bfloat16 instructions: " + (unknown if BF16_FLAGS is None else
      ", ".join(f"{flag.upper().replace('_', '-')} {'yes' if has else 'no'}" for flag, has in BF16_FLAGS.items())))


# %% [markdown]
# The two lines answer different questions, and they can disagree. The flags are what the
# processor offers: AVX512-BF16 adds instructions that convert float32 to bfloat16 and that
# multiply pairs of bfloat16 numbers, adding the products into float32 (a dot product, the inner
# step of a matmul); AMX-BF16 adds tile instructions that multiply whole bfloat16 blocks at
# once, much closer to what a tensor core does. PyTorch's capability line is the instruction
# set its own vectorised CPU kernels were dispatched for (`DEFAULT`, `AVX2`, `AVX512`, ...), a
# coarser label: its matmuls go through oneDNN or a BLAS library, which inspects the processor
# itself and uses bfloat16 instructions where it finds them. XLA's CPU backend makes its own
# choices (recent releases hand some of the matmuls to the YNNPACK library; section 2's fusion
# list shows whether this run's did), so a flag being
# present says a bfloat16 kernel *can* exist on this machine, not that either framework used one for this
# model. That is why the timing cell measures instead of inferring from the flags, and why, on a
# CPU whose flags `/proc/cpuinfo` lists, its last line repeats them next to the result.

# %%
# PyTorch: forward + backward in float32 and under bfloat16 autocast (eager)
def grad_pass_torch(dtype):
    model = MLPTorch(W0).to(torch_dev)

    def run():
        model.zero_grad(set_to_none=True)
        with torch.autocast(torch_dev.type, dtype=dtype, enabled=dtype != torch.float32):
            loss = F.cross_entropy(model(xb_torch), yb_torch)
        loss.backward()
        return torch.stack([loss.detach().float(), sum((p.grad**2).sum() for p in model.parameters())])
    return run


# %%
# JAX: the same pass, jitted, with a float32 and a bfloat16 NNX model
def grad_pass_jax(dtype):
    graphdef_g, params_g = nnx.split(MLPNNX(W0, dtype))

    @jax.jit
    def run_jit(p, x, y):
        loss, g = jax.value_and_grad(lambda q: loss_jax(nnx.merge(graphdef_g, q), x, y))(p)
        return jnp.stack([loss, sum(jnp.sum(leaf.astype(jnp.float32) ** 2) for leaf in jax.tree.leaves(g))])
    return lambda: run_jit(params_g, xb_jax, yb_jax)


# %%
passes = {"PyTorch float32": grad_pass_torch(torch.float32), "PyTorch bfloat16": grad_pass_torch(torch.bfloat16),
          "JAX float32": grad_pass_jax(jnp.float32), "JAX bfloat16": grad_pass_jax(jnp.bfloat16)}
speed_bf16 = timing.compare(passes, rtol=2e-2, atol=1e-3)  # checks the four agree first
BF16_HERE = {fw: claims.faster(speed_bf16, f"{fw} float32", f"{fw} bfloat16") for fw in ("PyTorch", "JAX")}
for answer in BF16_HERE.values():
    print(answer.explanation)
if BF16_FLAGS is not None and torch_dev.type == "cpu":
    has = [flag.upper().replace("_", "-") for flag, present in BF16_FLAGS.items() if present]
    print(f"on a CPU with {' and '.join(has) if has else 'neither AVX512-BF16 nor AMX-BF16'} "
          f"(PyTorch's kernels: {torch.backends.cpu.get_cpu_capability()})")

# %% [markdown]
# Those two lines are generated from the paired rounds by the course's one rule: each says
# which precision was faster for its framework on this machine and by how much, or that the
# rounds could not tell them apart (or were disturbed by other work, which the rule detects and
# reports instead of judging). Whatever they say is a fact about this run's device and this
# small model, not a law about mixed precision: on a GPU a tensor core changes the arithmetic
# itself, which the next claim is about.
#
# Each line also prints a number and its 95 % interval, which show the size of the effect.
# Where the rule names a winner, the number is how many times faster the named precision was,
# so it is never below 1 ("float32 is 1.3x faster than bfloat16" means bfloat16 took 1.3 times
# as long). Where the rule declines to judge, the line prints the raw ratio instead, float32
# time over bfloat16 time: above 1 leans to bfloat16, below 1 to float32. On a CPU without
# bfloat16 arithmetic, every bfloat16 matmul is a float32 matmul plus conversions, so float32
# winning is the expected outcome there, not a bug; on one with AVX512-BF16 or AMX-BF16 (the
# cell that read the flags says which this one has), bfloat16 instructions exist, and whether the
# libraries' kernels use them to beat float32 on a model this small is what the rounds
# measured.
#
# ### 1.5 The speed claim, and where it can be judged
#
# "Mixed precision makes training faster" is a statement about matrix units: a tensor core
# multiplies 16-bit tiles with float32 accumulation at many times the float32 rate, float16
# tiles on every NVIDIA GPU that has tensor cores, bfloat16 ones only since Ampere (compute
# capability 8.0; a T4's or a V100's tensor cores take float16, not bfloat16). The claims
# registry holds the bfloat16 claim with its stated magnitude; on a GPU with bfloat16 tensor
# cores the cell times a float32 and a bfloat16-autocast matmul (same inputs, results checked
# close first) and judges it, and anywhere else (a CPU, or an older GPU) it says why it cannot.
#
# On such a GPU the comparison is deliberately narrow: one square matmul, float32 with TF32 off
# (the course's precision setting) against bfloat16 under autocast, outputs checked close
# before timing. A whole training step gains less than its matmuls do, because elementwise ops
# and memory traffic do not get faster by the same factor; the claim as registered is about the
# matmul, the part tensor cores accelerate.

# %%
cc = torch.cuda.get_device_capability(torch_dev) if torch_dev.type == "cuda" else None
if cc is not None and cc >= (8, 0):  # bfloat16 tensor cores: NVIDIA's since Ampere
    n = S.mm_size
    a_mm = torch.randn(n, n, device=torch_dev) / n**0.25  # entries of a @ b are about N(0, 1)

    def mm_bf16(a, b):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return (a @ b).float()

    mm_times = timing.compare({"float32": torch.matmul, "bfloat16 autocast": mm_bf16}, a_mm, a_mm, rtol=5e-2, atol=5e-2)
    VERDICTS["bf16-tensor-cores"] = claims.judge("bf16-tensor-cores", mm_times, "float32", "bfloat16 autocast")
elif cc is not None:
    VERDICTS["bf16-tensor-cores"] = claims.not_testable(
        "bf16-tensor-cores",
        f"this GPU (compute capability {cc[0]}.{cc[1]}) has no bfloat16 tensor cores, which NVIDIA's GPUs have "
        "since Ampere (8.0); its bfloat16 matmuls run without them, so their speed says nothing about the claim",
    )
else:
    VERDICTS["bf16-tensor-cores"] = claims.not_testable(
        "bf16-tensor-cores",
        f"the claim is about tensor cores, and this run's PyTorch computes on {torch_dev.type}, which has none; "
        "a CPU's bfloat16 speed depends on its own bfloat16 instructions (AVX512-BF16's vector dot products, "
        "AMX's tile matmuls), not on what the claim measures",
    )
VERDICTS["bf16-tensor-cores"]

# %% [markdown]
# ## 2. Profiling: where the time of a step goes
#
# **Key concepts**
# - `torch.profiler.profile` records every operator PyTorch dispatches (and every GPU kernel);
#   `prof.export_chrome_trace(path)` writes them as Chrome-trace JSON.
# - `jax.profiler.trace(folder, create_perfetto_trace=True)` records the compiled program's
#   ops (XLA's HLO ops, each fusion as one) and the Python around them; it writes an XSpace
#   protobuf for XProf and a `perfetto_trace.json.gz` under `folder/plugins/profile/<run>/`.
# - Both files open in Perfetto (https://ui.perfetto.dev, "Open trace file"); JAX's folder also
#   opens in XProf, OpenXLA's profile viewer (https://github.com/openxla/xprof: `pip install
#   xprof`, then `xprof --logdir=FOLDER`), which was TensorBoard's profile plugin
#   (`tensorboard-plugin-profile`) before it became a program of its own.
# - FLOPs: `jax.jit(f).lower(...).compile().cost_analysis()` reports what XLA counted in the
#   compiled program; `torch.utils.flop_counter.FlopCounterMode` counts the matmul-like ops as
#   they run.
#
# A profile answers "which ops does one step run, and how long does each take?" The two
# frameworks answer it at different levels, and the difference is the point of the section:
# eager PyTorch dispatches one operator at a time, so its trace lists every `aten::` call;
# `jax.jit` compiles the whole step into one XLA program whose ops are already fused, so its
# trace lists far fewer, larger ops. Both traces below record the *same* float32 training
# step from section 1, after a warm-up call, into a temporary folder this cell prints (nothing
# is written into the course's folder).

# %%
TRACE_DIR = Path(tempfile.mkdtemp(prefix="course-09-traces-"))
model_p_torch = MLPTorch(W0).to(torch_dev)
opt_p_torch = torch.optim.SGD(model_p_torch.parameters(), lr=LR)
model_p_jax = MLPNNX(W0, jnp.float32)
opt_p_jax = nnx.Optimizer(model_p_jax, optax.sgd(LR), wrt=nnx.Param)
print("traces go to", TRACE_DIR)

# %%
# PyTorch: torch.profiler around S.profile_steps eager steps -> Chrome-trace JSON
step_torch(model_p_torch, opt_p_torch, xb_torch, yb_torch, torch.float32)  # warm-up
activities = [torch.profiler.ProfilerActivity.CPU] + (
    [torch.profiler.ProfilerActivity.CUDA] if torch_dev.type == "cuda" else [])
with contention.Monitor() as quiet_torch, profiles.torch_profile(activities=activities) as prof:  # minus Kineto's banner
    for _ in range(S.profile_steps):
        timing.sync(step_torch(model_p_torch, opt_p_torch, xb_torch, yb_torch, torch.float32))
torch_trace = TRACE_DIR / "torch_step.json"
prof.export_chrome_trace(str(torch_trace))
torch_trace.name, torch_trace.stat().st_size

# %%
# JAX: jax.profiler.trace around the same number of jitted steps -> perfetto_trace.json.gz
timing.sync(step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax))  # warm-up (and compile)
with contention.Monitor() as quiet_jax, jax.profiler.trace(str(TRACE_DIR / "jax"), create_perfetto_trace=True):
    for _ in range(S.profile_steps):
        timing.sync(step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax))
jax_trace = profiles.jax_trace_file(TRACE_DIR / "jax")
jax_trace.relative_to(TRACE_DIR), jax_trace.stat().st_size

# %%
assert_close(model_p_torch.fc1.weight.detach().T, model_p_jax.fc1.kernel[...], rtol=1e-5, atol=1e-6)
print(f"open in https://ui.perfetto.dev:\n  {torch_trace}\n  {jax_trace}")

# %% [markdown]
# The PyTorch cell records through `profiles.torch_profile`, which is `torch.profiler.profile`
# with one cosmetic change: Kineto, the profiling library under `torch.profiler`, writes (since
# torch 2.12) a `USDT: ... profiler_start` and a `profiler_stop` line to the process's stderr
# when a recording starts and stops (markers for system tracing tools such as `bpftrace`,
# nothing about your program), and the helper drops those two lines and passes any other
# through.
#
# The parity cell checks that the two profiled runs still hold the same weights (the same
# number of identical steps, warm-up included), so the traces record the same computation.
# The files' paths are printed for opening in Perfetto: drag one into the page and each
# thread's ops appear on a timeline.
#
# **Reading a trace in Perfetto.** Each row of the timeline is a thread. In the PyTorch file,
# the Python thread carries nested slices: the outer ones are the autograd engine and
# `aten::linear`, the inner ones the kernels they call (`aten::addmm`). On a CPU the backward
# pass runs on the calling thread too (autograd's engine executes CPU work in the thread that
# called `backward()`); on a GPU it runs on a per-device autograd thread, a row of its own. In the JAX file, the Python thread shows the jitted call
# (`PjitFunction(step_jax)`) and the runtime's preparation of its arguments, while the XLA
# runtime's thread (on a CPU, `tf_XLAPjRtCpuClient/…`) shows the compiled program's ops, one
# slice per HLO op (on a CPU each holds a sliver at its end named `end: …`, which the runtime
# records without an `hlo_op` tag, so the tables below leave it out). Click a slice to see its
# duration and arguments; select a range to get a summary table, which is what the cells below
# compute from the files. To mark steps in a long recording, wrap each step in
# `torch.profiler.record_function("step")` or `jax.profiler.StepTraceAnnotation("step",
# step_num=i)`; for long runs, `torch.profiler.schedule(wait=, warmup=, active=)` records only a
# window, and `jax.profiler.start_server(port)` lets XProf capture a running program.
#
# The notebook reads the files back with `course_utils.profiles`, which parses the Chrome-trace
# JSON both write, computes each op's *self* time (its duration less that of the ops nested in
# it, so that `aten::linear` does not count the `aten::addmm` it calls a second time) and keeps,
# for PyTorch, the operator events (`cat: cpu_op`), except that where the trace holds GPU kernels
# the top-ops table keeps the kernels instead (the count of op events per step counts both kinds),
# and for JAX, the events XLA tagged with an `hlo_op`.

# %%
# PyTorch: the top ops of the eager step, per step
events_torch = profiles.load_events(torch_trace)
ops_per_step_torch = profiles.op_calls(events_torch, profiles.is_torch_op) / S.profile_steps
top_torch = profiles.top_ops(events_torch, profiles.is_torch_op, n=8)
display(Markdown(profiles.markdown(top_torch, "PyTorch op", S.profile_steps)))
print("recorded while", quiet_torch.result.text())

# %%
# JAX: the top ops of the compiled step, per step
events_jax = profiles.load_events(jax_trace)
ops_per_step_jax = profiles.op_calls(events_jax, profiles.is_xla_op) / S.profile_steps
top_jax = profiles.top_ops(events_jax, profiles.is_xla_op, n=8)
display(Markdown(profiles.markdown(top_jax, "XLA op", S.profile_steps)))
print("recorded while", quiet_jax.result.text())

# %%
fused = sorted({e["name"] for e in events_jax if profiles.is_xla_op(e) and "fusion" in e["name"]})
print(f"op events per step: PyTorch eager {ops_per_step_torch:g}, JAX jit {ops_per_step_jax:g}")
print(f"XLA fusions in the step ({len(fused)}): {', '.join(fused)}")
unnamed = [f for f in fused if f.split("fusion")[0].strip("_") in ("", "ynn", "loop", "input")]
print(f"of which {len(unnamed)} name no op: {', '.join(unnamed) or 'none'}")
for fw, top, quiet in [("PyTorch", top_torch, quiet_torch.result), ("JAX", top_jax, quiet_jax.result)]:
    reading = ("other programs competed for the cores while it recorded: its microseconds, and the order "
               "they put the ops in, cannot be trusted as this step's" if quiet.contended else
               "recorded on quiet cores, its order is this run's, and may differ in the next")
    print(f"{fw}: the largest self time is `{top[0].name}` ({100 * top[0].share:.0f} % of the recorded op "
          f"time); {reading}")


# %% [markdown]
# Read the two tables with the counts under them. The PyTorch step runs every operator the
# Python code names, one at a time: the forward's `addmm`/`relu`, the loss's `log_softmax` and
# `nll_loss`, their backward ops (the `fill_`s in the trace belong to the backward pass: the
# `ones_like` that seeds the loss's gradient and, on a CPU, the `sum`s that reduce the bias
# gradients, which fill their outputs with zeros before adding; `zero_grad()` sets the gradients
# to `None` and runs no op)
# and SGD's in-place updates (nested operator calls included in the count). The JAX step is one XLA
# program; its ops are matmuls (the `dot`s), a few single ops XLA left unfused (the
# `wrapped_…` events, such as the scatter in the loss's gradient), and *fusions*: XLA merged chains of elementwise work (the bias add and ReLU,
# the softmax's subtract-exponential, the SGD update `w - lr * g`) into single loops, and most
# fusion names list the ops each one swallowed (`subtract_exponential_fusion`). The third
# printed line lists the fusions whose names say nothing: on a CPU, recent XLA hands some of the matmuls
# (and some reductions) to the YNNPACK library as `ynn_fusion.N`, whose name lists no op (in
# Perfetto its slice carries only its name and its HLO module; the compiled program's text,
# `jax.jit(f).lower(...).compile().as_text()`, shows what each fusion computes); on a GPU the
# names differ again (`loop_…_fusion`, `input_…_fusion`, and matmul fusions that call cuBLAS or Triton). Fewer, fused ops mean fewer passes over memory and
# no Python between them; that is what `jit` buys a step like this, and what `torch.compile`'s
# Inductor does for PyTorch (lesson 03 counted its generated kernels). On a GPU the same cells show
# CUDA kernels for PyTorch and GPU ops for JAX, and the story is the same with kernel launches
# in place of operator calls.
#
# Which op tops each table is a fact about this recording, not about the step: a few
# microseconds per op, on cores that other programs may share, reorder easily, and a busy
# machine can multiply one op's time many times over between two runs. That is why each
# table's recording ran inside `contention.Monitor` (the guard `course_utils.timing` puts
# around every comparison) and the line under it says whether the cores were quiet; the last
# printed lines name each table's largest op and say how far to trust its rank. What holds in
# every run is the *shape*: how many op events each step makes, and which kinds of op they are.
#
# The guard cannot make a busy machine quiet; it makes the table honest about it. On Linux it reads,
# from `/proc/stat`, how much CPU time other processes took on this process's cores while the
# steps were recorded, and calls the recording contended above a quarter of the cores' time.
# A contended table still shows which ops ran and how often (those counts come from the
# program, not the clock), so the counts line and the fusion list are read the same either way;
# only the microseconds and the order they impose wait for a quiet rerun.
#
# Two cautions when reading any profile. First, the profiler costs time itself: each recorded
# event adds work, which weighs most on a step made of many tiny ops (the eager PyTorch step
# here). The cells below time a whole recording of one step, so what they measure is this
# per-event work together with the fixed cost of starting and stopping a recording (and, for
# JAX, of writing its files), which can outweigh it. So compare the shape of the two tables, not their
# microseconds, and time with `course_utils.timing` when the question is speed. Second, self time is not the whole
# story on an accelerator: a GPU runs kernels asynchronously, so the host thread's slices show
# how long it took to *launch* an op, and the device rows show how long it *ran*.
#
# What do the tools cost? The cells below time one training step plain, recorded by the
# profiler, and under each framework's NaN debugging mode (section 3.1 uses them): PyTorch's
# anomaly mode, which records a stack for every forward op so that a failing backward op can
# name its forward line, and JAX's `debug_nans`, which checks every output of every jitted call
# for NaN. Every variant runs the same step on the same batch (the steps do not change shape
# or dtype, so nothing is compared but the tool); `timing.compare` interleaves them in shuffled
# rounds.

# %%
# PyTorch: one eager step, plain, recorded by torch.profiler, and under anomaly mode
def profiled_step_torch():
    with profiles.torch_profile(activities=activities):
        return timing.sync(step_torch(model_p_torch, opt_p_torch, xb_torch, yb_torch, torch.float32))


def anomaly_step_torch():
    with torch.autograd.detect_anomaly():
        return step_torch(model_p_torch, opt_p_torch, xb_torch, yb_torch, torch.float32)


with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")  # said at every entry
    tools_torch = timing.compare({
        "step": lambda: step_torch(model_p_torch, opt_p_torch, xb_torch, yb_torch, torch.float32),
        "step, profiled": profiled_step_torch, "step, anomaly mode": anomaly_step_torch}, check=False)
tools_torch


# %%
# JAX: one jitted step, plain, recorded by jax.profiler.trace, and under debug_nans
def traced_step_jax():
    with jax.profiler.trace(str(TRACE_DIR / "jax-cost")):
        return timing.sync(step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax))


def debug_nans_step_jax():
    with jax.debug_nans(True):
        return step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax)


tools_jax = timing.compare({
    "step": lambda: step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax),
    "step, profiled": traced_step_jax, "step, debug_nans": debug_nans_step_jax}, check=False)
tools_jax

# %%
TOOL_COST = {(fw, tool): claims.faster(cmp, tool, "step")
             for fw, cmp, tools in [("PyTorch", tools_torch, ("step, profiled", "step, anomaly mode")),
                                    ("JAX", tools_jax, ("step, profiled", "step, debug_nans"))]
             for tool in tools}
for (fw, tool), answer in TOOL_COST.items():
    print(f"{fw}, {tool.removeprefix('step, ')}: {answer.explanation}")

# %% [markdown]
# Each line says, from the paired rounds and by the course's one rule, whether the plain step
# was faster than the step with the tool on, and by how much (the median ratio and its 95 %
# interval), or that the rounds could not tell (or were disturbed by other programs, which the
# rule reports instead of judging). The tables' first-call column times no compilation on either
# side: the JAX step was compiled before these cells (section 1.2's runs and the traces' warm-up
# called it), neither `debug_nans` nor a recording compiles it again, and eager PyTorch
# compiles nothing. Read the ratios for what they include. "Profiled" here
# starts and stops a recording around a single step, so its ratio holds the profiler's fixed
# cost of starting and stopping (and, for JAX, of writing the trace files) as well as the cost
# per recorded event; a long recording spreads the fixed part over many steps, which is why
# the section's traces recorded several steps in one recording. The NaN modes do different
# kinds of extra work, which is what their two ratios measure (whether the rounds could tell the
# costs apart, and from the plain step, is what the lines say). Anomaly mode works in Python on every op of
# the forward pass (it saves the stack of each one, for the error message a failing backward op
# may need), so its cost grows with the number of ops, and an eager step of small ops is where
# it weighs most. `debug_nans` does nothing inside the compiled program: after each jitted call
# it checks the outputs for NaN, and only when it finds one does it pay a large price, re-running
# the function op by op without compiling it (section 3.1 shows that re-run). On a step whose
# outputs are finite its cost is that check, which may be too small for the rounds to tell from
# noise; the line says which it was here. (It also turns buffer donation off for a function
# traced while it is on, so that a re-run can still read its inputs; donation is decided when
# the function is traced, so a step compiled before the flag was set keeps donating, and its
# re-run then finds its inputs deleted. This step donates none, so neither costs anything
# here.) Both belong in debugging rather than in a
# training run all the same: anomaly mode for the work it adds to every op, `debug_nans` because a NaN
# it meets stops the run with an error, which is what debugging wants and a long
# training job does not.
#
# ### 2.1 Counting FLOPs
#
# A profile says where time went; a FLOP count says how much arithmetic there was, which is
# what a roofline or a "model FLOPs utilisation" figure divides by. Each framework can count:
# JAX asks the compiler (`cost_analysis()` on the compiled program, after XLA's
# optimisations), PyTorch counts as it runs (`FlopCounterMode` intercepts matmuls,
# convolutions and attention, and counts nothing else). Both count a multiply-add as 2 FLOPs.
# The analytic count for the MLP's forward on a batch of B examples is
# 2·B·(64·H + H·10) for the two matmuls.

# %%
# PyTorch: FlopCounterMode around the forward, and around forward + backward
B = S.batch_size
with FlopCounterMode(display=False) as fc_fwd:
    model_p_torch(xb_torch)
with FlopCounterMode(display=False) as fc_train:
    F.cross_entropy(model_p_torch(xb_torch), yb_torch).backward()
flops_torch = {"forward": fc_fwd.get_total_flops(), "forward + backward": fc_train.get_total_flops()}
flops_torch

# %%
# JAX: XLA's cost analysis of the compiled forward, and of the compiled gradient
graphdef, params = nnx.split(model_p_jax)
fwd = jax.jit(lambda p, x: nnx.merge(graphdef, p)(x))
grad_fn = jax.jit(jax.grad(lambda p, x, y: loss_jax(nnx.merge(graphdef, p), x, y)))
flops_jax = {
    "forward": compat.cost_flops(fwd.lower(params, xb_jax).compile()),
    "forward + backward": compat.cost_flops(grad_fn.lower(params, xb_jax, yb_jax).compile()),
}
flops_jax

# %%
H = S.hidden
analytic = {"forward": 2 * B * (64 * H + H * 10), "forward + backward": 2 * B * (64 * H + H * 10) + 2 * B * (64 * H + 2 * H * 10)}
for k in analytic:
    assert flops_torch[k] == analytic[k], k
    assert analytic[k] <= flops_jax[k] <= 1.05 * analytic[k], k  # XLA adds the elementwise ops
display(Markdown("| FLOPs | analytic (matmuls) | `FlopCounterMode` | `cost_analysis` | XLA extra |\n|---|---:|---:|---:|---:|\n" + "\n".join(
    f"| {k} | {analytic[k]:,} | {flops_torch[k]:,} | {flops_jax[k]:,.0f} | {flops_jax[k] - analytic[k]:+,.0f} |" for k in analytic)))

# %% [markdown]
# The table compares three counts. `FlopCounterMode` matches the analytic matmul count exactly
# (the cell asserts it for both rows), because matmuls are all it counts. XLA's count is a
# little larger (the cell asserts it, by at most 5 %), and the last column says by how much: the compiled program also adds the
# biases and takes the ReLU's maxima (the forward program holds nothing else), the gradient
# program adds the loss's softmax and the gradients of those same operations, and
# `cost_analysis` counts each of those elementwise operations too. Neither program holds an
# optimizer update: only `jax.grad` was compiled. For the backward pass,
# the analytic count holds the weight gradients of both layers and the input gradient of the
# second only (nobody asks for the gradient of the data). When a paper quotes "model FLOPs", it
# means the matmul count; when XLA quotes FLOPs, it means everything it will execute.
#
# What the counts are for: model FLOPs utilisation (MFU) divides the matmul FLOPs of a step by
# its time and by the hardware's peak rate. With the analytic or `FlopCounterMode` count in the
# numerator, MFU compares like with like across frameworks; with `cost_analysis`'s count it
# would credit JAX for the elementwise work too. XLA's number is the right one for a different
# question: how much arithmetic the compiled program really performs, after any
# rematerialisation (recomputing activations in the backward pass raises it) or algebraic
# simplification.
#
# ## 3. Debugging compiled code
#
# **Key concepts**
# - NaNs: `jax.debug_nans(True)` (the `jax_debug_nans` flag as a context manager) re-runs a
#   jitted function op by op when its output has a NaN and raises at the op that made it;
#   `checkify` returns the error as a value from inside `jit`. PyTorch's
#   `torch.autograd.detect_anomaly()` names the backward op that produced a NaN, with the
#   forward line that created it.
# - Printing: inside `jit`, `print` runs at trace time only (once per trace);
#   `jax.debug.print` runs every call (and `jax.debug.breakpoint()` stops there, a debugger inside compiled code). Under
#   `torch.compile`, a `print` is a graph break: Dynamo compiles the code before and after it as
#   two graphs and runs the `print` in Python.
# - Indexing out of bounds: JAX clamps indexed reads and drops indexed writes silently (no
#   exceptions inside compiled code; `jnp.take` fills instead, with NaN for floats); PyTorch raises
#   `IndexError` (on a GPU, an index tensor past the end fails inside the kernel instead, as
#   a device-side assert, a `RuntimeError`).
# - Errors: a Python `if` on a traced value is a `TracerBoolConversionError` (a
#   `ConcretizationTypeError`); a data-dependent `if` under `torch.compile(fullgraph=True)` is an
#   `Unsupported` error from Dynamo. Each is fixed by saying the branch as data (`where`, `cond`).
#
# Compiled code is hard to debug for the same reason in both frameworks: the Python you wrote
# is not what runs. The tools below either bring the failing op back into view or make the
# compiled program report on itself.
#
# ### 3.1 NaN hunting
#
# The classic NaN: the Euclidean norm written as `sqrt(sum(z²))`. Its forward pass is fine at
# z = 0 (the norm is 0), but its gradient is z / ‖z‖ = 0 / 0. A row of zeros in a batch, and
# the loss stays finite while every parameter's gradient turns into NaN. Below, the loss is the
# mean norm of `x @ w`, and the batch's first row is zero.

# %%
x_nan_np = np.ones((4, 3), np.float32)
x_nan_np[0] = 0.0  # one all-zero example
w_nan_np = np.ones((3, 2), np.float32)


# %%
# PyTorch: the norm loss and its gradient
def norm_loss_torch(w, x):
    return torch.sqrt(((x @ w) ** 2).sum(dim=1)).mean()


w_nan_torch = torch.tensor(w_nan_np, requires_grad=True)
norm_loss_torch(w_nan_torch, torch.tensor(x_nan_np)).backward()
w_nan_torch.grad


# %%
# JAX: the same
def norm_loss_jax(w, x):
    return jnp.sqrt(((x @ w) ** 2).sum(axis=1)).mean()


grad_nan_jax = jax.grad(norm_loss_jax)(jnp.asarray(w_nan_np), jnp.asarray(x_nan_np))
grad_nan_jax

# %%
assert_close(w_nan_torch.grad, grad_nan_jax)  # both NaN, in the same places

# %% [markdown]
# Both frameworks agree: the whole gradient is NaN (the parity check treats NaN as equal to
# NaN in the same place), and nothing complained. In a training loop the next step would write
# NaN into every weight. Now ask each framework *where* the NaN was born. The next cells raise
# on purpose; `expect_error`, the course's expected-error helper, prints each error in a line
# (and fails the cell if the error does not happen).

# %%
# PyTorch: anomaly mode names the backward op that returned NaN (and warns with its forward line)
w_nan_torch.grad = None
with warnings.catch_warnings(record=True) as anomaly_warnings, torch.autograd.detect_anomaly():
    warnings.simplefilter("always")  # record them; printed below, cut to this notebook's frames
    with expect_error(RuntimeError):
        norm_loss_torch(w_nan_torch, torch.tensor(x_nan_np)).backward()
print("\n".join(profiles.short_warning(str(w.message)) for w in anomaly_warnings if "Error detected" in str(w.message)))

# %%
# JAX: debug_nans re-runs the failing computation op by op and raises at the first NaN
with expect_error(FloatingPointError), jax.debug_nans(True):
    jax.jit(jax.grad(norm_loss_jax))(jnp.asarray(w_nan_np), jnp.asarray(x_nan_np))

# %% [markdown]
# Each error names where a NaN first appeared, and the two frameworks name it differently:
# PyTorch the backward node that returned NaN (in the error line) and the forward line that
# recorded it (in a warning, printed below the error); JAX the primitive whose output was NaN
# when the gradient was re-run op by op. The cause is the same in both: the square root's
# infinite derivative at 0 multiplied by the factor z = 0. The square root's own backward returns
# an infinity, not a NaN, and the sum's backward only copies it along the row, so the NaN first
# appears two ops later, in the square's backward, where
# 2z = 0 multiplies that infinity: PyTorch names that node `PowBackward0`, JAX its `mul`. The
# full warning lists the whole Python stack of the forward call, through
# Jupyter's kernel, asyncio and tornado, the same in every notebook; the cell records it and
# prints its first line and the last frames, which are the cell itself and `norm_loss_torch`.
# Both modes belong in debugging, not in training (section 2 timed what each costs a step on
# this machine).
#
# `checkify` is the JAX tool that works *inside* compiled code without re-running it: it
# rewrites the function to carry an error value alongside its output, which you inspect (or
# `.throw()`) after the call. PyTorch has no counterpart for compiled code; its habit is to
# check the result, `torch.isfinite(grad).all()`, after the fact (the mirrored cell).

# %%
# PyTorch: check the gradient after the fact
w_nan_torch.grad = None
norm_loss_torch(w_nan_torch, torch.tensor(x_nan_np)).backward()
bool(torch.isfinite(w_nan_torch.grad).all())

# %%
# JAX: checkify, an error value returned from inside jit
checked_grad = jax.jit(checkify.checkify(jax.grad(norm_loss_jax), errors=checkify.nan_checks))
err, _ = checked_grad(jnp.asarray(w_nan_np), jnp.asarray(x_nan_np))
err.get()


# %% [markdown]
# The fix is the same in both frameworks: never differentiate `sqrt` at 0. An epsilon inside
# the root works but changes the value; the exact fix is the "double `where`": feed the root a
# harmless 1 where the sum of squares is 0, then select 0 there. The `where` outside picks the
# value, the `where` inside keeps the untaken branch's gradient finite (a `where` alone would
# still multiply an infinite derivative by 0). Both fixed gradients are finite and equal.

# %%
# PyTorch: the double where
def safe_norm_loss_torch(w, x):
    sq = ((x @ w) ** 2).sum(dim=1)
    nonzero = sq > 0
    return torch.where(nonzero, torch.sqrt(torch.where(nonzero, sq, torch.ones_like(sq))), 0.0).mean()


w_fix_torch = torch.tensor(w_nan_np, requires_grad=True)
safe_norm_loss_torch(w_fix_torch, torch.tensor(x_nan_np)).backward()
w_fix_torch.grad


# %%
# JAX: the same, and checkify now reports no error
def safe_norm_loss_jax(w, x):
    sq = ((x @ w) ** 2).sum(axis=1)
    nonzero = sq > 0
    return jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0).mean()


err_fixed, grad_fix_jax = jax.jit(checkify.checkify(jax.grad(safe_norm_loss_jax), errors=checkify.nan_checks))(
    jnp.asarray(w_nan_np), jnp.asarray(x_nan_np))
err_fixed.get(), grad_fix_jax

# %%
assert err_fixed.get() is None and bool(torch.isfinite(w_fix_torch.grad).all())
assert_close(w_fix_torch.grad, grad_fix_jax)

# %% [markdown]
# The library norms differ here, a sharp bit in itself. The next cell differentiates each
# framework's own norm at the zero vector, where the hand-written one gave NaN.

# %%
# PyTorch and JAX: the library norm's gradient at the zero vector
zero_torch = torch.zeros(3, requires_grad=True)
torch.linalg.vector_norm(zero_torch).backward()
norm_grad_jax = jax.grad(jnp.linalg.norm)(jnp.zeros(3))
print("torch.linalg.vector_norm:", zero_torch.grad.tolist())
print("jnp.linalg.norm:         ", norm_grad_jax.tolist())
assert not bool(zero_torch.grad.any()) and bool(jnp.isnan(norm_grad_jax).all())

# %% [markdown]
# PyTorch printed zeros: `torch.linalg.vector_norm` defines its gradient at 0 as 0, so a
# loss built on it needs no fix. That 0 is a convention, not a derivative: the norm has a
# corner at the zero vector and no derivative there, and 0 is the subgradient of smallest
# size, the one that adds nothing to the step. JAX printed NaN in every element:
# `jnp.linalg.norm` is the square root of a sum of squares, differentiated as written, the
# same NaN as the hand-written version, so in JAX the double `where` stays necessary. The
# cell's `assert` stops the notebook when a release changes either behaviour.
#
# A last resort common to both: run without compiling. `jax.disable_jit()` (a context manager)
# makes every `jit` run op by op in Python on concrete values, so a normal `print`, `pdb` and
# a Python `if` on a value work (jax.numpy's own rules stay: an index past the end still clamps
# and `log(-1)` is still a silent NaN, so 3.1's and 3.3's tools are still needed);
# `torch.compiler.disable` does the same for a function under `torch.compile`. When a
# compiled PyTorch model gives different numbers from the eager one, compile it with
# `backend="eager"` (Dynamo's capture only), then `"aot_eager"` (plus AOTAutograd's backward
# graph), then the default Inductor: the first backend that disagrees with eager mode names the
# compiler stage at fault (Dynamo's capture, AOTAutograd, or Inductor's code).
#
# ### 3.2 Printing inside compiled code, and graph breaks
#
# Inside `jax.jit`, Python runs once, at trace time, with abstract values: a `print` shows a
# tracer (a shape and a dtype) once per trace (the first call, and any call with a new shape or
# dtype that traces again), never on the calls that reuse the compiled program.
# `jax.debug.print` is an op in the compiled program: it prints the runtime values on every call (`jax.debug.breakpoint()` likewise opens a
# debugger on the runtime values; it is not run here, because it would wait for input and stop
# Run All). `torch.compile` handles a `print` differently: Dynamo cannot put it in a graph, so it
# *breaks* the graph there, compiles the part before and the part after as separate graphs, and
# runs the `print` in Python between them. To count graphs with public APIs only, the PyTorch
# cell compiles with a custom backend (any callable that receives each FX graph, the documented
# way to plug a compiler in) that records what it receives and runs it as is.

# %%
# PyTorch: a print inside torch.compile is a graph break: two graphs
graphs = []


def recording_backend(gm, example_inputs):
    graphs.append(gm)  # one call per graph Dynamo captured
    return gm.forward


def scaled_torch(x):
    y = x * 2
    print("PyTorch, inside compile:", y.sum())
    return y + 1


out_print_torch = torch.compile(scaled_torch, backend=recording_backend)(torch.arange(3.0))
len(graphs)


# %%
# JAX: print runs at trace time (once, a tracer), jax.debug.print at run time (every call)
@jax.jit
def scaled_jax(x):
    y = x * 2
    print("JAX, at trace time:", y)
    jax.debug.print("JAX, at run time: {s}", s=y.sum())
    return y + 1


out_print_jax = scaled_jax(jnp.arange(3.0))
out_print_jax = scaled_jax(jnp.arange(3.0))  # the second call: no trace, debug.print still runs

# %%
assert_close(out_print_torch, out_print_jax)
assert len(graphs) == 2  # the print split the PyTorch function in two graphs

# %% [markdown]
# The PyTorch cell captured two graphs for one function (the count above): the `print` split
# the function in two, and Python ran it, with real values, between them. That is correct,
# but each break hands control back to Python between two graphs, and no optimisation crosses
# it: ops on either side of the break cannot be fused into one kernel. To see
# where and why graphs break without a custom backend, run with the environment variable
# `TORCH_LOGS="graph_breaks"` (or `TORCH_LOGS="+dynamo"` for everything), or compile with
# `fullgraph=True` to turn the first break into an error (section 3.4); to check that a warmed-up
# model no longer recompiles, `torch.compiler.set_stance("fail_on_recompile")`. The JAX cell
# printed its tracer line once, at the first call, and its runtime line at both calls: the
# compiled program carries the `debug.print` with it. Both outputs are equal, as the parity cell
# checks.
#
# ### 3.3 Out-of-bounds indexing: clamped in JAX, an error in PyTorch
#
# An index past the end of an array cannot raise inside compiled XLA code (there is no way to
# stop a running kernel and throw), so JAX defines the result instead: an indexed read such as
# `v[10]` clamps the index to the last valid one, an indexed write drops the update (other
# gathers choose otherwise: `jnp.take` fills, as the embedding cell below shows). The same
# line in PyTorch raises. The JAX cell comes first here because it is the one that does *not*
# fail.

# %%
# JAX: index 10 of a length-5 array reads the last element; a write to index 10 is dropped
v_jax = jnp.arange(5.0)
read_jax, written_jax = v_jax[10], v_jax.at[10].set(99.0)
assert read_jax == v_jax[-1] and bool((written_jax == v_jax).all())  # clamped read, dropped write
read_jax, written_jax

# %%
# PyTorch: the same index is an IndexError
v_torch = torch.arange(5.0)
with expect_error(IndexError):
    v_torch[10]

# %% [markdown]
# JAX returned 4.0, the last element (the clamped read), and an unchanged array (the dropped
# write), without a word; the cell asserts both, so a release that starts to raise stops it. When an index can go out of bounds, say what should happen: `.at[i].get(mode="fill",
# fill_value=...)` returns a fill value instead of a clamped one, and `checkify` with
# `errors=checkify.index_checks` turns the out-of-bounds gather into an error value, as it did for
# NaNs above.
#
# Negative indices are a different matter: `v[-1]` means the last element in both frameworks,
# as in NumPy, and JAX's clamping applies only beyond them.

# %%
err_index, _ = jax.jit(checkify.checkify(lambda v, i: v[i], errors=checkify.index_checks))(v_jax, 10)
assert err_index.get() is not None
v_jax.at[10].get(mode="fill", fill_value=jnp.nan), err_index.get().splitlines()[0]

# %% [markdown]
# This is why a mis-sized embedding table can train in JAX without an error. The next cell
# looks up token ids 1 and 7 in a table of 4 rows three ways: Flax's `nnx.Embed`, plain
# indexing of the same table, and PyTorch's `F.embedding`.

# %%
# Token id 7 in a 4-row table: nnx.Embed, table[ids], and PyTorch's lookup
table_np, ids_np = np.arange(8.0, dtype=np.float32).reshape(4, 2), np.array([1, 7])  # row r: 2r, 2r+1
embed_jax = nnx.Embed(4, 2, rngs=nnx.Rngs(0))
embed_jax.embedding[...] = jnp.asarray(table_np)
rows_embed_jax = np.asarray(embed_jax(jnp.asarray(ids_np)))
rows_indexed_jax = np.asarray(jnp.asarray(table_np)[ids_np])
print("nnx.Embed: ", rows_embed_jax.tolist())
print("table[ids]:", rows_indexed_jax.tolist())
with expect_error(IndexError):
    F.embedding(torch.tensor(ids_np), torch.tensor(table_np))
assert np.isnan(rows_embed_jax[1]).all() and (rows_indexed_jax[1] == table_np[-1]).all()


# %% [markdown]
# Id 1 reads row 1, (2, 3), in both JAX lookups. Id 7 is where they part: `nnx.Embed`
# printed NaN for it, because it looks rows up with `jnp.take`, whose default mode fills an
# out-of-bounds row with NaN, so a model built on it sees its loss turn NaN, still without
# an error at the lookup; plain indexing printed (6, 7) for it, the table's last row (the
# clamp), so the symptom there is only a worse loss; PyTorch raised for the call, as
# `v_torch[10]` did above. The `assert` fails when a release changes either JAX behaviour.
# Neither JAX lookup names the bad id, so the check that does belongs before the model: an
# `assert ids.max() < vocab_size, ids.max()` where the batches are built catches a mis-sized
# table in either framework, on the first batch that holds an id past the end, and prints
# that id. An indexed read already runs in JAX's default mode for reads, `promise_in_bounds`:
# the caller promises the indices are in range and JAX adds no check, and what XLA then does
# with one past the end is the clamped read above (`v.at[i].get(mode="promise_in_bounds")`
# compiles to the same program as `v[i]`); code that relies on the clamp can say so with
# `.at[i].get(mode="clip")`.

# %% [markdown]
# ### 3.4 Reading a tracer error and a Dynamo error
#
# Both compilers refuse the same thing for different reasons: a Python `if` whose condition is
# a value computed from the input. `jax.jit` traces with abstract values, so `x.sum() > 0` has no
# truth value yet and Python's `if` cannot be answered: a `TracerBoolConversionError` (a kind of
# `ConcretizationTypeError`). Dynamo could break the graph there and run the `if` in Python, but
# with `fullgraph=True` a graph break is an error, and it says so (the recording backend from 3.2
# keeps the compile cheap; the error comes from Dynamo before any backend runs).

# %%
def sign_step_torch(x):
    if x.sum() > 0:  # data-dependent branch
        return x * 2
    return x - 1


def sign_step_jax(x):
    if x.sum() > 0:  # the same branch, under jit
        return x * 2
    return x - 1


# %%
# PyTorch: fullgraph=True turns the graph break into an error (its first lines printed)
with expect_error(RuntimeError, lines=6):  # torch._dynamo.exc.Unsupported (UserError in torch 2.6)
    torch.compile(sign_step_torch, backend=recording_backend, fullgraph=True)(torch.ones(3))

# %%
# JAX: the Python if on a tracer
with expect_error(jax.errors.TracerBoolConversionError, lines=3):
    jax.jit(sign_step_jax)(jnp.ones(3))


# %% [markdown]
# Read each message's first lines (`expect_error` printed six of Dynamo's and all three of
# JAX's). The PyTorch cell expects a `RuntimeError`, which Dynamo's errors are, because their
# own classes live in a private module, `torch._dynamo.exc`; the line printed still names the
# class (`Unsupported`, or its subclass `UserError` in torch 2.6). Dynamo's message names the
# kind of graph break, "Data-dependent branching" (torch 2.6 says "Dynamic control flow is not
# supported"), and the line of the condition: torch 2.12 and later print that line among the
# first ones, with the operation that computed the condition; earlier releases name it near
# the end of the message, under "from user code". JAX's names the abstract value (`bool[]`)
# that Python tried to turn into a bool. The fix is the same idea in both: state the branch as
# data. When both branches are cheap, compute both and select (`torch.where`, `jnp.where`); when they are expensive, use the
# compilers' conditional (`torch.cond`, `jax.lax.cond`), which compiles both branches and runs
# one. Neither takes a branch with a Python side effect such as a `print`: `torch.cond` refuses
# it with an error, and `lax.cond` runs the Python of both branches once, when it traces them.
#
# Both messages are worth reading to the end rather than to the first frame. JAX's ends with a
# link to its error page (each error class has one, with the common causes and fixes) and says
# *which argument* the value depends on: if that argument only ever takes a few values, marking
# it static (`static_argnums`) is the other fix. Dynamo's carries the line of the condition
# and, since torch 2.7, an explanation and hints; without `fullgraph=True` the same code would
# have run with a graph break, which `TORCH_LOGS="graph_breaks"` logs (since torch 2.7 with the
# same explanation).

# %%
# PyTorch: the branch as a select, one graph
def sign_step_fixed_torch(x):
    return torch.where(x.sum() > 0, x * 2, x - 1)


fixed_out_torch = torch.compile(sign_step_fixed_torch, backend=recording_backend, fullgraph=True)(torch.ones(3))
fixed_out_torch


# %%
# JAX: lax.cond, compiled once, both branches in the program
@jax.jit
def sign_step_fixed_jax(x):
    return jax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, x)


fixed_out_jax = sign_step_fixed_jax(jnp.ones(3))
fixed_out_jax

# %%
assert_close(fixed_out_torch, fixed_out_jax)
assert_close(sign_step_fixed_torch(-torch.ones(3)), sign_step_fixed_jax(-jnp.ones(3)))

# %% [markdown]
# ## 4. Randomness and determinism
#
# **Key concepts**
# - PyTorch draws from a global generator (Mersenne Twister on the CPU, Philox on CUDA) seeded
#   by `torch.manual_seed`; JAX draws from explicit keys with the threefry counter-based
#   generator. The same seed gives *different* numbers in the two frameworks, by design.
# - To get the same dropout masks in both, generate them in one place (NumPy here) and feed them
#   to both.
# - Determinism: `torch.use_deterministic_algorithms(True)` makes PyTorch pick deterministic
#   kernels (or raise where none exists, mostly on CUDA); XLA on a CPU is deterministic, and
#   `XLA_FLAGS=--xla_gpu_deterministic_ops=true` asks the same of its GPU backend.
# - Per-rank streams: `jax.random.fold_in(key, rank)` in JAX; in PyTorch a generator per rank,
#   seeded from NumPy's `SeedSequence(seed).spawn(...)` rather than `seed + rank`.
#
# A reproducible run is one whose numbers can be compared: a bug that appears in one run must
# appear in the next, and two frameworks can only be compared when they consume the same random
# numbers. The two frameworks make different promises here, and the cells below test them.
#
# ### 4.1 The same seed, different masks; the same mask, the same output
#
# Dropout with p = 0.5 on a 16×64 tensor of ones, seeded 0 in both frameworks.

# %%
# PyTorch: F.dropout with the global generator seeded 0
p_drop = 0.5
torch.manual_seed(0)
mask_torch = F.dropout(torch.ones(16, 64), p=p_drop, training=True) != 0
mask_torch.float().mean().item()

# %%
# JAX: nnx.Dropout with a key from seed 0
dropout_jax = nnx.Dropout(p_drop, rngs=nnx.Rngs(dropout=0))
mask_jax = dropout_jax(jnp.ones((16, 64))) != 0
float(mask_jax.mean())

# %%
agree = float((mask_torch.numpy() == np.asarray(mask_jax)).mean())
print(f"the two masks agree on {100 * agree:.1f} % of positions (independent masks: {100 * (p_drop**2 + (1 - p_drop)**2):.0f} % expected)")

# %% [markdown]
# Each cell printed the fraction of entries its mask kept; compare the printed agreement between
# the two masks with what two independent random masks would give: the generators are different
# algorithms, so one seed shared by both gives two unrelated masks. To run "the same" dropout in both (to compare the
# frameworks, or to port a model and check it step by step), draw the masks once, in NumPy, from
# one stream, and apply them with the same inverted-dropout scaling both libraries use (kept
# entries divided by 1 − p).
#
# The design difference behind this is worth knowing. PyTorch's generator is a stateful object:
# each call advances a hidden state, so the numbers a layer gets depend on every random call
# made before it anywhere in the process (an extra `torch.rand` in a logging line changes every
# dropout mask after it). JAX's threefry is counter-based: a key plus a counter give the bits,
# with no hidden state, so a function given a key always draws the same numbers, and `split`
# or `fold_in` derive new keys instead of advancing a state. That is why JAX code passes keys
# around explicitly and never reuses one for two purposes.
#
# Flax NNX brings some of PyTorch's convenience back, and with it some state. `nnx.Rngs` holds
# a key *and a counter* per stream, and `nnx.Dropout` forks its own stream from the `dropout`
# one when it is built (a key derived from that stream, and a fresh counter) and keeps both as
# variables of the layer: each call folds the counter into the key and advances it, so calling
# the same layer again draws a new mask.
# The state is explicit (it is in `nnx.state(dropout_jax)`, next to the parameters, and
# `nnx.jit` carries it in and out like any other variable), but it is state: the mask a call
# gets depends on how many calls came before, as in PyTorch. The layer above was built with
# `nnx.Rngs(dropout=0)`, so seed 0 fixes its masks (the first is drawn from a key derived from
# `jax.random.key(0)`, not from that key itself); the cell below calls it again.

# %%
# JAX: the same nnx.Dropout called again draws a new mask; its counter is layer state
mask_again_jax = dropout_jax(jnp.ones((16, 64))) != 0
rng_state = nnx.to_pure_dict(nnx.state(dropout_jax))["rngs"]
agree_again = float((mask_again_jax == mask_jax).mean())
print(f"second call: {agree_again:.1%} of positions agree with the first; "
      f"the layer's counter now reads {int(rng_state['count'])}")
assert 0.4 < agree_again < 0.6  # a new mask: about half the positions agree, as for independent masks

# %% [markdown]
# The printed agreement is near the 50 % two independent masks give (the cell asserts it lies
# between 40 and 60 %), and the counter says how many masks the layer has drawn. Nothing is
# hidden in the sense that matters for debugging: the counter and the key can be read, saved,
# restored and passed around like the parameters, and a model rebuilt with the same
# `nnx.Rngs` seed draws the same sequence of masks. But two calls of one layer do not give one
# mask, so to compare or replay dropout exactly, either rebuild the layer (or restore its
# state) before each call, or give both frameworks the masks, as the next cells do.

# %%
mask_stream = np.random.default_rng(0)  # one stream both frameworks read
masks_np = [mask_stream.random((S.batch_size, S.hidden)) >= p_drop for _ in range(3)]  # (batch, hidden) each
h_np = np.random.default_rng(1).standard_normal((S.batch_size, S.hidden)).astype(np.float32)

# %%
# PyTorch: dropout with a given mask
dropped_torch = [torch.from_numpy(h_np) * torch.from_numpy(m) / (1 - p_drop) for m in masks_np]

# %%
# JAX: the same
dropped_jax = [jnp.asarray(h_np) * jnp.asarray(m) / (1 - p_drop) for m in masks_np]

# %%
assert_close(dropped_torch, dropped_jax, rtol=0, atol=0)

# %% [markdown]
# Bit for bit equal: the randomness is no longer inside either framework. This is the honest way
# to put dropout in a side-by-side comparison; the framework's own dropout is what a real model
# uses, and its masks differ by design.
#
# ### 4.2 Deterministic algorithms, keys under sharding, and per-rank seeds
#
# `torch.use_deterministic_algorithms(True)` is a switch for the whole process: ops with a
# deterministic implementation use it, and ops without one raise (on CUDA, for instance,
# `torch.histc` and `torch.bincount` with weights, whose kernels add with atomics in a varying
# order; others, such as `index_add_`, switch to a deterministic kernel); on CUDA it also
# needs `CUBLAS_WORKSPACE_CONFIG=:4096:8` (or `:16:8`) in the environment. On a CPU little
# changes. JAX has no such switch to flip from Python: a compiled XLA program on a CPU or TPU
# is deterministic, and on GPUs `XLA_FLAGS=--xla_gpu_deterministic_ops=true`, set before JAX starts, makes XLA pick
# deterministic kernels.
#
# For PyTorch on a GPU the full recipe adds `torch.backends.cudnn.benchmark = False` (autotuning
# may choose a different convolution algorithm in each run) and seeding every source of
# randomness, DataLoader workers included (`generator=` and `worker_init_fn`). PyTorch's
# reproducibility notes warn that deterministic operations are often slower than
# nondeterministic ones; how much slower depends on the GPU and the ops, and this lesson
# measures it nowhere (on a CPU the switch gives only a few ops a deterministic kernel, such as
# `index_put_` with `accumulate=True`, none of which this lesson's steps call, and it fills the
# memory of `torch.empty`-style allocations, NaN for floats, unless
# `torch.utils.deterministic.fill_uninitialized_memory` is turned off: an extra write that the
# steps do make), so the default that neither
# framework turns it on is the frameworks' choice, reported here, not a cost measured here.
#
# Keys under sharding: `jax_threefry_partitionable` decides how `jax.random` generates a large
# array that is sharded across devices. With it on, each device computes its own shard's bits
# from the key and the element indices, with no communication, and the values do not depend on
# how the array is sharded. The cell below prints the flag's value in this run; it has been on
# by default since jax 0.5, and code written for releases before 0.5 may see different numbers
# from the same key.

# %%
# PyTorch: the deterministic-algorithms switch, set and restored
torch.use_deterministic_algorithms(True)
det_torch = torch.are_deterministic_algorithms_enabled()
torch.use_deterministic_algorithms(False)
det_torch, torch.are_deterministic_algorithms_enabled()

# %%
# JAX: the partitionable-threefry flag this run uses
jax.config.jax_threefry_partitionable


# %% [markdown]
# Per-rank streams: in data-parallel training every rank (process) needs its own dropout
# stream, the same in every rerun. In JAX, `fold_in(key, rank)` derives rank `r`'s key from one
# base key: distinct for every rank, fixed by the seed, and independent of how many ranks there
# are. The common PyTorch habit, `torch.manual_seed(seed + rank)`, gives distinct streams too, but
# seed 0 on rank 1 is seed 1 on rank 0: two experiments "with different seeds" then share
# streams. Seeding each rank's `torch.Generator` from NumPy's `SeedSequence(seed).spawn(...)`
# avoids it (NumPy hashes the seed and the child's index together). Both cells draw 4 numbers
# per rank for 4 ranks.

# %%
# PyTorch: a generator per rank, seeded from SeedSequence(seed).spawn(n)
def rank_generators_torch(seed, n_ranks):
    children = np.random.SeedSequence(seed).spawn(n_ranks)
    return [torch.Generator().manual_seed(int(c.generate_state(1, np.uint64)[0])) for c in children]


draws_torch = np.stack([torch.rand(4, generator=g).numpy() for g in rank_generators_torch(0, 4)])
draws_torch.round(3)


# %%
# JAX: fold_in(key, rank)
def rank_keys_jax(seed, n_ranks):
    return [jax.random.fold_in(jax.random.key(seed), r) for r in range(n_ranks)]


draws_jax = np.stack([np.asarray(jax.random.uniform(k, (4,))) for k in rank_keys_jax(0, 4)])
draws_jax.round(3)

# %%
for draws in (draws_torch, draws_jax):
    assert len({row.tobytes() for row in draws}) == len(draws)  # distinct per rank
assert_close(draws_torch, np.stack([torch.rand(4, generator=g).numpy() for g in rank_generators_torch(0, 4)]), rtol=0, atol=0)
assert_close(draws_jax[:2], np.stack([np.asarray(jax.random.uniform(k, (4,))) for k in rank_keys_jax(0, 2)]), rtol=0, atol=0)
naive = [torch.rand(4, generator=torch.Generator().manual_seed(seed + rank)) for seed, rank in [(0, 1), (1, 0)]]
print(f"seed + rank: seed 0's rank 1 and seed 1's rank 0 drew identical numbers: {torch.equal(*naive)}")


# %% [markdown]
# The checks: each framework's ranks draw distinct numbers; rebuilding the generators gives the
# same numbers again; JAX's rank-0 and rank-1 streams are the same whether there are 4 ranks
# or 2. The last line is the `seed + rank` trap (the flat sum throws away which of the two
# numbers was the seed, so every pair with the same sum shares one stream): it prints whether
# seed 0's rank 1 and seed 1's rank 0 drew identical numbers (they must, since both are seed 1). The two frameworks' numbers
# differ from each other, as in 4.1; what matches is the recipe.
#
# ### 4.3 Two runs, the same numbers, proven
#
# The last promise: train twice from the same seed and data, and get the same bits. The cells
# rerun section 1's float32 training for a few steps in each framework, twice, and compare the
# loss curves and every final weight as raw bytes (not with a tolerance).

# %%
# PyTorch: two runs of the same training
def run_bytes_torch():
    losses, model = train_torch(torch.float32, BATCHES[: S.repro_steps])
    return losses.tobytes() + b"".join(p.detach().cpu().numpy().tobytes() for p in model.parameters())


repro_torch = [run_bytes_torch() for _ in range(2)]
same_torch = repro_torch[0] == repro_torch[1]
same_torch


# %%
# JAX: the same
def run_bytes_jax():
    losses, model = train_jax(jnp.float32, BATCHES[: S.repro_steps])
    return losses.tobytes() + b"".join(np.asarray(p).tobytes() for p in jax.tree.leaves(nnx.state(model, nnx.Param)))


repro_jax = [run_bytes_jax() for _ in range(2)]
same_jax = repro_jax[0] == repro_jax[1]
same_jax

# %%
DETERMINISM_FLAGS = {  # what makes each framework's GPU kernels deterministic
    "PyTorch": "CUBLAS_WORKSPACE_CONFIG=:4096:8 and torch.use_deterministic_algorithms(True)",
    "JAX": "XLA_FLAGS=--xla_gpu_deterministic_ops=true before jax starts",
}
if SETUP.compared_kind == "cpu":  # expected on a CPU (same threads, versions, inputs): checked
    assert same_torch and same_jax
for fw, same, runs in [("PyTorch", same_torch, repro_torch), ("JAX", same_jax, repro_jax)]:
    outcome = "identical" if same else f"different; for identical runs on a GPU, set {DETERMINISM_FLAGS[fw]}"
    print(f"{fw} on {SETUP.compared_kind}: two runs of {len(runs[0]):,} bytes each, {outcome}")

# %% [markdown]
# The lines above say, for each framework, whether its two runs were identical byte for byte on
# this run's device, and what to set where they were not. The assertion runs only where
# identical bytes are expected: on a CPU, where with the same threads, versions and inputs both
# frameworks' kernels have no source of run-to-run variation that the course knows of, and
# the assertion checks that expectation on every run rather than taking it on trust. On a GPU
# the same cell reports instead of failing, because cuBLAS may split a matmul's reduction
# differently from call to call unless its workspace is fixed (`CUBLAS_WORKSPACE_CONFIG`) and
# deterministic algorithms are requested, and XLA's GPU backend uses atomic additions in some
# reductions and scatters unless `--xla_gpu_deterministic_ops=true` is set before JAX starts
# (setting it later has no effect). Across thread counts (a different split of a reduction sums
# in a different order) and across library versions, equality is likewise a property to
# check, not to assume. Nothing promises that the two frameworks reproduce *each other* bit
# for bit (section 1 printed their float32 gap), which is why the
# course compares them with tolerances and compares each with itself bit for bit.
#
# What can break the equality, if you want to see it happen: changing the number of threads
# between the runs (the reductions split differently), `torch.backends.cudnn.benchmark = True`
# on a GPU (autotuning picks kernels by timing, and timings vary), XLA's GPU autotuner for the
# same reason, and any randomness drawn without a fixed seed or key, such as a DataLoader's
# shuffling or an unseeded dropout layer.
#
# ## Summary
#
# | task | PyTorch | JAX / Flax NNX |
# |---|---|---|
# | 16-bit compute, float32 weights | `with torch.autocast(device, dtype=torch.bfloat16):` | `nnx.Linear(..., dtype=jnp.bfloat16, param_dtype=jnp.float32)` |
# | count updates lost to rounding | `(p - lr * g == p) & (g != 0)`, summed | the same in `jax.numpy` |
# | keep the loss in float32 | autocast's float32 op list | `logits.astype(jnp.float32)` by hand |
# | float16 loss scaling | `torch.amp.GradScaler` | scale the loss, unscale the grads (or the `jmp` library) |
# | format limits | `torch.finfo` | `jnp.finfo` |
# | record a trace | `torch.profiler.profile` → `export_chrome_trace` | `jax.profiler.trace(dir, create_perfetto_trace=True)` |
# | view it | Perfetto (ui.perfetto.dev) | Perfetto, or XProf (`xprof --logdir=FOLDER`) |
# | count FLOPs | `FlopCounterMode` (matmul-like ops) | `jit(f).lower(...).compile().cost_analysis()` (everything XLA runs) |
# | find a NaN | `torch.autograd.detect_anomaly()` | `jax.debug_nans(True)`, `checkify` |
# | what a tool costs a step | `timing.compare` with and without it (section 2) | the same |
# | print in compiled code | a graph break (runs in Python) | `jax.debug.print`, `jax.debug.breakpoint` |
# | see graph breaks | `TORCH_LOGS="graph_breaks"`, `fullgraph=True` | (none: a Python `if` on a tracer is an error) |
# | out-of-bounds index | `IndexError` | clamped read, dropped write; `mode="fill"`, `checkify.index_checks` |
# | data-dependent branch | `torch.where`, `torch.cond` | `jnp.where`, `jax.lax.cond` |
# | seeding | `torch.manual_seed`, `torch.Generator` | `jax.random.key`, `split`, `fold_in` |
# | per-rank streams | a generator per rank from `SeedSequence(seed).spawn(n)` | `fold_in(key, rank)` |
# | determinism | `torch.use_deterministic_algorithms(True)` | deterministic on CPU/TPU; `--xla_gpu_deterministic_ops` |
#
# ### Popular claims vs what you measured
#
# The precision speed questions of this lesson, as the registry's one rule answered them in
# this run (section 2's tool costs were answered by the same rule, in the lines under their cells).
# First the two open questions of section 1.4, one per framework: no claim is attached, so the
# answer is the rule's sentence, which names the faster precision or says the rounds could not
# tell (or were too disturbed by other programs to judge). Then the tensor-core claim of section 1.5 (judged on a GPU with bfloat16 tensor cores from the timed matmuls;
# elsewhere, with the reason it was not judged):

# %%
display(Markdown(
    "| question | what this run measured |\n|---|---|\n"
    + "\n".join(f"| is bfloat16 faster than float32 in {fw}, here? | {a.explanation} |" for fw, a in BF16_HERE.items())
))
display(Markdown(
    "| claim | stated | verdict | why |\n|---|---|---|---|\n"
    + "\n".join(f"| {v.claim.text} | {v.claim.claimed} | **{v.verdict}** | {v.explanation} |" for v in VERDICTS.values())
))

# %% [markdown]
# **Common misconceptions** (each corrected by a cell above)
# - *"bfloat16 is just a shorter float16."* It trades mantissa for exponent: float32's range,
#   an eighth of float16's precision (3 fewer mantissa bits, the epsilon ratio printed in
#   section 1), and no need for loss scaling (section 1's table and probes).
# - *"Mixed precision changes the weights to 16 bits."* Both recipes here keep float32
#   parameters and a float32 update; only the compute is 16-bit (sections 1.1 and 1.3).
# - *"`torch.autocast` and Flax's `dtype` do the same thing."* Autocast decides per op from its
#   lists; Flax computes each layer in its `dtype` and leaves every other cast to you (1.1).
# - *"JAX checks array bounds like NumPy."* Not in compiled code, and not in eager code either:
#   it clamps reads and drops writes, silently (3.3, where `v_jax[10]` ran without `jit` and
#   returned the last element).
# - *"The same seed gives the same random numbers in both frameworks."* Different generators;
#   share the masks, not the seeds (4.1).
# - *"A NaN in the gradient means a NaN in the loss."* The norm written as `sqrt(sum(z²))`
#   (and `jnp.linalg.norm`, written the same way) has a finite value at a zero vector and a NaN
#   gradient; only a check on the gradient, or `detect_anomaly` / `debug_nans`, finds it (3.1).
# - *"A profile with more rows is a slower program."* Eager PyTorch's trace lists every operator
#   (and nested ones) while JAX's lists fused ops; the number of rows says how the work was cut
#   up, and the profiler's own cost, which section 2 timed around a one-step recording, comes on top of both.
# - *"The op at the top of the table is where the step spends its time."* It is where this
#   recording spent it. Ops of a few microseconds trade places between two recordings, and on
#   cores shared with other programs one op's time can grow many times over; section 2's line
#   under each table says whether the cores were quiet, and only the shape of the tables (how
#   many ops, which kinds) carries from run to run.
# - *"If bfloat16 compute is accurate enough, so is bfloat16 storage."* The forward and backward
#   passes tolerate 8 significant bits, but an update smaller than half a parameter's rounding
#   gap is lost outright; section 1.2 counted the share lost per run and what it did to the loss.
#
# **Review questions**
#
# <details><summary>1. Why does float16 training need a GradScaler and bfloat16 training not?</summary>
#
# float16's smallest normal number is about 6e-5, and small gradients underflow to zero (the
# probe turned 1e-8 into 0); scaling the loss by 2¹⁶ moves them into range. bfloat16 has
# float32's exponent, so the same gradients are representable, only rounded more coarsely.
# </details>
#
# <details><summary>2. The JAX profile lists far fewer ops per step than the PyTorch one. Why, and what would change that?</summary>
#
# `jax.jit` compiles the step into one XLA program and fuses elementwise chains into single
# ops; eager PyTorch dispatches every operator separately. `torch.compile` (Inductor) fuses
# PyTorch's step similarly; the profile of a compiled step shows its fused kernels.
# </details>
#
# <details><summary>3. Why is XLA's FLOP count larger than FlopCounterMode's for the same forward pass?</summary>
#
# `FlopCounterMode` counts matmul-like ops only; `cost_analysis` counts every operation in the
# compiled program, elementwise ones included: in this forward pass the bias adds and the ReLU
# (the MLP's forward has no softmax; the loss's softmax appears only in the gradient program).
# </details>
#
# <details><summary>4. A loss is finite and every gradient is NaN. Which tools find the op, in each framework?</summary>
#
# `torch.autograd.detect_anomaly()` names the backward op and the forward line; in JAX,
# `jax.debug_nans(True)` raises at the primitive, and `checkify` with `nan_checks` returns the
# error from inside `jit`. The usual cause is a function whose derivative is infinite where its
# value is fine, such as `sqrt` at 0.
# </details>
#
# <details><summary>5. Why is <code>torch.manual_seed(seed + rank)</code> a poor per-rank seeding, and what does JAX do instead?</summary>
#
# Different (seed, rank) pairs collide: seed 0 on rank 1 equals seed 1 on rank 0. JAX derives
# rank keys with `fold_in(key(seed), rank)`, a hash of both, and NumPy's `SeedSequence.spawn`
# does the same for seeding PyTorch generators.
# </details>
#
# <details><summary>6. Why does Flax's `param_dtype=jnp.float32` matter when the compute dtype is bfloat16?</summary>
#
# The optimiser updates the parameters in their own dtype. In bfloat16 a weight near 1 cannot
# change by less than about 0.004, so small updates are rounded away; float32 master weights
# keep them, and each forward pass casts a bfloat16 copy for the matmuls. Section 1.2 counted
# the updates that bfloat16 storage rounds away in both frameworks, at two learning rates.
# </details>
#
# <details><summary>7. Why does a smaller learning rate make bfloat16 storage lose more of its updates?</summary>
#
# An update is lost when `lr * g` is smaller than half the rounding gap around the parameter,
# a gap fixed by the parameter's size and bfloat16's 8 significant bits. The gradient does not
# shrink with the learning rate, so dividing the rate by ten moves more updates under the gap:
# for the same parameter and gradient, any update lost at the larger rate is lost at the smaller
# one too. Fine-tuning and the end of a decaying schedule use small rates, which is where a
# model trained without float32 master weights stops improving first.
# </details>
#
# <details><summary>8. Two recordings of the same step rank their top ops differently. Which one is right?</summary>
#
# Possibly both, as records of their own runs, and neither as a statement about the step. Read
# the line under each table first: a recording made while other programs kept the cores busy
# says more about them than about the step. On quiet cores, small ops still trade places from
# run to run; compare what does not move (the number of op events per step, the kinds of op,
# the few ops that take most of the time) and time the question that matters with
# `course_utils.timing`, which interleaves the variants and reports the contention it saw.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and
# press *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.
# Where an executed copy's script does not run (GitHub's preview, an untrusted notebook)
# each answer is folded under its question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("09_numerics_and_tools")

# %% [markdown]
# **Exercises.** `exercises/09_numerics_and_tools_exercises.ipynb`: a bfloat16-safe cross-entropy,
# the FLOPs of an MLP's training step, the first step with a non-finite gradient, per-rank keys,
# and a top-ops summary of a trace.
