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
# # 00 · Welcome and setup
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/00_welcome_and_setup.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/00_welcome_and_setup.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/00_welcome_and_setup.ipynb)
#
# This course teaches JAX and PyTorch **side by side**: every idea appears as a PyTorch
# cell, the mirrored JAX cell, and a cell that proves the two computed the same thing.
#
# **Learning objectives.** After this notebook you can
# 1. read the environment report and say which device each framework will use;
# 2. explain the course's conventions: mirrored pairs, parity cells, smoke mode, exercises;
# 3. time JAX and PyTorch code honestly: synchronise, separate compile from steady state,
#    and compare variants only after proving they agree.

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
    "n": (2000, 500),  # matrix side for the async-dispatch demo
    "mlp_width": (1024, 256),  # width of the compiled function
}

# %%
from course_utils import env

SETUP = env.setup()  # first: JAX's GPU memory policy, JAX before PyTorch, float32 in both

import jax
import jax.numpy as jnp
import numpy as np
import torch

from course_utils import claims, config, timing
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())

# %% [markdown]
# ## 1. Your environment
#
# **Key concepts**
# - Each framework finds devices on its own: `jax.devices()` and `torch.cuda.is_available()`.
# - `course_utils.env` picks a GPU or TPU when present and says when PyTorch has to fall back.
# - Thread counts and matmul precision change timings, so the report records them.
# - `env.setup()`, the first line of every lesson, prepares both frameworks before either
#   touches a device: JAX does not grab most of the GPU's memory (PyTorch needs room), JAX
#   starts before PyTorch (so it loads its own CUDA libraries), and both compute float32
#   matmuls and convolutions in full float32 (GPUs default to TF32 in some of them, which
#   would break parity checks at float32 tolerances).

# %%
report = env.report()
report

# %% [markdown]
# The course picks devices the same way in every lesson. JAX uses its default backend
# (a GPU or TPU when one is present). PyTorch uses CUDA when present; on a TPU machine it
# stays on the CPU (no lesson is written for `torch_xla`), and says so.
#
# Anything that *compares* the two frameworks runs both on one device kind: a GPU-vs-CPU
# ratio measures the devices, not the frameworks. `SETUP.pair()` gives that pair: both
# accelerators when both frameworks have one, otherwise both CPUs. `timing.compare`
# records where each variant computed and warns when they differ.

# %%
print("PyTorch's device:", env.torch_device(verbose=False), "| JAX's device:", env.jax_device())
torch_dev, jax_dev = SETUP.pair()  # for comparisons: one device kind for both
print("comparisons run on:", torch_dev, "and", jax_dev)
assert env.device_kind(torch_dev) == env.device_kind(jax_dev)

# %% [markdown]
# ## 2. How the course works
#
# **Key concepts**
# - **Pairs**: a PyTorch cell, the mirrored JAX cell with the same names and data, then a parity cell.
# - **Parity cells** use `assert_close`, which names the leaf that differs and by how much.
# - **Smoke mode** (`COURSE_SMOKE=1`) shrinks the sizes in the `parameters` cell; the code path stays the same.
# - **Exercises** live in `exercises/`; each check cell tells you what is wrong, or that a stub is "not implemented yet".
#
# Here is the pattern on the smallest possible example: a softmax over the same numbers.

# %%
x_np = np.linspace(-3, 3, 7, dtype=np.float32)

# PyTorch
x = torch.from_numpy(x_np)
probs_torch = torch.softmax(x, dim=0)
probs_torch

# %%
# JAX
x = jnp.asarray(x_np)
probs_jax = jax.nn.softmax(x, axis=0)
probs_jax

# %%
# Parity: same inputs, same result (within float32 rounding).
assert_close(probs_torch, probs_jax, rtol=1e-6, atol=1e-7, name="softmax")
print("softmax agrees")

# %% [markdown]
# When two results differ, `assert_close` says where. This cell compares against a
# deliberately wrong answer to show the message (it is tagged `raises-exception`).

