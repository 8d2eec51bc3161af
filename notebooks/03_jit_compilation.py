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
# # 03 · JIT compilation
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/03_jit_compilation.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/03_jit_compilation.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/03_jit_compilation.ipynb)
#
# `jax.jit` and `torch.compile` both turn Python functions into compiled programs, but they
# get there differently: JAX traces your function with abstract values, PyTorch's Dynamo reads
# its bytecode and falls back to Python where it must. This lesson opens both pipelines, measures
# what compiling costs and gains on this machine, and shows what breaks them.
#
# **Learning objectives.** After this notebook you can
# 1. read what each compiler captured (a jaxpr, a Dynamo FX graph) and predict when either
#    recompiles, breaks a graph or refuses Python control flow;
# 2. measure compile time, steady state, break-even and dispatch overhead honestly, and judge
#    popular speed claims against your own numbers;
# 3. write data-dependent branches and loops (`lax.cond`, `lax.while_loop`), fixed-length
#    loops (`lax.scan`) and batched simulations (`vmap`) that JAX compiles once, know what
#    `torch.compile` makes of the same code in PyTorch (a graph break, `torch.cond`'s one graph
#    with both branches, an unrolled loop, a compiled step inside a Python loop), and measure
#    whether compiling paid off.

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
    "n_ops": (64, 32),  # tiny ops in the dispatch-overhead chain
    "batch": (256, 64),  # rows of the MLP input
    "width": (1024, 256),  # width of the matmul-bound MLP
    "n_elements": (4_000_000, 30_000),  # length of the fusion-bound elementwise chain
    "n_points": (3000, 600),  # K-means points
    "k": (4, 4),  # K-means clusters
    "n_envs": (1024, 64),  # parallel CartPole environments (smoke: the article's 64)
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both, and one device kind for both (this lesson compares them throughout).
SETUP = env.setup(one_kind=True)

import contextlib
import inspect
import logging
import logging.handlers
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from functools import partial

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from course_utils import cartpole, claims, config, contention, kmeans, plots, timing
from course_utils.claims.verdict_rule import fmt
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())
torch_dev, _ = SETUP.pair()  # the same kind of device as JAX's (env.setup chose it)


def to_torch(a):
    """A NumPy array as a tensor on PyTorch's device (the timed sections use it)."""
    return torch.from_numpy(np.asarray(a)).to(torch_dev)


print(f"{contention.policy_text(contention.thread_policy())}; float32 everywhere")

# %% [markdown]
# The two printed lines are this run's conditions: the versions and devices, smoke mode or
# not, how many threads each framework may use on how many cores, and the float32 precision
# settings. A timing in this lesson is a fact about that setup only. Compilers are especially
# sensitive to it: the same `torch.compile` call generates C++ with OpenMP on a CPU and Triton
# kernels on a GPU, and XLA picks different fusions and library calls for each backend.
#
# The verdicts on the source articles' claims below are never typed in: each comes from
# `claims.judge`, which applies the course's one rule to the per-round ratios of a paired,
# interleaved timing (a 95 % interval of the median, widened by 15 % for what a second run
# moves; a busy machine, a noisy run or too few rounds give "inconclusive"), and prints a
# sentence generated for the outcome that happened. A claim this lesson cannot measure says
# why (`claims.not_testable`). The summary at the end is built from these verdict objects.

# %%
VERDICTS = {}  # label -> claims.Verdict; the summary table and plot are built from it


# %% [markdown]
# ## 1. Two compilers, two pipelines
#
# **Key concepts**
# - `torch.compile`: **Dynamo** reads the function's Python bytecode, records tensor operations
#   on **fake tensors** (shape and dtype, no data) into an **FX graph** guarded by checks on its inputs, and hands it to **Inductor**, which
#   writes C++/OpenMP (CPU) or Triton (GPU) kernels. Code it cannot record runs in Python.
# - `jax.jit`: JAX **traces** the function with abstract values (shape and dtype, no data)
#   into a **jaxpr**, lowers it to **StableHLO**, and **XLA** compiles that into fused kernels.
#   Code that needs concrete values is an error, not a fallback.
# - Both specialise on what they saw: Dynamo with **guards**, JAX with a **cache key** of shapes,
#   dtypes and static arguments.
#
# ```mermaid
# flowchart LR
#   subgraph PyTorch["torch.compile"]
#     direction LR
#     P1["Python function"] --> D["Dynamo<br/>(bytecode analysis + guards)"]
#     D --> FX["FX graph"] --> I["Inductor<br/>(fusion, codegen)"] --> K1["C++ / Triton kernels"]
#     D -.->|"graph break: run in Python"| P1
#   end
#   subgraph JAX["jax.jit"]
#     direction LR
#     J1["Python function"] --> T["trace with<br/>abstract values"] --> JP["jaxpr"]
#     JP --> SH["StableHLO"] --> X["XLA<br/>(fusion, layout)"] --> K2["CPU / GPU / TPU kernels"]
#   end
# ```
#
# Why open the pipelines at all? Because nearly every surprise in this lesson (a recompile, a
# graph break, an error about a tracer, a print that runs once) follows from *how* each
# compiler learns what your function does. A PyTorch user knows eager mode, where each line
# runs when Python reaches it. `torch.compile` keeps that feel, though Dynamo does not record
# by running your function: it interprets the function's bytecode itself and records each
# tensor operation on **fake tensors**, stand-ins with a shape and a dtype but no data. Where
# the bytecode needs a tensor's value (an `if` on a tensor), Dynamo ends the graph there (a
# **graph break**), Python runs that part on the real tensors, and recording resumes after it.
# So compiled code behaves like eager code, with what Dynamo captured run as compiled code
# (faster or not: sections 2, 3, 5 and 6 measure it).
#
# `jax.jit` records with stand-ins too, but it runs your Python function itself: it calls the
# function once with **tracers**, which carry a shape and a dtype but no numbers, and records
# every `jax.numpy` operation they pass through. The record (the jaxpr) is the program; Python is not consulted again until the
# cache key changes. Whatever Python would need a number for (an `if`, a `while`, `int(x)`) has
# no number to use, so JAX raises an error instead of falling back. The diagram shows both
# paths; the dashed arrow is the fallback that only PyTorch has.
#
# ### 1.1 What tracing sees
#
# The same function in both frameworks, with a Python `if` on a Python number:

# %%
# PyTorch
def f_torch(x, scale):
    y = torch.sin(x) * scale
    if scale > 1:  # a Python float: decided while the graph is recorded
        y = y + 1
    return torch.relu(y).sum()


# %%
# JAX
def f_jax(x, scale):
    y = jnp.sin(x) * scale
    if scale > 1:  # the same Python decision, made while tracing
        y = y + 1
    return jax.nn.relu(y).sum()


# %%
x_np = np.linspace(-2, 2, 8, dtype=np.float32)
assert_close(f_torch(torch.from_numpy(x_np), 2.0), f_jax(jnp.asarray(x_np), 2.0), rtol=1e-6)
print("same value in both frameworks")

# %% [markdown]
# Eagerly, the two functions agree. Here `scale` is a Python float, so the `if` is ordinary
# Python in both: it is decided before any array operation sees it. The question is what each
# compiler keeps of that decision.
#
# `jax.make_jaxpr` shows what JAX traced. `scale` is marked static (a compile-time
# constant), so the `if` runs once in Python and only the taken branch is recorded:

# %%
jaxpr = jax.make_jaxpr(f_jax, static_argnums=1)(jnp.asarray(x_np), 2.0)
jaxpr


# %% [markdown]
# How to read a jaxpr: the part between `lambda` and `.` lists the inputs with their types
# (`f32[8]` is a float32 array of 8 elements); each line after `let` is one primitive
# operation applied to named values, and `in` names the result. `relu` shows up as a nested
# call (`custom_jvp_call`) because `jax.nn.relu` carries its own differentiation rule. There is no `if` in it and no
# `scale` input: the value 2.0 became a constant multiplier and the `+ 1` is simply present,
# because the branch was taken while tracing. A call with `scale=0.5` would trace a different
# jaxpr without the addition, and compile it separately.
#
# PyTorch has no `make_jaxpr`, but `torch.compile` accepts any function as its **backend**:
# Dynamo hands the backend each FX graph (a `torch.fx.GraphModule`) it recorded, and the
# backend returns what to run. The backend below keeps the graphs and runs them as they are
# (no code generation), so we can read and count what Dynamo captured through public APIs
# only. `torch.compiler.reset()` first, because Dynamo caches what it compiled on the Python
# function's code object, shared by every `torch.compile` wrapper of that function.

# %%
def capture(fn, *args):
    """Run fn(*args) under Dynamo from an empty cache; return the FX graphs it recorded."""
    graphs = []

    def keep_graphs(gm, example_inputs):
        graphs.append(gm)
        return gm.forward  # run the recorded graph as it is

    torch.compiler.reset()
    torch.compile(fn, backend=keep_graphs)(*args)
    return graphs


def op_count(graphs):
    """Operations recorded in FX graphs (calls, not inputs/outputs)."""
    return sum(n.op.startswith("call_") for gm in graphs for n in gm.graph.nodes)



# %% [markdown]
# Dynamo also decided the `if` while recording, with `scale` at 2.0, so only the taken branch
# is in the graph; a **guard** (`scale == 2.0`) re-checks that value on every call. First the
# graph it recorded:

# %%
graphs = capture(f_torch, torch.from_numpy(x_np), 2.0)
print(f"graphs: {len(graphs)}")
print(graphs[0].code.strip())


# %% [markdown]
# Dynamo explains itself through PyTorch's logging: `torch._logging.set_logs(recompiles=True)`
# in code, or `TORCH_LOGS="recompiles"` in the environment, writes a message each time a guard
# fails. The helper below switches such an artifact on for a block and collects its messages,
# so that the lesson can print them under the cell (sections 4 and 5 use it again, for
# recompiles and for graph breaks). Calling `f_torch` with another value of `scale` makes
# the guard fail, and the `recompiles` log names it:

# %%
@contextlib.contextmanager
def dynamo_logs(**artifacts):
    """Switch on `torch._logging` artifacts (e.g. recompiles=True); collect their messages."""
    handler, dynamo_logger = logging.handlers.BufferingHandler(10_000), logging.getLogger("torch._dynamo")
    torch._logging.set_logs(**artifacts)  # installs torch's own handlers, which we then replace
    saved = dynamo_logger.handlers[:], dynamo_logger.propagate
    dynamo_logger.handlers, dynamo_logger.propagate = [handler], False  # kept here, not on stderr
    messages = []
    try:
        yield messages
    finally:
        dynamo_logger.handlers, dynamo_logger.propagate = saved
        torch._logging.set_logs()
        messages.extend(record.getMessage() for record in handler.buffer)


# %%
torch.compiler.reset()
f_torch_c = torch.compile(f_torch, backend="eager")  # Dynamo only: guards without code generation
f_torch_c(torch.from_numpy(x_np), 2.0)
with dynamo_logs(recompiles=True) as log:
    f_torch_c(torch.from_numpy(x_np), 3.0)
print("\n".join(line.split("#")[0].rstrip() for msg in log for line in msg.splitlines()[:3]))

# %% [markdown]
# Three outputs to read, over the two cells. The graph count is 1: nothing in `f_torch` stopped Dynamo. The
# printed `forward` is the FX graph as Python code, one line per recorded operation, with the
# `if` already resolved, just like the jaxpr. The last lines are Dynamo's recompile log: the
# call with `scale=3.0` failed a guard on the value of `scale`, and the message names the
# guard that failed. JAX would compile again in the same case: a static argument enters its
# cache key by value. Section 4 compares the two caches in detail.
#
# Both recorded the same five operations (sin, multiply, add, relu, sum). The jaxpr then
# becomes StableHLO, the input XLA compiles:

# %%
f_jit = jax.jit(f_jax, static_argnums=1)
print("\n".join(f_jit.lower(jnp.asarray(x_np), 2.0).as_text().splitlines()[:12]))


# %% [markdown]
# StableHLO is the portable form: typed tensors (`tensor<8xf32>`), operations named
# `stablehlo.sine`, `stablehlo.multiply` and so on, no Python left. `lower` stops here; the
# compiled program that `.compile()` would produce from it is backend-specific, and it is
# what section 3 inspects to count fusions. On the PyTorch side, the closest counterpart of
# StableHLO is the graph of ATen operations that AOTAutograd hands Inductor
# (`TORCH_LOGS="aot_graphs"` prints it), and that of the compiled program is the code Inductor
# generates (`TORCH_LOGS="output_code"`).
#
# ## 2. Dispatch overhead: what one operation costs
#
# **Key concepts**
# - In eager mode every operation goes through the framework's dispatcher: argument checks,
#   kernel selection, output allocation. For tiny tensors that fixed cost *is* the run time.
# - A compiled function pays a dispatch cost once **per call**, however many operations it holds.
# - Article 004 says an eager GPU kernel launch costs 5–10 µs. Here we measure the per-op
#   cost of eager PyTorch and eager JAX on this machine's device.
#
# Why measure overhead before measuring compilers? Because it sets the floor under every small
# computation. Adding 1 to a one-element array is a nanosecond of arithmetic, yet each eager
# call does far more work than that around it: check the arguments, pick a kernel for the
# dtype and device, allocate the output, check whether autograd must record it. A PyTorch user meets this
# as "small models do not speed up on a GPU"; a JAX user meets it as "eager `jax.numpy` is slow
# in a loop". Compilers remove it by paying once per call instead of once per operation, so
# this section gives the yardstick for the speed-ups measured later.
#
# A chain of `n_ops` additions on a one-element array; first prove every variant agrees.

