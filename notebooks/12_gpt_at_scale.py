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
# # 12 · The GPT at speed and scale
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/12_gpt_at_scale.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/12_gpt_at_scale.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/12_gpt_at_scale.ipynb)
#
# Lesson 11 wrote a small GPT in both frameworks, proved the two equal and trained them. This
# lesson takes the same model where real training goes. It makes the step fast and reads its
# speed against the hardware. It spreads the step over devices and processes, stops and
# resumes it without losing a bit, exports the model as a program and moves its weights
# across.
#
# **Learning objectives.** After this notebook you can
# 1. measure what each lever of speed is worth for a training step (compilation, bfloat16,
#    fused attention, a compiled decode loop), with the method named and the device's peak
#    as the yardstick;
# 2. shard a JAX training step with a `NamedSharding` per parameter and `jax.jit`'s
#    `in_shardings`/`out_shardings`, and run PyTorch's FSDP2 and tensor parallelism under
#    `torchrun`, proven by their loss curves;
# 3. checkpoint, export and port the model in both frameworks, each proven exactly.
#
# The model, the data and the training step are lesson 11's, imported from `course_utils.gpt`.
# The sharding, checkpoint and export code this lesson teaches is written on the page.

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
    "block_size": (64, 32),  # context length, as in lesson 11
    "d_model": (128, 32),  # width of the residual stream
    "n_heads": (4, 2),  # attention heads
    "n_layers": (4, 2),  # transformer blocks
    "d_ff": (512, 128),  # MLP hidden width
    "batch": (32, 8),  # sequences per training step
    "scan_layers": (48, 8),  # depth of the scanned model whose compile time section 1 measures
    "k_steps": (4, 2),  # training steps per timed call in section 2
    "target_s": (1.0, 0.1),  # seconds of timing per variant
    "scale_steps": (8, 4),  # steps of each sharded run (short: float32 drift grows with steps)
    "scale_batch": (16, 8),  # sequences per step there, split over 8 devices or 2 ranks
    "n_procs": (2, 2),  # PyTorch processes started by torchrun
    "launch_timeout": (300, 180),  # seconds before the torchrun launch is stopped
    "export_chars": (60, 16),  # characters sampled through each exported program
}

# %%
from course_utils import env

SETUP = env.setup(one_kind=True, cpu_devices=8)  # first: 8 simulated CPU devices for JAX (section 5)

import copy
import inspect
import io
import re
import tempfile
import time
from pathlib import Path

import jax
import jax.export  # a submodule that jax 0.7 does not load with `import jax`
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import torch
import torch.distributed.checkpoint as dcp
from flax import nnx
from IPython.display import Markdown, display
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.nn import functional as F

from course_utils import claims, compat, config, gpt, meshes, peaks, timing
from course_utils.distributed import launch, torch_gpt
from course_utils.gpt.checkpoint import one_process
from course_utils.gpt.model import GPTConfig
from course_utils.gpt.sample import check_lengths, pick_with_margin, right_padded, uniforms
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
torch_dev, jax_dev = SETUP.pair()  # one device kind for everything that compares the two
print(env.report().line())
print(SETUP.rule)

# %% [markdown]
# The first line records versions, devices, precision and smoke mode. The second is the
# course's device rule: comparisons run both frameworks on one kind of device, and the step
# read against the hardware in section 2 runs on the accelerator when there is one.
#
# `make_gpt_pair` builds a `TorchGPT` and an `NNXGPT` with the same initial weights.
# `gpt.train.jax_step` is lesson 11's pure step with AdamW,
# `(params, opt_state, x, y) -> (params, opt_state, loss)`.

# %%
corpus = gpt.data.load_corpus()
tokenizer = gpt.data.CharTokenizer.from_text(corpus)
train_ids, val_ids = gpt.data.split_ids(tokenizer.encode(corpus), val_fraction=0.1)
cfg = GPTConfig(vocab_size=tokenizer.vocab_size, block_size=S.block_size, d_model=S.d_model,
                n_heads=S.n_heads, n_layers=S.n_layers, d_ff=S.d_ff, dropout=0.0)
model_torch, model_jax = gpt.convert.make_gpt_pair(cfg, seed=0)  # the same initial weights
model_torch = model_torch.to(torch_dev)
graphdef, params_jax, rest_jax = nnx.split(model_jax, nnx.Param, ...)  # structure, parameters, the rest
tx = gpt.train.jax_adamw()
order = gpt.data.batch_order(len(train_ids), S.block_size, S.batch, 8, seed=0)
x_np, _ = gpt.data.windows(train_ids, order[0], S.block_size)
print(cfg)

# %% [markdown]
# ## 1. Compile time and depth
#
# **Key concepts**
# - `jax.jit` unrolls a Python loop over layers; `nnx.scan` over stacked layers compiles one
#   block.
# - A first call traces, lowers and compiles; it is timed apart from the steady state.
# - PyTorch's counterpart is regional compilation: `torch.compile` applied to the repeated
#   block.
#
# Lesson 11 claimed that the scanned model's compile time barely grows with depth. The cell
# measures it. It compiles the forward pass of the lesson's model and of one with `scan_layers`
# blocks, twice each, alternating. Each compile is the first call of a new `jax.jit`, with
# JAX's persistent compilation cache off, so nothing compiled before stands in for it.

# %%
# JAX: the first call (trace + lower + compile + run) of the scanned forward pass, two depths
deep_jax = gpt.model.NNXGPT(GPTConfig(**{**cfg.__dict__, "n_layers": S.scan_layers}), rngs=nnx.Rngs(0))
depths, first_s = (cfg.n_layers, S.scan_layers), {}
with timing.jax_persistent_cache_off():
    for model in (model_jax, deep_jax, deep_jax, model_jax):  # alternating
        g, p, r = nnx.split(model, nnx.Param, ...)
        r = nnx.to_pure_dict(r)
        forward = jax.jit(lambda p, tokens, g=g, r=r: nnx.merge(g, p, r)(tokens))  # a new jit: nothing cached
        start = time.perf_counter()
        jax.block_until_ready(forward(p, x_np))
        first_s[model.cfg.n_layers] = min(first_s.get(model.cfg.n_layers, np.inf), time.perf_counter() - start)
print(f"scanned forward pass, first call: {depths[0]} layers {first_s[depths[0]]:.2f} s, {depths[1]} layers "
      f"{first_s[depths[1]]:.2f} s ({first_s[depths[1]] / first_s[depths[0]]:.1f}x for "
      f"{depths[1] / depths[0]:.0f}x the layers)")

