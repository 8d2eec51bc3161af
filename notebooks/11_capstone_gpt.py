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
# # 11 · Capstone: one small GPT in both frameworks, from data to sampling
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/11_capstone_gpt.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/11_capstone_gpt.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/11_capstone_gpt.ipynb)
#
# Lessons 01–10 taught the pieces on small models. This capstone puts them together on the
# workload most readers came for: a transformer language model, built once in `torch.nn` and
# once in Flax NNX, fed by one data pipeline per framework, proven to compute the same thing
# at every stage, trained, made fast, sharded, checkpointed, exported, sampled and ported.
# Every claim of equality in it is a check that runs; every speed it states for this machine
# is a measurement made in it (what it says of GPUs and TPUs comes from the libraries' own
# documentation, and regional compilation, in section 2, is described but not timed).
#
# **Learning objectives.** After this notebook you can
# 1. write a small GPT (embeddings, pre-LayerNorm causal self-attention blocks, a tied head,
#    a KV cache) in both frameworks, and explain why the NNX version scans one stacked block
#    over its layers where PyTorch loops over a `ModuleList`;
# 2. prove two implementations equal stage by stage (logits, loss, every gradient, one AdamW
#    step, `parity_steps` training steps, fifty in a full run), and tell float32 drift from a bug with a float64 control;
# 3. train, sample, speed up and port the model in both frameworks, and state what each
#    speed-up and each step's memory is, measured on this machine with the method named.
#
# **The story.** One model is followed from its first byte of data to its last sampled
# character, and at every stage the two frameworks are made to do the same thing and then
# caught doing it. Section 1 fixes the data, so that nothing else can explain a difference.
# Section 2 writes the model twice and meets the first structural difference, a list of blocks
# against one scanned, stacked block. Section 3 proves the two models equal, output, loss,
# gradients and one optimiser step, then writes the training step itself on the page in both
# frameworks, with the recipe a GPT is actually trained with. Section 4 trains with those two
# steps and samples, first token by token and then with the whole decode loop compiled.
# Section 5 asks what each lever of speed is worth on this machine, with the whole step
# compiled on both sides and the fused attention next to the hand-written one. Sections 6 and
# 7 spread the same step over devices and processes, count the collectives XLA inserts for
# each layout, and stop and resume it without losing a bit; section 8 moves the trained weights across.
# Each stage leans on the one before: a speed-up is only timed after the equality it relies on
# has passed, and a sharded run is only trusted because its loss curve equals one device's.
#
# **How the lesson is built.** Nothing here is new machinery: each stage reuses a module of
# `course_utils`, tested on its own, so the notebook can show the ideas and the checks. The
# GPT's modules sit in one folder, `course_utils/gpt/`, as nanoGPT keeps its model, training
# and sampling side by side: the model `model.py` (both frameworks in one file, read top to
# bottom), its weight converter `convert.py`, the data `data.py`, the training steps
# `train.py`, sampling with and without a KV cache `sample.py`; the timing and verdicts are
# the same `course_utils.timing` and `course_utils.claims` every lesson uses. Sections 6 and
# 7 add the mesh (`shard.py`), FSDP2 (the launched script `course_utils/dist/torch_gpt.py`),
# checkpoints (`checkpoint.py`) and exports (`export.py`) on top of the same model and step.
# The sizes are small on purpose: smoke mode shrinks them so that the whole lesson runs on a
# laptop's CPU, full mode trains longer with the same code, and the checks are written to hold
# on a GPU too (full float32 precision in both frameworks), where the timings change and the
# equalities should not.

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
    "block_size": (64, 32),  # context length: positions the model sees
    "d_model": (128, 32),  # width of the residual stream
    "n_heads": (4, 2),  # attention heads
    "n_layers": (4, 2),  # transformer blocks
    "d_ff": (512, 128),  # MLP hidden width
    "batch": (32, 8),  # sequences per training step
    "train_steps": (800, 30),  # training steps in section 4, each framework
    "warmup_steps": (100, 5),  # linear warm-up of the learning rate (section 3.2), then cosine decay
    "recipe_steps": (10, 6),  # steps of the recipe compared in both frameworks in section 3.2
    "scan_layers": (48, 8),  # depth of the scanned model whose compile time section 2 measures
    "parity_steps": (50, 20),  # steps compared with their float64 control in section 3
    "eval_batches": (20, 4),  # validation batches for the validation loss
    "sample_chars": (300, 40),  # characters sampled from each trained model
    "k_steps": (4, 2),  # training steps per timed call in section 5
    "target_s": (1.0, 0.1),  # seconds of timing per variant in section 5
    "scale_steps": (8, 4),  # steps of each sharded run in sections 6 and 7 (short: float32 drift grows with steps)
    "scale_batch": (16, 8),  # sequences per step there (split over 8 devices or 2 ranks)
    "n_procs": (2, 2),  # PyTorch processes started by torchrun
    "launch_timeout": (300, 180),  # seconds before the torchrun launch is stopped
    "export_chars": (100, 16),  # characters sampled through each exported program
}

# %%
from course_utils import env

# First, before anything touches a device: 8 simulated CPU devices for JAX (section 6),
# JAX before PyTorch, float32 in both, one device kind for both (compared throughout).
SETUP = env.setup(one_kind=True, cpu_devices=8)

import copy
import dataclasses
import inspect

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import optax
import torch
from flax import nnx
from torch.nn import functional as F
from IPython.display import Markdown, display
from tqdm.auto import tqdm

from course_utils import claims, compat, config, gpt, memory, plots, timing
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch_dev, _ = SETUP.pair()  # the same kind of device as JAX's (env.setup chose it)
print(env.report().line())

# %% [markdown]
# The line above records what this run used: both frameworks' versions, the device each
# computes on, the float32 precision (full float32 matmuls in both, JAX's `"highest"`), and
# whether smoke mode shrank the sizes. The parity checks below must pass on any machine; the
# timings and the samples belong to this run.
#
# ## 1. Data: a corpus that ships with Python, one batch order, two pipelines
#
# **Key concepts**
# - `pydoc_data.topics` is part of CPython's standard library: the language reference's help
#   pages, English and code (the cell below prints how many characters this Python's copy
#   holds). No download, on any machine.
# - A character-level tokenizer: one token per distinct character, about a hundred of them.
# - One batch order, drawn once from a seeded NumPy generator, consumed by both pipelines:
#   a `torch.utils.data.DataLoader` (its `batch_sampler` is the order) and a NumPy iterator.
#
# A comparison of two training runs means nothing if the runs see different data. The usual
# way to lose that guarantee is to let each framework shuffle on its own: `DataLoader(...,
# shuffle=True)` draws from PyTorch's generator, a Grain or `tf.data` pipeline from its own,
# and the two orders differ from the first batch. Here the order is data: an array of window
# starts, `(steps, batch)`, made once by `np.random.default_rng(seed)`. Each pipeline reads the
# same array in its own idiom.
#
# The tokenizer is deterministic too: its vocabulary is the sorted set of the corpus's
# characters, so the same text gives the same ids everywhere. The text itself comes with the
# Python installation, and the help topics change a little between Python releases; a run on
# another Python version trains on a slightly different corpus, which changes the numbers
# below and none of the checks.

# %%
corpus = gpt.data.load_corpus()
tokenizer = gpt.data.CharTokenizer.from_text(corpus)
ids = tokenizer.encode(corpus)  # (n_chars,) int64
train_ids, val_ids = gpt.data.split_ids(ids, val_fraction=0.1)
n_order = max(S.train_steps, S.parity_steps)
order = gpt.data.batch_order(len(train_ids), S.block_size, S.batch, n_order, seed=0)
print(f"{len(corpus):,} characters, vocabulary {tokenizer.vocab_size}; "
      f"train {len(train_ids):,} / validation {len(val_ids):,} tokens; order {order.shape}")
print(repr(corpus[20_000:20_160]))

# %% [markdown]
# The validation split is the last tenth of the text, not a random sample of windows, so no
# validation window overlaps a training one. The sample shows what the model is trained to
# imitate: English prose about Python, code fragments, indentation.
#
# Why characters rather than a subword tokenizer such as GPT-2's byte-pair encoding? A
# tokenizer is a third component that both frameworks would have to share, with its own
# vocabulary file and download; characters need nothing but the text, every sample is
# readable, and the vocabulary is small enough that the embedding is a minor part of the
# model. The price is length: a word takes several positions, so a context of `block_size`
# characters holds a sentence, not a page. For a lesson about the frameworks, not about
# language modelling, that is the right trade.
#
# Each framework now gets its pipeline. PyTorch's idiom is a `Dataset` (item `i` is the window
# starting at token `i`) behind a `DataLoader`; handing the order to `batch_sampler` replaces
# the loader's own shuffling. JAX has no loader of its own: the idiom is any Python iterator
# of NumPy arrays (Grain adds multiprocessing and checkpointable iterators on top of the same
# idea), and `jnp.asarray` moves each batch to the device.
#
# Both pipelines cut windows the same way: `block_size + 1` consecutive tokens starting at a
# drawn position, the first `block_size` as inputs `x` and the last `block_size` as targets
# `y`. Windows may overlap, and a position may be drawn twice: this samples the corpus
# uniformly without an epoch structure, nanoGPT's choice for a single text file.

# %%
# PyTorch
loader_torch = gpt.data.torch_loader(train_ids, order, S.block_size)
x_torch, y_torch = (t.to(torch_dev) for t in next(iter(loader_torch)))
print(type(loader_torch).__name__, tuple(x_torch.shape), x_torch.dtype)

# %%
# JAX
batches_np = gpt.data.numpy_batches(train_ids, order, S.block_size)  # a generator
x_np, y_np = next(batches_np)
x_jax, y_jax = jnp.asarray(x_np), jnp.asarray(y_np)
print(type(batches_np).__name__, x_jax.shape, x_jax.dtype)

# %%
same_batches = all(
    np.array_equal(xt.numpy(), xn) and np.array_equal(yt.numpy(), yn)
    for (xt, yt), (xn, yn) in zip(loader_torch, gpt.data.numpy_batches(train_ids, order, S.block_size),
                                  strict=True))
assert same_batches
print(f"all {len(order)} batches identical in both pipelines: {same_batches}")
print("x:", repr(tokenizer.decode(x_np[0][:40])), "\ny:", repr(tokenizer.decode(y_np[0][:40])))

# %% [markdown]
# Every batch of the two pipelines is equal, element for element, and the targets `y` are the
# inputs shifted by one character: at every position the model predicts the next character.
# The dtypes differ (PyTorch's `int64`; JAX's `int32`, its default integer without 64-bit
# mode): the values are what matters, and they are small.
#
# Scaling the pipelines up changes none of this. `DataLoader(num_workers=4)` loads batches in
# worker processes, but the `batch_sampler` still fixes which windows form batch `i`, so the
# order survives; on the JAX side Grain's `DataLoader` with a `sampler` plays the same role,
# with checkpointable iterator state. The order array is the contract between the two.
#
# ## 2. The model, written twice
#
# **Key concepts**
# - A GPT: token + position embeddings, `n_layers` pre-LayerNorm blocks (causal
#   self-attention, then an MLP, each added to the residual stream), a final LayerNorm, and an
#   output head *tied* to the token embedding (logits = x · Eᵀ).
# - The attention is written out by hand in both: one fused `qkv` Linear, heads split by a
#   reshape, a causal mask, softmax, and an output projection.
# - PyTorch keeps its blocks in an `nn.ModuleList` and loops in Python; the NNX model creates
#   one block with `nnx.vmap` (every parameter gets a leading layer axis) and runs it with
#   `nnx.scan`: one block is compiled, whatever the depth.
#
# The architecture is GPT-2's, shrunk. *Pre-LayerNorm* means each block normalises its input
# before attention and before the MLP and adds the result back to an un-normalised residual
# stream (`x + attn(LN(x))`); gradients then reach the early layers through the residual
# additions undisturbed, which is why deep pre-LayerNorm transformers are less sensitive to
# the learning-rate warm-up that the original post-LayerNorm layout needed. *Tied* means
# the output head reuses the token embedding matrix, transposed: the model scores each possible next character by its dot
# product with that character's embedding, and the vocabulary's parameters are shared by
# input and output. Weights start from GPT-2's `N(0, 0.02²)` in both frameworks (without GPT-2's
# extra `1/√N` scaling of the residual projections, `N` the number of residual layers), biases at 0,
# and `dropout=0` throughout, because two frameworks cannot draw the same dropout masks (each
# has its own random number generator), and every stage below compares them exactly.
#
# The model lives in `course_utils/gpt/model.py`, written top to bottom like nanoGPT's
# `model.py`, with both frameworks in one file so the two can be read side by side. Both use
# the same layout choices, so that only the frameworks' real differences remain for the
# converter: a Linear is `weight (out, in)` in PyTorch and `kernel (in, out)` in NNX, and the
# LayerNorm epsilon is set explicitly to 1e-5 on both sides (NNX's own default is 1e-6). Here
# are the two attention modules:

# %%
display(Markdown("```python\n" + inspect.getsource(gpt.model.TorchCausalSelfAttention)
                 + "\n" + inspect.getsource(gpt.model.NNXCausalSelfAttention) + "```"))

# %% [markdown]
# Line for line the same computation: `qkv` splits into query, key and value, each reshaped
# from `(B, T, C)` to `(B, H, T, head_dim)`; the scores `q·kᵀ/√head_dim` are masked where a
# key's position is later than the query's (`allowed`), so position `t` sees only positions
# `≤ t`; softmax, dropout, the weighted sum of values, heads back side by side, projection.
# The `cache` argument is the KV cache of section 4: PyTorch writes into it in place, JAX
# returns a new one (`jax.lax.dynamic_update_slice`), because JAX arrays are immutable.
#
# The two top-level models differ in one place, the blocks. Here is NNX's:

# %%
display(Markdown("```python\n" + inspect.getsource(gpt.model.NNXGPT.__init__)
                 + inspect.getsource(gpt.model.NNXGPT.__call__) + "```"))

# %% [markdown]
# Why scan? Under `jax.jit`, a Python `for` loop over blocks is *unrolled*: the traced
# program holds `n_layers` copies of the block, and compile time and program size grow with
# depth. `nnx.vmap` at creation (with `nnx.split_rngs`, so each layer draws different initial
# weights) builds one block whose every parameter is stacked on a leading `(n_layers, ...)`
# axis; `nnx.scan` then runs `jax.lax.scan` over that axis, with the residual stream as the
# carry. XLA compiles the block once. PyTorch has nothing to compile ahead (eager), and
# `torch.compile` traces the Python loop as it runs, so the `ModuleList` is its idiom.
#
# Scan has costs too. Every layer must have the same shapes and structure (a model whose
# layers differ, such as alternating local and global attention, scans over groups of
# layers, or loops), and code that inspects one layer indexes the stacked arrays instead of
# taking a module from a list, as the cells below show. In exchange, compile time should barely
# grow with depth (a cell below measures it), and `nnx.remat` around the scanned block trades
# recomputation for activation memory layer by layer, as large JAX models do.
#
# Build both, with the same sizes:

# %%
cfg = gpt.model.GPTConfig(vocab_size=tokenizer.vocab_size, block_size=S.block_size, d_model=S.d_model,
                          n_heads=S.n_heads, n_layers=S.n_layers, d_ff=S.d_ff, dropout=0.0)
cfg

# %%
# PyTorch
torch.manual_seed(0)
model_torch = gpt.model.TorchGPT(cfg).to(torch_dev)
shapes_torch = {name: tuple(p.shape) for name, p in model_torch.named_parameters()}
print(f"{sum(p.numel() for p in model_torch.parameters()):,} parameters in {len(shapes_torch)} tensors")
print({k: v for k, v in shapes_torch.items() if "attn.qkv" in k or "tok_emb" in k})

# %%
# JAX
model_jax = gpt.model.NNXGPT(cfg, rngs=nnx.Rngs(0))
params_jax = nnx.state(model_jax, nnx.Param)
shapes_jax = {jax.tree_util.keystr(path, simple=True, separator="/"): tuple(a.shape)
              for path, a in jax.tree_util.tree_leaves_with_path(nnx.to_pure_dict(params_jax))}
print(f"{sum(a.size for a in jax.tree.leaves(params_jax)):,} parameters in {len(shapes_jax)} arrays")
print({k: v for k, v in shapes_jax.items() if "qkv" in k or "tok_emb" in k})

# %%
assert sum(p.numel() for p in model_torch.parameters()) == sum(a.size for a in jax.tree.leaves(params_jax))
n_stacked = sum(name.startswith("blocks/") for name in shapes_jax)  # the scanned block's arrays
in_blocks = sum(p.numel() for name, p in model_torch.named_parameters() if name.startswith("blocks."))
print(f"same parameter count; PyTorch keeps {len(shapes_torch)} tensors, NNX {len(shapes_jax)} arrays, "
      f"{n_stacked} of them stacked ({cfg.n_layers} layers on axis 0); the blocks hold "
      f"{in_blocks / sum(p.numel() for p in model_torch.parameters()):.0%} of the parameters")

