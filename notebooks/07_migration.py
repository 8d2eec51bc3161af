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
#    promotion, loss conventions, the GELU approximation);
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
# JAX before PyTorch, full float32 in both, and one device kind for both (this lesson
# compares them throughout; on a TPU, where PyTorch stays on the CPU, JAX does too).
SETUP = env.setup(one_kind=True, cpu_devices=2)

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx

from course_utils import checklist, compat, config, convert, data, models
from course_utils.expect import expect_error
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
# Why start with layouts? A trained model is a set of named arrays, and porting it means
# moving those arrays into the other framework's modules. The numbers are the same; the order
# in which each framework stores them is not. PyTorch stores a Linear weight as `(out, in)`, one
# row per output unit; Flax stores `(in, out)`, so that the layer is `x @ kernel` with no
# transpose in the code. Images follow the same pattern: channels first in PyTorch, channels
# last in Flax. Neither choice is wrong, and neither library checks what you hand it beyond the
# shape.
#
# That last point is what makes layouts dangerous. A square weight, or a permutation that
# happens to produce the expected shape, is accepted silently and computes a different
# function. So the first job of a port is to write down, layer by layer, where each number
# lives on each side.
#
# Lesson 04's CNN exists in both frameworks (`course_utils.models`). Here are its parameter
# shapes side by side.

# %%
torch.manual_seed(0)
cnn_torch = models.TorchCNN()  # PyTorch, NCHW
cnn_jax = models.NNXCNN(rngs=nnx.Rngs(0))  # Flax NNX, NHWC
nnx_shapes = {
    f"{layer}.{name}": tuple(getattr(getattr(cnn_jax, layer), name).shape)
    for layer in convert.CNN_LAYERS for name in ("kernel", "bias")
}
for (tname, p), (jname, shape) in zip(cnn_torch.named_parameters(), nnx_shapes.items(), strict=True):
    print(f"{tname:12} {str(tuple(p.shape)):16} | {jname:12} {shape}")


# %% [markdown]
# Read the table by rows. The biases match as they are. The conv weights hold the same four
# sizes in a different order: PyTorch puts the output channels first, Flax last, with the
# kernel's height and width in front. The Linear weights are each other's transpose. Every
# parameter has a counterpart with the same number of entries, which is the first check of a
# port, and also the reason it is not enough: the table cannot tell which order the entries
# inside each array are in.
#
# ### 1.1 The sharp bit: a port that forgets the flatten order
#
# The natural first attempt transposes the Linear weights and permutes the conv weights,
# and nothing else. Every shape fits, so nothing complains until the outputs are compared.
#
# The cell below does exactly that and then compares logits with PyTorch's. The comparison is
# the only line that can fail, and it is written the way every parity check in this course is:
# `assert_close` with a tolerance that float32 rounding explains, so a failure means the two
# models compute different functions. The comparison runs inside `expect_error`, the course's
# helper for errors a cell raises on purpose: it prints the error's type and message in a few
# lines, without the frames, and fails the cell if the error does not happen.

# %%
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
forward_jax = nnx.jit(lambda model, x: model(x))
digits = data.load_digits(limit=4 * S.batch)
X = digits.X_train[: S.batch]  # (batch, 1, 8, 8), NCHW
naive_port(cnn_torch, cnn_jax)
with torch.no_grad():
    logits_torch = cnn_torch(torch.from_numpy(X))
with expect_error(AssertionError, lines=2):
    assert_close(forward_jax(cnn_jax, jnp.asarray(data.nchw_to_nhwc(X))), logits_torch, rtol=1e-5, atol=1e-5, name="logits")

# %% [markdown]
# The message counts the elements that differ and names the worst one. Every logit is off, not
# a few, and by far more than rounding: one wrong layer corrupts everything downstream of it.
# The error cannot say which layer is at fault; to find it, compare the layers' outputs one at a
# time, from the input on, and stop at the first that differs.
#
# The conv layers were right; `fc1` reads a flattened `(C, H, W)` map in PyTorch and a
# flattened `(H, W, C)` map in JAX, so its input rows must be reordered.
# `convert.cnn_torch_to_nnx` does the reshape-permute-reshape:
# `weight.reshape(out, C, H, W).transpose(2, 3, 1, 0).reshape(H*W*C, out)`.
#
# The rest of the lesson relies on the course's converters, so here is their code rather than
# a description of it. `cnn_torch_to_nnx` copies what `cnn_torch_tensors_to_jax` returns into the
# NNX model; that function picks one rule per layer, and the flatten rule is the one above.

# %%
import inspect

for fn in (convert.cnn_torch_tensors_to_jax, convert.conv_torch_to_jax,
           convert.flatten_linear_torch_to_jax, convert.linear_torch_to_jax):
    print(inspect.getsource(fn))