# %% [markdown]
# The ratio is the cost of depth under scan on this machine, from the faster of each depth's
# two compiles. XLA compiles the loop body once; what grows with the layers is the size of the
# stacked arrays, not the program. A ratio near 1 says depth cost little here. In smoke mode the
# deep model is only a few layers deeper, which checks the path more than the depth.
#
# PyTorch's counterpart is *regional compilation*: `for block in model.blocks: block.compile()`
# instead of compiling the whole model. Inductor then compiles one block and reuses its code
# for every layer of the same shapes. The lesson does not time it.
#
# ## 2. The training step, made fast
#
# **Key concepts**
# - One timed call runs `k_steps` training steps; each variant's speed is read against PyTorch
#   eager, round by round.
# - Variants: PyTorch eager, `torch.compile` of the whole step, bfloat16 autocast, the
#   `jax.jit` step with donated state, and the same step with an NNX bfloat16 compute dtype.
# - JAX's model FLOP/s read against the device's published peak, the MFU, or else against a
#   matmul timed on it.
#
# Each variant copies the initial weights, makes a fresh optimiser, and returns a function that
# runs the `k_steps` steps. So every first call starts from the same state, and
# `timing.compare` checks that their first losses agree, within a relative 3 %, loose enough
# for bfloat16.

# %%
K = S.k_steps
timed = [gpt.data.windows(train_ids, starts, S.block_size) for starts in order[:K]]
timed_torch = [(torch.from_numpy(x).to(torch_dev), torch.from_numpy(y).to(torch_dev)) for x, y in timed]
timed_jax = [(jnp.asarray(x), jnp.asarray(y)) for x, y in timed]
tokens_per_call = K * S.batch * S.block_size


# PyTorch: eager, torch.compile of the whole step (forward, backward, AdamW), bfloat16 autocast
if hasattr(torch._dynamo.config, "capture_profiler_record_function"):  # torch 2.6 lacks it
    # Dynamo would drop the profiler labels inside AdamW.step with a warning; the step is the same
    torch._dynamo.config.capture_profiler_record_function = True


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

    step = torch.compile(one_step) if compiled else one_step
    return lambda: torch.stack([step(x, y) for x, y in timed_torch])  # k_steps steps


# %% [markdown]
# `torch.compile(one_step)` compiles the whole step function. Dynamo traces the forward pass,
# AOTAutograd derives the backward pass, and Inductor generates fused kernels for both.
# `optimizer.step()` becomes a graph of its own. `jax.jit` compiles the same three parts into
# one XLA program, and donation lets it write the new state over the old.
#
# bfloat16 halves the bytes of each activation. On hardware with bfloat16 matrix units it also
# multiplies the matmul rate. It keeps about 2 to 3 significant digits, so the loss is computed
# in float32 on both sides. `torch.autocast` runs the matmuls in bfloat16. The NNX counterpart is
# a dtype policy in the model: `NNXGPT(cfg, dtype=jnp.bfloat16)` computes in bfloat16 while
# the parameters stay float32.

# %%
# JAX: the jitted pure step (state donated), float32 or an NNX bfloat16 compute dtype
model_bf16_jax = gpt.convert.gpt_torch_to_nnx(model_torch, gpt.model.NNXGPT(cfg, dtype=jnp.bfloat16, rngs=nnx.Rngs(0)))
graphdef_bf16, _, rest_bf16 = nnx.split(model_bf16_jax, nnx.Param, ...)
jit_step_bf16 = jax.jit(gpt.train.jax_step(graphdef_bf16, rest_bf16, tx), donate_argnums=(0, 1))
jit_step_fresh = jax.jit(gpt.train.jax_step(graphdef, rest_jax, tx), donate_argnums=(0, 1))  # compiles on its first call


def jax_variant(step, device=jax_dev):
    params, opt_state = jax.device_put(jax.tree.map(jnp.copy, (params_jax, tx.init(params_jax))), device)  # copies: the step donates
    batches = jax.device_put(timed_jax, device)

    def k_steps():
        nonlocal params, opt_state
        losses = []
        for x, y in batches:
            params, opt_state, loss = step(params, opt_state, x, y)
            losses.append(loss)
        return jnp.stack(losses)

    return k_steps


# %%
variants = {"PyTorch eager": torch_variant(), "torch.compile (step)": torch_variant(compiled=True),
            "PyTorch bf16 autocast": torch_variant(bf16=True), "JAX jit (step, donated)": jax_variant(jit_step_fresh),
            "JAX bf16 dtype": jax_variant(jit_step_bf16)}
with timing.cold_inductor_cache(), timing.jax_persistent_cache_off():  # first calls from cold caches
    throughput = timing.compare(variants, baseline="PyTorch eager", rtol=3e-2, atol=3e-2, target_s=S.target_s)
rows = ["| variant | vs PyTorch eager | first call (with compile) |", "|---|---:|---:|"]
rows += [f"| {name} | {throughput.speed_text(name)} | {timing.format_seconds(m.first_call_s)} |"
         for name, m in throughput.measurements.items()]
display(Markdown("\n".join(rows) + f"\n\n{K} steps of {S.batch}×{S.block_size} tokens per call ({throughput.conditions()})"))

# %% [markdown]
# The speed column is the median of the per-round ratios, the statistic every verdict reads.
# The first-call column includes the compiling: Dynamo and Inductor under `torch.compile`, XLA
# for the two `jax.jit` variants, nothing for eager. Both compilers start cold: Inductor in an
# empty cache directory and JAX's persistent cache off.
#
# Which differences are real? `claims.faster` applies the course's one rule to the paired
# rounds: a verdict only when the interval of the median ratio clears 1, and none from a busy
# machine. Three pairings carry the section's questions, each changing one thing:

# %%
pairings = {
    "PyTorch's compiler": ("PyTorch eager", "torch.compile (step)"),
    "the two frameworks, both compiled": ("torch.compile (step)", "JAX jit (step, donated)"),
    "bfloat16 in JAX": ("JAX jit (step, donated)", "JAX bf16 dtype"),
}
print(claims.compact({label: claims.faster(throughput, a, b) for label, (a, b) in pairings.items()}))
firsts = {name: throughput.measurements[name].first_call_s for name in ("torch.compile (step)", "JAX jit (step, donated)")}
short, long = sorted(firsts, key=firsts.get)
print(f"first call, compile included: {', '.join(f'{n} {timing.format_seconds(t)}' for n, t in firsts.items())}; "
      f"{firsts[long] / firsts[short]:.1f}× longer for {long}")