# %% [markdown]
# The same number of parameters, arranged differently: PyTorch has one `qkv` weight per
# block, `blocks.0.attn.qkv.weight` of shape `(3·d, d)`; NNX has one stacked kernel
# `blocks/attn/qkv/kernel` of shape `(n_layers, d, 3·d)`, transposed. The tied head appears
# in neither list: both multiply by the token embedding.
#
# Where the parameters are: each block holds `4·d²` in attention (`qkv` and `proj`) and
# `2·d·d_ff` in the MLP, plus biases and two LayerNorms; the embeddings hold `(vocab +
# block_size)·d`. With a hundred characters in the vocabulary the blocks hold most of them,
# the share the line above prints. GPT-2's blocks dominate too, but far less: with its 50,257
# subword tokens the token embedding alone, 50,257 × 768 ≈ 38.6 M parameters, is almost a
# third of the smallest model's 124 M.
#
# A PyTorch habit meets the stacked layout at once: iterating over the blocks. The cell runs
# inside `expect_error`, which prints the error in a line and fails if it does not happen.

# %%
from course_utils.expect import expect_error

with expect_error(TypeError):
    for block in model_jax.blocks:  # as in PyTorch: for block in model.blocks
        print(block)

# %% [markdown]
# There is no list to iterate: `model_jax.blocks` is one `NNXGPTBlock` holding stacked
# arrays. To look at one layer, index the arrays (`model_jax.blocks.fc1.kernel[...][i]`); to
# run the layers, scan over them as `NNXGPT.__call__` does.

# %%
print("layer 1's fc1 kernel:", model_jax.blocks.fc1.kernel[...][1].shape)

# %% [markdown]
# The claim made for scan above, that compile time barely grows with depth, is a measurement to
# make, not a promise to repeat. The cell compiles the forward pass of two scanned models of
# this width, the lesson's model built above (`n_layers` blocks) and one with `scan_layers`
# blocks (far deeper than the lesson's model in a full run; in smoke mode only a few layers
# deeper, which checks the path rather than the depth), twice each, in the alternating order shallow, deep, deep, shallow, so that
# neither depth always pays for going first. Each compile is the first call of a new function
# in a new `jax.jit`: `jax.jit` keeps its compiled programs per function, so nothing compiled
# before stands in for it, and the call traces, lowers and compiles from the start. The
# process's other caches are left as they are: `jax.clear_caches()` (what
# `timing.compile_report(..., cold=True)` calls first) would empty every cache in the process,
# and the cells below would compile again what the cells above had compiled. (JAX's persistent compilation cache, keyed
# by the program's text, is the one thing that could replay a repeated program from disk, and
# the compilation count would count such a read as a compilation; it is off unless
# configured, and the cell switches it off for these calls, `timing.jax_persistent_cache_off()`,
# as section 5 does.)
# `timing.compare` times each function's first call on its own, in the order given, before
# any steady-state round, so each of these four times is one compile (trace, lower and XLA's
# compile) and one run; the line below keeps the faster of each depth's two:

# %%
# JAX: the first call (trace + lower + compile) of the lesson's scanned forward pass and a deeper one
deep_jax = gpt.model.NNXGPT(dataclasses.replace(cfg, n_layers=S.scan_layers), rngs=nnx.Rngs(0))
depths = (cfg.n_layers, S.scan_layers)
scan_models = dict(zip(depths, (gpt.train.jax_split(model_jax), gpt.train.jax_split(deep_jax)), strict=True))


def fresh_forward(n_layers):  # a new function in a new jax.jit, and the parameters to call it with
    g, p, r = scan_models[n_layers]
    r = nnx.to_pure_dict(r)  # plain arrays: a closed-over State would leak its rng counters
    return jax.jit(lambda p, tokens: nnx.merge(g, p, r)(tokens)), p  # (batch, seq) -> (batch, seq, vocab)


scan_order = (depths[0], depths[1], depths[1], depths[0])  # alternating: neither depth always compiles first
scan_calls = {}
for i, n in enumerate(scan_order):
    fn, params = fresh_forward(n)
    scan_calls[f"{n} layers, call {i + 1}"] = lambda fn=fn, params=params: fn(params, x_jax)
compiles_before = timing.CompileCounter.snapshot()
with timing.jax_persistent_cache_off():  # no compile read from disk, where a cache is configured
    scan_timing = timing.compare(scan_calls, check=False, target_s=0.02)  # first calls timed one by one, in order
scan_compiles = timing.CompileCounter.delta(compiles_before)
firsts = {name: m.first_call_s for name, m in scan_timing.measurements.items()}
first_s = {n: min(t for name, t in firsts.items() if name.startswith(f"{n} layers")) for n in depths}
print("first calls in the order run:", ", ".join(f"{name} {t:.2f} s" for name, t in firsts.items()),
      f"({scan_compiles} compilations)")
print(f"scanned forward pass, first call: {depths[0]} layers {first_s[depths[0]]:.2f} s, {depths[1]} layers "
      f"{first_s[depths[1]]:.2f} s ({first_s[depths[1]] / first_s[depths[0]]:.1f}x for "
      f"{depths[1] / depths[0]:.0f}x the layers)")

# %% [markdown]
# The printed ratio is the cost of depth under scan on this machine, from the faster of two
# compiles of each model (on a loaded machine one compile's noise can exceed the
# difference: a ratio near 1, or below it, says depth cost little here, not that it saved
# time). XLA compiles the loop body once, and what
# grows with the layers is the size of the stacked arrays, not the program. An unrolled Python loop would hand XLA `scan_layers` copies of the block to
# optimise instead. PyTorch's counterpart is *regional compilation*: `torch.compile` applied
# to the repeated block (`for block in model.blocks: block.compile()`) rather than to the
# whole model, so Dynamo and Inductor compile one block and reuse the code for every layer
# with the same shapes, the PyTorch documentation's recipe for cutting the cold-start
# compile time of deep transformers. The lesson does not time it: every `torch.compile` graph
# has a compile time of its own (section 5's first-call column shows what one step's graphs
# cost on this machine), and the point is the same on both sides, one compiled block whatever
# the depth.

# %% [markdown]
# ## 3. Proven equal, stage by stage
#
# **Key concepts**
# - `course_utils.gpt.convert` moves weights both ways: transpose each Linear, rename
#   LayerNorm `weight` to `scale`, stack or unstack the layer axis; the tied head needs nothing.
# - From the same weights: the logits, the loss and every gradient of one batch must agree to
#   float32 rounding; so must the parameters after one AdamW step, except at elements whose
#   gradient is rounding noise near zero, where Adam amplifies the noise (the step's cell says
#   how many).
# - Over tens of training steps float32 results drift apart. A float64 control in *both*
#   frameworks measures how much of that is rounding: if the float64 runs agree, it all is.
#
# Equal outputs on one input can hide a wrong layout (a transposed square matrix, a mask off
# by one position); equal gradients of every parameter cannot. So the proof goes stage by
# stage, each stage a check that fails loudly, starting from the PyTorch weights copied into
# the NNX model.
#
# What the converter does, part by part: the embeddings are `(rows, d_model)` in both
# frameworks and copy as they are; each Linear is transposed, `(out, in)` to `(in, out)`; a
# LayerNorm's `weight` becomes `scale`; and the `n_layers` per-block tensors of PyTorch's
# `ModuleList` are stacked on a new leading axis, because the NNX model keeps one array per
# parameter for all layers. The converter works on plain name-to-array mappings, so the same
# function converts gradients (which have their parameters' layout) and trained weights.

# %%
gpt.convert.gpt_torch_to_nnx(model_torch, model_jax)  # PyTorch's initial weights, both models
graphdef, params_jax, rest_jax = gpt.train.jax_split(model_jax)  # pure pytrees for jax.jit


@nnx.jit
def forward_jax(model, tokens):  # the NNX model's forward pass, compiled
    return model(tokens)


# %%
# PyTorch
with torch.no_grad():
    logits_torch = model_torch(x_torch)
logits_torch.shape

# %%
# JAX
logits_jax = forward_jax(model_jax, x_jax)
logits_jax.shape

# %%
assert_close(logits_jax, logits_torch, rtol=1e-5, atol=1e-5, name="logits")
print(f"logits: max |PyTorch - JAX| = {np.abs(np.asarray(logits_jax) - logits_torch.cpu().numpy()).max():.1e}")

# %% [markdown]
# Equal logits to float32 rounding. Now the loss and the gradient of every parameter. The
# JAX side uses the pure loss from `course_utils.gpt.train` (the one section 4's validation
# and the training steps of sections 5 to 7 compile, on one device or eight; section 3.2
# writes a step with the loss spelled out): a function of the parameter pytree, which
# `jax.value_and_grad` differentiates.
#
# "Float32 rounding" needs a precision setting to mean anything: on TPUs, and on NVIDIA GPUs
# with TensorFloat-32 units (Ampere and later, not a T4 or a V100), JAX's default matmul
# precision is lower than float32 (bfloat16 or TensorFloat-32 passes), and PyTorch's TF32
# switch does the same on those GPUs. `env.setup` set full float32 in both (JAX's
# `"highest"`), so the checks here are written to hold on any device; under the defaults a
# run on such a GPU or a TPU would need far looser tolerances.
#
# The tolerances say what "equal" means. The two frameworks run different kernels (PyTorch's
# ATen kernels, one call per operation; XLA's fused, compiled program), which add the same
# products in different orders, so float32 results agree to rounding, not bit for bit (the
# cells below print how far apart they are). A layout bug is nothing like that: a transposed weight or a mask shifted
# by one position changes outputs at the level of the values themselves.

# %%
# PyTorch
model_torch.zero_grad()
loss_torch = model_torch.loss(x_torch, y_torch)
loss_torch.backward()
grads_torch = {name: p.grad.cpu() for name, p in model_torch.named_parameters()}
loss_torch.item()

# %%
# JAX
loss_fn_jax = gpt.train.jax_loss(graphdef, rest_jax)
loss_jax, grads_jax = jax.jit(jax.value_and_grad(loss_fn_jax))(params_jax, x_jax, y_jax)
float(loss_jax)

# %%
grads_converted = gpt.convert.gpt_nnx_tensors_to_torch(grads_jax)  # NNX layout -> PyTorch names
assert_close(loss_jax, loss_torch, rtol=1e-6, atol=1e-6, name="loss")
assert_close(grads_converted, grads_torch, rtol=1e-4, atol=1e-6, name="gradients")
grad_gap = max(float((grads_converted[n] - g).abs().max() / g.abs().max()) for n, g in grads_torch.items())
print(f"loss {loss_torch.item():.6f} vs {float(loss_jax):.6f} (a uniform guess: ln {cfg.vocab_size} = "
      f"{np.log(cfg.vocab_size):.6f}); all {len(grads_torch)} gradients agree, "
      f"worst max |difference| / max |gradient| = {grad_gap:.1e}")

# %% [markdown]
# Every gradient agrees, compared under PyTorch's names after the same converter that moves
# the weights (a gradient has its parameter's layout). The initial loss sits next to
# `ln(vocabulary)`, the loss of a uniform guess, printed beside it: with GPT-2's small initial
# weights the logits start near zero and the first prediction is close to uniform.
# Comparing under PyTorch's names matters for a second reason: an error message then names
# the parameter (`blocks.1.attn.qkv.weight`) a PyTorch user knows, not a stacked NNX path.
#
# **One AdamW step.** Both optimisers come from `course_utils.gpt.train` with one set of
# hyperparameters. Both use *decoupled* weight decay: `p ← p − lr·(m̂/(√v̂ + ε) + wd·p)`.
# `torch.optim.AdamW` applies the decay as `p ← p·(1 − lr·wd)` before the Adam update;
# `optax.adamw` adds `wd·p` to the update before scaling by `−lr`: the same arithmetic, in a
# different order. The decay applies to every parameter on both sides here. The recipe that
# nanoGPT follows (published with GPT-1) exempts biases and LayerNorm gains; to follow it, the
# exemption must be made twice and identically (PyTorch: two parameter groups; optax: `mask=`),
# or the runs part at step one.

# %%
print("AdamW:", gpt.train.ADAMW)

# %%
# PyTorch
stepped_torch = copy.deepcopy(model_torch)
optimizer_torch = gpt.train.torch_adamw(stepped_torch)
gpt.train.torch_step(stepped_torch, optimizer_torch, x_torch, y_torch)
after_step_torch = {n: p.detach().cpu() for n, p in stepped_torch.named_parameters()}

# %%
# JAX
tx = gpt.train.jax_adamw()
jit_step = jax.jit(gpt.train.jax_step(graphdef, rest_jax, tx), donate_argnums=(0, 1))  # state donated


def fresh_state():  # new buffers: donation deletes the arrays it is given
    params = jax.tree.map(jnp.array, params_jax)
    return params, tx.init(params)


params_1, _, _ = jit_step(*fresh_state(), x_jax, y_jax)

# %%
after_step_jax = gpt.convert.gpt_nnx_tensors_to_torch(params_1)
outliers = {n: (after_step_jax[n] - t).abs() > 1e-6 for n, t in after_step_torch.items()}  # beyond rounding
n_outliers = sum(int(m.sum()) for m in outliers.values())
outlier_grad = max((float(grads_torch[n][m].abs().max()) for n, m in outliers.items() if m.any()), default=0.0)
assert outlier_grad < 100 * gpt.train.ADAMW["eps"], "a step differs where the gradient is not near zero"
moved = max(float((after_step_torch[n] - p.detach().cpu()).abs().max()) for n, p in model_torch.named_parameters())
step_gap = max(float((after_step_jax[n] - t).abs().max()) for n, t in after_step_torch.items())
n_elements = sum(m.numel() for m in outliers.values())
exceptions = (f"all but {n_outliers} of {n_elements:,} elements, whose gradients are at most {outlier_grad:.1e} "
              f"(ε = {gpt.train.ADAMW['eps']:.0e})" if n_outliers else f"all {n_elements:,} elements")
print(f"the step moved parameters by up to {moved:.1e}; PyTorch and JAX agree within 1e-6 at {exceptions}; "
      f"largest gap {step_gap:.1e}")

# %% [markdown]
# Adam's first step moves each parameter by about `lr` (the update `m̂/(√v̂ + ε)` is close to
# ±1 for any gradient well above `ε`, whatever its size), and the two frameworks' steps agree to float32 rounding
# almost everywhere. The check is stated precisely because of the exceptions: the first
# update is `lr·g/(|g| + ε)`, whose slope in `g` reaches `lr/ε` near `g = 0`, so where a
# gradient is within a few `ε` of zero, a rounding difference `Δg` between the frameworks
# moves the parameter by up to `lr·Δg/ε` differently. The cell therefore requires agreement
# within 10⁻⁶ everywhere except at elements whose gradient is below `100·ε`, and prints how
# many elements missed 10⁻⁶ and the largest gradient among them. Gradients near zero exist, and some are *exactly zero* in
# exact arithmetic and pure rounding noise in float32. The key bias is one. Adding a
# constant vector to every key adds the same number `q·b` to all of a query's scores, which
# softmax ignores:

# %%
d = cfg.d_model
bias_grad = grads_torch["blocks.0.attn.qkv.bias"]  # [query | key | value] biases
print(f"max |gradient| of block 0's query bias {bias_grad[:d].abs().max():.1e}, key bias "
      f"{bias_grad[d:2 * d].abs().max():.1e}, value bias {bias_grad[2 * d:].abs().max():.1e}")
key_bias = "blocks.0.attn.qkv.bias"
key_moves = [(after[key_bias][d:2 * d] - model_torch.state_dict()[key_bias][d:2 * d].cpu()).abs().max().item()
             for after in (after_step_torch, after_step_jax)]
lr = gpt.train.ADAMW["lr"]
print(f"one AdamW step moved block 0's key bias by at most {key_moves[0]:.1e} in PyTorch, "
      f"{key_moves[1]:.1e} in JAX: {key_moves[0] / lr:.2%} and {key_moves[1] / lr:.2%} of lr = {lr:g}")

# %% [markdown]
# The key bias's gradient is rounding noise, orders of magnitude below the others. Adam
# divides each gradient by its own running size, `lr·g/(|g| + ε)` on the first step, so noise
# becomes a step whose size is set by the noise against `ε = 10⁻⁸` rather than by `lr` alone
# (the second line says what fraction of `lr` it was here), in a direction each framework's
# rounding picks. The step's check above asserted that every element where the two steps
# differ by more than 10⁻⁶ has a gradient below `100·ε`, noise like this. SGD would
# multiply the noise by `lr` and hide it; Adam amplifies it, which is one reason two correct
# implementations of an Adam-trained model drift apart.
#
# ### 3.1 Many steps, and a float64 control
#
# One equal step does not prove a training run: each step feeds the next, and float32
# rounding differs between the frameworks (different kernels, different summation orders).
# So both train for `parity_steps` steps on the same batches, in float32, and again in
# float64. JAX computes in float32 unless 64-bit types are switched on; `jax.enable_x64()`
# does it inside a `with` block only, so the rest of the lesson stays float32
# (`compat.enable_x64` calls it, or `jax.experimental.enable_x64` on jax 0.7). Inside it,
# the same `jit_step` traces again for float64 inputs.

# %%
parity_batches = [gpt.data.windows(train_ids, starts, S.block_size) for starts in order[:S.parity_steps]]


# PyTorch
def torch_losses(dtype):
    model = copy.deepcopy(model_torch).to(dtype)
    optimizer = gpt.train.torch_adamw(model)
    return np.array([float(gpt.train.torch_step(model, optimizer, torch.from_numpy(x).to(torch_dev),
                                                torch.from_numpy(y).to(torch_dev))) for x, y in parity_batches])