# %% tags=["raises-exception"]
assert_close(probs_torch, probs_jax * 1.01, name="softmax")

# %% [markdown]
# ## 3. Timing discipline
#
# **Key concepts**
# - JAX **dispatches asynchronously**: a call returns as soon as the work is queued, on CPU too.
#   A timer that does not wait for the result measures the queueing, not the work.
# - The **first call** of a compiled function pays for tracing and compiling; later calls do not.
# - Compare variants **after** proving they compute the same thing, timed interleaved, with median and IQR.
#
# ### 3.1 The sharp bit: timing without synchronising
#
# The natural code: Python's `timeit` on a function that returns a JAX matmul.

# %%
import timeit

a = jax.random.normal(jax.random.key(0), (S.n, S.n))
matmul = jax.jit(lambda a: a @ a)
matmul(a).block_until_ready()  # compile outside the timer

naive_s = min(timeit.repeat(lambda: matmul(a), number=5, repeat=5)) / 5
print(f"timeit says one {S.n}x{S.n} matmul takes {timing.format_seconds(naive_s)}")

# %% [markdown]
# That number is how long it takes to *queue* the matmul. `timing.bench` waits for every
# output (`block_until_ready` on each jax array, the accelerator's synchronise for torch)
# inside the timed region:

# %%
synced = timing.bench(matmul, a, label="jit matmul, synchronised")
print(synced)
print(f"the naive timer reported {naive_s / synced.median:.3f}x the real time")

# %% [markdown]
# PyTorch, the same experiment. On a CPU, PyTorch's operations finish before they return, so
# the naive timer and the synchronised one should agree; on a GPU, PyTorch queues kernels
# exactly as JAX does, and `timing.bench` calls the device's `synchronize` for it. The line
# below says which device PyTorch used here:

# %%
# PyTorch
a_t = torch.randn(S.n, S.n, device=torch_dev)
torch_naive_s = min(timeit.repeat(lambda: a_t @ a_t, number=5, repeat=5)) / 5
torch_synced = timing.bench(lambda: a_t @ a_t, label="torch matmul, synchronised")
print(torch_synced)
print(f"PyTorch on {torch_dev.type}: the naive timer reported {torch_naive_s / torch_synced.median:.3f}x "
      "the synchronised time")

# %% [markdown]
# With the matrix multiply actually finished, a float32 matmul of this size costs
# `2 n³` flops; the synchronised number is the one that matches that work.

# %%
gflops = 2 * S.n**3 / synced.median / 1e9
print(f"{gflops:.1f} GFLOP/s on this machine (synchronised); "
      f"the naive timer would claim {2 * S.n**3 / naive_s / 1e9:.0f} GFLOP/s")

# %% [markdown]
# ### 3.2 First call vs steady state
#
# A small MLP layer, the same function in both frameworks. First prove they agree.

# %%
W_np = np.random.default_rng(0).standard_normal((S.mlp_width, S.mlp_width)).astype(np.float32)
X_np = np.random.default_rng(1).standard_normal((64, S.mlp_width)).astype(np.float32)

# PyTorch
W, X = torch.from_numpy(W_np), torch.from_numpy(X_np)

def layer_torch(X, W):
    return torch.tanh(X @ W).sum(dim=1)

out_torch = layer_torch(X, W)

# %%
# JAX
W, X = jnp.asarray(W_np), jnp.asarray(X_np)

def layer_jax(X, W):
    return jnp.tanh(X @ W).sum(axis=1)

out_jax = layer_jax(X, W)

# %%
assert_close(out_torch, out_jax, rtol=1e-4, atol=1e-4, name="layer")
print("both layers agree")

# %% [markdown]
# `compile_report` times the stages separately. For `jax.jit` it uses the ahead-of-time
# API (trace → lower → compile), then clears the cache and times a real first call.
# After that first call it times the compiled function and the eager one (the same
# Python function, not compiled) in the same interleaved rounds, as `compare` does in
# section 3.3: timed one after the other, a burst of load in between would land on one
# of them only. The line under the table says whether the machine was quiet meanwhile.