# %% [markdown]
# The second pairing is the framework comparison: both sides compile forward, backward and
# AdamW, from the same weights and batches, on one device kind. This step is tiny, so the gap
# between the two compilers need not hold for a larger model; lesson 04 measures
# `torch.compile` on its own workload. On a CPU without bfloat16 matrix units, bfloat16 need
# not be faster at all: the matmuls convert to float32 inside, and the casts cost time. On a GPU
# with bfloat16 tensor cores or a TPU, bfloat16 is the main lever.
#
# The last line compares the compilers' one-time costs, each paid again when the shapes change.
# On the next run, Inductor's cache, on by default, skips its code generation. JAX's persistent
# cache is off until set up, as in lesson 03.
#
# **The step against the hardware.** A speed means little on its own. The cell times the jitted
# step on `SETUP.jax_alone`, the accelerator when there is one. The FLOPs of a step come from
# PaLM's formula, `peaks.transformer_train_flops`: 6 per parameter and token for the forward
# and backward passes, plus attention's two matmuls over the context. `peaks.peak` gives the
# device's published peak. Where there is none, as on a CPU, `peaks.measure_cpu` times a JAX
# matmul on the device now.

# %%
jit_step_alone = jax.jit(gpt.train.jax_step(graphdef, rest_jax, tx), donate_argnums=(0, 1))
alone = timing.bench(jax_variant(jit_step_alone, SETUP.jax_alone), label=SETUP.alone_label, target_s=S.target_s)
n_params = sum(a.size for a in jax.tree.leaves(params_jax)) - cfg.block_size * cfg.d_model  # no position table
step_flops = peaks.transformer_train_flops(n_params, cfg.n_layers, cfg.d_model, cfg.block_size,
                                           tokens=S.batch * cfg.block_size)  # one step, by PaLM's formula
top = peaks.peak(SETUP.jax_alone) or peaks.measure_cpu(device=SETUP.jax_alone)  # published, or timed now
dtype = "float32" if top.flops("float32") else "bfloat16"
achieved = K * step_flops / alone.median  # model FLOP/s
print(f"{SETUP.alone_label}: {tokens_per_call / alone.median:,.0f} tokens/s; model FLOPs {achieved / 1e9:,.2f} GFLOP/s, "
      f"{peaks.share(achieved, top, dtype):.1%} of {top.label(dtype)} ({top.flops(dtype) / 1e9:,.1f} GFLOP/s)")

# %% [markdown]
# MFU, model FLOPs utilisation, is the share of a published peak that the model's FLOPs
# reached. A step this small spends much of its time elsewhere: dispatch, the optimizer's
# elementwise updates, and matmuls too small to fill a chip's matrix units. The share grows with
# the width, the batch and the context; large runs reach 40 % or more. A CPU has no published
# peak and so no MFU: the line reads the model's FLOP/s against a matmul timed now, a yardstick
# that a busy machine lowers and a training step may beat.
#
# ## 3. Fused attention
#
# **Key concepts**
# - `F.scaled_dot_product_attention` and `jax.nn.dot_product_attention` compute lesson 11's
#   attention in one call.
# - They take different layouts: PyTorch `(batch, heads, seq, head_dim)`, JAX
#   `(batch, seq, heads, head_dim)`.
# - A fused kernel need not store the `(seq, seq)` scores; which kernel runs depends on the
#   device.
#
# Lesson 11's attention materialises the scores, masks them, takes the softmax and multiplies
# by the values: four passes over a tensor that grows with the square of the context. Both
# frameworks ship one call for the same result. First the four functions, on the same random
# `q`, `k` and `v`:

# %%
qkv_np = np.random.default_rng(5).standard_normal((3, S.batch, S.n_heads, S.block_size, cfg.head_dim),
                                                  dtype=np.float32)  # q, k, v: (batch, heads, seq, head_dim)


# PyTorch: the hand-written attention, and the fused call
def attention_torch(q, k, v):
    T = q.shape[2]
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5  # (batch, heads, seq, seq)
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    return F.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v


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
    return jax.nn.softmax(scores, axis=-1) @ v


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
attention_timing = timing.compare(attention_calls, baseline="PyTorch, hand-written", rtol=1e-5, atol=1e-5,
                                  target_s=S.target_s)  # checks that all four agree first
display(Markdown(attention_timing.table()))
fused_pairs = {"PyTorch": ("PyTorch, hand-written", "PyTorch, F.scaled_dot_product_attention"),
               "JAX": ("JAX, hand-written", "JAX, jax.nn.dot_product_attention")}
print(claims.compact({fw: claims.faster(attention_timing, hand, fused) for fw, (hand, fused) in fused_pairs.items()}))

# %% [markdown]
# The four agree within 10⁻⁵, which `timing.compare` checked before timing them. The fused
# calls need fewer arguments: `is_causal=True` replaces the mask, and the scale
# `1/√head_dim` is their default. Neither returns the attention weights, which is the point: a
# function that returned them would have to store them.
#
# What runs underneath differs. On a CPU, PyTorch runs its own fused C++ kernel. JAX's call
# with `implementation=None` lowers to plain XLA operations much like the hand-written ones,
# on every backend. The fused kernels are written above all for GPUs, where never writing the
# scores to memory lets long contexts fit. There PyTorch picks such a kernel by itself, and
# JAX's call takes `implementation="cudnn"`. Lesson 11's model keeps the hand-written
# attention, because the KV cache extends it.
#
# ## 4. Sampling fast: the KV cache and a compiled decode loop
#
# **Key concepts**
# - Without a cache, drawing `n` tokens runs about `n²/2` positions through the model; with
#   it, `n`.
# - `nnx_generate` calls a jitted step per token from Python; `jax.lax.fori_loop` inside one
#   `jax.jit` runs the whole loop as one program.
# - Within each framework, every variant draws the same text before any is timed.
#
# Lesson 11's `nnx_generate` pays JAX's dispatch for every token, and each picked token comes
# back to NumPy. The JAX idiom for a loop of known length is to compile the loop itself: a
# `jax.lax.fori_loop` inside `jax.jit`, the KV cache and the token buffer as its carry. Here is
# the core of `gpt.sample.nnx_generate_compiled`:

# %%
display(Markdown("```python\n" + inspect.getsource(gpt.sample._decode_loop_body)
                 + "\n" + inspect.getsource(gpt.sample._jax_decode_loop) + "```"))

# %% [markdown]
# The token buffer has `block_size` slots from the start, because every array in a compiled
# loop keeps one shape; the sample is cut to length when the loop is done. The temperature and
# the number of steps are static arguments, so a new value compiles a new program.
#
# The cell below checks that each framework's variants draw the same text, then times five
# variants. Each draws `n_cached` tokens from the same prompt with the initial weights: speed
# does not depend on what the weights say.

# %%
prompt = np.stack([tokenizer.encode("The "), tokenizer.encode("def ")])  # (2, 4)
n_cached, temperature = cfg.block_size - prompt.shape[1], 0.8
draw = dict(temperature=temperature, seed=1)
per_token = gpt.sample.nnx_generate(model_jax, prompt, n_cached, **draw)
for use in (True, False):
    assert np.array_equal(gpt.sample.nnx_generate_compiled(model_jax, prompt, n_cached, use_cache=use, **draw),
                          per_token)
assert np.array_equal(gpt.sample.torch_generate(model_torch, prompt, n_cached, use_cache=False, **draw),
                      gpt.sample.torch_generate(model_torch, prompt, n_cached, **draw))
decode_variants = {
    "PyTorch, KV cache": lambda: gpt.sample.torch_generate(model_torch, prompt, n_cached, **draw),
    "PyTorch, no cache": lambda: gpt.sample.torch_generate(model_torch, prompt, n_cached, use_cache=False, **draw),
    "JAX per-token nnx.jit, KV cache": lambda: gpt.sample.nnx_generate(model_jax, prompt, n_cached, **draw),
    "JAX fori_loop, KV cache": lambda: gpt.sample.nnx_generate_compiled(model_jax, prompt, n_cached, **draw),
    "JAX fori_loop, no cache": lambda: gpt.sample.nnx_generate_compiled(model_jax, prompt, n_cached,
                                                                        use_cache=False, **draw),
}
decoding = timing.compare(decode_variants, baseline="PyTorch, no cache", check=False, target_s=S.target_s)  # texts checked above
display(Markdown(decoding.table()))
decode_pairs = {"PyTorch's cache": ("PyTorch, no cache", "PyTorch, KV cache"),
                "JAX's cache": ("JAX fori_loop, no cache", "JAX fori_loop, KV cache"),
                "JAX's compiled loop": ("JAX per-token nnx.jit, KV cache", "JAX fori_loop, KV cache")}
print(claims.compact({label: claims.faster(decoding, base, lever) for label, (base, lever) in decode_pairs.items()}))

# %% [markdown]
# Each variant is one call that draws a whole sample, so the medians are times per sample. The
# device column reads `host` because every sampler returns a NumPy array. The two "no cache"
# variants do not do the same work: PyTorch's runs the context drawn so far, while JAX's
# compiled loop runs the whole `block_size` window at every step, one shape for one program.
# The cache saves work that grows with the context and the model, while its bookkeeping costs
# about the same at any position. On a tiny model the fixed costs can weigh as much as the
# saving. The table's ratios set every sampler against PyTorch's plain one; only the verdict
# lines compare like with like. The compiled loop's line is JAX's alone: what removing the round
# trip to Python per token was worth.
#
# ## 5. Sharded
#
# **Key concepts**
# - JAX: one step for every layout. `jax.jit` with `in_shardings` and `out_shardings` over a
#   mesh decides where each array lives, and XLA inserts the communication.
# - A `NamedSharding` per parameter, from rules on the parameter's path: data parallel (none),
#   FSDP (kernels split over `"data"`), tensor parallel (Megatron's layout over `"model"`).
# - PyTorch: one process per device under `torchrun`; FSDP2's `fully_shard` and DTensor's
#   `parallelize_module`.
# - The proof is the loss curve: every layout gives one device's losses, step for step.
#
# The eight JAX devices come from `meshes.devices(8)`: eight GPUs or TPUs where the machine has
# them, else eight simulated CPU devices. Those run every collective a pod would, but make
# nothing faster. Each layout is compared with a one-device run of the same steps.

# %%
DEVICES = meshes.devices(8)  # the accelerators if there are eight, else simulated CPUs
scale_torch, scale_jax = gpt.convert.make_gpt_pair(cfg, seed=1)
scale_torch = scale_torch.to(torch_dev)
scale_order = gpt.data.batch_order(len(train_ids), S.block_size, S.scale_batch, S.scale_steps, seed=11)
scale_x, scale_y = gpt.data.windows(train_ids, scale_order, S.block_size)  # each (steps, batch, T)
scale_batches = list(zip(scale_x.astype(np.int32), scale_y.astype(np.int32), strict=True))

# JAX: the reference, one device
graphdef_scale, params0, rest_scale = nnx.split(scale_jax, nnx.Param, ...)
pure_step = gpt.train.jax_step(graphdef_scale, rest_scale, tx)  # (params, opt_state, x, y) -> (..., loss)
one_device = jax.device_put((params0, tx.init(params0)), DEVICES[0])
params_one_jax, _, losses_one_jax = gpt.train.jax_run(jax.jit(pure_step), *one_device, scale_batches)
print("one device:", np.round(losses_one_jax, 4))

# %% [markdown]
# Each layout gives every parameter a `PartitionSpec`. A rule pairs a regular expression on the
# parameter's path, such as `blocks/attn/qkv/kernel`, with the spec of its own last axes. The
# stacked layer axis stays whole, and a parameter no rule matches is replicated.

# %%
TP_RULES = ((r"attn/qkv/kernel$", (None, "model")), (r"attn/qkv/bias$", ("model",)),  # by output columns
            (r"fc1/kernel$", (None, "model")), (r"fc1/bias$", ("model",)),
            (r"attn/proj/kernel$", ("model", None)), (r"fc2/kernel$", ("model", None)))  # by input rows
FSDP_RULES = ((r"kernel$", ("data", None)),)  # every kernel split by its first own axis over "data"


def param_specs(params, rules=()):
    def spec(path, leaf):
        name = jax.tree_util.keystr(path, simple=True, separator="/")
        name = name.removesuffix("/value")  # an nnx.State's leaf: blocks/attn/qkv/kernel
        for pattern, last in rules:  # the first rule whose pattern matches
            if re.search(pattern, name):
                return P(*(None,) * (leaf.ndim - len(last)), *last)  # the layer axis whole
        return P()  # no rule: replicated

    return jax.tree_util.tree_map_with_path(spec, params)


