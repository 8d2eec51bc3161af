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
# # 07 · Migration: porting models between PyTorch and JAX
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/07_migration.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/07_migration.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/07_migration.ipynb)
#
# A port is done when the new model computes the same function as the old one, and you
# can prove it. This lesson ports lesson 04's CNN from PyTorch to Flax NNX and a small
# transformer block from Flax NNX to PyTorch, then collects the differences that make two
# "identical" models silently disagree.
#
# **Learning objectives.** After this notebook you can
# 1. convert weights in both directions, knowing each layout (Linear transpose, OIHW↔HWIO,
#    NCHW↔NHWC, packed attention projections), and prove outputs and gradients equal;
# 2. recognise, demonstrate and fix the silent differences between the frameworks' defaults
#    (padding, initialisers, normalisation constants, dropout, matmul precision, dtype
#    promotion, loss conventions);
# 3. run a port step by step (rewrite, eager, `jit`, distribution) and run the MVP checklist
#    (benchmark, operator coverage, dynamic shapes, ecosystem) on a pair of models.

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
    "batch": (64, 16),  # images / sequences per batch in the parity checks
    "seq": (32, 12),  # tokens per sequence for the transformer block
    "d_model": (64, 32),  # width of the transformer block
    "bench_s": (1.0, 0.2),  # seconds per timed comparison
    "dropout_draws": (2000, 200),  # masks drawn to compare dropout statistics
    "n_lengths": (4, 2),  # new sequence lengths fed to the MVP checklist
}

# %%
from course_utils import env

# First: two simulated CPU devices (the distribution step), JAX's GPU memory policy,
# JAX before PyTorch, full float32 in both.
SETUP = env.setup(cpu_devices=2)

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils import checklist, config, convert, data, models
from course_utils.parity import assert_close, max_abs_diff

S = config.sizes(SIZES, SMOKE)
print(env.report().line())

# %% [markdown]
# ## 1. Layouts: where the same weights live
#
# **Key concepts**
# - `nn.Linear.weight` is `(out, in)` and computes `x @ W.T`; `nnx.Linear.kernel` is `(in, out)`
#   and computes `x @ K`. Converting is a transpose.
# - A PyTorch conv weight is OIHW `(out, in, h, w)` and activations are NCHW; a Flax conv
#   kernel is HWIO `(h, w, in, out)` and activations are NHWC.
# - Flattening a feature map walks channel-row-column in NCHW but row-column-channel in NHWC,
#   so the first Linear layer after a flatten needs its input rows permuted too.
#
# Lesson 04's CNN exists in both frameworks (`course_utils.models`). Here are its parameter
# shapes side by side.

# %%
torch.manual_seed(0)
torch_cnn = models.TorchCNN()  # PyTorch, NCHW
nnx_cnn = models.NNXCNN(rngs=nnx.Rngs(0))  # Flax NNX, NHWC
nnx_shapes = {
    f"{layer}.{name}": tuple(getattr(getattr(nnx_cnn, layer), name).shape)
    for layer in convert.CNN_LAYERS for name in ("kernel", "bias")
}
for (tname, p), (jname, shape) in zip(torch_cnn.named_parameters(), nnx_shapes.items(), strict=True):
    print(f"{tname:12} {str(tuple(p.shape)):16} | {jname:12} {shape}")


# %% [markdown]
# ### 1.1 The sharp bit: a port that forgets the flatten order
#
# The natural first attempt transposes the Linear weights and permutes the conv weights,
# and nothing else. Every shape fits, so nothing complains until the outputs are compared.

# %% tags=["raises-exception"]
def naive_port(src, dst):
    for layer in ("conv1", "conv2"):
        getattr(dst, layer).kernel[...] = jnp.asarray(
            getattr(src, layer).weight.detach().numpy().transpose(2, 3, 1, 0))  # OIHW -> HWIO
        getattr(dst, layer).bias[...] = jnp.asarray(getattr(src, layer).bias.detach().numpy())
    for layer in ("fc1", "fc2"):
        getattr(dst, layer).kernel[...] = jnp.asarray(getattr(src, layer).weight.detach().numpy().T)
        getattr(dst, layer).bias[...] = jnp.asarray(getattr(src, layer).bias.detach().numpy())

