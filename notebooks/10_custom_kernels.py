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
# # 10 · Custom kernels: Triton and Pallas
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/10_custom_kernels.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/notebooks/10_custom_kernels.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=notebooks/10_custom_kernels.ipynb)
#
# When the compiler does not fuse what you need, both ecosystems let you write the kernel
# yourself: PyTorch users write **Triton**, JAX users write **Pallas** (which, on a GPU, lowers
# through Mosaic GPU or, on older GPUs and for some kernels, Triton). This lesson writes two
# kernels in both languages, a fused row-softmax and a tiled matrix product that accumulates
# across grid steps, registers the softmax with each framework so that compiling and
# differentiating keep working (and, in JAX, batching), and measures what leaving the
# compiler for host Python costs.
#
# **Learning objectives.** After this notebook you can
# 1. read and write a block-level kernel in Triton and in Pallas: program ids, block shapes,
#    index maps and masks for a ragged last block, and a tiled matmul that accumulates over K
#    in float32 (a `tl.dot` loop, a Pallas grid axis with `pl.when`), checked against the
#    framework's own op;
# 2. make a custom kernel a first-class op: `torch.library.custom_op` with `register_fake` and
#    `register_autograd` under `torch.compile(fullgraph=True)`, and `jax.custom_vjp` around a
#    `pallas_call` under `jit`, `grad` and `vmap`, with gradients proven equal to the reference;
# 3. choose between a kernel, a registered op and a host callback (`jax.pure_callback`, a
#    Python op in PyTorch), knowing what each costs under compilation on this machine.

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
    "rows": (250, 37),  # rows of the softmax input (not a multiple of the row block)
    "cols": (1000, 100),  # columns (not a power of two: the column block is masked)
    "block_rows": (8, 8),  # rows per Pallas program
    "batch": (4, 3),  # matrices in the vmapped batch
    "mm": ((250, 380, 200), (100, 200, 72)),  # (M, K, N) of the tiled matmul: no block divides them
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both, and one device kind for both.
SETUP = env.setup(one_kind=True)

import functools
import re

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from course_utils import claims, config, kernels, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())
torch_dev, jax_dev = SETUP.pair()

# %%
# Triton reads TRITON_INTERPRET when @triton.jit wraps a kernel: set it (no CUDA GPU) first.
TRITON = kernels.setup_triton()
if TRITON.available:
    import triton
    import triton.language as tl
print(TRITON.line())


# %%
# Pallas: one backend per kind of kernel, chosen from the device JAX computes on here (kernels.pallas_backend)
def pallas_backend(*args, **kwargs):  # JAX kept on the CPU (on a TPU machine too: see the setup line) interprets
    return kernels.choose_pallas_backend("cpu") if jax_dev.platform == "cpu" else kernels.pallas_backend(*args, **kwargs)


PALLAS = pallas_backend((S.block_rows, 128))  # the softmax: it has a plgpu version
PALLAS_BLOCKS = pallas_backend((S.block_rows, 128), mosaic_gpu=False)  # pallas_call
print(PALLAS.line())
print("pallas_call kernels:", PALLAS_BLOCKS.line())
# A program traced here may be compiled for CUDA, whose pallas_call is Triton's: filter for it too.
print(kernels.filter_triton_deprecation(PALLAS, *kernels.pallas_backends((S.block_rows, 128)).values()))

# %% [markdown]
# The lines above are this run's conditions. The last two cells say how each kernel language
# runs here. On a machine without a CUDA GPU, Triton runs in its **interpreter**
# (`TRITON_INTERPRET=1`, which Triton 3.7 reads when `@triton.jit` wraps a kernel, so it must
# be set before the first kernel is defined; the helper sets it before `triton` is even
# imported): each program of the grid is executed with NumPy, one after another. Pallas has no
# CPU backend either, so `pallas_call(..., interpret=True)` evaluates the kernel body with
# ordinary JAX operations, looping over the grid. On a CUDA GPU Triton compiles to PTX.
#
# Pallas has several GPU backends, and `kernels.pallas_backend` chooses one explicitly rather
# than leaving it to the installed jax's default:
#
# | device | Pallas backend | API |
# |---|---|---|
# | jax 0.10.2 or newer, and a GPU of sm_90+ (Hopper, Blackwell) or, from jax 0.11, sm_80+ (Ampere); blocks of 128 elements or more | **Mosaic GPU**, what the current Pallas GPU docs teach | `plgpu.kernel` (`jax.experimental.pallas.mosaic_gpu`) |
# | sm_80+ otherwise (older jax included), and kernels Mosaic GPU cannot take | **Triton**, deprecated since jax 0.11 | `pl.pallas_call(..., compiler_params=pltriton.CompilerParams())` |
# | a TPU | **Mosaic TPU**; blocks tiled by (8, 128) in their last two dimensions | `pl.pallas_call` |
# | below sm_80 (Colab's free T4 is sm_75), a CPU, a TPU block off the tiling | the **interpreter** | `pl.pallas_call(..., interpret=True)` |
#
# The Pallas cell above asks for the backend of the device JAX computes on in this lesson. On a
# TPU machine that is the CPU: PyTorch stays on the CPU there, and the lesson keeps JAX beside
# it (the setup line says so), so its Pallas kernels run in the interpreter; the TPU row is what
# a Pallas kernel gets where JAX computes on the chip.
#
# Since jax 0.9 a `pallas_call` without compiler parameters lowers through Mosaic GPU on a CUDA
# device, and since 0.10 that route is itself deprecated in favour of `plgpu.kernel`; so the lesson writes
# its softmax twice in Pallas, with `BlockSpec`s for `pallas_call` and once more for
# `plgpu.kernel`, and says which one runs. Kernels with blocks smaller than a Mosaic GPU
# warpgroup's 128 lanes (section 2's tiles) and the `pallas_call` demonstrations take the Triton
# backend on a GPU of sm_80 or newer, whose deprecation warning (jax 0.11 and later) is
# filtered by its message only, wherever a kernel may lower through it. The course's tests
# lower every kernel for CUDA (each backend the helper can pick) and for TPU on a CPU machine,
# with `jax.export`, so the GPU and TPU routes are checked even where they cannot run.
#
# Triton is an **optional extra**: its wheel is about 200 MB (about 690 MB installed), so the
# default install leaves it out. Without it, the Triton cell above says why and how to install
# it (`pip install ".[kernels]"`), every Triton cell below prints one line saying it was
# skipped, and the PyTorch side of the later sections runs
# on a plain PyTorch implementation of the same softmax. Installing it changes nothing else in
# the course: `torch.compile` on a CPU keeps generating C++ (checked with Triton 3.7.1
# installed; section 6 prints the names of the kernels Inductor generates here).

# %% [markdown]
# ## 1. One kernel, written twice: a fused row-softmax
#
# **Key concepts**
# - A **kernel** is one function that the device runs for many **programs** at once; each program
#   finds its share of the work from its **program id** (`tl.program_id(0)`, `pl.program_id(0)`).
# - **Fusion**: `softmax(x) = exp(x − max x) / Σ exp(x − max x)` written as five eager ops reads
#   the whole array five times and writes it three times (the cell below counts the bytes); one
#   kernel reads each row once, keeps it in fast memory (registers, shared memory, VMEM) and
#   writes the result once.
# - **Triton** works on pointers: the kernel computes addresses (`x_ptr + row * stride + cols`)
#   and loads with a **mask** for the addresses past the end of the row.
# - **Pallas** works on **refs** to blocks: a `BlockSpec` (block shape + index map) tells
#   `pallas_call` which block of the array each program sees; the kernel reads `x_ref[...]`.
#
# Softmax is the textbook first kernel because it has all the ingredients: a reduction (the
# max and the sum along a row), elementwise work, a numerically necessary subtraction of the
# maximum (without it, `exp` overflows for inputs above about 88 in float32), and a row length
# that rarely matches the block size the hardware likes (a power of two). The row length here,
# `S.cols`, is deliberately not a power of two, and the number of rows is not a multiple of the
# row block, so both kernels must handle ragged edges.

# %%
x_np = np.random.default_rng(0).normal(size=(S.rows, S.cols)).astype(np.float32) * 3
x_torch = torch.from_numpy(x_np).to(torch_dev)
x_jax = jnp.asarray(x_np)
print(f"input {x_np.shape}, float32, values up to {np.abs(x_np).max():.1f}")

# %% [markdown]
# What fusion saves, counted for this input: each eager op reads its operands from memory and
# writes its result back, so the five ops of the formula move the whole array several times,
# while one kernel reads it once and writes it once. The counts below are the least each op
# must move (every operand read once, the result written once), in float32 bytes; a row's
# maximum or sum is one number per row.

# %%
n_elems, n_rows_x, f32 = S.rows * S.cols, S.rows, 4  # the array, one value per row, bytes
EAGER_TRAFFIC = {  # op: (elements read, elements written)
    "m = max(x, row)": (n_elems, n_rows_x),
    "d = x - m": (n_elems + n_rows_x, n_elems),
    "e = exp(d)": (n_elems, n_elems),
    "s = sum(e, row)": (n_elems, n_rows_x),
    "y = e / s": (n_elems + n_rows_x, n_elems),
}
eager_bytes = sum(r + w for r, w in EAGER_TRAFFIC.values()) * f32
fused_bytes = 2 * n_elems * f32  # read x once, write y once
rows_md = "".join(f"| {op} | {r * f32:,} | {w * f32:,} |\n" for op, (r, w) in EAGER_TRAFFIC.items())
display(Markdown("| op | bytes read | bytes written |\n|---|---:|---:|\n" + rows_md
                 + f"| **five eager ops** | | **{eager_bytes:,}** in all |\n| **one fused kernel** | {n_elems * f32:,} | {n_elems * f32:,} |"))
print(f"eager / fused memory traffic: {eager_bytes / fused_bytes:.2f}x the bytes")

# %% [markdown]
# The ratio printed is computed from the shapes, not timed: a softmax does a handful of
# arithmetic operations per element, so on a GPU its time is set by the bytes moved, and the
# eager chain moves that many times the fused kernel's bytes. Whether a compiler already
# fused the chain is a separate question, measured in section 6.

# %% [markdown]
# The PyTorch side: one Triton program per row. The program reads its row with a block of
# `BLOCK` columns, the smallest power of two at or above the row length; the mask
# `cols < n_cols` turns the loads past the end into `-inf`, which contributes `exp(-inf) = 0`
# to the sum, and keeps the stores past the end from writing anything. The cell defines the
# kernel only when Triton is installed; the next cell launches it.

# %%
# PyTorch: a Triton kernel (one program per row)
if TRITON.available:

    @triton.jit
    def softmax_kernel_triton(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)  # (BLOCK,) column offsets
        mask = cols < n_cols  # the ragged end of the row
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)  # subtract the row's maximum: exp cannot overflow
        e = tl.exp(x)
        tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)

else:
    print(TRITON.skipped())

