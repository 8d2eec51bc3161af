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
from course_utils.expect import expect_error
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
# Most rows are there for a bug report; four are worth reading now. `accelerator` and
# `jax_devices` say what JAX found; `torch_device` says where PyTorch will compute (on a TPU
# machine it stays `cpu`); `precision` confirms both frameworks compute float32 matmuls in full
# float32; and `device_problem` is `None` unless a framework could not use a device that is
# there (a CUDA build that does not match the driver, for example), in which case it says what
# to do. Paste the whole table when you ask for help.
#
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
# The two lines name the devices in each framework's own spelling (PyTorch's `cpu` or `cuda:0`,
# JAX's `cpu:0` or `cuda:0`), and the assertion checks that the comparison pair is one kind.
# Every timing in the course that sets the two frameworks against each other uses
# `torch_dev` and `jax_dev`.

# %% [markdown]
# ## 2. How the course works
#
# **Key concepts**
# - **Pairs**: a PyTorch cell, the mirrored JAX cell on the same data (names ending in `_torch` /
#   `_jax`), then a parity cell.
# - **Parity cells** use `assert_close`, which names the leaf that differs and by how much.
# - **Smoke mode** (`COURSE_SMOKE=1`) shrinks the sizes in the `parameters` cell; the code path stays the same.
# - **Exercises** live in `exercises/`; each check cell tells you what is wrong, or that a stub is "not implemented yet".
#
# Here is the pattern on the smallest possible example: a softmax over the same numbers.
#
# The names follow one rule in every lesson: what belongs to one framework ends in `_torch` or
# `_jax`, and what both share has no framework suffix (the NumPy input `x_np` below). So no cell
# overwrites the other framework's objects, and the parity cell can use both. The data both
# frameworks read is made once, in NumPy:

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
# The two outputs above print the same probabilities, one as a `tensor`, one as an `Array`.
# `assert_close` accepts either kind (and NumPy arrays, and nested lists or dicts of them) and
# compares them as float64 NumPy values, so a parity cell never needs to convert by hand. The
# tolerances say how close is close enough: `rtol` is relative to the size of the values, `atol`
# absolute, as in `numpy.testing.assert_allclose`.
#
# When two results differ, `assert_close` says where. This cell compares against a
# deliberately wrong answer to show the message. It runs inside `expect_error`, the course's
# helper for errors a cell raises on purpose: the error is caught and printed in a line or
# two (its type and message, not the frames of the code it passed through), the notebook
# carries on, and the cell fails instead if the error does not happen. Every later sharp bit
# in the course is shown this way. `lines=2` asks for the message's first two lines, since
# this message puts its details on the second.

# %%
with expect_error(AssertionError, lines=2):
    assert_close(probs_torch, probs_jax * 1.01, name="softmax")

# %% [markdown]
# Read the message from the left: the name you gave (`softmax`), how many elements differ out of
# how many, the largest absolute and relative errors, and the index where the worst one sits with
# both values. For a model's parameters the name is the path in the tree (a layer and its
# weight), which is usually enough to find the bug.
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
# JAX
import timeit

a_jax = jax.random.normal(jax.random.key(0), (S.n, S.n))
matmul_jax = jax.jit(lambda a: a @ a)
matmul_jax(a_jax).block_until_ready()  # compile outside the timer

naive_s_jax = min(timeit.repeat(lambda: matmul_jax(a_jax), number=5, repeat=5)) / 5
print(f"timeit says one {S.n}x{S.n} matmul takes {timing.format_seconds(naive_s_jax)}")

# %% [markdown]
# That number is how long it takes to *queue* the matmul. `timing.bench` waits for every
# output (`block_until_ready` on each jax array, the accelerator's synchronise for torch)
# inside the timed region:

# %%
synced_jax = timing.bench(matmul_jax, a_jax, label="jit matmul, synchronised")
print(synced_jax)
print(f"the naive timer reported {naive_s_jax / synced_jax.median:.3f}x the real time")

# %% [markdown]
# The first line is `bench`'s summary: the median time of one call, the spread between the
# quartiles (IQR), and how many repeats and calls it took. The second line divides the naive
# number by it: a small fraction means the naive timer saw only the queueing, since each call
# returned long before its matmul was done.

# %% [markdown]
# PyTorch, the same experiment. On a CPU, PyTorch's operations finish before they return, so
# the naive timer and the synchronised one should agree; on a GPU, PyTorch queues kernels
# exactly as JAX does, and `timing.bench` calls the device's `synchronize` for it. The line
# below says which device PyTorch used here:

# %%
# PyTorch
a_torch = torch.randn(S.n, S.n, device=torch_dev)
naive_s_torch = min(timeit.repeat(lambda: a_torch @ a_torch, number=5, repeat=5)) / 5
synced_torch = timing.bench(lambda: a_torch @ a_torch, label="torch matmul, synchronised")
print(synced_torch)
print(f"PyTorch on {torch_dev.type}: the naive timer reported {naive_s_torch / synced_torch.median:.3f}x "
      "the synchronised time")

# %% [markdown]
# On a CPU, PyTorch's matmul has finished when `@` returns, so both timers measure the same work
# and the quotient lands near 1 (the naive timer keeps its fastest repeat and `bench` reports the
# median, so a busy machine can pull it below 1). On a GPU it would be far below 1, as JAX's was:
# PyTorch queues CUDA kernels and returns at once. The rule is the same in both frameworks: wait
# for the result inside the timed region.

# %% [markdown]
# With the matrix multiply actually finished, a float32 matmul of this size costs
# `2 n³` flops; the synchronised number is the one that matches that work.

# %%
gflops = 2 * S.n**3 / synced_jax.median / 1e9
print(f"{gflops:.1f} GFLOP/s on this machine (synchronised); "
      f"the naive timer would claim {2 * S.n**3 / naive_s_jax / 1e9:.0f} GFLOP/s")

# %% [markdown]
# Compare the first number with what the hardware can do: a laptop or small cloud CPU reaches
# tens to a few hundred GFLOP/s in float32, a data-centre GPU tens of thousands. A rate far above
# the machine's peak is the sign of a timer that did not wait.

# %% [markdown]
# ### 3.2 First call vs steady state
#
# A small MLP layer, the same function in both frameworks. First prove they agree. The data
# goes straight to the comparison devices of section 1, so the timings below can reuse it.

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
W_jax, X_jax = jax.device_put(W_np, jax_dev), jax.device_put(X_np, jax_dev)

def layer_jax(X, W):
    return jnp.tanh(X @ W).sum(axis=1)

out_jax = layer_jax(X_jax, W_jax)

# %%
assert_close(out_torch, out_jax, rtol=1e-4, atol=1e-4, name="layer")
print("both layers agree")

# %% [markdown]
# Why measure the first call apart from the rest? Both `jax.jit` and `torch.compile` do their
# expensive work, turning Python into an optimised program, on the first call with a given kind
# of input, and then reuse the result. A timing that mixes that first call into an average
# describes neither the cost of compiling nor the speed of the compiled code. Keeping the two
# apart also answers the practical question: after how many calls has compiling paid off? The
# tables end with that count, the *break-even*, and a speed-up; both are explained after the
# second table.
#
# `compile_report` times one real first call from cold caches (JAX's compiled programs
# cleared, its persistent cache off) and, for `jax.jit`, the stages JAX timed inside that call
# (trace → lower → compile), so the first call is never shorter than the compile it contains.
# After that first call it times the compiled function and the eager one (the same
# Python function, not compiled) in the same interleaved rounds, as `compare` does in
# section 3.3: timed one after the other, a burst of load in between would land on one
# of them only. The line under the table says whether the machine was quiet meanwhile.

# %%
# JAX: jax.jit, stage by stage
jax_report = timing.compile_report(jax.jit(layer_jax), X_jax, W_jax)
jax_report

# %% [markdown]
# For `torch.compile`, Dynamo captures the graph and Inductor generates code on the first
# call. The report starts it cold too (Dynamo reset, Inductor in an empty cache directory, so
# the *caches* row shows a miss rather than a graph read back from an earlier run's disk cache)
# and counts graphs and recompilations.

# %%
# PyTorch: torch.compile
torch_report = timing.compile_report(torch.compile(layer_torch), X_torch, W_torch)
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

# %% [markdown]
# Each sentence was written by the verdict rule from the rounds of its table; when it declines
# to name a winner it says why (too few rounds, too much spread, or other programs competing
# for the CPU) and what to change. The figures below draw the break-even arithmetic: the total
# time after n calls for the eager function (a straight line from the origin) and for the
# compiled one (it starts at the first call's cost and then climbs more slowly when its steady
# state is faster). Where the lines cross, a dashed line marks the break-even count.

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
# Each first call costs more than a steady-state call (the assertions check it), and the
# printed ratios say how many steady-state calls it is worth. That is the whole point of section
# 3.2: time a compiled function only after a warm-up call, and report the first call separately
# when it matters (a short script, a stream of new shapes). `torch.compile`'s first call includes
# Dynamo capturing the graph and Inductor generating and compiling code for it; lesson 03 looks at
# both compilers in detail.