# nnx.jit compiles a whole call at once; without it JAX would run (and compile) one small
# program per operation. Section 5 checks plain eager mode as a separate step.
forward = nnx.jit(lambda model, x: model(x))
digits = data.load_digits(limit=4 * S.batch)
X = digits.X_train[: S.batch]  # (batch, 1, 8, 8), NCHW
naive_port(torch_cnn, nnx_cnn)
with torch.no_grad():
    logits_torch = torch_cnn(torch.from_numpy(X))
assert_close(forward(nnx_cnn, jnp.asarray(data.nchw_to_nhwc(X))), logits_torch, rtol=1e-5, atol=1e-5, name="logits")

# %% [markdown]
# The conv layers were right; `fc1` reads a flattened `(C, H, W)` map in PyTorch and a
# flattened `(H, W, C)` map in JAX, so its input rows must be reordered.
# `convert.torch_cnn_to_nnx` does the reshape-permute-reshape:
# `weight.reshape(out, C, H, W).transpose(2, 3, 1, 0).reshape(H*W*C, out)`.

# %% [markdown]
# ## 2. PyTorch → JAX: lesson 04's CNN
#
# **Key concepts**
# - Convert the weights, convert the input layout (NCHW → NHWC), and compare logits.
# - Gradients have the layout of their parameters, so the same converter maps them.
# - Compare with a tolerance that float32 reordering explains (about 1e-5 relative).

# %%
# PyTorch: logits and gradients of the mean cross-entropy on one batch
y = digits.y_train[: S.batch]
torch_cnn.zero_grad()
loss_torch = torch.nn.functional.cross_entropy(torch_cnn(torch.from_numpy(X)), torch.from_numpy(y))
loss_torch.backward()
grads_torch = {name: p.grad for name, p in torch_cnn.named_parameters()}
loss_torch

# %%
# JAX: the same model after converting the weights
convert.torch_cnn_to_nnx(torch_cnn, nnx_cnn)
X_nhwc = jnp.asarray(data.nchw_to_nhwc(X))  # (batch, 8, 8, 1)

def loss_fn(model, X, y):
    logits = model(X)
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1).mean()

loss_jax, grads_jax = nnx.jit(nnx.value_and_grad(loss_fn))(nnx_cnn, X_nhwc, jnp.asarray(y))
loss_jax

# %%
# Parity: logits, loss and every gradient, in PyTorch's layout
assert_close(forward(nnx_cnn, X_nhwc), torch_cnn(torch.from_numpy(X)), rtol=1e-5, atol=1e-5, name="logits")
assert_close(loss_jax, loss_torch, rtol=1e-5, atol=1e-6, name="loss")
grads_jax_as_torch = convert.nnx_grads_to_torch(nnx_cnn, grads_jax, torch_cnn)
assert_close(grads_jax_as_torch, grads_torch, rtol=1e-4, atol=1e-6, name="grad")
print("CNN: logits, loss and", len(grads_torch), "gradients agree")

# %% [markdown]
# ## 3. JAX → PyTorch: a transformer block
#
# **Key concepts**
# - A pre-LayerNorm block: `x + Dropout(Attention(LN(x)))`, then `x + Dropout(MLP(LN(x)))`.
# - PyTorch packs the query, key and value projections into one `in_proj_weight` of shape
#   `(3·d_model, d_model)`; Flax keeps three kernels of shape `(d_model, heads, head_dim)` and
#   an output kernel `(heads, head_dim, d_model)`. Both mean "split the features into heads".
# - This time the NNX model comes first (its own initialisation) and PyTorch receives the weights.
#
# The block lives in `course_utils.models.transformer` (`NNXBlock`, `TorchBlock`), its converters
# both ways in `course_utils.convert.transformer`.

# %%
cfg = models.BlockConfig(d_model=S.d_model, n_heads=4, d_ff=2 * S.d_model, dropout=0.1)
nnx_block = models.NNXBlock(cfg, rngs=nnx.Rngs(0))
attn = nnx.state(nnx_block.attn, nnx.Param)
print("NNX:", {k: tuple(v["kernel"].shape) for k, v in attn.items()})
torch_block = models.TorchBlock(cfg)
print("PyTorch: in_proj_weight", tuple(torch_block.attn.in_proj_weight.shape),
      "out_proj.weight", tuple(torch_block.attn.out_proj.weight.shape))

