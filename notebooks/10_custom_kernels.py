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
# When the compiler does not fuse what you need, you can write the kernel yourself. PyTorch
# users write **Triton**; JAX users write **Pallas**. This lesson writes a fused row-softmax
# and a tiled matrix product in both languages. It registers the softmax so that compiling
# and differentiating keep working, and it times the kernels on the hardware they target.
#
# **Learning objectives.** After this notebook you can
# 1. read and write a block-level kernel in Triton and in Pallas: program ids, blocks, index
#    maps, masks for ragged edges, and a tiled matmul that accumulates in float32;
# 2. make a kernel a first-class op: `torch.library.custom_op` with `register_fake` and
#    `register_autograd`, and `jax.custom_vjp` around a `pallas_call`, under `torch.compile`,
#    `jit`, `grad` and `vmap`;
# 3. read a kernel's speed against the hardware: bytes moved, block sizes, % of peak, and
#    what a host callback costs.

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
    "chip_softmax": ((65536, 1024), (65536, 1024)),  # the softmax timed where the kernels compile
    "chip_mm": (8192, 8192),  # M = K = N of the matmul timed where the kernels compile
    "interpreted_mm": (512, 256),  # the same where they run interpreted (a simulation: kept small)
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both.
SETUP = env.setup()

import functools
import math
import re

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display
from jax.experimental import pallas as pl

from course_utils import claims, config, kernels, peaks, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())
print(SETUP.rule)
torch_dev, jax_dev = SETUP.pair()

# %% [markdown]
# The lesson follows one device rule. A comparison between the frameworks runs both on one
# device kind. Everything JAX does alone, the Pallas kernels included, runs on the
# accelerator when there is one. The last line says where each runs here.

# %%
# Triton reads TRITON_INTERPRET when @triton.jit wraps a kernel: set it (no CUDA GPU) first.
TRITON = kernels.setup_triton()
if TRITON.available:
    import triton
    import triton.language as tl
print(TRITON.line())
PALLAS = kernels.pallas_backend(device=SETUP.jax_alone)  # the device JAX computes on alone
INTERPRET = PALLAS.interpret  # the interpret= of every pallas_call below
print(PALLAS.line(), "on", SETUP.jax_alone)
print(kernels.use_triton_on_gpus())

# %% [markdown]
# Each kernel language compiles for its own hardware. Triton compiles for a CUDA GPU;
# elsewhere its **interpreter** (`TRITON_INTERPRET=1`) runs each program with NumPy. Pallas
# compiles through Mosaic TPU on a TPU, and through Triton on a GPU of sm_80 or newer. On a
# CPU, `pallas_call(..., interpret=True)` runs the kernel body as ordinary JAX operations,
# one grid step after another. An interpreted kernel gives the right answers, so you can
# write and debug kernels anywhere. Its times say nothing about the kernel, though
# (section 6).
#
# Triton is an **optional extra** of about 200 MB (`pip install ".[kernels]"`). Without it,
# each Triton cell prints one line, and the PyTorch side uses a plain PyTorch softmax.

# %% [markdown]
# ## 1. One kernel, written twice: a fused row-softmax
#
# **Key concepts**
# - A **kernel** is a function that the device runs as many **programs** at once. Each
#   program finds its share of the work from its **program id** (`tl.program_id(0)`,
#   `pl.program_id(0)`).
# - **Fusion**: `softmax(x) = exp(x − max x) / Σ exp(x − max x)` as five eager ops moves the
#   array through memory several times. One kernel reads each row once and writes it once.
# - **Triton** works on pointers: the kernel computes addresses and loads them with a
#   **mask** for the lanes past the end of a row.
# - **Pallas** works on **refs** to blocks: a `BlockSpec` tells `pallas_call` which block each
#   program sees, and the kernel reads `x_ref[...]`.
#
# The row length `S.cols` is not a power of two, and the row count is not a multiple of the
# row block, so both kernels must handle ragged edges. Subtracting each row's maximum keeps
# `exp` from overflowing, which it does above about 88 in float32.

# %%
x_np = np.random.default_rng(0).normal(size=(S.rows, S.cols)).astype(np.float32) * 3
x_torch = torch.from_numpy(x_np).to(torch_dev)
x_jax = jnp.asarray(x_np)  # on JAX's default device: the accelerator, where there is one
print(f"input {x_np.shape}, float32, values up to {np.abs(x_np).max():.1f}; JAX's copy on {x_jax.device}")

# %% [markdown]
# What fusion saves, counted for this input. Each eager op reads its operands from memory and
# writes its result back. The table gives the least each op must move, in float32 bytes; a
# row's maximum or sum is one number per row.

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
# The ratio is computed from the shapes, not timed. A softmax does a few arithmetic operations
# per element, so on a GPU or a TPU its time is set by the bytes it moves. Whether a compiler
# already fuses the chain is section 6's question.
#
# The PyTorch side: one Triton program per row. The program reads its row with a block of
# `BLOCK` columns, the smallest power of two at or above the row length. The mask
# `cols < n_cols` turns the loads past the end into `-inf`, which adds `exp(-inf) = 0` to the
# sum. The same mask keeps the stores past the end from writing.

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
# How to read the Triton cells. `@triton.jit` compiles the function for the GPU, or hands it
# to the interpreter. Its arguments are pointers (a tensor passed to a kernel is its
# address), integers, and `tl.constexpr` values. A `constexpr` is fixed at compile time, so
# each new `BLOCK` compiles a new kernel. `kernel[grid](...)` launches one program per point
# of the grid, here one per row. Inside, every variable is a whole block: `cols` holds `BLOCK`
# offsets and `x` holds `BLOCK` values. The address uses the row stride, so the launcher makes
# the input contiguous first.
#
# The JAX side: one Pallas program per block of `block_rows` rows. The kernel has no
# pointers. It reads its whole block with `x_ref[...]` and builds its own mask from a column
# index, because the block's padding is not part of the row.

# %%
# JAX: a Pallas kernel (one program per block of rows)
def softmax_kernel_pallas(x_ref, y_ref, *, n_cols):
    x = x_ref[...]  # (block_rows, block_cols)
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)  # the mask: padding counts as -inf
    x = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x)
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


# %% [markdown]
# The launcher is one `pallas_call`, the call the Pallas docs start with. It names the
# kernel, the output's shape, the grid, and one `BlockSpec` per input and output. Before the
# call, the launcher pads the input with NaN to whole blocks; after it, it slices the result
# back.