# %%
# PyTorch: n_ops tiny additions, each one a dispatched operation
def chain_torch(x):
    for _ in range(S.n_ops):
        x = x + 1
    return x


# %%
# JAX: the same chain; eagerly each addition is dispatched on its own
def chain_jax(x):
    for _ in range(S.n_ops):
        x = x + 1
    return x


# %%
x_t, x_j = torch.zeros(1, device=torch_dev), jnp.zeros(1)
assert_close(chain_torch(x_t), chain_jax(x_j))
chain_jit, chain_compiled = jax.jit(chain_jax), torch.compile(chain_torch)

# %%
print("JAX's persistent compilation cache:", jax.config.jax_compilation_cache_dir or "not configured")
with timing.cold_inductor_cache():  # Inductor compiles in an empty directory, as JAX does from nothing
    dispatch = timing.compare(
        {
            "PyTorch eager": lambda: chain_torch(x_t),
            "JAX eager": lambda: chain_jax(x_j),
            "JAX jit": lambda: chain_jit(x_j),
            "torch.compile": lambda: chain_compiled(x_t),
        },
        baseline="PyTorch eager",
    )
dispatch

# %% [markdown]
# The table holds each variant's median time per call of the whole chain, interleaved in
# rounds so that a burst of load hits all four alike, with the line under it saying how busy
# the machine was. The eager rows include `n_ops` dispatches each; the compiled rows one call
# into a compiled program that does all the additions. The next cell divides accordingly.
#
# The *first call* column is each variant's first call in this cell. Both compiled chains are
# new, so theirs includes compiling them from empty caches: JAX's in-memory cache holds nothing
# for a new function, and its persistent cache is in the state the line above the table
# printed; Inductor compiles in an empty, throw-away directory (`timing.cold_inductor_cache()`),
# so no graph from an earlier run is read back. The two first calls still differ in what else
# they pay: `torch.compile`'s is this process's first compilation with Inductor, so it also
# imports the part of Inductor that compiles a graph. (`cold_inductor_cache()` has already
# imported Inductor's configuration and utilities and had it probe the CPU's vector
# instructions, before the clock starts.) JAX paid its own once-per-process costs in section 1. Section 3's first calls also
# compile from empty caches, and pay neither once-per-process cost: by then Inductor is
# imported and JAX's were paid. Later tables in this lesson time compiled functions the same
# way; a variant compiled in an earlier cell is already warm in them.

# %%
per_op = {name: dispatch.measurements[name].median / S.n_ops for name in ("PyTorch eager", "JAX eager")}
per_call = {name: dispatch.measurements[name].median for name in ("JAX jit", "torch.compile")}
for name, s in per_op.items():
    print(f"{name}: {timing.format_seconds(s)} per operation")
for name, s in per_call.items():
    print(f"{name}: {timing.format_seconds(s)} per call of all {S.n_ops} operations")

# %% [markdown]
# These are this run's per-operation and per-call costs. However small each one is, they add
# up: eagerly, a model of a few hundred small operations pays the per-operation cost hundreds
# of times per step, where a compiled step pays its per-call cost once.
#
# Which eager mode pays more per operation? Both chains run the same `n_ops` additions, so the
# ratio of their times is the ratio of their per-operation costs. The two dispatchers do
# different work: each eager `jax.numpy` operation is dispatched like a tiny jitted program (a
# cache lookup on shapes and dtypes, argument handling, asynchronous dispatch); each eager
# PyTorch operation goes through the dispatcher, autograd bookkeeping and a fresh output
# allocation. Which costs more on this machine:

# %%
print(claims.faster(dispatch, "JAX eager", "PyTorch eager").explanation)

# %% [markdown]
# The source article's *"an eager op costs 5–10 µs"* is the cost of launching a **GPU kernel**
# from eager PyTorch. On a GPU this lesson judges it from the PyTorch chain's time per
# operation; on a CPU there is no kernel launch, so the per-op times above measure the
# frameworks' own dispatch, a different quantity, and the claim is not judged.

# %%
if torch_dev.type == "cuda":
    per_op_rounds = [t / S.n_ops for t in dispatch.measurements["PyTorch eager"].times]
    VERDICTS["eager-launch"] = claims.judge(
        "eager-launch", per_op_rounds, "a GPU kernel launch", "one eager PyTorch op on the GPU",
        contention=dispatch.contention,
    )
else:
    VERDICTS["eager-launch"] = claims.not_testable(
        "eager-launch",
        f"the claim is about eager PyTorch launching GPU kernels, and this lesson's PyTorch runs on "
        f"{torch_dev.type}; the per-op times above are the frameworks' own dispatch cost there "
        "(a teaching measurement, not the claim)",
    )
VERDICTS["eager-launch"]

# %% [markdown]
# The verdict object says which of the two branches ran: on a GPU a judged verdict with the
# per-op median and its interval against the article's 5–10 µs; elsewhere the reason the claim
# is not tested here. Either way it enters the summary table at the end of the lesson.
#
# A compiled function pays its dispatch cost once per **call** instead of once per operation,
# but adds a per-call cost of its own (Dynamo's guard checks; JAX's cache lookup and argument
# handling). Whether that trade wins for a chain of `n_ops` tiny operations is what the two
# lines below say for this run; the more operations one call holds, the less the per-call cost
# weighs.

# %%
for eager_name, compiled_name in (("PyTorch eager", "torch.compile"), ("JAX eager", "JAX jit")):
    print(claims.faster(dispatch, eager_name, compiled_name).explanation)

# %% [markdown]
# Where the run could judge it, each line names the quicker of the two and by how many times,
# with its interval over the paired rounds (95 %, widened by 15 %); where that interval
# straddles 1, it says that neither is clearly quicker, and where the run could not judge (a
# busy or noisy run), it says why: these two give the ratio eager time over compiled time
# instead, above 1 meaning the compiled call was quicker. On a GPU the same
# chain would launch one kernel per addition eagerly, and a compiled chain one fused kernel,
# so we expect the balance to tip further towards compiling there: run on a GPU, the two lines
# above show whether it does; a run on a CPU cannot.

# %% [markdown]
# ## 3. `jax.jit` vs `torch.compile` on the same functions
#
# **Key concepts**
# - `timing.compile_report` separates the **first call** (trace/capture + compile + run) from
#   the **steady state**, times the uncompiled function too, and gives the **break-even**
#   number of calls after which compiling has paid for itself.
# - A **matmul-bound** function spends its time in BLAS kernels that eager mode already calls;
#   a **fusion-bound** chain of elementwise operations is where compilers win, by fusing many
#   passes over memory into one.
#
# Article 004 quotes one compile speed-up for every model ("1.5–2x"). A PyTorch user who
# tries `torch.compile` on their own model often sees something else, sometimes a slowdown,
# and wonders what went wrong. Nothing did: what a compiler can gain depends on where the
# time goes. This section takes two functions at the two ends of that range and asks three
# questions of each, in both frameworks: what does the first call cost, how fast is the steady
# state, and after how many calls has compiling paid for itself?
#
# Two functions, each written in both frameworks. First the shared NumPy data (the MLP's
# input and weights, scaled so that activations stay near 1, and one long vector for the
# elementwise chain):

# %%
rng = np.random.default_rng(0)
X_np = rng.standard_normal((S.batch, S.width), dtype=np.float32)
W1_np = (rng.standard_normal((S.width, S.width)) / math.sqrt(S.width)).astype(np.float32)
W2_np = (rng.standard_normal((S.width, S.width)) / math.sqrt(S.width)).astype(np.float32)
v_np = rng.standard_normal(S.n_elements, dtype=np.float32)


# %%
# PyTorch: a matmul-bound MLP and a fusion-bound elementwise chain
def mlp_torch(X, W1, W2):
    return torch.relu(torch.relu(X @ W1) @ W2) @ W1


def elementwise_torch(v):
    y = v * torch.sigmoid(v) + 0.5 * torch.tanh(v) ** 2
    return torch.exp(-y * y) * torch.cos(v) - 0.1 * v


# %%
# JAX: the same two functions
def mlp_jax(X, W1, W2):
    return jax.nn.relu(jax.nn.relu(X @ W1) @ W2) @ W1


def elementwise_jax(v):
    y = v * jax.nn.sigmoid(v) + 0.5 * jnp.tanh(v) ** 2
    return jnp.exp(-y * y) * jnp.cos(v) - 0.1 * v


# %%
args_t = [to_torch(a) for a in (X_np, W1_np, W2_np)]
args_j = [jnp.asarray(a) for a in (X_np, W1_np, W2_np)]
v_t, v_j = to_torch(v_np), jnp.asarray(v_np)
assert_close(mlp_torch(*args_t), mlp_jax(*args_j), rtol=1e-4, atol=1e-4, name="mlp")
assert_close(elementwise_torch(v_t), elementwise_jax(v_j), rtol=1e-5, atol=1e-6, name="elementwise")
print("both functions agree across frameworks")

# %% [markdown]
# The tolerances differ for a reason: the MLP sums `width` products per output three times
# over, and the two frameworks' BLAS libraries add them in different orders, so its float32
# results differ more than those of the elementwise chain, where each output depends on one
# input.
#
# Now the four compile reports. (Inductor also counts the kernels it generates, so we can see
# the fusion.) Each report times the compiled function and its eager original in the same
# interleaved rounds, so a burst of load from another program hits both alike; the line under
# each table says how quiet the machine was. JAX's eager original runs under `jax.disable_jit()`,
# which also switches off the small jits inside `jax.numpy` and `jax.nn` functions (`jax.nn.relu`
# is one), so every primitive operation runs on its own; that can be slower than calling the
# same function eagerly without it, as section 2 did. Their compiled-against-eager rows are
# measurements; section 3.1 judges the `torch.compile` claims from the same rounds' paired ratios.
#
# Every first call starts from cold caches, on both sides, as a new process without a disk
# cache would: for JAX, `jax.clear_caches()` with the persistent cache off; for PyTorch,
# `torch._dynamo.reset()` and an empty, throw-away Inductor cache directory (FX graph,
# AOTAutograd and compiled-kernel caches). What stays warm is the process itself: modules
# imported, Inductor's probe of which vector instructions this CPU has (a fact about the machine,
# settled once per process), and the C++ compiler's files in the operating system's file cache.
# Without that,
# PyTorch's first call could read the graph an earlier run compiled from Inductor's disk cache
# (on by default) while JAX compiled from scratch, and the two first calls would not measure the
# same thing.

# %%
import torch._inductor.metrics as inductor_metrics

mlp_jit, mlp_compiled = jax.jit(mlp_jax), torch.compile(mlp_torch)
ew_jit, ew_compiled = jax.jit(elementwise_jax), torch.compile(elementwise_torch)
reports = {
    "mlp, jax.jit": timing.compile_report(mlp_jit, *args_j),
    "mlp, torch.compile": timing.compile_report(mlp_compiled, *args_t),
    "elementwise, jax.jit": timing.compile_report(ew_jit, v_j),
}
kernels_before = inductor_metrics.generated_kernel_count
reports["elementwise, torch.compile"] = timing.compile_report(ew_compiled, v_t)
inductor_kernels = inductor_metrics.generated_kernel_count - kernels_before
display(*reports.values())

# %% [markdown]
# Each report reads top to bottom. First the first call (tracing or capture, compilation and
# one run), then the parts of it the framework timed itself while it ran (JAX: trace, lower,
# compile; PyTorch: the whole compilation by Dynamo, AOTAutograd and Inductor), so a first call
# is never shorter than the compile it contains. The *caches* row says what the call found:
# JAX's persistent cache off, Inductor's FX graph cache with its hits and misses (a miss: the
# graph was compiled, not read back). Then the steady-state medians of the compiled and of the
# eager function with their ratio, and the break-even: the number of calls after which the
# compiled function's total time, first call included, drops below the eager function's
# ("never" when the compiled steady state is not faster; marked not judged when other programs
# competed with the rounds). `torch.compile`'s first call on a CPU includes generating C++ and
# running the C++ compiler on it, where a kernel is generated at all; section 3.1 prints how
# many steady calls each first call is worth.
#
# Break-even plots: cumulative time of eager calls against the compiled function, whose first
# call includes compiling, both drawn from the reports' medians (so on a busy run the plotted
# crossing is the "medians alone" figure, not a judged break-even). Where the two lines cross is
# the break-even; if the compiled line never drops below the eager one in the plotted range,
# compiling did not pay off within it.

# %%
fig, axes = plt.subplots(2, 2, figsize=(11, 7))
for ax, report in zip(axes.ravel(), reports.values(), strict=True):
    report.plot(ax=ax)
fig.tight_layout()

# %% [markdown]
# **Fusion, counted.** The elementwise chain is about a dozen operations (the first line below
# counts its jaxpr's equations); in eager mode each one reads and writes the whole array. How
# many kernels each compiler made of them:

# %%
eager_ops = len(jax.make_jaxpr(elementwise_jax)(v_j).eqns)
hlo = jax.jit(elementwise_jax).lower(v_j).compile().as_text()
xla_fusions = sum(1 for line in hlo.splitlines() if " fusion(" in line and "kind=k" in line)
print(f"eager: {eager_ops} operations, one pass over memory each")
print(f"XLA: {xla_fusions} fused computation(s); Inductor: {inductor_kernels} generated kernel(s)")