# %% [markdown]
# The converter splits PyTorch's packed matrix into thirds and reshapes each. For the
# query: `W_q.T.reshape(d_model, heads, head_dim)`, and back: `K_q.reshape(d_model, d_model).T`.

# %%
convert.block_nnx_to_torch(nnx_block, torch_block)
nnx_block.eval()  # dropout off in both: parity first, randomness later (section 4.4)
torch_block.eval()
Xs_np = np.random.default_rng(0).standard_normal((S.batch, S.seq, S.d_model)).astype(np.float32)

# JAX
out_jax = forward(nnx_block, jnp.asarray(Xs_np))  # (batch, seq, d_model)
grads_block_jax = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).mean()))(nnx_block, jnp.asarray(Xs_np))

# %%
# PyTorch
Xs = torch.from_numpy(Xs_np)
out_torch = torch_block(Xs)  # (batch, seq, d_model)
(out_torch**2).mean().backward()
grads_block_torch = {name: p.grad for name, p in torch_block.named_parameters()}

# %%
# Parity: outputs and all gradients
assert_close(out_torch, out_jax, rtol=1e-5, atol=1e-5, name="block output")
assert_close(convert.nnx_grads_to_torch(nnx_block, grads_block_jax, torch_block),
             grads_block_torch, rtol=1e-4, atol=1e-6, name="block grad")
print(f"block: output (max |diff| {max_abs_diff(out_torch, out_jax):.1e}) and "
      f"{len(grads_block_torch)} gradients agree")

# %% [markdown]
# A converter pair should be an exact round trip: NNX → PyTorch → NNX returns every weight
# bit for bit, because only transposes and reshapes happen.

# %%
round_trip = convert.block_torch_to_nnx(torch_block, models.NNXBlock(cfg, rngs=nnx.Rngs(1)))
assert_close(nnx.state(round_trip, nnx.Param), nnx.state(nnx_block, nnx.Param), rtol=0, atol=0,
             name="round trip")
print("round trip exact")

# %% [markdown]
# ## 4. A catalogue of silent differences
#
# **Key concepts**
# - Each framework has defaults; a port that does not copy them computes a different model.
# - None of these raise an error. They show up as a slightly worse accuracy, a different loss
#   curve, or a result that changes with the hardware.
# - Pattern for each: demonstrate the difference, then fix it.
#
# ### 4.1 Padding defaults
#
# `nn.Conv2d` pads 0 (`'VALID'`); `nnx.Conv` pads `'SAME'`. The CNN in source article 000 is
# written both ways with each default, so its two versions are different models: on 28x28
# inputs, its `fc1` would need 9,216 inputs in PyTorch and 12,544 in Flax.

# %%
img = np.random.default_rng(1).standard_normal((1, 1, 28, 28)).astype(np.float32)
conv_torch = torch.nn.Conv2d(1, 32, 3)  # PyTorch default: padding=0
conv_jax = nnx.Conv(1, 32, (3, 3), rngs=nnx.Rngs(0))  # Flax default: padding='SAME'
print("PyTorch:", tuple(conv_torch(torch.from_numpy(img)).shape), "(N, C, H, W)")
print("Flax:   ", conv_jax(jnp.asarray(data.nchw_to_nhwc(img))).shape, "(N, H, W, C)")

# %% [markdown]
# The fix is `padding='VALID'`. A subtler case: with stride 2, `'SAME'` pads
# **asymmetrically** (nothing before, one pixel after, for a 3x3 kernel on an even input),
# while PyTorch's `padding=1` pads one pixel on each side. The shapes match; the values do not.

