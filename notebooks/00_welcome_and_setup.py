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
# This course teaches JAX and PyTorch **side by side**: most ideas appear as a PyTorch
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

import time
import timeit

import jax
import jax.numpy as jnp
import numpy as np
import torch

from course_utils import claims, config, peaks, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())
print(SETUP.rule)

# %% [markdown]
# ## 1. Your environment
#
# **Key concepts**
# - Each framework finds devices on its own: `jax.devices()` and `torch.cuda.is_available()`.
# - `course_utils.env` picks a GPU or TPU when present and says when PyTorch has to fall back.
# - Thread counts and matmul precision change timings, so the report records them.
# - Comparisons between the frameworks run both on one device kind; JAX alone uses the accelerator.
#
# `env.setup()` is the first line of every lesson. It prepares both frameworks before either
# touches a device. JAX starts before PyTorch, so it loads its own CUDA libraries. Its memory
# and precision settings, in plain code:
#
# ```python
# os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # before JAX starts
# jax.config.update("jax_default_matmul_precision", "highest")
# torch.set_float32_matmul_precision("highest")
# torch.backends.cudnn.allow_tf32 = False
# ```
#
# The next cell reads them back:

# %%
import os

print("XLA_PYTHON_CLIENT_PREALLOCATE =", os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"))
print("jax.config.jax_default_matmul_precision =", jax.config.jax_default_matmul_precision)
print("torch.get_float32_matmul_precision() =", torch.get_float32_matmul_precision())
print("torch.backends.cudnn.allow_tf32 =", torch.backends.cudnn.allow_tf32)

# %% [markdown]
# By default JAX takes 75 % of a GPU's memory at its first operation. With
# `XLA_PYTHON_CLIENT_PREALLOCATE=false` it allocates as it goes, so PyTorch has room. The other
# three make both frameworks compute float32 matmuls and convolutions in full float32. GPUs
# default to TF32 in some of them, which would break parity checks at float32 tolerances.
#
# `env.report()` records these settings with the versions and devices:

# %%
report = env.report()
report

# %% [markdown]
# Most rows are there for a bug report. Four are worth reading now:
# - `jax_devices` says what JAX found, and `accelerator` the GPU or TPU that either framework
#   found;
# - `torch_device` says where PyTorch computes, and on a TPU machine it stays `cpu`;
# - `precision` confirms that both frameworks compute float32 matmuls in full float32;
# - `device_problem` is `None` unless a framework could not use a device that is there, such as
#   a CUDA build that does not match the driver. Then it says what to do.
#
# Paste the whole table when you ask for help.
#
# The course picks devices the same way in every lesson. JAX uses its default backend, a GPU or
# TPU when one is present. PyTorch uses CUDA when present. On a TPU machine it stays on the CPU,
# since no lesson is written for `torch_xla`.
#
# Two rules follow. The setup cell's last line, `SETUP.rule`, states them for this machine.
# - A *comparison* of the frameworks runs both on one device kind. A GPU-vs-CPU ratio would
#   measure the devices. `SETUP.pair()` gives both accelerators when both frameworks have one,
#   otherwise both CPUs.
# - What shows JAX alone runs on `SETUP.jax_alone`, the GPU or TPU when there is one. Its
#   lines carry the label `SETUP.alone_label`.

# %%
print("PyTorch's device:", env.torch_device(verbose=False), "| JAX's device:", env.jax_device())
torch_dev, jax_dev = SETUP.pair()  # comparisons: one device kind for both
alone = SETUP.jax_alone  # JAX on its own: the GPU or TPU when there is one
print("comparisons run on:", torch_dev, "and", jax_dev, "| JAX alone runs on:", alone)
print("label of JAX-alone lines:", SETUP.alone_label)
assert env.device_kind(torch_dev) == env.device_kind(jax_dev)

# %% [markdown]
# Each device is named in its framework's own spelling, and the assertion checks that the
# comparison pair is one kind. Every timing in the course that sets the two frameworks against
# each other uses this pair.

# %% [markdown]
# ## 2. How the course works
#
# **Key concepts**
# - **Pairs**: a PyTorch cell, the mirrored JAX cell on the same data, then a parity cell.
# - **Parity cells** use `assert_close`, which names the leaf that differs and by how much.
# - **Smoke mode** shrinks the sizes in the `parameters` cell; the code path stays the same.
#   `COURSE_SMOKE=1` turns it on.
# - **Exercises** live in `exercises/`. Each check cell says what is wrong, or that a stub is
#   "not implemented yet". The notebook's last cell says how to check it and hand it in.
#
# Here is the pattern on the smallest possible example: a softmax over the same numbers.
#
# In a pair, what belongs to one framework ends in `_torch` or `_jax`. What both share has no
# suffix, like the NumPy input `x_np` below. So no cell overwrites the other framework's
# objects, and the parity cell can use both. The data both frameworks read is made once, in
# NumPy:

# %%
x_np = np.linspace(-3, 3, 7, dtype=np.float32)  # shared input, (7,)

# %%
# PyTorch
x_torch = torch.from_numpy(x_np)
probs_torch = torch.softmax(x_torch, dim=0)
probs_torch

# %%
# JAX
x_jax = jnp.asarray(x_np)
probs_jax = jax.nn.softmax(x_jax, axis=0)
probs_jax

# %%
# Parity: same inputs, same result (within float32 rounding).
assert_close(probs_torch, probs_jax, rtol=1e-6, atol=1e-7, name="softmax")
print("softmax agrees")

# %% [markdown]
# The two outputs print the same probabilities, one as a `tensor`, one as an `Array`.
# `assert_close` accepts either kind, NumPy arrays too, and nested lists or dicts of them. It
# compares them as float64 NumPy values, so a parity cell never converts by hand. `rtol` is the
# tolerance relative to the size of the values and `atol` the absolute one, as in
# `numpy.testing.assert_allclose`.
#
# When two results differ, `assert_close` says where. The next cell compares against a
# deliberately wrong answer. It runs inside `expect_error`, the course's helper for errors a
# cell raises on purpose. The helper prints the error's type and message in a line or two,
# without the frames of library code, and the notebook carries on. If the error does not
# happen, the cell fails. Every later sharp bit in the course is shown this way. `lines=2` asks
# for two lines of the message, since this one puts its details on the second.

# %%
with expect_error(AssertionError, lines=2):
    assert_close(probs_torch, probs_jax * 1.01, name="softmax")

# %% [markdown]
# Read the message from the left: the name you gave, how many elements differ, the largest
# absolute and relative errors, and the index of the worst one with both values. For a model's
# parameters the name is the path in the tree, a layer and its weight, which usually points
# straight at the bug.
#
# ## 3. Timing discipline
#
# **Key concepts**
# - JAX **dispatches asynchronously**: a call returns as soon as the work is queued, on a CPU
#   too for any work worth timing. A timer that does not wait for the result measures the
#   queueing, not the work.
# - The **first call** of a compiled function pays for tracing and compiling; later calls do not.
# - Compare variants **after** proving they compute the same thing, in interleaved rounds, with
#   the median and the IQR.
#
# ### 3.1 The sharp bit: timing without synchronising
#
# The natural code: Python's `timeit` on a jitted matmul. It measures JAX alone, so it runs on
# `SETUP.jax_alone`.

# %%
# JAX alone, on SETUP.jax_alone
a_jax = jax.device_put(jax.random.normal(jax.random.key(0), (S.n, S.n)), alone)
matmul_jax = jax.jit(lambda a: a @ a)
matmul_jax(a_jax).block_until_ready()  # compile outside the timer

naive_s = float(np.median(timeit.repeat(lambda: matmul_jax(a_jax), number=5, repeat=5))) / 5
print(f"{SETUP.alone_label}: timeit says one {S.n}x{S.n} matmul takes {timing.format_seconds(naive_s)}")


# %% [markdown]
# The call returns a handle once the matmul is queued, and the work runs on. So `timeit` may
# time only the queueing. A timer must wait for the result before it stops the clock. Here is the
# whole recipe as a bare loop. Call once to warm up, then time each call until
# `jax.block_until_ready(out)` returns, and take the median of many calls. That function waits
# for every array in `out`, a tuple or a dict of them too. The median ignores the odd call that
# another program slowed down.

# %%
def time_calls(fn, *args, repeats=30):
    """The median seconds of `repeats` calls, each timed until its result exists."""
    jax.block_until_ready(fn(*args))  # warm-up: a jitted fn compiles here, outside the timer
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))  # stop the clock when the result exists, not when it is queued
        times.append(time.perf_counter() - start)
    return float(np.median(times))