# %%
# JAX
def jax_losses(dtype):  # inside enable_x64 for float64: outside it JAX makes float32 arrays
    params = jax.tree.map(lambda a: jnp.array(a, dtype), params_jax)
    opt_state, losses = tx.init(params), []
    for x, y in parity_batches:
        params, opt_state, loss = jit_step(params, opt_state, jnp.asarray(x), jnp.asarray(y))
        losses.append(loss)
    return np.asarray(jax.device_get(losses), np.float64)


# %%
drift_torch_32, drift_jax_32 = torch_losses(torch.float32), jax_losses(jnp.float32)
drift_torch_64 = torch_losses(torch.float64)
with compat.enable_x64():  # 64-bit JAX inside this block only
    drift_jax_64 = jax_losses(jnp.float64)
assert_close(drift_torch_64, drift_jax_64, rtol=1e-9, atol=1e-9, name="float64 losses at every step")
gaps = {
    "PyTorch vs JAX, float64": np.abs(drift_torch_64 - drift_jax_64),
    "PyTorch vs JAX, float32": np.abs(drift_torch_32 - drift_jax_32),
    "PyTorch float32 vs float64": np.abs(drift_torch_32 - drift_torch_64),
    "JAX float32 vs float64": np.abs(drift_jax_32 - drift_jax_64),
}

# %%
rows = ["| step | PyTorch f32 | JAX f32 | " + " | ".join(gaps) + " |", "|---:" * (3 + len(gaps)) + "|"]
for i in sorted({0, 9, S.parity_steps // 2 - 1, S.parity_steps - 1}):
    rows.append(f"| {i + 1} | {drift_torch_32[i]:.6f} | {drift_jax_32[i]:.6f} | "
                + " | ".join(f"{g[i]:.1e}" for g in gaps.values()) + " |")
display(Markdown("\n".join(rows)))

# %% [markdown]
# How to read the table: the first two columns are the float32 losses themselves, step by
# step; each later column is an absolute loss difference. The first of them, the float64 pair, is the floor set by float64 rounding, and it passed a
# check at 10⁻⁹ at every step, so both programs compute the same training. The float32 pair's
# gap is the drift a side-by-side plot would show, and the last two columns split it: each
# framework's float32 run against its own float64 run is that framework's float32 rounding,
# accumulated over the steps. The plot shows every step:

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
colors = ("#999999", "#7b3294", plots.COLORS["pytorch"], plots.COLORS["jax"])
for (label, gap), color in zip(gaps.items(), colors, strict=True):
    ax.plot(np.arange(1, S.parity_steps + 1), np.maximum(gap, 1e-18), label=label, color=color, lw=1)
ax.set(yscale="log", xlabel="step", ylabel="|loss difference|", title="drift between equal GPTs (0 drawn at 1e-18)")
ax.legend(fontsize=7)
ax.grid(alpha=0.3)
fig.tight_layout()

# %% [markdown]
# The grey line (float64 pair) lies orders of magnitude below the purple one (float32 pair),
# except at a step where the two float32 losses happen to round to the same value (a gap of 0,
# drawn at 1e-18; the table above may show one): the float32 difference between the
# frameworks is rounding, not a modelling difference, and the PyTorch and JAX lines show how far each framework's float32 run strays from exact
# arithmetic. Lesson 04 takes the same measurement apart further (where each framework's
# rounding enters, and optax's float32 bias correction).
#
# The control is what makes the claim of equality precise. Without it, "the curves are
# close" could hide a small real difference (a different epsilon, a bias correction in
# another precision) behind the rounding. With it, the float64 gap bounds any modelling
# difference at float64's resolution, and the float32 gaps are rounding by elimination.
#
# ### 3.2 The training step, and the recipe a GPT trains with
#
# Everything so far stepped AdamW at a constant learning rate, which is what a parity check
# wants and not what a GPT is trained with. nanoGPT and most GPT recipes since the published
# ones (GPT-1's warm-up, cosine and decay exemption, GPT-3's clipping) use three more pieces,
# and each must be written once per framework and identically:
#
# - **Linear warm-up, then cosine decay.** Adam's second-moment estimate is poor for its first
#   steps, while it has averaged few gradients, so the learning rate climbs from 0 to its peak over `warmup_steps`, then
#   follows half a cosine down to a tenth of the peak at step `train_steps`, one past the last
#   step trained (whose rate the parity cell below prints as `last`, just above it).
# - **Gradient clipping by global norm.** When the norm of *all* the gradients together exceeds
#   `CLIP`, every gradient is scaled by the same factor, so a rare bad batch cannot throw the
#   weights far; the direction of the gradient is unchanged.
# - **No weight decay on norms and biases.** Decay shrinks weights towards zero, a prior that
#   makes sense for matrices and embeddings, not for a LayerNorm's gain (whose neutral value
#   is 1) or a bias. PyTorch expresses the exemption as two *parameter groups*; optax as a *mask*, a
#   function from the parameter tree to a tree of booleans.
#
# PyTorch has no single scheduler for a linear warm-up followed by a cosine decay
# (`OneCycleLR` shapes its warm-up like its decay, and `SequentialLR` would chain two
# schedulers), so its side writes the formula into a
# `LambdaLR` (a factor of the base learning rate per step); optax has the schedule built in
# (`optax.warmup_cosine_decay_schedule`). The training step below is then the whole of
# training in each framework, the loss written out: the model's logits `(batch, seq, vocab)`,
# the mean cross-entropy against the next characters, the gradients, the clip, the update.

# %%
# PyTorch: AdamW in two parameter groups, warm-up then cosine via LambdaLR, clipping in the step
PEAK_LR, FINAL_LR, CLIP = gpt.train.ADAMW["lr"], 0.1 * gpt.train.ADAMW["lr"], 1.0
WARMUP, TOTAL = S.warmup_steps, S.train_steps


def lr_factor(t):  # the learning rate at step t, as a fraction of PEAK_LR
    if t < WARMUP:
        return t / WARMUP
    progress = min(t - WARMUP, TOTAL - WARMUP) / (TOTAL - WARMUP)
    return (FINAL_LR + (PEAK_LR - FINAL_LR) * 0.5 * (1 + np.cos(np.pi * progress))) / PEAK_LR


def torch_recipe(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]  # Linear weights, embeddings
    no_decay = [p for p in model.parameters() if p.dim() < 2]  # biases, LayerNorm gains
    h = gpt.train.ADAMW
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": h["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=PEAK_LR, betas=(h["b1"], h["b2"]), eps=h["eps"], foreach=False)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)


# %%
# PyTorch: one training step, the loss written out
def torch_train_step(model, optimizer, scheduler, x, y):  # x, y: (batch, seq) token ids
    model.train()
    optimizer.zero_grad(set_to_none=True)
    logits = model(x)  # (batch, seq, vocab)
    loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())  # mean over batch × seq
    loss.backward()  # p.grad for every parameter
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)  # global norm ≤ CLIP
    optimizer.step()
    scheduler.step()  # the learning rate of the next step
    return loss.detach()


# %%
# JAX: the same schedule built in, the exemption as a mask, clipping chained before AdamW
schedule_jax = optax.warmup_cosine_decay_schedule(0.0, PEAK_LR, WARMUP, TOTAL, FINAL_LR)


def decay_mask_jax(params):  # True where AdamW decays: kernels and embeddings
    return jax.tree_util.tree_map_with_path(
        lambda path, _: any(k in jax.tree_util.keystr(path) for k in ("kernel", "embedding")), params)


h = gpt.train.ADAMW
tx_recipe = optax.chain(optax.clip_by_global_norm(CLIP),
                        optax.adamw(schedule_jax, h["b1"], h["b2"], h["eps"], weight_decay=h["weight_decay"],
                                    mask=decay_mask_jax))
rest_pure = nnx.to_pure_dict(rest_jax)  # plain arrays, closed over by the step


# %%
# JAX: one training step, a pure function of the state and the batch
def jax_train_step(params, opt_state, x, y):  # x, y: (batch, seq) token ids
    def loss_fn(params):
        logits = nnx.merge(graphdef, params, rest_pure)(x)  # (batch, seq, vocab)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()  # mean over batch × seq

    loss, grads = jax.value_and_grad(loss_fn)(params)  # grads: the params' tree
    updates, opt_state = tx_recipe.update(grads, opt_state, params)  # clip, AdamW, schedule
    return optax.apply_updates(params, updates), opt_state, loss


jit_train_step = jax.jit(jax_train_step, donate_argnums=(0, 1))  # the old state's buffers reused

# %% [markdown]
# Read the two steps line against line: `zero_grad` has no JAX counterpart because the
# gradients are a return value, not an attribute that accumulates; `loss.backward()` and
# `jax.value_and_grad` are the same reverse pass; the clip, the decay and the schedule that
# PyTorch runs as three calls on two objects (`clip_grad_norm_`, the optimizer's groups, the
# scheduler) are one `optax.chain` in JAX, updated by one call. The parity cell proves the
# pieces equal one at a time: the two schedules at every step of the run, the two decay rules
# on every parameter (the JAX mask moved to PyTorch's names by the converter of section 3),
# and then the two steps from the same weights for `recipe_steps` steps, whose learning rate
# the schedule changes at every step (the cell prints how many of them fall in the warm-up).

# %%
scheduler_probe = torch_recipe(copy.deepcopy(model_torch))[1]
lrs_torch = []
for _ in range(TOTAL):
    lrs_torch.append(scheduler_probe.get_last_lr()[0])
    scheduler_probe.optimizer.step()
    scheduler_probe.step()
lrs_jax = np.asarray(jax.jit(jax.vmap(schedule_jax))(jnp.arange(TOTAL)))
assert_close(lrs_jax, np.array(lrs_torch), rtol=1e-6, atol=1e-9, name="learning rate at every step")
mask_np = jax.tree.map(lambda p, m: np.full(p.shape, float(m), np.float32), params_jax, decay_mask_jax(params_jax))
decayed_jax = {n for n, t in gpt.convert.gpt_nnx_tensors_to_torch(mask_np).items() if bool(t.all())}
decayed_torch = {n for n, p in model_torch.named_parameters() if p.dim() >= 2}
assert decayed_jax == decayed_torch, decayed_jax ^ decayed_torch
print(f"the schedules agree at all {TOTAL} steps (peak {max(lrs_torch):.1e} at step {int(np.argmax(lrs_torch))}, "
      f"last {lrs_torch[-1]:.1e}); AdamW decays the same {len(decayed_torch)} of {len(shapes_torch)} tensors in both")

# %%
recipe_model_torch = copy.deepcopy(model_torch)
recipe_optimizer_torch, recipe_scheduler_torch = torch_recipe(recipe_model_torch)
recipe_params_jax = jax.tree.map(jnp.copy, params_jax)  # copies: the jitted step donates its inputs
recipe_state_jax, recipe_losses_jax = tx_recipe.init(recipe_params_jax), []
recipe_losses_torch = []
for starts in order[:S.recipe_steps]:
    x, y = gpt.data.windows(train_ids, starts, S.block_size)
    recipe_losses_torch.append(float(torch_train_step(recipe_model_torch, recipe_optimizer_torch, recipe_scheduler_torch,
                                                      torch.from_numpy(x).to(torch_dev), torch.from_numpy(y).to(torch_dev))))
    recipe_params_jax, recipe_state_jax, loss = jit_train_step(recipe_params_jax, recipe_state_jax, x, y)
    recipe_losses_jax.append(float(loss))
assert_close(recipe_losses_jax, recipe_losses_torch, rtol=1e-4, atol=1e-5, name="losses under the recipe")
print(f"{S.recipe_steps} steps of the recipe, {min(S.recipe_steps, WARMUP)} of them in the {WARMUP}-step warm-up: "
      f"max loss gap {np.max(np.abs(np.subtract(recipe_losses_jax, recipe_losses_torch))):.1e}")

# %% [markdown]
# The schedules agree to float32 rounding at every step (optax computes in float32, the
# `LambdaLR` formula in Python's float64), both frameworks exempt the same tensors from
# decay, and the two steps give the same losses while the rate changes from step to step.
# Section 4 trains with exactly these two functions.
#
# Where the schedule's state lives differs, and it matters for checkpoints. PyTorch's learning
# rate is a value written into the optimizer's parameter groups by a separate scheduler
# object, whose own step counter must be saved and restored beside the optimizer's state
# (`scheduler.state_dict()`); forget it, and a resumed run restarts its warm-up. In optax the
# schedule is a pure function of a count that lives inside the optimizer state the step
# returns, so any checkpoint of that state carries it without being asked (section 7's Orbax
# checkpoint holds such a count, though its run steps at a constant rate). The decay
# exemption differs in the same way: PyTorch's groups are fixed lists of tensor objects, built
# once from the module, and a parameter added later belongs to no group; the optax mask is a
# function of the parameter tree, applied at every update, so it follows the tree whatever its
# shape, stacked layers included. The rule itself is the one nanoGPT uses: a tensor of two or
# more dimensions (a matrix, an embedding) is decayed, one of a single dimension (a bias, a
# LayerNorm gain) is not. In the stacked NNX tree every block parameter has one more axis (a
# stacked bias or LayerNorm gain has two), so the JAX side cannot count dimensions and names
# the kinds of arrays instead, which is why the check through the converter is worth having.
#
# Clipping needs one word more. `clip_grad_norm_` and `optax.clip_by_global_norm` both compute
# one norm over every gradient of the model and scale all of them by `min(1, CLIP / norm)`
# (PyTorch's divides by `norm + 1e-6`, a relative difference below 10⁻⁶ in a clipped step, whose
# norm exceeds `CLIP` = 1);
# clipping each tensor on its own would change the direction of the gradient. The clip acts in
# every step whose global norm exceeds `CLIP`, which for a freshly initialised model can be most
# of the first steps, and later it guards against the rare batch whose loss spikes.
#
# ## 4. Trained
#
# **Key concepts**
# - The loops are mirror images: section 3.2's `torch_train_step` (`zero_grad` / `backward` /
#   clip / `step` / schedule) on batches from the `DataLoader`, and its jitted `jax_train_step`
#   on batches from the NumPy iterator.
# - Validation loss on the held-out tail of the corpus, without gradients (PyTorch's model in
#   evaluation mode; with dropout at 0, no mode changes a number in either framework).
# - Sampling draws from one stream of uniform numbers shared by both frameworks, so equal
#   weights draw the same tokens (up to near-ties, draws within float32 rounding of a CDF
#   edge); the KV cache must give the same text as recomputing the context.
# - The whole JAX decode loop compiled as one `jax.lax.fori_loop` inside `jax.jit`, and the KV
#   cache timed against none on both sides (4.2).
#
# Both models start from the weights of section 3 and train on the same batches in the same
# order, with the recipe of section 3.2: warm-up, cosine decay, clipping, decay on matrices
# only. The JAX loop keeps its losses on the device and converts them once at the end, so
# dispatch runs ahead of the computation; `tqdm` shows progress in both, and each cell ends
# with a printed line. The JAX bar counts steps *dispatched*, not finished: it can reach the
# end while the device is still computing, and the `device_get` after the loop waits for it.
#
# The JAX loop threads its state explicitly: `jit_train_step` takes the parameters and the AdamW
# state and returns new ones, and because both are *donated* (`donate_argnums=(0, 1)`) the
# old buffers are given to XLA for the new values; the old arrays are deleted, so the loop
# must always use what the step returned. At the end, `nnx.merge` puts the trained
# parameters back into an NNX module for evaluation and sampling. The PyTorch loop updates
# its module in place, the optimiser holding references to the same tensors.

# %%
# PyTorch
trained_torch = copy.deepcopy(model_torch)
optimizer_trained_torch, scheduler_trained_torch = torch_recipe(trained_torch)
train_losses_torch = []
for x, y in tqdm(gpt.data.torch_loader(train_ids, order[:S.train_steps], S.block_size),
                 total=S.train_steps, desc="PyTorch"):
    train_losses_torch.append(torch_train_step(trained_torch, optimizer_trained_torch, scheduler_trained_torch,
                                               x.to(torch_dev), y.to(torch_dev)))
train_losses_torch = torch.stack(train_losses_torch).cpu().numpy()
print(f"PyTorch: {len(train_losses_torch)} steps, loss {train_losses_torch[0]:.3f} -> {train_losses_torch[-1]:.3f}")

# %%
# JAX
params_trained_jax = jax.tree.map(jnp.copy, params_jax)
opt_state_trained_jax, train_losses_jax = tx_recipe.init(params_trained_jax), []
for x, y in tqdm(gpt.data.numpy_batches(train_ids, order[:S.train_steps], S.block_size),
                 total=S.train_steps, desc="JAX"):
    params_trained_jax, opt_state_trained_jax, loss = jit_train_step(params_trained_jax, opt_state_trained_jax,
                                                                     jnp.asarray(x), jnp.asarray(y))
    train_losses_jax.append(loss)
train_losses_jax = np.asarray(jax.device_get(train_losses_jax))  # waits for the last step
trained_jax = nnx.merge(graphdef, params_trained_jax, rest_jax)
print(f"JAX: {len(train_losses_jax)} steps, loss {train_losses_jax[0]:.3f} -> {train_losses_jax[-1]:.3f}")

