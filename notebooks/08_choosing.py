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
# # 08 · Choosing: the decision guide, measured on your hardware
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/08_choosing.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/08_choosing.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/08_choosing.ipynb)
#
# The source articles end with advice: a decision matrix, a decision tree, and speed claims
# measured on someone else's hardware. This lesson sets each piece of advice beside the
# evidence of lessons 01–07. Then it measures every speed claim again, on your machine. A claim
# your machine cannot test says why, and smoke mode skips the slowest.
#
# **Learning objectives.** After this notebook you can
# 1. read the articles' decision matrix and decision tree, and say which rows a measurement can
#    settle and which it cannot;
# 2. measure a small encoder's batch-1 latency in both frameworks, JAX's first-call cost and its
#    break-even, and the cost of recompiling for new input shapes, with its fix;
# 3. run `course claims` and read its verdicts beside the result files the course ships.

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
    "d_model": (128, 32),  # encoder width
    "n_heads": (4, 2),
    "d_ff": (512, 64),
    "n_layers": (4, 1),
    "seq": (64, 16),  # tokens per sequence at batch 1
    "n_lengths": (4, 2),  # distinct sequence lengths in the dynamic-shapes stream
    "stream_rounds": (6, 2),  # timed rounds of that stream (each recompiles everything; 6 for a verdict)
    "bucket": (32, 16),  # padding bucket size for the fix
    "rounds": (100, 20),  # interleaved rounds per latency comparison
}

# %%
from course_utils import env

SETUP = env.setup()  # first: JAX's GPU memory policy, JAX before PyTorch, float32 in both

import time

import jax
import numpy as np
import torch
from flax import nnx

from course_utils import checklist, claims, config, convert, models, timing
from course_utils.claims import results
from course_utils.expect import expect_error
from course_utils.parity import assert_close
from IPython.display import Markdown

S = config.sizes(SIZES, SMOKE)
print(env.report().line())

# %% [markdown]
# Sections 2 and 3 compare the two frameworks on the CPU, as source 004's batch-1 claim does.
# Section 4 measures each claim on the CPU and again on an accelerator, when there is one.
#
# ## 1. The advice, and the evidence for it
#
# **Key concepts**
# - Source 001's **decision matrix** compares the frameworks on team skills, ecosystem,
#   training scale and developer experience. Source 000's **decision tree** says when to pick
#   each.
# - Some rows are engineering facts a timer can check: speed, compile cost, memory. Others are
#   about people: skills, hiring, migration cost. No benchmark settles those.
#
# An article writes "JAX is faster for X" and "PyTorch suits a start-up" in the same confident
# tone. Only the first can be checked on your machine. Sorting the rows into those two kinds is
# the first step of a decision, and the last column below does it. The evidence column points
# to the lessons where each mechanism is at work: 01–07 behind you, 09–12 ahead.
#
# | dimension | PyTorch | JAX | the article's advice | evidence in this course | measurable here? |
# |---|---|---|---|---|---|
# | team skills | dynamic Python | functional programming | choose what the team knows | 01: pure functions, explicit keys and state; 07: what a port involves | no: a question about your team |
# | ecosystem | large community model hubs | smaller, backed by Google | start-ups choose PyTorch | 06: library map, Keras 3, export; the package check below | partly: which packages are installed here |
# | training scale | < 1000 accelerators | > 1000 accelerators | large scale → JAX | 05: data, tensor and fully sharded parallelism; 12: a GPT's training step sharded both ways | no: needs a cluster |
# | developer experience | easy to debug | steep, cryptic errors | efficiency → PyTorch | 03: graph breaks and tracer errors; 09: NaN hunting, profiler traces | no: a matter of taste |
# | performance | "manual car" | "high-speed train" | JAX is faster when the route is fixed | 02–04: derivatives, `jit` and `torch.compile`, training steps; 09: bfloat16; 10: custom kernels; 12: a GPT's training step made fast | **yes**: section 4 |
# | migration cost | | | "2–4 weeks, about a rewrite" | 07: converters, silent defaults, the MVP checklist | no: depends on the codebase |
# | hiring | | | JAX engineers are scarce | | no |
#
# The first four rows are source 001's decision matrix. The last three come from the same
# article's car-and-train analogy, its migration estimate and its list of pitfalls.
#
# The **decision tree** of source 000 follows, with the claims each branch rests on. Section 4
# judges them. Two branches marked *added* come from the articles' speed claims, not from the
# tree.
#
# - **Choose JAX** for:
#   - (a) top performance and scale: TPU clusters, very large models, scientific computing.
#     Claims `tpu-llm`, `huge-scale`, `higher-order`, `train-throughput`, `train-memory`.
#   - *added*: fast answers at batch 1, source 004's claim `batch1-latency`.
#   - (b) a functional style your team likes: lesson 01.
#   - (c) research with composable transformations such as `vmap` and `scan`: lessons 02
#     and 03, claim `vmap-simulation`.
# - **Choose PyTorch** for:
#   - (a) fast iteration on changing models: claims `dynamic-shapes`, `first-call`.
#   - (b) the ecosystem of third-party libraries: lesson 06.
#   - (c) a clear path to production: lesson 06's `torch.export`, which no benchmark measures.
#   - (d) *added*: `torch.compile` as the default baseline, which source 000 states outside its
#     tree. Claims `compile-matmul`, `compile-fusion`, `compile-training`.
#
# <details><summary>"PyTorch 3.x" in source 000</summary>
#
# Source 000 is written for "PyTorch 3.x" and "JAX 0.5+". JAX 0.5 and its successors are real
# releases. PyTorch 3 had not been released when the course's version sets were last checked
# (`docs/VERSIONS.md`). What the article credits to "3.x", `torch.compile` as the default
# baseline and FSDP2's `fully_shard`, is part of PyTorch 2. Read it as "a recent PyTorch 2".
# </details>
#
# Every number this notebook measures belongs to these releases:

# %%
from importlib.metadata import version

print(f"this notebook runs torch {torch.__version__}, jax {jax.__version__}, flax {version('flax')}, "
      f"optax {version('optax')}")

# %% [markdown]
# Both frameworks change their compilers and kernels from one release to the next. A verdict
# is a statement about these versions as much as about the machine, so keep the versions with
# any result you share.
#
# Part of the ecosystem row is checkable: are the packages a project would use installed here?

# %%
status, detail = checklist.dependencies_status({
    "PyTorch side": ["torchvision", "transformers", "lightning"],
    "JAX side": ["flax", "optax", "orbax.checkpoint", "grain", "equinox"],
    "both": ["keras"],
})
print(detail.replace("; ", "\n"))

# %% [markdown]
# "Missing" means not installed in this environment. Every package in the list is on PyPI, and
# the course installs only what its lessons use. The check shows the question a team has to
# answer: list the libraries your project cannot live without, then find each one's
# counterpart in the other ecosystem. Lesson 06 maps those counterparts.
#
# ## 2. Batch-1 inference latency
#
# **Key concepts**
# - At batch 1 a small model does little arithmetic per operation. Much of the time goes into
#   **per-operation overhead**: Python, dispatch, allocation. `jit` removes the Python and the
#   dispatch, and fusing operations cuts the allocations.
# - The first `jit` call traces, lowers and compiles. `jax.jit(f).trace(...).lower().compile()`
#   runs the three stages one by one, so each can be timed.
# - The **break-even** number of calls says when compiling has paid for itself.
#
# Batch 1 is the shape of an online service: one request arrives, one answer goes back, and
# the user waits. `jit` turns the whole forward pass into one compiled program, so Python and
# the dispatcher run once per call instead of once per operation. That saving is overhead, not
# arithmetic. It depends on the processor, the Python build and the versions, so it has to be
# measured here. Its price is the first call: a server answering millions of requests
# amortises it, a script that runs the model ten times may not.
#
# The encoder is lesson 07's transformer block, stacked: token and position embeddings,
# `n_layers` pre-LN blocks, a final LayerNorm, mean pooling and a linear head. Both frameworks
# get the same weights.