# %% [markdown]
# ### 3.3 Comparing variants: `compare`
#
# `compare` first checks that every variant returns the same result as the baseline,
# then times them in shuffled, interleaved rounds so that a change in machine load hits
# all of them alike. It reports medians, IQRs and ratios, and keeps every round's times:
# round i of two variants ran back to back, so their ratio in that round is what the
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
comparison.plot(title="one tanh layer, on this machine")

# %% [markdown]
# The table gives each variant's median and IQR and its time relative to the baseline, PyTorch
# eager; the bar chart shows the same medians. The device column confirms that all three ran on
# one device kind, and the last line says whether the machine was quiet. These are
# descriptions of this run; the next cell asks the verdict rule which differences it can vouch
# for.

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
#   confidence, widened by 15 % for what a second run would move; more rounds narrow it.
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
# `cores` is how many CPU cores this process may use, and `torch` and `jax` the threads each
# framework was allowed. Equal thread counts keep a CPU comparison about the frameworks rather
# than about one of them using more of the machine. On a GPU the threads matter less, since the
# work runs on the device, but they are recorded all the same.

# %% [markdown]
# ### 3.4 Catching recompilation
#
# A compiled function recompiles when it sees a new input shape. `no_recompile()` turns
# that silent cost into an error that names the function, so a training loop can assert
# that it stays compiled. The cell below feeds a new batch size on purpose.
#
# A PyTorch user meets this less often, because eager PyTorch never compiles and
# `torch.compile` by default generalises a size after seeing it change. For `jax.jit` every new
# shape (or dtype) of an argument is a new program, and the only symptom is a slow step.

# %%
# JAX
with expect_error(timing.RecompilationError, lines=7), timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_jit_jax(jnp.ones((batch, S.mlp_width)), W_jax).block_until_ready()

# %% [markdown]
# The error lists every program compiled inside the block. `jit(layer_jax)` is the one that
# matters; the others are the small programs `jnp.ones` compiled for its new shape (eager JAX
# operations are compiled too, which the fix below takes into account). Then comes JAX's
# explanation of the cache miss for `layer_jax`: the argument `X`, with its new and its old
# shape.
#
# PyTorch, the same sharp bit. `torch.compile(..., dynamic=False)` specialises on shapes as
# `jax.jit` does (the default instead marks a dimension dynamic after its first change, and
# lesson 03 shows both). Inside `no_recompile`, Dynamo's recompilation is an error too:

# %%
# PyTorch
layer_compiled_torch = torch.compile(layer_torch, dynamic=False)
layer_compiled_torch(torch.ones(64, S.mlp_width, device=torch_dev), W_torch)  # warm-up: compiles once
with expect_error(timing.RecompilationError, lines=4), timing.no_recompile("the loop"):
    for batch in (64, 32):
        layer_compiled_torch(torch.ones(batch, S.mlp_width, device=torch_dev), W_torch)

# %% [markdown]
# Dynamo's message is worded differently but says the same thing: a guard on the input's size
# failed, so the graph would be compiled again.
#
# The fix is to keep shapes fixed (pad the last batch, or drop it). The batches are made
# before the block: eager JAX operations such as `*` are small compiled programs too, and
# their first use inside the block would be reported.

# %%
batches = [jnp.full((64, S.mlp_width), float(step)) for step in range(3)]
layer_jit_jax(batches[0], W_jax).block_until_ready()  # warm-up
with timing.no_recompile("the loop"):
    for X_batch in batches:
        layer_jit_jax(X_batch, W_jax).block_until_ready()
print("no recompilation")

# %% [markdown]
# Three batches with different values but one shape: one compiled program serves them all, and
# the block passes. The values of traced arguments never cause a recompilation in `jax.jit`;
# their shapes and dtypes do, and so do the values of static arguments.

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
# Machine load drifts (other programs, turbo clocks, thermal limits). Interleaving in shuffled
# rounds spreads that drift over all variants instead of penalising whichever ran during a slow
# patch.
# </details>
#
# The cell below asks these questions again as a self-check, with one more on the verdict
# rule of section 3.3: pick or type an answer and press *Check*. A wrong answer gets a hint,
# not the answer; *Show the answer* opens it. Where an executed copy's script does not run
# (GitHub's preview, an untrusted notebook) each answer is folded under its question, and a
# printout shows them all.

# %%
from course_utils import quiz

quiz.load("00_welcome_and_setup")

# %% [markdown]
# **Next:** the exercises in `exercises/00_welcome_exercises.ipynb` (fix a timer that forgets
# to synchronise, and prove two implementations agree).