# %% [markdown]
# Three things to notice in the printed code. Each rule is one NumPy expression (a transpose, or
# the reshape-transpose-reshape for `fc1`): no arithmetic touches the values, which is why a
# round trip can be exact. Each rule checks the number of dimensions and, for the flatten, the
# feature count, and names the layer in its error; a port that fails loudly on the wrong input
# is worth the extra lines. And the whole table of rules is indexed by layer name, so adding a
# layer to the model means adding one line here.
#
# ## 2. PyTorch → JAX: lesson 04's CNN
#
# **Key concepts**
# - Convert the weights, convert the input layout (NCHW → NHWC), and compare logits.
# - Gradients have the layout of their parameters, so the same converter maps them.
# - Compare with a tolerance that float32 reordering explains (about 1e-5 relative).
#
# Why check gradients as well as outputs? Equal outputs prove the forward pass. Training uses
# the backward pass too, and a port can break it while leaving the forward intact: a parameter
# that is not registered as a parameter (so it gets no gradient), a frozen copy where the model
# should read the live weight, a custom layer whose derivative was written by hand. Comparing
# every gradient on one batch catches all of these before a single training step runs.
#
# The two cells below are the same computation in each framework's idiom. PyTorch runs the
# model, takes the mean cross-entropy and calls `.backward()`, which leaves each gradient in its
# parameter's `.grad`. JAX asks `nnx.value_and_grad` for the loss and a gradient *state*, a
# pytree shaped like the model's parameters, returned as a value rather than stored on the
# model.

# %%
# PyTorch: logits and gradients of the mean cross-entropy on one batch
y = digits.y_train[: S.batch]
cnn_torch.zero_grad()
loss_torch = torch.nn.functional.cross_entropy(cnn_torch(torch.from_numpy(X)), torch.from_numpy(y))
loss_torch.backward()
grads_torch = {name: p.grad for name, p in cnn_torch.named_parameters()}
loss_torch

# %%
# JAX: the same model after converting the weights
convert.cnn_torch_to_nnx(cnn_torch, cnn_jax)
X_jax = jnp.asarray(data.nchw_to_nhwc(X))  # (batch, 8, 8, 1)

def loss_fn_jax(model, X, y):
    logits = model(X)
    return -jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1).mean()

loss_jax, grads_jax = nnx.jit(nnx.value_and_grad(loss_fn_jax))(cnn_jax, X_jax, jnp.asarray(y))
loss_jax

# %% [markdown]
# The two losses should agree to about five significant digits (the parity cell checks it). The
# JAX loss is written out by hand (log-softmax, then the log-probability of each true label,
# averaged) to show what `F.cross_entropy` computes; section 4.7 compares it with optax's
# ready-made loss. The parity cell now checks logits, loss and all gradients. The gradients get
# a looser relative tolerance than the logits: each weight gradient is a sum over the batch,
# computed by different kernels in each framework that add the terms in different orders, and
# float32 sums round differently with the order.

# %%
# Parity: logits, loss and every gradient, in PyTorch's layout
assert_close(forward_jax(cnn_jax, X_jax), cnn_torch(torch.from_numpy(X)), rtol=1e-5, atol=1e-5, name="logits")
assert_close(loss_jax, loss_torch, rtol=1e-5, atol=1e-6, name="loss")
grads_jax_as_torch = convert.grads_nnx_to_torch(cnn_jax, grads_jax, cnn_torch)
assert_close(grads_jax_as_torch, grads_torch, rtol=1e-4, atol=1e-6, name="grad")
print("CNN: logits, loss and", len(grads_torch), "gradients agree")

# %% [markdown]
# One line for the whole model: every parameter of both convolutions and both Linear layers
# (a weight and a bias each) has the same gradient on both sides. The port is proven for this
# batch, in both directions of computation.
#
# `convert.grads_nnx_to_torch` needs no rules of its own: it puts the gradient state where the
# parameters were and runs the weight converter on it.

# %%
print(inspect.getsource(convert.grads_nnx_to_torch))

# %% [markdown]
# The trick is in its two NNX calls. `nnx.split` separates a model into its structure (the
# `graphdef`) and its state; `nnx.merge` builds a model from a structure and a state of the same
# shape. Merging the gradient state into the parameters' place gives an object that looks like
# the model but holds gradients, and the weight converter, which only reads arrays by name,
# copies them into a PyTorch model's parameters. A second set of rules for gradients would have
# been a second place to make a mistake.

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
# Why a second direction? Research code written in JAX often has to reach a PyTorch serving
# stack or a PyTorch codebase, and a transformer block is where most of today's models spend
# their parameters. It is also harder than the CNN in one way: attention's projections are
# stored as one packed matrix in PyTorch and as three separate, head-shaped kernels in Flax, so
# the converter has to cut and reshape, not only transpose. If the cut is in the wrong place,
# the shapes still fit and the heads silently swap roles.
#
# The block lives in `course_utils.models.transformer` (`NNXBlock`, `TorchBlock`), its converters
# both ways in `course_utils.convert.transformer`.

# %%
cfg = models.BlockConfig(d_model=S.d_model, n_heads=4, d_ff=2 * S.d_model, dropout=0.1)
block_jax = models.NNXBlock(cfg, rngs=nnx.Rngs(0))
attn = nnx.state(block_jax.attn, nnx.Param)
print("NNX:", {k: tuple(v["kernel"].shape) for k, v in attn.items()})
block_torch = models.TorchBlock(cfg)
print("PyTorch: in_proj_weight", tuple(block_torch.attn.in_proj_weight.shape),
      "out_proj.weight", tuple(block_torch.attn.out_proj.weight.shape))