# %%
# JAX: the launcher, one pallas_call over whole blocks
def softmax_pallas(x, block_rows=S.block_rows, kernel=softmax_kernel_pallas):
    n_rows, n_cols = x.shape
    block = (block_rows, pl.next_power_of_2(n_cols))  # the block one program sees
    x_pad = jnp.pad(x, ((0, -n_rows % block[0]), (0, block[1] - n_cols)), constant_values=jnp.nan)
    spec = pl.BlockSpec(block_shape=block, index_map=lambda i: (i, 0))  # program i: block (i, 0)
    y_pad = pl.pallas_call(
        functools.partial(kernel, n_cols=n_cols),
        out_shape=jax.ShapeDtypeStruct(x_pad.shape, x.dtype),
        grid=(x_pad.shape[0] // block_rows,),  # one program per block of rows
        in_specs=[spec],
        out_specs=spec,
        interpret=INTERPRET,  # True where Pallas has no compiler (a CPU)
    )(x_pad)
    return y_pad[:n_rows, :n_cols]


y_pallas = softmax_pallas(x_jax)
print(f"Pallas softmax on {y_pallas.device}, {'interpreted' if INTERPRET else 'compiled'}")

# %% [markdown]
# How to read the launcher. `functools.partial` fixes `n_cols` as a Python integer, a static
# value like Triton's `constexpr`. `out_shape` declares the result, which Pallas cannot
# infer. The `index_map` returns a *block* index: program `i` gets rows `i·block_rows` to
# `(i+1)·block_rows`. `BlockSpec` takes keywords here, since its positional order changed
# across jax releases. On a TPU, Mosaic also asks that a block's last two sides be multiples
# of 8 and 128, or span the array: 8 rows and every padded column do. Padding to whole blocks
# keeps every access inside the array on every backend, and the NaN makes a missing mask
# visible.
#
# Now the checks. Each kernel is compared with its framework's softmax on the same device.
# The Pallas result is also compared with a float64 NumPy reference on the CPU, the same
# numbers everywhere. The tolerance `TOL` is `rtol=1e-5` on a CPU and `rtol=1e-4` on an
# accelerator, whose `exp` may differ from the CPU's in the fifth digit.

# %%
TOL = dict(rtol=1e-5, atol=1e-7) if SETUP.alone_kind == "cpu" else dict(rtol=1e-4, atol=1e-6)
x64 = x_np.astype(np.float64)
e64 = np.exp(x64 - x64.max(axis=1, keepdims=True))
y_ref = e64 / e64.sum(axis=1, keepdims=True)  # float64, on the CPU
assert_close(y_pallas, jax.nn.softmax(x_jax, axis=-1), **TOL, name="Pallas vs jax.nn.softmax")
assert_close(y_pallas, y_ref, **TOL, name="Pallas vs the CPU reference")
print(f"Pallas kernel on {y_pallas.device} ({TOL}): max abs error "
      f"{float(jnp.abs(y_pallas - jax.nn.softmax(x_jax, axis=-1)).max()):.2e} vs jax.nn.softmax, "
      f"{np.abs(np.asarray(y_pallas) - y_ref).max():.2e} vs float64 on the CPU")
if TRITON.available:
    assert_close(y_triton, y_pallas, **TOL, name="Triton vs Pallas")
    print(f"Triton vs Pallas: max abs error {np.abs(y_triton.cpu().numpy() - np.asarray(y_pallas)).max():.2e}")
else:
    print(TRITON.skipped())


# %% [markdown]
# Each kernel agrees with its framework's softmax and with the float64 reference within
# `TOL`; the lines print the largest difference over every element. A Triton program owns one
# row and a vector of columns, a Pallas program a 2-D block of rows. Section 2 draws that
# mapping.
#
# <details><summary>Pallas on a GPU: the backend, per jax version</summary>
#
# A `pallas_call` without compiler parameters lowers on a GPU through a backend that depends
# on the jax version:
#
# | jax | backend on a GPU |
# |---|---|
# | up to 0.8 | Triton |
# | 0.9 to 0.11.1 | Mosaic GPU, chosen by the flag `jax_pallas_use_mosaic_gpu`, on by default; this route is deprecated from 0.10 |
# | 0.11.2 and newer | Triton again: the flag is gone |
#
# `kernels.use_triton_on_gpus()` turns that flag off where it exists, so this lesson's
# kernels take Triton on every version; its line above says how. jax 0.11 deprecates the
# Triton backend, and the helper filters that one warning by its message. Triton needs a GPU
# of sm_80 or newer. On Colab's free T4, an sm_75 GPU, the lesson interprets.
#
# Mosaic GPU is where the Pallas GPU docs now point. It has its own kernel style
# (`plgpu.kernel`, warpgroups, register layouts), which this lesson leaves out. jax 0.12 adds
# the import path `jax.pallas`; the lesson imports `jax.experimental.pallas`, which every
# supported jax has. The course's tests lower each kernel of this lesson for CUDA and for TPU
# on a CPU, with `jax.export`, so both routes are checked where they cannot run.
# </details>
#
# **The mask is not optional.** The padded columns are not part of the row: here they hold
# the launcher's NaN. Here is the same kernel without the `jnp.where`, through the same
# launcher:

# %%
def softmax_kernel_unmasked(x_ref, y_ref, *, n_cols):  # n_cols unused: no mask
    x = x_ref[...]
    x = x - jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x)
    y_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


y_unmasked = softmax_pallas(x_jax, kernel=softmax_kernel_unmasked)
with expect_error(AssertionError, lines=2):
    assert_close(y_unmasked, jax.nn.softmax(x_jax, axis=-1), name="unmasked Pallas softmax")

# %% [markdown]
# The padding leaks into every row's maximum and sum, not only the last block's: the ragged
# edge is in the columns, which every row has. The fix is the mask above. In Triton, a load
# without `mask=` reads past the end of the row, into the next row or past the tensor. On a
# GPU that is silently wrong or an illegal memory access.

# %% [markdown]
# ## 2. Blocks and grids, side by side
#
# **Key concepts**
# - The **grid** is the set of programs: `kernel[grid](...)` in Triton, `grid=` in
#   `pallas_call`. A 2-D grid `(gm, gn)` gives each program two ids.
# - **Triton**: the program turns its ids into element offsets itself,
#   `rows = pid_m * BM + tl.arange(0, BM)`, and masks what falls outside the array.
# - **Pallas**: the `index_map` turns program ids into *block* indices,
#   `lambda i, j: (i, j)`, and Pallas multiplies them by the block shape.
# - `cdiv(n, block)` (`triton.cdiv`, `pl.cdiv`) is the number of blocks that cover `n`
#   elements.
#
# Each kernel below writes its own program number into its tile of a 10 × 12 output, with
# 4 × 8 blocks. Neither 10 nor 12 is a multiple of the block, so the last row and the last
# column of blocks overhang the array.

# %%
TILE_SHAPE, TILE_BLOCK = (10, 12), (4, 8)
tile_grid = (pl.cdiv(TILE_SHAPE[0], TILE_BLOCK[0]), pl.cdiv(TILE_SHAPE[1], TILE_BLOCK[1]))
print(f"array {TILE_SHAPE}, blocks {TILE_BLOCK}: grid {tile_grid} = {tile_grid[0] * tile_grid[1]} programs")

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
    ids = pl.pallas_call(tile_ids_kernel_pallas, out_shape=jax.ShapeDtypeStruct(tiles, jnp.int32),
                         grid=tile_grid, out_specs=spec, interpret=INTERPRET)()
    ids = ids.transpose(0, 2, 1, 3).reshape(tile_grid[0] * TILE_BLOCK[0], -1)  # (gm·BM, gn·BN)
    return ids[: TILE_SHAPE[0], : TILE_SHAPE[1]]


ids_pallas = tile_ids_pallas()
print(np.asarray(ids_pallas))