# %%
jax_report = timing.compile_report(
    jax.jit(layer_jax), jax.device_put(X_np, jax_dev), jax.device_put(W_np, jax_dev)
)
jax_report

# %% [markdown]
# For `torch.compile`, Dynamo captures the graph and Inductor generates code on the first
# call. The report also counts graphs and recompilations.

# %%
torch_report = timing.compile_report(
    torch.compile(layer_torch), torch.from_numpy(X_np).to(torch_dev), torch.from_numpy(W_np).to(torch_dev)
)
torch_report

# %% [markdown]
# How to read the two tables. "compiled × faster than eager" divides the two medians; "break-even
# calls" is (first call − steady state) / (eager − steady state), rounded up: after that
# many calls the compiled function has paid for its compilation, and "never" means its
# median was not below the eager median in this run. Whether it is faster at all is a
# question for the per-round ratios and their 95 % interval, which `claims.faster` turns
# into a sentence (section 3.3 says more about it):

# %%
for report in (jax_report, torch_report):
    print(f"{report.framework}:", claims.faster(report.comparison, *report.names).explanation)

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
jax_report.plot(ax=axes[0])
torch_report.plot(ax=axes[1])
fig.tight_layout()

# %%
print(f"jax.jit: first call {jax_report.first_call_s / jax_report.steady.median:.0f}x the steady state")
print(f"torch.compile: first call {torch_report.first_call_s / torch_report.steady.median:.0f}x the steady state")
assert jax_report.first_call_s > jax_report.steady.median
assert torch_report.first_call_s > torch_report.steady.median

# %% [markdown]
# ### 3.3 Comparing variants: `compare`
#
# `compare` first checks that every variant returns the same result as the baseline,
# then times them in shuffled, interleaved rounds so that a change in machine load hits
# all of them alike. It reports medians, IQRs and ratios, and keeps every round's times:
# round i of two variants ran back to back, so their ratio in that round is what the
# course judges from.

# %%
Xt, Wt = torch.from_numpy(X_np).to(torch_dev), torch.from_numpy(W_np).to(torch_dev)
Xj, Wj = jax.device_put(X_np, jax_dev), jax.device_put(W_np, jax_dev)  # one device kind
layer_jit = jax.jit(layer_jax)
variants = {
    "PyTorch eager": lambda: layer_torch(Xt, Wt),
    "JAX eager": lambda: layer_jax(Xj, Wj),
    "JAX jit": lambda: layer_jit(Xj, Wj),
}
comparison = timing.compare(variants, baseline="PyTorch eager", rtol=1e-4, atol=1e-4)
comparison

# %%
comparison.plot(title="one tanh layer, on this machine")

# %% [markdown]
# Which of two variants is faster? `claims.faster(comparison, a, b)` takes the per-round
# ratios a / b, computes the 95 % interval of their median, and says which one is faster
# only when the whole interval lies on one side of 1x; a straddling interval, a noisy run
# (the ratios' spread above 50 %) or a contended machine gives no winner. The fair pairs
# change one thing at a time: the framework (eager against eager), or compiling (JAX
# eager against JAX jit). PyTorch eager against JAX jit would change both at once.
#
# Three words in the sentences below, used in every lesson:
# - **95 % interval**: the range in which the typical (median) per-round ratio lies, with 95 %
#   confidence, widened by 5 % for what a second run would move; more rounds narrow it.
# - **contended**: while the rounds ran, other programs used more than a quarter of this
#   process's cores, so the ratio says more about them than about the code. A contended run is
#   never judged; the line under each table says "quiet" or "contended" and why.
# - **pairing**: which two variants a ratio divides; fair pairings change one thing only.
#
# The whole rule, and why it is this rule: `docs/VERDICTS.md`.

# %%
for a, b in (("PyTorch eager", "JAX eager"), ("JAX eager", "JAX jit")):
    print(claims.faster(comparison, a, b).explanation)