# %% [markdown]
# The printout shows the packing. PyTorch's `in_proj_weight` has three times `d_model` rows:
# the query projection's rows first, then the key's, then the value's. Flax has one kernel per
# projection with the heads as an axis of their own, `(d_model, heads, head_dim)`, where
# `heads · head_dim = d_model`. The output projection goes the other way, from heads back to
# `d_model`.
#
# The converter splits PyTorch's packed matrix into thirds and reshapes each. For the
# query: `W_q.T.reshape(d_model, heads, head_dim)`, and back: `K_q.reshape(d_model, d_model).T`.
# The direction this section uses, NNX → PyTorch, layer by layer (the attention part is the
# only one with more than a transpose):

# %%
from course_utils.convert import transformer as convert_block

for fn in (convert.block_nnx_to_torch, convert_block._attention_to_torch, convert_block._linear_to_torch):
    print(inspect.getsource(fn))

# %% [markdown]
# Read `_attention_to_torch` against the shapes above: each Flax kernel is flattened back to
# `(d_model, d_model)` and transposed into PyTorch's `(out, in)`, and the three results are
# stacked in the order query, key, value, which is the order PyTorch's attention slices
# `in_proj_weight` in. The LayerNorms and the MLP need only the rules of section 1.
#
# Next the converter runs, and both blocks are put in evaluation mode, so dropout is off and the
# comparison is deterministic. The test input is one NumPy array that both frameworks read.

# %%
convert.block_nnx_to_torch(block_jax, block_torch)  # NNX weights -> PyTorch
block_jax.eval()  # dropout off in both: parity first, randomness later (section 4.4)
block_torch.eval()
Xs_np = np.random.default_rng(0).standard_normal((S.batch, S.seq, S.d_model)).astype(np.float32)

# %%
# PyTorch: output, then gradients of the mean squared output
Xs_torch = torch.from_numpy(Xs_np)
out_torch = block_torch(Xs_torch)  # (batch, seq, d_model)
(out_torch**2).mean().backward()
grads_block_torch = {name: p.grad for name, p in block_torch.named_parameters()}

# %%
# JAX: the same, with the gradients returned as a state
out_jax = forward_jax(block_jax, jnp.asarray(Xs_np))  # (batch, seq, d_model)
grads_block_jax = nnx.jit(nnx.grad(lambda m, x: (m(x) ** 2).mean()))(block_jax, jnp.asarray(Xs_np))

# %%
# Parity: outputs and all gradients
assert_close(out_torch, out_jax, rtol=1e-5, atol=1e-5, name="block output")
assert_close(convert.grads_nnx_to_torch(block_jax, grads_block_jax, block_torch),
             grads_block_torch, rtol=1e-4, atol=1e-6, name="block grad")
print(f"block: output (max |diff| {max_abs_diff(out_torch, out_jax):.1e}) and "
      f"{len(grads_block_torch)} gradients agree")

# %% [markdown]
# The largest output difference printed above is of the size float32 rounding produces, inside
# the assertion's tolerance, and every gradient of the block (both LayerNorms, the four
# attention projections, the MLP) agrees. The loss, the mean of the squared output, is not a
# training objective; it is chosen because its gradient reaches every parameter.
#
# A converter pair should be an exact round trip: NNX → PyTorch → NNX returns every weight
# bit for bit, because only transposes and reshapes happen.

# %%
round_trip = convert.block_torch_to_nnx(block_torch, models.NNXBlock(cfg, rngs=nnx.Rngs(1)))
assert_close(nnx.state(round_trip, nnx.Param), nnx.state(block_jax, nnx.Param), rtol=0, atol=0,
             name="round trip")
print("round trip exact")

# %% [markdown]
# `rtol=0, atol=0` asks for bit-for-bit equality, and it passes: no arithmetic happened, only
# copies in a different order. Keep a round-trip test next to any converter you write. It catches
# a transpose that is not undone or a slice taken in the wrong order, mistakes that a parity
# check on a lucky input might miss.