# %% [markdown]
# The two cells state one tiling in two ways. Triton's kernel computes each element's row and
# column: a `(BM, 1)` column and a `(1, BN)` row broadcast to a `(BM, BN)` block of addresses.
# Its mask stops the overhanging programs from writing into the next row or past the array.
# Pallas's kernel never sees an offset: the `index_map` names the block, and Pallas slices it.
#
# The Pallas launcher stores the tiles as a (3, 2, 4, 8) array, tile (i, j) at `[i, j]`. The
# `None`s in the block shape drop the two grid dimensions, so the kernel still sees a 4 × 8
# block. The launcher then reshapes the tiles into the 12 × 16 picture and keeps the top left
# 10 × 12. A TPU takes this layout because the block spans the array's last two sides; a
# 4 × 8 block of a 12 × 16 array would not tile by (8, 128).

# %%
expected_ids = np.add.outer(np.arange(TILE_SHAPE[0]) // TILE_BLOCK[0] * tile_grid[1],
                            np.arange(TILE_SHAPE[1]) // TILE_BLOCK[1])
assert_close(ids_pallas, expected_ids, name="Pallas tile ids")
if TRITON.available:
    assert_close(ids_triton, ids_pallas, name="Triton vs Pallas tile ids")
print("every element was written by the program the block arithmetic predicts")

# %% [markdown]
# Both maps match `program = (row // BM) · gn + col // BN`. The picture draws the same map:
# each colour is one program, and a dashed outline marks a block that overhangs the array.

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
# The softmax of section 1 used a 1-D grid: one row per Triton program, `block_rows` rows per
# Pallas program. More rows per program make fewer, larger programs; section 6 times what
# that changes.
#
# ## 3. A kernel that accumulates: tiled matrix multiplication
#
# **Key concepts**
# - **The memory hierarchy.** Inputs live in large, slow off-chip memory (HBM). Arithmetic
#   happens in registers, with a small, fast on-chip memory between them. A fast kernel loads
#   each value from HBM as few times as it can.
# - **Tiling** `C = A·B` (`M × K` by `K × N`): each program computes one `BM × BN` tile of
#   `C`, walking along `K` in steps of `BK`. Each loaded tile of `A` then serves `BN` output
#   columns, and each tile of `B` serves `BM` rows.
# - **Accumulating.** Triton loops over `K` inside the program and keeps the sum in
#   registers. Pallas makes `K` the **last grid axis**: the output's `index_map` ignores it,
#   so one output block stays in fast memory while the steps along `K` add into it.
# - **Accumulate in float32** whatever the inputs' dtype: a long sum in a low precision loses
#   digits.
#
# | level | CUDA GPU | TPU | size |
# |---|---|---|---|
# | off-chip | HBM, "global memory" | HBM | 16 GB on a TPU v5e chip, 80 GB on an H100 |
# | on-chip | shared memory, per SM | VMEM, per core | 228 KB per H100 SM, 128 MiB per TPU v5e core |
# | registers | each thread's | vector registers | 256 KB per H100 SM |
#
# The sizes come from NVIDIA's H100 documentation and from jax's TPU tables
# (`jax.experimental.pallas.tpu`). The on-chip level is about a hundred to a few hundred
# thousand times smaller than HBM, so a kernel holds tiles there, never whole matrices. The
# next cell counts what tiling saves for this lesson's shapes.

# %%
M, K, N = S.mm
MM_TRITON_BLOCK = 64  # BM = BN = BK for Triton: tl.dot takes blocks of 16 or more
MM_BLOCK = 128  # Pallas: (128, 128) blocks meet Mosaic TPU's (8, 128) tiling
untiled_loads = 2 * M * N * K  # a row of A and a column of B per output element


def tiled_loads(b):  # each program loads a b × K strip of A and a K × b strip of B, K padded
    return pl.cdiv(M, b) * pl.cdiv(N, b) * 2 * b * pl.cdiv(K, b) * b


print(f"C = A @ B with (M, K, N) = {(M, K, N)}: {untiled_loads:,} element loads one element at a time")
for name, b in (("Triton", MM_TRITON_BLOCK), ("Pallas", MM_BLOCK)):
    print(f"{name} tiles of {b} x {b}: {tiled_loads(b):,} loads, {untiled_loads / tiled_loads(b):.1f}x fewer")

# %% [markdown]
# Counted, not timed. Square `B × B` tiles divide the loads by about `B` for large matrices;
# the padding of ragged last tiles eats into that at these small shapes. Triton's masks skip
# the padded lanes, so its count is an upper bound. The price is fast memory: the tiles and
# the accumulator must fit on chip, and that bounds the block sizes.
#
# The Triton side: a 2-D grid, one program per tile of `C`. The program builds its tile's
# offsets as in section 2, then loops over `K` in steps of `BK`. Each step loads a tile of `A`
# and one of `B` with masks and adds their product to a float32 accumulator; `other=0.0` makes
# the padding past `K` add `0 · 0 = 0`.

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
# How to read it. The loop bound `tl.cdiv(K, BK)` is a runtime value, so Triton compiles a
# real loop. Its carried value `acc` stays in registers for the whole loop and reaches memory
# once, at the `tl.store`. `input_precision="ieee"` keeps float32 inputs in full float32.
# Triton's default, `"tf32"`, would round them to 10 bits of mantissa on Ampere and newer GPUs,
# and the check against `torch.matmul` would fail. The launcher passes every stride, so a
# transposed view is read correctly.
#
# The JAX side: a 3-D grid `(i, j, k)`, the reduction axis last. Program `(i, j, k)` gets
# block `(i, k)` of `A` and block `(k, j)` of `B`. The output's `index_map` returns `(i, j)`
# for every `k`, so the steps along `k` revisit one output block. Pallas keeps it in fast
# memory and writes it back once, when `(i, j)` changes. The kernel zeroes it on the first
# step and adds its product at every step.

# %%
# JAX: a tiled Pallas matmul (grid (i, j, k); the output block accumulates over k)
def matmul_kernel_pallas(a_ref, b_ref, c_ref):
    @pl.when(pl.program_id(2) == 0)  # the first step along K: start the sum at zero
    def _():
        c_ref[...] = jnp.zeros(c_ref.shape, c_ref.dtype)

    c_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)


