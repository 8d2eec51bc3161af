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
# Once a model trains in both frameworks, new questions come up. How do you train in 16-bit
# floats? Where does the time of a step go? How do you find a NaN inside compiled code? How
# do two runs print the same numbers? PyTorch answers with modes that change the ops run
# inside them. JAX answers with explicit dtypes, explicit keys and a compiler you can
# question.
#
# **Learning objectives.** After this notebook you can
# 1. train in bfloat16 with `torch.autocast` and with Flax NNX's `dtype`/`param_dtype`, and
#    say where each keeps float32 and why;
# 2. record and read a `torch.profiler` and a `jax.profiler` trace of one step, count its
#    FLOPs, and read its speed against the device's peak or a timed matmul;
# 3. find NaNs and out-of-bounds indices in compiled code, and make random streams and whole
#    runs reproducible in both frameworks.

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
    "roof_size": (2048, 512),  # matmul side for the roofline on a CPU (section 2.1)
    "roof_accel": (8192, 4096),  # the same on an accelerator
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

from course_utils import claims, config, contention, data, peaks, plots, profiles, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch_dev, jax_dev = SETUP.pair()  # one kind of device for both frameworks
VERDICTS = {}  # every registered claim this lesson judges, for the table at the end
print(env.report().line())
if SETUP.alone_kind == SETUP.compared_kind:  # where they differ, env.setup printed the rule above
    print(SETUP.rule)

# %% [markdown]
# The lines above record the versions, each framework's device and the float32 precision
# settings. Comparisons between the frameworks run both on one device kind. What shows JAX
# alone, such as the roofline of section 2.1, runs on the accelerator when there is one.
#
# ## 1. Mixed precision
#
# **Key concepts**
# - float16 has 10 mantissa bits and a narrow range: its largest value is 65,504. bfloat16
#   keeps float32's 8-bit exponent and only 7 mantissa bits, 8 significant bits with the
#   implicit leading 1, so it rarely overflows but rounds coarsely.
# - PyTorch: `torch.autocast` is a mode. Inside it, matmul-like ops cast their inputs down,
#   delicate ops cast them up, and the parameters stay float32. `GradScaler` scales the loss
#   so that float16 gradients do not underflow.
# - Flax NNX has no mode. A layer's `dtype` is the dtype it computes in, `param_dtype` the
#   dtype it stores. Where float32 is needed, such as the loss, you cast.
#
# Why bother? Matrix units, such as NVIDIA's tensor cores and the TPU's MXU, multiply 16-bit
# inputs far faster than float32 ones: NVIDIA's A100 data sheet lists 19.5 TFLOP/s for
# float32 and 312 for bfloat16. 16-bit tensors also move half the bytes. Most CPUs have no
# such unit, so on a CPU this section is about *numerics*: what changes in the numbers when a
# step runs in 16 bits. First the formats, read from each framework's `finfo`.