# %%
w = torch.randn(8, 1, 3, 3)
down_torch = torch.nn.functional.conv2d(torch.from_numpy(img), w, stride=2, padding=1)
kernel = jnp.asarray(w.numpy().transpose(2, 3, 1, 0))  # OIHW -> HWIO
same = jax.lax.conv_general_dilated(jnp.asarray(data.nchw_to_nhwc(img)), kernel, (2, 2), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
explicit = jax.lax.conv_general_dilated(jnp.asarray(data.nchw_to_nhwc(img)), kernel, (2, 2),
                                        ((1, 1), (1, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC"))
down_torch_nhwc = data.nchw_to_nhwc(down_torch.numpy())
print("same shape:", same.shape == down_torch_nhwc.shape,
      f"| 'SAME' max |diff| {max_abs_diff(same, down_torch_nhwc):.2f}"
      f" | explicit ((1,1),(1,1)) max |diff| {max_abs_diff(explicit, down_torch_nhwc):.1e}")
assert_close(explicit, down_torch_nhwc, rtol=1e-5, atol=1e-5, name="strided conv")

# %% [markdown]
# ### 4.2 Initialiser defaults
#
# `nn.Linear` draws weights and biases from U(−1/√fan_in, 1/√fan_in) (its `kaiming_uniform`
# with a=√5); `nnx.Linear` draws a truncated normal with standard deviation 1/√fan_in
# (LeCun normal) and sets biases to zero. So the same architecture starts √3 times larger
# in Flax, with no bias.

# %%
fan_in = 512
lin_torch = torch.nn.Linear(fan_in, 256)
lin_jax = nnx.Linear(fan_in, 256, rngs=nnx.Rngs(0))
print(f"weight std: PyTorch {lin_torch.weight.std().item():.4f}, Flax {float(lin_jax.kernel[...].std()):.4f} "
      f"(1/sqrt(3·fan_in) = {1 / np.sqrt(3 * fan_in):.4f}, 1/sqrt(fan_in) = {1 / np.sqrt(fan_in):.4f})")
print(f"bias |max|: PyTorch {lin_torch.bias.abs().max().item():.4f}, Flax {float(jnp.abs(lin_jax.bias[...]).max()):.4f}")

# %% [markdown]
# Fix: copy the weights (what every converter above does), or ask Flax for PyTorch's
# distribution: a uniform variance-scaling initialiser with scale 1/3 has bound
# √(3 · (1/3) / fan_in) = 1/√fan_in.

# %%
torch_like = nnx.initializers.variance_scaling(1 / 3, "fan_in", "uniform")  # U(±1/sqrt(fan_in))

def torch_like_bias(key, shape, dtype=jnp.float32):
    bound = 1 / np.sqrt(fan_in)  # PyTorch uses the layer's fan_in for the bias too
    return jax.random.uniform(key, shape, dtype, -bound, bound)

lin_jax_fixed = nnx.Linear(fan_in, 256, kernel_init=torch_like, bias_init=torch_like_bias, rngs=nnx.Rngs(0))
k, b = lin_jax_fixed.kernel[...], lin_jax_fixed.bias[...]
print(f"Flax, PyTorch-like init: weight std {float(k.std()):.4f}, bias |max| {float(jnp.abs(b).max()):.4f}")
assert abs(float(k.std()) - lin_torch.weight.std().item()) < 0.1 * lin_torch.weight.std().item()
assert float(jnp.abs(b).max()) <= 1 / np.sqrt(fan_in) and float(jnp.abs(b).max()) > 0.5 / np.sqrt(fan_in)

# %% [markdown]
# ### 4.3 Normalisation: epsilon and momentum
#
# `nn.LayerNorm` adds `eps=1e-5` to the variance; `nnx.LayerNorm` adds `epsilon=1e-6`. On
# activations with a small variance (early layers, or inputs scaled down) that changes the output.

# %%
small = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float32) * 3e-3  # variance ~1e-5
ln_torch = torch.nn.LayerNorm(64)
ln_jax = nnx.LayerNorm(64, rngs=nnx.Rngs(0))
ln_jax_fixed = nnx.LayerNorm(64, epsilon=1e-5, rngs=nnx.Rngs(0))
out_ln = ln_torch(torch.from_numpy(small))
print(f"default epsilon: max |diff| {max_abs_diff(ln_jax(jnp.asarray(small)), out_ln):.3f}")
assert_close(ln_jax_fixed(jnp.asarray(small)), out_ln, rtol=1e-4, atol=1e-4, name="LayerNorm, epsilon=1e-5")
print("epsilon=1e-5: equal")

# %% [markdown]
# BatchNorm's running statistics hide two conventions. PyTorch's `momentum=0.1` is the
# weight of the **new** batch; Flax's `momentum=0.99` is the weight of the **old** average.
# Porting the number as written (`momentum=0.1` in Flax) makes the running mean jump almost
# all the way to the batch mean in one step.

# %%
xb = np.random.default_rng(3).standard_normal((8, 3)).astype(np.float32) * 2 + 1
bn_torch = torch.nn.BatchNorm1d(3)  # momentum=0.1: new = 0.9 * old + 0.1 * batch
bn_torch(torch.from_numpy(xb))
bn_naive = nnx.BatchNorm(3, momentum=0.1, rngs=nnx.Rngs(0))  # new = 0.1 * old + 0.9 * batch
bn_naive(jnp.asarray(xb))
bn_jax = nnx.BatchNorm(3, momentum=0.9, rngs=nnx.Rngs(0))  # the fix: 1 - 0.1
bn_jax(jnp.asarray(xb))
print("running mean, PyTorch:", bn_torch.running_mean.numpy().round(4))
print("Flax momentum=0.1:    ", np.asarray(bn_naive.mean[...]).round(4))
print("Flax momentum=0.9:    ", np.asarray(bn_jax.mean[...]).round(4))
assert_close(bn_jax.mean[...], bn_torch.running_mean, rtol=1e-5, atol=1e-6, name="running mean")

# %% [markdown]
# With the momentum fixed the running **variance** still differs: PyTorch stores the
# unbiased batch variance (divides by n − 1), Flax the biased one (divides by n). Neither
# is configurable; the difference shrinks as the batch grows (a factor n/(n − 1) on the
# batch's contribution). When porting a trained model, copy the running statistics.

# %%
n = len(xb)
print("running var, PyTorch:", bn_torch.running_var.numpy().round(4),
      "= 0.9 + 0.1 * var(ddof=1):", (0.9 + 0.1 * xb.var(0, ddof=1)).round(4))
print("running var, Flax:   ", np.asarray(bn_jax.var[...]).round(4),
      "= 0.9 + 0.1 * var(ddof=0):", (0.9 + 0.1 * xb.var(0)).round(4))
assert_close(bn_jax.var[...], 0.9 + 0.1 * xb.var(0), rtol=1e-5, atol=1e-6, name="Flax running var")

# %% [markdown]
# ### 4.4 Dropout randomness
#
# Same probability, same "inverted" scaling by 1/(1 − p), but different random number
# generators: `torch.manual_seed(0)` and `nnx.Rngs(0)` draw different masks. In training
# mode the two blocks of section 3 give different outputs, and no seed makes them agree.

# %%
nnx_block.train()
torch_block.train()
torch.manual_seed(0)
out_torch_train = torch_block(Xs).detach()
out_jax_train = forward(nnx_block, jnp.asarray(Xs_np))
print(f"train mode: max |diff| {max_abs_diff(out_torch_train, out_jax_train):.2f}")

# %% [markdown]
# Fix: prove parity with dropout off (`.eval()` in both, as in section 3), and check the
# dropout itself by its statistics: over many draws both keep a fraction 1 − p of the units
# and scale them so the expected value is unchanged.

# %%
p = 0.1
ones = np.ones((S.dropout_draws, 256), np.float32)
torch.manual_seed(0)
kept_torch = torch.nn.functional.dropout(torch.from_numpy(ones), p, training=True)
kept_jax = nnx.Dropout(p, rngs=nnx.Rngs(dropout=0))(jnp.asarray(ones))
for name, kept in (("PyTorch", kept_torch.numpy()), ("Flax", np.asarray(kept_jax))):
    print(f"{name}: kept {np.mean(kept > 0):.4f} (expect {1 - p}), mean {kept.mean():.4f} (expect 1), "
          f"scale {kept.max():.4f} (expect {1 / (1 - p):.4f})")
assert abs(kept_torch.mean().item() - float(kept_jax.mean())) < 0.01

# %% [markdown]
# One default differs on top of the generators: Flax's attention drops attention weights with
# `broadcast_dropout=True`, one mask shared by every example in the batch and every head;
# PyTorch draws a mask per element. `NNXBlock` sets `broadcast_dropout=False`. With identical
# inputs in a batch, the shared mask shows as identical outputs:

# %%
v_one = np.random.default_rng(4).standard_normal((1, 6, 2, 8)).astype(np.float32)
q = jnp.ones((4, 6, 2, 8))  # (batch, seq, heads, head_dim)
v = jnp.asarray(np.repeat(v_one, 4, axis=0))  # four identical examples

@jax.jit
def attention_both_ways(q, v, key):
    return [nnx.dot_product_attention(q, q, v, dropout_rng=key, dropout_rate=0.5, broadcast_dropout=b)
            for b in (True, False)]

for broadcast, att in zip((True, False), attention_both_ways(q, v, jax.random.key(0)), strict=True):
    print(f"broadcast_dropout={broadcast}: all examples got the same mask: {bool(jnp.all(att == att[:1]))}")

# %% [markdown]
# ### 4.5 Matmul precision on accelerators
#
# On a CPU both frameworks multiply float32 matrices in full float32. On accelerators the
# defaults differ: JAX's default precision lets XLA use **TF32** on recent NVIDIA GPUs and
# **bfloat16 passes** on TPUs, while PyTorch's float32 matmuls default to full precision
# (`torch.get_float32_matmul_precision() == 'highest'`; its cuDNN convolutions do allow TF32).
# The same code then gives answers that differ in the third significant digit. Every
# lesson's `env.setup()` already chose full float32 for both frameworks, so the cell below
# asks for JAX's default explicitly (`precision="default"`) to show what you would get
# without it.

# %%
A = np.random.default_rng(5).standard_normal((256, 256)).astype(np.float32)
exact = A.astype(np.float64) @ A.astype(np.float64)

def rel(got):
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact)) / np.max(np.abs(exact)))