synced_s = time_calls(matmul_jax, a_jax)
share = naive_s / synced_s
print(f"{SETUP.alone_label}: one matmul takes {timing.format_seconds(synced_s)}, synchronised")
print(f"timeit saw {100 * share:.2g} % of it:", "the queueing, not the work" if share < 0.5 else "most of the work")

# %% [markdown]
# How small the share is depends on the device and the size; the last line says which case
# this run shows.
#
# `timing.bench` runs the same loop with more care, and the course uses it from here on. It
# switches off the garbage collector, groups very short calls into blocks, reports the spread,
# and flags a call that compiled inside the timed region:

# %%
synced = timing.bench(matmul_jax, a_jax, label=f"jit matmul, {SETUP.alone_label}")
print(synced)

# %% [markdown]
# The line gives the median time of one call, the spread between the quartiles (IQR), and how
# many repeats and calls it took. A warning follows when the IQR exceeds 10 % of the median.
# The first call is timed apart. This matmul had compiled before, so its first call compiled
# nothing; section 3.2 times first calls that do. Like the bare loop, `bench` waits for every
# output, so both measure the same work. Other programs on the cores can move either median.
#
# PyTorch, the same experiment, on the comparison device. On a CPU, PyTorch's operations finish
# before they return. On a GPU, PyTorch queues kernels as JAX does, and `timing.bench` calls the
# device's `synchronize` for it:

# %%
# PyTorch
a_torch = torch.randn(S.n, S.n, device=torch_dev)
naive_s_torch = float(np.median(timeit.repeat(lambda: a_torch @ a_torch, number=5, repeat=5))) / 5
synced_torch = timing.bench(lambda: a_torch @ a_torch, label=f"torch matmul on {torch_dev.type}")
print(synced_torch)
print(f"PyTorch on {torch_dev.type}: timeit saw {naive_s_torch / synced_torch.median:.0%} of the synchronised time")

# %% [markdown]
# On a CPU, PyTorch's matmul has finished when `@` returns, so both timers measure the work.
# They ran at different moments, so the share moves around 100 % with the load. Eager PyTorch
# compiles nothing, so its first call differs from the median by chance and load alone. On a
# GPU the share would be small, as JAX's was. The rule is the same in both frameworks: wait for
# the result inside the timed region.
#
# A float32 matmul of side n costs `2 n³` floating-point operations. Divided by each time, that
# gives a rate, and the device's ceiling says which rates are possible:

# %%
top = peaks.peak(alone)  # a GPU's or a TPU's published figures; None for a CPU or an unlisted chip
if top:
    dtype = "float32" if top.flops("float32") else "bfloat16"  # a TPU publishes its bfloat16 peak only
    ceiling, how = top.flops(dtype), f"{top.name}'s published {dtype} peak"
elif SETUP.alone_kind == "cpu":  # the fastest core today: 2 AVX-512 FMAs x 16 floats x 2 FLOPs x 5.7 GHz = 365 GFLOP/s
    ceiling, how = os.cpu_count() * 512e9, f"{os.cpu_count()} cores x 512 GFLOP/s, a generous bound"
else:
    ceiling, how = float("inf"), "none: no published peak for this chip"
print(f"ceiling: {ceiling / 1e9:,.0f} GFLOP/s, {how}")
for name, seconds in (("synchronised", synced.median), ("naive", naive_s)):
    rate = 2 * S.n**3 / seconds
    verdict = "impossible: above the ceiling" if rate > ceiling else "possible"
    print(f"{SETUP.alone_label}, {name}: {rate / 1e9:,.1f} GFLOP/s, {verdict}")