# %% [markdown]
# Then the validation loss of both, on the same validation windows (their own seeded order
# over the held-out tokens), without gradients. PyTorch's model is switched to evaluation
# mode, as a validation pass should be. The JAX side calls section 3's pure loss on the
# trained parameters, whose structure comes from a model built in training mode; with
# `dropout=0` the two modes compute the same numbers (`compat.eval_view` gives the
# evaluation-mode view where it matters, as the samplers below use it):

# %%
val_order = gpt.data.batch_order(len(val_ids), S.block_size, S.batch, S.eval_batches, seed=1)

# PyTorch
trained_torch.eval()
with torch.no_grad():
    val_loss_torch = np.mean([float(trained_torch.loss(x.to(torch_dev), y.to(torch_dev)))
                              for x, y in gpt.data.torch_loader(val_ids, val_order, S.block_size)])
val_loss_torch

# %%
# JAX
loss_jit_jax = jax.jit(loss_fn_jax)
val_loss_jax = np.mean([float(loss_jit_jax(params_trained_jax, jnp.asarray(x), jnp.asarray(y)))
                        for x, y in gpt.data.numpy_batches(val_ids, val_order, S.block_size)])
val_loss_jax

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
steps = np.arange(1, S.train_steps + 1)
ax.plot(steps, train_losses_torch, label="PyTorch", color=plots.COLORS["pytorch"], lw=1)
ax.plot(steps, train_losses_jax, label="JAX", color=plots.COLORS["jax"], lw=1, ls="--")
for value, name in ((val_loss_torch, "pytorch"), (val_loss_jax, "jax")):
    ax.axhline(value, color=plots.COLORS[name], lw=0.8, ls=":")