# %% [markdown]
# ## 4. A catalogue of silent differences
#
# **Key concepts**
# - Each framework has defaults; a port that does not copy them computes a different model.
# - None of these raise an error. They show up as a slightly worse accuracy, a different loss
#   curve, or a result that changes with the hardware.
# - Pattern for each: demonstrate the difference, then fix it.
#
# Why a catalogue? Sections 2 and 3 copied weights into models that were already written to
# match. A real port starts earlier, by rewriting layer by layer, and each rewritten layer brings
# its library's defaults with it: `nn.Conv2d(1, 32, 3)` and `nnx.Conv(1, 32, (3, 3))` look like
# the same layer and are not. A PyTorch user reading Flax code tends to assume PyTorch's
# defaults, because the names match; the catalogue lists where that assumption fails.
#
# Each entry below is small on its own. In a real port several stack up, and the result is a
# model that trains, reaches a slightly different accuracy, and gives no hint why. The defence
# is the same every time: know the default on both sides, set it explicitly, and check with a
# parity test that would fail if you had not.
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
# Read the spatial sizes: PyTorch's 3x3 convolution without padding trims one pixel from each
# border (28 → 26), Flax's `'SAME'` keeps 28. One layer in, the two models already disagree on
# the shape, so this one is caught as soon as a Linear layer expects a fixed input size.

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
# The first field says the shapes agree, so nothing downstream would complain. The second shows
# that `'SAME'` still computes other values: every output pixel sees a window shifted by one
# pixel against PyTorch's. The third, with the padding written out as `((1, 1), (1, 1))`
# (before and after, per spatial axis), matches PyTorch, and the assertion checks it. When
# porting a strided convolution, write the padding as explicit pairs rather than as a string.

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
# The measured standard deviations sit next to the two formulas: PyTorch's next to 1/√(3·fan_in),
# the standard deviation of its uniform distribution, Flax's next to 1/√fan_in. The bias line
# shows PyTorch's biases drawn from the same range and Flax's all zero. For a port of a trained
# model none of this matters, since the weights are copied. It matters when you compare training
# runs from scratch: two "identical" models that start at different scales follow different loss
# curves, and a learning rate tuned for one may be wrong for the other.

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
# Both numbers now match PyTorch's, and the assertions pin them: the weight's standard deviation
# within 10 % of PyTorch's, the largest bias inside PyTorch's bound and not far below it. The
# draws themselves still differ, since the two random number generators differ (section 4.4);
# only the distributions agree.

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
# LayerNorm divides by √(variance + ε). With a variance near 1e-5, PyTorch's ε doubles the
# denominator's argument while Flax's adds a tenth, so the normalised outputs differ by a
# sizeable fraction of their own size (the first line). On activations of ordinary size the two
# ε are negligible and the difference vanishes, which is why this default survives parity tests
# on unit-scale random inputs and shows up only where activations are small.

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
# After one batch, PyTorch's running mean has moved a tenth of the way from 0 toward the batch
# mean; the naive Flax port has moved nine tenths of the way. The eval-mode outputs of the two
# models would differ as soon as a batch has passed in training mode, while a parity test run
# right after loading the weights would pass.

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
# Each framework's running variance equals the formula printed next to it, starting from 1 and
# mixing in a tenth of the batch variance: PyTorch's with the n − 1 divisor, Flax's with n. With
# 8 examples per batch the gap is a factor 8/7 on the batch's contribution; with 256 it would be
# below half a percent. The exercise `batchnorm-port` asks for the whole conversion: momentum,
# epsilon, scale, bias and running statistics.

# %% [markdown]
# ### 4.4 Dropout randomness
#
# Same probability, same "inverted" scaling by 1/(1 − p), but different random number
# generators: `torch.manual_seed(0)` and `nnx.Rngs(0)` draw different masks. In training
# mode the two blocks of section 3 give different outputs, and no seed makes them agree.

# %%
block_jax.train()
block_torch.train()
torch.manual_seed(0)
out_torch_train = block_torch(Xs_torch).detach()
out_jax_train = forward_jax(block_jax, jnp.asarray(Xs_np))
print(f"train mode: max |diff| {max_abs_diff(out_torch_train, out_jax_train):.2f}")

# %% [markdown]
# The same blocks that agreed to float32 rounding in section 3 now differ by an amount of the
# size of the activations themselves: dropout zeroed different units on each side. That is not a
# bug in the port, and no seed fixes it: PyTorch's generator (a Mersenne Twister on the CPU,
# Philox on CUDA) and JAX's (Threefry, with keys passed explicitly) are different algorithms.

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
# Both rows keep close to 1 − p of the units, scale the survivors by 1/(1 − p) exactly, and so
# keep the mean near 1. The kept fraction and the mean vary a little from draw to draw; the
# scale is a constant of the implementation and matches to every printed digit. This is the
# strongest statement a dropout port can prove: the same distribution, not the same masks.

# %% [markdown]
# #### Switching modes: in place, or a view
#
# `.train()` and `.eval()` switch a module in place in both frameworks. PyTorch's set the
# `training` flag of every submodule; NNX's (through `Module.set_attributes`) set
# `deterministic` on every `Dropout` and `use_running_average` on every `BatchNorm` inside. A
# training loop that evaluates every few steps therefore switches to evaluation and back, and
# a forgotten `.train()` goes on training without dropout, with no error.
#
# Flax 0.12 adds a second way: `nnx.view(model, deterministic=True, use_running_average=True)`
# returns a module of the same structure, in evaluation mode, holding the very same arrays,
# and leaves `model` as it was. `compat.eval_view` calls it; on Flax 0.11 (Colab's), which has
# no `nnx.view`, it builds the same thing from `nnx.split` and `nnx.merge`. PyTorch has no
# module view in another mode: there, the switch is the idiom. The blocks are in training mode
# from the cell above.

# %%
# PyTorch: switch to evaluation, compute, switch back
block_torch.eval()
with torch.no_grad():
    out_torch_eval = block_torch(Xs_torch)
block_torch.train()