# %%
cfg = models.BlockConfig(S.d_model, S.n_heads, S.d_ff, dropout=0.0)
enc_torch, enc_jax = convert.make_pair(cfg, seed=0, encoder=True, vocab=1000, max_len=128,
                                         n_layers=S.n_layers, num_classes=2)
print(f"{sum(p.numel() for p in enc_torch.parameters()):,} parameters, "
      f"{S.n_layers} layer(s), d_model {S.d_model}, {S.seq} tokens")
tokens_np = np.random.default_rng(0).integers(0, 1000, (1, S.seq)).astype(np.int32)  # (batch=1, seq)

# %%
# PyTorch: eager, no autograd bookkeeping
tokens_torch = torch.from_numpy(tokens_np)

def forward_torch():
    with torch.inference_mode():
        return enc_torch(tokens_torch)

logits_torch = forward_torch()
logits_torch

# %%
# JAX: the model split into its structure and its weights; one jitted function, on the CPU
cpu = jax.devices("cpu")[0]
graphdef, state_jax = nnx.split(enc_jax)
state_jax = jax.device_put(state_jax, cpu)


def jit_forward():
    """A new jitted forward pass; the weights are an argument, not constants in the program."""
    @jax.jit
    def forward(state, tokens):
        return nnx.merge(graphdef, state)(tokens)
    return forward


forward_jax = jit_forward()
tokens_jax = jax.device_put(tokens_np, cpu)
logits_jax = forward_jax(state_jax, tokens_jax)
logits_jax

# %%
assert_close(logits_jax, logits_torch, rtol=1e-4, atol=1e-5, name="logits")
print("same logits")

# %% [markdown]
# The logits agree to float32 rounding, so the timings below compare two programs that compute
# the same function. That is the rule of every timing in the course: correctness first, then
# speed.
#
# What does the first call cost? A jitted function's first call runs three stages before the
# program runs. JAX's ahead-of-time API calls each one on its own, so a timer can sit between
# them. *Trace* runs the Python function on abstract values and records its operations, a
# jaxpr. *Lower* turns that record into StableHLO, the compiler's input. *Compile* is XLA
# building machine code for this device. The cell empties JAX's caches and keeps the on-disk
# cache off, as on a machine that never ran this function:

# %%
jax.clear_caches()  # no trace, lowering or program left from the cells above
fresh = jit_forward()
with timing.jax_persistent_cache_off():
    t0 = time.perf_counter()
    traced = fresh.trace(state_jax, tokens_jax)  # the jaxpr
    t1 = time.perf_counter()
    lowered = traced.lower()  # StableHLO
    t2 = time.perf_counter()
    compiled = lowered.compile()  # machine code for the CPU
    t3 = time.perf_counter()
    compiled(state_jax, tokens_jax).block_until_ready()  # the first run
    t4 = time.perf_counter()
stages = {"trace": t1 - t0, "lower": t2 - t1, "compile": t3 - t2, "first run": t4 - t3}
first_call_s = t4 - t0  # what a first call pays, stages and run together
longest = max(stages, key=stages.get)
print(", ".join(f"{name} {timing.format_seconds(s)}" for name, s in stages.items()),
      f"= {timing.format_seconds(first_call_s)} on the CPU;",
      f"the longest stage: {longest}, {stages[longest] / first_call_s:.0%} of the first call")

# %% [markdown]
# The line ends with the longest stage and its share. All four stages together are the price
# of a first call, `first_call_s`. The break-even cell below sets it against one steady call.
#
# Steady-state latency, in interleaved rounds, after checking that both compute the same logits:

# %%
latency = timing.compare(
    {"PyTorch eager": forward_torch, "JAX jit": lambda: forward_jax(state_jax, tokens_jax)},
    rtol=1e-4, atol=1e-5, rounds=S.rounds,
)
latency