# %%
# PyTorch: the launcher (a grid of one program per row), checked against torch.softmax
if TRITON.available:

    def softmax_triton(x):
        x = x.contiguous()
        y = torch.empty_like(x)
        grid = (x.shape[0],)  # one program per row
        softmax_kernel_triton[grid](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y

    y_triton = softmax_triton(x_torch)
    assert_close(y_triton, torch.softmax(x_torch, dim=-1), rtol=1e-5, atol=1e-7)
    print(f"Triton kernel vs torch.softmax: max abs error {(y_triton - torch.softmax(x_torch, -1)).abs().max().item():.2e}")
else:
    print(TRITON.skipped())


# %% [markdown]
# How to read the two Triton cells, line by line. `@triton.jit` compiles the function for the
# GPU (or hands it to the interpreter); its arguments are pointers (a tensor passed to a kernel
# is its address), plain integers, and `tl.constexpr` values, which are fixed when the kernel
# is compiled, so `BLOCK` must be a compile-time power of two and each new value compiles a new
# kernel. `kernel[grid](...)` launches one program per point of the grid (here `grid =
# (rows,)`: one per row). Inside, every variable is a whole block: `cols` is a vector of
# `BLOCK` offsets, `x` a vector of `BLOCK` values, and `tl.max`/`tl.sum` reduce it. The row's
# address uses the stride, so the launcher makes the input contiguous first; a transposed view
# would otherwise be read in the wrong order. The printed error is the largest difference from
# `torch.softmax` over every element.

# %% [markdown]
# The JAX side: one Pallas program per block of `block_rows` rows. The `BlockSpec` says that
# program `i` sees the block at block index `(i, 0)`, that is rows `i·block_rows` to
# `(i+1)·block_rows` and every column, padded to a power of two. Pallas has no pointer
# arithmetic: the kernel reads the whole block with `x_ref[...]`, and builds its own mask from a
# column index (`lax.broadcasted_iota`), because the padding is not part of the row. As on the
# PyTorch side, the kernel and its launcher are two cells.

# %%
# JAX: a Pallas kernel (one program per block of rows)
def softmax_kernel_pallas(x_ref, y_ref, *, n_cols):
    x = x_ref[...]  # (block_rows, block_cols)
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)  # the mask: padding counts as -inf
    x = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x)
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