# %% [markdown]
# A rate above the ceiling is the sign of a timer that did not wait. For a GPU the ceiling is
# its published float32 peak. A TPU publishes only its bfloat16 peak, a loose ceiling for
# float32. For a CPU the cell allows each core more than the fastest core's float32 peak.

# %% [markdown]
# ### 3.2 First call vs steady state
#
# A small MLP layer, the same function in both frameworks. First prove they agree. The data
# goes to the comparison devices of section 1, and for JAX also to `SETUP.jax_alone`.

# %%
W_np = np.random.default_rng(0).standard_normal((S.mlp_width, S.mlp_width)).astype(np.float32)
X_np = np.random.default_rng(1).standard_normal((64, S.mlp_width)).astype(np.float32)  # (batch, width)

# %%
# PyTorch
W_torch, X_torch = torch.from_numpy(W_np).to(torch_dev), torch.from_numpy(X_np).to(torch_dev)

def layer_torch(X, W):
    return torch.tanh(X @ W).sum(dim=1)

out_torch = layer_torch(X_torch, W_torch)

# %%
# JAX
W_jax, X_jax = jax.device_put(W_np, jax_dev), jax.device_put(X_np, jax_dev)  # comparisons
W_alone, X_alone = jax.device_put(W_np, alone), jax.device_put(X_np, alone)  # JAX alone

def layer_jax(X, W):
    return jnp.tanh(X @ W).sum(axis=1)

out_jax = layer_jax(X_jax, W_jax)

# %%
assert_close(out_torch, out_jax, rtol=1e-4, atol=1e-4, name="layer")
assert_close(layer_jax(X_alone, W_alone), out_torch, rtol=1e-3, atol=1e-3, name=f"layer on {SETUP.alone_kind}")
print(f"both layers agree; so does JAX alone, on {SETUP.alone_kind}, within rtol=1e-3, atol=1e-3")

# %% [markdown]
# Why time the first call apart? Both `jax.jit` and `torch.compile` turn Python into an
# optimised program on the first call with a given kind of input, then reuse it. An average
# that mixes in that first call describes neither the cost of compiling nor the speed of the
# compiled code. Keeping the two apart also answers a practical question: after how many calls
# has compiling paid off?
#
# `compile_report` times one real first call, from cold caches: for JAX it first calls
# `jax.clear_caches()`. For `jax.jit` it also shows the stages JAX timed inside that call:
# trace, lower and compile. Then it times the compiled function and `eager`, the plain
# function, in interleaved rounds, so a burst of load hits both alike. The JAX report
# measures JAX alone, so it runs on `SETUP.jax_alone`:

# %%
# JAX alone: jax.jit, stage by stage
jax_report = timing.compile_report(jax.jit(layer_jax), X_alone, W_alone, eager=layer_jax, label=f"layer_jax, {SETUP.alone_label}")
jax_report

# %% [markdown]
# For `torch.compile`, Dynamo captures the graph and Inductor generates code on the first call.
# The report starts it cold too. It calls `torch._dynamo.reset()`, and Inductor works in an
# empty cache directory, so the *caches* row shows a miss. The report also counts graphs and
# recompilations.

# %%
# PyTorch: torch.compile
torch_report = timing.compile_report(torch.compile(layer_torch), X_torch, W_torch, eager=layer_torch)
torch_report

# %% [markdown]
# How to read the two tables. *per call* is the compiled function against eager. Its factor
# is the median of the per-round ratios, with an interval around it. The course names a
# winner only when the whole interval lies on one side of 1x, in a run neither noisy nor
# contended. These three words recur in every lesson:
# - **interval**: the 95 % confidence interval of the median per-round ratio, each end pushed
#   out by a factor of 1.15 for what a second run would move. More rounds narrow it.
# - **noisy**: the per-round ratios spread by more than 50 %.
# - **contended**: while the rounds ran, other programs used more than a quarter of this
#   process's cores. A contended run is never judged. The line under a table says "quiet" or
#   "contended", and why.
#
# *break-even* is `(first − steady) / (steady × (speed − 1))`, rounded up, *speed* being the
# *per call* factor: after that many calls, compiling has paid for itself. Where *per call*
# names no winner, it says why, and *break-even* says "not judged".
#
# The figures draw the break-even arithmetic. Eager time, `steady × speed` per call, grows as
# a straight line from the origin. Compiled time starts at the first call's cost and then climbs at its steady-state
# rate. Where the lines cross, a dashed line marks the break-even count.

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
jax_report.plot(ax=axes[0])
torch_report.plot(ax=axes[1])
fig.tight_layout()

