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
# measured on someone else's hardware. This lesson puts each piece of advice next to the
# evidence from lessons 01–07 and re-measures, on the machine you are using, every speed claim
# that machine can test (and says why for the rest; smoke mode leaves the slowest out and says
# so too).
#
# **Learning objectives.** After this notebook you can
# 1. read the articles' decision matrix and decision tree, and say which rows a measurement
#    can settle and which it cannot (team skills, hiring, migration cost);
# 2. measure a small encoder's batch-1 inference latency in both frameworks, JAX's first-call
#    cost and the break-even, and the cost of recompiling for changing input shapes (and its fix);
# 3. run `course claims` and read its verdicts: holds, does not hold, inconclusive, not
#    testable here, or skipped in smoke mode.

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
    "bench_s": (1.0, 0.2),  # seconds of steady-state timing in section 2's compile report
    "rounds": (100, 20),  # interleaved rounds per latency comparison
}

# %%
from course_utils import env

SETUP = env.setup()  # first: JAX's GPU memory policy, JAX before PyTorch, float32 in both

from collections import Counter

import jax
import matplotlib.pyplot as plt
import numpy as np
import torch
from flax import nnx

from course_utils import checklist, claims, config, convert, forwards, models, timing
from course_utils.claims import results
from course_utils.claims.benchmarks import BENCHMARKS
from course_utils.expect import expect_error
from course_utils.parity import assert_close
from IPython.display import Markdown

S = config.sizes(SIZES, SMOKE)
print(env.report().line())

# %% [markdown]
# ## 1. The advice, and the evidence for it
#
# **Key concepts**
# - Source 001's **decision matrix** compares the frameworks on team skills, ecosystem,
#   training scale and developer experience; source 000's **decision tree** says when to pick each.
# - Some rows are engineering facts a measurement can check (speed, compile cost, memory).
#   Others are about people and organisations (skills, hiring, migration cost) and no benchmark
#   settles them; this lesson says so rather than pretending.
#
# Why start with the articles' advice rather than with a benchmark? Because that advice is what
# most readers bring to the choice. A comparison article mixes two kinds of statement in one
# table: "JAX is faster for X", which a timer can check on your machine, and "PyTorch suits a
# start-up", which no timer can. Both are written in the same confident tone. Sorting the rows
# into those two kinds is the first step of a decision, and it tells you where measuring is worth
# the effort.
#
# The last column of the table below does that sorting, and the "evidence" column points to the
# lessons where the mechanism is at work: 01–07, which you have seen, and 09–11, which come next.
#
# | dimension (source 001) | PyTorch | JAX | the article's advice | evidence in this course | measurable here? |
# |---|---|---|---|---|---|
# | team skills | dynamic Python | functional programming | choose what the team knows | 01: pure functions, explicit keys and state; 07: what a port involves | no: a question about your team |
# | ecosystem | large community model hubs | smaller, backed by Google | start-ups choose PyTorch | 06: library map, Keras 3, export; the package check below | partly: which of a project's packages are installed here |
# | training scale | < 1000 accelerators | > 1000 accelerators | large scale → JAX | 05: data, tensor and fully sharded parallelism on 8 devices, simulated where the accelerators are fewer; 11: a GPT's training step sharded both ways, losses equal to one device | no: needs a cluster (claims `tpu-llm`, `huge-scale`) |
# | developer experience | easy to debug | steep, cryptic errors | efficiency → PyTorch | 03: graph breaks, tracer errors and how each framework reports them; 09: NaN hunting, prints inside compiled code, profiler traces of the same training step in each | no: a matter of taste, though 03 shows both error messages |
# | performance | "manual car" | "high-speed train" | JAX is faster when the route is fixed | 02, 03, 04: higher-order derivatives, `jit` vs `torch.compile`, training steps; 09: bfloat16; 10: custom kernels (Triton, Pallas) where the compiler is not enough; 11: a GPT's tokens per second | **yes**: section 4 |
# | migration cost | | | "2–4 weeks, about a rewrite" | 07: converters, silent defaults, the MVP checklist | no: depends on the codebase |
# | hiring | | | JAX engineers are scarce | | no |
#
# The first four rows are source 001's decision matrix; the last three come from the same
# article's car-and-train analogy, its migration estimate and its list of pitfalls.
#
# Lessons 09–11 come after this guide and add to three of its rows, as the table says: 09 the
# tools you debug and profile with (the developer-experience row), 10 what each framework offers
# when its compiler is not enough (custom kernels), and 11 one GPT taken through every stage in
# both frameworks, the closest the course comes to the workload a decision is usually about.
#
# The **decision tree** of source 000, with the claim each branch rests on (verdicts in section 4)
# and two speed claims the course adds to it from the articles, each marked *added*:
#
# - **Choose JAX** if you need (a) top performance and scale: TPU clusters, very large models,
#   scientific computing (claims `tpu-llm`, `huge-scale`, `higher-order`, `train-throughput`,
#   `train-memory`); *added*: fast answers at batch 1, source 004's claim `batch1-latency`;
#   (b) a functional style your team likes (lesson 01); (c) research with composable
#   transformations such as `vmap` and `scan` (`vmap` in lesson 02; `scan` and the claim
#   `vmap-simulation` in lesson 03).
# - **Choose PyTorch** if you need (a) fast iteration on changing models (claims `dynamic-shapes`,
#   `first-call`); (b) the ecosystem of third-party libraries (lesson 06); (c) a clear path to
#   production deployment (lesson 06: `torch.export`; no benchmark measures a deployment path);
#   *added*, (d): `torch.compile` as the default baseline, which source 000 states outside its
#   tree (claims `compile-*`).
#
# A word on versions before going on. Source 000 is written for "PyTorch 3.x" and "JAX 0.5+".
# JAX 0.5 and its successors are real releases, and this course runs a newer one. PyTorch 3 has
# not been released: when the course's version sets were last checked (`docs/VERSIONS.md`), the
# newest PyTorch on PyPI was a 2.x release, and what the article credits to "3.x" (`torch.compile` as the
# default baseline, FSDP2's `fully_shard`) is part of PyTorch 2. Read "PyTorch 3.x" as "a recent
# PyTorch 2": the claims are about those features, and section 4 tests them on the releases
# printed below.