# %%
# JAX: the launcher (a grid of one program per block of rows, on whole blocks)
def softmax_pallas_blocks(x, block_rows=S.block_rows, kernel=softmax_kernel_pallas):
    n_rows, n_cols = x.shape
    block = (block_rows, pl.next_power_of_2(n_cols))
    x_pad = kernels.pad_to_blocks(x, block)  # NaN up to whole blocks: no access leaves the array
    spec = pl.BlockSpec(block_shape=block, index_map=lambda i: (i, 0))

    def launch(backend):  # the pallas_call for one backend
        return pl.pallas_call(
            functools.partial(kernel, n_cols=n_cols),
            out_shape=jax.ShapeDtypeStruct(x_pad.shape, x.dtype),
            grid=(x_pad.shape[0] // block_rows,),  # enough blocks to cover every row
            in_specs=[spec],
            out_specs=spec,
            interpret=backend.interpret,
            compiler_params=backend.compiler_params(),
        )

    y_pad = kernels.per_platform(launch, kernels.pallas_backends(block))(x_pad)
    return y_pad[:n_rows, :n_cols]


# %% [markdown]
# How to read the Pallas cells. The kernel receives **refs**, mutable views of the blocks this
# program owns, one per input and one per output, and writes its result by assigning to the
# output ref. `functools.partial` fixes `n_cols` as a Python integer, a static value in the
# kernel like Triton's `constexpr`. `out_shape` declares the result (Pallas cannot infer it),
# and `in_specs`/`out_specs` give one `BlockSpec` per input and output. `BlockSpec` is built
# with keyword arguments here: its positional order has changed across jax releases (the
# current order is `block_shape`, then `index_map`), and keywords read the same in all of them
# (the course runs on jax 0.7.2 and the newest). `interpret` and `compiler_params` come from
# the chosen backend: `interpret=True` for the interpreter, and on the Triton backend
# `pltriton.CompilerParams()` (`from jax.experimental.pallas import triton as pltriton`), which
# selects Triton explicitly; a jax whose default is Mosaic GPU would otherwise lower there.
#
# **One call per platform.** The launcher builds its `pallas_call` once per backend:
# `kernels.pallas_backends(block)` gives the backend for each platform the program may be
# compiled for (this device's choice for its own platform, a Hopper GPU's and a TPU's for the
# others, the interpreter for the CPU), and `kernels.per_platform` hands the calls to
# `jax.lax.platform_dependent` under `jit`, which keeps the one for the platform the program
# is compiled for. A jitted program traced here therefore also compiles for a GPU or a TPU,
# interpreter off. An export (lesson 06) is made for one platform at a time:
# `platforms=["tpu"]` holds the Mosaic kernel, and `platforms=["cuda"]` the Triton one only
# with the custom-call safety check disabled for it
# (`disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(name)]`, with the name the
# refusal prints), since JAX promises no compatibility for that call. An export for several platforms fails: each branch is lowered for every one of them.
#
# **Whole blocks.** `kernels.pad_to_blocks` pads the input with NaN up to a whole number of
# blocks, and the launcher slices the result back. Without it, the last block of rows and every
# block's padded columns would reach past the array, and what happens there is the backend's
# business: the interpreter reads NaN and drops the writes, Mosaic TPU clips its copies, but
# Pallas's Triton backend loads and stores such a block without a mask (the course's tests read
# its generated IR), so on a GPU it would read the next row or past the end of the buffer and
# write there. Padding makes every backend read and write inside the array; the NaN makes a
# missing mask visible on all of them.

# %% [markdown]
# **The same kernel for Mosaic GPU.** `plgpu.kernel` has no `BlockSpec`s: each program gets
# the whole arrays (in GPU global memory) and slices its rows itself with `pl.ds(start, size)`
# from its grid index (`jax.lax.axis_index`), as a Triton program computes its offsets. An
# array in a Mosaic GPU kernel lives in the registers of a **warpgroup** (128 threads) in a
# **layout**; the WGMMA layout used here spreads a 64-row block over them and supports row
# reductions, so the block has 64 rows, the loaded block and the column index are given that
# layout (`plgpu.load(..., layout=...)`, `plgpu.layout_cast`), and a row's maximum is broadcast
# back with `lax.broadcast_in_dim`. The launcher pads to whole blocks as before.

# %%
# JAX: the softmax for Mosaic GPU (plgpu.kernel, one program per 64 rows)
MGPU_BLOCK_ROWS = 64  # the WGMMA layout's rows


def softmax_kernel_mgpu(x_ref, y_ref, *, n_cols):
    rows = pl.ds(jax.lax.axis_index("i") * MGPU_BLOCK_ROWS, MGPU_BLOCK_ROWS)
    x = plgpu.load(x_ref, (rows, slice(None)), layout=plgpu.Layout.WGMMA, optimized=False)
    cols = plgpu.layout_cast(jax.lax.broadcasted_iota(jnp.int32, x.shape, 1), plgpu.Layout.WGMMA)
    x = jnp.where(cols < n_cols, x, -jnp.inf)  # the same mask
    per_row = functools.partial(jax.lax.broadcast_in_dim, shape=x.shape, broadcast_dimensions=(0,))
    x = x - per_row(jnp.max(x, axis=1))
    e = jnp.exp(x)
    y_ref[rows, :] = e / per_row(jnp.sum(e, axis=1))


def softmax_mgpu(x):
    n_rows, n_cols = x.shape
    x_pad = kernels.pad_to_blocks(x, (MGPU_BLOCK_ROWS, pl.next_power_of_2(n_cols)))
    kernel = plgpu.kernel(functools.partial(softmax_kernel_mgpu, n_cols=n_cols), out_type=jax.ShapeDtypeStruct(x_pad.shape, x.dtype),
                          grid=(x_pad.shape[0] // MGPU_BLOCK_ROWS,), grid_names=("i",))
    return kernel(x_pad)[:n_rows, :n_cols]


# %%
# JAX: the chosen backend's kernel
softmax_pallas = softmax_mgpu if PALLAS.name == "mosaic_gpu" else softmax_pallas_blocks
y_pallas = softmax_pallas(x_jax)
print(f"softmax_pallas is {softmax_pallas.__name__} ({PALLAS.name})")

# %% [markdown]
# Mosaic GPU has no interpreter for `plgpu.load`, so where the chosen backend is not Mosaic GPU
# (the line above names the one in use) the cells only define `softmax_mgpu`; the course's tests lower it for CUDA on every run
# and check its body, with plain loads, against `jax.nn.softmax`. The two Pallas kernels
# differ in what the hardware asks for (a 64-row block in a register layout, versus `block_rows`
# rows in a `BlockSpec`), not in the algorithm: load, mask, subtract the maximum, exponentiate,
# divide by the sum.

# %%
assert_close(y_pallas, jax.nn.softmax(x_jax, axis=-1), rtol=1e-5, atol=1e-7)
pallas_err = float(jnp.abs(y_pallas - jax.nn.softmax(x_jax, axis=-1)).max())
print(f"Pallas kernel vs jax.nn.softmax: max abs error {pallas_err:.2e}")
if TRITON.available:
    assert_close(y_triton, y_pallas, rtol=1e-5, atol=1e-7)
    print(f"Triton vs Pallas: max abs error {np.abs(y_triton.cpu().numpy() - np.asarray(y_pallas)).max():.2e}")
else:
    print(TRITON.skipped())


# %% [markdown]
# Each kernel agrees with its framework's own softmax within the cell's tolerance (`rtol=1e-5`,
# `atol=1e-7`; the lines above print the largest difference over every element), and, where
# Triton is installed, the two kernels agree with each other within the same tolerance. They
# still differ in what each program does: a Triton program owns one row and a vector of
# columns, a Pallas program owns a 2-D block of rows. Both are common; the next section draws
# the mapping.
#
# **The mask is not optional.** The padded columns of a block are not part of the row: here
# they hold the launcher's NaN; in a block that overhangs an unpadded array they would hold
# whatever the backend leaves there (NaN in the interpreter, other values on a device). Here is
# the same kernel without the `jnp.where`, through the same `pallas_call` launcher:

# %%
def softmax_kernel_unmasked(x_ref, y_ref, *, n_cols):  # n_cols unused: no mask
    x = x_ref[...]
    x = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x)
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


y_unmasked = softmax_pallas_blocks(x_jax, kernel=softmax_kernel_unmasked)
with expect_error(AssertionError, lines=2):
    assert_close(y_unmasked, jax.nn.softmax(x_jax, axis=-1), name="unmasked Pallas softmax")

# %% [markdown]
# The padding leaks into the maximum and the sum, and every row is wrong, not only the last
# block: the ragged edge here is in the columns, which every row has. The fix is the mask of
# the kernel above. Triton's version of the same mistake (a load without `mask=`) reads past the
# end of the row, into the next row or past the end of the tensor: on a GPU that is either
# silently wrong or an illegal memory access, which is why Triton's `tl.load` takes `mask` and
# `other` in one call.

# %% [markdown]
# ## 2. Blocks and grids, side by side
#
# **Key concepts**
# - The **grid** is the set of programs: `kernel[grid](...)` in Triton, `grid=` in
#   `pallas_call`. A 2-D grid `(gm, gn)` gives each program two ids.
# - **Triton**: the program turns its ids into element offsets itself,
#   `rows = pid_m * BM + tl.arange(0, BM)`, and masks what falls outside the array.
# - **Pallas**: the `index_map` turns program ids into *block* indices, `lambda i, j: (i, j)`;
#   Pallas multiplies by the block shape (the Pallas cell below, after the Triton one, adds two zeros for a layout TPUs take). Whether the writes of a block that overhangs the
#   array are dropped depends on the backend: the interpreter and Mosaic TPU drop them, Pallas's
#   Triton backend stores them unmasked. A portable launcher allocates whole blocks and slices.
# - `cdiv(n, block)` (`triton.cdiv`, `pl.cdiv`) is the number of blocks that cover `n` elements.
#
# To see which program computes which tile, each kernel below writes its own program number
# into its tile of a 10 × 12 output, with 4 × 8 blocks. Neither 10 nor 12 is a multiple of the
# block, so the last row of blocks and the last column of blocks overhang the array. A 4 × 8
# block has 32 elements, fewer than the 128 lanes over which Mosaic GPU spreads an array, so
# at this size the Pallas tiles cannot be written for Mosaic GPU: on a GPU they take the
# Triton backend (the helper says why), and the interpreter where that is missing.

# %%
TILE_SHAPE, TILE_BLOCK = (10, 12), (4, 8)
tile_grid = (pl.cdiv(TILE_SHAPE[0], TILE_BLOCK[0]), pl.cdiv(TILE_SHAPE[1], TILE_BLOCK[1]))
PALLAS_TILES = pallas_backend((None, None, *TILE_BLOCK), array_shape=(*tile_grid, *TILE_BLOCK))
print(f"array {TILE_SHAPE}, blocks {TILE_BLOCK}: grid {tile_grid} = {tile_grid[0] * tile_grid[1]} programs")
print("tiles:", PALLAS_TILES.line())
print(kernels.filter_triton_deprecation(*kernels.pallas_backends(TILE_BLOCK).values()))

# %%
# PyTorch: Triton computes element offsets and masks them
if TRITON.available:

    @triton.jit
    def tile_ids_kernel_triton(out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rows = pid_m * BM + tl.arange(0, BM)[:, None]  # (BM, 1)
        cols = pid_n * BN + tl.arange(0, BN)[None, :]  # (1, BN)
        mask = (rows < M) & (cols < N)  # the overhanging part of an edge block
        program = pid_m * tl.num_programs(1) + pid_n
        tl.store(out_ptr + rows * N + cols, tl.full((BM, BN), 0, tl.int32) + program, mask=mask)

    ids_triton = torch.full(TILE_SHAPE, -1, dtype=torch.int32, device=torch_dev)
    tile_ids_kernel_triton[tile_grid](ids_triton, *TILE_SHAPE, BM=TILE_BLOCK[0], BN=TILE_BLOCK[1])
    print(ids_triton.cpu().numpy())
else:
    print(TRITON.skipped())


# %%
# JAX: Pallas maps program ids to block indices; whole blocks, sliced to the array
def tile_ids_kernel_pallas(out_ref):
    program = pl.program_id(0) * pl.num_programs(1) + pl.program_id(1)
    out_ref[...] = jnp.full(out_ref.shape, program, jnp.int32)  # (BM, BN), no mask needed


def tile_ids_pallas():
    tiles = (*tile_grid, *TILE_BLOCK)  # (gm, gn, BM, BN): tile (i, j) at [i, j]
    spec = pl.BlockSpec(block_shape=(None, None, *TILE_BLOCK), index_map=lambda i, j: (i, j, 0, 0))

    def launch(backend):
        return pl.pallas_call(tile_ids_kernel_pallas, out_shape=jax.ShapeDtypeStruct(tiles, jnp.int32), grid=tile_grid,
                              out_specs=spec, interpret=backend.interpret, compiler_params=backend.compiler_params())

    ids = kernels.per_platform(launch, kernels.pallas_backends(spec.block_shape, array_shape=tiles))()
    ids = ids.transpose(0, 2, 1, 3).reshape(tile_grid[0] * TILE_BLOCK[0], -1)  # (gm·BM, gn·BN)
    return ids[: TILE_SHAPE[0], : TILE_SHAPE[1]]


ids_pallas = tile_ids_pallas()
print(np.asarray(ids_pallas))

# %% [markdown]
# The two cells state the same tiling in two ways. Triton's kernel computes, for each program,
# the row and column offsets of its elements, a `(BM, 1)` column of rows and a `(1, BN)` row of
# columns that broadcast to a `(BM, BN)` block of addresses, and needs a mask so that the
# overhanging programs do not write past the end of a row (which would land in the next row)
# or past the end of the array. Pallas's kernel never sees an offset: the `index_map` names
# the block and Pallas slices it. The launcher gives the kernel whole blocks and keeps the top
# left 10 × 12: the interpreter would also have dropped the overhanging writes into a 10 × 12
# output, but that is the interpreter's (and Mosaic TPU's) behaviour, not Pallas's on every
# backend. It also stores the tiles as a (3, 2, 4, 8) array, tile (i, j) at `[i, j]` (the
# `None`s in the block shape squeeze the two grid dimensions, so the kernel still sees a
# 4 × 8 block), and transposes and reshapes them into the 12 × 16 picture: Mosaic TPU accepts a
# block smaller than (8, 128) only where it spans those dimensions whole, as here. An output
# filled with -1 before the Triton launch would show any element no program wrote; where
# Triton ran, the next cell checks that none is left.

# %%
expected_ids = np.add.outer(np.arange(TILE_SHAPE[0]) // TILE_BLOCK[0] * tile_grid[1],
                            np.arange(TILE_SHAPE[1]) // TILE_BLOCK[1])
assert_close(ids_pallas, expected_ids, name="Pallas tile ids")
if TRITON.available:
    assert_close(ids_triton, ids_pallas, name="Triton vs Pallas tile ids")
print("every element was written by the program the block arithmetic predicts")

# %% [markdown]
# Both maps match the arithmetic `program = (row // BM) · gn + col // BN`: every element holds
# the number of the program whose block covers it, and no program wrote into another's tile (a
# Triton store past the end of a row, left unmasked, would land in the next row, another
# program's tile, and overwrite its number).
# The picture draws the same map, with the blocks' outlines: each colour is one program (the
# legend names its number and block), each outline a block, and a dashed outline overhangs the
# array's edge, the part of the block that Triton's mask and the Pallas launcher's slice discard.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
kernels.plot_tiles(ids_pallas, TILE_BLOCK, ax=axes[0], title="Pallas: index_map (i, j) -> block (i, j)")
if TRITON.available:
    kernels.plot_tiles(ids_triton.cpu().numpy(), TILE_BLOCK, ax=axes[1], title="Triton: offsets pid * B + arange(B)")
else:
    axes[1].text(0.5, 0.5, "Triton not installed:\n" + 'pip install ".[kernels]"', ha="center", va="center")
    axes[1].set_axis_off()
fig.tight_layout()

# %% [markdown]
# The softmax of section 1 used the same machinery with a 1-D grid: Triton's programs each own
# one row (`grid = (rows,)`), Pallas's each own `block_rows` rows (`grid = (cdiv(rows,
# block_rows),)`); the last Pallas block overhangs the array by
# `cdiv(rows, block_rows) · block_rows − rows` rows, padding whose results the slice discards. A
# row block is a choice, not a rule: on a GPU, more rows per program mean fewer, bigger
# programs; on a TPU, blocks must also match the (8, 128) vector tiling.

# %% [markdown]
# ## 3. A kernel that accumulates across grid steps: tiled matrix multiplication
#
# **Key concepts**
# - **The memory hierarchy.** A kernel's data lives in large, slow off-chip memory; arithmetic
#   happens in registers; between them sits a small, fast on-chip memory. A kernel is fast when
#   it loads each value from the slow level as few times as possible and reuses it from the
#   fast ones.
# - **Tiling** a matrix product `C = A·B` (`M × K` by `K × N`): each program computes one
#   `BM × BN` tile of `C`, walking along `K` in steps of `BK`, so each loaded tile of `A` is
#   used for `BN` columns of the output and each tile of `B` for `BM` rows.
# - **Accumulating across steps.** Triton loops over `K` inside the program and keeps the sum
#   in a register tile (`acc += tl.dot(a, b)`). Pallas makes `K` the **last grid axis**: the
#   output's `index_map` ignores it, so one output block stays in fast memory across those
#   steps, `pl.when(k == 0)` zeroes it on the first and every step adds its product.
# - **Accumulate in float32** whatever the inputs' dtype (`tl.zeros(..., tl.float32)`,
#   `preferred_element_type=jnp.float32`): a long sum in a low precision loses digits.
#
# | level | on a CUDA GPU | on a TPU | size (order of magnitude) | who fills it |
# |---|---|---|---|---|
# | off-chip DRAM | HBM ("global memory", GMEM) | HBM | tens to hundreds of GB per chip | the program's inputs and outputs live here |
# | on-chip SRAM | shared memory (SMEM), per SM | VMEM, per TensorCore | up to 228 KB per H100 SM; 16 to 192 MiB per TPU core | Triton's compiler stages `tl.load`ed tiles; Pallas copies each `BlockSpec` block in and out |
# | registers | each thread's registers | vector registers (VREGs) | 256 KB per H100 SM | the compiler, from the kernel's values (`acc`, `x`) |
#
# The sizes are orders of magnitude from the vendors' documentation (NVIDIA's for an H100 SM,
# the TPU hardware reference of the Pallas docs for a TPU core), not measured here; what
# matters is the ratio: the fast level is about a hundred (a TPU v5e core's 128 MiB of VMEM
# against 16 GB of HBM) to hundreds of thousands of times (an H100 SM's 228 KB against 80 GB)
# smaller than HBM, so a kernel holds a tile there, not the large matrices kernels are written
# for. How much tiling saves is arithmetic, and the next cell does it
# for this lesson's shapes: computing one output element at a time reads a row of `A` and a
# column of `B` per element, while a tiled program reads a `BM × K` strip of `A` and a `K × BN`
# strip of `B` once for the whole tile.

# %%
M, K, N = S.mm
MM_TRITON_BLOCK = 64  # BM = BN = BK for Triton: tl.dot takes blocks of 16 or more
MM_BLOCK = 128  # Pallas: (128, 128) blocks meet Mosaic TPU's (8, 128) tiling
untiled_loads = 2 * M * N * K  # a row of A and a column of B per output element


def tiled_loads(bm, bn, k_pad):  # each program loads its strips of A and B once, K padded to k_pad
    return pl.cdiv(M, bm) * pl.cdiv(N, bn) * (bm + bn) * k_pad


MM_K_PAD = {"Triton": pl.cdiv(K, MM_TRITON_BLOCK) * MM_TRITON_BLOCK,  # whole steps of BK
            "Pallas": pl.cdiv(pl.next_power_of_2(K), MM_BLOCK) * MM_BLOCK}  # as matmul_pallas pads it, below
print(f"C = A @ B with (M, K, N) = {(M, K, N)}: {untiled_loads:,} element loads one element at a time")
for name, b in (("Triton", MM_TRITON_BLOCK), ("Pallas", MM_BLOCK)):
    loads = tiled_loads(b, b, MM_K_PAD[name])
    print(f"{name} tiles of {b} x {b}, K padded to {MM_K_PAD[name]}: {loads:,} loads, {untiled_loads / loads:.1f}x fewer")

# %% [markdown]
# Counted, not timed: the saving grows with the tile's side (square `B × B` tiles divide the
# loads by about `B` when the matrices are large), and the padding of a ragged last tile eats
# into it, which is why the printed factors are below the block sizes for these small, ragged
# shapes. The count takes every position of a program's strips as a load: the Pallas launcher
# really loads its zero padding, while Triton's masks skip the lanes past the edges, so for
# Triton the printed loads are an upper bound (its lanes, not its bytes from memory). The
# Pallas launcher below pads `K` to a whole number of its blocks that is also a power of two
# (its Triton route needs one), which can be more than whole blocks alone need, and the count
# pads it the same way, so the printed Pallas loads are the launcher's. The price is fast
# memory: a tile must fit in the table's on-chip SRAM, and that bound, with the registers each
# program needs for its accumulator, is what sets the block sizes.
#
# The Triton side: a 2-D grid of programs, each owning one `BM × BN` tile of `C`. The program
# builds the row and column offsets of its tile as in section 2, then loops over `K` in steps of
# `BK`, loading a `BM × BK` tile of `A` and a `BK × BN` tile of `B` with masks (`other=0.0`: a
# zero beyond the edge of `K` adds nothing to the sum) and adding their product to a float32
# accumulator. The store is masked like the tile-ids kernel's.

# %%
# PyTorch: a tiled Triton matmul (one program per tile of C, a loop over K)
if TRITON.available:

    @triton.jit
    def matmul_kernel_triton(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rows = tl.program_id(0) * BM + tl.arange(0, BM)  # (BM,) rows of this tile
        cols = tl.program_id(1) * BN + tl.arange(0, BN)  # (BN,) columns
        acc = tl.zeros((BM, BN), dtype=tl.float32)  # the sum, in registers, in float32
        for k in range(0, tl.cdiv(K, BK)):  # one step along K per iteration
            ks = k * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + rows[:, None] * s_am + ks[None, :] * s_ak, mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * s_bk + cols[None, :] * s_bn, mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")  # ieee: full float32, as torch.matmul here
        tl.store(c_ptr + rows[:, None] * s_cm + cols[None, :] * s_cn, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))

else:
    print(TRITON.skipped())

# %%
# PyTorch: the launcher (a grid of cdiv(M, BM) x cdiv(N, BN) programs), checked against torch.matmul
a_np = np.random.default_rng(2).normal(size=(M, K)).astype(np.float32)
b_np = np.random.default_rng(3).normal(size=(K, N)).astype(np.float32)
a_torch, b_torch = torch.from_numpy(a_np).to(torch_dev), torch.from_numpy(b_np).to(torch_dev)
if TRITON.available:

    def matmul_triton(a, b, block=MM_TRITON_BLOCK):
        c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float32, device=a.device)
        grid = (triton.cdiv(a.shape[0], block), triton.cdiv(b.shape[1], block))
        matmul_kernel_triton[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], *a.stride(), *b.stride(), *c.stride(),
                                   BM=block, BN=block, BK=block)
        return c

    c_triton = matmul_triton(a_torch, b_torch)
    assert_close(c_triton, torch.matmul(a_torch, b_torch), rtol=1e-5, atol=1e-4, name="Triton matmul")
    print(f"Triton matmul vs torch.matmul: max abs error {(c_triton - a_torch @ b_torch).abs().max().item():.2e}")
else:
    print(TRITON.skipped())


# %% [markdown]
# How to read the Triton matmul. The grid is 2-D, `(cdiv(M, BM), cdiv(N, BN))`, one program
# per output tile, exactly as the tile-ids kernel of section 2; what is new is the loop. Its
# bound `tl.cdiv(K, BK)` is a runtime value, so Triton compiles a real loop (not an unrolled
# one) whose carried value is the accumulator `acc`, a `BM × BN` block that lives in registers
# for the whole loop and is written to memory once, by the final `tl.store`. Each iteration
# loads two tiles whose masks cover two edges: rows of `A` past `M` and columns of `B` past
# `N` (the ragged edges of the output), and the positions past `K` in both (the ragged last
# step), where `other=0.0` makes the padding contribute `0 · 0 = 0`. `tl.dot` multiplies the
# two tiles. For float32 inputs, `input_precision="ieee"` keeps them in full float32, which on
# a GPU means the ordinary float32 units, not the tensor cores: Triton sends a float32 `tl.dot`
# to the tensor cores only in a lower precision, TF32 as one product (`"tf32"`) or as three
# that recover most of float32's precision (`"tf32x3"`), or, in Triton 3.7, the inputs split
# into three or six bfloat16 products (`"bf16x3"`, `"bf16x6"`). The default, `"tf32"`, would
# take the first on Ampere and newer GPUs, cutting the inputs to 10 bits of mantissa first, and
# the parity check against `torch.matmul` in float32 would fail.
# The launcher passes every stride, so the kernel would read a transposed view correctly (its
# addresses follow the strides, not an assumed row-major layout). The JAX side: a 3-D grid
# `(i, j, k)`, the reduction axis last. The `BlockSpec`s hand program `(i, j, k)` the block
# `(i, k)` of `A` and `(k, j)` of `B`; the output's index map returns `(i, j)` for every `k`,
# so the programs along `k` revisit one output block, which Pallas keeps in fast memory (VMEM
# on a TPU) and writes back once, after the last step along `k`, when `(i, j)` changes. The
# kernel zeroes it when `pl.program_id(2) == 0` and adds its product at every step.

# %%
# JAX: a tiled Pallas matmul (grid (i, j, k); the output block accumulates over k)
def matmul_kernel_pallas(a_ref, b_ref, c_ref):
    @pl.when(pl.program_id(2) == 0)  # the first step along K: start the sum at zero
    def _():
        c_ref[...] = jnp.zeros(c_ref.shape, c_ref.dtype)

    c_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def matmul_kernel_pallas_loop(a_ref, b_ref, c_ref, *, block):  # Pallas's Triton backend: K in a loop
    def step(k, acc):
        ks = pl.ds(k * block, block)
        return acc + jnp.dot(a_ref[:, ks], b_ref[ks, :], preferred_element_type=jnp.float32)

    c_ref[...] = jax.lax.fori_loop(0, a_ref.shape[1] // block, step, jnp.zeros(c_ref.shape, jnp.float32))


# %%
# JAX: the launcher, on whole blocks padded with zeros; the grid over K where programs run in order
def matmul_pallas(a, b, block=MM_BLOCK):
    (m, k), n = a.shape, b.shape[1]
    k_pad = pl.cdiv(pl.next_power_of_2(k), block) * block  # a power of two: Triton's blocks need one
    m_pad, n_pad = pl.cdiv(m, block) * block, pl.cdiv(n, block) * block  # whole blocks
    a_pad = jnp.pad(a, ((0, m_pad - m), (0, k_pad - k)))  # zeros: padding along K adds nothing
    b_pad = jnp.pad(b, ((0, k_pad - k), (0, n_pad - n)))
    out = jax.ShapeDtypeStruct((a_pad.shape[0], b_pad.shape[1]), jnp.float32)
    gm, gn = out.shape[0] // block, out.shape[1] // block

    def launch(backend):
        params = dict(out_shape=out, interpret=backend.interpret, compiler_params=backend.compiler_params())
        if backend.name == "triton":  # programs run at once: each loops over K itself
            return pl.pallas_call(functools.partial(matmul_kernel_pallas_loop, block=block), grid=(gm, gn),
                                  in_specs=[pl.BlockSpec(block_shape=(block, k_pad), index_map=lambda i, j: (i, 0)),
                                            pl.BlockSpec(block_shape=(k_pad, block), index_map=lambda i, j: (0, j))],
                                  out_specs=pl.BlockSpec(block_shape=(block, block), index_map=lambda i, j: (i, j)), **params)
        return pl.pallas_call(matmul_kernel_pallas, grid=(gm, gn, k_pad // block),  # K last: the accumulating axis
                              in_specs=[pl.BlockSpec(block_shape=(block, block), index_map=lambda i, j, k: (i, k)),
                                        pl.BlockSpec(block_shape=(block, block), index_map=lambda i, j, k: (k, j))],
                              out_specs=pl.BlockSpec(block_shape=(block, block), index_map=lambda i, j, k: (i, j)), **params)

    return kernels.per_platform(launch, kernels.pallas_backends((block, block)))(a_pad, b_pad)[:m, :n]


# %%
a_jax, b_jax = jnp.asarray(a_np), jnp.asarray(b_np)
c_pallas = matmul_pallas(a_jax, b_jax)
assert_close(c_pallas, jnp.dot(a_jax, b_jax), rtol=1e-5, atol=1e-4, name="Pallas matmul")
print(f"Pallas matmul vs jnp.dot: max abs error {float(jnp.abs(c_pallas - jnp.dot(a_jax, b_jax)).max()):.2e}")
MM_K_STEPS = MM_K_PAD["Pallas"] // MM_BLOCK  # K padded as the launcher pads it
MM_BACKEND = pallas_backend((MM_BLOCK, MM_BLOCK), mosaic_gpu=False)  # this device's route in matmul_pallas
if MM_BACKEND.name == "triton":  # the loop kernel: a 2-D grid, K inside each program
    print(f"Pallas grid here ({MM_BACKEND.name}): {(pl.cdiv(M, MM_BLOCK), pl.cdiv(N, MM_BLOCK))} programs along (i, j), "
          f"each looping over {MM_K_STEPS} steps of K")
else:
    print(f"Pallas grid here ({MM_BACKEND.name}): {(pl.cdiv(M, MM_BLOCK), pl.cdiv(N, MM_BLOCK), MM_K_STEPS)} programs along (i, j, k)")
if TRITON.available:
    assert_close(c_triton, c_pallas, rtol=1e-5, atol=1e-4, name="Triton vs Pallas matmul")
    print(f"Triton vs Pallas matmul: max abs error {np.abs(c_triton.cpu().numpy() - np.asarray(c_pallas)).max():.2e}")
else:
    print(TRITON.skipped())

# %% [markdown]
# Both tiled products equal their framework's `matmul` to float32 rounding, and, where Triton
# is installed, each other:
# such errors grow with `K` (each output is a sum of `K` products, added in a different order
# by each kernel), which is why the tolerance has an absolute part. The grid line gives this
# device's Pallas grid: where it has a `k` axis, the number of programs along `k` that
# accumulate into each output block; on Pallas's Triton backend (a GPU of sm_80 or newer), a
# 2-D grid whose programs loop over `K`.
#
# **Why two Pallas kernels.** Accumulating across grid steps needs the steps to run in order.
# On a TPU they do: the grid is a loop on each TensorCore, `k` fastest, and
# `pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary"))` (`from
# jax.experimental.pallas import tpu as pltpu`) would let a chip with two TensorCores split
# `i` and `j` between them, while `k`, which carries the sum, stays "arbitrary" (in order). The
# interpreter also runs the grid in order. On Pallas's Triton backend, the route this matmul
# takes on a GPU of sm_80 or newer, every program of the grid runs at once, in no order, as in
# Triton itself, so programs along `k` would read and write one output block in global memory at the same time,
# a race. (Mosaic GPU's `pallas_call` can run a grid axis in order, marked `"sequential"` in
# `plgpu.CompilerParams(dimension_semantics=...)`; the lesson leaves that deprecated route
# alone.) The launcher therefore gives Pallas's Triton backend the other kernel, whose 2-D grid hands each program whole strips of `A` and `B` and loops over `K`
# inside (`jax.lax.fori_loop` over `pl.ds` slices of the refs), as the Triton kernel does; it
# pads `K` to a power of two because that backend's blocks must be powers of two.
# The course's tests lower both routes, for CUDA and for TPU, and run each route's kernel in
# the interpreter against `jnp.dot`.
#
# How to read the Pallas matmul. The grid kernel never computes an address: its three refs
# are the blocks that the `BlockSpec`s chose for this step, `(i, k)` of `A`, `(k, j)` of `B`
# and `(i, j)` of `C`, and it reads them whole. `pl.when(cond)` is Pallas's conditional: the
# function under it runs only in the programs where the condition holds, here the first step
# along `k`, and it may write refs (a plain Python `if` would not work, because the program id
# is a traced value, not a number). `jnp.dot(..., preferred_element_type=jnp.float32)` asks for
# a float32 result whatever the inputs' dtype, the Pallas spelling of Triton's float32 `acc`.
# The loop kernel takes strips instead of tiles: its `BlockSpec`s give each program all of
# `K` (`(block, k_pad)` of `A`, `(k_pad, block)` of `B`), and `pl.ds(start, size)` slices a
# `block`-wide window of those refs in each iteration of `jax.lax.fori_loop`, whose carried
# value is the accumulator, as in Triton.

# %% [markdown]
# **Autotuning.** Which block sizes are fastest depends on the GPU (its SRAM, its registers,
# how many programs it keeps resident at once) and on the shapes, so Triton can choose among
# candidates by timing them. The decorator goes above `@triton.jit`, the block sizes leave the
# launch (the chosen config supplies them), and the grid becomes a function of the config:
#
# ```python
# @triton.autotune(
#     configs=[triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=2),
#              triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
#              triton.Config({"BM": 128, "BN": 64, "BK": 32}, num_warps=4)],
#     key=["M", "N", "K"],  # re-tune when these arguments change
# )
# @triton.jit
# def matmul_kernel_triton(a_ptr, b_ptr, c_ptr, M, N, K, ...): ...
#
# grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
# matmul_kernel_triton[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride())
# ```
#
# On the first launch for each new value of the `key` arguments, Triton compiles and times
# every config on the device and keeps the fastest (`.best_config` says which). Pallas has no
# decorator for it: the block size is already a parameter of the launcher (`matmul_pallas(a,
# b, block=...)`), and you time the candidates yourself with `timing.compare`, which checks
# first that they agree. Neither kind of tuning means anything where the kernels run
# interpreted, and not for lack of time: it ranks compiled kernels, on a GPU or a TPU. The
# interpreters' times measure NumPy and JAX simulating the programs one after another, a cost that grows with the number of
# programs, so tuning by them would favour the biggest block whatever the hardware prefers;
# and Triton's autotuner times configs with the GPU's own event timers, which the interpreter
# does not have. The next cell decorates section 1's softmax kernel (two configs that differ
# in `num_warps` only, since its block must hold a whole row) and launches it: under the
# interpreter the launch fails with the error shown there, and on a CUDA GPU the same cell
# tunes the kernel, checks it against `torch.softmax` and prints the config it kept.

# %%
# PyTorch: the section-1 softmax kernel under Triton's autotuner, which times each config
if TRITON.available:
    tuned_block = triton.next_power_of_2(x_torch.shape[1])  # one block holds the whole row
    softmax_kernel_tuned = triton.autotune(configs=[triton.Config({"BLOCK": tuned_block}, num_warps=w) for w in (2, 4)],
                                           key=["n_cols"])(softmax_kernel_triton)
    y_tuned = torch.empty_like(x_torch)

    def launch_tuned():  # BLOCK comes from the chosen config, not from the call
        softmax_kernel_tuned[(x_torch.shape[0],)](x_torch, y_tuned, x_torch.shape[1], x_torch.stride(0))

    if TRITON.interpreted:
        with expect_error(RuntimeError, match="active drivers"):
            launch_tuned()
    else:
        launch_tuned()
        assert_close(y_tuned, torch.softmax(x_torch, -1), rtol=1e-5, atol=1e-7, name="autotuned Triton softmax")
        print("autotuned Triton softmax equals torch.softmax; the config kept:", softmax_kernel_tuned.best_config)
else:
    print(TRITON.skipped())

# %% [markdown]
# ## 4. Registering a kernel so the framework's machinery works on it
#
# **Key concepts**
# - A raw kernel launch has no derivative: autograd cannot differentiate a Triton launch. JAX
#   goes half way: forward mode (`jax.jvp`) works on a `pallas_call`, by differentiating the
#   kernel body into a new kernel that returns the output and its tangent together, but reverse
#   mode (`jax.grad`, `jax.vjp`) fails: it must split that derivative into the forward values
#   and a linear map to run backwards, and one kernel computing both cannot be split (nor has a
#   `pallas_call` a transpose rule). It needs a `custom_vjp`.
# - On a CUDA GPU `torch.compile` does trace Triton kernels, and `torch.library.triton_op` with
#   `wrap_triton` makes one an operator whose kernel Inductor sees. Under the interpreter
#   (`TRITON_INTERPRET=1`) a launch runs NumPy on the tensors' data, and the compiler traces
#   with fake tensors, which have none, so compiling it fails: that is the interpreter's limit,
#   not Triton's.
# - **PyTorch**: `torch.library.custom_op` makes a function an operator; `register_fake` tells
#   the compiler the output's shape and dtype without running it; `register_autograd` gives the
#   backward. Then `torch.compile(fullgraph=True)` keeps it in one graph.
# - **JAX**: `jax.custom_vjp` pairs the forward (the Pallas kernel) with a backward rule;
#   `jit`, `grad` and `vmap` then compose around it (a Pallas kernel batches by adding a grid axis).
# - Softmax's backward needs only the output `y`: `dx = y ⊙ (g − Σⱼ gⱼ yⱼ)` row by row, so
#   both registrations save `y` for the backward pass.
#
# First the natural code in JAX: `jax.grad` straight through the `pallas_call`.

# %%
w_np = np.random.default_rng(1).normal(size=(S.rows, S.cols)).astype(np.float32)
w_jax, w_torch = jnp.asarray(w_np), torch.from_numpy(w_np).to(torch_dev)
with expect_error(ValueError, match="Linearization failed"):
    jax.grad(lambda x: jnp.sum(softmax_pallas_blocks(x) * w_jax))(x_jax)

# %% [markdown]
# "Linearization failed": reverse mode first linearises, splitting the forward-mode derivative
# into the forward values, computed now, and a linear map of the tangents, which it then runs
# backwards (transposes). Pallas differentiates a `pallas_call` forward into one new kernel
# that computes the output and its tangent together, so there is no forward part to split off
# (and a `pallas_call`, a program of reads and writes on refs, has no transpose rule either).
# (The loss weights the softmax by a fixed `w`: the plain sum of a softmax row is always 1, so
# its gradient would be zero and prove nothing.) Forward mode is another matter: `jax.jvp`
# pushes a tangent through the kernel body, which is ordinary JAX code, and that one new kernel
# returns the output and its tangent at once. That holds for `pallas_call`; `plgpu.kernel` has
# no forward-mode rule (in jax 0.10.2), so both cells use the `pallas_call` launcher. The cell
# checks it against `jax.nn.softmax`'s JVP:

# %%
tangent_jax = jnp.asarray(w_np)  # any direction will do
_, jvp_kernel_jax = jax.jvp(softmax_pallas_blocks, (x_jax,), (tangent_jax,))
_, jvp_builtin_jax = jax.jvp(lambda x: jax.nn.softmax(x, axis=-1), (x_jax,), (tangent_jax,))
assert_close(jvp_kernel_jax, jvp_builtin_jax, rtol=1e-5, atol=1e-6, name="jvp through the pallas_call")
print(f"jvp through the kernel vs jax.nn.softmax: max abs error {float(jnp.abs(jvp_kernel_jax - jvp_builtin_jax).max()):.2e}")


# %% [markdown]
# So JAX can push tangents forward through the kernel but cannot pull gradients back through
# it, and `grad` is what training needs: we give reverse mode its rule.
#
# The PyTorch side: without Triton, the operator's body is a plain PyTorch softmax, so the rest
# of this section still runs; with Triton it is the kernel of section 1. Either way the body is
# hidden from the compiler behind the operator's name `course10::softmax`.

# %%
# PyTorch: a custom operator with a fake (shape) function and a backward
def softmax_rows_torch(x):  # the stand-in body when Triton is absent
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


@torch.library.custom_op("course10::softmax", mutates_args=())
def softmax_op_torch(x: torch.Tensor) -> torch.Tensor:
    return softmax_triton(x) if TRITON.available else softmax_rows_torch(x)


@softmax_op_torch.register_fake
def _(x):
    return torch.empty_like(x)  # shape and dtype only: what the compiler needs


# %%
def softmax_backward_torch(ctx, g):
    (y,) = ctx.saved_tensors
    return y * (g - (g * y).sum(dim=-1, keepdim=True))


def softmax_setup_context_torch(ctx, inputs, output):
    ctx.save_for_backward(output)  # the backward needs only y


softmax_op_torch.register_autograd(softmax_backward_torch, setup_context=softmax_setup_context_torch)
torch.library.opcheck(softmax_op_torch, (x_torch[:4],))  # PyTorch's own checks of the registration
print("opcheck passed: schema, fake function and autograd registration are consistent")


# %% [markdown]
# `torch.library.opcheck` runs PyTorch's checks on the registration: that the fake function
# agrees with the real one, and that autograd and the compiler's tracing see a consistent
# operator. The JAX side wraps the Pallas call in `jax.custom_vjp`: a forward that also returns
# what the backward needs (the residual `y`), and a backward that maps the output's cotangent `g`
# to the input's.

# %%
# JAX: custom_vjp around the Pallas kernel
@jax.custom_vjp
def softmax_op_jax(x):
    return softmax_pallas(x)


def softmax_fwd_jax(x):
    y = softmax_pallas(x)
    return y, y  # output, residual saved for the backward


def softmax_bwd_jax(y, g):
    return (y * (g - jnp.sum(g * y, axis=-1, keepdims=True)),)


softmax_op_jax.defvjp(softmax_fwd_jax, softmax_bwd_jax)


# %% [markdown]
# The two registrations line up piece by piece. `custom_op`'s body and `custom_vjp`'s primal
# function run the kernel; `setup_context` and `softmax_fwd_jax` choose what to keep for the
# backward pass (here the output `y`, in both); `softmax_backward_torch` and `softmax_bwd_jax`
# compute the same formula. Two differences: PyTorch also needs the fake function, because
# Dynamo traces with tensors that have a shape but no data, while JAX traces the Pallas call
# itself, whose `out_shape` (`out_type` in `plgpu.kernel`) already says what comes out; and
# JAX's backward must return a tuple (a list of the same length is accepted too), one cotangent per input even
# when there is only one (hence `(...,)`: a bare array is refused), while PyTorch's
# may return the gradient itself for a single input (a one-element tuple is accepted too) and
# returns a tuple for several.

# %% [markdown]
# Now the proof that the frameworks' machinery works on the registered ops. In PyTorch:
# `fullgraph=True` makes any graph break an error, and the helper `kernels.count_graphs` counts
# the graphs Dynamo records (one means the operator sat inside the graph as a single node).
# The compiled function is then run with the default Inductor backend and differentiated.

# %%
# PyTorch: one graph under torch.compile(fullgraph=True), gradients through register_autograd
def loss_torch(x, w):
    return (softmax_op_torch(x) * w).sum()


print("graphs recorded with fullgraph=True:", kernels.count_graphs(loss_torch, x_torch, w_torch, fullgraph=True))
loss_compiled_torch = torch.compile(loss_torch, fullgraph=True)
x_op_torch = x_torch.clone().requires_grad_(True)
(grad_op_torch,) = torch.autograd.grad(loss_compiled_torch(x_op_torch, w_torch), x_op_torch)
x_builtin_torch = x_torch.clone().requires_grad_(True)
(grad_ref_torch,) = torch.autograd.grad((torch.softmax(x_builtin_torch, -1) * w_torch).sum(), x_builtin_torch)


# %% [markdown]
# One graph with `fullgraph=True`: Dynamo recorded the loss, operator included, without a
# break, and the compiled function's gradient flowed through the registered backward. Inside
# the graph the operator is a single opaque node: Inductor compiles the multiplication and the
# sum around it but never looks inside, so the hand-written kernel runs as written. The JAX
# cell does the mirror image: `jit` of `grad`, and `jit` of `vmap` of `grad` over a batch of
# matrices of another shape (each a different scale of the input, so the batch is not one
# matrix repeated).

# %%
# JAX: jit, grad and vmap around the custom_vjp
def loss_jax(x, w):
    return jnp.sum(softmax_op_jax(x) * w)


grad_op_jax = jax.jit(jax.grad(loss_jax))(x_jax, w_jax)
grad_ref_jax = jax.grad(lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w))(x_jax, w_jax)
xb_jax = jnp.stack([x_jax[: S.rows // 2] * (k + 1) for k in range(S.batch)])  # (batch, rows/2, cols)
wb_jax = jnp.stack([w_jax[: S.rows // 2]] * S.batch)
grads_batched_jax = jax.jit(jax.vmap(jax.grad(loss_jax)))(xb_jax, wb_jax)
print("vmapped gradients:", grads_batched_jax.shape)

# %%
assert_close(grad_op_torch, grad_ref_torch, rtol=1e-5, atol=1e-6, name="custom_op gradient")
assert_close(grad_op_jax, grad_ref_jax, rtol=1e-5, atol=1e-6, name="custom_vjp gradient")
assert_close(grad_op_torch, grad_op_jax, rtol=1e-5, atol=1e-6, name="PyTorch vs JAX gradient")
batched_ref = jax.vmap(jax.grad(lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w)))(xb_jax, wb_jax)
assert_close(grads_batched_jax, batched_ref, rtol=1e-5, atol=1e-6, name="vmapped custom_vjp gradient")
grad_errors = {
    "PyTorch custom_op vs torch.softmax": (grad_op_torch - grad_ref_torch).abs().max().item(),
    "JAX custom_vjp vs jax.nn.softmax": float(jnp.abs(grad_op_jax - grad_ref_jax).max()),
    "PyTorch custom_op vs JAX custom_vjp": float(np.abs(grad_op_torch.cpu().numpy() - np.asarray(grad_op_jax)).max()),
}
for name, err in grad_errors.items():
    print(f"{name}: max abs gradient error {err:.2e}")

# %% [markdown]
# The gradients through both registered ops equal the reference ops' gradients to float32
# rounding, and the two frameworks' gradients equal each other. The batched call shows the last
# piece: under `vmap`, JAX batches the Pallas kernel by adding an axis to its grid (each matrix
# of the batch gets its own programs) and the `custom_vjp` rule by batching its backward.
# PyTorch's counterpart of `vmap` for a custom operator is `register_vmap` (or falling back to a
# loop); the lesson does not need it here.

# %% [markdown]
# `custom_op` keeps the kernel opaque: Inductor schedules around it and never looks inside.
# PyTorch has a second registration for Triton kernels that lets Inductor see the kernel:
# `torch.library.triton_op` defines the operator and `torch.library.wrap_triton` marks the
# launch inside it, so that on a CUDA GPU the compiler traces the launch, keeps one graph and
# can schedule the kernel with the code around it (the operator can take `register_autograd`
# like any other). The next two cells register the section-1 kernel that way; in eager mode it
# runs anywhere Triton does, interpreter included, and the compiled run needs a CUDA GPU. Under
# the interpreter the second cell shows what compiling does instead: Dynamo runs the operator
# on fake tensors to learn its output, the interpreter's launch asks them for the address of
# their data, and a fake tensor has none, so the compiler stops with the error printed there.

# %%
# PyTorch: triton_op + wrap_triton, an operator whose Triton kernel Inductor sees
if TRITON.available:

    @torch.library.triton_op("course10::softmax_triton", mutates_args=())
    def softmax_triton_op(x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        launch = torch.library.wrap_triton(softmax_kernel_triton)  # the launch the compiler traces
        launch[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
        return y

    assert_close(softmax_triton_op(x_torch), torch.softmax(x_torch, -1), rtol=1e-5, atol=1e-7, name="triton_op, eager")
    print("triton_op, eager: equal to torch.softmax")
else:
    print(TRITON.skipped())

# %%
# PyTorch: the triton_op under torch.compile(fullgraph=True), where the kernel compiles
if TRITON.available and not TRITON.interpreted:
    scaled_torch = torch.compile(lambda x: softmax_triton_op(x) * w_torch, fullgraph=True)
    print("graphs:", kernels.count_graphs(lambda x: softmax_triton_op(x) * w_torch, x_torch, fullgraph=True))
    assert_close(scaled_torch(x_torch), torch.softmax(x_torch, -1) * w_torch, rtol=1e-5, atol=1e-6, name="compiled triton_op")
    print("triton_op under torch.compile(fullgraph=True): one graph, equal to torch.softmax")
elif TRITON.available:  # the interpreter's launch reads data, which fake tensors lack
    with expect_error(torch._dynamo.exc.TorchRuntimeError, match="Cannot access data pointer", lines=2):
        torch.compile(lambda x: softmax_triton_op(x) * w_torch, fullgraph=True)(x_torch)
else:
    print(TRITON.skipped())


# %% [markdown]
# ## 5. Escape hatches to host code, and what they cost under compilation
#
# **Key concepts**
# - Sometimes the code is not a kernel at all but host Python (a NumPy routine, a C library).
# - **JAX**: `jax.pure_callback(fn, result_shape, *args, vmap_method=...)` calls host code from
#   inside `jit`: the compiled program stops, copies the operands to the host, runs Python, and
#   copies the result back. The function receives JAX arrays placed on the CPU, not NumPy
#   arrays, so host code that means to run NumPy converts them first (`np.asarray`). It has no
#   derivative unless wrapped in `custom_vjp` (or `custom_jvp`).
# - **PyTorch**: Dynamo *translates* NumPy calls into torch ops (no break); code it cannot trace
#   (a C extension, or a function marked `torch.compiler.disable`) is a **graph break**: the
#   graph ends, Python runs, a second graph starts. A `custom_op` around the host code keeps one
#   graph instead.
#
# The host code is the same NumPy softmax for both frameworks. Its first line turns its
# argument into a NumPy array: PyTorch's route hands it one already, while `pure_callback`
# hands it a `jax.Array`, on which `x.max(...)` and the subtraction would run as JAX operations
# dispatched one at a time, not as NumPy.

# %%
def softmax_np(x):
    """The host version: NumPy on the CPU (what a C library or legacy code would be)."""
    x = np.asarray(x)  # pure_callback passes a jax.Array: make it NumPy, without a copy on a CPU
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # float32 in, float32 out
    return e / e.sum(axis=-1, keepdims=True)


def scores_torch(x, softmax):  # a little work before and after the softmax
    return softmax(x * 2.0) * 3.0


def scores_jax(x, softmax):
    return softmax(x * 2.0) * 3.0


# %% [markdown]
# First the surprise on the PyTorch side: plain NumPy inside a compiled function is *not* an
# escape hatch. Dynamo recognises NumPy calls and records them as the equivalent torch ops,
# so the function below can stay one graph (the cell counts it). A host function that Dynamo
# must not or cannot trace (here marked with the public `torch.compiler.disable`, which is what
# Dynamo also does with code it cannot read, such as a compiled extension) splits the function
# in two.

# %%
# PyTorch: NumPy code is traced; a host function Dynamo skips is a graph break
def softmax_numpy_torch(x):
    return torch.from_numpy(softmax_np(x.cpu().numpy())).to(x.device)


softmax_host_torch = torch.compiler.disable(softmax_numpy_torch)
x_small_torch = x_torch[:4]
HOST_GRAPHS = {"NumPy inside the function": kernels.count_graphs(lambda x: scores_torch(x, softmax_numpy_torch), x_small_torch),
               "host function (disabled)": kernels.count_graphs(lambda x: scores_torch(x, softmax_host_torch), x_small_torch)}
for what, n in HOST_GRAPHS.items():
    print(f"{what}: {n} graph(s), {'no break' if n == 1 else f'{n - 1} break(s)'}")


# %% [markdown]
# How to read the counts: one graph for the NumPy version means Dynamo's NumPy support rewrote
# `np.exp`, `max` and `sum` into torch operations, so the "host" code was compiled like the
# rest; the skipped host function always leaves two graphs, the multiplication before it and
# the one after it, with Python running the function in between. NumPy support has limits, too,
# and where they lie is easiest to learn by counting: the next cell has two functions that
# compute the same scores and each read `.dtype` four times, one on the NumPy array inside the
# host routine (NumPy's `exp` and `sum`), the other on the tensor (`softmax`).

# %%
def softmax_np_dtypes(a):  # the host softmax, reading the array's .dtype four times
    e = np.exp(a - a.max(axis=-1, keepdims=True)).astype(a.dtype)
    return (e / e.sum(axis=-1, keepdims=True).astype(a.dtype)).astype(a.dtype).astype(a.dtype)


DTYPE_GRAPHS = {
    "ndarray .dtype x4": kernels.count_graphs(lambda x: torch.from_numpy(softmax_np_dtypes((x * 2.0).numpy())) * 3.0, x_small_torch.cpu()),
    "tensor .dtype x4": kernels.count_graphs(lambda x: (x * 2.0).to(x.dtype).to(x.dtype).softmax(-1).to(x.dtype).to(x.dtype) * 3.0, x_small_torch),
}
for what, n in DTYPE_GRAPHS.items():
    print(f"{what}: {n} graph(s), {'no break' if n == 1 else f'{n - 1} break(s)'}")

# %% [markdown]
# A count says whether the graph broke, not why. `torch._dynamo.explain` runs the same
# function and returns, with the graphs, Dynamo's reason for each break; the cell prints the
# first two lines of each reason for the NumPy version (none where it did not break).

# %%
explained = torch._dynamo.explain(lambda x: torch.from_numpy(softmax_np_dtypes((x * 2.0).numpy())) * 3.0)(x_small_torch.cpu())
for reason in explained.break_reasons:
    print("break:", " / ".join([ln.strip() for ln in str(reason.reason).splitlines() if ln.strip()][:2]))
print(f"{explained.graph_count} graph(s), {len(explained.break_reasons)} break reason(s)")

# %% [markdown]
# The counts and reasons above are this PyTorch's (Dynamo's NumPy support grows with each
# release): a count of 1 means Dynamo modelled every `.dtype` read; more means it broke the
# graph where the reason says and ran that stretch in Python. So a NumPy routine may be
# compiled, broken, or both, depending on what it touches; `kernels.count_graphs` or
# `torch._dynamo.explain` answers for a given routine in one call, and `fullgraph=True` turns
# any break into an error.

# %%
with expect_error(torch._dynamo.exc.Unsupported, match="softmax_numpy_torch", lines=2):
    kernels.count_graphs(lambda x: scores_torch(x, softmax_host_torch), x_small_torch, fullgraph=True)


# %% [markdown]
# With `fullgraph=True` the break is an error naming the skipped function (its second line),
# the PyTorch twin of JAX refusing to trace what it cannot. The fix that keeps one graph is the
# one of section 4: a custom operator whose body is the host code, with a fake function for the
# compiler.

# %%
# PyTorch: the host code as a custom operator (no graph break)
@torch.library.custom_op("course10::softmax_host", mutates_args=())
def softmax_host_op_torch(x: torch.Tensor) -> torch.Tensor:
    return softmax_numpy_torch(x)


@softmax_host_op_torch.register_fake
def _(x):
    return torch.empty_like(x)


print("host code as custom_op:", kernels.count_graphs(lambda x: scores_torch(x, softmax_host_op_torch), x_small_torch, fullgraph=True), "graph(s)")


# %%
# JAX: pure_callback inside jit
def softmax_callback_jax(x):
    return jax.pure_callback(softmax_np, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="broadcast_all")


print(jax.make_jaxpr(lambda x: scores_jax(x, softmax_callback_jax))(x_jax[:4]).pretty_print(use_color=False))

# %% [markdown]
# The jaxpr shows the callback as one equation, `pure_callback`, between the multiplications:
# the program is still one compiled program, and the callback is an instruction in it to call
# back into Python. What does each route cost? The timings below run every variant compiled
# (`torch.compile` with its default Inductor backend, `jax.jit`), on the whole input `x` (not
# the four-row slice the graph counts used), after checking that all variants compute the
# same scores.

# %% [markdown]
# Every timing ratio in this lesson reads the same way: **time of the variant / time of the
# built-in op**, the tables' `time / ...` column, so above 1 the built-in op is faster (the
# tables' `speed-up` column is its inverse). The verdicts that `claims.compact` prints use that
# direction too: one line per variant with its paired ratio, then each reason a verdict was not
# drawn (a contended machine, say) once, naming the variants it applies to. There are two exceptions, both in
# section 6 and both drawn only where the kernels compile: the Triton-against-Pallas pair
# divides by the Triton kernel's time, and the verdict on the registered kernel-speed claim
# reads as the course's registry states that claim, the other way up (time of the built-in op /
# time of the kernel, above 1 the kernel faster); each line names which variant is faster, or
# which time it divides by which.
#
# The two numbers for one pair need not agree. The table's column divides the two medians; the
# verdict line's "median" is the median of the paired ratios, each round's two times divided
# one by the other, so a burst of load that slows both variants of a round cancels out of it.
# When the rounds are steady the two come out close; on a busy machine they can differ widely,
# and the verdict reads the paired one.
#
# The tables' `first call` column is each variant's first call in this process, compilation
# included, from the caches as they stand: the lesson gives neither framework an empty disk
# cache (`torch.compiler.reset()` clears Dynamo's state in memory only), and earlier cells have
# already compiled or launched some of the same code (the Triton kernel, for one), so the variants' first calls do not start equally cold and the lesson draws
# nothing from that column. Lesson 03 times first calls from cold caches.

# %%
# PyTorch: the built-in op, the graph break and the custom op, each compiled
torch.compiler.reset()
escape_torch = timing.compare(
    {
        "built-in softmax": torch.compile(lambda x: scores_torch(x, lambda v: torch.softmax(v, -1))),
        "host function, graph break": torch.compile(lambda x: scores_torch(x, softmax_host_torch)),
        "host code as custom_op": torch.compile(lambda x: scores_torch(x, softmax_host_op_torch), fullgraph=True),
    },
    x_torch,
    rtol=1e-5,
)
escape_torch

# %%
# JAX: the built-in op and the pure_callback, each jitted
escape_jax = timing.compare(
    {
        "built-in softmax": jax.jit(lambda x: scores_jax(x, lambda v: jax.nn.softmax(v, axis=-1))),
        "pure_callback": jax.jit(lambda x: scores_jax(x, softmax_callback_jax)),
    },
    x_jax,
    rtol=1e-5,
)
escape_jax

# %%
assert_close(scores_torch(x_torch, softmax_host_op_torch), jax.jit(lambda x: scores_jax(x, softmax_callback_jax))(x_jax),
             rtol=1e-5, atol=1e-6, name="PyTorch host op vs JAX callback")
ESCAPE_VERDICTS = {f"PyTorch, {name}": claims.faster(escape_torch, name, "built-in softmax")
                   for name in ("host function, graph break", "host code as custom_op")}
ESCAPE_VERDICTS["JAX, pure_callback"] = claims.faster(escape_jax, "pure_callback", "built-in softmax")
print(claims.compact(ESCAPE_VERDICTS))

# %% [markdown]
# Each sentence above is the course's one rule applied to the paired rounds of this run. What
# they measure: a host route adds NumPy's own softmax, on a GPU a device-to-host copy of the
# input and a copy back, and (for the graph break) a return to Python between two compiled
# graphs; the built-in op stays inside the compiled program, where the compiler can fuse the
# multiplications into the softmax. Whether that adds up to a gap the rounds can resolve depends
# on the sizes and the machine (a host route may even come out ahead); the next cell counts the routes the rule
# judged slower than the built-in op in this run and those it judged faster, and, where the
# built-in op was judged faster, says what the gap is made of on this device.

# %%
behind = [label for label, verdict in ESCAPE_VERDICTS.items() if verdict.verdict == claims.HOLDS]
made_of = (
    "on a CPU there is little or nothing to copy (host and device memory are the same; PyTorch's "
    "`.cpu().numpy()` shares the tensor's memory), so the gap is mostly Python "
    "and NumPy overhead and the fusion lost around the host code" if torch_dev.type == "cpu" else
    "on this GPU the gap also includes a copy to the host and back and a synchronisation per call"
)
ahead = [label for label, verdict in ESCAPE_VERDICTS.items() if verdict.verdict == claims.DOES_NOT_HOLD]
others = [label for label in ESCAPE_VERDICTS if label not in behind + ahead]
print(f"The rule judged the built-in softmax faster than {len(behind)} of the {len(ESCAPE_VERDICTS)} host routes"
      + (f" ({'; '.join(behind)}): {made_of}." if behind else "."))
if ahead:
    print(f"It judged {len(ahead)} route(s) faster than the built-in softmax ({'; '.join(ahead)}): "
          "at these sizes the host code's cost stayed below the built-in program's on this machine.")
if others:
    print(f"No verdict for {len(others)} route(s) ({'; '.join(others)}), whatever their medians: "
          "each line above says why (its interval, or a reason not to judge).")


# %% [markdown]
# On a GPU we expect every host route to be slower than the built-in op, whatever the rounds
# above showed on this machine (an expectation: this sentence is not computed from a run): each
# callback synchronises the device, copies its operand across PCIe to the host and the result
# back, and leaves the GPU idle while NumPy works. The custom
# operator and the graph break run the same host code: what the operator buys is a whole graph
# for the compiler (and `fullgraph=True`), not speed of the host code itself.

# %% [markdown]
# ## 6. Speed, honestly: an interpreter's time is not the kernel's
#
# **Key concepts**
# - A custom kernel pays off when the compiler's output is far from what the hardware can do
#   (an unfused chain, an attention variant it does not know); whether a compiler already fuses
#   the softmax is something to count, and the first cell below counts it.
# - Without a GPU the kernels run in **interpreters**, which execute each program step by step
#   in Python/NumPy (Triton) or as a loop of JAX operations over the grid (Pallas): correct and
#   debuggable (you can `print` inside a Triton kernel in interpreter mode), but what they time
#   is the simulation, not the kernel as a GPU would run it: Triton's is slow by design, and
#   Pallas's, a loop inside one XLA program, may come close to the built-in op on a CPU, trail
#   it or even pass it, depending on how many programs the grid has.
# - So the claim "a hand-written kernel is faster than the built-in op" can only be judged where
#   the kernels compile: on a GPU (or a TPU, for Pallas).
#
# First, what the compilers make of the softmax: the kernels Inductor generates for
# `torch.compile(torch.softmax)` (on a CPU, C++ loops; on a GPU, Triton kernels), and the
# fusions in XLA's optimised program for `jax.jit(jax.nn.softmax)`, each a kernel launch. The
# eager formula of section 1 is five ops, five kernels.

# %%
def inductor_kernels(fn, *args):
    """The kernels Inductor generates for fn (their names in its output code)."""
    from torch._inductor.utils import run_and_get_code

    torch.compiler.reset()
    _, codes = run_and_get_code(torch.compile(fn), *args)
    return re.findall(r"^(\w+) = async_compile\.", "\n".join(codes), flags=re.M)


def xla_kernels(fn, *args):
    """The fusions (one kernel each) in the entry computation of XLA's optimised program, by name."""
    hlo = jax.jit(fn).lower(*args).compile().as_text()
    entry = hlo[hlo.index("ENTRY"):]
    return re.findall(r"^\s*(?:ROOT )?%?([\w.-]+) = .*? fusion\(", entry[: entry.index("\n}")], flags=re.M)


FUSED = {"torch.compile(torch.softmax)": inductor_kernels(lambda x: torch.softmax(x, -1), x_torch),
         "jax.jit(jax.nn.softmax)": xla_kernels(lambda x: jax.nn.softmax(x, axis=-1), x_jax)}
for what, names in FUSED.items():
    print(f"{what}: {len(names)} kernel(s) on {jax_dev.platform} (the eager formula: {len(EAGER_TRAFFIC)} ops):",
          ", ".join(names))

# %% [markdown]
# How the cell counts. Inductor writes its generated code as Python source that compiles each
# kernel through `async_compile` (a C++ function on a CPU, a Triton kernel on a GPU), and
# `run_and_get_code` returns that source, so counting the `async_compile` assignments counts
# the kernels. XLA's optimised HLO has one computation per fusion and an `ENTRY` computation
# that calls them in order, so the `fusion(` instructions of the entry computation are the
# kernels it launches. An operation that XLA's CPU backend fuses with nothing still becomes a
# fusion, of that one operation, so the count includes it; only an operation that stays an
# instruction of another kind (a sort, say) would run as a kernel this count leaves out.
#
# The names say what each kernel holds: Inductor names a C++ kernel `cpp_...` and a Triton one
# `triton_...`, after the operations fused into it, and XLA names a loop fusion after its
# operations too (`subtract_exponential_fusion`, say) and a fusion of one operation `wrapped_`
# and that operation (`wrapped_reduce`); a fusion XLA hands to a library is named
# after the library instead (`ynn_fusion`: XLA's CPU backend passes some reductions to
# YNNPACK, depending on their shapes, so this lesson's smoke and full sizes may list different
# kernels). A count may even exceed the eager formula's: a compiler can compute a reduction in
# stages (a partial reduction over chunks of each row, then one over the chunks), each stage
# its own kernel, and the names that name operations show where it did (`reduce-window`).
#
# A count of 1 means the compiler fused the whole softmax into one kernel, the kernel this
# lesson wrote by hand, so no traffic between kernels is left for a hand-written one to save: it
# can win only by doing that one kernel's work better (fewer passes over each row, better use of
# the hardware), which only timing on the target can show; a larger count means the
# compiler split it (reductions are the usual seams) and left memory traffic a fused kernel
# would save. The counts are for this device's compilers: Inductor and XLA generate different
# code for a GPU, so rerun the cell there before concluding anything about one.
#
# Then the times. The cell times each kernel against its framework's built-in softmax on this
# machine, and the verdict on the kernel-speed claim comes from the registry: judged where the
# kernels compiled, not judged where they ran interpreted.
#
# Every variant takes the input as an **argument**. A jitted function that closes over an array
# sees it as a constant: XLA may then compute the whole softmax once, while compiling, and the
# "timing" would measure the return of a stored result (a `jax.jit(lambda: f(x))` is the usual
# way to fall into this). Passing `x_jax` to the jitted function keeps the work in every call.
# The Pallas variant's time includes its launcher's padding to whole blocks and the slice back.

# %%
kernel_variants_torch = {"torch.softmax": lambda x: torch.softmax(x, -1)}
if TRITON.available:
    kernel_variants_torch["Triton kernel"] = softmax_triton
kernel_torch = timing.compare(kernel_variants_torch, x_torch, rtol=1e-5)
kernel_torch

# %%
softmax_pallas_jit = jax.jit(softmax_pallas)
kernel_jax = timing.compare(
    {"jax.nn.softmax": jax.jit(lambda x: jax.nn.softmax(x, axis=-1)), "Pallas kernel": softmax_pallas_jit},
    x_jax,
    rtol=1e-5,
)
kernel_jax

# %%
KERNEL_RUNS = {  # pairing: (comparison, built-in op, kernel, whether the kernel ran interpreted)
    "pallas": (kernel_jax, "jax.nn.softmax", "Pallas kernel", PALLAS.interpret),
    "triton": (kernel_torch, "torch.softmax", "Triton kernel", TRITON.interpreted or not TRITON.available),
}
KERNEL_VERDICTS = {}
for pairing, (cmp, builtin, kernel, interpreted) in KERNEL_RUNS.items():
    if kernel not in cmp.measurements:
        why = f"Triton is not installed ({kernels.INSTALL_HINT})"
        KERNEL_VERDICTS[pairing] = claims.not_testable("fused-softmax-kernel", why)
    elif interpreted:
        why = "the kernel ran interpreted on this machine, and an interpreter times its simulation, not the kernel"
        KERNEL_VERDICTS[pairing] = claims.not_testable("fused-softmax-kernel", why)
    else:
        KERNEL_VERDICTS[pairing] = claims.judge("fused-softmax-kernel", cmp, builtin, kernel, pairing=pairing)
for pairing, verdict in KERNEL_VERDICTS.items():
    print(f"{pairing}: {verdict.explanation}")

# %% [markdown]
# Where a kernel ran interpreted, the claim is not judged, but the interleaved rounds still
# compare the kernel with the built-in op, through the same rule and in the lesson's one
# direction (time of the kernel / time of the built-in op); the last two lines give the time
# per call of each variant.

# %%
INTERPRETED = {f"{kernel} (interpreted)": claims.faster(cmp, kernel, builtin)
               for cmp, builtin, kernel, interpreted in KERNEL_RUNS.values() if interpreted and kernel in cmp.measurements}
print(claims.compact(INTERPRETED))
for cmp in (kernel_torch, kernel_jax):
    print(", ".join(f"{name}: {timing.format_seconds(m.median)} per call" for name, m in cmp.measurements.items()))

# %% [markdown]
# **Triton against Pallas.** The two kernels were timed in two separate comparisons, one per
# framework. Timing them against each other is done here only where both compile (a CUDA GPU):
# on a CPU it would compare two interpreters, two ways of simulating a GPU program, and say
# nothing about the kernels as written; and interleaving a long call with a short one can change
# the short one's conditions (the caches and XLA's idle worker threads it finds), so its time in
# those rounds need not be its time alone. On a CPU we expect the Triton interpreter, which
# runs every program in Python, to be the slower of the two by far (an expectation, not a
# measurement: the lines above print this run's time per call of each kernel). Where both compile,
# the rounds compare two compiled kernels of the same algorithm with different block shapes
# (one row per Triton program, `block_rows` rows per Pallas program, 64 on Mosaic GPU), each
# launched from its own framework.

# %%
if TRITON.available and not TRITON.interpreted and not PALLAS.interpret:
    kernel_pair = timing.compare({"Triton kernel": lambda: softmax_triton(x_torch),
                                  "Pallas kernel": lambda: softmax_pallas_jit(x_jax)}, rtol=1e-5)
    display(kernel_pair)
    print(claims.compact({"Pallas vs Triton": claims.faster(kernel_pair, "Pallas kernel", "Triton kernel")}))
else:
    print("Triton vs Pallas: not timed here,", "Triton is absent (see the setup cell)" if not TRITON.available
          else "a kernel runs interpreted (the setup cells say which)")

# %% [markdown]
# On a CPU the lines above say how each interpreted kernel compared with its built-in op in
# this run. Whatever they show, it describes the simulation of a GPU program, not the kernel:
# a kernel that trails here may win on a GPU, and one that keeps up here has shown nothing
# about one. The two interpreters work differently, so expect different margins: Triton's runs
# each program's block operations through NumPy, one program after another, with Python in
# between, which we expect to trail the built-in op by orders of magnitude (the per-call times
# above give this run's), while Pallas's, under `jit`, becomes a loop over the grid inside one
# compiled XLA program, whose cost grows with the number of programs rather than with Python,
# so at a few programs it may come close to the built-in op or even ahead of it. On a GPU the
# same cells compile the kernels and judge the claim with the paired rounds; the kernel counts
# above say how much room the compilers left, and the wins of custom kernels usually come from
# operations the compiler does not fuse on its own (attention with online softmax, quantised
# matrix products, ragged batches).

# %% [markdown]
# **When is a custom kernel worth writing?** Start from a profile (lesson 09): if the time goes
# to an operation the compiler already fuses well, a kernel will at best match it. Kernels pay
# where the compiler's output wastes memory traffic it cannot see how to avoid: attention,
# whose naive form writes a sequence-by-sequence matrix to memory and reads it back, is the
# classic case (FlashAttention keeps it in fast memory with an online softmax, a loop over
# column blocks of section 1's kernel); quantised or sparse matrix products, whose layouts
# the libraries do not cover, are others. Before writing one, check the libraries: PyTorch ships
# fused attention (`torch.nn.functional.scaled_dot_product_attention`), and JAX ships Pallas
# kernels of its own (`jax.experimental.pallas.ops`) and `jax.nn.dot_product_attention`. When
# you do write one, keep the pattern of this lesson: the framework's op as the oracle, the
# interpreter for debugging on any machine, the registration so that compiling and
# differentiating still work, and a verdict from paired timings on the hardware it targets.

# %% [markdown]
# ## Summary
#
# | idea | PyTorch (Triton, torch.library) | JAX (Pallas, custom_vjp) |
# |---|---|---|
# | write a kernel | `@triton.jit`, pointers, `tl.load`/`tl.store` | a Python function on refs, `pl.pallas_call` |
# | which work a program does | `tl.program_id(axis)`, offsets `pid * B + tl.arange(0, B)` | `pl.program_id(axis)`, `BlockSpec(block_shape=..., index_map=...)` |
# | number of programs | `kernel[grid](...)`, `triton.cdiv` | `grid=...`, `pl.cdiv` |
# | accumulate across steps | a loop over K in the program, `acc += tl.dot(a, b)` in float32 | K as the last grid axis, `pl.when(pl.program_id(2) == 0)` zeroes the revisited output block (in-order grids: TPU, interpreter); a `fori_loop` over K where the programs run at once (Pallas's Triton backend: a GPU of sm_80 or newer here) |
# | block sizes | `triton.autotune(configs=[triton.Config(...)], key=[...])` | a parameter of the launcher, timed with `timing.compare` |
# | ragged edges | `mask=` on every load and store, `other=` on loads | pad to whole blocks and slice (only the interpreter and Mosaic TPU clip writes); mask reads yourself (`jnp.where` on an iota) |
# | the GPU backend | Triton | `plgpu.kernel` (Mosaic GPU: sm_90+, sm_80+ from jax 0.11), or `compiler_params=pltriton.CompilerParams()` (Triton) |
# | run without a GPU | `TRITON_INTERPRET=1` before the first `@triton.jit` | `interpret=True` |
# | make it an op | `torch.library.custom_op` + `register_fake` (opaque), `triton_op` + `wrap_triton` (seen by Inductor on a GPU) | a function (`pallas_call` is already a JAX primitive) |
# | its gradient | `register_autograd(backward, setup_context=...)` | `jax.custom_vjp` + `defvjp(fwd, bwd)` |
# | prove it composes | `torch.compile(fullgraph=True)`, `torch.library.opcheck` | `jit`, `grad`, `vmap` around it |
# | call host code | a graph break, or a `custom_op` around it | `jax.pure_callback(..., vmap_method=...)` |
#
# **Popular claims vs what you measured.** The lesson tested one claim, that a hand-written
# fused softmax kernel beats the framework's own softmax, once per kernel language (the
# pairings of section 6). The table is built from the verdict objects of section 6: for a
# kernel that compiled, a verdict from the paired rounds; for one that ran interpreted (or
# Triton absent), the reason it was not judged.

# %%
display(Markdown(
    "| pairing | claim | stated | verdict | why |\n|---|---|---|---|---|\n"
    + "\n".join(f"| {pairing} | {v.claim.text} | {v.claim.claimed} | **{v.verdict}** | {v.explanation} |"
                 for pairing, v in KERNEL_VERDICTS.items())
))

# %% [markdown]
# A row that reads "not testable here" is not a verdict against the claim: run the lesson on a
# GPU runtime of sm_80 or newer and the same cell fills the rows from paired timings of the
# compiled kernels (on Colab's free T4, sm_75, Triton compiles but Pallas still runs
# interpreted, so only the Triton row is judged). The host-code routes of section 5 are not in
# the table: they answered "which is faster here", not a claim from the course's registry.
# Each row keeps the claim's wording and the outcome it states from that registry, so the same
# claim reads the same way wherever the course quotes it; only the last two columns come from
# this run.
#
# **Common misconceptions** (each with the section that corrects it)
# - *"The padding of a block is zeros."* Past the array's edge it is whatever the backend leaves
#   (NaN in the interpreter; Pallas's Triton backend reads past the row): pad to whole blocks
#   and mask it (1).
# - *"Pallas is for TPUs only."* On a GPU it lowers through Mosaic GPU (`plgpu.kernel`) or
#   Triton, and on a CPU it runs in its interpreter: the same kernel ran here (1).
# - *"Pallas drops the writes outside the array."* The interpreter and Mosaic TPU do; Pallas's
#   Triton backend stores without a mask, hence whole-block launchers (2).
# - *"Padding is padding."* Along a reduction it is part of the sum: the softmax pads with NaN
#   and masks it, the matmul pads K with zeros, which add nothing (1, 3).
# - *"`torch.compile` cannot see inside a Triton kernel."* On a CUDA GPU it traces a launch
#   wrapped in `wrap_triton` (`triton_op`); under the interpreter, compiling it fails (4).
# - *"JAX differentiates any JAX code, kernels included."* Forward mode (`jvp`) goes through a
#   `pallas_call`; reverse mode (`grad`) fails and needs a `custom_vjp` (4).
# - *"NumPy inside `torch.compile` breaks the graph."* Dynamo translates NumPy calls into torch
#   ops; code it cannot trace breaks it (section 5 counts whether reading an array's `.dtype`
#   does, in this PyTorch), and a `custom_op` avoids the break (5).
# - *"A custom kernel is faster."* Only where it compiles and beats the compiler; interpreted, its
#   time is the interpreter's, whichever way it compares (section 6 compares it with the built-in
#   op in this run), and the claim is judged only where the kernels compile (6).
# - *"Autotuning works anywhere Triton runs."* It times configs with the GPU's event timers; on a
#   machine without a GPU the interpreter has no driver for them (the launch in section 3 fails
#   with "0 active drivers" there), and simulated times would not rank the configs anyway (3).
# - *"A Pallas grid is a loop, so any kernel may accumulate across its steps."* Only where the
#   grid runs in order (a TPU, the interpreter, an axis Mosaic GPU is told is "sequential"); on
#   Pallas's Triton backend the programs run at once, so there the sum over K is a loop inside
#   each program (3).
#
# **Review questions**
#
# <details><summary>1. A Triton softmax kernel loads with <code>mask=cols &lt; n_cols</code> but
# <code>other=0.0</code>. What goes wrong, and for which rows?</summary>
# The masked columns contribute `exp(0 − max)` each to the row's sum, so every row is scaled
# down, and for rows whose maximum is below 0 the padding even becomes the maximum. Every row is
# affected, because every row has the padded columns. `other=-inf` makes them contribute 0.
# </details>
#
# <details><summary>2. A 2-D grid over a 10 × 12 array with 4 × 8 blocks: how many programs,
# and which of them overhang the array?</summary>
# `cdiv(10, 4) · cdiv(12, 8) = 3 · 2 = 6` programs. Every block in the last block row (rows 8–11
# of a 10-row array) and every block in the last block column (columns 8–15 of 12) overhangs:
# all but the blocks (0, 0) and (1, 0), programs 0 and 2, as the dashed outlines in section 2
# show.
# </details>
#
# <details><summary>3. What does <code>register_fake</code> give <code>torch.compile</code>
# that the real implementation cannot?</summary>
# The output's shape, dtype and device without running the kernel: the compiler traces with
# fake tensors (no data), so it needs a function that computes metadata only. Without it,
# tracing the operator fails (and `opcheck` reports it).
# </details>
#
# <details><summary>4. Why does the softmax backward save the output rather than the
# input?</summary>
# The vector-Jacobian product needs only `y`: `dx = y ⊙ (g − Σ g ⊙ y)`. Saving `y` avoids
# recomputing the softmax in the backward pass; saving `x` would force that recomputation.
# </details>
#
# <details><summary>5. When is <code>jax.pure_callback</code> the right tool, and what does it
# cost?</summary>
# For host code that has no JAX equivalent (a C library, a file format, a simulator) and is not
# on the hot path. Each call stops the compiled program, copies operands to the host and back,
# and blocks fusion around it; it has no derivative unless you give one with `custom_vjp`.
# Section 5 measured the cost here.
# </details>
#
# <details><summary>6. Section 1 counted the bytes five eager softmax ops move. Why does the
# count matter more on a GPU than the number of arithmetic operations?</summary>
# A softmax does a few operations per element, and a GPU does dozens of float32 arithmetic
# operations in the time its memory delivers one float32 from HBM, so the time of each eager op
# is the time of its memory traffic. Five ops that each read the array (three of them also
# write it) pay that traffic several times (the count printed the factor for this input); one
# fused kernel pays it once. A matrix product is the opposite case: `2·M·N·K` operations on `M·K + K·N` inputs,
# which is why its kernels are about reusing tiles from fast memory (section 3).
# </details>
#
# <details><summary>7. A Pallas matmul zeroes its output block under
# <code>pl.when(pl.program_id(2) == 0)</code> and adds a product at every step. Why must K be
# the last grid axis, and why does the lesson not use this kernel on a GPU of sm_80 or
# newer?</summary>
# The output block is kept in fast memory while consecutive grid steps revisit it, so the steps
# along K must come one after another for the same `(i, j)`: with K last they do, and the block
# is written back once, when `(i, j)` changes. On Pallas's Triton backend, the one this
# lesson's matmul takes on a GPU of sm_80 or newer, the programs of a grid run at once, so steps along K would
# race on one output block; each program loops over K itself instead.
# </details>
#
# The cell below asks these questions again as a self-check, with the grid's count split in two: pick or type an answer and
# press *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.
# Where an executed copy's script does not run (GitHub's preview, an untrusted notebook)
# each answer is folded under its question, and a printout shows them all.

# %%
from course_utils import quiz

quiz.load("10_custom_kernels")

# %% [markdown]
# **Next:** the exercises in `exercises/10_custom_kernels_exercises.ipynb`: write an index map,
# a masked Pallas log-sum-exp over padded columns, a `custom_vjp` for a Pallas op, a
# `torch.library` custom operator with its backward, a `pure_callback` that works under
# `vmap`, and a Triton kernel that sums rows in float32, block by block (run through the Triton
# interpreter on a CPU).