# %% [markdown]
# A `NamedSharding` binds a spec to a mesh. AdamW's two moments must live where their
# parameter lives: `jax.eval_shape` of the jitted `tx.init` tells where XLA puts them, without
# allocating. `jax.jit` then takes the shardings of every input and output: the batch split by
# rows over `"data"`, the loss replicated.

# %%
def state_shardings(the_mesh, tx, params, rules=()):
    p_sh = jax.tree.map(lambda s: NamedSharding(the_mesh, s), param_specs(params, rules))
    abstract = jax.eval_shape(jax.jit(tx.init, in_shardings=(p_sh,)), params)
    replicated = NamedSharding(the_mesh, P())

    def named(a):
        s = getattr(a, "sharding", None)
        return s if isinstance(s, NamedSharding) else replicated

    return p_sh, jax.tree.map(named, abstract)


def jit_step(step, shardings, batch_axis="data", donate=False):
    p_sh, o_sh = shardings
    the_mesh = jax.tree.leaves(p_sh)[0].mesh
    x_sh = NamedSharding(the_mesh, P(batch_axis, None))  # rows of the batch over batch_axis
    return jax.jit(step, in_shardings=(p_sh, o_sh, x_sh, x_sh), out_shardings=(p_sh, o_sh, NamedSharding(the_mesh, P())),
                   donate_argnums=(0, 1) if donate else ())


# %% [markdown]
# Three layouts run the same `pure_step`: data parallel and FSDP on eight devices, and tensor
# parallel on a `2 × 4` mesh, two data-parallel groups of four devices, each group splitting every layer.
# The cell compiles each step, counts two collectives by name in its optimised HLO,
# `compiled.as_text()`, and runs it.

# %%
layouts_jax = {"data parallel, 8": (gpt.shard.mesh((8,), ("data",)), ()),  # jax.make_mesh over meshes.devices
               "FSDP, 8": (gpt.shard.mesh((8,), ("data",)), FSDP_RULES),
               "tensor parallel, 2 x 4": (gpt.shard.mesh((2, 4), ("data", "model")), TP_RULES)}
losses_jax, steps_jax, collectives_jax = {}, {}, {}
for name, (the_mesh, rules) in layouts_jax.items():
    shardings = state_shardings(the_mesh, tx, params0, rules)
    placed = jax.device_put(params0, shardings[0]), jax.device_put(tx.init(params0), shardings[1])
    compiled_step = jit_step(pure_step, shardings).lower(*placed, *scale_batches[0]).compile()
    steps_jax[name] = (compiled_step, shardings)
    hlo = compiled_step.as_text()  # the optimised program; an async pair counts once, by its -start
    collectives_jax[name] = {op: len(re.findall(rf"\s{op}(?:-start)?\(", hlo)) for op in ("all-reduce", "all-gather")}
    params_end, _, losses_jax[name] = gpt.train.jax_run(compiled_step, *placed, scale_batches)
fc1 = params_end["blocks"]["fc1"]["kernel"][...]
print(f"tensor parallel: blocks.fc1.kernel {fc1.shape}, spec {fc1.sharding.spec}; one device stores "
      f"{fc1.addressable_shards[0].data.shape}")
display(Markdown("\n".join(["| layout | all-reduce | all-gather |", "|---|---:|---:|"]
                           + [f"| {name} | {c['all-reduce']} | {c['all-gather']} |" for name, c in collectives_jax.items()])))

# %% [markdown]
# The printed spec shows tensor parallelism in memory: the stacked MLP kernel,
# `(layers, d_model, d_ff)`, is split on its last axis over the four devices of `"model"`.
#
# Each count is how often a collective appears in one step's compiled program, where the
# scan's loops do not repeat per layer: the counts show structure, not bytes moved. Data
# parallelism all-reduces the gradients and the loss. FSDP adds all-gathers: each kernel is
# gathered before its layer uses it. Tensor parallelism exchanges partial results inside every
# block. Over the fused `qkv` it also all-gathers, because a device's block of columns does not
# hold the query, key and value of the same heads. The PyTorch version below reorders the
# fused rows so that each rank holds whole heads.
#
# PyTorch launches one process per rank. `torch_gpt.save_inputs` writes the configuration, the
# initial weights and the batches into a run folder. There `launch.torchrun` runs the script
# `course_utils.distributed.torch_gpt` on 2 ranks, both demos in one launch. First its FSDP2
# region:

# %%
launch.excerpt("course_utils.distributed.torch_gpt", "fsdp")

# %% [markdown]
# Every block is wrapped with `fully_shard`, then the root module. Each rank takes its rows of
# every batch. Its gradients are averaged with the other rank's as they are reduce-scattered
# onto its shard.
#
# Then tensor parallel. `ColwiseParallel` gives each rank a block of a Linear's outputs, so a
# rank's rows of the fused `qkv` weight must hold whole heads of query, key and value. `heads_first`
# reorders the rows that way. `local_heads_forward` is the attention over a rank's own heads:

# %%
launch.excerpt("course_utils.distributed.torch_gpt", "heads")

# %% [markdown]
# The demo reorders the weights, shards each block by a plan and swaps in that attention:

# %%
launch.excerpt("course_utils.distributed.torch_gpt", "tp")

# %% [markdown]
# Each rank sees the whole batch and holds half the heads and half the MLP's hidden units.
# `RowwiseParallel` all-reduces the outputs of `proj` and `fc2`, so each block's result is
# whole again on every rank. Where the loopback refuses TCP connections, `torchrun` cannot
# start, and the launch says so.

# %%
# PyTorch: one process, then FSDP2 and tensor parallel on 2 processes (one torchrun launch)
run_dir = Path(tempfile.mkdtemp(prefix="course-12-"))
torch_gpt.save_inputs(run_dir, cfg, scale_torch, scale_x, scale_y)
scale_torch_init = {name: t.clone() for name, t in scale_torch.state_dict().items()}  # for section 6
losses_one_torch = gpt.train.torch_run(scale_torch, gpt.train.torch_adamw(scale_torch), zip(scale_x, scale_y, strict=True))
torch_launch = launch.torchrun("course_utils.distributed.torch_gpt", S.n_procs, workdir=run_dir, timeout=S.launch_timeout)
assert launch.tagged_processes(torch_launch.tag) == []  # nothing left running
losses_torch = {f"{label}, {S.n_procs} ranks": ranks[0]["losses"]
                for name, label in (("fsdp", "FSDP2"), ("tp", "tensor parallel"))
                if (ranks := torch_launch.section(name))}  # empty where nothing was launched