Aj = jnp.asarray(A)
print("device:", jax.devices()[0].platform, "| PyTorch float32 matmul precision:", torch.get_float32_matmul_precision())
print(f"JAX default precision:  rel. error {rel(jnp.matmul(Aj, Aj, precision='default')):.1e}")
print(f"JAX 'highest':          rel. error {rel(jnp.matmul(Aj, Aj, precision='highest')):.1e}")
bf16 = jnp.matmul(Aj.astype(jnp.bfloat16), Aj.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
print(f"one bfloat16 pass (what a TPU's default does): rel. error {rel(bf16):.1e}")

# %% [markdown]
# The fix is to choose the precision explicitly in both: `jax.default_matmul_precision("highest")`
# (a context manager, or the `jax_default_matmul_precision` config option) and
# `torch.set_float32_matmul_precision("highest")`, and to compare against float64 NumPy
# with a tolerance that matches the precision you chose. The course's
# `env.set_precision("float32")` does both at once (and turns off TF32 in PyTorch's cuDNN
# convolutions too); `env.precision()` reports what is in force.

# %%
with jax.default_matmul_precision("highest"):
    highest = jax.jit(lambda a: a @ a)(Aj)
assert rel(highest) < 1e-5, rel(highest)
print(f"with default_matmul_precision('highest'): rel. error {rel(highest):.1e}")

# %% [markdown]
# ### 4.6 Integer and float promotion
#
# JAX runs in 32 bits unless told otherwise. A float64 NumPy array becomes float32 in
# `jnp.asarray` (PyTorch's `from_numpy` keeps float64), and JAX's default integer is int32
# (PyTorch's is int64), so integer sums overflow silently.

# %%
counts = np.arange(100_000)  # int64 in NumPy
print("dtypes:", torch.from_numpy(np.ones(2)).dtype, "vs", jnp.asarray(np.ones(2)).dtype, "|",
      torch.arange(3).dtype, "vs", jnp.arange(3).dtype)
sum_torch = int((torch.from_numpy(counts) ** 2).sum())
sum_jax = int((jnp.asarray(counts) ** 2).sum())
print(f"sum of squares: PyTorch {sum_torch:,}, JAX {sum_jax:,}, exact {int((counts**2).sum()):,}")

# %% [markdown]
# Fix: decide the dtype at the boundary. For 64-bit work in JAX use the `jax.enable_x64()`
# context manager (or set `JAX_ENABLE_X64=1` before starting); otherwise accumulate in float.
# The cell calls it through `compat.enable_x64()`, which is `jax.enable_x64` in current JAX
# and `jax.experimental.enable_x64` in jax 0.7 (what Colab ships).

# %%
from course_utils import compat

with compat.enable_x64():  # jax.enable_x64()
    sum_jax_x64 = int((jnp.asarray(counts) ** 2).sum())
assert sum_jax_x64 == sum_torch == int((counts**2).sum())
print(f"with jax.enable_x64(): {sum_jax_x64:,}")

# %% [markdown]
# ### 4.7 `log_softmax` + NLL vs softmax cross-entropy
#
# `F.cross_entropy(logits, y)` is `F.nll_loss(F.log_softmax(logits), y)` averaged over the
# batch; `optax.softmax_cross_entropy_with_integer_labels(logits, y)` is the same per example,
# **without** the average. Source article 000's Flax model ends in `log_softmax`, and its
# training step applies `optax.softmax_cross_entropy_with_integer_labels` on top; that happens
# to be harmless, because `log_softmax` of log-probabilities returns them unchanged.

# %%
import optax

logits_np = np.random.default_rng(6).standard_normal((S.batch, 10)).astype(np.float32) * 3
labels = np.random.default_rng(7).integers(0, 10, S.batch)
lt, yt = torch.from_numpy(logits_np), torch.from_numpy(labels)
lj, yj = jnp.asarray(logits_np), jnp.asarray(labels)
ce_torch = torch.nn.functional.cross_entropy(lt, yt)
nll_torch = torch.nn.functional.nll_loss(torch.log_softmax(lt, dim=1), yt)
ce_optax = optax.softmax_cross_entropy_with_integer_labels(lj, yj).mean()
twice = optax.softmax_cross_entropy_with_integer_labels(jax.nn.log_softmax(lj), yj).mean()
assert_close([nll_torch, ce_optax, twice], [ce_torch] * 3, rtol=1e-5, atol=1e-6, name="loss")
print(f"all four agree: {ce_torch.item():.4f}")

# %% [markdown]
# Three look-alikes are not harmless: probabilities (a softmax output) fed to a
# cross-entropy, `nll_loss` on raw logits, and a sum where the other side takes the mean
# (which multiplies every gradient, so the effective learning rate, by the batch size).

# %%
wrong = {
    "softmax output into cross_entropy": torch.nn.functional.cross_entropy(torch.softmax(lt, 1), yt).item(),
    "nll_loss on raw logits": torch.nn.functional.nll_loss(lt, yt).item(),
    "optax loss summed, not averaged": float(optax.softmax_cross_entropy_with_integer_labels(lj, yj).sum()),
}
for name, value in wrong.items():
    print(f"{name:36} {value:9.4f}   (correct: {ce_torch.item():.4f})")

# %% [markdown]
# ## 5. Porting step by step, and the MVP checklist
#
# **Key concepts**
# - Port in steps, proving equality after each: (1) **semantic rewrite** (same layers, same
#   parameter count), (2) **equal in eager mode**, (3) **equal under `jit`**, (4) **equal when
#   distributed**. A failure then points at one step.
# - Before committing to a framework, run the source articles' **MVP checklist**: a
#   same-hardware benchmark, operator coverage, dynamic shapes and recompilation, and the
#   ecosystem the project depends on.
#
# `checklist.stepwise_port` runs the four steps on a pair of models; the last step shards the
# batch over every JAX device (two simulated CPU devices here, set up at the top).

# %%
nnx_block.eval()
torch_block.eval()
steps_block = checklist.stepwise_port(torch_block, nnx_block, Xs_np)

# %%
steps_cnn = checklist.stepwise_port(torch_cnn, nnx_cnn, X, to_jax=data.nchw_to_nhwc)
assert steps_block.ok and steps_cnn.ok

# %% [markdown]
# `checklist.mvp_checklist` runs the MVP checks on the same pair and prints a report: it
# times PyTorch eager against `jax.jit` (after proving equal outputs), asks `torch.compile`
# whether it captures the model in one graph and `jax.jit` whether it traces it, feeds
# sequences of new lengths to count recompilations, and looks up the packages a project
# would need on each side.

# %%
rng = np.random.default_rng(8)
new_lengths = [rng.standard_normal((S.batch, S.seq + 4 * i, S.d_model)).astype(np.float32)
               for i in range(S.n_lengths)]
mvp = checklist.mvp_checklist(
    torch_block, nnx_block, Xs_np, shapes=new_lengths, target_s=S.bench_s, verbose=False,
    dependencies={"PyTorch side": ["torch", "torchvision", "transformers"],
                  "JAX side": ["flax", "optax", "orbax.checkpoint", "grain"]},
)
mvp

# %% [markdown]
# Read it as a decision record: which framework was faster **on this machine** for this
# model, whether either compiler needed workarounds, what changing shapes costs, and which
# dependencies would have to be replaced or installed.

# %%
assert mvp.status("outputs agree") == "pass"
to_decide = [item.name for item in mvp.items if item.status == "warn"]
print("checks that need a decision before switching:", ", ".join(to_decide) or "none")

# %% [markdown]
# ## Summary
#
# | task | PyTorch | JAX / Flax NNX |
# |---|---|---|
# | Linear weight | `weight` (out, in), `x @ W.T` | `kernel` (in, out), `x @ K` |
# | conv weight, activations | OIHW, NCHW | HWIO, NHWC |
# | attention projections | packed `in_proj_weight` (3d, d) | `query/key/value.kernel` (d, heads, head_dim) |
# | conv padding default | `padding=0` (VALID) | `'SAME'` (asymmetric when strided) |
# | Linear init | U(±1/√fan_in), bias too | LeCun normal, bias 0 |
# | LayerNorm epsilon | 1e-5 | 1e-6 |
# | BatchNorm momentum | 0.1 = weight of the new batch; unbiased running var | 0.99 = weight of the old average; biased |
# | dropout | global generator, per-element | explicit `Rngs`; attention shares masks by default |
# | float32 matmul on accelerators | full precision unless told | TF32 / bfloat16 passes unless told |
# | default int, float64 input | int64, kept float64 | int32, cast to float32 |
# | cross-entropy | `F.cross_entropy` (mean) | `optax....with_integer_labels` (per example) |
#
# **Popular claims vs what you measured**
# - *"Compiler optimisations can cause small numerical differences"* (source 001): the
#   stepwise report shows eager vs `jit` vs sharded differences at float32 rounding level,
#   while the **defaults** in section 4 changed results by orders of magnitude more.
# - *"Migrating PyTorch → JAX is a rewrite (2–4 weeks)"* (001) and *"JAX → PyTorch is much
#   easier"* (003): not measurable here. In this lesson both directions needed the same
#   converters; the hard parts were the silent defaults, not the direction.
# - *"Hybrid migration: move only the bottleneck to JAX"* (003): lesson 06 runs a jitted JAX
#   function inside a PyTorch training step with gradients flowing through.
#
# **Common misconceptions** (each corrected above)
# - *"Same shapes, so the port is right."* The flatten order (1.1) and strided `'SAME'`
#   padding (4.1) keep every shape and change the values.
# - *"Same seed, same dropout."* The generators differ (4.4); test parity with dropout off.
# - *"float32 is float32."* Not on accelerators with default precision (4.5), and not for
#   float64 inputs in JAX (4.6).
#
# **Review questions**
#
# <details><summary>1. Why does the first Linear layer after a flatten need more than a transpose?</summary>
# Flattening NCHW orders features channel-major, NHWC channel-minor; the layer's input rows must be
# permuted to the other order: reshape to (out, C, H, W), transpose to (H, W, C, out), reshape back.
# </details>
#
# <details><summary>2. A port matches in eval mode but its training loss curve differs. Where do you look?</summary>
# The training-only paths: dropout (different generators, broadcast masks), BatchNorm momentum and the
# biased/unbiased running variance, and the loss reduction (sum vs mean changes the effective learning rate).
# </details>
#
# <details><summary>3. Why run the steps eager → jit → distributed separately?</summary>
# Each step can break the equality for its own reasons (a semantic bug, a tracing problem such as Python
# control flow on values, a sharding mistake). Proving equality after each step localises the failure.
# </details>
#
# **Next:** the exercises in `exercises/07_migration_exercises.ipynb` (a converter for a new
# layer type, finding the silent difference between two "identical" models, BatchNorm
# conventions, and a port proven by outputs and gradients).