# %%
from importlib.metadata import version

print(f"this notebook runs torch {torch.__version__}, jax {jax.__version__}, flax {version('flax')}, "
      f"optax {version('optax')}")

# %% [markdown]
# Every number this notebook measures belongs to these releases; the result files the course
# ships, set beside this run in sections 4 and 5, record the releases they ran on in their own
# fingerprints (`docs/claims-results/`, in the course's repository: the package that Colab and
# Kaggle install carries none, and there those sections show this run alone). Both frameworks change their compilers
# and kernels from one release to the next, so a verdict you read here is a statement about this
# line as much as about the machine; keep it next to any result you share.
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
# Read "missing" as "not installed in this environment", not "does not exist": every package in
# the list is published on PyPI, and the course installs only what its lessons use. What the
# check does show is the shape of the question a team has to answer: list the libraries your
# project cannot live without, then see, side by side, whether each one has a counterpart in the
# other ecosystem. Lesson 06 maps those counterparts; lesson 07's MVP
# checklist runs this same check on a pair of models.

# %% [markdown]
# ## 2. Batch-1 inference latency
#
# **Key concepts**
# - At batch 1 a small model does little arithmetic per operation, so much of the time can go
#   into **per-operation overhead**: Python, dispatch, allocation. That overhead is what `jit`
#   reduces; this section times whole calls, overhead and arithmetic together, in the article's
#   pairing (eager PyTorch against jitted JAX), which changes the framework as well.
# - The first `jit` call traces and compiles; source 004 quotes "about 800 ms, then 10 ms,
#   against 15 ms for PyTorch" for a BERT on CPU.
# - The **break-even** number of calls says when compiling has paid for itself.
#
# Why batch 1? It is the shape of an online service: one request arrives, one answer goes back,
# and the user waits for it. A PyTorch user expects eager mode to be fine here, since there is no
# big batch to speed up. JAX's argument is the opposite: `jit` turns the whole forward pass into
# one compiled program, so the Python interpreter and the framework's dispatcher run once per
# call instead of once per operation. Both arguments are about overhead, not arithmetic, and
# overhead depends on the processor, the Python build and the library versions, so it has to be
# measured here.
#
# The price of `jit` is paid up front, in the first call. Whether that price matters depends on
# how many calls follow it: a server answering millions of requests amortises it, a script that
# runs the model ten times may not. This section measures the three numbers the question needs:
# the first call, the steady state, and the break-even count that combines them.
#
# The encoder is the transformer block of lesson 07, stacked (`course_utils.models.transformer`):
# token and position embeddings, `n_layers` pre-LN blocks, a final LayerNorm, mean pooling, a
# linear head. Both
# frameworks get the same weights and run on the CPU, as in the claim.

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
# JAX: the model split into a graph definition and weights, one jitted function, on the CPU
cpu = jax.devices("cpu")[0]
forward_jax, state_jax = forwards.jit_forward(enc_jax)
state_jax = jax.device_put(state_jax, cpu)
tokens_jax = jax.device_put(tokens_np, cpu)
logits_jax = forward_jax(state_jax, tokens_jax)
logits_jax

# %%
assert_close(logits_jax, logits_torch, rtol=1e-4, atol=1e-5, name="logits")
print("same logits")

# %% [markdown]
# The two logits printed above agree to float32 rounding, so the timings below compare two
# programs that compute the same function. That is the rule of every timing in the course:
# correctness first, then speed.
#
# First call against steady state, for a freshly jitted encoder. `timing.compile_report` starts
# that call from cold caches: it calls `jax.clear_caches()`, which drops every compiled program,
# and keeps JAX's persistent (on-disk) cache off for the call, so the first call pays the whole
# trace, lowering and compilation, as in a new process without a disk cache:

# %%
fresh_forward, _ = forwards.jit_forward(enc_jax)
first = timing.compile_report(fresh_forward, state_jax, tokens_jax, eager=False, target_s=S.bench_s)
first

# %% [markdown]
# The table splits the one-off cost into its stages. *Trace* runs the Python function once
# with abstract values to record its operations (a jaxpr); *lower* turns that record into the
# compiler's input (StableHLO); *compile* is XLA optimising it into machine code for this
# device. The *first call* row is one real call from empty caches, and the three stage rows
# under it are parts of that same call, timed by JAX itself while it ran; what the first call
# adds to their sum is the rest of that call, one run of the program and the bookkeeping around
# the stages that JAX does not count in any of them, so it is never shorter than the compile it
# contains. The *caches* row says what was cold. Compare the first call with the
# *steady state* row: their quotient is how many ordinary
# calls the first call is worth. The stages are the same on a GPU or TPU; XLA's compile step
# there targets the accelerator instead of this CPU, so the *compile* row read here says little
# about an accelerator's (tracing does not depend on the device).
#
# Steady-state latency, interleaved, after proving both compute the same logits:

# %%
latency = timing.compare(
    {"PyTorch eager": forward_torch, "JAX jit": lambda: forward_jax(state_jax, tokens_jax)},
    rtol=1e-4, atol=1e-5, rounds=S.rounds,
)
latency

# %% [markdown]
# How to read the table: the *median* column is the typical time of one call, and *IQR* (the
# spread between the lower and upper quartile) says how much it varied. When the IQR is a large
# fraction of the median, a warning line says so, and the last line reports whether other
# programs competed for the CPU while the rounds ran. The *first call* column is each variant's
# first call in this cell; JAX's includes a whole compilation again, because the cold start in
# the cell above (`jax.clear_caches()`) also dropped the program `forward_jax` had compiled
# (a persistent cache on disk could still serve it; the *caches* row above says whether one is
# configured).
# PyTorch's is not its first of the process (the cell that printed its logits made that one),
# so the column sets a cold JAX start beside a warm PyTorch call and answers no first-call
# question; the break-even below takes JAX's cold start from the `compile_report` above.
# Medians and speed-ups
# describe this run; the sentence below decides whether they are strong enough to call.
#
# Which was faster per call, judged by the course's one rule (the interval of the median of the
# per-round ratios, and only on a quiet machine). This is the article's own pairing, eager PyTorch against
# compiled JAX, so it changes two things at once: read it as "what a user gets by default",
# not as "which framework is faster". (Section 4's `batch1-latency` row is judged, in full
# mode, in the fair pairing, `torch.compile` against `jax.jit`; section 4 prints both pairings
# side by side.)

# %%
per_call = claims.faster(latency, "PyTorch eager", "JAX jit")
print(per_call.explanation)
print(per_call.conditions())

# %% [markdown]
# The first line is written by the verdict rule from this run's per-round ratios: it gives the
# median ratio and its interval (the median of the per-round ratios, so it can differ from the
# table's speed-up, which divides one median by the other), and when it declines to
# judge (a run too short, noisy or contended) it says why, and what to change (for a contended
# run the table's last line above already said it, so it is not repeated).
# The second line records the conditions it was made under: the threads each framework used, the
# cores, and whether other programs were competing. Two runs on the same laptop can print
# different lines when those conditions differ, which is why the conditions travel with the
# verdict.
#
# Break-even against PyTorch eager: JAX's total after `n` calls is
# `first + (n − 1) · steady`; PyTorch's is `n · eager`. The arithmetic is
# `timing.break_even_calls`; it answers "never" when the steady state is not faster. Whether
# JAX's steady state is faster is the question the verdict above asked, so
# `claims.break_even` gives the count as judged only when that verdict named a winner.

# %%
t_torch, t_jax = latency.measurements["PyTorch eager"].median, latency.measurements["JAX jit"].median
print(f"on this machine: PyTorch eager {timing.format_seconds(t_torch)}, JAX jit {timing.format_seconds(t_jax)} "
      f"per call; JAX's first call {timing.format_seconds(first.first_call_s)} from cold caches")
print(claims.break_even(per_call, first.first_call_s, t_jax, t_torch))

# %% [markdown]
# The count uses the medians printed above, so it inherits their noise; treat it as an order of
# magnitude, and when the line says it was not judged, as no more than a hint: the run could not
# tell which variant is faster per call, and the count rests on that. When it is a number, it is
# the number to hold against your own workload: a process that answers many
# more requests than this before it exits gains from compiling, one that answers far fewer pays
# more for the compilation than it saves; when it is a judged "never", compiling does not pay
# for itself at any number of requests on this machine. On a GPU the same formula applies, with all three times
# measured there.
#
# The article's two claims about this workload ("after warm-up JAX answers faster", "the first
# call costs about 800 ms") are about a BERT, far larger than this encoder, so this small
# encoder does not judge them: `course claims` measures them on a BERT-base-shaped proxy (full
# mode) in section 4.

# %% [markdown]
# ## 3. Dynamic shapes: the cost of recompiling
#
# **Key concepts**
# - `jax.jit` specialises on input shapes: every new sequence length is a new trace and a new
#   compilation (or a read from a configured persistent cache that holds it). Eager PyTorch has nothing to recompile.
# - `timing.no_recompile` turns the silent cost into an error that names the cause.
# - The fix: **pad to a few bucket lengths** and pass a mask, so the number of compilations is
#   the number of buckets and the results stay those of the unpadded inputs (to float32
#   rounding).
#
# Why does this deserve a section? Section 2 measured one input shape, the best case for `jit`.
# Real requests come in many lengths: sentences, documents, audio clips. A PyTorch user rarely
# thinks about this, because eager PyTorch looks at each tensor's shape when it runs the
# operation, and `torch.compile` marks a size that keeps changing as dynamic after it has seen
# it change. `jax.jit` does neither: it compiles a program for the exact shapes and dtypes of the
# arguments (the *cache key*) and reuses it only for those. A new length is a cache miss, and a
# cache miss repeats the trace and lowering that section 2's first call paid, and its
# compilation too unless a configured persistent cache already holds that program.
#
# Nothing warns you when that happens; the program just runs slower. This section makes the
# cost visible, measures it, and removes it.
#
# A stream of requests with different lengths, each seen once:

# %%
lengths = [S.seq // 2 + 5 * i for i in range(S.n_lengths)]
stream_np = [np.random.default_rng(n).integers(0, 1000, (1, n)).astype(np.int32) for n in lengths]
stream_torch = [torch.from_numpy(t) for t in stream_np]
stream_jax = [jax.device_put(t, cpu) for t in stream_np]
print("lengths:", lengths)

# %% [markdown]
# The lengths are spread five tokens apart, so no two requests share a shape and each is a new
# cache key for `forward_jax`, which was compiled in section 2 for one length only.
#
# The sharp bit: after warming up on the first length, the loop looks compiled, but each new
# length compiles again (the cell raises on purpose; `expect_error`, the course's
# expected-error helper, prints the error's type and the first lines of its message, and would
# fail the cell if nothing compiled).

# %%
forward_jax(state_jax, stream_jax[0]).block_until_ready()  # warm-up
with expect_error(timing.RecompilationError, lines=6), timing.no_recompile("the request stream"):
    for toks in stream_jax:
        forward_jax(state_jax, toks).block_until_ready()


# %% [markdown]
# The error comes from `timing.no_recompile`, which asks JAX to report every compilation inside
# the `with` block and raises if there was one. Its message quotes JAX's own explanation of the
# cache miss: the function that missed, where it was defined, and the argument whose type
# changed (the token array, `i32[1, n]` with a new `n`). That explanation is the tool to reach
# for in your own code: outside the course, `jax.config.update("jax_explain_cache_misses", True)`
# logs the same report for every miss.
#
# How much does that cost against eager PyTorch? Each timed round of the JAX stream starts
# from empty in-memory caches (`jax.clear_caches()`), as a fresh process meeting these lengths
# would where no persistent cache is configured (section 2's *caches* row says whether one
# is). The PyTorch rounds are
# warm: each repeats lengths that the variant's first call already ran, so the comparison sets
# JAX with empty in-memory caches against a PyTorch one that has met these lengths before, and the PyTorch
# row's *first call* column shows what its first pass over them cost.

# %%
def torch_stream():
    with torch.inference_mode():
        return [enc_torch(t) for t in stream_torch]

def jax_stream():
    jax.clear_caches()
    fresh, _ = forwards.jit_forward(enc_jax)
    return [fresh(state_jax, t) for t in stream_jax]

dynamic = timing.compare({"JAX jit, new lengths": jax_stream, "PyTorch eager": torch_stream},
                         rtol=1e-4, atol=1e-5, rounds=S.stream_rounds)
dynamic


# %% [markdown]
# In this table the JAX row is the whole stream including its compilations (the warning line
# counts how many happened while the rounds ran), and the PyTorch row is the same stream run
# eagerly. Each JAX round pays one compilation per length where no persistent cache is
# configured; where one is, a length's program can be read from it instead, and the warning line
# counts that read as a compilation too. Section 2's tables show how a
# compilation compares with a compiled call on this machine, so you can estimate how much of the
# JAX row is compiling. The comparison is judged at the end of the section.
#
# The fix: pad each request to the next multiple of `bucket` tokens and pass a mask that is
# `True` for real tokens. The encoder ignores padded keys in attention and in the pooling,
# so the logits equal the unpadded ones to float32 rounding (the matrix products run over other
# shapes, so the last bit can differ).

# %%
def pad_to_bucket(toks: np.ndarray, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    n = toks.shape[1]
    size = -(-n // bucket) * bucket  # round up to a multiple of bucket
    padded = np.zeros((toks.shape[0], size), toks.dtype)
    padded[:, :n] = toks
    mask = np.zeros((toks.shape[0], size), bool)
    mask[:, :n] = True
    return padded, mask  # (batch, size) each


graphdef, weights = nnx.split(enc_jax)
weights = jax.device_put(weights, cpu)

@jax.jit
def forward_masked(weights, toks, mask):
    return nnx.merge(graphdef, weights)(toks, mask)

padded = [pad_to_bucket(t, S.bucket) for t in stream_np]
buckets = sorted({p.shape[1] for p, _ in padded})
outs = [forward_masked(weights, jax.device_put(p, cpu), jax.device_put(m, cpu)) for p, m in padded]
assert_close(outs, torch_stream(), rtol=1e-4, atol=1e-5, name="bucketed logits")
print(f"{len(lengths)} lengths -> {len(buckets)} bucket(s) {buckets}; logits equal to PyTorch's "
      "for the unpadded requests (to float32 rounding)")

# %% [markdown]
# Two things make the padded logits equal the unpadded ones (to float32 rounding, which the
# assertion allows for; the reference is eager PyTorch on the unpadded requests, the encoder
# whose logits section 2 checked against the JAX one's at one length). In attention, the mask removes the
# padded positions from the keys, so no real token attends to them; in the pooling, only real
# tokens are averaged. The padded positions still compute something, but nothing reads it. The
# printed line gives the number of distinct shapes `forward_masked` now sees: the number of
# buckets, not the number of lengths. The bucket size is a trade-off: larger buckets mean fewer
# compilations but more wasted arithmetic on padding.
#
# With every bucket compiled once, the stream runs without a single recompilation, and its
# steady cost can be compared with eager PyTorch:

# %%
padded_jax = [tuple(jax.device_put(a, cpu) for a in pm) for pm in padded]
with timing.no_recompile("the bucketed stream"):
    for p, m in padded_jax:
        forward_masked(weights, p, m).block_until_ready()
bucketed = timing.compare(
    {"JAX jit, bucketed": lambda: [forward_masked(weights, p, m) for p, m in padded_jax],
     "PyTorch eager": torch_stream},
    rtol=1e-4, atol=1e-5, rounds=S.rounds,
)
bucketed

# %% [markdown]
# The `no_recompile` block at the top of the cell passed this time: every bucket had been
# compiled by the parity check above, so the timed rounds measure only the compiled programs.
# This is the steady state a server with bucketed inputs reaches after its first request per
# bucket.
#
# The stream against eager PyTorch, first with every length compiling, then with the buckets
# compiled once (each sentence is generated from its measurement):

# %%
print("every length compiles:", claims.faster(dynamic, "JAX jit, new lengths", "PyTorch eager").explanation)
print(f"{len(buckets)} bucket(s) compiled:", claims.faster(bucketed, "JAX jit, bucketed", "PyTorch eager").explanation)
measured = {
    "dynamic-shapes": claims.Measured(
        dynamic.ratios("JAX jit, new lengths", "PyTorch eager"),
        f"this notebook: {len(lengths)} lengths, in-memory caches cleared before each round",
        contention=dynamic.contention, pairing="article",
        names=("JAX jit, new lengths", "PyTorch eager"),
        rounds_fixed=dynamic.rounds_fixed),  # set by rounds=: the advice names it, not target_s
}

# %% [markdown]
# The two sentences answer different questions. The first is the claim the articles make about
# dynamic shapes, measured as they would meet it: each length compiles. The second compares the
# same stream once the inputs are bucketed and every bucket is compiled, whichever side it
# favours. The ratios of the first measurement are also
# kept in `measured`, so section 4 judges the `dynamic-shapes` claim from them instead of timing
# the stream a second time.
#
# ## 4. The popular claims, re-measured here
#
# **Key concepts**
# - `course claims` (also `claims.run()` from Python) runs compact versions of the course's
#   claim benchmarks and judges each claim with the course's **one verdict rule**
#   (`course_utils/claims/verdict_rule.py`, the same function every lesson uses): from the
#   per-round ratios of two interleaved variants (for a claim stated in seconds, from the
#   seconds measured) it takes the 95 % confidence interval of the
#   median (order statistics, widened 15 % for what a second run moves). *Holds* when the
#   interval lies at or beyond the stated magnitude, *does not hold* when it lies entirely short
#   of it (against a bar of 1x or more that includes an interval entirely below 1, where the
#   opposite happened; against a lower bar, such as lesson 06's 0.9x, an interval below 1 is
#   judged against that bar alone), *inconclusive* when it straddles it, and also when the run
#   was **too short** (fewer than 6 rounds), **noisy** (spread of the ratios above 50 %) or
#   **contended** (other programs took more than a quarter of the cores' time while the rounds
#   ran, or, where the OS keeps no such count, the load average exceeded the cores; or one
#   framework's own threads outnumbered the cores, which the course's policy of as many threads
#   as cores for each never does, though the two pools together may): a busy machine never
#   produces a verdict.
# - Claims about a workload or hardware this machine lacks are *not testable here*, with why; a
#   claim about a BERT is judged on a BERT-base-shaped proxy, in full mode only.
# - The dynamic-shapes claim measured in section 3 is passed in for the CPU, where section 3
#   timed it, rather than measured twice. On a machine with an accelerator, `claims.run` here
#   judges every claim once on the CPU and once on the accelerator (a claim measured on a GPU
#   only, such as `eager-launch`, reads *not testable here* on the CPU), and the tables below
#   give one verdict per device kind.
#
# Why re-measure at all, when the articles already give numbers? Because a speed ratio belongs
# to the machine, the versions, the sizes and the precision it was measured with, and the
# articles rarely state all four. A claim such as "JAX is 2–5x faster" may well have been true
# on the author's accelerator and still be untrue on your laptop, or the other way round. The
# only numbers that can guide your choice are the ones measured where you will run.
#
# Why a fixed rule for the verdict? A timing is a sample, not a fact: run the same cell twice
# and the ratio moves. Reading "1.3x" off one run and calling the claim settled is the mistake
# the rule exists to prevent. It asks whether the whole plausible range of the ratio (the
# interval) lies on one side of what the article stated, and it refuses to answer when the
# machine was too busy for the range to mean anything. So "inconclusive" is a useful answer:
# it says that this run cannot tell, and its explanation (for a contended run, the line under
# the table) says what would let it.
#
# In smoke mode this runs the small sizes; from a terminal, `course claims` (without `--smoke`, and
# with `COURSE_SMOKE` unset) runs the full sizes and writes `build/claims/claims.json` and `claims.png`
# in a clone of the course (elsewhere, name a folder with `--out`). The result files the course
# ships record how long their own runs took and what their first `torch.compile` calls cost; the
# cell below reads them (where only the package is installed, as on Colab, it finds none and
# prints nothing). Those times belong to their own runs, caches included: not every first call
# starts cold. A benchmark that compiles its first call from an
# empty Inductor cache records so (`inductor_cache` in the claim's details); every other first
# call, and every one in a result file written before that record existed, found the on-disk
# cache as earlier runs had left it, so a short one may be a cache read, where a run from an
# empty cache pays for the whole compilation. The cell sorts each
# file's first calls into those two kinds. Section 2's `compile_report` is this lesson's cold
# first call (JAX's). The footer in brackets under the table gives this run's mode and time,
# and the *measured here* column, on the `compile-*` and `batch1-latency` rows, its first
# compiled calls.

# %%
for run in results.shipped():
    timed = [c for c in run["claims"]  # one entry per benchmark, as in the tally
             if isinstance(c.get("details"), dict) and "same_measurement_as" not in c["details"]]
    firsts = {}  # how the Inductor cache started -> [(seconds, claim)]
    for c in timed:
        kind = "from an empty Inductor cache" if c["details"].get("inductor_cache") == "empty" else "with the cache as found"
        for name, s in c["details"].get("first_call_s", {}).items():
            if "torch.compile" in name:
                firsts.setdefault(kind, []).append((s, c["id"]))
    line = (f"{results.machine_label(run)}: {timing.format_seconds(run['seconds'])} in all, load average "
            f"{run['fingerprint']['load_average_1min']} on {run['fingerprint']['cores']} cores")
    for kind, calls in sorted(firsts.items()):
        (low, low_id), (high, high_id) = min(calls), max(calls)
        line += (f"; first torch.compile calls {kind}: {timing.format_seconds(low)} ({low_id})"
                 + (f" to {timing.format_seconds(high)} ({high_id})" if len(calls) > 1 else ""))
    print(line)

# %%
try:  # a clone of the course keeps results in its build/ folder
    claims_dir = config.course_root() / "build" / "claims"
except FileNotFoundError:  # the package alone (Colab, Kaggle): under the working folder
    claims_dir = "build/claims"
report = claims.run(smoke=S.smoke, out=claims_dir, measured=measured,
                    device="all", verbose=False)  # the CPU (sections 2-3 timed there), then any accelerator
report

# %% [markdown]
# Read the table one row at a time, left to right: the claim in the article's words, the
# `device` the claim was measured on, its `source`, what the article *stated*, what was *measured
# here* (the median with its interval and the number of samples `n`, then the workload: a ratio
# over interleaved rounds for a speed-up claim, seconds over first calls for `first-call`, each
# after `jax.clear_caches()` with a configured persistent cache switched off, so each compiles
# afresh), the *verdict*, and *why*, the sentence the rule wrote for that verdict. Rows marked *not testable
# here* or *skipped in smoke mode* carry their reason in the last column instead of a
# measurement. Which rows are measured, and on which device, depends on the machine running the
# notebook, so your table may have rows this description does not foresee; the *why* column is
# the place to look.
#
# The same outcomes as a figure:

# %%
fig, ax = plt.subplots(figsize=(9, 0.7 * len(report.outcomes) + 1.5))
claims.plot(report.outcomes, ax=ax)  # the figure shows below the cell (inline backend)
fig.tight_layout()

# %% [markdown]
# Each measured speed-up claim is a point (the median ratio) with a bar on a log axis: the bar
# is the interval the verdict reads, the median's 95 % interval widened by 15 %, as in the
# table. The vertical line is 1x, no difference, and the shaded band is the magnitude the
# article stated. The point's colour is the verdict: green holds, red does not hold, grey
# inconclusive. A verdict on a claim needs the whole bar inside or beyond the band, or the whole
# bar short of it, so a long bar that crosses the band is what an unsettled measurement looks
# like; a bar clear of the band can still be grey, when the run was too short, noisy or
# contended. On a speed-up row, "× faster" means the side named under the claim's id: the
# row's label says which variant a point right of 1x favours, the denominator of the claim's ratio (a
# JAX variant for the claims that JAX is faster, `torch.compile` for the `compile-*` claims, and
# PyTorch eager for `dynamic-shapes`, whose claim is that JAX is the slower one). A point left
# of 1x means that variant was the slower one. The one ratio that is not a speed, `train-memory`
# (measured on a GPU only), names no side: its point is PyTorch's memory peak over JAX's, so
# right of 1x JAX needed less memory. Claims stated in seconds rather than as a ratio,
# and claims not measured here, appear with their verdict written next to the 1x line instead of
# a point.
#
# Your run next to the runs the course ships (`docs/claims-results/`, full mode, each with its
# machine's fingerprint). `course claims merge DIR...` builds the same table from any result
# files, for example a colleague's GPU run:

# %%
Markdown(results.merge_table([results.load(report.json_path), *results.shipped()]))

# %% [markdown]
# Each column is one result file, headed by the machine's fingerprint (processor, cores, "smoke"
# for a smoke-mode run, date). Look along a row: the same claim can reach different verdicts on
# different machines, or in smoke mode against full mode, which is the point of measuring where
# you run. Only a claim whose verdicts agree across very different machines can be carried from
# one machine to another with some confidence.
#
# The decision matrix again, now with this machine's verdicts next to each row that a
# measurement can speak to:

# %%
rows = {
    "performance: higher-order derivatives (02)": ["higher-order"],
    "research transforms: vmap (02, 03)": ["vmap-simulation"],
    "torch.compile as the default baseline (03, 04)": ["compile-matmul", "compile-fusion", "compile-training"],
    "inference at batch 1 (this lesson)": ["batch1-latency", "first-call"],
    "fast iteration on changing shapes (03, this lesson)": ["dynamic-shapes"],
    "training speed and memory (04)": ["train-throughput", "train-memory"],
    "training scale (05)": ["tpu-llm", "huge-scale"],
}
several = len(report.devices) > 1  # with an accelerator: one verdict per device kind
lines = ["| row of the guide | claim: verdict on this machine |", "|---|---|"]
for row, ids in rows.items():
    found = [f"`{o.claim.id}`" + (f" ({o.device})" if several else "") + f": {o.verdict}"
             for i in ids for o in report.outcomes if o.claim.id == i]
    lines.append(f"| {row} | " + "; ".join(found) + " |")
lines.append("| team skills, hiring, migration cost, developer experience | not measurable: decide them with your team |")
Markdown("\n".join(lines))

# %% [markdown]
# The last row is there on purpose: four of the guide's rows have no measurement behind them on
# any machine. The tally of this run's verdicts counts benchmarks (once per device kind where
# there are several), not claims: `higher-order`
# and `jax-2-5x` are two sentences of one article (the second about several tasks, higher-order
# derivatives among them) that the course measures on one workload, batched third derivatives,
# in one pairing, so one benchmark run judges both (against their different stated
# magnitudes), and counting it twice would make one measurement look like two pieces of
# evidence. A benchmark that was not testable
# here or skipped in smoke mode measured nothing, so the first line also says how many of them
# measured something in this run. Then a note if the machine was
# busy while it ran:

# %%
measurements = {}  # one benchmark run judges several claims: (benchmark, device) -> outcomes
for o in report.outcomes:
    measurements.setdefault((BENCHMARKS[o.claim.id], o.device), []).append(o)
tally = Counter(" / ".join(sorted({o.verdict for o in group})) for group in measurements.values())
measured_now = sum(any(o.samples for o in group) for group in measurements.values())
n_claims, n_benchmarks = len({o.claim.id for o in report.outcomes}), len({b for b, _ in measurements})
runs_text = f" on {len(report.devices)} device kinds: {len(measurements)} benchmark runs" if several else ""
print(f"{n_claims} claims, {n_benchmarks} benchmarks{runs_text} ({measured_now} measured in this run); verdicts by "
      "benchmark" + (" and device kind" if several else "") + ":", ", ".join(f"{n} {v}" for v, n in tally.items()))
for (_, device), group in ((k, g) for k, g in measurements.items() if len(g) > 1):
    print("one measurement, counted once, judges", " and ".join(f"`{o.claim.id}` ({o.verdict})" for o in group)
          + (f" on {device}" if several else ""))
assert all(report.outcome(i).details.get("measured_by") for i in measured)  # section 3's, not re-run
if "warning" in report.machine:
    print("note:", report.machine["warning"])

# %% [markdown]
# A run on a busy machine, or in smoke mode, can end with most claims unjudged: smoke mode skips
# the slowest benchmarks and times fewer rounds, and a busy machine is refused a verdict. That
# is the rule protecting you from a verdict the numbers cannot support, not a failure of the
# notebook. For verdicts, run `course claims` on a quiet machine (nothing else running, `uptime`
# showing a low load), and on each kind of hardware you are choosing between.
#
# One row of the table needs a word on its pairing. Section 2 put batch-1 latency to the rule
# in the article's pairing, eager PyTorch against `jax.jit`, on its small encoder;
# `course claims` puts the `batch1-latency` claim to it in the fair one, `torch.compile`
# against `jax.jit`, on the BERT-base-shaped proxy (full mode only). The pairing and the model
# both differ, so the two sections can disagree without either being wrong. Which pairing each run timed:

# %%
b1_pairings = {p.id: f"{p.numerator} / {p.denominator}" for p in claims.get("batch1-latency").pairings}
b1_runs = [("this run", report.outcome("batch1-latency").to_dict())]
b1_runs += [(results.machine_label(r), c) for r in results.shipped() for c in r["claims"] if c["id"] == "batch1-latency"]
print(f"section 2 (this lesson): {per_call.names[0]} / {per_call.names[1]}: {per_call.verdict}")
for where, c in b1_runs:
    timed = b1_pairings.get(c.get("pairing"), "no pairing timed")
    print(f"section 4, {where}: {timed}: {c['verdict']}")

# %% [markdown]
# ## 5. A worked choice: three readers walk the tree
#
# **Key concepts**
# - A branch of the decision tree is **taken** only when the claim it rests on holds on every
#   run that judged it, **not taken** when it does not hold on every run that judged it, and
#   **unsettled** when no run judged it or the runs disagree. A run that measured on the CPU
#   and on an accelerator counts once per device kind.
# - The runs that count here: this notebook's, and each full-mode run the course ships
#   (`docs/claims-results/`, none where only the package is installed).
# - What the measured branches leave open is decided by the rows no benchmark settles.
#
# The tree of section 1 is advice; the verdicts above are evidence. Putting them together is
# the step a reader has to take for their own project, so here it is taken three times, for
# three readers with different needs. Each reader's needs pick the branches of the tree that
# apply; each branch names the claim it rests on; the claim's verdicts, read from this run's
# report and from the shipped result files, decide whether the branch is taken. The readers and
# their branches are typed in below; no decision is: every verdict, branch decision and bottom
# line is computed from the runs, so on another machine, or after a
# rerun on a quiet one, the same cells can reach a different choice.

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
runs = [("this run", [o.to_dict() for o in report.outcomes])]
runs += [(results.machine_label(run), run["claims"]) for run in results.shipped()]


def runs_judging(claim_id):
    """The claim's verdicts in this run and in each shipped result file, one per device kind."""
    found = {}
    for where, outcomes in runs:
        mine = [c for c in outcomes if c["id"] == claim_id]
        found.update({f"{where} ({c['device']})" if len(mine) > 1 else where: c["verdict"] for c in mine})
    return found


# %%
def branch_decision(found):
    """Taken, not taken or unsettled, from the verdicts of the runs that judged the claim."""
    judged = {v for v in found.values() if v in (claims.HOLDS, claims.DOES_NOT_HOLD)}
    if judged == {claims.HOLDS}:
        return "taken"
    if judged == {claims.DOES_NOT_HOLD}:
        return "not taken"
    return "unsettled (the runs disagree)" if judged else "unsettled (no run judged it)"


for reader, branches in PROFILES.items():
    print(f"Reader: {reader}")
    decisions = {}  # claim -> (decision, the framework its branch picks)
    for branch, claim_id, framework in branches:
        found = runs_judging(claim_id)
        decisions[claim_id] = (branch_decision(found), framework)
        print(f"  {branch} [{claim_id}]: " + "; ".join(f"{k}: {v}" for k, v in found.items())
              + f" -> {decisions[claim_id][0]}")
    picks = {fw for d, fw in decisions.values() if d == "taken"}
    against = [c for c, (d, _) in decisions.items() if d == "not taken"]
    choice = (f"the measured branches point to {min(picks)}" if len(picks) == 1 else
              "the measured branches point both ways" if picks else
              f"no branch is taken: {', '.join(against)} did not hold where judged" if against else
              "no measured branch decides")
    print(f"  => {choice}; the team, ecosystem and migration rows decide the rest\n")

# %% [markdown]
# Read each walk from the bottom line up. Where a branch is taken, every run that judged its
# claim found that it holds, and the reader can lean on it for a workload like the
# one measured. Where it is not taken, the claim behind that branch did not survive
# measurement, so the reader should not choose for that reason. An unsettled branch means
# that no run settled its claim, or that the runs disagree: the claim was not testable on
# these machines (no GPU, no cluster), was skipped in smoke mode, was refused a verdict (a busy
# machine, too few rounds, noisy ratios), or its interval straddled the stated magnitude, and a
# run on the hardware you are choosing for is what would settle it. The bottom line of each
# reader is where the measurable part of the choice ends; the rows of section 1 that no
# benchmark settles (what the team knows, which libraries it needs, what a port costs) decide
# the rest, and for a real project the step after this one is the MVP checklist of lesson 07
# on your own model.
#
# A branch is only as wide as the measurement behind it. The first reader's `dynamic-shapes`
# branch rests on JAX meeting every new length unbucketed; section 3 also timed the same stream
# bucketed, and its second verdict line compares that stream, its few buckets compiled once,
# with eager PyTorch on this machine: what a service that pads its requests pays after the first
# request of each bucket, and the measurement to read before taking that branch. Likewise `course claims` times
# `batch1-latency` on a BERT-base-shaped proxy against `torch.compile` (in full mode), not on the
# reader's model against eager PyTorch (section 4 prints which pairing each run timed).
#
# ## Summary
#
# | question | how to answer it | where |
# |---|---|---|
# | is framework X faster for my model? | same model both ways, proven equal, timed interleaved on your hardware | 07 (MVP checklist), this lesson |
# | what does compiling cost? | first call vs steady state, break-even calls | 00, 03, section 2 |
# | will my inputs recompile? | `timing.no_recompile`; pad to buckets with a mask | 03, section 3 |
# | do the articles' numbers hold here? | `course claims` | section 4 |
# | team, hiring, ecosystem fit, migration cost | not a benchmark: ask the team, run the MVP checklist | 06, 07 |
# | will a whole model behave the same in the other framework? | port its weights, prove logits, gradients and a training step equal (07, 11), train both on the same batches and compare their loss curves (11), then time both | 07, 11 |
# | where does a step's time go, and why did it return NaN? | a profiler trace of the step in each framework; NaN checks under `jit` and autograd | 09 |
#
# **Common misconceptions** (each corrected above)
# - *"JAX is faster"* / *"PyTorch is faster"*: it depends on the workload, the sizes and the
#   hardware; each claim in section 4 is judged on its own, and one machine can settle one claim
#   in JAX's favour and another against it.
# - *"The first call shows the speed."* It includes compilation, which can dominate a short
#   job or a stream of new shapes (sections 2 and 3).
# - *"Dynamic shapes rule JAX out."* Padding to a few buckets with a mask bounds the
#   compilations and keeps the results those of the unpadded inputs, to float32 rounding
#   (section 3).
#
# **Review questions**
#
# <details><summary>1. Why is batch-1 latency a good case for jit and a bad case for GPUs?</summary>
# At batch 1 each operation of a small model does little arithmetic, so fixed per-operation costs (Python,
# dispatch, kernel launches) dominate. jit removes the Python and dispatch per operation
# (lesson 03 times the per-operation cost itself; section 2 here times eager PyTorch against
# jitted JAX, which changes the framework as well). The GPU half is reasoning, not a timing of
# batch 1 on a GPU: an accelerator adds a kernel launch per operation (the `eager-launch` claim,
# which `course claims`, and section 4 on a machine with a GPU, measure on a GPU only) and copies
# to and from the device, costs that a tiny workload cannot amortise.
# </details>
#
# <details><summary>2. A claim "holds" on your laptop. Does it hold on a GPU server?</summary>
# Not necessarily: the ratio depends on the hardware, threads, precision and sizes. The verdict is a
# statement about this machine; rerun `course claims` there.
# </details>
#
# <details><summary>3. Which rows of the decision matrix can no benchmark settle?</summary>
# Team skills, hiring, developer-experience preferences and migration cost: they depend on
# people and on the codebase. Measure what can be measured and decide the rest with the team.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and
# press *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.
# Where an executed copy's script does not run (GitHub's preview, an untrusted notebook)
# each answer is folded under its question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("08_choosing")

# %% [markdown]
# **Next:** the exercises in `exercises/08_choosing_exercises.ipynb` (judge a claim from
# samples, count how many new shapes a compiled model can afford, bucket dynamic shapes, measure
# a claim with the course's timing helpers, and decide one team's port, saying which parts of the answer were
# measured).
#
# **Closing note.** The claims table above was measured on the machine that ran this notebook,
# at the sizes of the mode it ran in (its footer says which); its JSON and plot are in
# `build/claims/` (at the root of a clone of the course; where only the package is installed,
# under the working folder). `course claims` from a terminal (without `--smoke`, and with `COURSE_SMOKE` unset),
# or this notebook in full mode, gives the full-size version.