# %%
# PyTorch: torch.finfo
finfo_torch = {
    name: torch.finfo(dt) for name, dt in
    [("float32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)]
}

# %%
# JAX: jnp.finfo (the same formats, from ml_dtypes)
finfo_jax = {name: jnp.finfo(jnp.dtype(name)) for name in ["float32", "bfloat16", "float16"]}

# %%
for name in finfo_torch:  # the same bits, largest value, smallest normal and epsilon in both
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
# Both frameworks describe the same three formats, as the cell asserts. bfloat16's range is
# float32's. float16 stops at 65,504, and its smallest normal is about 6e-5. The epsilon is
# the gap between 1 and the next number, so bfloat16 rounds 8 times coarser than float16.
#
# Three probes show what that means: 70,000 overflows float16, 1.001 rounds to 1 in
# bfloat16, and 1e-8 vanishes in float16 unless it is scaled up first.

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
# The 16-bit patterns agree bit for bit. Both frameworks round a cast to the nearest value
# the format holds, and a tie to the even one. So their mixed-precision results differ only
# in *which* values get rounded, and when.
#
# ### 1.1 Where each framework computes in 16 bits
#
# `torch.autocast` decides per op. Ops on its "lower precision" list, such as matmuls, cast
# their inputs down. Ops on its "float32" list cast them up. The rest run in their inputs'
# dtype. The lists differ per device type, so the cell asks this device's autocast. JAX has
# no lists: a layer computes in its `dtype`, and a function computes in its input's dtype.

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

# %%
assert str(dtypes_torch["linear"]).endswith("bfloat16") and dtypes_jax["linear"] == jnp.bfloat16
display(Markdown(
    f"| op, given bfloat16 | PyTorch autocast on {torch_dev.type} | JAX / Flax NNX |\n|---|---|---|\n"
    + "\n".join(f"| `{op}` | {str(dtypes_torch[op]).removeprefix('torch.')} | {dtypes_jax[op]} |" for op in dtypes_torch)
))
upcast = [op for op, dt in dtypes_torch.items() if dt == torch.float32]
print(f"autocast on {torch_dev.type} returned float32 for: {', '.join(upcast) or 'no op'}")

# %% [markdown]
# Both compute the linear layer in bfloat16, as the cell checks. The line under the table
# names the ops autocast upcast here. In those rows a JAX program must cast by hand, as
# `logits.astype(jnp.float32)` does before the loss below. Flax's normalisation layers are
# the exception: they compute their statistics in float32 whatever `dtype` says.
#
# Autocast also covers everything the `with` block calls on its thread, library code
# included. Flax's `dtype` belongs to each layer.
#
# ### 1.2 One model, trained in float32 and in bfloat16
#
# The model is a two-layer MLP on scikit-learn's 8×8 digits, trained with plain SGD. Both
# frameworks copy one set of initial weights drawn in NumPy and see one batch order, so
# their curves are comparable step by step. An MLP is nearly all matmul, which is where
# mixed precision acts.

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
# Both models give the same logits on the first batch. Note the transpose: `nn.Linear`
# stores its weight as (out, in), while `nnx.Linear` stores its kernel as (in, out). Next the
# training step in each framework.

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
# PyTorch wraps the forward in a mode, and autocast's float32 list upcasts the loss. JAX
# builds a model that computes in `dtype` and casts the logits itself. In both, the
# parameters and the update stay float32. The loops build a fresh model from `W0` and run
# one step per batch.

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


# %%
# PyTorch: float32 and bfloat16 autocast
curves_torch = {name: train_torch(dt, BATCHES)[0] for name, dt in [("float32", torch.float32), ("bfloat16", torch.bfloat16)]}

# %%
# JAX: float32 and bfloat16 compute (float32 parameters)
curves_jax = {name: train_jax(dt, BATCHES)[0] for name, dt in [("float32", jnp.float32), ("bfloat16", jnp.bfloat16)]}

# %%
assert_close(curves_torch["float32"][0], curves_jax["float32"][0], rtol=1e-6, atol=1e-6)  # the first loss
assert_close(curves_torch["float32"], curves_jax["float32"], rtol=1e-4, atol=1e-4)  # the whole curve
print(f"float32 curves: largest gap {np.abs(curves_torch['float32'] - curves_jax['float32']).max():.2e} over {S.steps} steps")

# %% [markdown]
# In float32 the two frameworks trace one curve, within the printed gap. So any gap between a
# bfloat16 run and its float32 curve comes from the 16-bit arithmetic. The figure plots that
# gap, each framework's bfloat16 loss minus its float32 loss.

# %%
gaps = {f"{fw}: bfloat16 − float32": c["bfloat16"] - c["float32"] for fw, c in [("PyTorch", curves_torch), ("JAX", curves_jax)]}
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.axhline(0, color="grey", linewidth=0.5)
plots.training_curves(gaps, ax=ax, ylabel="loss difference", title="the bfloat16 run's loss minus the float32 run's")
fig.tight_layout()

# %% [markdown]
# The gap comes from the forward and backward passes, where every matmul input is rounded to
# 8 significant bits. The optimiser is not the cause: the parameters and the update are
# float32 in all four runs. The next cell gives the gap's size next to the loss.

# %%
for fw, c in [("PyTorch", curves_torch), ("JAX", curves_jax)]:
    print(f"{fw}: the bfloat16 loss stays within {np.abs(c['bfloat16'] / c['float32'] - 1).max():.2%} "
          f"of the float32 loss over {S.steps} steps")


# %% [markdown]
# **Why the parameters stay float32.** An SGD update `lr * g` is usually far smaller than the
# parameter it changes. bfloat16 keeps 8 significant bits, so the gap between a parameter and
# its neighbour is 2⁻⁸ to 2⁻⁷ of its size. An update smaller than half that gap rounds away:
# `p - lr * g == p`. The cell below counts how often that happens. It trains the MLP in
# bfloat16 four times: at two learning rates, with the parameters *stored* in bfloat16 and
# with float32 master weights. The rounding belongs to the dtype, not to a framework, so one
# framework is enough. The model is written as plain functions of a parameter dict.

# %%
# JAX: SGD with parameters stored in bfloat16, or float32 master weights; compute in bfloat16
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


STORAGE_LRS = (LR, LR / 10)  # section 1.2's rate, and a fine-tuning-sized one
storage_jax = {(name, lr): train_storage_jax(dt, lr, BATCHES) for lr in STORAGE_LRS
               for name, dt in [("bfloat16", jnp.bfloat16), ("float32", jnp.float32)]}

# %%
tail = max(1, min(10, S.steps // 3))  # the loss at the end: the mean of the last steps
rows = []
for lr in STORAGE_LRS:
    (c16, lost16), (c32, lost32) = storage_jax["bfloat16", lr], storage_jax["float32", lr]
    drop16, drop32 = c16[0] - c16[-tail:].mean(), c32[0] - c32[-tail:].mean()
    rows.append(f"| {lr:g} | {100 * lost16:.0f} % | {100 * lost32:.2g} % | "
                + (f"{100 * drop16 / drop32:.0f} % |" if drop32 > 0 else "float32 did not lower it |"))
display(Markdown("| lr | updates lost, bfloat16 storage | updates lost, float32 | "
                 "loss drop, bfloat16 storage as a share of float32's |\n|---:|---:|---:|---:|\n" + "\n".join(rows)))

# %% [markdown]
# An update is lost when it leaves its nonzero-gradient parameter unchanged. The last
# column compares how far the loss fell with bfloat16 storage and with float32 master
# weights. A smaller rate puts more updates under the rounding gap. The large updates
# survive, so many lost updates can cost little of the loss drop. But a parameter meant to
# drift slowly, by many small updates, does not move.
#
# This is why autocast leaves the parameters float32 and NNX separates `param_dtype` from
# `dtype`. A forward pass's rounding errors are made afresh at every step, while an update
# rounded away is lost for good. The same holds for an optimiser's moments kept in 16 bits.
#
# ### 1.3 float16 and loss scaling
#
# float16 rounds finer than bfloat16, but its smallest normal number is 6e-5, and small
# gradients can be smaller. Below it float16 keeps fewer and fewer bits, the subnormals, and
# below about 3e-8 a value becomes 0, as the probe's 1e-8 did. `torch.amp.GradScaler`
# multiplies the loss by a large factor, 65,536 at first, so that the float16 gradients land
# in range. It divides them back in float32 before the optimiser step, and skips the step
# when it finds an inf or NaN. Gradients usually shrink as the loss falls, so float16
# without a scaler can look fine for a while and then stall. bfloat16 shares float32's
# smallest normal and needs no scaler.
#
# JAX has no `GradScaler`: you write the same lines, or use a library such as DeepMind's
# `jmp`. The next cells take one step with loss scaling in each framework, on the first
# batch.

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
@nnx.jit
def scaled_grads_jax(model, x, y, scale):  # the gradient of loss × scale
    return nnx.grad(lambda m: loss_jax(m, x, y) * scale)(model)


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

# %% [markdown]
# The two float16 gradients agree within 2 % of the largest float32 entry, and the updated
# weights within 2 % of the largest update, as the cell asserts. `GradScaler` halves its
# scale after a step that found an inf or NaN, and doubles it after 2,000 finite steps in a
# row (`growth_interval`). The JAX cell's `if finite:` runs in Python, because only the
# gradient is jitted here. Inside a jitted step you write it with `jax.lax.cond`, or wrap
# the optimiser in `optax.apply_if_finite`. Loss scaling is needed only for float16, which
# is why bfloat16 is the usual choice on TPUs and on NVIDIA GPUs since Ampere. PyTorch's
# CUDA autocast still defaults to float16, so pass `dtype=torch.bfloat16`.
#
# ### 1.4 The tensor-core claim
#
# "Mixed precision makes training faster" is a statement about matrix units. NVIDIA's tensor
# cores take float16 since Volta and bfloat16 since Ampere, compute capability 8.0. On such a
# GPU the cell times one square matmul in float32 and under bfloat16 autocast, then judges the
# registered claim. Elsewhere it says why it cannot.

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
else:
    VERDICTS["bf16-tensor-cores"] = claims.not_testable(
        "bf16-tensor-cores",
        f"this GPU (compute capability {cc[0]}.{cc[1]}) has no bfloat16 tensor cores, which NVIDIA's GPUs have "
        "since Ampere (8.0)" if cc is not None else
        f"the claim is about tensor cores, and this run's PyTorch computes on {torch_dev.type}, which has none",
    )
VERDICTS["bf16-tensor-cores"]

# %% [markdown]
# ## 2. Profiling: where the time of a step goes
#
# **Key concepts**
# - `torch.profiler.profile` records every operator PyTorch dispatches and every GPU kernel.
#   `prof.export_chrome_trace(path)` writes them as Chrome-trace JSON.
# - `jax.profiler.trace(folder, create_perfetto_trace=True)` records the compiled program's
#   ops and the Python around them. It writes `perfetto_trace.json.gz` under
#   `folder/plugins/profile/<run>/`.
# - Both files open in [Perfetto](https://ui.perfetto.dev). JAX's folder also opens in XProf,
#   OpenXLA's profile viewer: `pip install xprof`, then `xprof --logdir=FOLDER`.
# - FLOPs: `cost_analysis()` of a compiled JAX program reports what XLA counted.
#   `torch.utils.flop_counter.FlopCounterMode` counts PyTorch's matmul-like ops as they run.
#
# A profile answers "which ops does one step run, and how long does each take?" Eager
# PyTorch dispatches one operator at a time, so its trace lists every `aten::` call.
# `jax.jit` compiles the whole step into one XLA program of fused ops, so its trace lists far
# fewer, larger ops. Both traces below record the same float32 training step from section 1,
# after a warm-up call, into a temporary folder.

# %%
TRACE_DIR = Path(tempfile.mkdtemp(prefix="course-09-traces-"))
model_p_torch = MLPTorch(W0).to(torch_dev)
opt_p_torch = torch.optim.SGD(model_p_torch.parameters(), lr=LR)
model_p_jax = MLPNNX(W0, jnp.float32)
opt_p_jax = nnx.Optimizer(model_p_jax, optax.sgd(LR), wrt=nnx.Param)

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

# %%
# JAX: jax.profiler.trace around the same number of jitted steps -> perfetto_trace.json.gz
timing.sync(step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax))  # warm-up (and compile)
with contention.Monitor() as quiet_jax, jax.profiler.trace(str(TRACE_DIR / "jax"), create_perfetto_trace=True):
    for _ in range(S.profile_steps):
        timing.sync(step_jax(model_p_jax, opt_p_jax, xb_jax, yb_jax))
jax_trace = profiles.jax_trace_file(TRACE_DIR / "jax")  # the newest perfetto_trace.json.gz in it

# %%
assert_close(model_p_torch.fc1.weight.detach().T, model_p_jax.fc1.kernel[...], rtol=1e-5, atol=1e-6)
print(f"open in https://ui.perfetto.dev:\n  {torch_trace}\n  {jax_trace}")


# %% [markdown]
# `profiles.torch_profile` is `torch.profiler.profile` without a banner that Kineto prints.
# The parity cell checks that both models still hold the same weights, so the traces
# recorded the same computation. Drag either file into Perfetto to see each thread's ops on
# a timeline. In the PyTorch file the Python thread carries nested slices, such as
# `aten::linear` around the `aten::addmm` it calls. In the JAX file the Python thread shows
# the jitted call. The XLA runtime's threads, one or more, show a slice per compiled op. On a
# CPU each slice ends in a sliver named `end: <op>`, which the tables below leave out.
#
# <details><summary>More on recording and reading traces</summary>
#
# - To mark steps in a long recording, wrap each step in `torch.profiler.record_function("step")`
#   or `jax.profiler.StepTraceAnnotation("step", step_num=i)`.
# - On a GPU, kernels run asynchronously: the host's slices show how long an op took to
#   launch, and the device rows show how long it ran. PyTorch's backward pass then runs on a
#   per-device autograd thread, a row of its own.
# </details>
#
# The cells below read the files back. Each file holds a list of events, and each op call
# is a complete event, `"ph": "X"`, with a start `ts` and a duration `dur` in microseconds.
# The first lines pick the op events: PyTorch files them under the category `cpu_op`, or
# `kernel` for a GPU, and XLA tags each compiled op with `args.hlo_op`.
# `profiles.top_ops` then sums each op's *self* time, its duration less that of the ops
# nested inside it.

# %%
# PyTorch: the top ops of the eager step, per step
def is_torch_op(e):  # an operator, or a GPU kernel
    return e.get("cat") in ("cpu_op", "kernel", "gpu_op")


events_torch = profiles.load_events(torch_trace)  # the file's "traceEvents"
top_torch = profiles.top_ops(events_torch, is_torch_op, n=8)
display(Markdown(profiles.markdown(top_torch, "PyTorch op", S.profile_steps)))
print("recorded while", quiet_torch.result.text())


# %%
# JAX: the top ops of the compiled step, per step
def is_xla_op(e):  # an op of the compiled program
    return "hlo_op" in (e.get("args") or {})


events_jax = profiles.load_events(jax_trace)
top_jax = profiles.top_ops(events_jax, is_xla_op, n=8)
display(Markdown(profiles.markdown(top_jax, "XLA op", S.profile_steps)))
print("recorded while", quiet_jax.result.text())

# %%
ops_per_step = {fw: profiles.op_calls(events, keep) / S.profile_steps
                for fw, events, keep in [("PyTorch eager", events_torch, is_torch_op), ("JAX jit", events_jax, is_xla_op)]}
fused = sorted({e["name"] for e in events_jax if is_xla_op(e) and "fusion" in e["name"]})
print("op events per step: " + ", ".join(f"{fw} {n:g}" for fw, n in ops_per_step.items()))
print(f"XLA fusions in the step ({len(fused)}): {', '.join(fused)}")

# %% [markdown]
# The PyTorch step runs every operator the Python code names, one at a time: the forward's
# `addmm` and `relu`, the loss, their backward ops and SGD's in-place updates. The JAX step is
# one program of matmuls, a few unfused ops and *fusions*. A fusion merges a chain of
# elementwise work, such as the bias add and ReLU, into one loop, and its name usually lists
# the ops it swallowed. On a CPU, recent XLA hands some matmuls and reductions to the
# YNNPACK library, as `ynn_fusion`, a name that says nothing. A matmul it does not take
# keeps the name `dot`. The compiled program's text, `compiled.as_text()`, shows what each
# fusion computes. Fewer, fused ops mean fewer passes over memory and no Python between
# them. That is what `jit` buys a step like this, and what `torch.compile` does for PyTorch.
#
# Which op tops each table is a fact about this recording, not about the step: small ops
# trade places between runs, and busy cores stretch any of them. The op counts and the fusion
# list come from the program, not the clock.
#
# ### 2.1 Counting FLOPs, and reading them against the peak
#
# A profile says where time went; a FLOP count says how much arithmetic there was. JAX asks
# the compiler: `cost_analysis()` of the compiled program, after XLA's optimisations. PyTorch
# counts as it runs: `FlopCounterMode` intercepts matmuls, convolutions and attention, and
# nothing else. Both count a multiply-add as 2 FLOPs. By hand, the MLP's forward on a batch of
# $B$ examples costs $2B(64H + 10H)$ FLOPs for its two matmuls.

# %%
# PyTorch: FlopCounterMode around the forward, and around forward + backward
B = S.batch_size
with FlopCounterMode(display=False) as fc_fwd:
    model_p_torch(xb_torch)
with FlopCounterMode(display=False) as fc_train:
    F.cross_entropy(model_p_torch(xb_torch), yb_torch).backward()
flops_torch = {"forward": fc_fwd.get_total_flops(), "forward + backward": fc_train.get_total_flops()}

# %%
# JAX: XLA's cost analysis of the compiled forward, and of the compiled gradient
graphdef, params = nnx.split(model_p_jax)
fwd = jax.jit(lambda p, x: nnx.merge(graphdef, p)(x))
grad_fn = jax.jit(jax.grad(lambda p, x, y: loss_jax(nnx.merge(graphdef, p), x, y)))
flops_jax = {
    "forward": fwd.lower(params, xb_jax).compile().cost_analysis()["flops"],
    "forward + backward": grad_fn.lower(params, xb_jax, yb_jax).compile().cost_analysis()["flops"],
}

# %%
H = S.hidden
analytic = {"forward": 2 * B * (64 * H + H * 10), "forward + backward": 2 * B * (64 * H + H * 10) + 2 * B * (64 * H + 2 * H * 10)}
for k in analytic:
    assert flops_torch[k] == analytic[k], k
    assert analytic[k] <= flops_jax[k] <= 1.05 * analytic[k], k  # XLA adds the elementwise ops
display(Markdown("| FLOPs | by hand (matmuls) | `FlopCounterMode` | `cost_analysis` | XLA extra |\n|---|---:|---:|---:|---:|\n" + "\n".join(
    f"| {k} | {analytic[k]:,} | {flops_torch[k]:,} | {flops_jax[k]:,.0f} | {flops_jax[k] - analytic[k]:+,.0f} |" for k in analytic)))

# %% [markdown]
# `FlopCounterMode` matches the hand count exactly, because matmuls are all it counts. XLA's
# count is a little larger, by at most 5 %, as the cell asserts. It also counts the bias adds
# and the ReLU, and in the gradient program the softmax and their gradients. The backward's
# hand count holds both weight gradients and the second layer's input gradient; nobody needs
# the gradient of the data. A paper's "model FLOPs" means the matmul count. XLA's FLOPs mean
# everything the compiled program executes.
#
# A FLOP count becomes a speed reading when it is divided by the time and compared with the
# device's peak. `cost_analysis()` also counts the bytes a program reads and writes, and
# FLOPs ÷ bytes is its *arithmetic intensity*. The device's *ridge point* is its peak FLOP/s
# ÷ its memory bandwidth: for a TPU v5e, 197 TFLOP/s ÷ 819 GB/s, about 240 FLOPs per byte. A
# program below the ridge point waits for memory, and at best reaches the bandwidth times
# its intensity. Above it, it waits for compute. The next cell does this arithmetic for JAX
# alone on `SETUP.jax_alone`, in the device's fastest listed dtype. `course_utils.peaks` gives
# the published peak. A CPU has none, so the cell times a matmul and reads against that rate.

# %%
# JAX alone on SETUP.jax_alone: FLOPs and bytes from XLA, the time measured, read against the peak
with contention.Monitor() as quiet:  # a CPU's rate is timed now, on these cores
    top = peaks.peak(SETUP.jax_alone) or peaks.measure_cpu(device=SETUP.jax_alone)
    dt = "bfloat16" if top.flops("bfloat16") else "float32"
    ridge = top.flops(dt) / top.bytes_per_s  # FLOPs per byte
    n = S.roof_size if SETUP.alone_kind == "cpu" else S.roof_accel  # an accelerator needs more work to fill
    graphdef_r, params_r = nnx.split(MLPNNX(W0, jnp.dtype(dt)))
    a_r = jax.random.normal(jax.random.key(0), (n, n), dt)
    programs = {"MLP gradient": (jax.jit(jax.grad(lambda p, x, y: loss_jax(nnx.merge(graphdef_r, p), x, y))), (params_r, xb_jax, yb_jax)),
                f"{n}² matmul": (jax.jit(jnp.matmul), (a_r, a_r)), "empty call": (jax.jit(lambda x: x + 1), (jnp.float32(0),))}
    rows, seconds, over = [], {}, False
    for name, (fn, args) in programs.items():
        args = jax.device_put(args, SETUP.jax_alone)
        compiled = fn.lower(*args).compile()
        cost = compiled.cost_analysis()  # a dict: "flops", "bytes accessed", ...
        seconds[name] = timing.bench(compiled, *args, label=name).median
        intensity = cost["flops"] / cost["bytes accessed"]
        share = cost["flops"] / seconds[name] / top.flops(dt)
        over |= share > 1 or cost["bytes accessed"] / seconds[name] > top.bytes_per_s  # above the yardstick
        bound = "—" if name == "empty call" else "compute" if intensity >= ridge else "memory"
        rows.append(f"| {name} | {timing.format_seconds(seconds[name])} | {intensity:.3g} | {bound} | {100 * share:,.1f} % |")
yardstick = "the timed matmul's" if top.measured else "peak"  # a measured rate is no peak
display(Markdown(f"| JAX alone on {SETUP.alone_kind}, {dt} | time a call | FLOPs per byte | bound by | share of {yardstick} FLOP/s |\n"
                 "|---|---:|---:|---|---:|\n" + "\n".join(rows)))
print(f"read against {top.label(dt)}: {top.flops(dt) / 1e9:,.0f} GFLOP/s, {top.bytes_per_s / 1e9:,.0f} GB/s, "
      f"ridge point {ridge:.3g} FLOPs per byte; {top.source}")
if top.measured and (over or quiet.result.contended):
    print("the shares, the ridge point and the 'bound by' column are not usable in this run")
floor = seconds["MLP gradient"] / seconds["empty call"]
print(f"the MLP gradient took {floor:.1f}× the empty call, {'far above' if floor > 10 else 'not far above'} "
      f"that floor; recorded while {quiet.result.text()}")

# %% [markdown]
# The "bound by" column is arithmetic, not an observation: it compares each intensity with
# the ridge point. The MLP's gradient does few FLOPs per byte. A large matmul reuses every
# number it loads many times, so it does far more and can reach a far larger share. The
# empty call is the floor every call pays, to start the program and wait for its result. A
# step not far above it cannot keep an accelerator busy; give each call more work, a larger
# batch or several steps at once.
#
# On a CPU both rates are timed now, not published, and busy cores time them too low. A
# line under the table then says that the shares, the ridge point and the "bound by" column
# are not usable.
#
# ## 3. Debugging compiled code
#
# **Key concepts**
# - NaNs: `jax.debug_nans(True)` re-runs a jitted function op by op when its output has a NaN
#   and raises at the op that made it. `checkify` returns the error as a value from inside
#   `jit`. PyTorch's `torch.autograd.detect_anomaly()` names the backward op that made a NaN.
# - Out-of-bounds indices: JAX clamps reads and drops writes silently. PyTorch raises an
#   `IndexError` on a CPU; on a GPU a bad id in a tensor of ids trips a device-side assert.
#
# Compiled code is hard to debug for the same reason in both frameworks: the Python you wrote
# is not what runs. Printing inside it, graph breaks and a Python `if` on a tracer were lesson
# 03's sections 7.1 and 5.1. This section takes the errors that stay silent.
#
# ### 3.1 NaN hunting
#
# The classic NaN is the norm written as `sqrt(sum(z²))`. Its value at z = 0 is fine, but its
# gradient there is 0 / 0. The loss below is the mean norm of the rows of `x @ w`, and the
# batch's first row is zero.

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
# Both gradients are NaN everywhere, and nothing complained. The parity check treats NaN as
# equal to NaN in the same place. A training step would now write NaN into every weight. So
# ask each framework where the NaN was born. `expect_error` prints each error in a line, and
# fails the cell if the error does not happen.

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
# PyTorch names the backward node that returned NaN, and its warning names the forward line
# that recorded it. JAX names the primitive whose output was NaN when it re-ran the gradient op
# by op. The square root's backward returns an infinity, and the NaN appears a little later,
# where the square's backward multiplies it by 2z = 0. PyTorch calls that node
# `PowBackward0`; JAX calls the op `mul`.
#
# Keep both modes for debugging. Anomaly mode saves a Python stack for every forward op, so
# it slows every op. `debug_nans` checks each jitted call's outputs, re-runs the function op
# by op only when it finds a NaN, and then stops the run.
#
# `checkify` works *inside* compiled code, without a re-run. It rewrites the function to
# return an error value beside its output. PyTorch's habit is to check the result after the
# fact.

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
# The fix is the same in both frameworks: never differentiate `sqrt` at 0. The "double
# `where`" feeds the root a harmless 1 where the sum is 0, then selects 0 there. The outer
# `where` picks the value; the inner one keeps the untaken branch's gradient finite.

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
# The library norms differ here, a sharp bit of its own. The next cell differentiates each
# framework's norm at the zero vector.

# %%
# PyTorch and JAX: the library norm's gradient at the zero vector
zero_torch = torch.zeros(3, requires_grad=True)
torch.linalg.vector_norm(zero_torch).backward()
norm_grad_jax = jax.grad(jnp.linalg.norm)(jnp.zeros(3))
print("torch.linalg.vector_norm:", zero_torch.grad.tolist())
print("jnp.linalg.norm:         ", norm_grad_jax.tolist())
assert not bool(zero_torch.grad.any()) and bool(jnp.isnan(norm_grad_jax).all())

# %% [markdown]
# `torch.linalg.vector_norm` returns 0 as its gradient at 0, a valid subgradient, so a loss
# built on it needs no fix. `jnp.linalg.norm` is differentiated as written and gives NaN,
# so in JAX the double `where` stays necessary. The `assert` stops the notebook if a release
# changes either.
#
# A last resort in both frameworks is to run without compiling, with `jax.disable_jit()` or
# `torch.compiler.disable`, as in lesson 03. When a compiled PyTorch model disagrees with
# eager mode, compile it with `backend="eager"`, then `"aot_eager"`, then the default. The
# first backend that disagrees names the stage at fault.
#
# ### 3.2 Out-of-bounds indexing: clamped in JAX, an error in PyTorch
#
# An index past the end cannot raise inside a compiled XLA kernel. So JAX defines the result:
# a read clamps the index to the last valid one, and a write is dropped. The same line in
# PyTorch raises. The JAX cell comes first, because it is the one that does *not* fail.

# %%
# JAX: index 10 of a length-5 array reads the last element; a write to index 10 is dropped
v_jax = jnp.arange(5.0)
read_jax, written_jax = v_jax[10], v_jax.at[10].set(99.0)
assert read_jax == v_jax[-1] and bool((written_jax == v_jax).all())  # clamped read, dropped write
read_jax, written_jax

# %%
# PyTorch: the same index on a CPU tensor is an IndexError
v_torch = torch.arange(5.0)
with expect_error(IndexError):
    v_torch[10]

# %% [markdown]
# JAX returned the last element and an unchanged array, silently, even without `jit`. To say
# what should happen, read with `.at[i].get(mode="fill", fill_value=...)`, or turn the
# out-of-bounds read into an error value with `checkify`'s `index_checks`.

# %%
err_index, _ = jax.jit(checkify.checkify(lambda v, i: v[i], errors=checkify.index_checks))(v_jax, 10)
assert err_index.get() is not None
v_jax.at[10].get(mode="fill", fill_value=jnp.nan), err_index.get().splitlines()[0]

# %% [markdown]
# That is how a mis-sized embedding table can train in JAX without an error. The next cell
# looks up ids 1 and 7 in a table of 4 rows in three ways.

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
# `nnx.Embed` printed NaN for id 7, because it looks rows up with `jnp.take`, which fills an
# out-of-bounds row with NaN. Plain indexing printed the last row, the clamp. PyTorch raised.
# Neither JAX lookup names the bad id, so check the ids where the batches are built:
# `assert ids.max() < vocab_size, ids.max()`.
#
# ## 4. Randomness and determinism
#
# **Key concepts**
# - PyTorch draws from a global generator seeded by `torch.manual_seed`. JAX draws from
#   explicit keys with the counter-based threefry generator. The same seed gives different
#   numbers in the two.
# - To get the same dropout masks in both, draw them in one place and feed them to both.
# - `torch.use_deterministic_algorithms(True)` makes PyTorch pick deterministic kernels. XLA
#   is deterministic on a CPU or TPU, and a flag asks the same of its GPU backend.
# - Per-rank streams: `jax.random.fold_in(key, rank)` in JAX; in PyTorch, a generator per rank
#   seeded from NumPy's `SeedSequence`.
#
# A bug that appears in one run must appear in the next. Two frameworks can only be compared
# when they use the same random numbers.
#
# ### 4.1 One seed, two masks
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
# Compare the printed agreement with what two independent masks give. The generators are
# different algorithms, so a shared seed gives unrelated masks.
#
# PyTorch's generator is a stateful object. Each call advances a hidden state, so an extra
# `torch.rand` in a logging line changes every later mask. JAX's threefry turns a key and a
# counter into bits, with no hidden state. `split` and `fold_in` derive new keys, and code
# passes them around explicitly.
#
# Flax NNX brings some state back. `nnx.Rngs` holds a key and a counter per stream, and
# `nnx.Dropout` keeps its own stream as layer state. Each call advances the counter, so the
# same layer called again draws a new mask.

# %%
# JAX: the same nnx.Dropout called again draws a new mask; its counter is layer state
mask_again_jax = dropout_jax(jnp.ones((16, 64))) != 0
rng_state = nnx.to_pure_dict(nnx.state(dropout_jax))["rngs"]
agree_again = float((mask_again_jax == mask_jax).mean())
print(f"second call: {agree_again:.1%} of positions agree with the first; "
      f"the layer's counter now reads {int(rng_state['count'])}")
assert 0.4 < agree_again < 0.6  # a new mask: about half the positions agree, as for independent masks

# %% [markdown]
# The second mask agrees with the first on about half the positions, as the cell asserts.
# The counter lives in `nnx.state(dropout_jax)`, as a model's parameters do, so it can be
# read, saved and restored. To replay dropout exactly, restore that state. To compare two
# frameworks, draw the masks once in NumPy and apply `h * mask / (1 - p)` in each; a real
# model uses the framework's own dropout.
#
# ### 4.2 Deterministic algorithms and per-rank seeds
#
# `torch.use_deterministic_algorithms(True)` switches the whole process to deterministic
# kernels, and an op without one raises. On CUDA it also needs `CUBLAS_WORKSPACE_CONFIG=:4096:8`
# in the environment. JAX has no switch to flip from Python. XLA is deterministic on a CPU or
# TPU, and `XLA_FLAGS=--xla_gpu_deterministic_ops=true`, set before JAX starts, asks the same
# on a GPU. The JAX cell prints `jax_threefry_partitionable`. When it is on, a sharded random
# array gets the same values however it is sharded; it is on by default since jax 0.5.
#
# <details><summary>The full PyTorch recipe on a GPU</summary>
#
# Add `torch.backends.cudnn.benchmark = False`, since autotuning may pick a different
# convolution algorithm in each run. Seed every source of randomness, DataLoader workers
# included, with `generator=` and `worker_init_fn`. PyTorch's notes warn that deterministic
# ops are often slower; this lesson does not measure it. The switch also fills
# uninitialised memory with NaN, an extra write.
# </details>

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
# In data-parallel training every rank needs its own dropout stream, the same in every rerun.
# `fold_in(key, rank)` derives each rank's key from one base key. The common PyTorch habit,
# `torch.manual_seed(seed + rank)`, gives seed 0's rank 1 the stream of seed 1's rank 0.
# Seeding each rank's generator from `SeedSequence(seed).spawn(n)` avoids it, because NumPy
# hashes the seed and the child's index together.

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
# Each framework's ranks draw distinct numbers, and rebuilding the generators draws the same
# ones. JAX's first two ranks get the same keys whether there are 4 ranks or 2. The last line
# shows the `seed + rank` trap. The two frameworks' numbers differ from each other, as in
# 4.1; what matches is the recipe.
#
# ### 4.3 Two runs, the same bytes
#
# The cells train twice from the same seed and data in each framework. They compare the loss
# curves and every final weight as raw bytes, with no tolerance.

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
if SETUP.compared_kind == "cpu":  # expected on a CPU (same threads, versions, inputs): checked
    assert same_torch and same_jax
for fw, same, runs in [("PyTorch", same_torch, repro_torch), ("JAX", same_jax, repro_jax)]:
    print(f"{fw} on {SETUP.compared_kind}: two runs of {len(runs[0]):,} bytes each, {'identical' if same else 'different'}")

# %% [markdown]
# On a CPU the cell asserts that both runs match, since the threads, versions and inputs are
# the same. On a GPU it only reports, because its kernels may sum in a different order each
# run unless the settings of section 4.2 are made. Nothing promises that the two frameworks
# reproduce *each other* bit for bit, so the course compares them with tolerances.
#
# ## Summary
#
# | task | PyTorch | JAX / Flax NNX |
# |---|---|---|
# | 16-bit compute, float32 weights | `with torch.autocast(device, dtype=torch.bfloat16):` | `nnx.Linear(..., dtype=jnp.bfloat16, param_dtype=jnp.float32)` |
# | keep the loss in float32 | autocast's float32 op list | `logits.astype(jnp.float32)` by hand |
# | float16 loss scaling | `torch.amp.GradScaler` | scale the loss, unscale the grads, or `jmp` |
# | format limits | `torch.finfo` | `jnp.finfo` |
# | record a trace | `torch.profiler.profile` → `export_chrome_trace` | `jax.profiler.trace(dir, create_perfetto_trace=True)` |
# | view it | Perfetto | Perfetto, or XProf |
# | count FLOPs | `FlopCounterMode`, matmul-like ops | `jit(f).lower(...).compile().cost_analysis()`, everything XLA runs |
# | speed against the peak | FLOPs ÷ time ÷ peak, or a timed matmul's rate | FLOPs and bytes from `cost_analysis()`, against the ridge point |
# | find a NaN | `torch.autograd.detect_anomaly()` | `jax.debug_nans(True)`, `checkify` |
# | out-of-bounds index | an error, `IndexError` on a CPU | clamped read, dropped write; `mode="fill"`, `checkify.index_checks` |
# | seeding | `torch.manual_seed`, `torch.Generator` | `jax.random.key`, `split`, `fold_in` |
# | per-rank streams | a generator per rank from `SeedSequence(seed).spawn(n)` | `fold_in(key, rank)` |
# | determinism | `torch.use_deterministic_algorithms(True)` | deterministic on CPU and TPU; `--xla_gpu_deterministic_ops` |
#
# ### Popular claims vs what you measured
#
# The tensor-core claim of section 1.4, judged on a GPU with bfloat16 tensor cores and
# elsewhere given the reason it was not.

# %%
display(Markdown(
    "| claim | stated | verdict | why |\n|---|---|---|---|\n"
    + "\n".join(f"| {v.claim.text} | {v.claim.claimed} | **{v.verdict}** | {v.line() if v.stats else v.explanation} |"
                for v in VERDICTS.values())
))

# %% [markdown]
# **Common misconceptions** (each corrected by a cell above)
# - *"bfloat16 is a shorter float16."* It trades mantissa for exponent: float32's range, an
#   eighth of float16's precision, and no need for loss scaling (section 1).
# - *"Mixed precision stores the weights in 16 bits."* Both recipes keep float32 parameters
#   and a float32 update; only the compute is 16-bit. Section 1.2 counted what bfloat16
#   storage loses.
# - *"JAX checks array bounds like NumPy."* It clamps reads and drops writes silently, even
#   without `jit` (3.2).
# - *"The same seed gives the same random numbers in both frameworks."* The generators
#   differ; share the masks, not the seeds (4.1).
# - *"A NaN gradient means a NaN loss."* `sqrt(sum(z²))` has a finite value and a NaN gradient
#   at a zero vector; only a check on the gradient finds it (3.1).
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick an answer and press *Check*, or
# open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("09_numerics_and_tools")

# %% [markdown]
# **Exercises.** `exercises/09_numerics_and_tools_exercises.ipynb`: a bfloat16-safe
# cross-entropy, the FLOPs of an MLP's training step, the first step with a non-finite
# gradient, per-rank keys, and a top-ops summary of a trace.