# %% [markdown]
# The counts show what fusion means in practice: each eager operation is a full read and write
# of the vector, and each fused computation or generated kernel is one compiled loop that reads
# its inputs once, computes everything in registers and writes its result once. A count of 1
# means the whole chain became a single pass over memory; the fewer the kernels against the
# eager count, the more passes fusion removed. The XLA count
# comes from the optimised HLO text (`fusion` instructions); the Inductor count from its own
# kernel counter, read before and after compiling the elementwise function.

# %% [markdown]
# Fewer passes over memory is what fusion saves. How much of that shows up as time depends on
# how the memory traffic compares with what each call costs anyway: the larger the array, the
# more fusion weighs (`n_elements` is 30,000 in smoke mode, 4,000,000 in full). The reports'
# medians above and the `compile-fusion` verdict below say what it came to in this run.

# %% [markdown]
# ### 3.1 The popular claims, measured
#
# - *"JAX's first jitted call of a BERT on the CPU takes about 800 ms"* (article 004). A first
#   call's cost grows with the program being compiled, so the small functions here cannot judge
#   a claim about a BERT; their first calls are shown as measurements only.
# - *"`torch.compile` speeds models up 1.5–2x"* (article 004). The course measures it on two
#   proxies, a matmul-bound function (`compile-matmul`) and a fusion-bound one
#   (`compile-fusion`): the two `torch.compile` reports above, each round's eager time divided
#   by its compiled time. (Article 000's "20–30 % faster training" is about a
#   training step; lesson 04 judges it.)

# %%
VERDICTS["first-call"] = claims.not_testable(
    "first-call",
    "the article's ~800 ms is a BERT-base model's first call on a CPU, and a first call's cost "
    "grows with the program compiled; it is measured on a BERT-base-shaped proxy by "
    "`course claims` and by lesson 08 in full mode (smoke mode skips it)",
)
display(VERDICTS["first-call"])
for name, r in reports.items():
    print(f"{name:28s} first call {timing.format_seconds(r.first_call_s):>9s} "
          f"(compiling {timing.format_seconds(r.stages_s):>9s} of it), "
          f"the time of {r.first_call_s / r.steady.median:,.0f} steady calls\n{'':28s} caches: {r.caches}")

# %% [markdown]
# The verdict explains why it is not judged here; the lines below it express each first call as
# a number of steady calls, the unit in which compiling has to be paid back, with the part of it
# each framework spent tracing, lowering and compiling, and what its caches held: all four
# started cold, so none of them read a compiled program back from a cache. That count is not
# the break-even: each call after the first saves only the difference between the eager and
# the compiled time, so the break-even row of each report above (first call against that
# saving) can be smaller or larger than it. A program that is called fewer times than its
# break-even (a script run once, a notebook cell re-run after every edit) spends more time
# compiling than it saves.
#
# The two `torch.compile` claims, judged from the paired rounds of the two reports:

# %%
for claim_id, name in (("compile-matmul", "mlp, torch.compile"), ("compile-fusion", "elementwise, torch.compile")):
    eager_name, compiled_name = reports[name].names  # ("eager", "torch.compile")
    VERDICTS[claim_id] = claims.judge(claim_id, reports[name].comparison, eager_name, compiled_name, pairing="compile")
    display(VERDICTS[claim_id])

# %% [markdown]
# The expectation behind the two proxies: a compiler removes per-operation dispatch and fuses
# elementwise passes over memory into one, while it leaves a large matmul to the same kind of
# tuned library kernel that eager mode already calls. So for large arrays the fusion-bound
# chain is where compiling has the most to gain. That expectation is about large arrays, and
# the run may not follow it: with small ones (smoke mode shrinks `SIZES`) the fixed cost of
# each eager operation can outweigh both the matmuls and the memory traffic, and then what
# compiling removes is mostly dispatch, which can favour either function. The two numbers of
# each framework, from the reports' medians (above 1: the compiled function was quicker):

# %%
for framework in ("jax.jit", "torch.compile"):
    mlp, ew = (reports[f"{fn}, {framework}"] for fn in ("mlp", "elementwise"))
    print(f"{framework}: eager median / compiled median = {mlp.eager.median / mlp.steady.median:.2f} "
          f"on the MLP, {ew.eager.median / ew.steady.median:.2f} on the elementwise chain")
paired = [float(np.median(reports[name].comparison.ratios(*reports[name].names)))
          for name in ("mlp, torch.compile", "elementwise, torch.compile")]
print(f"torch.compile, the verdicts' median of per-round ratios eager / compiled = {paired[0]:.2f} "
      f"on the MLP, {paired[1]:.2f} on the elementwise chain")


# %% [markdown]
# Compare the two numbers on each of the first two lines with the expectation above. Where the
# MLP's is the larger, the run went against it for that framework. The third line gives the
# `torch.compile` verdicts' own numbers, the median of the per-round ratios, for the same rounds
# as the second line's ratio of medians; on a noisy run the two summaries can differ, even on
# which side of 1 they fall (section 6 shows how to look into such a case), and the verdicts read the third. Look first at the sizes: smoke mode's
# arrays are small, so the fixed costs of each call and each operation weigh more against the
# arithmetic and the memory traffic than at full size, and a rerun in full mode shows whether
# the order turns. A busy machine is the other suspect (the line under each report).
# These ratios are medians, not verdicts: only the `torch.compile` ratios are judged, in the
# two verdicts above, and a verdict from a busy or noisy run reads "inconclusive" and says
# which of the two it was. Where the
# break-even is many calls (the reports' break-even rows say how many here), a short-lived
# process may never reach it. (Lesson 04 compares the two frameworks' compiled training
# steps directly; here each compiler is compared with its own eager mode.)

# %% [markdown]
# ## 4. Recompilation
#
# **Key concepts**
# - JAX compiles once per **cache key**: the shapes and dtypes of array arguments (including
#   whether a scalar is *weakly typed*, as Python numbers are) and the values of static arguments.
# - Dynamo recompiles when a **guard** fails: a new shape (then it tries dynamic shapes
#   automatically), a new value of a Python number it specialised on, a new type.
# - Each framework can explain itself: `jax_explain_cache_misses` / `jax_log_compiles`, and
#   `torch._logging.set_logs(recompiles=True)`; `timing.no_recompile()` turns either into an error.
#
# Section 3 priced each first call in steady calls. A recompile pays the compiling part of it
# again, and it happens silently: the program gives the right answer, only slower. That makes
# recompilation a common performance bug in compiled code, in both frameworks. A training loop whose step recompiles every epoch, or every time the last
# batch is shorter, spends its time in the compiler.
#
# The two frameworks decide "is this a new program?" by different rules. JAX looks at the
# abstract signature of the arguments, never at the values of arrays. Dynamo looks at
# whatever its guards recorded, and by default that includes the values of Python numbers.
# The same call can therefore recompile in one framework and not the other, and this section
# tabulates which.
#
# ### 4.1 Which calls recompile?
#
# A small helper asks `no_recompile` whether a call compiled anything (inputs are made
# beforehand, since creating an array is itself a small compiled program in JAX).

# %%
def recompiles(call) -> bool:
    """Whether ``call()`` compiled anything (after the function was warmed up)."""
    try:
        with timing.no_recompile("probe"):
            call()
    except timing.RecompilationError:
        return True
    return False


scale_jit = jax.jit(lambda x, s: x * s)
x3, x4 = jnp.ones(3), jnp.ones(4)
s_strong, s_int = jnp.float32(3.0), 3
_ = scale_jit(x3, 2.0)  # warm-up: f32[3] and a weakly typed Python float

# %%
# JAX: which changes of argument make a new cache key?
jax_cases = {
    "same shape, new Python float value": lambda: scale_jit(x3, 5.0),
    "new shape": lambda: scale_jit(x4, 2.0),
    "Python float -> float32 array (weak -> strong type)": lambda: scale_jit(x3, s_strong),
    "Python float -> Python int": lambda: scale_jit(x3, s_int),
}
jax_table = {case: recompiles(call) for case, call in jax_cases.items()}
jax_table

# %% [markdown]
# Read each entry against the cache key. A new value of a Python float changes nothing the key
# records: the float is traced as a weakly typed float32 scalar whatever its value. A new shape
# is a new key. Passing a float32 *array* instead of a Python float changes the weak type to a
# strong one, which the key records too. A Python `int` is traced as a weakly typed integer, a
# different dtype from the float.
#
# A static argument is part of the cache key by value, so every new value compiles:

# %%
power_jit = jax.jit(lambda x, n: x**n, static_argnums=1)
power_jit(x3, 2)
jax_table["static argument, new value"] = recompiles(lambda: power_jit(x3, 3))
jax_table["static argument, same value"] = recompiles(lambda: power_jit(x3, 2))
jax_table

# %% [markdown]
# Static arguments are how JAX code gets Python values that must be known at trace time (a
# number of layers, a flag that picks a branch, an exponent used as a loop count). Each distinct
# value compiles its own program, so a static argument should take few values over a run.
# Static arguments must be hashable, which is why a list or an array cannot be one.
#
# JAX explains each cache miss when asked (this is what `no_recompile` reports, too). The
# explanation goes to the log, printed under the cell, and names the argument whose type
# changed:

# %%
jax.config.update("jax_explain_cache_misses", True)
scale_jit(x3, jnp.int32(7))  # an int32 array: a new dtype
jax.config.update("jax_explain_cache_misses", False)


# %% [markdown]
# The same questions for Dynamo. Guards are checked before any backend runs, so these probes
# use `backend="eager"` (Dynamo only, no code generation) to stay quick; the default Inductor
# backend would recompile at exactly the same calls, and pay code generation each time.

# %%
# PyTorch: the same two questions, asked of Dynamo's guards
def scale_torch(x, s):
    return x * s


t3, t4, t5 = torch.ones(3), torch.ones(4), torch.ones(5)
torch.compiler.reset()
scale_c = torch.compile(scale_torch, backend="eager")
scale_c(t3, 2.0)
torch_table = {
    "same shape, new Python float value": recompiles(lambda: scale_c(t3, 5.0)),
    "new shape": recompiles(lambda: scale_c(t4, 2.0)),
}
torch_table


# %% [markdown]
# The first entry is the difference that matters most in practice: Dynamo specialised on the
# value 2.0 of the Python float (it became a constant in the graph, guarded by a check on its
# value), so 5.0 recompiles. The second, a new shape, recompiles as in JAX, but what Dynamo
# compiles then depends on a setting, which the next cell counts.
#
# Three ways to compile the same function, each called on three shapes (3, 4, 5 elements); a
# counting backend sees every compilation. By default Dynamo specialises on the first shape and,
# when a size guard fails, recompiles with that size as a symbol (`automatic_dynamic_shapes`),
# which later sizes reuse. `torch._dynamo.mark_dynamic(x, 0)` declares dimension 0 symbolic
# before the first compilation. `torch.compile(dynamic=False)` turns automatic dynamic shapes off and
# specialises on every shape.
#
# Each count starts from `torch.compiler.reset()`. Dynamo keeps its compiled entries on the
# Python function's code object, which every `torch.compile` wrapper of that function shares,
# and its memory of which sizes already changed in a table for the whole process, keyed by the
# function's code (a hash of its file's contents, its first line and its name; so a function
# redefined by re-running its cell shares it too). A "fresh" wrapper of a function compiled before inherits both (the compiled entries
# where the backend is the same), and then need not recompile where a new function would, at a
# new shape for instance.

# %%
def count_compiles(inputs, **compile_kwargs):
    """How many times Dynamo compiles scale_torch over these inputs (from an empty cache)."""
    compiled_graphs = []

    def counting_backend(gm, example_inputs):
        compiled_graphs.append(gm)
        return gm.forward

    torch.compiler.reset()
    compiled = torch.compile(scale_torch, backend=counting_backend, **compile_kwargs)
    for x in inputs:
        compiled(x, 2.0)
    return len(compiled_graphs)


marked = torch.ones(3)
torch._dynamo.mark_dynamic(marked, 0)
shape_counts = {  # setting: (compilations counted, compilations the documentation describes)
    "default (automatic dynamic)": (count_compiles([t3, t4, t5]), 2),
    "mark_dynamic on the first input": (count_compiles([marked, t4, t5]), 1),
    "dynamic=False": (count_compiles([t3, t4, t5], dynamic=False), 3),
}
for setting, (n, documented) in shape_counts.items():
    print(f"{setting:32s} {n} compilation(s) for 3 shapes = {n - 1} recompile(s)"
          f"   [documented: {documented}; same: {n == documented}]")

# %% [markdown]
# Read each row's count against the behaviour described above it: one recompile and then a
# dynamic graph by default, none with `mark_dynamic`, one compilation per shape with
# `dynamic=False` (up to `torch._dynamo.config.recompile_limit`, after which Dynamo compiles
# nothing more for that function: calls that match a compiled entry still run it, the others
# run eagerly). The last column compares the two; a `False` there means this PyTorch version
# does something other than what this lesson describes.
# Where the counts are the documented ones, `mark_dynamic` saves the one recompile that
# automatic dynamic shapes pays; that is worth doing when the recompile is expensive (a large
# model under Inductor) and you know in advance which dimension varies (the batch, the
# sequence length).
#
# Dynamo's own explanation is the `recompiles` log met in section 1, collected by the same
# `dynamo_logs` helper and printed here. This time the `dynamic=False` function gets a new
# shape:

# %%
torch.compiler.reset()
static_only = torch.compile(scale_torch, backend="eager", dynamic=False)
static_only(t3, 2.0)
with dynamo_logs(recompiles=True) as log:
    static_only(t4, 2.0)  # the guard on x's size fails
print("\n".join(line.split("#")[0].rstrip() for msg in log for line in msg.splitlines()[:3]))