# %%
# JAX: an evaluation view; block_jax itself stays in training mode
view_jax = compat.eval_view(block_jax)
out_jax_eval = forward_jax(view_jax, jnp.asarray(Xs_np))
print("view: dropout off", view_jax.drop1.deterministic,
      "| block_jax: dropout off", block_jax.drop1.deterministic)

# %%
# Parity: the view computes what PyTorch's evaluation mode computes
assert_close(out_torch_eval, out_jax_eval, rtol=1e-5, atol=1e-5, name="evaluation-mode output")
assert not block_jax.drop1.deterministic and block_torch.training

# %% [markdown]
# The view agrees with PyTorch's evaluation mode to float32 rounding, as the blocks did in
# section 3, while the printed flags show the training block untouched. Because the view
# holds the same arrays, it needs no refresh after a training step: the next step's new
# parameters are what the view computes with (in the split-and-merge fallback, the variables
# are new objects around the same arrays, so build the view again after each update).

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
# With `broadcast_dropout=True` the four identical examples come out identical, because one mask
# was shared; with `False` they differ, because each got its own, as in PyTorch. A shared mask is
# cheaper to draw but makes the examples of a batch correlated, so a model ported from PyTorch
# should turn it off, as `NNXBlock` does.

# %% [markdown]
# ### 4.5 Matmul precision: a CPU, a GPU and a TPU
#
# Both frameworks let a float32 matrix product run with cheaper internal arithmetic, and
# their defaults differ:
#
# - JAX: [`jax.default_matmul_precision`](https://docs.jax.dev/en/latest/_autosummary/jax.default_matmul_precision.html)
#   (a context manager and the `jax_default_matmul_precision` option) sets the precision of
#   32-bit matmuls and convolutions: `'bfloat16'` fastest and least precise, `'tensorfloat32'`
#   in between, `'float32'` full. Left at `default`, JAX leans toward speed: bfloat16 passes
#   on TPUs and TF32 on recent NVIDIA GPUs (the
#   [matmul precision guide](https://docs.jax.dev/en/latest/201/precision.html)).
# - PyTorch: [`torch.set_float32_matmul_precision`](https://docs.pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html)
#   defaults to `'highest'` (float32 internally); `'high'` allows TF32 or two bfloat16
#   terms per number and `'medium'` one bfloat16, each only where a fast kernel for it
#   exists, otherwise the next higher setting. It does not cover convolutions: cuDNN
#   convolutions are governed by `torch.backends.cudnn.allow_tf32`, on by default.
#
# So, left at the defaults on a recent NVIDIA GPU, PyTorch's matmuls run in full float32 and
# JAX's in TF32; on a TPU, JAX's use bfloat16 passes. The cell measures both frameworks on this
# CPU at each setting, against a float64 reference, and then imitates what a GPU (TF32) and a
# TPU (one bfloat16 pass) would do by rounding the inputs to those formats. Every lesson's
# `env.setup()` chose full float32 for both frameworks; the cell changes PyTorch's setting
# and puts it back.

# %%
A = np.random.default_rng(5).standard_normal((256, 256)).astype(np.float32)
exact = A.astype(np.float64) @ A.astype(np.float64)

def rel(got):
    """Largest error against the float64 product, relative to its largest entry."""
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact)) / np.max(np.abs(exact)))

def rounded(a, mantissa_bits):
    """float32 -> float32 rounded to `mantissa_bits` stored bits (TF32: 10, bfloat16: 7)."""
    drop = 23 - mantissa_bits
    bits = a.view(np.uint32).astype(np.uint64) + (1 << (drop - 1))  # round half up
    return (bits & ~np.uint64((1 << drop) - 1)).astype(np.uint32).view(np.float32)

Aj = jax.device_put(A, jax.devices("cpu")[0])  # this CPU, whatever else the runtime has
At = torch.from_numpy(A)
errors = {f"JAX precision={p!r}": rel(jnp.matmul(Aj, Aj, precision=p)) for p in ("default", "highest")}
errors["PyTorch 'highest' (its default)"] = rel(At @ At)
lowered = {}
for p in ("high", "medium"):
    torch.set_float32_matmul_precision(p)
    lowered[f"PyTorch {p!r}"] = rel(At @ At)
env.set_precision("float32")  # back to the course's setting
for name, err in {**errors, **lowered}.items():
    print(f"this CPU, {name:32} max rel. error {err:.1e}")
imitated = {}
for name, bits in (("TF32 inputs (GPU default in JAX)", 10), ("bfloat16 inputs (TPU default)", 7)):
    imitated[name] = rel(rounded(A, bits).astype(np.float64) @ rounded(A, bits).astype(np.float64))
    print(f"imitated, {name:33} max rel. error {imitated[name]:.1e}")
assert max(errors.values()) < 1e-5, errors  # full float32 on a CPU, whatever the setting
assert min(imitated.values()) > 100 * max(errors.values()), imitated
assert env.precision()["name"] == "float32"