if not torch_launch.skipped:  # else the launch said why in one sentence
    print(torch_launch.command_line, f"({torch_launch.seconds:.1f} s)")

# %% [markdown]
# The launch's time includes starting two Python processes that import torch. Now every
# layout against its one-device run, to a relative 10⁻⁵ at every step. The two frameworks'
# one-device runs are compared at their first step only: after it, training amplifies their
# float32 rounding, lesson 11's subject.

# %%
assert_close(losses_one_torch[0], losses_one_jax[0], rtol=1e-5, atol=1e-6, name="first step: PyTorch vs JAX")
scale_table = {**{f"JAX {name}": (got, losses_one_jax) for name, got in losses_jax.items()},
               **{f"PyTorch {name}": (got, losses_one_torch) for name, got in losses_torch.items()}}
for name, (got, ref) in scale_table.items():
    assert_close(got, ref, rtol=1e-5, atol=1e-5, name=name)
    print(f"{name:34s} max |loss - one device| over {len(ref)} steps: {np.max(np.abs(np.subtract(got, ref))):.1e}")


# %% [markdown]
# Every layout that ran passed. What is left is float32 rounding: a sum split over devices is
# added in another order. In JAX a sharding changes where a step runs and the order of its
# sums, never the maths it computes. A reduction written by hand can still slip past a loss
# curve: gradients summed over the ranks instead of averaged. AdamW divides each gradient by
# its own running size, so the update barely changes. Exercise 1 compares data-parallel
# gradients directly, which catches it.
#
# Nothing above names the hardware. For PyTorch only the launch changes: `--nproc-per-node 8`
# on a host with eight GPUs, `--nnodes` for many hosts. In JAX one
# process drives all the devices of its host; lesson 05 showed the launch on many hosts.
#
# ## 6. Checkpointed
#
# **Key concepts**
# - A checkpoint that resumes a run holds the parameters, the optimizer's state and the
#   position in the data.
# - JAX: Orbax's `ocp.v1.save` and `ocp.v1.load` into an abstract target of shapes, dtypes
#   and shardings.
# - PyTorch: `torch.distributed.checkpoint` with `get_state_dict` and `set_state_dict`.
# - The proof is bit for bit: the resumed run's losses and parameters equal the uninterrupted
#   run's exactly.
#
# Orbax writes any pytree. Its restore fills a target whose leaves are `jax.ShapeDtypeStruct`s
# that carry a sharding, so a checkpoint of the tensor-parallel state comes back onto the same
# eight devices. Replica-parallel saving is off here: on simulated devices it would compile a
# small program per array shape.

# %%
# JAX
def orbax_save(path, tree):
    context = ocp.v1.Context()
    context.array.saving.use_replica_parallel = False
    with context:
        ocp.v1.save(Path(path), tree)


def abstract_like(tree):  # shapes, dtypes and shardings; no numbers
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), tree)


def orbax_load(path, abstract):
    return ocp.v1.load(Path(path), abstract)


# %% [markdown]
# The run: `k` steps of the tensor-parallel step, a save, `m` more steps. Then a restore, and
# the same `m` steps again from the checkpoint. The step is reused as it is, so the resume
# compiles nothing new.

# %%
# JAX: k steps, save, m more (the uninterrupted run); then restore and redo the m steps
k_ckpt = S.scale_steps // 2
step_tp, (p_sh, o_sh) = steps_jax["tensor parallel, 2 x 4"]
params_k, opt_k, _ = gpt.train.jax_run(step_tp, jax.device_put(params0, p_sh), jax.device_put(tx.init(params0), o_sh),
                                       scale_batches[:k_ckpt])
state_k = {"params": params_k, "opt_state": opt_k, "step": jnp.asarray(k_ckpt)}
orbax_save(run_dir / "orbax", state_k)
params_end_jax, _, after_jax = gpt.train.jax_run(step_tp, params_k, opt_k, scale_batches[k_ckpt:])

back = orbax_load(run_dir / "orbax", abstract_like(state_k))
resumed_params_jax, _, resumed_jax = gpt.train.jax_run(step_tp, back["params"], back["opt_state"],
                                                       scale_batches[int(back["step"]):])
print("qkv kernel restored onto", back["params"]["blocks"]["attn"]["qkv"]["kernel"][...].sharding.spec)


# %% [markdown]
# The printed spec shows a tensor-parallel kernel coming back split as it was saved. In a real
# restart the live state does not exist. The target is then built with `nnx.eval_shape` and
# `state_shardings`, neither of which allocates an array.
#
# PyTorch's DCP saves the model's and the optimizer's state dicts from `get_state_dict`, the
# form every parallelism understands, and the step beside them. Loading fills the objects it is
# given, in place. `one_process` silences DCP's note that it runs in one process.

# %%
# PyTorch
def dcp_save(path, model, optimizer, step=0):
    with one_process():
        msd, osd = get_state_dict(model, optimizer)
        state = {"model": msd, "optim": osd, "step": torch.tensor(step)}
        dcp.save(state, checkpoint_id=Path(path), no_dist=True)


def dcp_load(path, model, optimizer):
    with one_process():
        msd, osd = get_state_dict(model, optimizer)
        state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
        dcp.load(state, checkpoint_id=Path(path), no_dist=True)
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["step"])


# %%
# PyTorch: the same k + m steps; the resumed run starts from other weights and a fresh AdamW
def torch_fresh(seed):
    torch.manual_seed(seed)
    model = gpt.model.TorchGPT(cfg).to(torch_dev)
    return model, gpt.train.torch_adamw(model)


model_k_torch, opt_k_torch = torch_fresh(1)
model_k_torch.load_state_dict(scale_torch_init)
gpt.train.torch_run(model_k_torch, opt_k_torch, zip(scale_x[:k_ckpt], scale_y[:k_ckpt], strict=True))
dcp_save(run_dir / "dcp", model_k_torch, opt_k_torch, step=k_ckpt)
after_torch = gpt.train.torch_run(model_k_torch, opt_k_torch, zip(scale_x[k_ckpt:], scale_y[k_ckpt:], strict=True))