# %% [markdown]
# The message names the function and the reason: a guard on the size of `x` failed, with the
# size it expected and the size it got. In a long program, this log is the first
# thing to switch on when a compiled function is unexpectedly slow. The table below collects
# both frameworks' answers from 4.1; a dash marks a case asked of one framework only.

# %%
both = {case: {"JAX": jax_table.get(case), "PyTorch": torch_table.get(case)} for case in {**jax_table, **torch_table}}
display(Markdown("| case | JAX recompiles | PyTorch recompiles |\n|---|---|---|\n" + "\n".join(
    f"| {case} | {v['JAX'] if v['JAX'] is not None else '–'} | {v['PyTorch'] if v['PyTorch'] is not None else '–'} |"
    for case, v in both.items())))

# %% [markdown]
# The sharpest difference: a Python float that changes (a learning-rate schedule, say) is a
# traced value in JAX — no recompile — but a specialised constant in Dynamo, so the first
# change recompiles.
#
# ### 4.2 Catching a recompilation in a training loop
#
# The table is easiest to remember through a concrete case. A learning-rate schedule makes a
# Python number depend on the epoch (here a warm-up: half the rate for two epochs, then the full
# rate): the natural code for it recompiles in JAX for one reason and in PyTorch for another, and
# each has its own fix. `timing.no_recompile` turns a silent
# recompile into an error, so the cells below show the error first and then the fix.
#
# A linear-regression step with a learning-rate warm-up, in both frameworks; the same data.

# %%
Xr_np = rng.standard_normal((64, 8), dtype=np.float32)
yr_np = Xr_np @ rng.standard_normal(8, dtype=np.float32)
w0_np = np.zeros(8, dtype=np.float32)
warmup, num_epochs, base_lr = 2, 4, 0.1
lrs = [base_lr * (0.5 if epoch < warmup else 1.0) for epoch in range(num_epochs)]


# %% [markdown]
# The natural JAX code branches on `epoch` with a Python `if`, which forces `epoch` to be
# static — and a static argument that changes every epoch compiles every epoch:

# %%
# JAX: the natural code, epoch static because a Python if reads it
@partial(jax.jit, static_argnames="epoch")
def train_step_jax(w, X, y, epoch):
    lr = base_lr * 0.5 if epoch < warmup else base_lr  # Python if: epoch must be static
    grad = 2 * X.T @ (X @ w - y) / len(y)
    return w - lr * grad


Xr, yr = jnp.asarray(Xr_np), jnp.asarray(yr_np)
w_jax = train_step_jax(jnp.asarray(w0_np), Xr, yr, epoch=0)  # warm-up

# %% [markdown]
# The next cell raises on purpose, as do a few later ones. Each runs inside `expect_error`, the
# course's expected-error helper: it prints the error's type and the first lines of its message,
# not the frames inside JAX's and PyTorch's code, and fails the cell if the error does not
# happen.

# %%
with expect_error(timing.RecompilationError, lines=6):
    with timing.no_recompile("the JAX training loop"):
        for epoch in range(1, num_epochs):
            w_jax = train_step_jax(w_jax, Xr, yr, epoch=epoch)


# %% [markdown]
# The error names the function and the static argument whose new value made a new cache key.
# Had the loop run unguarded, it would have compiled a new program at every epoch, all correct.
#
# The fix: compute the schedule with `jnp.where` on a traced `epoch`; one program serves every epoch.
# `jnp.where` evaluates both candidate rates and selects one, which costs nothing for two
# scalars; for expensive branches, `lax.cond` (section 5) runs only the one that is taken.

# %%
# JAX: the fix, a traced epoch and jnp.where
@jax.jit
def train_step_jax(w, X, y, epoch):
    lr = jnp.where(epoch < warmup, base_lr * 0.5, base_lr)
    grad = 2 * X.T @ (X @ w - y) / len(y)
    return w - lr * grad


epochs_j = [jnp.asarray(e) for e in range(num_epochs)]
w_jax = train_step_jax(jnp.asarray(w0_np), Xr, yr, epochs_j[0])  # warm-up (epoch 0)
with timing.no_recompile("the JAX training loop"):
    for epoch in range(1, num_epochs):
        w_jax = train_step_jax(w_jax, Xr, yr, epochs_j[epoch])
print("JAX: one compilation for all epochs")


# %% [markdown]
# In PyTorch the same Python `if` would be no error, but no cure either: Dynamo guards on the
# Python `int` it branches on, so the step would recompile when `epoch` first changes and again
# when the branch flips. The natural PyTorch code computes the schedule outside the compiled
# step and passes the learning rate as a Python float; Dynamo guards on that value too, so the
# schedule's first change recompiles (default backend here):

# %%
# PyTorch: the natural code, the learning rate passed as a Python float
def train_step_torch(w, X, y, lr):
    grad = 2 * X.T @ (X @ w - y) / len(y)
    return w - lr * grad


train_step_c = torch.compile(train_step_torch)
Xr_t, yr_t = to_torch(Xr_np), to_torch(yr_np)
w_torch = train_step_c(to_torch(w0_np), Xr_t, yr_t, lrs[0])  # warm-up (epoch 0)

# %%
with expect_error(timing.RecompilationError, lines=3):
    with timing.no_recompile("the PyTorch training loop"):
        for epoch in range(1, num_epochs):
            w_torch = train_step_c(w_torch, Xr_t, yr_t, lrs[epoch])

# %% [markdown]
# Dynamo's error names the guard that failed: the value of `lr`, a Python float it had
# specialised on at the first call. Unguarded, the loop would have paid at least this one
# extra compilation, Inductor's code generation included, in the middle of training.
#
# The fix: pass the learning rate as a tensor (what `torch.optim` does for compiled optimisers
# with `lr=torch.tensor(...)`); its value is then data, not a guarded constant.

# %%
# PyTorch: the fix, the learning rate as a tensor
lrs_t = [torch.tensor(lr, device=torch_dev) for lr in lrs]
w_torch = train_step_c(to_torch(w0_np), Xr_t, yr_t, lrs_t[0])  # warm-up (epoch 0)
with timing.no_recompile("the PyTorch training loop"):
    for epoch in range(1, num_epochs):
        w_torch = train_step_c(w_torch, Xr_t, yr_t, lrs_t[epoch])
assert_close(w_torch, w_jax, rtol=1e-5, atol=1e-6, name="weights after the loop")
print("PyTorch: no recompilation, and the same weights as JAX")


# %% [markdown]
# The two fixes are mirror images. JAX needed the value *traced* instead of static, and
# PyTorch needed it *wrapped in a tensor* instead of a Python number; in both cases the
# changing number became data that flows through the compiled program rather than a constant
# baked into it. The final weights agree across frameworks, so the fixed loops compute the same
# schedule.

# %% [markdown]
# ## 5. Control flow
#
# **Key concepts**
# - Under `jax.jit` a traced value has no concrete value, so a Python `if`/`while` on it is an
#   error. `lax.cond`, `lax.while_loop` and `lax.scan` put the control flow *inside* the program.
# - Dynamo does not fail: it **breaks the graph**, runs the `if` in Python, and compiles the
#   rest as a second graph. `torch.cond` keeps both branches in one graph; PyTorch's
#   documentation classes it as a **prototype** feature (limited input and output types, API
#   may change).
# - Dynamo unrolls Python loops; `lax.scan` compiles one loop body however long the loop.
#
# Control flow is where the two compilers' designs meet the reader's code most directly.
# Models branch on data (skip a layer, clip a value, stop when converged), and loops of
# unknown length are common in numerical code. A PyTorch user writes these as Python `if` and
# `while`, and `torch.compile` accepts them: it compiles the tensor code around each branch
# and lets Python decide. JAX rejects the same code under `jit`, because the decision needs a
# value the tracer does not have; the remedy is to hand the decision to the compiler with
# `lax` control-flow primitives, which become part of the compiled program.
#
# The section asks what each approach costs: how many graphs Dynamo makes, what a graph break
# does to the time of a call, and how the size of the compiled program grows with a loop's
# length.
#
# ### 5.1 `if` on a traced value
#
# The natural code:

# %%
# JAX: the natural code, a Python if on the sum of x
def soft_clip_jax(x):
    if x.sum() > 0:  # needs the value of x
        return jnp.tanh(x)
    return x * 0.5


# %%
with expect_error(jax.errors.TracerBoolConversionError, lines=3):
    jax.jit(soft_clip_jax)(jnp.asarray(x_np))


# %% [markdown]
# The error is a `TracerBoolConversionError`: Python asked the tracer standing for
# `x.sum() > 0` to become `True` or `False`, and a tracer has no value to give. Its message
# names the function being traced and the argument the value depends on, and links to the
# error's documentation, which lists the fixes.
#
# The fix is `lax.cond(predicate, true_fn, false_fn, *operands)`, which compiles both branches
# and picks one at run time (on a `vmap`ped predicate it computes both and selects).
# PyTorch's counterpart `torch.cond(pred, true_fn, false_fn, operands)` is a *prototype*
# feature in PyTorch's feature classification: its documentation warns of limited support for
# input and output types and promises a more stable implementation later, so expect its rules
# to change between versions (the Python `if` below stays the portable choice).

# %%
# JAX: both branches compiled, one chosen at run time
@jax.jit
def soft_clip_jax(x):
    return jax.lax.cond(x.sum() > 0, jnp.tanh, lambda x: x * 0.5, x)


# %%
# PyTorch: the Python if runs eagerly; torch.cond is the compiled equivalent
def soft_clip_torch(x):
    if x.sum() > 0:
        return torch.tanh(x)
    return x * 0.5


def soft_clip_torch_cond(x):
    return torch.cond(x.sum() > 0, torch.tanh, lambda x: x * 0.5, (x,))


# %% [markdown]
# Parity on both branches: the input with all signs positive takes the `tanh` branch, the
# negated one the other branch.

# %%
for sign in (1, -1):
    xs = sign * np.abs(x_np)
    expected = soft_clip_torch(torch.from_numpy(xs))
    assert_close(soft_clip_jax(jnp.asarray(xs)), expected, rtol=1e-6)
    assert_close(soft_clip_torch_cond(torch.from_numpy(xs)), expected, rtol=1e-6)
print("lax.cond, torch.cond and the Python if agree on both branches")


# %% [markdown]
# What Dynamo does with the Python `if`: a **graph break**. PyTorch reports each break through
# its logging, `torch._logging.set_logs(graph_breaks=True)` in code or `TORCH_LOGS="graph_breaks"`
# in the environment (the `dynamo_logs` helper from section 1 collects the messages, and the
# short reason of each is printed). The `capture` helper counts the graphs Dynamo hands its backend.
# For a whole program, `TORCH_TRACE=/some/dir` writes a structured trace that the `tlparse`
# tool (installed separately) turns into an HTML report of every graph, break and recompile.