# %% [markdown]
# Read the two blocks. On this CPU both frameworks' defaults, and JAX's `'highest'`, land at
# float32 rounding (the first assertion checks they stay below 1e-5): XLA's CPU backend
# computes JAX's `'default'` in full float32, so on a CPU the defaults cannot make a port
# disagree. PyTorch's `'high'` and `'medium'` rows are printed, not asserted: the docs say the
# setting affects CUDA, but current PyTorch also hands it to its oneDNN CPU kernels
# (`torch.backends.mkldnn.matmul.fp32_precision` becomes `tf32` or `bf16`), which may use
# reduced precision on CPUs with bfloat16 instructions; compare your rows with the float32
# ones to see whether yours did. The imitated rows are what the same product loses once the
# inputs keep fewer mantissa bits, as on a GPU's tensor cores (TF32 keeps 10 of float32's 23)
# or in a TPU's bfloat16 pass (7): errors
# at least a hundred times those of the float32 rows (the second assertion), enough to break a
# parity test written with `rtol=1e-5`. A real accelerator accumulates in float32 rather than
# float64, which adds only float32 rounding on top. A GPU would show these numbers for JAX's
# `'default'` row and still the float32 ones for PyTorch's `'highest'` row; that difference,
# invisible on this CPU, is the silent one.
#
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
# On this CPU the number equals the `'highest'` row above, as it should; the assertion only
# guards the float32 level. The cell is here for the machine where it matters: on a GPU or TPU,
# the same context manager is what moves JAX's row from the imitated numbers back to the float32
# ones. Setting it globally, as `env.setup()` does for every lesson, costs speed on those
# accelerators; a port can instead prove parity at `'highest'` and then measure, separately,
# what the faster setting changes.

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
# The first line shows both conversions: PyTorch kept NumPy's float64 and int64, JAX chose 32
# bits. The second shows what that costs: the squares of numbers up to 99,999 reach about 1e10,
# beyond int32's limit of about 2.1e9, and the sum is larger still. JAX's answer is not random,
# it is the exact sum wrapped around modulo 2³², the way fixed-width integers overflow. No error,
# no warning: the result is simply a different number.

# %% [markdown]
# Fix: decide the dtype at the boundary. For 64-bit work in JAX use the `jax.enable_x64()`
# context manager (or set `JAX_ENABLE_X64=1` before starting); otherwise accumulate in float.
# The cell calls it through `compat.enable_x64()`, which is `jax.enable_x64` in current JAX
# and `jax.experimental.enable_x64` in jax 0.7 (what Colab ships).

# %%
with compat.enable_x64():  # jax.enable_x64()
    sum_jax_x64 = int((jnp.asarray(counts) ** 2).sum())
assert sum_jax_x64 == sum_torch == int((counts**2).sum())
print(f"with jax.enable_x64(): {sum_jax_x64:,}")

# %% [markdown]
# Inside the context manager the array stays int64 and the sum is exact. Outside it, JAX is back
# to 32 bits. Switching 64-bit mode on for a whole program is possible but changes every default
# dtype, and float64 arithmetic is slow on most accelerators, so a port usually keeps 32 bits
# and decides, at each place where data enters, which dtype it needs.

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
# One number for four computations: PyTorch's fused loss, PyTorch's two-step version, optax's
# loss averaged by hand, and the article's double log-softmax. The last agrees because a
# log-softmax output already sums to one in probability, so normalising it again subtracts
# log(1) = 0.

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
# None of the three raises, and each gives a plausible-looking number. A softmax fed into a
# cross-entropy is normalised twice: its inputs lie between 0 and 1, so with ten classes the
# loss can only move between about 1.4 and 2.5 whatever the model predicts, and its gradients
# are small. `nll_loss` on raw logits just picks the negated logit of the true class, so it can
# go negative and has no probabilistic meaning. The sum is the right loss times the batch size.
# The exercise `cross-entropy` asks for a JAX loss that matches PyTorch's, label smoothing and
# ignored labels included, under `jit`.

# %% [markdown]
# ### 4.8 GELU: exact or tanh
#
# GELU is `x · Φ(x)`, with Φ the standard normal's distribution function, which needs `erf`.
# An older, cheaper form replaces Φ with a tanh curve. The two frameworks default to different
# forms, under the same name:
#
# - PyTorch: `nn.GELU()` and `F.gelu` take `approximate="none"` by default, the exact erf form;
#   `approximate="tanh"` asks for the other one.
# - JAX: `jax.nn.gelu(x, approximate=True)` is the default, the tanh form; `approximate=False`
#   is exact. Flax's `nnx.gelu` is the same function.
#
# The cell prints the installed signatures (so the defaults above are checked, not recalled),
# measures the gap each way, then matches the forms and asserts parity.

# %%
print("torch.nn.GELU", inspect.signature(torch.nn.GELU), "| jax.nn.gelu", inspect.signature(jax.nn.gelu))
assert inspect.signature(torch.nn.GELU).parameters["approximate"].default == "none"
assert inspect.signature(jax.nn.gelu).parameters["approximate"].default is True