model_r_torch, opt_r_torch = torch_fresh(2)  # other weights, empty optimizer state
next_torch = dcp_load(run_dir / "dcp", model_r_torch, opt_r_torch)
resumed_torch = gpt.train.torch_run(model_r_torch, opt_r_torch, zip(scale_x[next_torch:], scale_y[next_torch:], strict=True))

# %%
assert_close(resumed_jax, after_jax, rtol=0, atol=0, name="Orbax: resumed vs uninterrupted losses")
assert_close(resumed_params_jax, params_end_jax, rtol=0, atol=0, name="Orbax: parameters")
assert_close(resumed_torch, after_torch, rtol=0, atol=0, name="DCP: resumed vs uninterrupted losses")
assert_close(dict(model_r_torch.named_parameters()), dict(model_k_torch.named_parameters()), rtol=0, atol=0,
             name="DCP: parameters")
print(f"resumed after step {k_ckpt}, {len(after_jax)} more steps, bit for bit: JAX {np.round(after_jax, 5)}, "
      f"PyTorch {np.round(after_torch, 5)}")


# %% [markdown]
# Bit for bit is possible because each step is deterministic here, the same program on the same
# inputs, and because nothing the step reads was left out. Leave the optimizer state out, and
# the first resumed loss still matches while the parameters after it do not. Restart the
# batches from zero, and the first loss already differs. Exercise 2 has you write the restore
# in both frameworks, and its checks catch each of these mistakes.
#
# DCP's reason to exist is the sharded case. Under FSDP2 each rank writes only the shards it
# holds. A later `dcp.load` on another number of ranks reads only the pieces each rank needs.
# Orbax does the same from the shardings of its abstract target.
#
# ## 7. Exported
#
# **Key concepts**
# - `jax.export` serialises the lowered forward pass, StableHLO, with the parameters as an
#   input.
# - `torch.export` captures an ATen graph with the weights inside it.
# - Each reloaded program gives its live model's logits exactly, and so draws the same text.
#
# A checkpoint needs the model's Python code to be of any use; an exported program does not.
# Both exports below take the models trained in section 5's one-device runs, with a symbolic
# batch size and sequence length. JAX's export is of a function `logits_fn(params, tokens)`,
# so one exported program serves any weights of this shape.
# An export runs only on the platforms it was lowered for, so `jax_export` names the lesson's platform.

# %%
# JAX
def jax_export(logits, params, token_dtype=None, platform=None):
    b, t = jax.export.symbolic_shape("b, t")  # both dimensions symbolic
    specs = (jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), params),
             jax.ShapeDtypeStruct((b, t), token_dtype or jnp.int32))
    platforms = [platform] if platform else None  # None: the default backend
    return jax.export.export(jax.jit(logits), platforms=platforms)(*specs).serialize()


def jax_load(blob):
    return jax.export.deserialize(bytearray(blob))


# compat.eval_view: nnx.view(module, deterministic=True) on flax 0.12.4+, the model in evaluation mode
trained_jax = compat.eval_view(nnx.merge(graphdef_scale, jax.device_put(params_one_jax, jax_dev), rest_scale))
graphdef_trained, params_trained, rest_trained = nnx.split(trained_jax, nnx.Param, ...)
params_trained, rest_trained = nnx.to_pure_dict(params_trained), nnx.to_pure_dict(rest_trained)


def logits_fn(params, tokens):
    return nnx.merge(graphdef_trained, params, rest_trained)(tokens)


blob_jax = jax_export(logits_fn, params_trained, platform=jax_dev.platform)
exported_jax = jax_load(blob_jax)
print(f"jax.export: {len(blob_jax):,} bytes; token input {exported_jax.in_avals[-1]}")


# %%
# PyTorch
def torch_export(model, tokens, max_len):
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=max_len)
    model.eval()
    with torch.no_grad():
        program = torch.export.export(model, (tokens,), dynamic_shapes=({0: batch, 1: seq},))
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()


def torch_load(blob):
    return torch.export.load(io.BytesIO(blob)).module()


trained_torch = scale_torch  # trained in place by section 5's one-process run
blob_torch = torch_export(trained_torch, torch.zeros((2, 8), dtype=torch.long, device=torch_dev), S.block_size)
exported_torch = torch_load(blob_torch)
print(f"torch.export: {len(blob_torch):,} bytes")


# %% [markdown]
# The `jax.export` bytes wrap a StableHLO module, a versioned compiler input. Another Python
# process calls it with `jax.export.deserialize(blob).call(...)`, and runtimes without Python
# compile the module itself. The `torch.export` archive holds an ATen graph and its weights,
# which is in part why it is larger; AOTInductor or ExecuTorch compile it ahead of time. Neither
# holds the optimizer, so neither replaces a checkpoint for training.
#
# Now each reloaded program faces its live model. The logits on a validation window must be
# equal exactly, and text drawn through each with the same seed must be the same.
# `gpt.sample.generate_fn` is lesson 11's sampler for any `tokens -> logits` function, on a
# window of `block_size` tokens.

# %%
def torch_logits(module):  # tokens (NumPy) -> logits (CPU tensor)
    return lambda t: module(torch.as_tensor(t, dtype=torch.long, device=torch_dev)).detach().cpu()


live_jax = jax.jit(logits_fn)
logit_fns = {"JAX": (lambda t: live_jax(params_trained, jnp.asarray(t, jnp.int32)),
                     lambda t: exported_jax.call(params_trained, jnp.asarray(t, jnp.int32))),
             "PyTorch": (torch_logits(trained_torch), torch_logits(exported_torch))}
x_val = gpt.data.windows(val_ids, np.arange(1), S.block_size)[0]  # (1, block_size)
prompt_keep = tokenizer.encode("The ")[None, :]
with torch.no_grad():
    for name, (live, exported) in logit_fns.items():
        assert_close(exported(x_val), live(x_val), rtol=0, atol=0, name=f"{name}: exported vs live logits")
        texts = [gpt.sample.generate_fn(f, prompt_keep, S.export_chars, S.block_size, temperature=temperature, seed=7)
                 for f in (live, exported)]
        assert np.array_equal(*texts), name
        print(f"{name}, reloaded export: {tokenizer.decode(texts[1][0])!r}")

# %% [markdown]
# Both checks passed. These models trained only a few steps, so the text is close to noise;
# equality is the point.
#
# ## 8. Ported
#
# **Key concepts**
# - Lesson 11's converter works on trained weights as on initial ones, in both directions.
# - The same weights, temperature and seed pick the same token at every position in both
#   frameworks, except draws within float32 rounding of a CDF edge: near-ties.
# - Teacher forcing compares the two position by position.
#
# The last stage a real project meets: a model trained in one framework, served or fine-tuned
# in the other. Each trained model moves across.