# %% [markdown]
# The *median* column is the typical time of one call, and *IQR* is its spread. The last line
# says whether other programs competed for the CPU. Leave the *first call* column aside: the
# cell above emptied JAX's caches, and PyTorch's call is not its first in this process.
#
# Lesson 00's verdict rule decides which was faster per call; `docs/VERDICTS.md` writes it
# out. Each round times both variants back to back and divides one time by the other. The rule
# names a winner only when the interval of the median ratio lies wholly on one side of 1. With
# too few rounds, noisy ratios or a busy machine it declines, and says why. Either way, its
# line names the faster side and the table's factor.
#
# This is the article's pairing, eager PyTorch against compiled JAX. It changes two things at
# once, so read it as what a user gets by default, not as which framework is faster.

# %%
per_call = claims.faster(latency, "PyTorch eager", "JAX jit")
print(per_call)

# %% [markdown]
# Break-even against PyTorch eager: JAX's total after `n` calls is `first + (n − 1) · steady`,
# and PyTorch's is `n · eager`. `timing.break_even_calls` solves for `n`, and answers "never"
# when JAX's steady state is not faster. Here `eager` is JAX's median times the verdict's
# factor, so the count agrees with the verdict line. The count is judged only when that verdict
# named a winner.

# %%
t_jax = latency.measurements["JAX jit"].median
eager = t_jax * per_call.stats.median  # the median per-round ratio, PyTorch's time over JAX's
fmt = timing.format_seconds
print(f"first {fmt(first_call_s)}; steady {fmt(t_jax)}; "
      f"eager {fmt(t_jax)} × {per_call.stats.median:.2f} = {fmt(eager)}")
print(claims.break_even(per_call, first_call_s, t_jax, eager))

# %% [markdown]
# The count is an estimate, so read it as an order of magnitude. A process that answers far
# more requests than the count before it exits gains from compiling; one that answers far fewer
# loses. A judged "never" means compiling does not pay off here at any count.
#
# The article's two claims here, "about 800 ms" for the first call and "then 10 ms against
# 15 ms", are about a BERT, far larger than this encoder. Section 4 judges them on a
# BERT-base-shaped proxy, in full mode.
#
# ## 3. Dynamic shapes: the cost of recompiling
#
# **Key concepts**
# - `jax.jit` compiles for the exact shapes and dtypes of its arguments, its *cache key*. Every
#   new sequence length is a new trace and a new compilation. Eager PyTorch has nothing to
#   recompile.
# - `timing.no_recompile` turns that silent cost into an error that names the cause.
# - The fix: **pad to a few bucket lengths** and pass a mask. There is then one compilation
#   per bucket, and the results stay those of the unpadded inputs, to float32 rounding.
#
# Section 2 measured one input shape, the best case for `jit`. Real requests come in many
# lengths: sentences, documents, audio clips. Eager PyTorch reads each tensor's shape as it
# runs. `torch.compile` marks a size as dynamic once it has seen it change. `jax.jit` does
# neither, and nothing warns you: the program just runs slower. This section makes the cost
# visible, measures it and removes it.
#
# A stream of requests of different lengths, each seen once:

# %%
lengths = [S.seq // 2 + 5 * i for i in range(S.n_lengths)]
stream_np = [np.random.default_rng(n).integers(0, 1000, (1, n)).astype(np.int32) for n in lengths]
stream_torch = [torch.from_numpy(t) for t in stream_np]
stream_jax = [jax.device_put(t, cpu) for t in stream_np]
print("lengths:", lengths)

# %% [markdown]
# The sharp bit: after a warm-up on the first length, the loop looks compiled, yet each new
# length compiles again. The cell raises on purpose. `expect_error` prints the error's first
# lines, and would fail the cell if nothing compiled.

# %%
forward_jax(state_jax, stream_jax[0]).block_until_ready()  # warm-up
with expect_error(timing.RecompilationError, lines=6), timing.no_recompile("the request stream"):
    for toks in stream_jax:
        forward_jax(state_jax, toks).block_until_ready()


# %% [markdown]
# `timing.no_recompile` asks JAX to report every compilation inside the `with` block, and
# raises if there was one. Its message quotes JAX's explanation of the cache miss: the
# function, where it was defined, and the argument whose type changed, `i32[1, n]` with a new
# `n`. In your own code, `jax.config.update("jax_explain_cache_misses", True)` logs the same
# report for every miss.
#
# What does that cost against eager PyTorch? Each timed JAX round empties the in-memory caches
# first, as a fresh process meeting these lengths would. The PyTorch rounds repeat lengths it
# has run before; its *first call* column shows its first pass over them.

# %%
def torch_stream():
    with torch.inference_mode():
        return [enc_torch(t) for t in stream_torch]

def jax_stream():
    jax.clear_caches()
    fresh = jit_forward()
    return [fresh(state_jax, t) for t in stream_jax]

dynamic = timing.compare({"JAX jit, new lengths": jax_stream, "PyTorch eager": torch_stream},
                         rtol=1e-4, atol=1e-5, rounds=S.stream_rounds)
dynamic

# %% [markdown]
# The JAX row is the whole stream with its compilations, and a warning line counts them.
#
# <details><summary>Where a persistent compilation cache is configured</summary>
#
# JAX can keep compiled programs on disk. Where it does, a new length can be read from that
# cache instead of compiled, and the warning line counts the read as a compilation too.
# Section 2's stage timings switched the disk cache off, so its compile stage always compiled.
# </details>
#
# The fix: pad each request to the next multiple of `bucket` tokens, and pass a mask that is
# `True` on the real tokens. Each framework's attention takes that mask in its own convention.
# The encoder in `course_utils/models/transformer.py` passes it in one line per framework.
# Here are the two expressions, on a toy mask:

# %%
mask = np.array([[True, True, True, False]])  # (batch, seq): three real tokens, one pad
# PyTorch, TorchBlock: self.attn(h, h, h, key_padding_mask=~mask); True marks a key to ignore
print("PyTorch key_padding_mask=~mask:", (~torch.from_numpy(mask)).tolist())
# Flax NNX, NNXBlock: self.attn(h, mask=mask[:, None, None, :]); True marks a key to attend to
print("NNX mask=mask[:, None, None, :]:", mask[:, None, None, :].tolist(),
      "(batch, heads, queries, keys)")


# %% [markdown]
# PyTorch's flag means "ignore this key", so the mask is inverted. NNX's means "attend to this
# key", shaped to broadcast over heads and queries. The mean pooling then weights each position
# by the mask, so padded positions add nothing. The logits should equal the unpadded ones to
# float32 rounding:

# %%
def pad_to_bucket(toks: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    n = toks.shape[1]
    size = -(-n // bucket) * bucket  # round up to a multiple of bucket
    padded = np.zeros((toks.shape[0], size), toks.dtype)
    padded[:, :n] = toks
    mask = np.zeros((toks.shape[0], size), bool)
    mask[:, :n] = True
    return padded, mask  # (batch, size) each


@jax.jit
def forward_masked(state, toks, mask):
    return nnx.merge(graphdef, state)(toks, mask)

padded = [pad_to_bucket(t, S.bucket) for t in stream_np]
buckets = sorted({p.shape[1] for p, _ in padded})
outs = [forward_masked(state_jax, jax.device_put(p, cpu), jax.device_put(m, cpu)) for p, m in padded]
assert_close(outs, torch_stream(), rtol=1e-4, atol=1e-5, name="bucketed logits")
print(f"{len(lengths)} lengths -> {len(buckets)} bucket(s) {buckets}; logits equal to PyTorch's "
      "for the unpadded requests (to float32 rounding)")

# %% [markdown]
# The reference is eager PyTorch on the unpadded requests. The padded positions still compute
# something, but no real token reads it. `forward_masked` now meets one shape per bucket, not
# one per length. Larger buckets mean fewer compilations but more arithmetic wasted on padding.
#
# With every bucket compiled once, the stream runs without a recompilation, and its steady cost
# can be compared with eager PyTorch:

# %%
padded_jax = [tuple(jax.device_put(a, cpu) for a in pm) for pm in padded]
with timing.no_recompile("the bucketed stream"):
    for p, m in padded_jax:
        forward_masked(state_jax, p, m).block_until_ready()
bucketed = timing.compare(
    {"JAX jit, bucketed": lambda: [forward_masked(state_jax, p, m) for p, m in padded_jax],
     "PyTorch eager": torch_stream},
    rtol=1e-4, atol=1e-5, rounds=S.rounds,
)
bucketed

# %% [markdown]
# The `no_recompile` block passed: the parity check above had compiled every bucket. The timed
# rounds measure only the compiled programs, the steady state of a server after its first
# request per bucket.
#
# The stream against eager PyTorch, first with every length compiling, then with the buckets
# compiled once:

# %%
every_length = claims.faster(dynamic, "JAX jit, new lengths", "PyTorch eager")
print("every length compiles:", every_length)
print(f"{len(buckets)} bucket(s) compiled:", claims.faster(bucketed, "JAX jit, bucketed", "PyTorch eager"))
measured = {
    "dynamic-shapes": claims.Measured(
        dynamic.ratios("JAX jit, new lengths", "PyTorch eager"),
        f"this notebook: {len(lengths)} lengths, in-memory caches cleared before each round",
        contention=dynamic.contention, pairing="article",
        names=("JAX jit, new lengths", "PyTorch eager"),
        rounds_fixed=dynamic.rounds_fixed),  # set by rounds=: the advice names it, not target_s
}

# %% [markdown]
# The first line is the articles' claim about dynamic shapes, met as they meet it: each length
# compiles. The second is the fix: the same stream, bucketed, with no compilation left in the
# timed rounds.
#
# `measured` keeps the first measurement's ratios, so section 4 judges the `dynamic-shapes`
# claim from them without timing the stream again.
#
# ## 4. The popular claims, measured again here
#
# **Key concepts**
# - `course claims`, or `claims.run()` from Python, runs compact versions of the course's claim
#   benchmarks. Section 2's rule judges each claim against the magnitude the article stated.
# - *Holds*: the whole interval lies at or beyond that magnitude. *Does not hold*: it lies
#   entirely short of it. *Inconclusive*: it straddles it, or the run could not be judged.
# - A claim about hardware or a workload this machine lacks is *not testable here*, with the
#   reason. On a machine with an accelerator, each claim is judged once per device kind.
#
# A speed ratio belongs to the machine, the versions, the sizes and the precision it was
# measured with, and the articles rarely state all four. "JAX is 2–5x faster" may be true on the
# author's accelerator and untrue on your laptop. A timing is also a sample: run the cell twice
# and the ratio moves. That is why the rule reads an interval. "Inconclusive" is a useful
# answer: this run cannot tell, and the lines under the table say why.
#
# In smoke mode the claims run at small sizes and skip the slowest, such as the BERT-base-shaped
# proxy. From a terminal, `course claims` runs the full sizes when neither `--smoke` nor
# `COURSE_SMOKE` asks for smoke mode. It writes `claims.json` and `claims.png` to
# `build/claims/` in a clone of the course, or to the folder given with `--out`.
#
# This machine's run. Its section-3 claim comes from `measured`:

# %%
try:  # a clone of the course keeps results in its build/ folder
    claims_dir = config.course_root() / "build" / "claims"
except FileNotFoundError:  # the package alone (Colab, Kaggle): under the working folder
    claims_dir = "build/claims"
report = claims.run(smoke=S.smoke, out=claims_dir, measured=measured,
                    device="all", verbose=False)  # the CPU (sections 2-3 timed there), then any accelerator
assert report.outcome("dynamic-shapes").details.get("measured_by")  # section 3's rounds, not re-run
Markdown(report.brief(timed_only=True))  # claims not timed here: named under the table

# %% [markdown]
# One row per claim this run timed. *Stated* is the article's magnitude. *Measured here* names
# the faster side, its factor, which is the median per-round ratio, and the interval. Under the
# table, each reason not to judge is given once, with the claims it applies to, timed or not.
# `higher-order` and `jax-2-5x` share one measurement, each judged against its own stated
# magnitude. `print(report)` gives every row's workload and full sentence.
#
# Your run beside the shipped ones. Each result file is one column, headed by its machine: the
# processor and its cores, "smoke" for a smoke run, any accelerator, and the date. A file can
# hold claims re-run later on the same machine (`course claims merge DIR --into FILE`), so
# its heading can name two dates. Each claim has one row per device kind it was measured on.
# Claims that no run timed are left out. Where only the package is installed, as on Colab, the
# table holds your run alone.
#
# Unlike the claims table, which names the faster side, this table gives each ratio turned
# toward the claim. Above 1x favours the claim, below 1x goes against it.
#
# <details><summary>The one row that is not a speed</summary>
#
# `train-memory`, measured on a GPU only, divides PyTorch's memory peak by JAX's. A ratio above
# 1x there means JAX needed less memory.
# </details>

# %%
shipped = results.shipped()  # docs/claims-results/*.json: none where only the package is installed
runs = [report.to_dict(), *shipped]  # this run and each shipped result file
timed = {c["id"] for run in runs for c in run["claims"]
         if c["verdict"] not in (claims.NOT_TESTABLE, claims.SKIPPED)}
Markdown(results.merge_table([{**run, "claims": [c for c in run["claims"] if c["id"] in timed]}
                              for run in runs]))

# %% [markdown]
# Compare along a row only the verdicts that were judged. An *inconclusive* cell from smoke
# mode or a busy machine is a run that could not tell, not a different answer. Judged verdicts
# can still differ between machines, versions and sizes. So measure where you will run, with
# `course claims` on a quiet machine.
#
# Section 2 timed batch-1 latency in the article's pairing, eager PyTorch against `jax.jit`, on
# a small encoder. `course claims` judges `batch1-latency` in the fair pairing, `torch.compile`
# against `jax.jit`, on the BERT-base-shaped proxy. The two can disagree without either being
# wrong.
#
# ## 5. A worked choice: three readers walk the tree
#
# **Key concepts**
# - A branch of the tree is **taken** when every run that judged its claim found that it holds,
#   and **not taken** when every such run found that it does not. A branch no run judged, or
#   whose runs disagree, is **unsettled**.
# - The runs are this notebook's and each result file the course ships.
# - What the measured branches leave open, the rows no benchmark settles decide.
#
# The tree is advice and the verdicts are evidence. Here they are put together for three
# readers with different needs. Each reader's needs pick branches of the tree, and each branch
# names the claim it rests on. Every decision is computed from the runs in the table above, so
# another machine can reach another choice.

# %%
PROFILES = {  # reader: [(branch of the tree, the claim it rests on, the framework it picks)]
    "an online service answering one request at a time, of varying length, on CPUs": [
        ("JAX (a), added: fast answers at batch 1", "batch1-latency", "JAX"),
        ("PyTorch (a): fast iteration on changing inputs", "dynamic-shapes", "PyTorch"),
    ],
    "a research group computing higher-order derivatives and batched simulations": [
        ("JAX (a): scientific computing", "higher-order", "JAX"),
        ("JAX (c): composable transformations", "vmap-simulation", "JAX"),
    ],
    "a team training models on one machine, with torch.compile as its baseline": [
        ("JAX (a): training performance", "train-throughput", "JAX"),
        ("PyTorch (d), added: torch.compile as the default baseline", "compile-training", "PyTorch"),
    ],
}


def branch_decision(claim_id):
    """Taken, not taken or unsettled, from every run's verdicts on the claim."""
    found = {c["verdict"] for run in runs for c in run["claims"] if c["id"] == claim_id}
    judged = found & {claims.HOLDS, claims.DOES_NOT_HOLD}
    if judged == {claims.HOLDS}:
        return "taken"
    if judged == {claims.DOES_NOT_HOLD}:
        return "not taken"
    return "unsettled: the runs disagree" if judged else "unsettled: no run judged it"


for reader, branches in PROFILES.items():
    print(f"{reader}:")
    picks = set()
    for branch, claim_id, framework in branches:
        decision = branch_decision(claim_id)
        picks |= {framework} if decision == "taken" else set()
        print(f"  {branch} [{claim_id}]: {decision}")
    print("  => " + (f"the taken branches point to {min(picks)}" if len(picks) == 1 else
                     "the taken branches point both ways" if picks else "no branch is taken"))

# %% [markdown]
# A taken branch rests on a claim that held wherever it was judged, for a workload like the
# one measured. A branch not taken rests on a claim that did not hold, so do not choose for
# that reason. An unsettled branch needs a run on the hardware you are choosing for.
#
# Read the branches not taken as closely as the taken ones. Where `higher-order` did not hold,
# JAX's third derivatives were not 8x faster than PyTorch's in that run. Its row above shows
# by how much either side won. Where `compile-training` did not hold, torch.compile did not
# speed training up by the stated 20 %.
#
# A branch is also only as wide as its measurement. The first reader's `dynamic-shapes` branch
# rests on JAX meeting every new length unbucketed. Section 3's bucketed line measured the fix
# on this machine, so read it before taking that branch. Where the taken branches point both
# ways, that line and the reader's own priorities decide between them.
#
# The team, ecosystem and migration rows decide the rest. For a real project the next step is
# lesson 07's MVP checklist on your own model.

# %% [markdown]
# ## Summary
#
# | question | how to answer it | where |
# |---|---|---|
# | is framework X faster for my model? | the same model both ways, proven equal, timed in interleaved rounds on your hardware | 07 (MVP checklist), this lesson |
# | what does compiling cost? | `jax.jit(f).trace(...).lower().compile()` timed stage by stage; first call against steady state, break-even calls | 00, 03, section 2 |
# | will my inputs recompile? | `timing.no_recompile`; pad to buckets with a mask | 03, section 3 |
# | do the articles' numbers hold here? | `course claims` | section 4 |
# | team, hiring, ecosystem fit, migration cost | not a benchmark: ask the team, run the MVP checklist | 06, 07 |
# | will a whole model behave the same in the other framework? | port its weights, prove logits, gradients and a training step equal, compare the loss curves, then time both | 07, 11 |
# | where does a step's time go, and why did it return NaN? | a profiler trace of the step in each framework; NaN checks under `jit` and autograd | 09 |
#
# **Common misconceptions** (each corrected above)
# - *"JAX is faster"* or *"PyTorch is faster"*: it depends on the workload, the sizes and the
#   hardware. Section 4 judges each claim on its own, and one machine can settle one claim in
#   JAX's favour and another against it.
# - *"The first call shows the speed."* It includes compilation, which can dominate a short job
#   or a stream of new shapes: sections 2 and 3.
# - *"Dynamic shapes rule JAX out."* Padding to a few buckets with a mask bounds the
#   compilations and keeps the results of the unpadded inputs, to float32 rounding: section 3.
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("08_choosing")

# %% [markdown]
# **Next:** the exercises in `exercises/08_choosing_exercises.ipynb`. You judge a claim from
# samples, count how many new shapes a compiled model can afford, bucket dynamic shapes,
# measure a claim with the course's timing helpers, and decide one team's port.
#
# **Closing note.** The claims table above belongs to the machine and the mode that ran this
# notebook. `course claims` from a terminal, or this notebook in full mode, gives the full-size
# version.