# %% [markdown]
# `env.setup()` gave both frameworks the same number of threads (the cores this process
# may use); every measurement records them:

# %%
comparison.measurements["JAX jit"].threads

# %% [markdown]
# ### 3.4 Catching recompilation
#
# A compiled function recompiles when it sees a new input shape. `no_recompile()` turns
# that silent cost into an error that names the function, so a training loop can assert
# that it stays compiled. The cell below feeds a new batch size on purpose.

# %% tags=["raises-exception"]
with timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_jit(jnp.ones((batch, S.mlp_width)), Wj).block_until_ready()

# %% [markdown]
# PyTorch, the same sharp bit. `torch.compile(..., dynamic=False)` specialises on shapes as
# `jax.jit` does (the default instead marks a dimension dynamic after its first change, and
# lesson 03 shows both). Inside `no_recompile`, Dynamo's recompilation is an error too:

# %% tags=["raises-exception"]
# PyTorch
layer_compiled = torch.compile(layer_torch, dynamic=False)
layer_compiled(torch.ones(64, S.mlp_width, device=torch_dev), Wt)  # warm-up: compiles once
with timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_compiled(torch.ones(batch, S.mlp_width, device=torch_dev), Wt)

# %% [markdown]
# The fix is to keep shapes fixed (pad the last batch, or drop it). The batches are made
# before the block: eager JAX operations such as `*` are small compiled programs too, and
# their first use inside the block would be reported.

# %%
batches = [jnp.full((64, S.mlp_width), float(step)) for step in range(3)]
layer_jit(batches[0], Wj).block_until_ready()  # warm-up
with timing.no_recompile("the loop"):
    for X_batch in batches:
        layer_jit(X_batch, Wj).block_until_ready()
print("no recompilation")

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX | course helper |
# |---|---|---|---|
# | pick a device | `torch.device("cuda" if ... else "cpu")` | `jax.devices()[0]` | `env.torch_device()`, `env.jax_device()` |
# | wait for results | `torch.cuda.synchronize()` | `x.block_until_ready()` | `timing.sync(tree)` |
# | compile | `torch.compile(f)` | `jax.jit(f)` | `timing.compile_report(f, *args)` |
# | time fairly | `torch.utils.benchmark.Timer` | `%timeit` + `block_until_ready` | `timing.bench`, `timing.compare` |
# | prove equal | `torch.testing.assert_close` | `np.testing.assert_allclose` | `parity.assert_close` on mixed trees |
#
# **Common misconceptions** (each corrected above)
# - *"`%timeit` on a JAX function measures the computation."* It measures the dispatch unless the
#   output is synchronised (section 3.1).
# - *"The first call shows how fast compiled code is."* It includes tracing and compiling (section 3.2).
# - *"A faster variant is better."* Only if it computes the same thing; `compare` checks first (3.3).
# - *"The variant with the lower median is faster."* Not on its own: `claims.faster` names a
#   winner only when the 95 % interval of the per-round ratios lies on one side of 1x on a
#   quiet machine, and otherwise says that this run cannot tell (3.3).
#
# **Review questions**
#
# <details><summary>1. Why can a JAX function return before its result exists?</summary>
# JAX dispatches work asynchronously: the call queues the computation on the device and returns
# a handle. Reading the value, or `block_until_ready()`, waits for it.
# </details>
#
# <details><summary>2. What is the break-even number of calls?</summary>
# The number of calls after which compile time plus compiled calls costs less than running eagerly:
# (first call − steady) / (eager − steady), rounded up.
# </details>
#
# <details><summary>3. Why interleave variants instead of timing one after the other?</summary>
# Machine load drifts (other programs, turbo clocks, thermal limits). Interleaving in shuffled rounds
# spreads that drift over all variants instead of penalising whichever ran during a slow patch.
# </details>
#
# **Next:** the exercises in `exercises/00_welcome_exercises.ipynb` (fix a timer that forgets
# to synchronise, and prove two implementations agree).