xg_np = np.linspace(-6, 6, 4001, dtype=np.float32)
xg_t, xg_j = torch.from_numpy(xg_np), jnp.asarray(xg_np)
gelu = {  # (framework, form) -> values
    ("PyTorch", "exact"): torch.nn.GELU()(xg_t),  # the default
    ("PyTorch", "tanh"): torch.nn.GELU(approximate="tanh")(xg_t),
    ("JAX", "tanh"): jax.nn.gelu(xg_j),  # the default
    ("JAX", "exact"): jax.nn.gelu(xg_j, approximate=False),
}
gap_defaults = max_abs_diff(gelu["PyTorch", "exact"], gelu["JAX", "tanh"])
gap_other_way = max_abs_diff(gelu["PyTorch", "tanh"], gelu["JAX", "exact"])
print(f"each default (PyTorch exact vs JAX tanh): max |diff| {gap_defaults:.1e}")
print(f"the other way (PyTorch tanh vs JAX exact): max |diff| {gap_other_way:.1e}")
for form in ("exact", "tanh"):
    assert_close(gelu["JAX", form], gelu["PyTorch", form], rtol=1e-6, atol=1e-6, name=f"GELU, {form} in both")
print("matched forms: equal to float32 rounding")
assert min(gap_defaults, gap_other_way) > 1e-4  # far above that rounding

# %% [markdown]
# The gap between the forms is a few times 1e-4 per activation (the last assertion checks it
# stays above 1e-4, a hundred times the 1e-6 the matched forms reach): small enough to pass a
# loose check by eye, large enough to fail a parity test written with `rtol=1e-5` on the first
# layer that uses it, and it never raises an error. Fix: when porting from PyTorch write
# `jax.nn.gelu(x, approximate=False)`; when porting to PyTorch from code that used JAX's
# default, write `nn.GELU(approximate="tanh")`. `course_utils.models.NNXBlock` does the first.

# %% [markdown]
# ## 5. Porting step by step, and the MVP checklist
#
# **Key concepts**
# - Port in steps, proving equality after each: (1) **semantic rewrite** (same layers, same
#   parameter count), (2) **equal in eager mode**, (3) **equal under `jit`**, (4) **equal when
#   distributed**: outputs with the batch sharded, then one training step (gradients and
#   updated weights). A failure then points at one step.
# - Before committing to a framework, run the source articles' **MVP checklist**: a
#   same-hardware benchmark, operator coverage, dynamic shapes and recompilation, and the
#   ecosystem the project depends on.
#
# Why in steps? A port that is written, compiled and distributed in one go and then disagrees
# leaves you with one symptom and many suspects. Each step changes one thing and has its own
# typical failure: the rewrite gets a layer or a default wrong (sections 1–4); eager to `jit`
# breaks where Python control flow depends on array values, which tracing cannot follow (lesson
# 03); distributing breaks where a sharding or a collective is wrong (lesson 05). Proving
# equality after each step turns "the port is wrong" into "step 3 is wrong", which is a much
# smaller search.
#
# A PyTorch user may expect the last step to be trivial, since `DistributedDataParallel` wraps a
# model without changing its code. In JAX the same code is run with sharded inputs and the
# compiler inserts the communication, so the step is cheap to write but still worth proving: the
# program that runs is a different program.
#
# `checklist.stepwise_port` runs the four steps on a pair of models. Its last step shards the
# batch of one **forward pass** over two devices and compares the outputs; the training step
# comes after it. The two devices come from `meshes.devices(2)`, the course's one rule for
# meshes: two GPUs or TPUs when the machine has at least two, else the two simulated CPU
# devices set up at the top. It prints which it chose.

# %%
from course_utils import meshes

DEVICES = meshes.devices(2)
block_jax.eval()
block_torch.eval()
steps_block = checklist.stepwise_port(block_torch, block_jax, Xs_np, devices=DEVICES)

# %%
steps_cnn = checklist.stepwise_port(cnn_torch, cnn_jax, X, to_jax=data.nchw_to_nhwc, devices=DEVICES)
assert steps_block.ok and steps_cnn.ok

# %% [markdown]
# Read each report from the top: the parameter counts agree, then the largest output difference
# against PyTorch at each step, and in the last line how the batch was split and what sharding
# the output came back with (its leading axis split along `'data'`, like the input). The
# difference stays within the float32 tolerance through all four steps (the assertion checks
# both reports), so neither compiling nor splitting the batch changed the function.
#
# Outputs equal under sharding do not yet say that training is: the backward pass adds its own
# collective (each device's gradient is a partial sum over its share of the batch, and XLA
# inserts the all-reduce that adds them up). So the distribution step is finished with one SGD
# step on the block: the batch split over the devices, the parameters replicated, gradients and
# updated weights compared with PyTorch's single-device step.
#
# The PyTorch side is the familiar loop body on a copy of the block (the block itself is used
# again below): zero the gradients, backward, update in place under `no_grad`.

# %%
# PyTorch: one SGD step on one device, on a copy of the block
import copy

lr = 0.1
block_step_torch = copy.deepcopy(block_torch)
block_step_torch.zero_grad()
(block_step_torch(Xs_torch) ** 2).mean().backward()
grads_step_torch = {name: p.grad.clone() for name, p in block_step_torch.named_parameters()}
with torch.no_grad():
    for p_t in block_step_torch.parameters():
        p_t -= lr * p_t.grad