def matmul_pallas(a, b, bm=MM_BLOCK, bk=MM_BLOCK, bn=MM_BLOCK):
    if PALLAS.name == "triton":  # a GPU runs the grid's programs at once: see below
        return matmul_pallas_gpu(a, b, bm, bk, bn)
    (m, k), n = a.shape, b.shape[1]
    a_pad = jnp.pad(a, ((0, -m % bm), (0, -k % bk)))  # zeros: padding along K adds 0 to each sum
    b_pad = jnp.pad(b, ((0, -k % bk), (0, -n % bn)))
    c = pl.pallas_call(
        matmul_kernel_pallas,
        out_shape=jax.ShapeDtypeStruct((a_pad.shape[0], b_pad.shape[1]), jnp.float32),
        grid=(a_pad.shape[0] // bm, b_pad.shape[1] // bn, a_pad.shape[1] // bk),  # (i, j, k): K last
        in_specs=[pl.BlockSpec(block_shape=(bm, bk), index_map=lambda i, j, k: (i, k)),
                  pl.BlockSpec(block_shape=(bk, bn), index_map=lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec(block_shape=(bm, bn), index_map=lambda i, j, k: (i, j)),  # one block for every k
        interpret=INTERPRET,
    )(a_pad, b_pad)
    return c[:m, :n]


# %% [markdown]
# How to read it. The kernel never computes an address: its three refs are the blocks the
# `BlockSpec`s chose for this step. `pl.when(cond)` is Pallas's conditional; a Python `if`
# would not work, because the program id is a traced value. `preferred_element_type` asks for
# a float32 product whatever the inputs' dtype, like Triton's float32 `acc`.
#
# **On a GPU the grid runs at once.** A TPU runs the grid as a loop, `k` fastest, and so does
# the interpreter. Pallas's Triton backend runs every program at once, in no order, as Triton
# does, so steps along `k` would race on one output block. On a GPU the launcher therefore
# takes a second kernel: it hands each program whole strips of `A` and `B` and loops over `K`
# inside, as the Triton kernel does.

# %%
# JAX on a GPU: each program loops over K itself
def matmul_kernel_pallas_loop(a_ref, b_ref, c_ref, *, bk):
    def step(k, acc):
        ks = pl.ds(k * bk, bk)  # a bk-wide window of the two strips
        return acc + jnp.dot(a_ref[:, ks], b_ref[ks, :], preferred_element_type=jnp.float32)

    c_ref[...] = jax.lax.fori_loop(0, a_ref.shape[1] // bk, step, jnp.zeros(c_ref.shape, jnp.float32))


def matmul_pallas_gpu(a, b, bm, bk, bn):
    (m, k), n = a.shape, b.shape[1]
    k_pad = pl.cdiv(pl.next_power_of_2(k), bk) * bk  # Triton's blocks are powers of two
    a_pad = jnp.pad(a, ((0, -m % bm), (0, k_pad - k)))
    b_pad = jnp.pad(b, ((0, k_pad - k), (0, -n % bn)))
    c = pl.pallas_call(
        functools.partial(matmul_kernel_pallas_loop, bk=bk),
        out_shape=jax.ShapeDtypeStruct((a_pad.shape[0], b_pad.shape[1]), jnp.float32),
        grid=(a_pad.shape[0] // bm, b_pad.shape[1] // bn),
        in_specs=[pl.BlockSpec(block_shape=(bm, k_pad), index_map=lambda i, j: (i, 0)),
                  pl.BlockSpec(block_shape=(k_pad, bn), index_map=lambda i, j: (0, j))],
        out_specs=pl.BlockSpec(block_shape=(bm, bn), index_map=lambda i, j: (i, j)),
        interpret=INTERPRET,
    )(a_pad, b_pad)
    return c[:m, :n]


# %% [markdown]
# Both Pallas products are checked against `jnp.dot` on the same device and against a
# float64 NumPy product on the CPU. The tolerance `TOL_MM` has an absolute part, because each
# output sums `K` products in a different order in each kernel.

# %%
a_jax, b_jax = jnp.asarray(a_np), jnp.asarray(b_np)
c_pallas = matmul_pallas(a_jax, b_jax)
c_ref = a_np.astype(np.float64) @ b_np  # float64, on the CPU
TOL_MM = dict(rtol=1e-5, atol=1e-4) if SETUP.alone_kind == "cpu" else dict(rtol=1e-4, atol=1e-3)
assert_close(c_pallas, jnp.dot(a_jax, b_jax), **TOL_MM, name="Pallas matmul vs jnp.dot")
assert_close(c_pallas, c_ref, **TOL_MM, name="Pallas matmul vs the CPU reference")
print(f"Pallas matmul on {c_pallas.device} ({TOL_MM}): max abs error "
      f"{float(jnp.abs(c_pallas - jnp.dot(a_jax, b_jax)).max()):.2e} vs jnp.dot, "
      f"{np.abs(np.asarray(c_pallas) - c_ref).max():.2e} vs float64 on the CPU")
steps = (pl.cdiv(M, MM_BLOCK), pl.cdiv(N, MM_BLOCK), pl.cdiv(K, MM_BLOCK))
print(f"grid here ({PALLAS.name}):", steps[:2] if PALLAS.name == "triton" else steps, "programs")
if TRITON.available:
    assert_close(c_triton, c_pallas, **TOL_MM, name="Triton vs Pallas matmul")
    print(f"Triton vs Pallas matmul: max abs error {np.abs(c_triton.cpu().numpy() - np.asarray(c_pallas)).max():.2e}")
else:
    print(TRITON.skipped())

# %% [markdown]
# **Autotuning.** The fastest block sizes depend on the hardware and the shapes. Triton times
# candidates for you with a decorator above `@triton.jit`, and the grid becomes a function of
# the chosen config:
#
# ```python
# @triton.autotune(
#     configs=[triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
#              triton.Config({"BM": 128, "BN": 64, "BK": 32}, num_warps=4)],
#     key=["M", "N", "K"],  # re-tune when these arguments change
# )
# @triton.jit
# def matmul_kernel_triton(a_ptr, b_ptr, c_ptr, M, N, K, ...): ...
#
# grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
# ```
#
# At the first launch for each new value of the `key` arguments, Triton times every config on
# the GPU and keeps the fastest. Pallas has no decorator: the block sizes are arguments of
# the launcher, and section 6 times them with `timing.compare`. Tuning needs compiled
# kernels. The next cell tunes section 1's softmax kernel. Under the interpreter its launch
# fails: the autotuner times configs through a GPU driver, which the interpreter lacks.

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
# - A raw kernel launch has no derivative: autograd cannot differentiate a Triton launch.
#   JAX pushes tangents forward through a `pallas_call` (`jax.jvp`), but cannot pull
#   gradients back through it (`jax.grad`).
# - **PyTorch**: `torch.library.custom_op` makes a function an operator. `register_fake`
#   gives the compiler the output's shape and dtype without running it, and
#   `register_autograd` gives the backward.
# - **JAX**: `jax.custom_vjp` pairs the forward, the Pallas kernel, with a backward rule.
#   `jit`, `grad` and `vmap` then compose around it.
# - Softmax's backward needs only the output `y`: `dx = y ⊙ (g − Σⱼ gⱼ yⱼ)` row by row, so
#   both registrations save `y`.
#
# First the natural code in JAX: `jax.grad` straight through the `pallas_call`. The loss
# weights the softmax by a fixed `w`, since the plain sum of a softmax row is always 1.

# %%
w_np = np.random.default_rng(1).normal(size=(S.rows, S.cols)).astype(np.float32)
w_jax, w_torch = jnp.asarray(w_np), torch.from_numpy(w_np).to(torch_dev)
with expect_error(ValueError, match="Linearization failed"):
    jax.grad(lambda x: jnp.sum(softmax_pallas(x) * w_jax))(x_jax)

# %% [markdown]
# Reverse mode first *linearises*: it splits the derivative into forward values, computed
# now, and a linear map that it then runs backwards. Pallas differentiates a `pallas_call`
# into one new kernel that returns the output and its tangent together, so there is nothing
# to split. Forward mode needs no split: `jax.jvp` runs that new kernel, and it agrees with
# `jax.nn.softmax`'s JVP.

# %%
tangent_jax = jnp.asarray(w_np)  # any direction will do
_, jvp_kernel_jax = jax.jvp(softmax_pallas, (x_jax,), (tangent_jax,))
_, jvp_builtin_jax = jax.jvp(lambda x: jax.nn.softmax(x, axis=-1), (x_jax,), (tangent_jax,))
assert_close(jvp_kernel_jax, jvp_builtin_jax, rtol=TOL["rtol"], atol=1e-6, name="jvp through the pallas_call")
print(f"jvp through the kernel vs jax.nn.softmax: max abs error {float(jnp.abs(jvp_kernel_jax - jvp_builtin_jax).max()):.2e}")


# %% [markdown]
# So `grad`, which training needs, gets a rule of its own. On the PyTorch side the operator's
# body is the Triton kernel of section 1, or a plain PyTorch softmax without Triton. Either
# way the compiler sees only the operator's name, `course10::softmax`.

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
# `torch.library.opcheck` checks the registration: the fake function agrees with the real
# one, and autograd and the compiler see a consistent operator. The JAX side wraps the Pallas
# call in `jax.custom_vjp`. The forward also returns what the backward needs, the residual
# `y`. The backward maps the output's cotangent `g` to the input's.

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
# The two registrations line up piece by piece. The operator's body and the primal function
# run the kernel; `setup_context` and `softmax_fwd_jax` keep `y`; the two backwards compute
# one formula. PyTorch also needs the fake function, because Dynamo traces with tensors that
# have a shape but no data. JAX traces the Pallas call itself, whose `out_shape` already says
# what comes out. JAX's backward returns a tuple with one cotangent per input, even for one
# input.
#
# Now the proof that the machinery works. `fullgraph=True` makes any graph break an error,
# and `kernels.count_graphs` counts the graphs Dynamo records.

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
# One graph: Dynamo recorded the loss without a break, and the gradient flowed through the
# registered backward. The operator stays one opaque node: Inductor compiles the code around
# it, never inside it. The JAX cell takes `jit` of `grad`, and `jit` of `vmap` of `grad` over
# a batch of matrices, each a different scale of the input.

# %%
# JAX: jit, grad and vmap around the custom_vjp
def loss_jax(x, w):
    return jnp.sum(softmax_op_jax(x) * w)


grad_op_jax = jax.jit(jax.grad(loss_jax))(x_jax, w_jax)
grad_ref_jax = jax.grad(lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w))(x_jax, w_jax)
xb_jax = jnp.stack([x_jax[: S.rows // 2] * (k + 1) for k in range(S.batch)])  # (batch, rows/2, cols)
wb_jax = jnp.stack([w_jax[: S.rows // 2]] * S.batch)
grads_batched_jax = jax.jit(jax.vmap(jax.grad(loss_jax)))(xb_jax, wb_jax)
print("vmapped gradients:", grads_batched_jax.shape, "on", grads_batched_jax.device)

# %%
TOL_GRAD = dict(rtol=TOL["rtol"], atol=1e-6)
assert_close(grad_op_torch, grad_ref_torch, rtol=1e-5, atol=1e-6, name="custom_op gradient")
assert_close(grad_op_jax, grad_ref_jax, **TOL_GRAD, name="custom_vjp gradient")
assert_close(grad_op_torch, grad_op_jax, **TOL_GRAD, name="PyTorch vs JAX gradient")
batched_ref = jax.vmap(jax.grad(lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w)))(xb_jax, wb_jax)
assert_close(grads_batched_jax, batched_ref, **TOL_GRAD, name="vmapped custom_vjp gradient")
grad_errors = {
    "PyTorch custom_op vs torch.softmax": (grad_op_torch - grad_ref_torch).abs().max().item(),
    "JAX custom_vjp vs jax.nn.softmax": float(jnp.abs(grad_op_jax - grad_ref_jax).max()),
    "PyTorch custom_op vs JAX custom_vjp": float(np.abs(grad_op_torch.cpu().numpy() - np.asarray(grad_op_jax)).max()),
}
for name, err in grad_errors.items():
    print(f"{name}: max abs gradient error {err:.2e}")

# %% [markdown]
# Both registered ops' gradients equal the reference gradients, and the two frameworks'
# gradients agree, within the printed errors. Under `vmap`, JAX batches the Pallas kernel by
# adding a grid axis, one set of programs per matrix, and batches the backward rule too.
#
# `custom_op` keeps the kernel opaque. For Triton kernels PyTorch has a second registration
# that Inductor can see into: `torch.library.triton_op` defines the operator, and
# `torch.library.wrap_triton` marks the launch inside it. On a CUDA GPU the compiler traces
# the launch and keeps one graph. Under the interpreter, compiling fails: Dynamo traces with
# fake tensors, and the interpreter's launch asks them for a data pointer they lack.

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
# ## 5. Escape hatches to host code, and what they cost
#
# **Key concepts**
# - Sometimes the code is not a kernel but host Python: a NumPy routine, a C library.
# - **JAX**: `jax.pure_callback(fn, result_shape, *args, vmap_method=...)` calls host code
#   from inside `jit`. The program stops, copies the operands to the host, runs Python, and
#   copies the result back. `fn` receives JAX arrays on the CPU; `np.asarray` makes them
#   NumPy.
# - **PyTorch**: Dynamo *translates* NumPy calls into torch ops, with no break. Code it
#   cannot trace is a **graph break**: the graph ends, Python runs, a new graph starts. A
#   `custom_op` around host code keeps one graph.
#
# The host code is the same NumPy softmax for both frameworks.

# %%
def softmax_np(x):
    """The host version: NumPy on the CPU (what a C library or legacy code would be)."""
    x = np.asarray(x)  # pure_callback passes a jax.Array: make it NumPy
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # float32 in, float32 out
    return e / e.sum(axis=-1, keepdims=True)


def scores_torch(x, softmax):  # a little work before and after the softmax
    return softmax(x * 2.0) * 3.0


def scores_jax(x, softmax):
    return softmax(x * 2.0) * 3.0


# %% [markdown]
# First the surprise on the PyTorch side: plain NumPy inside a compiled function is *not* an
# escape hatch. Dynamo records NumPy calls as torch ops, so the function below can stay one
# graph. A host function Dynamo must skip, marked here with `torch.compiler.disable`, splits
# the function in two.

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
# A count of one graph for the NumPy version means Dynamo rewrote `np.exp`, `max` and `sum`
# into torch operations. The skipped function always leaves two graphs, with Python running it
# in between. Whether a given NumPy routine compiles depends on what it touches, and Dynamo's
# NumPy support grows with each release: `kernels.count_graphs` or `torch._dynamo.explain`
# answers in one call. With `fullgraph=True` the break is an error that names the skipped
# function:

# %%
with expect_error(torch._dynamo.exc.Unsupported, match="softmax_numpy_torch", lines=2):
    kernels.count_graphs(lambda x: scores_torch(x, softmax_host_torch), x_small_torch, fullgraph=True)


# %% [markdown]
# The fix that keeps one graph is section 4's: a custom operator whose body is the host code,
# with a fake function for the compiler. The JAX side is `pure_callback` inside `jit`.

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
# The jaxpr shows the callback as one equation, `pure_callback`, between the
# multiplications. The program is still one compiled program, and the callback is an
# instruction in it to call back into Python.
#
# The timings below run every variant compiled, on the whole input, after checking that all
# of them compute the same scores. Every ratio in this lesson reads **time of the variant /
# time of the built-in op**: above 1, the built-in op is faster. Each verdict line names its
# two times. A verdict reads the median of the per-round ratios, so a burst of load that slows
# both variants of a round cancels out. The `first call` column includes compiling, from
# whatever caches earlier cells left, so the lesson draws nothing from it.

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
# JAX alone: the built-in op and the pure_callback, each jitted
print(SETUP.alone_label)
escape_jax = timing.compare(
    {
        "built-in softmax": jax.jit(lambda x: scores_jax(x, lambda v: jax.nn.softmax(v, axis=-1))),
        "pure_callback": jax.jit(lambda x: scores_jax(x, softmax_callback_jax)),
    },
    x_jax,
    **TOL,
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
# These lines apply the course's one rule to this run's rounds. A host route adds NumPy's
# softmax and a return to Python. On an accelerator it also copies the input to the host and
# the result back, while the device waits. The built-in op stays inside the compiled program,
# where the compiler can fuse the multiplications into it. The next cell counts the routes
# the rule judged slower or faster than the built-in op.

# %%
behind = [label for label, verdict in ESCAPE_VERDICTS.items() if verdict.verdict == claims.HOLDS]
ahead = [label for label, verdict in ESCAPE_VERDICTS.items() if verdict.verdict == claims.DOES_NOT_HOLD]
others = [label for label in ESCAPE_VERDICTS if label not in behind + ahead]
print(f"slower than the built-in softmax: {len(behind)} of {len(ESCAPE_VERDICTS)} host routes", behind or "")
print(f"faster than the built-in softmax: {len(ahead)}", ahead or "")
print(f"no verdict (each line above says why): {len(others)}", others or "")


# %% [markdown]
# A `custom_op` and a graph break run the same host code. What the operator buys is a whole
# graph for the compiler, and `fullgraph=True`, not faster host code.

# %% [markdown]
# ## 6. Speed on the hardware the kernels target
#
# **Key concepts**
# - A custom kernel pays off only where the compiler's output is far from what the hardware
#   can do. First count what the compilers already fuse.
# - An **interpreter** times its simulation, not the kernel. A speed claim is judged only
#   where the kernels compile: on a GPU, or on a TPU for Pallas.
# - **Roofline**: a kernel that does fewer FLOPs per byte moved than the chip's *ridge*, its
#   peak FLOP/s over its peak bandwidth, is **memory-bound**: bandwidth sets its time.
#   Above the ridge it is **compute-bound**.
# - **Block sizes** set how many bytes a tiled kernel moves and how many grid steps it takes.
#   Timing a few of them finds a good one.
#
# First, what the compilers make of the softmax: the kernels Inductor generates for
# `torch.compile(torch.softmax)`, and the fusions in XLA's program for
# `jax.jit(jax.nn.softmax)`. The eager formula of section 1 is five ops, five kernels.

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


FUSED = {f"torch.compile(torch.softmax) on {torch_dev.type}": inductor_kernels(lambda x: torch.softmax(x, -1), x_torch),
         f"jax.jit(jax.nn.softmax) on {SETUP.alone_kind}": xla_kernels(lambda x: jax.nn.softmax(x, axis=-1), x_jax)}
for what, names in FUSED.items():
    print(f"{what}: {len(names)} kernel(s) (the eager formula: {len(EAGER_TRAFFIC)} ops):", ", ".join(names))

# %% [markdown]
# How the cell counts. Inductor's generated code compiles each kernel through
# `async_compile`, so the cell counts those lines. XLA's optimised program calls its fusions
# from its entry computation, one launch each. A count of 1 means the compiler fused the
# whole softmax, as the hand-written kernel does, and left no traffic between kernels to
# save. A larger count means it split the softmax, usually at a reduction. Each compiler
# fuses differently for another device, so the counts hold for the devices named.
#
# Now the softmax timed, each kernel against its own framework's built-in op. Where the
# kernels compile, the input grows to `S.chip_softmax`, large enough to keep a chip busy.
# Each variant takes the input as an argument: a jitted function that closes over an array
# may compute the whole result once, while compiling. Each timed call also launches a program
# and waits for its result, so the JAX cell first times an empty program: on a machine where
# that round trip is long, small kernels read as slow.

# %%
# PyTorch: the Triton kernel against torch.softmax, on the device PyTorch computes on
triton_compiles = TRITON.available and not TRITON.interpreted
x_speed_np = (np.random.default_rng(4).normal(size=S.chip_softmax).astype(np.float32)
              if triton_compiles or not INTERPRET else x_np)  # the large input only where a kernel compiles
x_speed_torch = torch.from_numpy(x_speed_np if triton_compiles else x_np).to(torch_dev)
kernel_variants_torch = {"torch.softmax": lambda x: torch.softmax(x, -1)}
if TRITON.available:
    kernel_variants_torch["Triton kernel"] = softmax_triton
kernel_torch = timing.compare(kernel_variants_torch, x_speed_torch, rtol=1e-5)
kernel_torch

# %%
# JAX alone: the Pallas kernel against jax.nn.softmax, on the accelerator where there is one
x_speed_jax = jnp.asarray(x_speed_np if not INTERPRET else x_np)
kernel_variants_jax = {"jax.nn.softmax": jax.jit(lambda x: jax.nn.softmax(x, axis=-1)), "Pallas kernel": jax.jit(softmax_pallas)}
if PALLAS.name != "triton":  # a 64-row block is too large for a GPU program's registers
    kernel_variants_jax["Pallas kernel, 64 rows"] = jax.jit(functools.partial(softmax_pallas, block_rows=64))
floor = timing.bench(jax.jit(lambda v: v + 1), jnp.ones(8)).median  # an empty program: launch and wait
print(f"{SETUP.alone_label}: a {x_speed_jax.shape} softmax on {x_speed_jax.device}, Pallas {PALLAS.name}; "
      f"an empty jitted call takes {timing.format_seconds(floor)} here, and every time below includes that much")
kernel_jax = timing.compare(kernel_variants_jax, x_speed_jax, **TOL)
kernel_jax

# %% [markdown]
# A softmax reads each element once and writes it once, with a few operations in between. It
# sits far below any chip's ridge, so its ceiling is the chip's memory bandwidth. The next
# cell reads each JAX variant's time as bandwidth, against the chip's published peak.

# %%
moved = 2 * x_speed_jax.size * x_speed_jax.dtype.itemsize  # bytes: read x once, write y once
top = peaks.peak(SETUP.jax_alone)  # the published peak; None for a CPU
for name, m in kernel_jax.measurements.items():
    rate = moved / m.median
    of_peak = f", {rate / top.bytes_per_s:.0%} of the peak {top.bytes_per_s / 1e9:.0f} GB/s" if top and top.bytes_per_s else ""
    print(f"{name} on {SETUP.alone_kind}: {timing.format_seconds(m.median)} per call, {rate / 1e9:.1f} GB/s{of_peak}")
print(top if top else f"no published peak for a {SETUP.alone_kind}",
      "| the Pallas rows ran interpreted: a simulation's times" if INTERPRET else "")

# %%
KERNEL_RUNS = {  # pairing: (comparison, built-in op, kernel, whether the kernel ran interpreted)
    "pallas": (kernel_jax, "jax.nn.softmax", "Pallas kernel", INTERPRET),
    "triton": (kernel_torch, "torch.softmax", "Triton kernel", not triton_compiles),
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
# Where a kernel compiled, its line judges the claim from the paired rounds. The claim's
# registry states it the other way up, built-in time over kernel time, as its line says.
# Where a kernel ran interpreted, its line says why it was not judged.
#
# What the block changes: each grid step moves one block in and one out and carries a fixed
# cost. An 8-row block makes many small steps; a 64-row block makes eight times fewer, larger
# ones. The GB/s lines show how close each came to the chip's bandwidth. Where the share stays
# far below 100 %, something other than bandwidth limits the kernel, and a profile (lesson 09)
# says what. XLA's own softmax is the mark to beat; on a CPU every Pallas time above is the
# interpreter's.
#
# **The tiled matmul against `jnp.dot`.** A matrix product is the opposite case: `2·n³` FLOPs
# on `2·n²` inputs, so with large enough blocks it is compute-bound. The block sizes decide
# how often the kernel rereads its inputs: each block of `A` is read once per column of
# output blocks, `n / bn` times, and each block of `B` `n / bm` times. The next cell times a
# few block sizes in bfloat16, the type the matrix units of a TPU, and of GPUs from Ampere
# on, multiply natively, with float32 sums. It sets JAX's matmul precision to `default`, so
# the table's conditions read "mixed": the course's float32 setting, `highest`, asks for
# float32 passes, which Mosaic TPU refuses for bfloat16 inputs.

# %%
n_mm = S.interpreted_mm if INTERPRET else S.chip_mm
a_sp = jax.random.normal(jax.random.key(5), (n_mm, n_mm), jnp.bfloat16)
b_sp = jax.random.normal(jax.random.key(6), (n_mm, n_mm), jnp.bfloat16)
dot_f32 = jax.jit(lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32))
SWEEP = [(128, 128, 128), (256, 256, 256), (512, 512, 512), (512, 1024, 1024)]  # (bm, bk, bn)
SWEEP = [b for b in SWEEP if max(b) <= n_mm][: 1 if PALLAS.name == "triton" else None]  # a GPU: 128 only
mm_variants = {"jnp.dot": dot_f32}
mm_variants |= {f"Pallas {b}": jax.jit(functools.partial(matmul_pallas, bm=b[0], bk=b[1], bn=b[2])) for b in SWEEP}
with jax.default_matmul_precision("default"):  # one bfloat16 pass: "highest" asks for float32 passes
    dot_compiled = dot_f32.lower(a_sp, b_sp).compile()
    MM_FLOPS, DOT_BYTES = peaks.flops(dot_compiled), peaks.bytes_accessed(dot_compiled)  # XLA's counts
    print(f"{SETUP.alone_label}: a {n_mm}³ bfloat16 matmul on {a_sp.device}, Pallas {PALLAS.name}, "
          f"{MM_FLOPS / 1e9:.3g} GFLOP by XLA's count")
    mm_speed = timing.compare(mm_variants, a_sp, b_sp, rtol=1e-3, atol=1e-2)  # bf16 products, summed in other orders
mm_speed


# %%
def bytes_moved(n, bm, bk, bn):  # bfloat16 A read n/bn times, B read n/bm times; float32 C written once
    return 2 * n * n * (n // bn) + 2 * n * n * (n // bm) + 4 * n * n


rows = ["| variant | grid steps | MiB moved | FLOPs per byte | time | TFLOP/s | % of bf16 peak |", "|---|---:|---:|---:|---:|---:|---:|"]
for (name, m), block in zip(mm_speed.measurements.items(), [None, *SWEEP], strict=True):
    moved = DOT_BYTES if block is None else bytes_moved(n_mm, *block)
    steps = "XLA's" if block is None else math.prod(n_mm // s for s in block)
    share = peaks.share(MM_FLOPS / m.median, top)  # None without a published peak
    rows.append(f"| {name} | {steps} | {moved / 2**20:.3g} | {MM_FLOPS / moved:,.0f} | {timing.format_seconds(m.median)} | "
                f"{MM_FLOPS / m.median / 1e12:.2f} | {'—' if share is None else f'{share:.1%}'} |")
display(Markdown("\n".join(rows)))
best = min((f"Pallas {b}" for b in SWEEP), key=lambda v: mm_speed.measurements[v].median)
print(f"on {SETUP.alone_kind}: the fastest Pallas block, {best}, ran at {1 / mm_speed.ratio(best):.0%} of jnp.dot's speed"
      + (" (interpreted: a simulation's time)" if INTERPRET else ""))
print(f"{top}; ridge {top.ridge():.0f} FLOPs per byte" if top and top.ridge() else f"no published peak for a {SETUP.alone_kind}")

# %% [markdown]
# How to read the table. `FLOPs per byte` is each variant's arithmetic intensity. Below the
# chip's ridge, a kernel's bytes take longer than its FLOPs, and it cannot reach the peak
# whatever else it does. At `n = 8192`, the size timed on a chip, 128 × 128 blocks reread
# `A` and `B` 64 times each, and 512 × 512 blocks 16 times. Small blocks also make many grid
# steps, each with a fixed cost. A TPU v5e multiplies on four 128 × 128 matrix units: its
# 197 TFLOP/s is 4 × 128 × 128 multiply-adds, two FLOPs each, at 1.5 GHz. A block side below
# 128 would leave part of each unit idle, so 128 is the smallest side worth timing there.
# XLA's `jnp.dot` chooses its own tiling; the line under the table says how close the best
# block came to it here.
#
# On a GPU the lesson times the 128 block only: a Triton program holds its accumulator tile in
# registers, and larger blocks need tuning this lesson leaves out. Triton's own matmul
# tutorial shows that tuning, with a grouped order of programs and a fused activation.
#
# **Triton against Pallas.** Each kernel was timed against its own framework's op above.
# Timing them against each other makes sense only where both compile, on a CUDA GPU: on a
# CPU it would compare two interpreters.

# %%
if triton_compiles and not INTERPRET:
    softmax_pallas_jit = jax.jit(softmax_pallas)
    kernel_pair = timing.compare({"Triton kernel": lambda: softmax_triton(x_speed_torch),
                                  "Pallas kernel": lambda: softmax_pallas_jit(x_speed_jax)}, rtol=1e-5)
    display(kernel_pair)
    print(claims.compact({"Pallas vs Triton": claims.faster(kernel_pair, "Pallas kernel", "Triton kernel")}))
else:
    print("Triton vs Pallas: not timed here,", "Triton is absent (see the setup cell)" if not TRITON.available
          else "a kernel runs interpreted (the setup cells say which)")

# %% [markdown]
# **When is a custom kernel worth writing?** Start from a profile (lesson 09). If the time
# goes to an operation the compiler already fuses well, a kernel will at best match it.
# Kernels pay where the compiler wastes memory traffic it cannot see how to avoid. Attention
# is the classic case: its naive form writes a sequence-by-sequence matrix to memory and
# reads it back. FlashAttention keeps it on chip with an online softmax, a loop over column
# blocks of section 1's kernel. Quantised or sparse matrix products are others.
#
# Check the libraries first. PyTorch ships fused attention
# (`torch.nn.functional.scaled_dot_product_attention`), and JAX ships
# `jax.nn.dot_product_attention` and Pallas TPU kernels in `jax.experimental.pallas.ops.tpu`.
# Pallas GPU kernels now live in the `tokamax` library: jax 0.12 drops
# `jax.experimental.pallas.ops.gpu`. When you do write a kernel, keep this lesson's pattern:
# the framework's op as the oracle, the interpreter for debugging, the registration so that
# compiling and differentiating still work, and timings on the hardware it targets.

# %% [markdown]
# ## Summary
#
# | idea | PyTorch (Triton, torch.library) | JAX (Pallas, custom_vjp) |
# |---|---|---|
# | write a kernel | `@triton.jit`, pointers, `tl.load`/`tl.store` | a Python function on refs, `pl.pallas_call` |
# | which work a program does | `tl.program_id(axis)`, offsets `pid * B + tl.arange(0, B)` | `pl.program_id(axis)`, `BlockSpec(block_shape=..., index_map=...)` |
# | number of programs | `kernel[grid](...)`, `triton.cdiv` | `grid=...`, `pl.cdiv` |
# | accumulate across steps | a loop over K in the program, `acc += tl.dot(a, b)` in float32 | K as the last grid axis, `pl.when(pl.program_id(2) == 0)` zeroes the output block; a `fori_loop` over K on a GPU |
# | block sizes | `triton.autotune(configs=[...], key=[...])` | arguments of the launcher, timed with `timing.compare` |
# | ragged edges | `mask=` on every load and store, `other=` on loads | pad to whole blocks and slice; mask reads with `jnp.where` on an iota |
# | run without the hardware | `TRITON_INTERPRET=1` before the first `@triton.jit` | `interpret=True` |
# | make it an op | `torch.library.custom_op` + `register_fake`; `triton_op` + `wrap_triton` | a function: `pallas_call` is already a JAX primitive |
# | its gradient | `register_autograd(backward, setup_context=...)` | `jax.custom_vjp` + `defvjp(fwd, bwd)` |
# | prove it composes | `torch.compile(fullgraph=True)`, `torch.library.opcheck` | `jit`, `grad`, `vmap` around it |
# | call host code | a graph break, or a `custom_op` around it | `jax.pure_callback(..., vmap_method=...)` |
#
# **Popular claims vs what you measured.** The lesson tested one claim, that a hand-written
# fused softmax kernel beats the framework's own softmax, once per kernel language. The table
# comes from section 6's verdicts: a verdict from paired rounds where a kernel compiled, the
# reason it was not judged elsewhere.

# %%
display(Markdown(
    "| pairing | claim | stated | verdict | why |\n|---|---|---|---|---|\n"
    + "\n".join(f"| {pairing} | {v.claim.text} | {v.claim.claimed} | **{v.verdict}** | {v.explanation} |"
                 for pairing, v in KERNEL_VERDICTS.items())
))

# %% [markdown]
# A row that reads "not testable here" is not a verdict against the claim. On a GPU of sm_80
# or newer with Triton installed, both rows are judged; on a TPU, the Pallas row. The matmul
# sweep and the host routes answer "how fast here", not a claim of the course's registry.
#
# **Common misconceptions** (each with the section that corrects it)
# - *"The padding of a block is zeros."* It is whatever the launcher or the backend leaves
#   there, NaN here: mask it (1).
# - *"Pallas is for TPUs only."* On a GPU it lowers through Triton or Mosaic GPU, and on a
#   CPU its interpreter runs the same kernel (1).
# - *"Padding is padding."* Along a reduction it is part of the result: the softmax masks
#   its NaN padding, and the matmul pads `K` with zeros, which add nothing (1, 3).
# - *"A Pallas grid is a loop, so any kernel may accumulate across its steps."* Only where the
#   grid runs in order, as on a TPU or in the interpreter; on a GPU the programs run at once
#   (3).
# - *"JAX differentiates any JAX code, kernels included."* Forward mode goes through a
#   `pallas_call`; reverse mode needs a `custom_vjp` (4).
# - *"NumPy inside `torch.compile` breaks the graph."* Dynamo translates NumPy calls into
#   torch ops; only code it cannot trace breaks the graph (5).
# - *"A custom kernel is faster."* Only where it compiles and does better than the compiler;
#   its block sizes alone can decide which wins (6).
#
# **Review questions**
#
# <details><summary>1. A Triton softmax kernel loads with <code>mask=cols &lt; n_cols</code> but
# <code>other=0.0</code>. What goes wrong, and for which rows?</summary>
# The masked columns add `exp(0 − max)` each to the row's sum, so every row is scaled down.
# For a row whose maximum is below 0, the padding even becomes the maximum. Every row has the
# padded columns. `other=-inf` makes them add 0.
# </details>
#
# <details><summary>2. A 2-D grid covers a 10 × 12 array with 4 × 8 blocks: how many
# programs, and which of them overhang the array?</summary>
# `cdiv(10, 4) · cdiv(12, 8) = 3 · 2 = 6` programs. Every block of the last block row (rows
# 8–11 of a 10-row array) and of the last block column (columns 8–15 of 12) overhangs: all
# but blocks (0, 0) and (1, 0), as the dashed outlines in section 2 show.
# </details>
#
# <details><summary>3. What does <code>register_fake</code> give <code>torch.compile</code>
# that the real implementation cannot?</summary>
# The output's shape, dtype and device without running the kernel. The compiler traces with
# fake tensors, which hold no data, so it needs a function that computes metadata only.
# Without it, tracing the operator fails, and `opcheck` reports it.
# </details>
#
# <details><summary>4. Why does the softmax backward save the output rather than the
# input?</summary>
# The vector-Jacobian product needs only `y`: `dx = y ⊙ (g − Σ g ⊙ y)`. Saving `x` would
# force the backward to compute the softmax again.
# </details>
#
# <details><summary>5. When is <code>jax.pure_callback</code> the right tool, and what does it
# cost?</summary>
# For host code with no JAX equivalent, such as a C library or a simulator, off the hot path.
# Each call stops the compiled program, copies operands to the host and back, and blocks
# fusion around it. It has no derivative unless a `custom_vjp` gives one. Section 5 measured
# the cost here.
# </details>
#
# <details><summary>6. Why does the count of bytes moved matter more for a softmax than its
# number of arithmetic operations?</summary>
# A softmax does a few operations per element, and a GPU or TPU does dozens to hundreds of
# operations in the time its memory delivers one float32. So each eager op takes as long as
# its memory traffic, and one fused kernel pays that traffic once. A matrix product is the
# opposite case: `2·M·N·K` operations on `M·K + K·N` inputs.
# </details>
#
# <details><summary>7. A Pallas matmul zeroes its output block under
# <code>pl.when(pl.program_id(2) == 0)</code> and adds a product at every step. Why must K be
# the last grid axis?</summary>
# The output block stays in fast memory while consecutive steps revisit it, so the steps along
# K must follow one another for the same `(i, j)`. With K last they do, and the block is
# written back once, when `(i, j)` changes. On a GPU, where the programs run at once, each
# program loops over K itself instead.
# </details>
#
# <details><summary>8. A 2048 × 2048 × 2048 matmul runs in 128 × 128 blocks. How many times
# does the kernel read each element of A, and how do larger blocks change that?</summary>
# Once per column of output blocks: `2048 / 128 = 16` times. With 512-wide blocks it reads
# each element 4 times, so the kernel moves fewer bytes per FLOP, as the table of section 6
# counts.
# </details>
#
# The cell below asks these questions again as a self-check: pick or type an answer and press
# *Check*. A wrong answer gets a hint, not the answer; *Show the answer* opens it.

# %%
from course_utils import quiz

quiz.load("10_custom_kernels")

# %% [markdown]
# **Next:** the exercises in `exercises/10_custom_kernels_exercises.ipynb`: an index map, a
# masked Pallas log-sum-exp, a `custom_vjp` for a Pallas op, a `torch.library` custom
# operator, a `pure_callback` that works under `vmap`, and a Triton kernel that sums rows in
# float32.