# %%
for r in (jax_report, torch_report):
    assert r.first_call_s > r.steady.median
    pays = timing.format_calls(r.break_even_calls) if r.judged else "not judged"
    print(f"{r.framework}: first call {timing.format_seconds(r.first_call_s)}, "
          f"{r.first_call_s / r.steady.median:.0f}x the steady state")
    print(f"  per call: {r.per_call.line()}; pays off after: {pays}")

# %% [markdown]
# Each first call costs more than a steady-state call, as the assertion checks. Compiling pays
# off only when the compiled call is clearly faster. Each *per call* line says whether it was
# here. So time a compiled function only after a warm-up call. Report the first call apart
# when it matters, as in a short script or a stream of new shapes. Lesson 03 looks at both
# compilers in detail.

# %% [markdown]
# ### 3.3 Comparing variants: `compare`
#
# `compare` first checks that every variant returns the same result as the baseline. Then it
# times them in shuffled, interleaved rounds, so that a change in machine load hits all of them
# alike. It reports medians, IQRs and ratios, and keeps every round's times. Two variants
# timed in the same round ran under the same load, so their ratio in that round is what the
# course judges from.

# %%
layer_jit_jax = jax.jit(layer_jax)
variants = {  # all on the one device kind of section 1
    "PyTorch eager": lambda: layer_torch(X_torch, W_torch),
    "JAX eager": lambda: layer_jax(X_jax, W_jax),
    "JAX jit": lambda: layer_jit_jax(X_jax, W_jax),
}
comparison = timing.compare(variants, baseline="PyTorch eager", rtol=1e-4, atol=1e-4)
comparison

# %%
ax = comparison.plot(title="one tanh layer, on this machine")

# %% [markdown]
# The table gives each variant's median, its IQR and its speed against PyTorch eager. The bar
# chart shows the same medians and speeds. The device column confirms one device kind for
# all three, and the last line says whether the machine was quiet.
#
# Where JAX has a GPU or TPU that PyTorch does not share, JAX jit also runs there, as a line of
# its own. It is not a framework comparison, so no verdict is drawn from it:

# %%
if SETUP.alone_kind != SETUP.compared_kind:
    print(timing.bench(layer_jit_jax, X_alone, W_alone, label=f"JAX jit, {SETUP.alone_label}"))
else:
    print(f"{SETUP.alone_label}: the table's JAX rows already ran there.")

# %% [markdown]
# Which of two variants is faster? `claims.faster(comparison, a, b)` applies the rule of
# section 3.2 to the per-round ratios a / b. The fair pairs change one thing at a time: the
# framework, eager against eager, or compiling, JAX eager against JAX jit. PyTorch eager
# against JAX jit would change both at once. The whole rule, and why it is this rule, is in
# `docs/VERDICTS.md`.

# %%
for a, b in (("PyTorch eager", "JAX eager"), ("JAX eager", "JAX jit")):
    print(claims.faster(comparison, a, b))

# %% [markdown]
# `env.setup()` sets PyTorch's threads to the cores, the size JAX's CPU pool starts with, and
# every measurement records them:

# %%
comparison.measurements["JAX jit"].threads

# %% [markdown]
# `cores` is how many CPU cores this process may use. `torch` is PyTorch's thread count, and
# `jax` the size of JAX's pool. Equal thread counts keep a CPU comparison about the frameworks,
# not about one of them using more of the machine.

# %% [markdown]
# ### 3.4 Catching recompilation
#
# A compiled function recompiles when it sees a new input shape. `no_recompile()` turns that
# silent cost into an error that names the function, so a training loop can assert that it
# stays compiled. For `jax.jit`, every new shape or dtype of an argument is a new program, and
# the only symptom is a slow step. A PyTorch user meets this less often: eager PyTorch never
# compiles, and `torch.compile` by default generalises a size after seeing it change. The cell
# below feeds a new batch size on purpose, to JAX alone:

# %%
# JAX
with expect_error(timing.RecompilationError, lines=7), timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_jit_jax(jnp.ones((batch, S.mlp_width)), W_alone).block_until_ready()

# %% [markdown]
# The error counts the compilations inside the block and names each program once.
# `jit(layer_jax)` is the one that matters. The others are small programs that `jnp.ones`
# compiled for its new shape: eager JAX operations are compiled too. Then comes JAX's
# explanation of the cache miss: the argument `X`, with its new and its old shape.
#
# `no_recompile` turns on JAX's own switches, `jax.config.update("jax_log_compiles", True)` and
# `jax.config.update("jax_explain_cache_misses", True)`, and raises if they log a compile.
# JAX's built-in guard, `jax.no_tracing()`, raises at the first trace; lesson 03 teaches it.
#
# PyTorch, the same sharp bit. `torch.compile(..., dynamic=False)` specialises on shapes as
# `jax.jit` does, and lesson 03 compares it with the default. Inside `no_recompile`, Dynamo's
# own switch `torch._dynamo.config.error_on_recompile = True` makes a recompilation an error:

# %%
# PyTorch
torch._dynamo.reset()  # forget the graphs of layer_torch that section 3.2 compiled
layer_compiled_torch = torch.compile(layer_torch, dynamic=False)
layer_compiled_torch(torch.ones(64, S.mlp_width, device=torch_dev), W_torch)  # warm-up: compiles once
with expect_error(timing.RecompilationError, lines=4), timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_compiled_torch(torch.ones(batch, S.mlp_width, device=torch_dev), W_torch)

# %% [markdown]
# Dynamo's message is worded differently but says the same thing: a guard on the input's size
# failed, so the graph would be compiled again.
#
# The fix is to keep shapes fixed: pad the last batch, or drop it. The batches are made before
# the block, because the first use of an eager JAX operation inside it would be reported too.

# %%
batches = [jnp.full((64, S.mlp_width), float(step)) for step in range(3)]
layer_jit_jax(batches[0], W_alone).block_until_ready()  # warm-up
with timing.no_recompile("the loop"):
    for X_batch in batches:
        layer_jit_jax(X_batch, W_alone).block_until_ready()
print("no recompilation")

# %% [markdown]
# Three batches with different values and one shape: one compiled program serves them all. In
# `jax.jit` the values of traced arguments never cause a recompilation. Their shapes and dtypes
# do, and so do the values of static arguments.

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX | course helper |
# |---|---|---|---|
# | pick a device | `torch.device("cuda" if ... else "cpu")` | `jax.devices()[0]` | `SETUP.pair()`, `SETUP.jax_alone` |
# | wait for results | `torch.cuda.synchronize()` | `jax.block_until_ready(tree)` | `timing.sync(tree)` |
# | compile | `torch.compile(f)` | `jax.jit(f)` | `timing.compile_report(f, *args)` |
# | time fairly | `torch.utils.benchmark.Timer` | a loop with `block_until_ready`, its median | `timing.bench`, `timing.compare` |
# | prove equal | `torch.testing.assert_close` | `np.testing.assert_allclose` | `parity.assert_close` on mixed trees |
#
# **Common misconceptions**, each corrected above:
# - *"`%timeit` on a JAX function measures the computation."* It measures the dispatch unless
#   the output is synchronised (3.1).
# - *"The first call shows how fast compiled code is."* It includes tracing and compiling (3.2).
# - *"A faster variant is better."* Only if it computes the same thing; `compare` checks first
#   (3.3).
# - *"The variant with the lower median is faster."* Not on its own. `claims.faster` names a
#   winner only when the interval of the per-round ratios lies on one side of 1x on a quiet
#   machine (3.3).
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("00_welcome_and_setup")

# %% [markdown]
# **Next:** the exercises in `exercises/00_welcome_exercises.ipynb`. You fix a timer that
# forgets to synchronise, port a layer and prove it agrees, and compute a break-even.