# %%
ported_jax = gpt.convert.gpt_torch_to_nnx(trained_torch, gpt.model.NNXGPT(cfg, rngs=nnx.Rngs(3)))  # PyTorch -> JAX
ported_torch = gpt.convert.gpt_nnx_to_torch(trained_jax, gpt.model.TorchGPT(cfg).to(torch_dev))  # JAX -> PyTorch
forward = nnx.jit(lambda model, tokens: model(tokens))
with torch.no_grad():
    port_gap = np.abs(np.asarray(forward(ported_jax, x_val)) - torch_logits(trained_torch)(x_val).numpy()).max()
assert port_gap < 1e-4
print(f"largest logit gap after the port: {port_gap:.1e}")


# %% [markdown]
# How should two samples from the same weights be compared? The cumulative probabilities are a
# staircase from 0 to 1, one step per character, and the random number picks the step it falls
# on. The two frameworks' logits differ by float32 rounding, and so do the edges of their
# steps. A number that lands that close to an edge, a *near-tie*, may pick neighbouring tokens
# in the two frameworks. After it the texts continue from different prefixes.
#
# Teacher forcing compares position by position instead. At each drawn position it feeds the
# ported model the original sample's own prefix and picks with the same random number.
# `pick_with_margin` returns that pick and its *margin*: how far the random number lay from the
# nearest edge of the picked token's CDF interval.

# %%
def teacher_forced(logits, sample, prompt_len, max_len, *, temperature=1.0, seed=0):
    sample = np.asarray(sample).astype(np.int32)
    B, steps = sample.shape[0], sample.shape[1] - prompt_len
    check_lengths(prompt_len, steps)
    u = uniforms(steps, B, seed)  # the numbers the sample was drawn with
    picks, margins = np.zeros((B, steps), np.int32), np.zeros((B, steps), np.float32)
    for s in range(steps):  # the sample's own prefix before each drawn token
        window, last = right_padded(sample[:, : prompt_len + s], max_len)
        out = np.asarray(logits(window))[:, last]  # (B, V)
        picks[:, s], margins[:, s] = pick_with_margin(out, temperature, u[s])
    return picks, margins


# %% [markdown]
# A mismatch is allowed only where the margin is tiny:

# %%
NEAR_TIE = 1e-4  # a draw this close to a CDF edge may flip on float32 rounding
samples = {"PyTorch -> JAX": gpt.sample.torch_generate(trained_torch, prompt, S.export_chars, temperature=temperature),
           "JAX -> PyTorch": gpt.sample.nnx_generate(trained_jax, prompt, S.export_chars, temperature=temperature)}
# compat.eval_view, as in section 7: the ported model in evaluation mode
ported_fns = {"PyTorch -> JAX": lambda t: forward(compat.eval_view(ported_jax), jnp.asarray(t)),
              "JAX -> PyTorch": torch_logits(ported_torch.eval())}
with torch.no_grad():
    for direction, sample in samples.items():
        picks, margins = teacher_forced(ported_fns[direction], sample, prompt.shape[1], S.block_size,
                                        temperature=temperature, seed=0)
        same, near = picks == sample[:, prompt.shape[1]:], margins < NEAR_TIE
        assert near[~same].all(), f"{direction}: a mismatch that is no near-tie, margins {margins[~same]}"
        print(f"{direction}: the ported model picks the original's token at {same.sum()} of {same.size} drawn "
              f"positions; near-ties, margin < {NEAR_TIE:g}: {near.sum()}")

# %% [markdown]
# A near-tie need not flip: the second count includes draws that still agreed. The check
# asserted that every mismatch is one of those near-ties.

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX |
# |---|---|---|
# | compile the step | `torch.compile(one_step)`: a few graphs | `jax.jit(step, donate_argnums=(0, 1))`: one program |
# | repeated layers | regional compilation, `block.compile()` | `nnx.scan` over stacked layers |
# | mixed precision | `torch.autocast(..., dtype=torch.bfloat16)` | `NNXGPT(cfg, dtype=jnp.bfloat16)` |
# | fused attention | `F.scaled_dot_product_attention(q, k, v, is_causal=True)` | `jax.nn.dot_product_attention` on `(B, T, H, hd)` |
# | decode loop | a Python loop, the cache written in place | `jax.lax.fori_loop` in one `jax.jit` |
# | data parallel, FSDP | DDP; FSDP2 `fully_shard`, one process per rank | a `NamedSharding` per array, `jax.jit(in_shardings=...)` |
# | tensor parallel | DTensor `parallelize_module`, Colwise/Rowwise | specs over a `"model"` axis |
# | launch | `torchrun`; many hosts: `--nnodes` | one process per host; `jax.distributed.initialize()` |
# | checkpoint | DCP, `get_state_dict`/`set_state_dict` | Orbax `ocp.v1.save`/`ocp.v1.load` into an abstract target |
# | export | `torch.export`, weights inside | `jax.export`, parameters as an input |
# | port | the converter, `load_state_dict` | the converter, `nnx.update` |
#
# **Common misconceptions** (each taken up by a section above)
# - *"`torch.compile(model)` compiles the training step."* It compiles the forward pass and its
#   backward; the optimizer's update stays eager unless the step around it is compiled, as
#   section 2 does. `jax.jit` of the step compiles all of it.
# - *"bfloat16 is always faster."* On a CPU without bfloat16 matrix units it may not be (2).
# - *"Fused attention is faster everywhere."* Its kernels are written above all for GPUs, and
#   JAX's call lowers to plain XLA operations unless it is asked for cuDNN (3).
# - *"A KV cache always makes sampling faster."* On a tiny model the fixed costs can weigh as
#   much as the work it saves (4).
# - *"Sharding changes the model's code."* In JAX only the shardings given to `jax.jit` change;
#   the step is the same Python object for every layout (5).
# - *"Porting needs the source framework at inference time."* PyTorch is needed only to read the
#   weights once (8).
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("12_gpt_at_scale")

# %% [markdown]
# **Next:** the exercises in `exercises/12_gpt_at_scale_exercises.ipynb`: a data-parallel loss
# with `jax.jit` shardings and the gradients PyTorch's ranks average, then a resume from a
# checkpoint, bit for bit, with Orbax and DCP.