# %% [markdown]
# The JAX side says where the data lives and lets the compiler do the rest. A `mesh` names the
# devices' axis `'data'`; `NamedSharding(mesh, PartitionSpec("data"))` splits the batch's
# leading axis along it, and `PartitionSpec()` (no axis named) replicates the parameters on every
# device. The step itself is written for one device: `jax.grad` of the loss, then a
# `jax.tree.map` over the parameter pytree. `jit` reads the input shardings and compiles the
# communication in. Compiling ahead of time (`lower(...).compile()`) lets the cell count the
# all-reduce operations in the compiled program.

# %%
# JAX: the same step, the batch split over the devices, the weights replicated
from jax.sharding import NamedSharding, PartitionSpec

mesh = jax.make_mesh((len(DEVICES),), ("data",), devices=DEVICES)
graphdef, params_jax, rest_jax = nnx.split(block_jax, nnx.Param, ...)
params_jax = jax.device_put(params_jax, NamedSharding(mesh, PartitionSpec()))  # replicated
rest_jax = jax.device_put(rest_jax, NamedSharding(mesh, PartitionSpec()))
X_sharded_jax = jax.device_put(jnp.asarray(Xs_np), NamedSharding(mesh, PartitionSpec("data")))

@jax.jit
def sgd_step_jax(params, rest, x):
    def loss(params):
        return (nnx.merge(graphdef, params, rest)(x) ** 2).mean()  # section 3's loss
    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), grads

compiled_step_jax = sgd_step_jax.lower(params_jax, rest_jax, X_sharded_jax).compile()  # compile once, read its program
new_params_jax, grads_sharded_jax = compiled_step_jax(params_jax, rest_jax, X_sharded_jax)
print("batch:", X_sharded_jax.sharding.spec, "over", len(X_sharded_jax.sharding.device_set), "devices;",
      "a gradient:", jax.tree.leaves(grads_sharded_jax)[0].sharding.spec, "(replicated);",
      "all-reduce ops in the compiled step:", compiled_step_jax.as_text().count("all-reduce("))

# %% [markdown]
# The printed line confirms the plan: the batch is split along `'data'`, and each gradient comes
# back replicated (every device holds the full sum). With more than one device, the compiled
# program contains all-reduce operations, the collective that adds the devices' partial
# gradients; with a single device there is nothing to reduce and the count is 0. XLA may merge
# the reductions of many gradients into one operation, so the count says that the communication
# is there, not how many arrays it carries.

# %%
# Parity: gradients and updated weights, in PyTorch's names and layouts
assert_close(convert.grads_nnx_to_torch(block_jax, grads_sharded_jax, block_torch), grads_step_torch,
             rtol=1e-4, atol=1e-6, name="sharded grad")
assert_close(convert.grads_nnx_to_torch(block_jax, new_params_jax, block_torch),
             dict(block_step_torch.named_parameters()), rtol=1e-5, atol=1e-6, name="weights after one step")
print(f"sharded training step: {len(grads_step_torch)} gradients and the updated weights agree")

# %% [markdown]
# The sharded JAX step and the single-device PyTorch step produced the same gradients and the
# same new weights. Together with the stepwise reports above, the block is now proven equal in
# all four steps, forward and backward.
#
# One step is all a port needs to prove here: every later step applies the same function to
# new weights. What a single step does not cover is state carried between steps (an optimiser's
# moments, BatchNorm's running statistics, a learning-rate schedule); port those with the same
# pattern, one piece at a time.

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
    block_torch, block_jax, Xs_np, shapes=new_lengths, target_s=S.bench_s, verbose=False,
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
# A warning is not a failure: it marks an item where the numbers alone do not decide, and a
# person has to. A benchmark whose timings were too noisy to trust, shapes that
# recompile, a dependency missing on one side: each is a question to answer before a switch,
# with the evidence printed next to it. The one hard requirement, equal outputs, is asserted.

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
# | GELU default | exact erf (`approximate="none"`) | tanh (`approximate=True`) |
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
# The training-only paths: dropout (different generators, broadcast masks), BatchNorm momentum
# and the biased/unbiased running variance, and the loss reduction (sum vs mean changes the
# effective learning rate).
# </details>
#
# <details><summary>3. Why run the steps eager → jit → distributed separately?</summary>
# Each step can break the equality for its own reasons (a semantic bug, a tracing problem such
# as Python control flow on values, a sharding mistake). Proving equality after each step
# localises the failure.
# </details>
#
# The cell below asks these questions again as a self-check, with one more on the OIHW and HWIO layouts of section 1: pick or type an answer and press *Check*. A wrong answer
# gets a hint, not the answer; *Show the answer* opens it. Where an executed copy's script
# does not run (GitHub's preview, an untrusted notebook) each answer is folded under its
# question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("07_migration")

# %% [markdown]
# **Next:** the exercises in `exercises/07_migration_exercises.ipynb` (a converter for a new
# layer type, finding the silent difference between two "identical" models, BatchNorm
# conventions, and a port proven by outputs and gradients).