ax.set(xlabel="step", ylabel="loss (nats per character)", title="training loss per step; dotted: final validation loss")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
last = max(1, S.train_steps // 10)  # the mean of the last tenth of the training losses
print(f"after {S.train_steps} steps: validation loss PyTorch {val_loss_torch:.4f}, JAX {val_loss_jax:.4f} "
      f"(uniform guess: ln {cfg.vocab_size} = {np.log(cfg.vocab_size):.2f}); mean training loss of the last "
      f"{last} steps PyTorch {train_losses_torch[-last:].mean():.4f}, JAX {train_losses_jax[-last:].mean():.4f}")
print(f"largest training-loss gap between the frameworks: {np.abs(train_losses_torch - train_losses_jax).max():.1e}")
full_steps, smoke_steps = SIZES["train_steps"]
print(f"train_steps: {full_steps} in full mode, {smoke_steps} in smoke mode ({full_steps / smoke_steps:.0f} times "
      f"fewer); this run trained {S.train_steps}")

# %% [markdown]
# The printed gap says how far apart the two curves are at worst: section 3 showed why they
# need not be identical (float32 rounding, amplified by training) and, for its constant-rate
# step, that the float64 control leaves nothing else to explain (the recipe's pieces were
# checked one by one in 3.2, not against float64). The validation losses are computed from the models
# the loops produced; how far they fall below the uniform guess printed next to them depends
# on the number of steps, and the last line says how many fewer smoke mode trains.
#
# The training loss is measured on the batch each step trains on, so it is noisy, which is
# why the line above averages the last tenth of the steps; the validation loss averages
# `eval_batches` batches the models never trained on. A training loss well below the
# validation loss would mean memorising: the printed pair says where this run stands.
#
# ### 4.1 Samples, and the KV cache
#
# Sampling turns logits into text one character at a time: divide the last position's
# logits by a temperature, softmax, draw. The draw is where the frameworks would part:
# `torch.multinomial` and `jax.random.categorical` use different generators. The course's
# samplers (`course_utils.gpt.sample`) draw one uniform number per step and sequence
# from `np.random.default_rng(seed)` and pick the first token whose cumulative probability
# exceeds it, so the same weights, temperature and seed draw the same text in both, up to a
# draw that lands within float32 rounding of a CDF edge (section 8 measures how often).
#
# The temperature divides the logits before softmax: below 1 it sharpens the distribution
# towards the likely characters, above 1 it flattens it, and 0 (greedy decoding, supported by
# both samplers) always takes the most likely one. `0.8` keeps some variety while drawing
# less often the rare characters an undertrained model assigns too much probability to.
#
# First, why the shared stream is needed: each framework's own sampler, seeded with the same
# number, on the same probabilities:

# %%
probs_np = np.full((1, 8), 1 / 8, np.float32)  # eight equally likely tokens
torch.manual_seed(0)
draws_torch = torch.multinomial(torch.from_numpy(probs_np), 12, replacement=True)[0].tolist()
draws_jax = jax.random.categorical(jax.random.key(0), jnp.log(probs_np), shape=(12, 1))[:, 0].tolist()
print("torch.multinomial, seed 0:      ", draws_torch, "\njax.random.categorical, key 0:", draws_jax)
print("the same draws:", draws_torch == draws_jax)

# %% [markdown]
# Two generators, two sequences: "seed 0" names a different stream in each framework. The
# course's samplers take their numbers from NumPy instead. Two samples from each trained
# model, same prompt, temperature and seed (one batch of two):

# %%
prompt = np.stack([tokenizer.encode("The "), tokenizer.encode("def ")])  # (2, 4)
temperature = 0.8

# PyTorch
samples_torch = gpt.sample.torch_generate(trained_torch, prompt, S.sample_chars, temperature=temperature,
                                          seed=0, use_cache=False)
for row in samples_torch:
    print(repr(tokenizer.decode(row)), "\n")

# %%
# JAX
samples_jax = gpt.sample.nnx_generate(trained_jax, prompt, S.sample_chars, temperature=temperature,
                                      seed=0, use_cache=False)
for row in samples_jax:
    print(repr(tokenizer.decode(row)), "\n")

# %%
n_prompt = prompt.shape[1]  # the prompt's tokens are equal by construction and are left out
agree = (samples_torch[:, n_prompt:] == samples_jax[:, n_prompt:]).mean(axis=1)
first_split = [int(np.argmax(a != b)) if (a != b).any() else None for a, b in zip(samples_torch, samples_jax, strict=True)]
print(f"drawn characters equal in the two models' samples (prompt excluded): {agree.round(3)}; "
      f"first difference at position {first_split} (counted from the prompt's start)")
print(f"these models trained {S.train_steps} steps: " + ("a full run's, so the samples show what the model learned"
      if S.train_steps >= full_steps else f"fewer than a full run's {full_steps}, so the samples check the code "
      "path and say little about what the model learns"))

# %% [markdown]
# The two trained models are not the same weights (section 3: float32 drift over
# `train_steps` steps), so their samples may part at some character: from there on each text
# follows its own history. Section 8 samples twice from *the same* weights, once in each
# framework; there every draw must pick the same token, except a draw within float32
# rounding of a CDF edge.
# What the samples say about learning depends on the run, and the last line above says which
# run this was. After a full run, read them for what the model learned: letter frequencies,
# spaces, common short words and the indentation of the corpus's code blocks are the first
# things a character model picks up; sentences need far more training than this lesson
# spends. A smoke run trains too few steps for that reading, and its samples only show that
# the code runs.
#
# Without a cache, every new character runs the whole context through the model again. The
# KV cache keeps each layer's keys and values: the prompt runs once (`decode(prompt, cache,
# 0)`), then each step runs one position, whose query attends to everything cached. The
# cache is `(n_layers, batch, heads, block_size, head_dim)`, written at position `pos`; it
# holds `block_size` positions, so a cached sample stops there.
#
# The two frameworks hold the cache differently, as they hold all state. PyTorch's
# `decode(tokens, cache, pos)` writes into the cache tensors in place (`cache[:, :, pos:pos+T]
# = k`); JAX's returns a new cache built with `jax.lax.dynamic_update_slice`, whose position
# may be a traced value, so one compiled decode step serves every position. That step donates
# nothing: each call's program writes a new cache and the old one lives until Python drops it,
# so the functional form costs a copy of the cache per token here (section 4.2 keeps the cache
# inside one compiled loop instead). Same text with and without the cache, checked:

# %%
n_cached = cfg.block_size - prompt.shape[1]

# PyTorch
cached_torch = gpt.sample.torch_generate(trained_torch, prompt, n_cached, temperature=temperature, seed=1)
uncached_torch = gpt.sample.torch_generate(trained_torch, prompt, n_cached, temperature=temperature, seed=1,
                                           use_cache=False)

# %%
# JAX
cached_jax = gpt.sample.nnx_generate(trained_jax, prompt, n_cached, temperature=temperature, seed=1)
uncached_jax = gpt.sample.nnx_generate(trained_jax, prompt, n_cached, temperature=temperature, seed=1,
                                       use_cache=False)

# %%
assert np.array_equal(cached_torch, uncached_torch) and np.array_equal(cached_jax, uncached_jax)
print(f"{n_cached} cached steps = {n_cached} uncached steps, in PyTorch and in JAX:",
      repr(tokenizer.decode(cached_jax[0])))

# %% [markdown]
# With and without the cache the texts are equal in each framework. The cache turns each
# step's attention from a `T × T` block of scores into one row, the new query against the
# cache's `block_size` slots (those not yet written are masked), and skips recomputing every
# earlier position's keys and values; the price is memory, `2 · n_layers · batch · block_size ·
# d_model` numbers, which for a large model and a long context is what limits the batch.
#
# ### 4.2 One compiled decode loop, and what the cache buys
#
# `gpt.sample.nnx_generate` calls a jitted decode step once per token from Python, and every
# call pays JAX's dispatch: the model and the arguments flattened into a pytree, the compiled
# program looked up in `jax.jit`'s cache and launched, then a second small JAX call that
# picks the token, which comes back to NumPy to extend the context. PyTorch's eager loop pays its own per-operation overhead instead. The JAX idiom for a loop whose length is known
# is to compile the loop itself: `jax.lax.fori_loop` inside one `jax.jit`, the KV cache and the
# token buffer as its carry, so the program runs every step without returning to Python. Here
# is `gpt.sample.nnx_generate_compiled`'s core, the prompt once and then the loop:

# %%
display(Markdown("```python\n" + inspect.getsource(gpt.sample._decode_loop_body)
                 + "\n" + inspect.getsource(gpt.sample._jax_decode_loop) + "```"))

# %% [markdown]
# Two details of the program are worth reading. The token buffer has `block_size` slots from
# the start, filled left to right, because every array in a compiled loop keeps one shape; the
# sample is cut to its length only when the loop is done. And the temperature and the number
# of steps are static arguments: a new value compiles a new program, which is the right trade
# for values that a serving loop fixes once, and the wrong one for anything that changes per
# request (those belong in the traced arguments, as the random numbers are).
#
# The body rebuilds the model from its state on every iteration because the model's own
# `nnx.scan` over its blocks refuses a module whose arrays belong to another trace ("Cannot
# extract graph node from different trace level"), and a loop body is a trace of its own;
# the state rides in the carry, unchanged. Without the cache, the body runs the whole `block_size`
# window and reads the row before the position it draws. The draws are the shared uniform
# numbers, so the compiled loop must write the per-token sampler's text:

# %%
# JAX: the compiled loop, with and without the cache, against the per-token sampler
compiled_jax = {use: gpt.sample.nnx_generate_compiled(trained_jax, prompt, n_cached, temperature=temperature,
                                                      seed=1, use_cache=use) for use in (True, False)}
assert all(np.array_equal(tokens, cached_jax) for tokens in compiled_jax.values())
print("fori_loop decode, with and without the cache = the per-token sampler:", repr(tokenizer.decode(compiled_jax[True][0])))

# %% [markdown]
# What the cache saves can be counted before it is timed. Without it, drawing the token at
# position `t` runs the model over all `t` earlier positions: every Linear of every layer
# processes `t` rows, and attention forms `t × t` scores, so a sample of `n` tokens costs about
# `n²/2` rows of the model. With it, each token runs one row through the Linears and one row of
# scores against the cache, `n` rows in all, at the price of reading the whole cache each time.
# A row of the model costs about `n_layers · (4·d_model² + 2·d_model·d_ff)` multiply-adds (the
# Linears), tens of thousands at smoke sizes, and on a CPU the fixed cost of launching the
# operations can weigh as much, so the saving may be small next to the overheads;
# the count says the cache must win eventually, the measurement says where this machine stands.
#
# Equal texts, so the variants can be timed against each other: every variant below draws the
# same `n_cached` tokens from the same prompt, and the cell above and section 4.1 checked
# that each framework's variants draw the same text (the PyTorch and JAX models were trained
# separately, so their texts need not be equal to each other, and the comparison is told not
# to check across them).

# %%
decode_variants = {
    "PyTorch, KV cache": lambda: gpt.sample.torch_generate(trained_torch, prompt, n_cached,
                                                           temperature=temperature, seed=1),
    "PyTorch, no cache": lambda: gpt.sample.torch_generate(trained_torch, prompt, n_cached, temperature=temperature,
                                                           seed=1, use_cache=False),
    "JAX per-token nnx.jit, KV cache": lambda: gpt.sample.nnx_generate(trained_jax, prompt, n_cached,
                                                                       temperature=temperature, seed=1),
    "JAX fori_loop, KV cache": lambda: gpt.sample.nnx_generate_compiled(trained_jax, prompt, n_cached,
                                                                        temperature=temperature, seed=1),
    "JAX fori_loop, no cache": lambda: gpt.sample.nnx_generate_compiled(
        trained_jax, prompt, n_cached, temperature=temperature, seed=1, use_cache=False),
}
decoding = timing.compare(decode_variants, check=False, target_s=S.target_s)  # texts checked above, per framework
display(Markdown(decoding.table()))
T0 = prompt.shape[1]  # the prompt's length; PyTorch runs the context so far, JAX's loop the whole window
rows_no_cache = {"PyTorch": sum(range(T0, T0 + n_cached)), "JAX fori_loop": n_cached * S.block_size}
print("positions run through the model per sequence without the cache (the two no-cache variants do different "
      "work): " + ", ".join(f"{name} {n:,}" for name, n in rows_no_cache.items())
      + f"; with the cache, {T0} for the prompt and then the drawn tokens one at a time ({n_cached - 1} of the "
      f"{n_cached} in the per-token samplers, which need no logits after the last; all {n_cached} in the fori_loop)")
decode_pairs = {"the KV cache vs none, PyTorch": ("PyTorch, no cache", "PyTorch, KV cache"),
                "the KV cache vs none, JAX fori_loop": ("JAX fori_loop, no cache", "JAX fori_loop, KV cache"),
                "one fori_loop vs a jitted step per token, JAX": ("JAX per-token nnx.jit, KV cache",
                                                                   "JAX fori_loop, KV cache")}
for label, (base, lever) in decode_pairs.items():  # the label names the lever first
    ms = {name: decoding.measurements[name].median * 1e3 for name in (base, lever)}
    print(f"{label}: {ms[lever]:.1f} ms vs {ms[base]:.1f} ms per sample (medians), a ratio of medians of "
          f"{ms[base] / ms[lever]:.2f}x; from the paired rounds' ratios: {claims.faster(decoding, base, lever).explanation}")

# %% [markdown]
# How to read the table and the lines: each variant is one call that draws a whole sample
# (two sequences of `n_cached` tokens), so the medians are times per sample. Each printed
# line names the lever first (the cache, the compiled loop) and gives its median time, then the
# median time without it, then the ratio of those two medians, the second over the first (below
# 1 where the lever was slower). The verdict after it is the course's rule applied to the paired
# rounds: it divides the two times within each round and reports the median of those ratios,
# which differs from the ratio of the medians when the rounds vary, as on a busy machine. There
# the rule declines to judge, and both numbers are measurements of this run, not a claim.
#
# Read the ratios before the verdicts: the cache saves recomputing `T` positions per token, a
# saving that grows with the context and the model, while its bookkeeping (writing the cache,
# attending over all `block_size` slots, masked or not) costs about the same at any position. At
# smoke sizes the model is so small that overheads may dominate and the cache may gain little.
# The two "no cache" variants do not do the same work: PyTorch's runs the context drawn so far,
# `t` positions at step `t`, while JAX's compiled loop runs the whole `block_size` window at
# every step (one shape, one program), so the two frameworks' cache ratios are not one
# measurement taken twice. The printed lines are this run's answer, computed from the table
# above, and a full run (larger model, longer context) is the one to ask about the cache's worth at scale. The
# second lever is JAX's alone: a `fori_loop` removes the per-token round trip to Python, and
# the third line says what that was worth here.
#
# ## 5. Made fast, and measured
#
# **Key concepts**
# - One timed call runs `k_steps` training steps; tokens/s = `k_steps · batch · block_size` /
#   time per call, with the 95 % interval of the median over the timed rounds.
# - Variants: PyTorch eager; `torch.compile` of the whole step function (forward, backward and
#   the AdamW update); bfloat16 autocast; the `jax.jit` pure step with donated state (the
#   whole step compiled, AdamW included); the same step with an NNX bfloat16 compute dtype
#   (parameters stay float32).
# - Memory of one step, with the method named: XLA's compiled plan for JAX, the torch
#   profiler's allocation events for PyTorch.
# - Fused attention (`F.scaled_dot_product_attention`, `jax.nn.dot_product_attention`) timed
#   next to the hand-written attention, after a check that all four agree (5.1).
#
# Each variant is a factory: it copies the initial weights and makes a fresh optimiser, and
# returns a function that runs the `k_steps` steps and returns their losses. The first call
# of every variant starts from the same state, so their first losses must agree:
# `timing.compare` checks that on those first calls, before any timed round, here with a tolerance wide
# enough for bfloat16 (a relative 3 %), and the float32 variants are held to 10⁻⁴ after.
#
# What each lever does. `torch.compile(one_step)` compiles the whole step function: Dynamo
# traces the forward pass, AOTAutograd derives the backward pass from it and Inductor
# generates fused kernels for both (C++ and OpenMP on a CPU, Triton on a GPU); at
# `loss.backward()` Dynamo ends the graph, and `optimizer.step()` is traced as a graph of its
# own, AdamW's update for every parameter fused into generated kernels. `jax.jit` compiles
# the same three parts into one XLA program, and donation lets it write the new state over
# the old. So both compiled variants compile forward, backward and the optimizer, the
# mirror the pairing below needs; PyTorch's as a few graphs, JAX's as one program.
# bfloat16 halves the bytes of each activation and weight read and, on hardware with
# bfloat16 matrix units, multiplies the matmul rate; it stores 7 bits of mantissa (8 with
# the implicit leading one), about 2 to 3 significant decimal digits, which is why the
# loss is computed in float32 on both sides and why the first-loss check below allows 3 %.

# %%
K = S.k_steps
timed = [gpt.data.windows(train_ids, starts, S.block_size) for starts in order[:K]]
timed_torch = [(torch.from_numpy(x).to(torch_dev), torch.from_numpy(y).to(torch_dev)) for x, y in timed]
timed_jax = [(jnp.asarray(x), jnp.asarray(y)) for x, y in timed]
tokens_per_call = K * S.batch * S.block_size
print(f"{K} steps per timed call, {tokens_per_call:,} tokens")


# %%
# PyTorch: eager, torch.compile of the whole step (forward, backward, AdamW), bfloat16 autocast
def torch_variant(compiled=False, bf16=False):
    model = copy.deepcopy(model_torch)
    optimizer = gpt.train.torch_adamw(model, foreach=None)  # PyTorch's default AdamW

    def one_step(x, y):  # x, y: (batch, seq)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(torch_dev.type, dtype=torch.bfloat16, enabled=bf16):
            loss = model.loss(x, y)
        loss.backward()
        optimizer.step()
        return loss.detach().float()

    if compiled and hasattr(torch._dynamo.config, "capture_profiler_record_function"):
        # AdamW's step and zero_grad run inside profiler labels; Dynamo keeps them in the graph
        # with this switch, where without it (or in a torch without it) it drops them with a
        # printed warning
        torch._dynamo.config.capture_profiler_record_function = True
    step = torch.compile(one_step) if compiled else one_step
    return lambda: torch.stack([step(x, y) for x, y in timed_torch])  # k_steps steps


# %% [markdown]
# `torch.autocast` runs the matmuls in bfloat16 and the loss in float32; on a GPU it also
# runs softmax and LayerNorm in float32. On a CPU its list is shorter: softmax runs in the
# dtype it is given, bfloat16 scores here, while the LayerNorms are given float32, because
# the embeddings are not autocast and the residual stream, float32 plus each block's
# bfloat16 output, stays float32. The parameters and AdamW stay float32. The NNX counterpart
# is a dtype policy in the model itself: `NNXGPT(cfg, dtype=jnp.bfloat16)` gives every Linear
# and embedding a bfloat16 compute dtype while `param_dtype` stays float32, and the model
# casts the attention scores and the logits to float32 for softmax and the loss, as autocast
# does on a GPU. So the two bfloat16 variants are not the same arithmetic on a CPU: PyTorch's
# attention softmax stays bfloat16 while NNX's is float32, and NNX's residual stream is
# bfloat16 (its embeddings are) while PyTorch's is float32. The 3 % check allows for that.

# %%
# JAX: the jitted pure step (state donated), float32 or an NNX bfloat16 compute dtype, each
# jitted afresh here, so that its first call compiles (section 3's jit_step is compiled already)
model_bf16_jax = gpt.model.NNXGPT(cfg, dtype=jnp.bfloat16, rngs=nnx.Rngs(0))
gpt.convert.gpt_torch_to_nnx(model_torch, model_bf16_jax)
graphdef_bf16, _, rest_bf16 = gpt.train.jax_split(model_bf16_jax)
jit_step_bf16 = jax.jit(gpt.train.jax_step(graphdef_bf16, rest_bf16, tx), donate_argnums=(0, 1))
jit_step_fresh = jax.jit(gpt.train.jax_step(graphdef, rest_jax, tx), donate_argnums=(0, 1))


# %%
def jax_variant(step):
    params, opt_state = fresh_state()

    def k_steps():
        nonlocal params, opt_state
        losses = []
        for x, y in timed_jax:
            params, opt_state, loss = step(params, opt_state, x, y)
            losses.append(loss)
        return jnp.stack(losses)

    return k_steps


# %%
first_losses = {}


def keep_first(name, fn):  # remember each variant's first output, for the float32 check after
    def call():
        out = fn()
        first_losses.setdefault(name, out)
        return out
    return call


# %%
variants = {"PyTorch eager": torch_variant(), "torch.compile (step)": torch_variant(compiled=True),
            "PyTorch bf16 autocast": torch_variant(bf16=True), "JAX jit (step, donated)": jax_variant(jit_step_fresh),
            "JAX bf16 dtype": jax_variant(jit_step_bf16)}
inductor_before = dict(torch._dynamo.utils.counters["inductor"])  # Inductor's cache on disk, hits and misses
# first calls from cold caches: Inductor in an empty directory, JAX's persistent cache off
with timing.cold_inductor_cache(), timing.jax_persistent_cache_off():
    throughput = timing.compare({name: keep_first(name, fn) for name, fn in variants.items()},
                                baseline="PyTorch eager", rtol=3e-2, atol=3e-2, target_s=S.target_s)
inductor_cache = {kind: torch._dynamo.utils.counters["inductor"][f"fxgraph_cache_{kind}"]
                  - inductor_before.get(f"fxgraph_cache_{kind}", 0) for kind in ("hit", "miss", "bypass")}
for name in ("torch.compile (step)", "JAX jit (step, donated)"):
    assert_close(first_losses[name], first_losses["PyTorch eager"], rtol=1e-4, atol=1e-5, name=name)


# %%
def tokens_per_s(m, sep=" | "):  # the median and its 95 % interval, as tokens/s
    low, high = claims.median_interval(m.times)
    return f"{tokens_per_call / m.median:,.0f}{sep}{tokens_per_call / high:,.0f} – {tokens_per_call / low:,.0f}"


rows = ["| variant | tokens/s (median) | 95 % interval of the median | × PyTorch eager | first call (with compile) |",
        "|---|---:|---:|---:|---:|"]
rows += [f"| {name} | {tokens_per_s(m)} | {throughput.speedup(name):.2f}x | {timing.format_seconds(m.first_call_s)} |"
         for name, m in throughput.measurements.items()]
display(Markdown("\n".join(rows) + f"\n\n{K} steps of {S.batch}×{S.block_size} tokens per call "
                 f"({throughput.conditions()})"))
for warning in throughput.warnings:
    print("warning:", warning)
jax_cache = jax.config.jax_compilation_cache_dir  # where a persistent cache is configured, if anywhere
print(f"torch.compile's first call: {inductor_cache['hit']} of the {sum(inductor_cache.values())} graphs Inductor "
      f"compiled came from its cache on disk ({'warm' if inductor_cache['hit'] else 'cold'}); the two jax.jit "
      f"first calls: JAX's persistent compilation cache "
      f"{f'at {jax_cache}, switched off for them (cold)' if jax_cache else 'not configured (cold)'}")

# %% [markdown]
# How to read the table: tokens/s is the tokens of one call over the median time of a call;
# the interval is the distribution-free 95 % confidence interval of that median (order
# statistics of the timed rounds), turned into tokens/s. The first-call column is one call's
# time including whatever compiling that variant does on its first call: Dynamo's tracing
# plus Inductor's code generation for every graph of the step under `torch.compile`, XLA's compilation of the whole step
# for the two `jax.jit` variants (each jitted afresh in the cell above), nothing for the
# eager variants. Both start cold. Inductor keeps a cache on disk, on by default, that would
# shorten `torch.compile`'s first call on a rerun, so the cell compiles in an empty, throw-away
# cache directory (`timing.cold_inductor_cache()`, as lesson 03 does); JAX's persistent
# compilation cache would do the same for XLA's where it is configured
# (`jax_compilation_cache_dir`, off by default, as section 2 noted), so the cell switches it
# off for these calls (`timing.jax_persistent_cache_off()`). The last line under the table
# counts the graphs Inductor found in its cache (that directory starts empty) and says whether a
# JAX cache was configured, and so switched off. A warm Inductor cache would shorten the first
# call without removing it, since Dynamo traces the step again in every new process.
#
# The first-call column is where the two compilers differ most in kind. `jax.jit` traced the
# step once and XLA compiled one program; the timed calls then replay it. `torch.compile`
# compiled each graph of the step function the first time Dynamo reached it, the forward pass
# with its backward and then AdamW's update, and every later call checks the guards Dynamo
# recorded (the tensors' shapes, dtypes and devices, the Python values the code branched on)
# before it runs the compiled code. A guard that fails (a new batch shape, a learning rate
# passed as a Python float that changes every step, as a scheduler does) compiles again;
# Dynamo then marks the changed value dynamic (for a float, only where floats are not
# specialised: `torch._dynamo.config.specialize_float` is False, as in recent releases), so
# later changes reuse that second graph rather than compiling each step, and a learning
# rate given as a tensor avoids even the recompile, which is why a compiled PyTorch step is
# usually given one.
# Neither compiler's first call is paid again in a long run, and the break-even point is the
# number of steps after which the compiled step's savings exceed its compile time:
# `timing.compile_report` computes it where a lesson needs it (lesson 03 does).
#
# Which differences are real? `claims.faster` applies the course's one rule to the paired
# rounds (each round ran every variant back to back): a verdict only when the 95 % interval
# of the median ratio clears 1 by the allowance, and none from a noisy or busy run. The fair
# pairings change one thing at a time:

# %%
pairings = {
    "torch.compile of the step vs eager (PyTorch)": ("PyTorch eager", "torch.compile (step)"),
    "bfloat16 autocast vs float32 (PyTorch eager)": ("PyTorch eager", "PyTorch bf16 autocast"),
    "bfloat16 dtype vs float32 (JAX jit)": ("JAX jit (step, donated)", "JAX bf16 dtype"),
    "JAX jit of the whole step vs torch.compile of the whole step": (
        "torch.compile (step)", "JAX jit (step, donated)"),
}
speed_verdicts = {label: claims.faster(throughput, a, b) for label, (a, b) in pairings.items()}
for label, verdict in speed_verdicts.items():
    print(f"{label}: {verdict.explanation}")
compile_verdict = speed_verdicts["torch.compile of the step vs eager (PyTorch)"]

# %% [markdown]
# The first line is this lesson's answer to "does `torch.compile` speed up training?", on this
# model and this machine; lesson 04 judges the published claim (20–30 % or more) on its own
# workload, and the two need not agree. The last pairing is this table's framework
# comparison: both sides compile forward, backward and AdamW, from the same weights and
# batches, on the same device kind and threads. On a CPU, bfloat16 need not be a speed-up at all:
# many CPUs have no bfloat16 matrix units, so the matmuls convert to float32 inside, and the
# casts autocast adds can cost more than they save; the bfloat16 lines above say what
# happened here. On a GPU with bfloat16 tensor cores (NVIDIA's since Ampere; a T4's or a
# V100's tensor cores take float16, not bfloat16) or a TPU the same two lines of code are the
# main lever; measure there before carrying any verdict over.
#
# ### 5.1 Fused attention
#
# The attention of section 2 materialises the scores, `(batch, heads, seq, seq)`, applies the
# mask, softmaxes and multiplies by the values: four passes over a tensor that grows with the
# square of the context. Both frameworks ship a fused call for the same result, which can
# compute it without storing the scores where the library has a kernel for it
# (FlashAttention-style kernels on GPUs: PyTorch's call picks one by itself, JAX's only when
# asked, `implementation="cudnn"`, since its default falls back to XLA's operations on every
# device; the CPU is another matter, below): PyTorch's `F.scaled_dot_product_attention` and JAX's
# `jax.nn.dot_product_attention`. They differ in layout: PyTorch's takes
# `(batch, heads, seq, head_dim)`, the layout of the model's attention; JAX's takes
# `(batch, seq, heads, head_dim)`, so the JAX cell transposes in and out.
# First the four functions, on the same random `q`, `k`, `v`:

# %%
qkv_np = np.random.default_rng(5).standard_normal((3, S.batch, S.n_heads, S.block_size, cfg.head_dim),
                                                  dtype=np.float32)  # q, k, v: (batch, heads, seq, head_dim)


# PyTorch: the hand-written attention of section 2, and the fused call
def attention_torch(q, k, v):
    T = q.shape[2]
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5  # (batch, heads, seq, seq)
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    return F.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v  # (batch, heads, seq, head_dim)


def fused_attention_torch(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


q_torch, k_torch, v_torch = (torch.from_numpy(a).to(torch_dev) for a in qkv_np)


# %%
# JAX: the same pair, jitted
@jax.jit
def attention_jax(q, k, v):
    T = q.shape[2]
    scores = jnp.einsum("bhtd,bhsd->bhts", q, k) * q.shape[-1] ** -0.5  # (batch, heads, seq, seq)
    scores = jnp.where(jnp.tril(jnp.ones((T, T), bool)), scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v  # (batch, heads, seq, head_dim)


@jax.jit
def fused_attention_jax(q, k, v):  # jax.nn.dot_product_attention wants (batch, seq, heads, head_dim)
    out = jax.nn.dot_product_attention(*(t.transpose(0, 2, 1, 3) for t in (q, k, v)), is_causal=True)
    return out.transpose(0, 2, 1, 3)


q_jax, k_jax, v_jax = (jnp.asarray(a) for a in qkv_np)

# %%
attention_calls = {"PyTorch, hand-written": lambda: attention_torch(q_torch, k_torch, v_torch),
                   "PyTorch, F.scaled_dot_product_attention": lambda: fused_attention_torch(q_torch, k_torch, v_torch),
                   "JAX, hand-written": lambda: attention_jax(q_jax, k_jax, v_jax),
                   "JAX, jax.nn.dot_product_attention": lambda: fused_attention_jax(q_jax, k_jax, v_jax)}
attention_outputs = {name: call() for name, call in attention_calls.items()}
for name, out in attention_outputs.items():
    assert_close(out, attention_outputs["PyTorch, hand-written"], rtol=1e-5, atol=1e-5, name=name)
print("all four attentions agree within 1e-5 on", qkv_np.shape[1:], "(batch, heads, seq, head_dim)")

# %% [markdown]
# The four agree to float32 rounding, so they can be timed. The fused functions take fewer
# arguments than the hand-written ones need to be told: `is_causal=True` replaces the mask,
# the scale `1/√head_dim` is their default, and neither returns the attention weights, which is
# the point (a function that returned them would have to store them). A model that needs the
# weights, to plot them, computes them by hand as section 2's attention does; one that adds a
# bias such as ALiBi passes it in (`attn_mask=` in PyTorch, `bias=` in JAX), and PyTorch
# picks a kernel that accepts it (JAX's cuDNN kernel takes a bias too). Each variant computes one
# attention over the same inputs; the PyTorch pair runs eagerly, as the model's attention does
# in the eager variants above, and the JAX pair jitted:

# %%
attention_timing = timing.compare(attention_calls, baseline="PyTorch, hand-written", target_s=S.target_s)
display(Markdown(attention_timing.table()))
for framework, (hand, fused) in {"PyTorch": ("PyTorch, hand-written", "PyTorch, F.scaled_dot_product_attention"),
                                 "JAX": ("JAX, hand-written", "JAX, jax.nn.dot_product_attention")}.items():
    print(f"{framework}, fused vs hand-written: {claims.faster(attention_timing, hand, fused).explanation}")

# %% [markdown]
# On a CPU, PyTorch dispatches the fused call to its own C++ kernel, a FlashAttention-style
# loop over blocks of keys, while JAX's call, with `implementation=None`, lowers to XLA
# operations much like the hand-written version's (here with a transpose of `q`, `k`, `v` in
# and of the result out), so on this side no fused kernel can explain a difference: one would
# come from the operations XLA is given. The lines above say what each framework's pair measured. The fused kernels are written above all for GPUs, where, by the libraries' documentation
# (this run cannot measure it), never writing the `(seq, seq)` scores to memory is what lets
# long contexts fit and run at the matmul units' speed; there PyTorch's call picks such a
# kernel by itself, and `jax.nn.dot_product_attention(..., implementation="cudnn")` selects
# cuDNN's. The
# model keeps the hand-written attention because it is the one that reads like the maths
# and that the KV cache extends.
#
# **Memory of one step.** No one tool measures both frameworks the same way, so each number
# names its method. JAX: XLA's buffer assignment for the compiled step
# (`memory_analysis()`: arguments + outputs − donated + temporaries), a static plan known
# before the step runs. PyTorch: the allocation and free events the profiler records during
# one step, on top of what already lives (parameters, gradients, AdamW state, the batch).

# %%
mem_model_torch = copy.deepcopy(model_torch)
mem_optimizer_torch = gpt.train.torch_adamw(mem_model_torch)
gpt.train.torch_step(mem_model_torch, mem_optimizer_torch, *timed_torch[0])  # AdamW state and .grad exist now
mem_params, mem_opt_state = fresh_state()
memory_reports = [
    memory.torch_profiler_memory(lambda: gpt.train.torch_step(mem_model_torch, mem_optimizer_torch, *timed_torch[0]),
                                 resident=(mem_model_torch, mem_optimizer_torch, timed_torch[0]),
                                 label="PyTorch eager step", device=torch_dev.type),
    memory.xla_memory(jit_step.lower(mem_params, mem_opt_state, *timed_jax[0]).compile(), "JAX jit step, donated"),
]
display(Markdown(memory.table(memory_reports)))
state_bytes = memory.tree_bytes((mem_params, mem_opt_state))
print(f"parameters + AdamW state: JAX {memory.format_bytes(state_bytes)}, PyTorch "
      f"{memory.format_bytes(memory.tree_bytes(mem_optimizer_torch) + sum(p.numel() * 4 for p in mem_model_torch.parameters()))}")
xla_plan = memory_reports[1]
print(f"XLA's temporaries: {xla_plan.parts['temporaries'] / xla_plan.peak_bytes:.0%} of its plan, "
      f"{xla_plan.parts['temporaries'] / state_bytes:.1f}x the parameters and AdamW state")

# %% [markdown]
# The two rows measure different things, which is why each names its method: XLA's plan
# counts the step's inputs and outputs with the donated state counted once, plus the
# temporaries (activations kept for the backward pass, gradients); the profiler counts what
# PyTorch allocated during the step above what was already alive. The parameter-and-AdamW
# line is the same model in both: three float32 copies of the weights (parameters, first and
# second moments). On a GPU, `memory.torch_cuda_memory` and `memory.jax_device_memory` read
# the allocators' own peak counters, which lesson 04 compares.
#
# Where does a step's memory go? The last line says how much of XLA's plan is temporaries:
# the activations kept for the backward pass and the gradients (at most one more copy of the
# parameters, a third of the state line). The activations grow with `batch × block_size ×
# (d_model × n_layers + heads × block_size × n_layers)`, the attention scores being
# `block_size²` per head and layer, while the state does not grow with the batch at all;
# that is why long contexts are limited by memory, and why fused
# attention kernels (which never store the scores) and rematerialisation (`nnx.remat`,
# `torch.utils.checkpoint`) are the first levers at scale.

# %% [markdown]
# ## 6. Scaled out
#
# **Key concepts**
#
# - JAX: one training step for every layout. The step is a pure function of
#   `(params, opt_state, x, y)`; `jax.jit` with `in_shardings` / `out_shardings` over a
#   `jax.make_mesh` decides where each array lives, and XLA inserts the communication.
# - Data parallel: the batch split over the mesh axis `"data"`, the parameters replicated;
#   the all-reduce of the gradients is XLA's. Tensor parallel: the attention's `qkv` and the
#   MLP's `fc1` split by output columns, `proj` and `fc2` by input rows (Megatron's layout), on
#   the axis `"model"`.
# - PyTorch: one process per device, started by `torchrun`. FSDP2's `fully_shard` (parameters,
#   gradients and optimizer state sharded over the ranks) wraps the same module unchanged;
#   DTensor's `parallelize_module` (tensor parallel) splits its Linear layers, and the
#   attention, written for all heads, gets a forward that works on a rank's own heads. The
#   training step does not change.
# - Which collectives each layout needs is read from the compiled program: the collective
#   operations in its HLO, counted per layout (data parallel, FSDP, tensor parallel); the
#   counts show the program's structure, not the bytes it moves.
# - The proof is the loss curve: every layout must give, step for step, the losses of one
#   device, to float32 rounding (a sum split over devices is added in another order).
#
# The training step should not change when the model is spread over devices, and in both
# frameworks it does not. In JAX the model's code does not change either: the layouts are
# shardings of the same parameters, and XLA inserts the communication. PyTorch's FSDP2 wraps
# the same module unchanged. PyTorch's tensor parallelism is the exception: the attention
# splits the fused `qkv` output into three `d_model`-wide parts of `n_heads` heads, which a
# rank holding half the heads does not have, so the lesson reorders the `qkv` weights and
# gives each block's attention a forward over its rank's heads (both shown below). This
# section checks all of it on the GPT rather than on the small MLP of lesson 05, where the
# same tools were introduced one at a time. The runs are
# short and start from fresh weights (`make_gpt_pair`: the same initial weights in both
# frameworks), so each layout is compared with a one-device run of the same steps on the
# same batches; the models trained in section 4 come back in section 7.
#
# The eight JAX devices come from `meshes.devices(8)`, the course's one rule for meshes: eight
# GPUs or TPUs when the machine has at least eight, else the eight simulated CPU devices that
# `env.setup(cpu_devices=8)` asked for at the top of the notebook (eight XLA devices that share
# this machine's cores, enough to run every collective a GPU pod would, though not to make
# anything faster). The line below the next cell says which. The PyTorch ranks are two
# processes, talking over gloo on CPUs (over NCCL where the machine has a GPU for each rank):
# two ranks keep the launch light. The model is section 3's
# configuration with fresh weights, so the one-device JAX run below can call section 3's
# `jit_step`, which reuses a compiled program where its inputs have a shape and a placement it
# has seen (the next paragraph says where they do).

# %%
import tempfile
from pathlib import Path

from course_utils import meshes
from course_utils.dist import launch, torch_gpt

DEVICES = meshes.devices(8)  # the accelerators if there are eight, else simulated CPUs

scale_cfg = cfg  # section 3's configuration, fresh weights
scale_torch, scale_jax = gpt.convert.make_gpt_pair(scale_cfg, seed=1)  # the same initial weights
scale_torch = scale_torch.to(torch_dev)  # the notebook's PyTorch runs use JAX's device kind
scale_order = gpt.data.batch_order(len(train_ids), S.block_size, S.scale_batch, S.scale_steps, seed=11)
scale_x, scale_y = gpt.data.windows(train_ids, scale_order, S.block_size)  # each (steps, batch, T)
scale_batches = list(zip(scale_x.astype(np.int32), scale_y.astype(np.int32), strict=True))

# %% [markdown]
# The JAX reference is section 3's `jit_step`: the pure step from `course_utils.gpt.train`,
# jitted for one device, with the same structure; its batches have `scale_batch` rows, equal
# to section 3's `batch` in smoke mode and half of it in a full run (the line below the cell
# prints both), where the new shape compiles the step once more. It runs on the first of the mesh
# devices, so every layout is compared on one kind of device, and it donates its inputs, so it
# gets copies. Where the first mesh device is JAX's default device (a CPU, or a machine with
# eight GPUs), the copies stay *uncommitted*, as section 3's inputs were, and
# `jit_step` reuses the program it has for inputs of that shape: the count printed with the
# losses says how many compilations the run needed. `jax.device_put(x, device)` *commits* an array to its device,
# and `jax.jit` keys its programs on where their inputs are committed, so committed copies
# would compile the same step again; that is what happens where the mesh's devices are not
# JAX's default (a one-GPU runtime, whose mesh is eight simulated CPUs; a machine with eight
# TPUs, where `env.setup(one_kind=True)` moved JAX's default device to the CPU, beside
# PyTorch). `jax_split` separates the new model's structure
# (`graphdef`) from its parameters, so the parameters and AdamW's state are plain pytrees that
# can be placed anywhere; the structure is closed over by the step and never moves.

# %%
# JAX: one device, the first of the mesh devices
graphdef_scale, params0, rest_scale = gpt.train.jax_split(scale_jax)
tx_scale = gpt.train.jax_adamw()
pure_step = gpt.train.jax_step(graphdef_scale, rest_scale, tx_scale)  # (params, opt_state, x, y) -> (..., loss)
state_one = jax.tree.map(jnp.copy, (params0, tx_scale.init(params0)))  # copies: jit_step donates its inputs
on_default = jax.tree.leaves(params0)[0].devices() == {DEVICES[0]}  # JAX's default device is the mesh's first
one_device = state_one if on_default else jax.device_put(state_one, DEVICES[0])  # committed: compiled anew
compiles_before = timing.CompileCounter.snapshot()
*_, losses_one_jax = gpt.train.jax_run(jit_step, *one_device, scale_batches)
print("one device:", np.round(losses_one_jax, 4),
      f"({timing.CompileCounter.delta(compiles_before)} compilation(s) in the run; batches of "
      f"{S.scale_batch} rows, section 3's of {S.batch})")

# %% [markdown]
# Now data parallel on all eight devices, FSDP on the same eight, then tensor parallel on a
# `2 × 4` mesh: two
# data-parallel groups of four devices, each group sharing every layer. For each layout,
# `gpt.shard.state_shardings` gives every parameter a `NamedSharding` from the rules printed
# below, none for data parallel (the first rule whose pattern matches the parameter's path; a
# parameter no rule matches is replicated), and AdamW's two moments inherit their parameter's sharding.
# `gpt.shard.jit_step` is `jax.jit(pure_step, in_shardings=..., out_shardings=...)` with the
# batch split over `"data"`. The step function is the same Python object in all three runs;
# only the shardings differ.

# %%
# JAX: data parallel (8 devices), FSDP (8 devices), then tensor parallel (2 x 4)
print("FSDP rules (path pattern, spec of one layer's axes):", *gpt.shard.FSDP_RULES, sep="\n  ")
print("tensor-parallel rules:", *gpt.shard.TP_RULES, sep="\n  ")
layouts_jax = {"data parallel, 8": (gpt.shard.mesh((8,), ("data",)), ()),
               "FSDP, 8": (gpt.shard.mesh((8,), ("data",)), gpt.shard.FSDP_RULES),
               "tensor parallel, 2 x 4": (gpt.shard.mesh((2, 4), ("data", "model")), gpt.shard.TP_RULES)}
losses_jax, steps_jax, collectives_jax = {}, {}, {}
for name, (mesh, rules) in layouts_jax.items():
    shardings = gpt.shard.state_shardings(mesh, tx_scale, params0, rules)
    placed = gpt.shard.place(params0, shardings[0]), gpt.shard.place(tx_scale.init(params0), shardings[1])
    # one compile per layout: the program whose collectives are counted is the one that runs
    compiled_step = gpt.shard.jit_step(pure_step, shardings).lower(*placed, *scale_batches[0]).compile()
    steps_jax[name] = (compiled_step, shardings)
    collectives_jax[name] = gpt.shard.count_collectives(compiled_step)
    params_end, _, losses_jax[name] = gpt.train.jax_run(steps_jax[name][0], *placed, scale_batches)
fc1 = params_end["blocks"]["fc1"]["kernel"][...]
print(f"blocks.fc1.kernel {fc1.shape}, spec {fc1.sharding.spec} (the layer axis prepended, unsplit): "
      f"one device stores {fc1.addressable_shards[0].data.shape}")

# %% [markdown]
# The rules name the spec of a layer's own axes, `(None, 'model')` for a `(d_model, d_ff)`
# kernel; the stacked arrays have the layer axis in front, and `state_shardings` prepends a
# `None` for it, hence the three-entry spec in the last line. That line shows what tensor
# parallelism means in memory: the stacked MLP kernel,
# `(layers, d_model, d_ff)`, is split on its last axis over the four devices of the `"model"`
# axis, so each device holds a quarter of its columns (the same quarter as its counterpart in
# the other data-parallel group). The fused `qkv` kernel is split the same way. Because
# query, key and value sit side by side in it, a device's block of columns does not hold the
# query, key and value of the same heads, and XLA adds whatever communication splitting the
# output into `q, k, v` then needs: the result is right, and the counts below include that
# communication with the rest. Counting the collective
# operations in each compiled step, from its optimised HLO text, shows what XLA inserted:

# %%
ops = sorted({op for counts in collectives_jax.values() for op in counts})
collective_rows = ["| layout | " + " | ".join(ops) + " |", "|---|" + "---:|" * len(ops)]
collective_rows += [f"| {name} | " + " | ".join(str(counts.get(op, 0)) for op in ops) + " |"
                    for name, counts in collectives_jax.items()]
display(Markdown("\n".join(collective_rows)))
totals = {name: sum(counts.values()) for name, counts in collectives_jax.items()}
print("collectives in one training step: " + ", ".join(f"{name} {n}" for name, n in totals.items()))
print("kinds beyond the all-reduce: " + "; ".join(
    f"{name}: {', '.join(op for op in counts if op != 'all-reduce') or 'none'}" for name, counts in collectives_jax.items()))

# %% [markdown]
# Data parallelism needs one kind of collective in principle, the all-reduce of the gradients
# (and of the loss), and XLA is free to combine them into few operations. FSDP's row shows
# what sharded weights cost: each kernel must be gathered before its layer uses it, and the
# gradients must come back to each device's shard (a reduce-scatter, or whatever XLA chooses
# in its place on this backend). Tensor parallelism over the fused `qkv` needs,
# besides the all-reduces of Megatron's layout, whatever XLA inserts to re-split the fused
# output into heads, because the columns a device holds are not the same heads' query, key
# and value; the two lines
# above name, per layout, the kinds of collective this run's compiled steps hold. The PyTorch version below reorders the fused
# rows first (`heads_first` in `course_utils/dist/torch_gpt.py`, applied to the weights before
# the excerpt below begins) so that each rank holds its own heads' query, key and value, which is the layout
# a production model uses; in JAX the same fix is to store `q`, `k` and `v` as three kernels
# (or one kernel with a heads axis) and shard the heads.
#
# How to read the counts: each number is how many times that collective appears in the
# compiled program of one training step, forward, backward and AdamW together. A collective
# inside a loop (the scan over layers) appears in it once, not once per layer it serves (a
# few times where XLA unrolls the loop by a small factor: XLA's GPU compiler can unroll a loop
# that holds a collective in two, under `--xla_gpu_enable_while_loop_unrolling`, whose default
# setting does so only when the compilation's `exec_time_optimization_effort` is raised), so the counts measure the program's structure, not the bytes moved; the bytes are the size of what
# each collective carries: for data parallelism the gradients, for FSDP the gathered weights
# and the gradients reduced to their shards, each of the order of the model's size per step. On a real cluster the same program
# text tells an engineer where to look first: an unexpected all-to-all is the fingerprint of a
# layout that splits an axis the computation needs whole.
#
# The layouts mirror each other where the two frameworks can run the same thing here. FSDP
# is in both: PyTorch's `fully_shard` and JAX's `FSDP_RULES` (every Linear kernel split by its
# first axis over `"data"`, the batch split the same way). Tensor parallelism is in both with
# the same Megatron plan, on 2 ranks in PyTorch and on a `2 × 4` mesh in JAX: every PyTorch
# rank is a process of its own, which starts Python and imports torch (the launch line below
# prints how long the whole launch took, start-up and both demos), so two is the count that keeps the launch short on a laptop, while
# JAX's simulated devices live in this one process and cost no process start-up. Plain data
# parallelism (DDP) is JAX's alone here; PyTorch's would be FSDP without the sharding, and its
# test is the same loss curve.
#
# PyTorch launches processes. `torch_gpt.save_inputs` writes the configuration, the same
# initial weights and the same batches into a run folder; `launch.torchrun` starts
# `torchrun --nproc-per-node 2 -m course_utils.dist.torch_gpt` there (with a free port and a
# timeout, and every process it started stopped afterwards), and each rank writes its losses
# back. One launch runs both demos, FSDP2 and then tensor parallel, so the start-up (importing
# torch, joining the process group) is paid once. These are the two marked regions of the
# script, first FSDP2:

# %%
launch.excerpt("course_utils.dist.torch_gpt", "fsdp")

# %% [markdown]
# Every block is wrapped with `fully_shard`, then the root module (which keeps the embeddings,
# tied to the output head, and the final LayerNorm). Each rank takes its rows of every batch:
# its gradients are averaged with the other rank's as they are reduce-scattered, so each rank's
# optimizer updates only its own shard of every parameter. The loss is averaged over the ranks
# for the printout, giving the loss of the whole batch. Then tensor parallel:

# %%
launch.excerpt("course_utils.dist.torch_gpt", "tp")

# %% [markdown]
# The tensor-parallel model sees the whole batch on each rank and holds half of the heads and
# half of the MLP's hidden units; the weights it loads already have their fused `qkv` rows in
# `heads_first` order, rank 0's query, key and value heads first. Its attention runs `local_heads_forward`: the same attention
# computed by PyTorch's fused `F.scaled_dot_product_attention` (section 5.1 checks it against
# the hand-written one), with `-1` heads where the full model has `n_heads`, because a rank's
# `qkv` output is a `(B, T, 3·d_model/2)` block. `RowwiseParallel` all-reduces the outputs of `proj`
# and `fc2`, so each block's result is whole again on every rank.
#
# The cell below also runs the one-process PyTorch reference, the same steps in this notebook's
# process, before it launches the two ranks.

# %%
# PyTorch: one process, then FSDP2 and tensor parallel on 2 processes (one torchrun launch)
run_dir = Path(tempfile.mkdtemp(prefix="course-11-"))
torch_gpt.save_inputs(run_dir, scale_cfg, scale_torch, scale_x, scale_y)
scale_torch_init = {name: t.clone() for name, t in scale_torch.state_dict().items()}  # for section 7
losses_one_torch = gpt.train.torch_run(scale_torch, gpt.train.torch_adamw(scale_torch),
                                       zip(scale_x, scale_y, strict=True))
torch_launch = launch.torchrun("course_utils.dist.torch_gpt", S.n_procs, workdir=run_dir, timeout=S.launch_timeout)
assert launch.tagged_processes(torch_launch.tag) == []  # nothing left running
losses_torch = {f"{label}, {S.n_procs} ranks": torch_launch.section(name)[0]["losses"]
                for name, label in (("fsdp", "FSDP2"), ("tp", "tensor parallel"))}
print(torch_launch.command_line, f"({torch_launch.seconds:.1f} s)")
for name in ("fsdp", "tp"):
    print(name, "rank 0 stores {local_shape} of {global_shape}, {placements}".format(**torch_launch.section(name)[0]))

# %% [markdown]
# The first line is the exact command that ran, and how long the launch took, which includes
# starting two Python processes that import torch and join a process group. The next lines
# are what rank 0 holds: under FSDP2 half the rows of the first block's `fc1.weight` (a `Shard(dim=0)` DTensor), under tensor
# parallelism half the rows of its fused `qkv.weight`, that is, its heads' query, key and value.
#
# Now every layout against its one-device run, to a relative 1e-5 at every step. The two
# frameworks' one-device runs are compared at their first step only (the same weights and the
# same batch, before any update): from there on they are two different float32 programs whose
# rounding training amplifies, section 3's subject, and the printed gap says how far that went.

# %%
assert_close(losses_one_torch[0], losses_one_jax[0], rtol=1e-5, atol=1e-6, name="first step: PyTorch vs JAX")
print(f"one device, PyTorch vs JAX: max gap {np.max(np.abs(np.subtract(losses_one_torch, losses_one_jax))):.1e}")
scale_table = {**{f"JAX {name}": (got, losses_one_jax) for name, got in losses_jax.items()},
               **{f"PyTorch {name}": (got, losses_one_torch) for name, got in losses_torch.items()}}
for name, (got, ref) in scale_table.items():
    assert_close(got, ref, rtol=1e-5, atol=1e-5, name=name)
    print(f"{name:34s} max |loss - one device| over {len(ref)} steps: {np.max(np.abs(np.subtract(got, ref))):.1e}")

# %% [markdown]
# Read these lines as the section's result. Every layout passed the check, a relative
# tolerance of 1e-5 at every step: what is left is float32 rounding, because a sum split over
# devices or ranks is added in another order (a run can even land on exactly the same bits
# when its partial sums happen to round alike). The runs are kept short on purpose: the same
# amplification that separates the two frameworks in section 3 could, over a longer run,
# carry these rounding differences past this tolerance; the float64 control of
# section 3 is the way to tell such drift from a bug in a longer run. A wrong layout that
# changes what a step computes, such as a loss summed over the devices instead of averaged (a
# multiple of the right loss) or a device that trains on another's rows, changes the losses
# from the first step, and the cell fails. One slip gets past a loss curve: gradients summed
# over the ranks instead of averaged are the right gradients times the number of ranks, and
# AdamW divides each gradient by its own running size (`m̂/(√v̂ + ε)`), so the update changes
# only where a gradient is as small as `ε` and the losses barely move. Exercise 4 compares
# data-parallel gradients with the whole batch's directly, which catches it.
#
# **The command lines that take each to many GPUs or hosts.** Nothing above names the
# hardware. For PyTorch the script stays the same and only the launch changes, given sizes
# that fit the number of ranks: the tensor-parallel demo refuses an `n_heads` that the ranks
# do not divide, FSDP needs at least one row of the batch per rank, and naming a demo
# (`... -m course_utils.dist.torch_gpt fsdp`) runs it alone. NCCL replaces gloo when every
# rank has a GPU (`worker.torch_setup` chooses):
#
# ```bash
# torchrun --nproc-per-node 8 -m course_utils.dist.torch_gpt            # one host, 8 GPUs
# torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \
#     --rdzv-endpoint HOST0:29500 -m course_utils.dist.torch_gpt         # on each of 4 hosts
# ```
#
# For JAX one process drives all the GPUs of its host, so one host needs no launcher at all:
# `python train.py`, with the same `gpt.shard.mesh((8,), ("data",))` over `jax.devices()`. Many
# hosts run the same program once per host, each calling `jax.distributed.initialize()` before
# anything else (on Slurm, Kubernetes and TPU pods it reads the coordinator's address from the
# environment); `jax.devices()` then lists every host's devices, and a mesh of shape `(4, 8)`
# over `("data", "model")` puts tensor parallelism inside each host, where the links are
# fastest, and data parallelism across hosts. Lesson 05, §6, ran `jax.distributed` with two
# processes on this machine.

# %% [markdown]
# ## 7. Kept
#
# **Key concepts**
#
# - A checkpoint that resumes a run must hold everything the next step reads: the parameters,
#   the optimizer's state (AdamW's two moments and its step count) and the position in the
#   data. The proof of a resume is bit for bit: the resumed run's losses and parameters equal
#   the uninterrupted run's exactly, not to a tolerance.
# - JAX: Orbax (`ocp.v1.save` / `ocp.v1.load`, lesson 06's API) writes any pytree; the restore
#   fills an abstract target of shapes, dtypes *and shardings*, so a checkpoint of the
#   tensor-parallel state comes back onto the same 8-device layout.
# - PyTorch: `torch.distributed.checkpoint` (DCP) with `get_state_dict` / `set_state_dict`, the
#   form every parallelism understands; here in one process (`no_dist=True`).
# - Export: `jax.export` serialises the lowered forward pass (StableHLO, the compiler's input) to bytes;
#   `torch.export` captures an ATen graph with the weights inside it. Each reloaded program
#   gives its live model's logits exactly, and so draws the same text.
#
# A long run on shared hardware gets interrupted: a preemption, a node failure, a time limit.
# Lesson 06 showed the recipe on a small MLP; here it is checked on the GPT and, for JAX, on the
# sharded state of section 6. The tensor-parallel step is reused as it is, so the resume
# compiles nothing new. The helpers in `course_utils.gpt.checkpoint` are thin: `orbax_save` is
# `ocp.v1.save` (with replica-parallel writing turned off, which on eight simulated devices
# would compile a small slicing program per array shape), `abstract_like` maps every array to a
# `jax.ShapeDtypeStruct` carrying its sharding, and `orbax_load` is `ocp.v1.load` into such a
# target.

# %%
# JAX: k steps, save, m more (the uninterrupted run); then restore and redo the m steps
k_ckpt = S.scale_steps // 2
step_tp, (p_sh, o_sh) = steps_jax["tensor parallel, 2 x 4"]
params_k_jax, opt_k_jax, _ = gpt.train.jax_run(step_tp, gpt.shard.place(params0, p_sh),
                                               gpt.shard.place(tx_scale.init(params0), o_sh), scale_batches[:k_ckpt])
state_k_jax = {"params": params_k_jax, "opt_state": opt_k_jax, "step": jnp.asarray(k_ckpt)}
gpt.checkpoint.orbax_save(run_dir / "orbax", state_k_jax)
params_end_jax, _, after_jax = gpt.train.jax_run(step_tp, params_k_jax, opt_k_jax, scale_batches[k_ckpt:])

target_jax = gpt.checkpoint.abstract_like(state_k_jax)  # shapes, dtypes, shardings; no numbers
back_jax = gpt.checkpoint.orbax_load(run_dir / "orbax", target_jax)
resumed_params_jax, _, resumed_jax = gpt.train.jax_run(step_tp, back_jax["params"], back_jax["opt_state"],
                                                       scale_batches[int(back_jax["step"]):])
print("qkv kernel restored onto", back_jax["params"]["blocks"]["attn"]["qkv"]["kernel"][...].sharding.spec)


# %% [markdown]
# The restore reads into a target that `abstract_like` built from the live state: a
# `ShapeDtypeStruct` with a sharding for every leaf, and no numbers. The printed spec shows a
# tensor-parallel kernel coming back split as it was saved. In a real restart the live state
# does not exist; the target is then built from a fresh model with `nnx.eval_shape` (lesson 06)
# and the shardings from `gpt.shard.state_shardings`, neither of which allocates an array.
#
# PyTorch with DCP: the one-process model and AdamW of section 6, the same `k + m` steps. The
# resumed run starts from a fresh `TorchGPT` with other weights and a fresh optimizer, and
# takes its next batch from the step saved beside them, so everything it ends with must have
# come from the checkpoint. `dcp_save` and `dcp_load` are
# lesson 06's calls (`get_state_dict`, `dcp.save`/`dcp.load` with `no_dist=True`,
# `set_state_dict`), and loading fills the objects it is given, in place:

# %%
# PyTorch: the same with torch.distributed.checkpoint, one process
def torch_fresh(seed):
    torch.manual_seed(seed)
    model = gpt.model.TorchGPT(scale_cfg).to(torch_dev)
    return model, gpt.train.torch_adamw(model)


model_k_torch, opt_k_torch = torch_fresh(1)
model_k_torch.load_state_dict(scale_torch_init)
gpt.train.torch_run(model_k_torch, opt_k_torch, zip(scale_x[:k_ckpt], scale_y[:k_ckpt], strict=True))
gpt.checkpoint.dcp_save(run_dir / "dcp", model_k_torch, opt_k_torch, step=k_ckpt)  # the position in the data too
after_torch = gpt.train.torch_run(model_k_torch, opt_k_torch, zip(scale_x[k_ckpt:], scale_y[k_ckpt:], strict=True))

model_r_torch, opt_r_torch = torch_fresh(2)  # other weights, empty optimizer state
next_torch = gpt.checkpoint.dcp_load(run_dir / "dcp", model_r_torch, opt_r_torch)  # the saved step
resumed_torch = gpt.train.torch_run(model_r_torch, opt_r_torch,
                                    zip(scale_x[next_torch:], scale_y[next_torch:], strict=True))

# %% [markdown]
# Here DCP runs in one process, which is enough to see its API. Its reason to exist is the
# sharded case: under FSDP2 every rank calls `dcp.save` with its state dict, DTensors with the
# same names and global shapes on every rank, and each writes only the shards it holds, in parallel, plus one `.metadata` file that maps
# every tensor to its pieces. A later `dcp.load` on another number of ranks reads, on each rank,
# only the pieces that rank's DTensors need: the checkpoint is resharded on load. Orbax does
# the same for JAX from the shardings of its abstract target, which is why the target above
# carries them.
#
# Both resumes, checked with zero tolerance on the losses and on every parameter:

# %%
assert_close(resumed_jax, after_jax, rtol=0, atol=0, name="Orbax: resumed vs uninterrupted losses")
assert_close(resumed_params_jax, params_end_jax, rtol=0, atol=0, name="Orbax: parameters")
assert_close(resumed_torch, after_torch, rtol=0, atol=0, name="DCP: resumed vs uninterrupted losses")
assert_close(dict(model_r_torch.named_parameters()), dict(model_k_torch.named_parameters()), rtol=0, atol=0,
             name="DCP: parameters")
print(f"resumed after step {k_ckpt}, {len(after_jax)} more steps: JAX {np.round(after_jax, 5)}, "
      f"PyTorch {np.round(after_torch, 5)}")

# %% [markdown]
# Bit for bit is possible because each step is deterministic on this machine (the same
# compiled program, or the same PyTorch kernels, on the same inputs) and because nothing the step
# reads was left out. Leave the optimizer state out and the first resumed loss still matches
# (a step computes its loss before it updates anything) while the parameters after it do not;
# restart the batches from zero and the first loss already differs. The exercise notebook has
# you write the restore, in both frameworks; its checks fail on each of these two mistakes,
# with a hint that names it.
#
# **Export.** A checkpoint needs the model's Python code to be of any use; an exported program
# does not. Both exports below take the *trained* models of section 4, with a symbolic batch
# size and sequence length. The JAX export is of a function `logits_fn_jax(params, tokens)`:
# the parameters stay an input, as everywhere in JAX, so the same exported program serves any
# weights of this shape. The PyTorch export holds its weights inside the graph.

# %%
# JAX: jax.export of the trained model's forward pass, serialised and loaded back
import jax.export  # a submodule that jax 0.7 does not load with `import jax`

graphdef_trained, params_trained, rest_trained = nnx.split(compat.eval_view(trained_jax), nnx.Param, ...)
params_trained, rest_trained = nnx.to_pure_dict(params_trained), nnx.to_pure_dict(rest_trained)


def logits_fn_jax(params, tokens):
    return nnx.merge(graphdef_trained, params, rest_trained)(tokens)


blob_jax = gpt.export.jax_export(logits_fn_jax, params_trained)
exported_jax = gpt.export.jax_load(blob_jax)
print(f"jax.export: {len(blob_jax):,} bytes; token input {exported_jax.in_avals[-1]}")

# %%
# PyTorch: torch.export of the trained model, saved and loaded back
blob_torch = gpt.export.torch_export(trained_torch, torch.zeros((2, 8), dtype=torch.long, device=torch_dev),
                                     S.block_size)
exported_torch = gpt.export.torch_load(blob_torch)
print(f"torch.export: {len(blob_torch):,} bytes")


# %% [markdown]
# What each artifact is for. The `jax.export` bytes wrap a StableHLO module (with the
# function's signature), a versioned compiler input with compatibility guarantees across jax
# releases: another Python process calls it with
# `jax.export.deserialize(blob).call(params, tokens)`, and runtimes without Python (IREE, a C++
# PJRT client) compile the module itself, `exported.mlir_module()`. The
# `torch.export` archive holds an ATen-level graph and its weights; `torch.export.load` gives it
# back to Python, and AOTInductor (servers) or ExecuTorch (phones, microcontrollers) compile it
# ahead of time. Neither holds the optimizer, so neither replaces a checkpoint for training.
#
# `int32[b,t]` is the JAX export's token input: both dimensions symbolic. The sizes differ,
# in part because the PyTorch program carries its weights and the JAX program does not; the
# two formats' graphs and metadata differ too. Each reloaded
# program now faces its live model: the logits on a validation window must be equal exactly
# (the same computation on the same machine), and text drawn through each with the same
# seed must be the same. `gpt.sample.generate_fn` is section 4's sampler for any
# `tokens -> logits` function: the same shared uniform numbers and the same inverse-CDF pick,
# without a cache, on a fixed window of `block_size` tokens (one shape, so one compiled
# program however many tokens are drawn). The validation window is that shape too, one row of
# `block_size` tokens, so each JAX function compiles once for the check and the sampling.

# %%
def torch_logits(module):  # tokens (NumPy) -> logits (CPU tensor)
    return lambda t: module(torch.as_tensor(t, dtype=torch.long, device=torch_dev)).detach().cpu()


live_jax = jax.jit(logits_fn_jax)
logit_fns = {"JAX": (lambda t: live_jax(params_trained, jnp.asarray(t, jnp.int32)),
                     lambda t: exported_jax.call(params_trained, jnp.asarray(t, jnp.int32))),
             "PyTorch": (torch_logits(trained_torch), torch_logits(exported_torch))}
x_val = gpt.data.windows(val_ids, np.arange(1), S.block_size)[0]  # (1, block_size): the sampler's shape
prompt_keep = tokenizer.encode("The ")[None, :]

# %%
samples_keep = {}
with torch.no_grad():
    for name, (live, exported) in logit_fns.items():
        assert_close(exported(x_val), live(x_val), rtol=0, atol=0, name=f"{name}: exported vs live logits")
        samples_keep[name] = [gpt.sample.generate_fn(f, prompt_keep, S.export_chars, S.block_size,
                                                     temperature=temperature, seed=7) for f in (live, exported)]
        assert np.array_equal(*samples_keep[name]), name
        print(f"{name}, reloaded export: {tokenizer.decode(samples_keep[name][1][0])!r}")
drawn = slice(prompt_keep.shape[1], None)  # the drawn tokens; the prompt is the same in both
same_text = (samples_keep["JAX"][1][:, drawn] == samples_keep["PyTorch"][1][:, drawn]).mean()
print(f"the two frameworks' samples agree in {same_text:.0%} of their drawn tokens (prompt excluded)")

# %% [markdown]
# The printed lines are one sample from each reloaded program; each equals, token for token,
# what its live model drew from the same random numbers, which the assertion above checked.
# Whether the PyTorch and the JAX samples agree with each other is another question: section
# 4's two models were trained separately, in float32, and drift apart by the rounding that
# section 3 measured, and the last line says how far that went here. Section 8 shows that the
# same weights pick the same token at every drawn position, up to near-ties.
#
# What sections 6 and 7 measured, in one table:

# %%
kept_rows = ["| check | result |", "|---|---|"]
kept_rows += [f"| {name}, {len(ref)} steps | max loss gap to one device {np.max(np.abs(np.subtract(got, ref))):.1e} |"
              for name, (got, ref) in scale_table.items()]
kept_rows += [f"| Orbax resume of the tensor-parallel state, {len(after_jax)} steps | losses and parameters bit for bit |",
              f"| DCP resume, {len(after_torch)} steps | losses and parameters bit for bit |",
              f"| jax.export, {len(blob_jax):,} bytes / torch.export, {len(blob_torch):,} bytes "
              "| reloaded logits equal to the live model's; same samples |"]
display(Markdown("\n".join(kept_rows)))

# %% [markdown]
# ## 8. Ported
#
# **Key concepts**
# - The converter of section 3 works on trained weights as on initial ones: trained PyTorch
#   weights go into an NNX model, trained NNX weights into a PyTorch model.
# - The same weights, temperature and seed pick the same token at every position in both
#   frameworks, except draws within float32 rounding of a CDF edge (near-ties).
#
# The last stage a real project meets: a model trained in one framework, served or fine-tuned
# in the other. Each trained model of section 4 moves across, and each pair samples the same
# prompt with the same seed.
#
# Porting moves the weights only. The optimiser state (AdamW's two moments per parameter)
# has the same layouts and would convert with the same functions, which is what resuming
# training in the other framework needs; sampling and fine-tuning from scratch need only the
# weights. A model with dropout would sample no differently after the port, because
# sampling runs in evaluation mode, where dropout does nothing.

# %%
# PyTorch -> JAX
ported_jax = gpt.convert.gpt_torch_to_nnx(trained_torch, nnx.clone(model_jax))
samples_ported_jax = gpt.sample.nnx_generate(ported_jax, prompt, S.sample_chars, temperature=temperature,
                                             seed=0, use_cache=False)

# %%
# JAX -> PyTorch
ported_torch = gpt.convert.gpt_nnx_to_torch(trained_jax, copy.deepcopy(model_torch))
samples_ported_torch = gpt.sample.torch_generate(ported_torch, prompt, S.sample_chars, temperature=temperature,
                                                 seed=0, use_cache=False)

# %% [markdown]
# How should two samples from the same weights be compared? Asking the free samples to be
# equal character for character asks too much. The two frameworks' logits differ in the
# last float32 bits, so their cumulative probabilities (CDFs) differ by about as much, and a
# random number that lands between the two CDF edges of a token picks that token in one
# framework and its neighbour in the other. It happens rarely, but once it does, the two
# texts continue from different prefixes and nothing after that point can be compared.
#
# `gpt.sample.teacher_forced` compares the models position by position instead. It feeds
# the ported model the original model's sample, the prefix before each drawn character,
# through the same window as `generate_fn`, and picks with the same random number the
# original drew there. It returns those picks and, for each, the *margin*: how far the
# random number lay from the nearest edge of the picked token's CDF interval, that is, how
# close the draw came to picking another token. A mismatch is acceptable only where the
# margin is tiny (a near-tie); anywhere else it would mean the port changed the model.
#
# This is the same technique as teacher forcing in training (the model always sees the true
# prefix, never its own previous guess), used here to test instead of to train. It runs in
# both directions: the PyTorch-trained weights in JAX, the JAX-trained weights in PyTorch.

# %%
assert_close(forward_jax(ported_jax, x_jax), trained_torch(x_torch), rtol=1e-4, atol=1e-4, name="ported logits")
NEAR_TIE = 1e-4  # a draw this close to a CDF edge may flip on float32 rounding
with torch.no_grad():
    port_gap = np.abs(np.asarray(forward_jax(ported_jax, x_jax)) - trained_torch(x_torch).cpu().numpy()).max()
print(f"largest ported logit gap {port_gap:.1e}: CDF edges move by at most about "
      f"2 x {port_gap:.1e} / {temperature} = {2 * port_gap / temperature:.1e} (near-tie bound {NEAR_TIE:g})")
T0 = prompt.shape[1]
replays = {  # direction: (the original's sample, the ported model as tokens -> logits)
    "PyTorch -> JAX": (samples_torch, lambda t: forward_jax(compat.eval_view(ported_jax), jnp.asarray(t))),
    "JAX -> PyTorch": (samples_jax, torch_logits(ported_torch.eval())),
}
port_counts = {}
with torch.no_grad():
    for direction, (sample, ported_fn) in replays.items():
        picks, margins = gpt.sample.teacher_forced(ported_fn, sample, T0, S.block_size,
                                                   temperature=temperature, seed=0)
        same, near = picks == sample[:, T0:], margins < NEAR_TIE
        assert near[~same].all(), f"{direction}: a mismatch that is no near-tie, margins {margins[~same]}"
        port_counts[direction] = (int(same.sum()), same.size, int(near.sum()))
        print(f"{direction}: the ported model, fed the original's sample, picks the same token at "
              f"{same.sum()} of {same.size} drawn positions; {near.sum()} near-ties (margin < {NEAR_TIE:g}, "
              f"smallest {margins.min():.1e})")
for direction, ported, original in (("PyTorch -> JAX", samples_ported_jax, samples_torch),
                                    ("JAX -> PyTorch", samples_ported_torch, samples_jax)):
    parts = [int(np.argmax(a != b)) if (a != b).any() else None for a, b in zip(ported, original, strict=True)]
    print(f"{direction}: free samples identical: {np.array_equal(ported, original)}; first difference at {parts}")

# %% [markdown]
# The logits agree to float32 rounding, and a logit shift of δ moves each CDF value by at
# most about 2δ/temperature: the first line above computes that shift for the measured gap,
# next to the stated bound `NEAR_TIE` = 1e-4. A draw farther from its token's CDF edges than
# the shift picks the same token in both frameworks; only a draw closer than that may flip. The check therefore feeds each ported model the *original*
# model's sample (teacher forcing: the same prefix at every step, the same random number)
# and asserts that every position where the two would pick differently is such a near-tie;
# the counts above say how many positions agree and how many draws were that close. A draw
# of a character whose probability is below 2 × 1e-4 counts as a near-tie too: its CDF
# interval is that narrow, so no draw inside it is farther than 1e-4 from an edge.
#
# The free samples are a weaker check. Sampling magnifies any difference: one draw that
# lands between the two models' CDF edges changes the next character, and from there each
# text follows its own history. Whether that happens is luck (the line above says whether
# it did in this run, and where); a longer sample makes it more likely. Teacher forcing
# judges every drawn position on the same prefix instead, so one flipped draw costs one
# position, not the rest of the text.
#
# ## Summary
#
# | task | PyTorch | JAX (Flax NNX + Optax) |
# |---|---|---|
# | input pipeline | `DataLoader(Dataset, batch_sampler=order)` | a NumPy iterator over the same `order` |
# | blocks | `nn.ModuleList`, Python loop | `nnx.vmap` at creation, `nnx.scan` in `__call__` |
# | attention cache | tensors written in place | arrays returned by `dynamic_update_slice` |
# | Linear weight | `weight (out, in)` | `kernel (in, out)`, stacked `(layers, in, out)` |
# | tied head | `F.linear(x, tok_emb.weight)` | `tok_emb.attend(x)` |
# | AdamW | `torch.optim.AdamW` (decay `p·(1 − lr·wd)`) | `optax.adamw` (decay added to the update) |
# | training step | `zero_grad`, `backward`, `clip_grad_norm_`, `step`, `scheduler.step` | `value_and_grad`, one `optax.chain` update |
# | schedule, decay exemption | `LambdaLR`; two parameter groups | `optax.warmup_cosine_decay_schedule`; `mask=` |
# | compile | the step function: `torch.compile(one_step)` (a few graphs) | the whole step, AdamW included: `jax.jit(step, donate_argnums=...)` |
# | fused attention | `F.scaled_dot_product_attention(q, k, v, is_causal=True)` | `jax.nn.dot_product_attention(q, k, v, is_causal=True)` on `(B, T, H, hd)` |
# | decode loop | a Python loop, the cache written in place | `jax.lax.fori_loop` in one `jax.jit`, the cache in the carry |
# | mixed precision | `torch.autocast(..., dtype=torch.bfloat16)` | `NNXGPT(cfg, dtype=jnp.bfloat16)` |
# | float64 control | `model.double()` | `with jax.enable_x64():` (jax 0.7: `jax.experimental.enable_x64`) |
#
# Two rows deserve a second look. The blocks row is the structural difference: PyTorch's
# loop is natural in an eager framework, JAX's scan is natural in a compiled one, and the
# converter bridges them by stacking. The cache row is the state difference that runs
# through the whole course: PyTorch mutates, JAX returns new values; donation
# (`donate_argnums` on the training step) lets XLA write the new state into the old buffers,
# and a loop inside one compiled program (the decode loop of section 4.2) keeps its carry on
# the device between iterations.
#
# **What this run measured** (computed from the cells above):

# %%
closing = [
    "| stage | measured |", "|---|---|",
    f"| data | all {len(order)} batches identical in both pipelines |",
    f"| logits | max abs difference {np.abs(np.asarray(logits_jax) - logits_torch.cpu().numpy()).max():.1e} |",
    f"| loss, gradients | loss {loss_torch.item():.6f} vs {float(loss_jax):.6f}; worst relative gradient gap {grad_gap:.1e} |",
    f"| one AdamW step | within 1e-6 at {exceptions} (largest gap {step_gap:.1e}; the step moved up to {moved:.1e}) |",
    f"| {S.parity_steps} steps, float32 | max loss gap {gaps['PyTorch vs JAX, float32'].max():.1e} |",
    f"| {S.parity_steps} steps, float64 | max loss gap {gaps['PyTorch vs JAX, float64'].max():.1e} |",
    f"| validation loss after {S.train_steps} steps | PyTorch {val_loss_torch:.4f}, JAX {val_loss_jax:.4f} |",
]
closing += [f"| {name}, tokens/s | {tokens_per_s(m, sep=', 95 % interval ')} |" for name, m in throughput.measurements.items()]
closing += [f"| {label} (`claims.faster`) | {verdict.explanation} |" for label, verdict in speed_verdicts.items()]
closing += [f"| ported samples, {d} | same pick at {n} of {m} drawn positions; {k} near-ties |"
            for d, (n, m, k) in port_counts.items()]
display(Markdown("\n".join(closing)))
for name, rows_ in (("PyTorch", samples_torch), ("JAX", samples_jax)):
    for row in rows_:
        print(f"{name}: {tokenizer.decode(row)!r}")

# %% [markdown]
# **Common misconceptions** (each taken up by a section above)
# - *"A `for` loop over layers is fine under `jit`."* It is correct, but `jit` unrolls it into
#   one copy per layer; `nnx.scan` over stacked layers compiles one block (section 2).
# - *"Same loss on one batch, same model."* A transposed square matrix or a mask off by one can
#   survive one output; every gradient and one optimiser step do not (section 3).
# - *"The float32 curves differ, so one framework is wrong."* The float64 control agrees at
#   every step; the float32 gap is rounding, amplified by training (3.1).
# - *"`DataLoader(shuffle=True)` and a JAX pipeline with the same seed see the same data."*
#   Different generators; one order, as data, shared by both, does (section 1).
# - *"Same seed, same sample in both frameworks."* Only with one shared random stream; each
#   framework's own categorical sampler draws differently (4.1).
# - *"bfloat16 is always faster."* On a CPU without bfloat16 matrix units it may not be;
#   section 5 measures it here.
# - *"The KV cache is an approximation."* It computes the same attention over the same keys
#   and values, only without recomputing them; the texts are equal (4.1).
# - *"Adam adapts the step size, so a learning-rate schedule is optional."* Adam normalises
#   each gradient by its running size, but its first estimates of that size are poor, and the
#   warm-up is what keeps the first steps small; the decay is what lets the loss settle
#   (section 3.2 writes both, in both frameworks).
# - *"`torch.compile(model)` compiles the training step."* It compiles the forward pass (and
#   its backward); the optimizer's update stays eager unless it is compiled too, as section 5
#   does by compiling the step function around it. `jax.jit` of the step compiles all of it
#   by construction.
# - *"A KV cache always makes sampling faster."* It removes work that grows with the context;
#   on a tiny model and a short context the fixed costs can weigh as much as that work, and
#   section 4.2 measures what it was worth here.
# - *"Fused attention is faster everywhere."* Its fused kernels are written above all for GPUs, and
#   JAX's call uses one only when asked (`implementation="cudnn"`); on a CPU, JAX's call lowers to the same kind of XLA operations as the hand-written
#   attention, while PyTorch's has a C++ kernel of its own (section 5.1 times both pairs).
# - *"Porting needs the source framework at inference time."* The converted NNX model is an
#   ordinary NNX model; PyTorch is needed only to read the weights once (section 8).
#
# **Review questions**
#
# <details><summary>1. Why does the NNX model create its blocks with <code>nnx.vmap</code> and
# <code>nnx.split_rngs</code>?</summary>
# `vmap` over a block constructor returns one block whose parameters carry a leading layer
# axis, which `nnx.scan` can loop over. `split_rngs` gives each layer its own random key. Without
# it there is one key and no axis to map over: the code as written (`in_axes=(0,)`) fails with
# a `ValueError`, and broadcasting the key instead (`in_axes=None`, with
# `axis_size=n_layers`) would give every layer the same initial weights.
# </details>
#
# <details><summary>2. What does the weight converter do to a Linear layer of block 2, and to a
# LayerNorm?</summary>
# The Linear: PyTorch's `blocks.2.fc1.weight (out, in)` is transposed to `(in, out)` and stored
# as row 2 of the stacked `blocks.fc1.kernel (layers, in, out)`. The LayerNorm: `weight` becomes
# `scale`, `bias` stays `bias`, both stacked the same way. The tied head has no weights to move.
# </details>
#
# <details><summary>3. How does the KV-cache decode step know which keys a query may see?</summary>
# The query at position `pos + i` may see keys at positions `≤ pos + i`. The cache holds
# `block_size` positions; positions not yet written hold zeros but are masked out by the same
# comparison, so they get zero attention weight.
# </details>
#
# <details><summary>4. Why do the two frameworks' AdamW give the same update although one
# multiplies the parameter by <code>1 − lr·wd</code> and the other adds <code>wd·p</code> to the
# update?</summary>
# Both compute `p − lr·wd·p − lr·m̂/(√v̂ + ε)`; they only group the terms differently, which
# changes float32 rounding and nothing else. An Adam with L2 regularisation (the decay added to
# the gradient, before the moments) would be a different optimiser.
# </details>
#
# <details><summary>5. Why can the two trained models' samples differ while a ported model's
# samples agree with its source's up to near-ties?</summary>
# The trained models hold slightly different weights (float32 drift over the training steps), so
# one draw can fall on different sides of a cumulative-probability boundary, and the texts part.
# A ported model holds the same weights as its source, so its logits differ from the source's
# only by float32 rounding: every draw agrees except a near-tie, one that lands within that
# rounding of a cumulative-probability edge, which may flip (section 8 counts them). The free
# samples are then equal unless a near-tie occurred, and teacher forcing shows that every
# mismatch is one.
# </details>
#
# <details><summary>6. Why is the key bias's gradient zero, and why does that matter for the
# AdamW parity check?</summary>
# Adding a vector `b` to every key adds `q·b` to all of one query's scores, and softmax is
# unchanged by adding a constant to all its inputs, so the loss does not depend on `b`. In
# float32 its gradient is rounding noise, and Adam's first step, about `lr·g/(|g| + ε)`,
# turns that noise into a step whose size depends on the noise against `ε`, not on the
# gradient (section 3 printed it as a fraction of `lr`), in a direction set by each
# framework's rounding: the check's tolerance must allow for it.
# </details>
#
# <details><summary>7. Why does the JAX decode loop rebuild the model from its state inside
# the <code>fori_loop</code> body, and carry that state unchanged?</summary>
# `fori_loop` traces its body as a function of its own, with its own tracers. The model's
# `nnx.scan` over its blocks checks that the module it runs holds arrays of the current trace,
# so a model merged outside the body and used inside it is refused ("Cannot extract graph node
# from different trace level"). Carrying the state through the loop
# makes it an input of the body's trace, where `nnx.merge` can build the module again; XLA
# sees the same arrays at every iteration.
# </details>
#
# <details><summary>8. A resumed PyTorch run repeats its warm-up although the optimizer state was
# restored. What was left out, and why can the same slip not happen with optax?</summary>
# The scheduler's state: `LambdaLR` keeps its own step counter, outside the optimizer, and it
# must be saved and loaded too. Optax's schedule reads the step count kept inside the
# optimizer state that the step returns and the checkpoint holds, so restoring that state
# restores the schedule.
# </details>
#
# <details><summary>9. What would change on a GPU?</summary>
# The timings, certainly; the equalities should not (the checks are written for that, with
# full float32 precision set in both, as `env.setup` does), though only a run there shows
# that they hold. What the libraries' documentation leads one to expect, not measured here:
# eager PyTorch launches one GPU kernel per operation from Python, a fixed cost that weighs
# more the smaller the model, which compilation and CUDA graphs exist to cut, and bfloat16
# matmuls run on tensor cores where the GPU has bfloat16 ones (NVIDIA's since Ampere, not a
# T4 or a V100). The verdicts of section 5 belong to this machine; rerun the
# lesson there to judge them there.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and
# press *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.
# Where an executed copy's script does not run (GitHub's preview, an untrusted notebook)
# each answer is folded under its question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("11_capstone_gpt")

# %% [markdown]
# **Next:** the exercises in `exercises/11_capstone_gpt_exercises.ipynb`: a causal mask in both
# frameworks, a weight converter for the attention block, a KV-cache step, a data-parallel loss
# with `jax.jit` shardings, and resuming from a checkpoint bit for bit.