# %%
def break_reason(message):
    """The short reason in a graph-break log message ("Graph Break Reason: ..." and, when that
    line ends with a colon, the line that completes it)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(lines) if line.startswith("Graph Break Reason:")), None)
    if at is None:  # another PyTorch version's wording: show its first line
        return lines[0]
    reason = lines[at].split(":", 1)[1].strip()
    return f"{reason} {lines[at + 1]}" if reason.endswith(":") and at + 1 < len(lines) else reason


def graph_breaks(fn, *args):
    """The graphs Dynamo records for fn(*args), and the reason of each graph break it logs."""
    with dynamo_logs(graph_breaks=True) as log:
        graphs = capture(fn, *args)
    return graphs, [break_reason(message) for message in log]


for fn in (soft_clip_torch, soft_clip_torch_cond):
    graphs, reasons = graph_breaks(fn, torch.from_numpy(x_np))
    print(f"{fn.__name__}: {len(graphs)} graph(s), {len(reasons)} break(s) {reasons}")

# %% [markdown]
# The Python `if` splits the function: one graph computes `x.sum() > 0`, Python reads the
# result (the logged reason says Dynamo met a data-dependent branch), and the branch that runs
# is compiled as a graph of its own, so a call that later takes the other branch compiles
# that one too. `torch.cond` is recorded as one operator holding both branches, so there is
# one graph and no break.

# %% [markdown]
# **What a graph break costs**, measured: the same function compiled with its break and with
# `torch.cond`, against eager (inputs small, so overhead dominates). The input's sum is kept
# well away from zero: eager and compiled code add in different orders, and a sum that is
# zero up to rounding could take different branches.

# %%
xb = to_torch(x_np + 0.5)
soft_clip_compiled = torch.compile(soft_clip_torch)
soft_clip_cond_compiled = torch.compile(soft_clip_torch_cond)
with timing.cold_inductor_cache():  # the first-call column: compiled from empty caches
    graph_break = timing.compare(
        {
            "eager": lambda: soft_clip_torch(xb),
            "torch.compile, graph break": lambda: soft_clip_compiled(xb),
            "torch.compile, torch.cond": lambda: soft_clip_cond_compiled(xb),
        },
        rtol=1e-6,
    )
assert_close(soft_clip_compiled(xb), soft_clip_cond_compiled(xb), rtol=1e-6, name="graph break vs torch.cond")
print("the graph break and torch.cond compute the same result")
graph_break

# %% [markdown]
# Each compiled variant against eager, then the break against `torch.cond`, through the
# course's neutral "which is faster?" rule.
# With an 8-element input the function's own work is tiny, while a compiled call adds guard
# checks and, with a graph break, two compiled graphs plus the Python `if` between them
# (`torch.cond` keeps one graph but runs a higher-order operator). If a compiled variant is
# slower than eager, that per-call cost is larger than what compiling these few operations
# saves; with larger inputs the balance moves towards compiling.

# %%
for name in ("torch.compile, graph break", "torch.compile, torch.cond"):
    print(claims.faster(graph_break, "eager", name).explanation)
print(claims.faster(graph_break, "torch.compile, graph break", "torch.compile, torch.cond").explanation)


# %% [markdown]
# The last line is the cost of the break itself: the same function compiled both ways, one
# with two graphs and a Python `if` between them, one with a single graph holding
# `torch.cond`. Whichever way it went here, the result is the same (the check above the
# table), so the choice between them is about speed, portability across PyTorch versions
# (`torch.cond` is a prototype) and whether the function must compile as one graph
# (`fullgraph=True`, section 7, refuses the break).

# %% [markdown]
# ### 5.2 Loops whose length depends on data: `lax.while_loop`
#
# Newton's method for √a runs until the update is small. In JAX the loop lives in the program;
# in PyTorch it is a Python loop (each test of the tensor condition synchronises with the device).
#
# `lax.while_loop(cond, body, init)` carries a state (here a tuple of arrays) through the loop:
# `cond` reads the state and returns a scalar boolean, `body` returns the next state, which
# must have the same structure, shapes and dtypes as `init`. That last rule is the price of
# compiling the loop once: the compiler must know the size of the state before it knows how
# many iterations will run. A cap on the iterations (`i < 100`) keeps a loop that fails to
# converge from running forever inside the compiled program.

# %%
# PyTorch: a Python loop; the test reads a tensor value every iteration
def newton_sqrt_torch(a, tol=1e-6):
    x, iters = a.clone(), 0
    while True:
        new = 0.5 * (x + a / x)
        step, x, iters = new - x, new, iters + 1
        if (step / x).abs().max() <= tol or iters >= 100:
            return x, iters


# %%
# JAX: the loop and its test inside one compiled program
@jax.jit
def newton_sqrt_jax(a, tol=1e-6):
    def cond(state):
        x, step, i = state
        return (jnp.abs(step / x).max() > tol) & (i < 100)

    def body(state):
        x, _, i = state
        new = 0.5 * (x + a / x)
        return new, new - x, i + 1

    x, _, iters = jax.lax.while_loop(cond, body, (a, jnp.full_like(a, jnp.inf), 0))
    return x, iters


# %%
a_np = np.array([2.0, 9.0, 1e4], dtype=np.float32)
root_j, iters_j = newton_sqrt_jax(jnp.asarray(a_np))
root_t, iters_t = newton_sqrt_torch(torch.from_numpy(a_np))
assert_close((root_j, iters_j), (root_t, iters_t), rtol=1e-6)
assert_close(root_t, np.sqrt(a_np), rtol=1e-6)
print(f"both converged in {iters_t} iterations: {root_t.tolist()}")


# %% [markdown]
# Same roots, same iteration count, and both match NumPy's `sqrt`. The iteration count is set
# by the hardest element: all three entries keep iterating until the largest relative step is
# below the tolerance, because the loop's condition is one scalar for the whole array.

# %% [markdown]
# ### 5.3 Fixed-length loops: `lax.scan` vs Dynamo's unrolling
#
# An exponential moving average over a sequence. `lax.scan` traces the body once; Dynamo
# records a Python loop as one copy of the body per iteration, so the graph grows with the length.
#
# `lax.scan(body, init, xs)` is JAX's compiled loop over a sequence: `body(carry, x)` gets
# the carried state and one slice of `xs` along its first axis, and returns the new carry and
# one output, which `scan` stacks. It fits loops whose length is known when tracing (the
# length of `xs`), which covers time steps, layers applied in turn, and training steps over a
# stack of batches (lesson 04 fuses steps this way).

# %%
# PyTorch: a Python loop that Dynamo unrolls
def ema_torch(xs, decay=0.9):
    avg, out = torch.zeros_like(xs[0]), []
    for x in xs:  # Dynamo unrolls this loop
        avg = decay * avg + (1 - decay) * x
        out.append(avg)
    return torch.stack(out)


# %%
# JAX: lax.scan carries the average and stacks each step's output
def ema_jax(xs, decay=0.9):
    def body(avg, x):
        avg = decay * avg + (1 - decay) * x
        return avg, avg

    return jax.lax.scan(body, jnp.zeros_like(xs[0]), xs)[1]


# %%
seq = rng.standard_normal((40, 3), dtype=np.float32)
assert_close(ema_jax(jnp.asarray(seq)), ema_torch(torch.from_numpy(seq)), rtol=1e-5, atol=1e-6)

# %%
for length in (10, 40):
    ops_torch = op_count(capture(ema_torch, torch.from_numpy(seq[:length])))
    eqns_jax = len(jax.make_jaxpr(ema_jax)(jnp.asarray(seq[:length])).eqns)
    print(f"length {length}: Dynamo graph has {ops_torch} ops; the jaxpr has {eqns_jax} equations "
          "(one scan holding the body)")

# %% [markdown]
# Quadruple the length and Dynamo's graph grows about fourfold, while the jaxpr stays the same
# size: its one `scan` equation holds the body once. For a loop of ten steps neither matters;
# for a sequence of thousands, an unrolled graph means long compile times and a large program,
# which is why PyTorch code keeps such loops outside the compiled region or compiles only the
# body.

# %% [markdown]
# ## 6. Worked example: K-means
#
# **Key concepts**
# - K-means repeats three steps: **assign** each point to its nearest centroid, **update** each
#   centroid to the mean of its points, **check** whether the centroids still move.
# - The number of iterations depends on the data: in JAX a `lax.while_loop` under `jit` (one
#   program for the whole run); in PyTorch a Python loop, with `torch.compile` on the step.
#
# The sections so far took each mechanism apart on a toy function. K-means puts them together
# in a small real algorithm: a step that is pure array code (distances, an `argmin`, a
# per-cluster sum), a loop whose length the data decides, and a convergence test that needs a
# value. It is also the shape of many training loops: repeat a step until a criterion is met.
# The question is how each framework's idiomatic version compiles, and what that does to
# the run time.
#
# The same seeded data and initial centroids for both frameworks:

# %%
X_km, _ = kmeans.make_blobs(S.n_points, S.k, seed=0)
C0_km = kmeans.initial_centroids(X_km, S.k, seed=0)
tol, max_iter = 1e-4, 100
print(f"{len(X_km)} points, {S.k} clusters")


# %%
# PyTorch: one step, and the loop with its convergence check in Python
def kmeans_step_torch(X, C):
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)  # (n, k)
    labels = d2.argmin(dim=1)
    counts = torch.zeros_like(C[:, 0]).index_add_(0, labels, torch.ones_like(X[:, 0]))  # (k,)
    sums = torch.zeros_like(C).index_add_(0, labels, X)  # (k, d)
    new = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], C)
    return new, labels


def kmeans_torch(X, C, tol, max_iter, step=kmeans_step_torch):
    iterations = 0
    while iterations < max_iter:
        new, labels = step(X, C)
        shift = (new - C).abs().max()
        C, iterations = new, iterations + 1
        if shift <= tol:  # a tensor condition: synchronises, and breaks Dynamo's graph
            break
    return C, labels, iterations


# %%
# JAX: the same step
def kmeans_step_jax(X, C):
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)  # (n, k)
    labels = d2.argmin(axis=1)
    counts = jax.ops.segment_sum(jnp.ones(len(X), X.dtype), labels, num_segments=C.shape[0])
    sums = jax.ops.segment_sum(X, labels, num_segments=C.shape[0])  # (k, d)
    new = jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1)[:, None], C)
    return new, labels


# %% [markdown]
# The two steps differ in one kind of operation. PyTorch counts and sums the points of each
# cluster with the in-place `index_add_`; JAX has no in-place updates, and
# `jax.ops.segment_sum` computes the same per-cluster counts and sums as new arrays. For a centroid
# that lost all its points, `counts.clamp(min=1)` (JAX: `jnp.maximum(counts, 1)`) divides its zero
# sum by 1 rather than by 0 (which gives NaN), and the `where` keeps the centroid where it was
# rather than at that quotient, the origin.
#
# The JAX loop: the convergence test is the `cond` of a `lax.while_loop`, so the whole run,
# however many iterations it takes, is one compiled program.

# %%
# JAX: the whole loop, convergence test included, in one compiled program
@jax.jit
def kmeans_jax(X, C, tol, max_iter):
    def cond(state):
        _, _, i, shift = state
        return (i < max_iter) & (shift > tol)

    def body(state):
        C, _, i, _ = state
        new, labels = kmeans_step_jax(X, C)
        return new, labels, i + 1, jnp.abs(new - C).max()

    init = (C, jnp.zeros(len(X), jnp.int32), 0, jnp.asarray(jnp.inf, X.dtype))
    C, labels, i, _ = jax.lax.while_loop(cond, body, init)
    return C, labels, i


# %% [markdown]
# Same clusters, same number of iterations, and both agree with the float64 NumPy reference:

# %%
X_t, C0_t = to_torch(X_km), to_torch(C0_km)
X_j, C0_j = jnp.asarray(X_km), jnp.asarray(C0_km)
C_t, labels_t, iters_t = kmeans_torch(X_t, C0_t, tol, max_iter)
C_j, labels_j, iters_j = kmeans_jax(X_j, C0_j, tol, max_iter)
reference = kmeans.numpy_kmeans(X_km, C0_km, tol=tol, max_iter=max_iter)
assert_close((C_t, labels_t, iters_t), (C_j, labels_j, iters_j), rtol=1e-5, atol=1e-5)
assert_close((C_j, labels_j, iters_j), (reference.centroids, reference.labels, reference.n_iter), rtol=1e-5, atol=1e-5)
print(f"converged after {iters_t} iterations in both frameworks, identical labels")

# %% [markdown]
# The float64 NumPy reference is the oracle: two float32 implementations could agree with each
# other and still both be wrong; agreeing with an independent computation in higher precision
# as well is far harder to do by accident. The iteration counts are compared as well, since the final labels alone could agree
# after different numbers of iterations.

# %% [markdown]
# The three steps, iteration by iteration (history recorded by running the jitted JAX step
# once per iteration — one compiled program serves every iteration):

# %%
step_jit = jax.jit(kmeans_step_jax)
history, C = [], C0_j
for _ in range(max_iter):
    new, labels = step_jit(X_j, C)
    shift = float(jnp.abs(new - C).max())
    history.append({"centroids": np.asarray(C), "labels": np.asarray(labels), "new_centroids": np.asarray(new), "shift": shift})
    C = new
    if shift <= tol:
        break
axes = kmeans.plot_steps(X_km, history, tol=tol)
plt.tight_layout()

# %% [markdown]
# Each column is one iteration (the first two and the last), each row one of the three steps:
# points coloured by their nearest centroid (assign), arrows from each old centroid to the
# mean of its points (update), and the largest move on a log scale against the dashed
# tolerance line (check). The run stops at the first iteration whose largest move is at or
# below `tol`, which the last column's title says.

# %% [markdown]
# What `torch.compile` makes of the whole loop: the tensor `if` is a graph break *inside a
# loop*, which Dynamo does not split; it gives up on the loop's frame (runs it in Python) and
# compiles the functions the loop calls. The graphs it records for the whole loop, next to
# those of the step alone:

# %%
loop_graphs, loop_breaks = graph_breaks(kmeans_torch, X_t, C0_t, tol, max_iter)
step_graphs = capture(kmeans_step_torch, X_t, C0_t)
print(f"kmeans_torch: {len(loop_graphs)} graph(s) of {op_count(loop_graphs)} ops, breaks: {loop_breaks}")
print(f"kmeans_step_torch alone: {len(step_graphs)} graph(s) of {op_count(step_graphs)} ops")

# %% [markdown]
# Compare the two lines: where their graph and operation counts match, what Dynamo recorded
# for the whole loop is the step's graph, and the logged break says whether it gave
# up on the loop's own frame at the tensor condition and ran that frame eagerly; then nothing
# of the loop itself is compiled. That is the PyTorch counterpart of JAX's
# error in 5.1: where JAX refuses, Dynamo compiles what it can and leaves the rest to Python.

# %% [markdown]
# So the idiomatic PyTorch version compiles the **step** and keeps the Python loop. Timing the
# three (results checked equal first). The compiled PyTorch step's first call starts from an
# empty Inductor cache; `kmeans_jax` was already compiled for these shapes by the parity check
# above, so its *first call* column is a warm call, not a compilation:

# %%
step_compiled = torch.compile(kmeans_step_torch)
kmeans_variants = {
    "PyTorch eager loop": lambda: kmeans_torch(X_t, C0_t, tol, max_iter),
    "PyTorch loop, compiled step": lambda: kmeans_torch(X_t, C0_t, tol, max_iter, step=step_compiled),
    "JAX while_loop under jit": lambda: kmeans_jax(X_j, C0_j, tol, max_iter),
}
call_log = []  # every call's variant, in order: says which variant ran just before which
logged = {name: partial(lambda name, fn: call_log.append(name) or fn(), name, fn) for name, fn in kmeans_variants.items()}
with timing.cold_inductor_cache():  # the compiled step's first call: from an empty Inductor cache
    kmeans_times = timing.compare(logged, rtol=1e-5, atol=1e-5)
kmeans_times

# %%
for name in ("PyTorch loop, compiled step", "JAX while_loop under jit"):
    print(claims.faster(kmeans_times, "PyTorch eager loop", name).explanation)

# %% [markdown]
# The table and the verdicts read the same rounds through two different summaries. The table's
# `time / PyTorch eager loop` column divides one median by another: each variant's times
# sorted on their own, the middle one taken. A verdict takes, round by round, the eager time over
# the other variant's time from the *same* round (timed back to back, so load that hits a whole
# round cancels), and then the median of those ratios. When every round of a variant looks
# alike the two agree; when a variant's times fall into two clusters they need not. The median
# of a two-cluster set sits in whichever cluster holds just over half the rounds, and the median
# of the paired ratios can land in the other, so the two can even point opposite ways. Both
# summaries side by side, as eager time over the variant's (above 1: the variant was quicker):

# %%
eager_name, jax_name = "PyTorch eager loop", "JAX while_loop under jit"
summaries = ["| variant | eager median / its median | median of the per-round ratios eager / it |", "|---|---:|---:|"]
for name in ("PyTorch loop, compiled step", jax_name):
    paired = float(np.median(kmeans_times.ratios(eager_name, name)))
    summaries.append(f"| {name} | {kmeans_times.speedup(name):.2f} | {paired:.2f} |")
display(Markdown("\n".join(summaries)))


# %% [markdown]
# Where the two columns differ, the next question is what splits the rounds. `compare` runs the
# variants of each round in a shuffled order, so in some rounds JAX runs right after the eager
# PyTorch loop, in others right after the compiled step or right after its own block of the
# round before. The log of calls taken above rebuilds that order (each timed block is a known
# number of calls of one variant), and the JAX times are grouped by the variant timed just
# before them:

# %%
def timed_blocks(log, comparison):
    """The timed blocks in the order they ran, from the call log: (variant, index of its block)."""
    numbers = {name: m.number for name, m in comparison.measurements.items()}
    n_rounds = len(comparison.measurements[comparison.baseline].times)
    timed, blocks, seen, at = log[len(log) - n_rounds * sum(numbers.values()) :], [], Counter(), 0
    while at < len(timed):
        blocks.append((timed[at], seen[timed[at]]))
        seen[timed[at]], at = seen[timed[at]] + 1, at + numbers[timed[at]]
    return blocks


# %%
blocks = timed_blocks(call_log, kmeans_times)
after = {}
for (before, _), (name, i) in zip(blocks, blocks[1:], strict=False):
    if name == jax_name:  # its ratio pairs it with the eager block of the same round
        after.setdefault(before, []).append((kmeans_times.measurements[name].times[i], kmeans_times.ratios(eager_name, name)[i]))
group_medians, jax_fastest = [], min(kmeans_times.measurements[jax_name].times)
for before, rows in sorted(after.items()):
    times, ratios = zip(*rows, strict=True)
    group_medians.append(float(np.median(times)))
    slow = sum(t > 2 * jax_fastest for t in times)
    print(f"JAX right after {before:28s}: {len(rows):3d} rounds, median {timing.format_seconds(group_medians[-1]):>9s}, "
          f"fastest {timing.format_seconds(min(times)):>9s}, {slow:3d} over 2x JAX's fastest block, "
          f"median eager / JAX {float(np.median(ratios)):.2f}")
of_medians, paired = kmeans_times.speedup(jax_name), float(np.median(kmeans_times.ratios(eager_name, jax_name)))
print(f"This run: {kmeans_times.measurements[jax_name].number} call(s) per JAX block; the groups' medians span "
      f"{max(group_medians) / min(group_medians):.1f}x, and for JAX the two "
      f"columns read {of_medians:.2f} (ratio of medians) and {paired:.2f} (median of paired ratios), "
      "each above 1 where it puts JAX ahead.")

# %% [markdown]
# Read the groups against the two columns; the last line puts this run's numbers side by side.
# If JAX's median time differs several-fold between the groups, its times are the two clusters
# the columns can disagree over: which one the table's median falls in depends on which group
# holds just over half of JAX's rounds, and the per-round ratios, paired with the eager time of
# each round, can fall in the other. Then neither summary is a speed of the JAX loop on its
# own: each is a mixture of the groups, in proportions the shuffle chose.
#
# What can split them is the moment each block starts. Every block but the first starts right
# after the one before it, so the process has just been computing without pause, and every
# timed call waits for its result before the next one starts. On a busy machine (more runnable
# threads than cores) a call that waits at such a moment can wait milliseconds for a core
# before its work goes on, whichever variant ran before it: the other framework's, or JAX's own
# block of the round before. A block of many calls spreads such a wait over all of them; in a
# block of a call or two (the last line gives the count) it can be most of the block's time.
# Two numbers of each group read that: its *fastest* block, and how many of its blocks took
# *over 2x* JAX's fastest block. Where
# the groups' fastest blocks are alike, the loop could run as fast after each variant; if a
# group's median is then higher and more of its blocks are over 2x, the groups differ in how
# often a block was slow, not in how fast the loop runs after that variant; where the fastest
# blocks differ, what ran before changed even the best block's speed. Slow blocks in the group
# after JAX's own block, where that group has rounds, say the other framework is not needed for
# them. The groups show whether this run had slow blocks and after which variant, not what each
# slow block waited for. If the groups' medians are close, the rounds are alike, and the
# verdicts above read as they stand.

# %% [markdown]
# If the compiled step comes out slower than the eager one, two suspects can be told apart.
# The first is threads: Inductor's C++ kernels can split even small loops across PyTorch's
# threads (OpenMP) and wait at a barrier for all of them, so one thread that waits for a core
# stalls the whole kernel, while eager PyTorch runs operations this small on one thread. The
# second is the size of the work: with `n_points` points (600 in smoke mode, 3,000 in full) a
# step is microseconds to tens of microseconds of arithmetic, comparable to what a compiled
# call adds (guard checks, a call into generated code). The cell below times the PyTorch step
# alone, eager against compiled, with PyTorch's threads as set for this lesson and again with
# one thread (a single line where PyTorch already had one), then restores the lesson's setting.

# %%
lesson_threads = contention.thread_policy()["torch"]
step_alone = {}
for n in dict.fromkeys((lesson_threads, 1)):
    contention.set_threads(n)
    step_alone[n] = timing.compare(
        {"eager step": lambda: kmeans_step_torch(X_t, C0_t), "compiled step": lambda: step_compiled(X_t, C0_t)},
        rtol=1e-5, atol=1e-5,
    )
contention.set_threads(lesson_threads)
said = False  # what to do about a busy machine is said once in this cell
for n, c in step_alone.items():
    c.remedy_said = said
    print(f"PyTorch with {n} thread(s): {claims.faster(c, 'eager step', 'compiled step').explanation}")
    said = c.remedy_said


# %% [markdown]
# Read the lines against each other (a line that could not judge gives the ratio of eager
# time over compiled time instead, above 1 meaning the compiled step was quicker). Where the
# compiled step loses with the lesson's threads and wins with one, the threads made it slower,
# not the size of the work. Where it loses with both, a compiled call's fixed cost outweighs
# this little work. Where it wins with both after losing in the loop's rounds above, what
# slowed it there came from around it (the other variants' blocks, the load at that moment),
# not from the step. Where the line with the lesson's threads and the loop's rounds disagree
# the other way (the compiled step ahead in the loop, behind here), the same step was timed in
# two settings, inside the loop with the other variants' blocks around it and here on its own,
# at two moments of the machine's load: a rerun on a quiet machine says whether the
# difference stays.
# The Python loop around the step, with its synchronising convergence test, is the same in
# both PyTorch rows of the table above. The JAX row keeps the loop and its test inside one
# compiled program; how it compares depends on the same balance between the work per
# iteration and the fixed costs around it.

# %% [markdown]
# ## 7. Debugging compiled code, donation, caches
#
# **Key concepts**
# - Inside `jax.jit`, `print` runs at trace time (once per trace) and shows tracers;
#   `jax.debug.print` runs every call and shows values. `jax.disable_jit()` runs everything
#   eagerly for a debugger.
# - In PyTorch, `torch.compiler.disable` keeps a function out of the graph (it runs in Python:
#   the eager fallback, at the price of a graph break); `fullgraph=True` makes a break an error.
# - `donate_argnums` lets XLA reuse an input's buffer for the output; PyTorch's in-place
#   methods (`sub_`) do that by hand.
# - Both can keep a **persistent compilation cache** on disk so a new process can skip the
#   backend's compilation (it still traces, or runs Dynamo): Inductor's is on by default, JAX's
#   once `jax_compilation_cache_dir` is set (and by default it stores only programs that took
#   at least a second to compile; section 7.3 lowers that threshold to 0).
#
# Compiled code is harder to look into than eager code, and a PyTorch user's habits do not all
# carry over. Under `torch.compile` a `print` or a breakpoint still works, because Dynamo
# hands anything it cannot record back to Python (at the cost of a graph break). Under
# `jax.jit` the function body runs only while tracing, so a `print` shows tracers once per
# trace and not on the calls that reuse the compiled program. This section shows the tools
# each framework offers for looking inside, then two ways compiled code manages memory and
# time across calls: reusing buffers, and keeping compiled programs on disk.
#
# ### 7.1 Seeing values inside compiled code
#
# The function below prints twice, once with Python's `print` and once with `jax.debug.print`,
# and is called three times: twice compiled (the second call hits the cache) and once under
# `jax.disable_jit()`. Count the lines each call prints.

# %%
# JAX: print at trace time, jax.debug.print at run time
@jax.jit
def normalise(x):
    print("print sees:", x)  # trace time only
    jax.debug.print("jax.debug.print sees: {}", x[:3])  # every call
    return x / jnp.linalg.norm(x)


normalise(jnp.arange(1.0, 5.0))
normalise(jnp.arange(2.0, 6.0))  # cached: the Python print does not run again
with jax.disable_jit():
    normalise(jnp.arange(1.0, 5.0))  # eager: print sees a concrete array


# %% [markdown]
# The first call prints a tracer (a shape and a dtype, no values; how a tracer prints differs
# between JAX versions)
# and then the real values through `jax.debug.print`. The second call reuses the compiled
# program, so only `jax.debug.print`, which was compiled into it, prints. Under
# `disable_jit` the function runs as plain Python and both see concrete arrays, which is also
# when a Python debugger (`breakpoint()`) can stop inside it.
#
# PyTorch: a helper that Dynamo should not trace (logging, a NumPy call, an unsupported
# library) is marked with `torch.compiler.disable`; it runs eagerly between two graphs.

# %%
# PyTorch: a helper kept out of the graph runs eagerly between two graphs
@torch.compiler.disable
def log_norm(x):
    print(f"norm is {np.linalg.norm(x.cpu().numpy()):.3f}")  # plain Python, outside the graph


def centre_and_normalise_torch(x):
    x = x - x.mean()
    log_norm(x)  # the graph breaks here; Python runs the helper
    return x / torch.linalg.norm(x)


graphs, reasons = graph_breaks(centre_and_normalise_torch, torch.arange(1.0, 5.0))
print(f"{len(graphs)} graphs, {len(reasons)} break(s):", reasons)
x4 = np.arange(1.0, 5.0, dtype=np.float32)
assert_close(centre_and_normalise_torch(torch.from_numpy(x4)), normalise(jnp.asarray(x4 - x4.mean())), rtol=1e-6)

# %% [markdown]
# Two graphs and one break: the code before `log_norm` and the code after it are compiled
# separately, and the logged reason says the call was to a function marked as skipped. The
# helper's `print` runs on every call, as in eager PyTorch. The parity check then compares the
# result with JAX's `normalise`, given the same centred input, and both of its calls print too:
# the second `norm is` line comes from the eager PyTorch call, the last line from the
# `jax.debug.print` compiled into `normalise`, which runs on every call.

# %% [markdown]
# With `fullgraph=True` Dynamo refuses to fall back to eager, the closest PyTorch gets to
# JAX's strictness:

# %%
with expect_error(RuntimeError, lines=2):  # torch._dynamo.exc.Unsupported, a RuntimeError
    torch.compile(centre_and_normalise_torch, fullgraph=True, backend="eager")(torch.arange(1.0, 5.0))

# %% [markdown]
# The error is Dynamo's report of the break it would otherwise have made. `fullgraph=True` is
# worth using on the hot function of a model: it turns a silent slowdown into an error at the
# first call, as `jax.jit` does by design.
#
# ### 7.2 Buffer donation vs in-place updates
#
# A parameter update `w - lr * g` normally allocates a new array. Donating `w` lets XLA write
# the result into `w`'s buffer; the donated array is then deleted.
#
# Why does JAX need a keyword for what PyTorch does with `sub_`? JAX arrays are immutable: a
# jitted function cannot change its inputs, so without donation an update holds the old and
# the new weights at the same time (the compiled programs' own memory figures, below, show
# what that comes to).
# `donate_argnums` is a promise from the caller that it will not use the argument again, which
# lets XLA reuse its buffer for an output of the same shape and dtype.

# %%
# JAX: donate w, so that the update may reuse its buffer
update = jax.jit(lambda w, g: w - 0.1 * g, donate_argnums=0)
w_j, g_j = jnp.ones(1_000), jnp.full(1_000, 2.0)
pointer = w_j.unsafe_buffer_pointer()
w_new = update(w_j, g_j)
print("donated input deleted:", w_j.is_deleted(), "| output reuses its buffer:", w_new.unsafe_buffer_pointer() == pointer)

# %%
with expect_error(RuntimeError):
    w_j + 1  # the donated array can no longer be used

# %% [markdown]
# What donation saves, from XLA's account of the compiled update (`memory_analysis()` of the
# compiled program: its arguments, outputs, the outputs written into an argument's buffer,
# and temporaries), compiled for the same shapes with and without donation:

# %%
spec = jax.ShapeDtypeStruct((1_000,), jnp.float32)
held = {}
for donate in ((), (0,)):
    m = jax.jit(lambda w, g: w - 0.1 * g, donate_argnums=donate).lower(spec, spec).compile().memory_analysis()
    held[donate] = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes + m.temp_size_in_bytes
    print(f"donate_argnums={donate}: arguments {m.argument_size_in_bytes:,} B + output {m.output_size_in_bytes:,} B"
          f" - aliased {m.alias_size_in_bytes:,} B + temporaries {m.temp_size_in_bytes:,} B = {held[donate]:,} B")
print(f"with donation the update needs {held[(0,)] / held[()]:.2f} of the memory it needs without")

# %% [markdown]
# The first printed line said whether the donated input was deleted and whether the output
# landed in its buffer; the error shows what deletion means for the caller; the memory figures
# count the buffers each compiled update holds at once (here `w`, `g` and the new `w`: the
# gradient is held either way, so donating `w` saves the new weights' copy, not half of
# everything). The PyTorch twin needs no
# promise, because a tensor can be changed in place: `sub_` writes into the memory it already
# has.

# %%
# PyTorch: the in-place method reuses the tensor's own memory
w_t, g_t = torch.ones(1_000, device=torch_dev), torch.full((1_000,), 2.0, device=torch_dev)
pointer = w_t.data_ptr()
w_t.sub_(0.1 * g_t)
print("same memory after sub_:", w_t.data_ptr() == pointer)
assert_close(w_t, w_new)

# %% [markdown]
# ### 7.3 Persistent compilation caches: the first call of a second process
#
# A new process normally compiles from scratch. Both frameworks can keep compiled programs on
# disk: JAX with `jax_compilation_cache_dir` (plus two thresholds that decide which programs
# are worth storing), PyTorch's Inductor with its FX graph cache in `TORCHINDUCTOR_CACHE_DIR`
# (on by default, normally under the system's temporary directory). The script below times the
# first call of the same function in both and reports the cache's own hit counters; we run it
# twice against one empty temporary folder. (The function is two matmuls, which Inductor hands
# to the BLAS library: it then generates no C++ kernel, so the empty-cache run does not also
# wait for the C++ compiler.)

# %%
CACHE_SCRIPT = '''
import sys
import course_utils.strict; course_utils.strict.install()
import jax, jax.numpy as jnp, torch
from course_utils import timing
from torch._dynamo.utils import counters
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # store every program
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)

def f_jax(x):
    return x @ x @ x

def f_torch(x):
    return x @ x @ x

print(timing.bench(jax.jit(f_jax), jnp.eye(64), target_s=0.01, min_repeats=1).first_call_s, len(hits))
print(timing.bench(torch.compile(f_torch), torch.eye(64), target_s=0.01, min_repeats=1).first_call_s,
      counters["inductor"]["fxgraph_cache_hit"])
'''

# %%
with tempfile.TemporaryDirectory() as cache:
    # env.child_env: on a TPU, which one process at a time may open, the child's JAX uses the CPU
    child_env = {**env.child_env(), "TORCHINDUCTOR_CACHE_DIR": os.path.join(cache, "inductor")}
    runs = []
    for _ in range(2):  # first with an empty cache, then with the cache the first run filled
        out = subprocess.run([sys.executable, "-c", CACHE_SCRIPT, os.path.join(cache, "jax")],
                             env=child_env, capture_output=True, text=True, check=True)
        runs.append([line.split() for line in out.stdout.splitlines()[-2:]])
for i, name in enumerate(("jax.jit", "torch.compile")):
    (cold, cold_hits), (warm, warm_hits) = runs[0][i], runs[1][i]
    print(f"{name}: first call in a new process {timing.format_seconds(float(cold))} with an empty cache "
          f"({cold_hits} cache hits), {timing.format_seconds(float(warm))} with the cache filled ({warm_hits} "
          f"cache hits); empty / filled = {float(cold) / float(warm):.2f} (above 1: the filled cache saved time)")

# %% [markdown]
# Each of these is one first call per process, not repeated rounds, so no verdict is drawn
# from it: the hit counters say whether the cache was used, the times what it came to this
# once. JAX's counter counts every program the process read back, including the few small
# ones that build the input `jnp.eye(64)`, so it can exceed one for one timed function;
# Inductor's counts FX graphs, here the one graph of `f_torch`. The second process still traces (JAX) or runs Dynamo (PyTorch); what the cache skips is
# the backend compilation, so it saves the most where the backend compiles the longest; a
# program that compiles in milliseconds can take longer to read back than to compile (then
# empty / filled is below 1). The
# empty-cache numbers are also the honest answer to "how long is the first call": they include
# everything a new process pays for that call once the frameworks are imported: `import jax`
# and `import torch` are not timed, but Inductor's own modules, which `torch.compile` imports
# on its first call, are, with the cache filled too (and the empty-cache run also writes the
# cache). Section 3's reports emptied the same caches inside this notebook's process instead,
# whose modules, Inductor's included, were already imported.

# %% [markdown]
# ## 8. `vmap` for batched simulation
#
# **Key concepts**
# - Write the step for **one** environment, then `vmap` it: the batch dimension is added for you.
# - The loop calls the step once per environment (one jitted call each in JAX, every operation
#   of the step dispatched eagerly in PyTorch); `vmap` and hand-batching make one call for all
#   of them.
# - Article 004 says JAX simulates batched RL environments faster than PyTorch (3200 against
#   1400 frames per second, 2.3x). That compares **frameworks**, and its pairing is eager
#   PyTorch against `vmap` + `jit` JAX: two changes at once. Section 8.2 judges it in that
#   pairing, labelled as the article's, and in the two fair ones (eager against eager, compiled
#   against compiled). Section 8.1 first asks a different, within-framework question: what
#   `vmap` gains over a loop and over batching by hand.
#
# Reinforcement learning steps many copies of an environment at once, and the step function is
# where the two frameworks' styles differ most visibly. A PyTorch user batches by hand: write
# the step for a `(n_envs, 4)` state tensor and index along the last axis everywhere. A JAX
# user writes the step for **one** state vector and lets `jax.vmap` add the batch axis,
# which keeps the physics readable and testable on a single example. `torch.func.vmap` brings
# the same transformation to PyTorch. The question this section asks is what each style costs
# in speed, and then what the article's 2.3x claim measures.
#
# The environment step (from `course_utils.cartpole`), written for one environment, with
# `where` instead of `if` so that it can be batched:

# %%
print(inspect.getsource(cartpole.jax_step))

# %%
states_np, actions_np = cartpole.initial_states(S.n_envs, seed=0), cartpole.random_actions(S.n_envs, seed=0)
one_t = cartpole.torch_step(torch.from_numpy(states_np[0]), torch.tensor(actions_np[0]))
one_j = cartpole.jax_step(jnp.asarray(states_np[0]), jnp.asarray(actions_np[0]))
assert_close(one_t, one_j, rtol=1e-6, atol=1e-7, name="one environment step")
one_j

# %% [markdown]
# One environment, one step: the result is a tuple of the new state (cart position and
# velocity, pole angle and angular velocity), the reward and the done flag, and it agrees
# between the frameworks. Everything below batches this function; a
# batched version that disagrees with it would be a bug in the batching, not in the physics.

# %% [markdown]
# ### 8.1 Within one framework: loop, `vmap`, batching by hand
#
# Six ways to step all `n_envs` environments once. The loops get their per-environment rows
# ready-made, so they are timed on stepping and on gathering the per-environment results into
# batched arrays (what the batched variants return), not on slicing.

# %%
S_t, A_t = to_torch(states_np), to_torch(actions_np)
S_j, A_j = jnp.asarray(states_np), jnp.asarray(actions_np)
rows_t, acts_t = list(S_t.unbind(0)), list(A_t.unbind(0))
rows_j, acts_j = [jnp.asarray(s) for s in states_np], [jnp.asarray(a) for a in actions_np]

step_vmap_torch = torch.func.vmap(cartpole.torch_step)
step_vmap_jax = jax.jit(jax.vmap(cartpole.jax_step))
step_batch_jax = jax.jit(cartpole.jax_step_batch)
fps_variants = {
    "PyTorch": {
        "PyTorch loop": lambda: cartpole.torch_loop(rows_t, acts_t),
        "PyTorch torch.func.vmap": lambda: step_vmap_torch(S_t, A_t),
        "PyTorch hand-batched": lambda: cartpole.torch_step_batch(S_t, A_t),
    },
    "JAX": {
        "JAX loop (jit step)": lambda: cartpole.jax_loop(rows_j, acts_j),
        "JAX vmap + jit": lambda: step_vmap_jax(S_j, A_j),
        "JAX hand-batched + jit": lambda: step_batch_jax(S_j, A_j),
    },
}
assert_close(step_vmap_torch(S_t, A_t), step_vmap_jax(S_j, A_j), rtol=1e-6, atol=1e-7, name="vmapped step")

# %% [markdown]
# `torch.func.vmap` and `jax.vmap` take the same one-environment function and return a batched
# one; the check shows that the two batched steps agree. Only JAX's is compiled here: JAX code
# is normally run under `jit`, and `torch.func.vmap` runs eagerly unless wrapped in
# `torch.compile` (section 8.2 compiles the hand-batched PyTorch step instead).

# %% [markdown]
# These questions compare variants *within* a framework, so each framework's three variants are
# timed interleaved with each other (`compare` checks first that they agree); the table then
# puts all six side by side, with how busy the machine was during each framework's rounds.

# %%
fps = {fw: timing.compare(variants, rtol=1e-6, atol=1e-7) for fw, variants in fps_variants.items()}
steps_per_s = {name: S.n_envs / m.median for c in fps.values() for name, m in c.measurements.items()}
base = steps_per_s["PyTorch loop"]
display(Markdown("| variant | environment steps / s | × the PyTorch loop's steps / s |\n|---|---:|---:|\n" + "\n".join(
    f"| {name} | {sps:,.0f} | {sps / base:,.2f} |" for name, sps in steps_per_s.items())
    + "".join(f"\n\n({fw}'s rounds: {c.contention.text()})" for fw, c in fps.items())))

# %% [markdown]
# Read the table in two blocks. Within each framework, the loop row pays one call of the step
# per environment, so its steps per second are bounded by section 2's costs (JAX: one jitted
# call per environment; PyTorch: one eager dispatch per operation of the step); the
# batched rows pay one call for all `n_envs` environments. The last column puts every row on
# one scale, the PyTorch loop's rate, but rows from different frameworks were timed in
# different rounds, so compare across blocks with care.

# %% [markdown]
# `vmap` against the loop and against batching by hand, in each framework, through the neutral
# "which is faster?" rule (a teaching measurement, not an article's claim):

# %%
said = False  # what to do about a busy machine is said once in this cell
for fw, vm, loop, hand in (
    ("JAX", "JAX vmap + jit", "JAX loop (jit step)", "JAX hand-batched + jit"),
    ("PyTorch", "PyTorch torch.func.vmap", "PyTorch loop", "PyTorch hand-batched"),
):
    fps[fw].remedy_said = said
    for other in (loop, hand):
        print(claims.faster(fps[fw], other, vm).explanation)
    said = fps[fw].remedy_said

# %% [markdown]
# What to expect, whatever this run shows: against a Python loop, batching removes the calls
# made once per environment, so its advantage grows with the number of environments. Against
# hand-batched code, `jax.vmap` under `jit` hands XLA one batched program too, and whether it is the same
# program can be checked rather than assumed: XLA's optimised program for each (the text of
# `.lower(S_j, A_j).compile()`), with its debug tables, source locations and instruction
# names taken out, so that only what the machine runs is compared:

# %%
HLO_DEBUG_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def optimised_hlo(jitted, *args):
    """XLA's optimised program for jitted(*args), without debug tables, metadata or names."""
    text = jitted.lower(*args).compile().as_text()
    text = "\n\n".join(b for b in text.split("\n\n") if not b.strip().startswith(HLO_DEBUG_TABLES))
    text = re.sub(r"^HloModule \S+", "HloModule", re.sub(r", metadata=\{[^}]*\}", "", text), flags=re.M)
    names = {}  # every %name, renamed in order of appearance
    return re.sub(r"%[\w.-]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


programs = {"vmap + jit": optimised_hlo(step_vmap_jax, S_j, A_j), "hand-batched + jit": optimised_hlo(step_batch_jax, S_j, A_j)}
opcodes = {k: Counter(re.findall(r"^\s*(?:ROOT )?%\S+ = .*? ([a-z][\w-]*)\(", t, flags=re.M)) for k, t in programs.items()}
same_program = programs["vmap + jit"] == programs["hand-batched + jit"]
print("the two optimised programs are", "identical" if same_program else "different")
for name, ops in opcodes.items():
    print(f"{name}: {sum(ops.values())} instructions, {ops['fusion']} fusion(s)")
differ = {op: (opcodes["vmap + jit"][op], opcodes["hand-batched + jit"][op]) for op in sorted(set().union(*opcodes.values()))
          if opcodes["vmap + jit"][op] != opcodes["hand-batched + jit"][op]}
print("instructions counted differently (vmap, hand-batched):", differ or "none")

# %% [markdown]
# The first printed line answers the question for this JAX version and this device. Where the
# programs differ, the last line says in which instructions: layout operations (`transpose`,
# `concatenate`, `copy`, `bitcast`) mean the two versions put the batch axis in different
# places, so XLA rearranges memory differently, and an extra `fusion` is one more loop over
# the data (it also brings `parameter` lines of its own: each fused computation counts its
# inputs, so a different `parameter` count need not mean different inputs to the program).
# Whether such a difference costs time is what the JAX line comparing `vmap` with the
# hand-batched step, above, said. `torch.func.vmap` runs eagerly, batching each operation as
# it is called: each operation goes through its batching rule on top of its dispatch, and the
# rules run operations the hand-batched step does not (they move the batch dimension with
# `movedim` and `permute`, take views with `select`, and dispatch some operations, the
# multiplications and divisions among them, a second time; `torch.profiler` lists them); the
# PyTorch lines above say which variant was quicker here, or
# that the run could not judge it.
#
# To look for yourself, print one of the texts (`print(programs["vmap + jit"])`): each line is
# one instruction with its result's shape and layout, a `fusion` line calls a fused
# computation defined above it, and the `ROOT` line of the entry computation is the result.
# Instruction counts are a coarse summary: two programs can count the same instructions and
# still differ in shapes or layouts, which is why the first line compares the whole
# normalised text. The same check works for any two jitted functions you expect to be
# equivalent, for instance a refactored model against the original.
#
# ### 8.2 Across frameworks: the article's claim
#
# The claim's three pairings, with the variants named as the claim's registry entry names
# them. PyTorch has no `vmap` that compiles by itself, so its side is the hand-batched step,
# eager or under `torch.compile`; JAX's side is `vmap`, eager or under `jit`.

# %%
vmap_claim = claims.get("vmap-simulation")
for p in vmap_claim.pairings:
    print(f"{p.id}: {p.numerator} / {p.denominator}" + ("" if p.fair else f" (the article's, not fair: {p.note})"))

# %%
step_batch_compiled = torch.compile(cartpole.torch_step_batch)
step_vmap_eager = jax.vmap(cartpole.jax_step)
with timing.cold_inductor_cache():  # torch.compile's first call from an empty Inductor cache
    cross = timing.compare(  # the four variants the claim's pairings name, timed together
        {
            "PyTorch batched by hand (eager)": lambda: cartpole.torch_step_batch(S_t, A_t),
            "PyTorch batched by hand + torch.compile": lambda: step_batch_compiled(S_t, A_t),
            "JAX vmap (eager)": lambda: step_vmap_eager(S_j, A_j),
            "JAX vmap + jit": lambda: step_vmap_jax(S_j, A_j),
        },
        rtol=1e-6,
        atol=1e-7,
    )
cross

# %% [markdown]
# All four variants are timed in the same interleaved rounds, so each pairing's ratio below is
# computed round by round. Each verdict names its pairing, and the unfair one says so. The
# *first call* column compares nothing across rows: `JAX vmap + jit` was compiled in 8.1 and is
# warm here, the `torch.compile` step starts from an empty Inductor cache, and each eager
# variant's first call includes whatever its operations compile or load the first time.

# %% [markdown]
# Two of the four were also timed in 8.1, with the same inputs, in rounds that held their own
# framework's variants only. The same call need not take the same time in both tables: here
# every round also runs the other framework's blocks (section 6 grouped a variant's times by
# what ran just before it, to see whether that moves them), and the machine's load can change
# between two cells. Their medians side by side (above 1: slower here), each with its calls
# per block (`.number`) and its fastest block:

# %%
for name_here, framework, name_there in (
    ("PyTorch batched by hand (eager)", "PyTorch", "PyTorch hand-batched"),
    ("JAX vmap + jit", "JAX", "JAX vmap + jit"),
):
    here, there = cross.measurements[name_here], fps[framework].measurements[name_there]
    print(f"{name_here}: median {timing.format_seconds(here.median)} here, {timing.format_seconds(there.median)} "
          f"in 8.1; here / 8.1 = {here.median / there.median:.2f}\n    calls per block {here.number} here, "
          f"{there.number} in 8.1; fastest block {timing.format_seconds(min(here.times))} here, "
          f"{timing.format_seconds(min(there.times))} in 8.1; here / 8.1 = {min(here.times) / min(there.times):.2f}")

# %% [markdown]
# A ratio of medians near 1 says the variant ran alike in both tables. A ratio far from 1,
# either way, says its time moved between them, through the rounds around it or through a
# change in the machine's load between the cells (the line under each table says how busy each
# was). The other two numbers help tell these apart. The rounds act as section 6 described:
# each block starts right after another block, most often another variant's, and on a busy
# machine a call that waits for its result at such a moment can wait for a core. `compare`
# sets each variant's calls per block once, before the rounds, from a timing meant to make a
# block last at least a millisecond: a call far shorter than that usually gets many calls per
# block, and such a wait is spread over them. A stall during that timing makes the call look
# slow, and a short call can then get a block of one call (the calls per block printed above
# show whether one did), in which a single wait can be most of the block's time. Where the
# fastest blocks agree (their ratio near 1) and the medians do not, the step could run as
# fast here as in 8.1, and what moved the median is how many blocks in each table took
# longer than that; where the fastest blocks moved as much as the medians, even
# the step's best blocks ran at another speed, as a change of load can make them. Where the
# rounds are the cause, a verdict below measures the step together with the waits that the
# rounds bring on this machine, not the step on its own; the two variants not timed in 8.1 have
# no such check.

# %%
for p in vmap_claim.pairings:
    VERDICTS[f"vmap-simulation ({p.id})"] = claims.judge(
        vmap_claim.id, cross, p.numerator, p.denominator, pairing=p.id
    )
    display(VERDICTS[f"vmap-simulation ({p.id})"])


# %% [markdown]
# Read the three together. The article's pairing changes two things at once (the framework, and
# compiling or not), so its ratio cannot say which of the two made the difference. The fair
# pairings hold compiling fixed (eager against eager, compiled against compiled), but they
# still change two things: the framework, and the way of batching, since PyTorch's side is
# batched by hand and JAX's by `vmap` (the registry's pairings name them so). How much the
# second change weighs on its own under `jit` (the compiled pairing's case) is what section
# 8.1 measured within JAX: its `vmap` against its hand-batched step, and whether XLA compiled
# them to one program; 8.1 did not time JAX's eager hand-batched step. The article measured C51 on Atari with 64 environments
# on a GPU; here it is one CartPole step for `n_envs` environments on this machine's device, so
# a verdict here is about this workload.

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX |
# |---|---|---|
# | compile a function | `torch.compile(f)` | `jax.jit(f)` |
# | see what was captured | a backend that keeps the FX graphs; `TORCH_LOGS="graph_breaks"`, `tlparse` | `jax.make_jaxpr(f)(*args)`, `.lower(...).as_text()` |
# | data-dependent `if` | Python `if` (graph break) or `torch.cond` | `lax.cond` (Python `if` is an error) |
# | data-dependent loop | Python loop (Dynamo runs the loop's frame in Python, compiles what it calls) | `lax.while_loop` |
# | fixed loop | Python loop (unrolled) | `lax.scan` |
# | compile-time constants | Python numbers (guarded, then automatic dynamic) | `static_argnums` / `static_argnames` |
# | dynamic shapes | `mark_dynamic`, `dynamic=True` | one compilation per shape (pad or bucket) |
# | explain recompiles | `torch._logging.set_logs(recompiles=True)` | `jax_explain_cache_misses`, `jax_log_compiles` |
# | print inside | runs eagerly (graph break) | `jax.debug.print` |
# | run uncompiled | `torch.compiler.disable`, not compiling | `jax.disable_jit()` |
# | reuse input memory | in-place `w.sub_(...)` | `donate_argnums` |
# | disk cache | Inductor FX graph cache (`TORCHINDUCTOR_CACHE_DIR`) | `jax_compilation_cache_dir` |
# | batch a per-example function | `torch.func.vmap` | `jax.vmap` |
#
# ### Popular claims vs what you measured

# %% [markdown]
# Every verdict this lesson drew, from the verdict objects above: the article's wording, its
# source and stated magnitude, what was measured here (the median ratio with its 95 % interval
# widened by 15 %, and the number of rounds), the verdict, and the sentence generated for this
# run.

# %%
def measured_text(v):
    """Median, interval (95 %, widened by 15 %) and rounds; a dash when nothing was timed."""
    if v.stats is None:
        return "–"
    u, st = v.claim.unit, v.stats
    return f"{fmt(st.median, u)} ({fmt(st.low, u)}–{fmt(st.high, u)}, n={st.n})"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


REMEDY_SENTENCE = f" To judge it, {contention.REMEDY}."  # said once, under the table
contended_rows = [label for label, v in VERDICTS.items() if v.reason.startswith("contended")]
display(Markdown(
    "| claim | source | stated | conditions | measured here (ratio above 1 favours the claim) | verdict | why |\n|---|---|---|---|---|---|---|\n"
    + "\n".join(
        "| " + " | ".join(cell(c) for c in (
            v.claim.text, v.claim.source, v.claim.claimed, v.conditions() or "–", measured_text(v),
            f"**{v.verdict}**", v.explanation.replace(REMEDY_SENTENCE, ""),
        )) + " |"
        for v in VERDICTS.values()
    )
    + (f"\n\n{len(contended_rows)} row(s) not judged because the machine was busy: to judge them, "
       f"{contention.REMEDY.replace('rerun the cell', 'rerun the cells that timed them')}." if contended_rows else "")
))

# %% [markdown]
# Use the table as a map back into the lesson: its rows come in the order the sections above
# drew them, and the three `vmap-simulation` rows are section 8.2's pairings, named in their
# conditions. A row marked inconclusive or not testable says why in its last column: a busy or
# noisy run can be rerun on a quiet machine, an interval that straddles the stated magnitude
# may narrow with more rounds, the kernel-launch claim needs a GPU, and the first-call claim
# is measured on a BERT-shaped proxy by `course claims` and by lesson 08 in full mode, not here.
#
# The timed claims as "× faster" (above 1: the side the claim favours is faster), each with its
# 95 % interval widened by 15 %; the shaded band is the magnitude the article states, the line
# 1x (no difference).

# %%
fig, ax = plt.subplots(figsize=(8, 3.5))
plots.speedups(
    [v.plot_row(label) for label, v in VERDICTS.items() if v.stats is not None and v.claim.unit == "x"],
    ax=ax,
    title="the articles' claims, measured in this lesson",
)
plt.tight_layout()

# %% [markdown]
# **Common misconceptions** (each corrected by a cell above)
# - *"Compiling always makes code faster."* A compiler leaves a large matmul to the same kind
#   of library kernel that eager mode calls, so it has little to gain there; on small inputs
#   its gain has to outweigh its per-call cost; and the first call can cost many steady calls
#   (sections 2, 3, 5 and 6 measure each case; their lines say what each came to here, or
#   that the run was too busy to judge it).
# - *"`jax.jit` recompiles when a Python number changes."* Only when the number is static or its
#   type changes; Dynamo is the one that specialises on Python floats (section 4).
# - *"`torch.compile` fails on Python control flow like `jax.jit` does."* It breaks the graph and
#   evaluates the `if` in Python, then compiles the branch taken as a graph of its own, which
#   can cost time but not correctness (section 5 times the break against `torch.cond`).
# - *"vmap is faster than batching by hand."* What batching of either kind removes is the
#   loop's per-environment dispatch; between the two kinds, section 8.1 times both, compares
#   the programs XLA compiled for them and prints whether they are the same.
# - *"JAX simulates environments 2.3x faster than PyTorch"* compares compiled JAX with eager
#   PyTorch; section 8.2 shows that pairing next to the fair ones.
#
# **Review questions**
#
# <details><summary>1. Why does <code>if x.sum() > 0</code> fail under <code>jax.jit</code> but not under <code>torch.compile</code>?</summary>
# JAX traces with abstract values, so <code>x.sum() > 0</code> has no truth value at trace time and
# converting it to a Python bool is an error. Dynamo records on fake tensors, which have no values
# either, but it does not fail: it ends the graph at the <code>if</code> (a graph break), Python
# evaluates the condition on the real tensor, and Dynamo records the code after it as a second graph.
# </details>
#
# <details><summary>2. A training loop passes the epoch's learning rate as a Python float. Which framework recompiles, and how do you fix it?</summary>
# <code>jax.jit</code> traces a Python float as a weakly typed scalar, so no recompile (unless it is
# static). Dynamo guards on the float's value, so the first change recompiles (then it may go
# dynamic). Pass a tensor (<code>torch.tensor(lr)</code>) instead.
# </details>
#
# <details><summary>3. When is compiling not worth it?</summary>
# When the function runs fewer times than its break-even number of calls: in short-lived processes
# without a warm persistent cache, for matmul-bound code where there is little to fuse, or when shapes change so
# often that it keeps recompiling.
# </details>
#
# <details><summary>4. What does <code>jax.vmap</code> give you that hand-batching does not?</summary>
# Less code and fewer bugs: you write and test the one-example function, and the batch dimension
# is added mechanically. Speed is not its point: under <code>jit</code> both hand XLA one batched
# program, and section 8.1 prints whether the two optimised programs are the same and, where
# they are not, which instructions differ, next to the timing of both.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and
# press *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.
# Where an executed copy's script does not run (GitHub's preview, an untrusted notebook)
# each answer is folded under its question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("03_jit_compilation")

# %% [markdown]
# **Next:** the exercises in `exercises/03_jit_compilation_exercises.ipynb`: make a function
# jittable with `lax.cond`/`lax.while_loop`, remove a recompilation in each framework, write a
# CartPole rollout and `vmap` it in both frameworks, and write a K-means step that never loses a
# cluster, compiled as one program in each framework.
