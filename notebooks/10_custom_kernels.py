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
#    `register_autograd`, and `jax.custom_vjp` around a `pallas_call`;
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
    "rows": (250, 37),  # softmax rows: not a multiple of the row block
    "cols": (1000, 100),  # columns: not a power of two, so the column block is masked
    "block_rows": (8, 8),  # rows per Pallas program
    "batch": (4, 3),  # matrices in the vmapped batch
    "mm": ((250, 380, 200), (100, 200, 72)),  # (M, K, N): no block divides them
    "chip_softmax": ((65536, 1024), (65536, 1024)),  # timed where the kernels compile
    "chip_mm": (8192, 8192),  # M = K = N of the matmul timed where the kernels compile
    "interpreted_mm": (512, 256),  # the same where they run interpreted: kept small
}

# %%
from course_utils import env

# First, before anything touches a device: JAX's GPU memory policy, JAX before PyTorch,
# float32 in both.
SETUP = env.setup()

import functools
import math

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from course_utils import claims, config, kernels, peaks, plots, timing
from course_utils.expect import expect_error
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
print(env.report().line())
print(SETUP.rule)
torch_dev, jax_dev = SETUP.pair()

# %% [markdown]
# Comparisons between the frameworks run both on one device kind; everything JAX does alone,
# the Pallas kernels included, runs on the accelerator when there is one.

# %%
# Triton reads TRITON_INTERPRET when @triton.jit wraps a kernel: set it (no CUDA GPU) first
TRITON = kernels.setup_triton()
if TRITON.available:
    import triton
    import triton.language as tl
print(TRITON.line())
PALLAS = kernels.pallas_backend(device=SETUP.jax_alone)  # Mosaic TPU, Triton or interpreter
INTERPRET = PALLAS.interpret  # the interpret= of every pallas_call below
print(PALLAS.line(), "on", SETUP.jax_alone)
print(kernels.use_triton_on_gpus())

# %% [markdown]
# Triton compiles for a CUDA GPU; elsewhere its **interpreter** (`TRITON_INTERPRET=1`) runs
# each program with NumPy. Pallas compiles through Mosaic TPU on a TPU and through Triton on a
# GPU of sm_80 or newer; `kernels.pallas_backend` picks the route for the device. On a CPU,
# `pallas_call(..., interpret=True)` runs the kernel body as ordinary JAX operations, one grid
# step after another. An interpreter checks a kernel's logic, with one catch that section 2
# shows, but its times say nothing about the kernel.
#
# Triton is an **optional extra** of about 200 MB (`pip install ".[kernels]"`). Without it,
# each Triton cell prints one line.
#
# <details><summary>Pallas on a GPU: the backend, per jax version</summary>
#
# A `pallas_call` without compiler parameters lowers on a GPU through Triton, except from jax
# 0.9 to 0.11.1, where the flag `jax_pallas_use_mosaic_gpu` sends it to Mosaic GPU.
# `kernels.use_triton_on_gpus()` runs `jax.config.update("jax_pallas_use_mosaic_gpu", False)`
# where the flag exists. Pallas's Triton backend needs a GPU of sm_80 or newer, so on Colab's
# free T4 the Pallas kernels interpret. Mosaic GPU, where the Pallas GPU docs now point, has
# its own kernel style, which this lesson leaves out.
# </details>

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
print(f"input {x_np.shape}, float32, |values| up to {np.abs(x_np).max():.1f}; "
      f"JAX's copy on {x_jax.device}")

# %% [markdown]
# What fusion saves, counted for this input. Each eager op reads its operands from memory and
# writes its result back. A row's maximum or sum is one number per row.

# %%
n, r = S.rows * S.cols, S.rows  # elements of x; one value per row
EAGER_OPS = {  # op: (elements read, elements written)
    "m = max(x)": (n, r), "d = x - m": (n + r, n), "e = exp(d)": (n, n),
    "s = sum(e)": (n, r), "y = e / s": (n + r, n),
}  # fmt: skip
eager_bytes = 4 * sum(read + written for read, written in EAGER_OPS.values())  # float32
fused_bytes = 4 * 2 * n  # read x once, write y once
print(f"five eager ops move {eager_bytes:,} bytes, one fused kernel {fused_bytes:,}: "
      f"{eager_bytes / fused_bytes:.2f}x the traffic")

# %% [markdown]
# A softmax does a few arithmetic operations per element, so on a GPU or a TPU its time is
# set by the bytes it moves. Does a compiler already fuse the chain? `kernels.inductor_kernels`
# lists the kernels in Inductor's generated code, and `kernels.xla_kernels` the fusions XLA's
# optimised program launches.

# %%
FUSED = {
    f"torch.compile(torch.softmax) on {torch_dev.type}":
        kernels.inductor_kernels(lambda x: torch.softmax(x, -1), x_torch),
    f"jax.jit(jax.nn.softmax) on {SETUP.alone_kind}":
        kernels.xla_kernels(lambda x: jax.nn.softmax(x, axis=-1), x_jax),
}  # fmt: skip
for what, names in FUSED.items():
    k, ops = len(names), len(EAGER_OPS)
    than = "fewer than" if k < ops else "more than" if k > ops else "as many as"
    print(f"{what}: {k} kernel(s), {than} the formula's {ops} ops:", ", ".join(names))

# %% [markdown]
# One kernel means the compiler fused the whole softmax, as a hand-written kernel does. More
# means it split the softmax, usually at a reduction, and the names show where. XLA may even
# compute one row reduction in two passes, a `reduce-window` and then a `reduce`. The counts
# hold for this shape and these devices only.
#
# The PyTorch side: one Triton program per row. The program reads its row with a block of
# `BLOCK` columns, the smallest power of two at or above the row length. The loads past the
# end, masked by `cols < n_cols`, read `other=-inf`, which adds `exp(-inf) = 0` to the sum.
# The same mask keeps the stores past the end from writing.

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
        block = triton.next_power_of_2(x.shape[1])
        softmax_kernel_triton[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=block)
        return y

    y_triton = softmax_triton(x_torch)
    assert_close(y_triton, torch.softmax(x_torch, -1), rtol=1e-5, atol=1e-7, name="Triton")
    print("Triton kernel: equal to torch.softmax within rtol=1e-5")
else:
    print(TRITON.skipped())


# %% [markdown]
# How to read the Triton cells. A tensor passed to a `@triton.jit` kernel arrives as its
# address. A `tl.constexpr` is fixed at compile time, so each new `BLOCK` compiles a new
# kernel. `kernel[grid](...)` launches one program per point of the grid, here one per row.
# Inside, every variable is a whole block: `cols` holds `BLOCK` offsets and `x` holds `BLOCK`
# values.
#
# The JAX side: one Pallas program per block of `block_rows` rows. The kernel reads its whole
# block with `x_ref[...]` and builds its own mask from a column index, because the block's
# padding is not part of the row.

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
# The launcher is one `pallas_call`. It names the kernel, the output's shape, the grid, and
# one `BlockSpec` per input and output. Before the call, the launcher pads the input with NaN
# to whole blocks; after it, it slices the result back.

# %%
# JAX: the launcher, one pallas_call over whole blocks
def softmax_pallas(x, block_rows=S.block_rows, kernel=softmax_kernel_pallas):
    n_rows, n_cols = x.shape
    block = (block_rows, pl.next_power_of_2(n_cols))  # the block one program sees
    pad = ((0, -n_rows % block[0]), (0, block[1] - n_cols))  # up to whole blocks
    x_pad = jnp.pad(x, pad, constant_values=jnp.nan)
    spec = pl.BlockSpec(block, lambda i: (i, 0))  # program i: block (i, 0)
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
# `(i+1)·block_rows`. Mosaic TPU asks that a block's last two sides be multiples of 8 and
# 128, or span the array, and these do. Padding to whole blocks keeps every access inside the
# array, and the NaN makes a missing mask visible.
#
# Each kernel is checked against its framework's softmax, and the Pallas result also against
# float64 NumPy on the CPU. `TOL` is looser on an accelerator, whose `exp` may differ in the
# fifth digit.

# %%
TOL = dict(rtol=1e-5, atol=1e-7) if SETUP.alone_kind == "cpu" else dict(rtol=1e-4, atol=1e-6)
x64 = x_np.astype(np.float64)
e64 = np.exp(x64 - x64.max(axis=1, keepdims=True))
y_ref = e64 / e64.sum(axis=1, keepdims=True)  # float64, on the CPU
assert_close(y_pallas, jax.nn.softmax(x_jax, axis=-1), **TOL, name="Pallas vs jax.nn.softmax")
assert_close(y_pallas, y_ref, **TOL, name="Pallas vs float64 NumPy")
if TRITON.available:
    assert_close(y_triton, y_pallas, **TOL, name="Triton vs Pallas")
print(f"Pallas kernel on {y_pallas.device}: equal to jax.nn.softmax and float64 NumPy "
      f"within {TOL}" + (", and to the Triton kernel" if TRITON.available else ""))


# %% [markdown]
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
# The padding leaks into every row's maximum and sum, since every row has padded columns. In
# Triton, a load without `mask=` reads past the end of the row, into the next row or past the
# tensor: on a GPU, silently wrong numbers or an illegal memory access.

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
# Each kernel below writes its own program number into its tile of a 12 × 200 array, in
# 8 × 128 blocks. That block meets Mosaic TPU's rule from section 1. Neither 12
# nor 200 is a multiple of the block, so the last block row and the last block column
# overhang the array.

# %%
TILE_SHAPE, TILE_BLOCK = (12, 200), (8, 128)
tile_grid = (pl.cdiv(TILE_SHAPE[0], TILE_BLOCK[0]), pl.cdiv(TILE_SHAPE[1], TILE_BLOCK[1]))
print(f"array {TILE_SHAPE}, blocks {TILE_BLOCK}: grid {tile_grid}, {math.prod(tile_grid)} programs")

# %%
# PyTorch: Triton computes element offsets and masks them
if TRITON.available:

    @triton.jit
    def tile_ids_kernel_triton(out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rows = pid_m * BM + tl.arange(0, BM)[:, None]  # (BM, 1) element rows
        cols = pid_n * BN + tl.arange(0, BN)[None, :]  # (1, BN) element columns
        ids = tl.zeros((BM, BN), tl.int32) + pid_m * tl.num_programs(1) + pid_n
        mask = (rows < M) & (cols < N)  # the overhanging part of an edge block
        tl.store(out_ptr + rows * N + cols, ids, mask=mask)

    ids_triton = torch.full(TILE_SHAPE, -1, dtype=torch.int32, device=torch_dev)
    BM, BN = TILE_BLOCK
    tile_ids_kernel_triton[tile_grid](ids_triton, *TILE_SHAPE, BM=BM, BN=BN)
else:
    print(TRITON.skipped())


# %%
# JAX: the index_map names each program's block; the kernel sees only that block
def tile_ids_kernel_pallas(out_ref):
    program = pl.program_id(0) * pl.num_programs(1) + pl.program_id(1)
    out_ref[...] = jnp.full(out_ref.shape, program, jnp.int32)  # (BM, BN), no mask


def tile_ids_pallas():
    whole = (tile_grid[0] * TILE_BLOCK[0], tile_grid[1] * TILE_BLOCK[1])  # (16, 256)
    ids = pl.pallas_call(
        tile_ids_kernel_pallas,
        out_shape=jax.ShapeDtypeStruct(whole, jnp.int32),
        grid=tile_grid,
        out_specs=pl.BlockSpec(TILE_BLOCK, lambda i, j: (i, j)),  # program (i, j): block (i, j)
        interpret=INTERPRET,
    )()
    return ids[: TILE_SHAPE[0], : TILE_SHAPE[1]]  # the array inside the whole blocks


ids_pallas = tile_ids_pallas()

# %%
rows_np, cols_np = np.arange(TILE_SHAPE[0]), np.arange(TILE_SHAPE[1])
expected_ids = np.add.outer(rows_np // TILE_BLOCK[0] * tile_grid[1], cols_np // TILE_BLOCK[1])
assert_close(ids_pallas, expected_ids, name="Pallas tile ids")
if TRITON.available:
    assert_close(ids_triton, ids_pallas, name="Triton vs Pallas tile ids")
print("every element was written by program (row // BM) · gn + col // BN, in Pallas"
      + (" and in Triton" if TRITON.available else ""))

# %% [markdown]
# The two cells state one tiling in two ways. Triton's kernel computes each element's row and
# column: a `(BM, 1)` column and a `(1, BN)` row broadcast to a `(BM, BN)` block of addresses.
# Its mask stops the overhanging programs from writing past the array. Pallas's kernel never
# sees an offset: the `index_map` names the block, and Pallas slices it. Its output covers
# whole blocks, 16 × 256, and the launcher keeps the 12 × 200 corner. The picture draws the
# map the last cell checked. Each colour is one program, and the hatched part of a block lies
# past the array's edge.

# %%
fig, ax = plt.subplots(figsize=(9, 3))
kernels.plot_tiles(ids_pallas, TILE_BLOCK, ax=ax, title="Which program wrote each element")
plots.set_description(fig, f"A 12 × 200 array in four colours, one per program of the {tile_grid} "
                      "grid of 8 × 128 blocks; the parts of the blocks past the edge are hatched")
fig.tight_layout()


# %% [markdown]
# <details><summary>Blocks smaller than 8 × 128 on a TPU</summary>
#
# Mosaic TPU refuses a block whose last two sides are not multiples of 8 and 128, unless the
# block spans those sides of the array. A tiling in smaller blocks, 4 × 8 say, then puts the
# grid on leading axes. The output becomes a `(gm, gn, BM, BN)` array with
# `BlockSpec((None, None, BM, BN), lambda i, j: (i, j, 0, 0))`. The kernel still sees a
# `BM × BN` block, since `None` drops an axis from the block. A transpose and a reshape then
# give the 2-D picture back. The exercise notebook's launcher works this way.
# </details>
#
# **The interpreter forgives a read outside the block.** A Pallas ref is the program's own
# block, indexed from 0. Triton's habit, indexing at the program's offset in the whole array,
# reads past that block. `interpret=True` clamps such a read back into the block, as
# `lax.dynamic_slice` clamps its start. `interpret=pltpu.InterpretParams()`, Pallas's TPU
# interpreter, checks every read and write and raises instead. Both run here on the CPU:

# %%
# JAX: Triton's offset habit inside a Pallas kernel, under both interpreters
def double_kernel_offsets(x_ref, y_ref):  # x_ref is already this program's 8 rows
    rows = pl.ds(pl.program_id(0) * 8, 8)  # the rows' offset in the whole array: the bug
    y_ref[...] = x_ref[rows, :] * 2


def double_pallas(x, interpret):
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return pl.pallas_call(double_kernel_offsets, out_shape=out, grid=(x.shape[0] // 8,),
                          in_specs=[spec], out_specs=spec, interpret=interpret)(x)


x_cpu = np.arange(24 * 128, dtype=np.float32).reshape(24, 128)
x_cpu = jax.device_put(x_cpu, jax.devices("cpu")[0])  # the interpreters run on the CPU
right = bool(jnp.all(double_pallas(x_cpu, interpret=True) == 2 * x_cpu))
print("interpret=True returned", "2 * x, the right numbers" if right else "wrong numbers")
with expect_error(IndexError, match="Out-of-bounds"), kernels.out_of_bounds_errors():
    double_pallas(x_cpu, interpret=pltpu.InterpretParams()).block_until_ready()

# %% [markdown]
# Clamped, every program reads its own block after all, so a wrong kernel can pass here and
# read memory outside its block on a chip. Run a new kernel once under `InterpretParams()`.
# `kernels.out_of_bounds_errors()` only shortens its long error to the line above.

# %% [markdown]
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
# The sizes come from NVIDIA's H100 documentation and jax's TPU tables. On-chip memory holds
# tiles, never whole matrices: the tiles and the accumulator must fit there, and that bounds
# the block sizes.
#
# The Triton side: a 2-D grid, one program per tile of `C`. The program builds its tile's
# offsets as in section 2, then loops over `K` in steps of `BK`. Each step loads a tile of `A`
# and one of `B` with masks and adds their product to a float32 accumulator. `other=0.0`
# makes the padding past `K` add `0 · 0 = 0`.

# %%
# PyTorch: a tiled Triton matmul (one program per tile of C, a loop over K)
if TRITON.available:

    @triton.jit
    def matmul_kernel_triton(a_ptr, b_ptr, c_ptr, M, N, K,
                             s_am, s_ak, s_bk, s_bn, s_cm, s_cn,  # the strides
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rows = (tl.program_id(0) * BM + tl.arange(0, BM))[:, None]  # (BM, 1) rows of C
        cols = (tl.program_id(1) * BN + tl.arange(0, BN))[None, :]  # (1, BN) columns
        acc = tl.zeros((BM, BN), dtype=tl.float32)  # the sum, in registers, in float32
        for k in range(0, tl.cdiv(K, BK)):  # one step along K per iteration
            ks = k * BK + tl.arange(0, BK)
            a_mask = (rows < M) & (ks[None, :] < K)
            a = tl.load(a_ptr + rows * s_am + ks[None, :] * s_ak, mask=a_mask, other=0.0)
            b_mask = (ks[:, None] < K) & (cols < N)
            b = tl.load(b_ptr + ks[:, None] * s_bk + cols * s_bn, mask=b_mask, other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")  # ieee: full float32
        tl.store(c_ptr + rows * s_cm + cols * s_cn, acc, mask=(rows < M) & (cols < N))

else:
    print(TRITON.skipped())

# %%
# PyTorch: the launcher, a cdiv(M, BM) x cdiv(N, BN) grid, checked against torch.matmul
M, K, N = S.mm
MM_TRITON_BLOCK = 64  # BM = BN = BK for Triton: tl.dot takes blocks of 16 or more
MM_BLOCK = 128  # Pallas, below: 128 x 128 blocks meet Mosaic TPU's (8, 128) tiling
a_np = np.random.default_rng(2).normal(size=(M, K)).astype(np.float32)
b_np = np.random.default_rng(3).normal(size=(K, N)).astype(np.float32)
a_torch, b_torch = torch.from_numpy(a_np).to(torch_dev), torch.from_numpy(b_np).to(torch_dev)
if TRITON.available:

    def matmul_triton(a, b, block=MM_TRITON_BLOCK):
        c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.float32, device=a.device)
        grid = (triton.cdiv(a.shape[0], block), triton.cdiv(b.shape[1], block))
        matmul_kernel_triton[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1],
                                   *a.stride(), *b.stride(), *c.stride(),
                                   BM=block, BN=block, BK=block)
        return c

    c_triton = matmul_triton(a_torch, b_torch)
    assert_close(c_triton, a_torch @ b_torch, rtol=1e-5, atol=1e-4, name="Triton matmul")
    print("Triton matmul: equal to torch.matmul within rtol=1e-5, atol=1e-4")
else:
    print(TRITON.skipped())


# %% [markdown]
# How to read it. The loop bound `tl.cdiv(K, BK)` is a runtime value, so Triton compiles a
# real loop. Its carried value `acc` stays in registers and reaches memory once, at the
# `tl.store`. `input_precision="ieee"` keeps float32 inputs in full float32: Triton's default,
# `"tf32"`, would round them to 10 bits of mantissa on Ampere and newer GPUs.
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
    (m, k), n = a.shape, b.shape[1]
    a_pad = jnp.pad(a, ((0, -m % bm), (0, -k % bk)))  # zeros: padding along K adds 0
    b_pad = jnp.pad(b, ((0, -k % bk), (0, -n % bn)))
    grid = (a_pad.shape[0] // bm, b_pad.shape[1] // bn, a_pad.shape[1] // bk)  # K last
    c = pl.pallas_call(
        matmul_kernel_pallas,
        out_shape=jax.ShapeDtypeStruct((grid[0] * bm, grid[1] * bn), jnp.float32),
        grid=grid,
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),  # the same for every k
        interpret=INTERPRET,
    )(a_pad, b_pad)
    return c[:m, :n]


# %% [markdown]
# How to read it. The kernel never computes an address: its refs are the blocks the
# `BlockSpec`s chose for this step. `pl.when(cond)` is Pallas's conditional, since the program
# id is a traced value. `preferred_element_type` asks for a float32 product, like Triton's
# float32 `acc`.
#
# **On a GPU the grid runs at once.** A TPU runs the grid as a loop, `k` fastest, and so does
# the interpreter. Pallas's Triton backend runs every program at once, so steps along `k`
# would race on one output block. On a GPU the lesson therefore takes
# `kernels.matmul_loop_pallas`. Its 2-D grid gives each program a whole strip of `A` and of
# `B`, and its kernel, folded below, loops over `K` in `pl.ds` windows, as the Triton kernel
# does.

# %%
kernels.shown(kernels.matmul_loop_kernel, "On a GPU: the kernel of kernels.matmul_loop_pallas")

# %% [markdown]
# `TOL_MM` has an absolute part, since each kernel sums `K` products in its own order.

# %%
# A GPU runs the grid's programs at once: there each program loops over K itself
matmul_jax = kernels.matmul_loop_pallas if PALLAS.name == "triton" else matmul_pallas
a_jax, b_jax = jnp.asarray(a_np), jnp.asarray(b_np)
c_pallas = matmul_jax(a_jax, b_jax)
c_ref = a_np.astype(np.float64) @ b_np  # float64, on the CPU
TOL_MM = dict(rtol=1e-5, atol=1e-4) if SETUP.alone_kind == "cpu" else dict(rtol=1e-4, atol=1e-3)
assert_close(c_pallas, jnp.dot(a_jax, b_jax), **TOL_MM, name="Pallas matmul vs jnp.dot")
assert_close(c_pallas, c_ref, **TOL_MM, name="Pallas matmul vs float64 NumPy")
if TRITON.available:
    assert_close(c_triton, c_pallas, **TOL_MM, name="Triton vs Pallas matmul")
grid = (pl.cdiv(M, MM_BLOCK), pl.cdiv(N, MM_BLOCK), pl.cdiv(K, MM_BLOCK))
# the GPU route's grid has no K axis
grid = grid[:2] if PALLAS.name == "triton" else grid
print(f"{matmul_jax.__name__} on {c_pallas.device}, grid {grid}: "
      f"equal to jnp.dot and float64 NumPy within {TOL_MM}")

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
# the GPU and keeps the fastest. Pallas has no decorator: the block
# sizes are arguments of the launcher, and section 6 times a few of them.

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
# Reverse mode first *linearises*: it splits the derivative into forward values and a linear
# map that it then runs backwards. Pallas differentiates a `pallas_call` into one new kernel
# that returns the output and its tangent together, which cannot be split. Forward mode needs
# no split, so `jax.jvp` works:

# %%
tangent_jax = jnp.asarray(w_np)  # any direction will do
_, jvp_kernel_jax = jax.jvp(softmax_pallas, (x_jax,), (tangent_jax,))
_, jvp_builtin_jax = jax.jvp(lambda x: jax.nn.softmax(x, axis=-1), (x_jax,), (tangent_jax,))
assert_close(jvp_kernel_jax, jvp_builtin_jax, rtol=TOL["rtol"], atol=1e-6, name="jvp")
print("jax.jvp through the pallas_call: equal to jax.nn.softmax's JVP")


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


softmax_op_torch.register_autograd(
    softmax_backward_torch, setup_context=softmax_setup_context_torch
)
torch.library.opcheck(softmax_op_torch, (x_torch[:4],))  # PyTorch's checks of the registration
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
# have a shape but no data. JAX traces the Pallas call itself, whose `out_shape` says what
# comes out. JAX's backward returns a tuple, one cotangent per input.
#
# Now the proof that the machinery works. `fullgraph=True` makes any graph break an error,
# and `kernels.count_graphs` counts the graphs Dynamo records, with lesson 03's counting
# backend.

# %%
# PyTorch: one graph under torch.compile(fullgraph=True), gradients through register_autograd
def loss_torch(x, w):
    return (softmax_op_torch(x) * w).sum()


n_graphs = kernels.count_graphs(loss_torch, x_torch, w_torch, fullgraph=True)
print(f"graphs recorded with fullgraph=True: {n_graphs}")
loss_compiled_torch = torch.compile(loss_torch, fullgraph=True)
x_op_torch = x_torch.clone().requires_grad_(True)
(grad_op_torch,) = torch.autograd.grad(loss_compiled_torch(x_op_torch, w_torch), x_op_torch)
x_builtin_torch = x_torch.clone().requires_grad_(True)
loss_builtin_torch = (torch.softmax(x_builtin_torch, -1) * w_torch).sum()
(grad_ref_torch,) = torch.autograd.grad(loss_builtin_torch, x_builtin_torch)


# %% [markdown]
# One graph means Dynamo recorded the loss without a break. The operator stays one opaque
# node: Inductor compiles the code around it, never inside it. The JAX cell takes `jit` of
# `grad`, and `jit` of `vmap` of `grad` over a batch of matrices, each a different scale of
# the input.

# %%
# JAX: jit, grad and vmap around the custom_vjp
def loss_jax(x, w):
    return jnp.sum(softmax_op_jax(x) * w)


grad_op_jax = jax.jit(jax.grad(loss_jax))(x_jax, w_jax)
grad_ref_jax = jax.grad(lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w))(x_jax, w_jax)
half = x_jax[: S.rows // 2]
xb_jax = jnp.stack([half * (k + 1) for k in range(S.batch)])  # (batch, rows/2, cols)
wb_jax = jnp.stack([w_jax[: S.rows // 2]] * S.batch)
grads_batched_jax = jax.jit(jax.vmap(jax.grad(loss_jax)))(xb_jax, wb_jax)
print("vmapped gradients:", grads_batched_jax.shape, "on", grads_batched_jax.device)

# %%
TOL_GRAD = dict(rtol=TOL["rtol"], atol=1e-6)
assert_close(grad_op_torch, grad_ref_torch, rtol=1e-5, atol=1e-6, name="custom_op gradient")
assert_close(grad_op_jax, grad_ref_jax, **TOL_GRAD, name="custom_vjp gradient")
assert_close(grad_op_torch, grad_op_jax, **TOL_GRAD, name="PyTorch vs JAX gradient")
loss_builtin_jax = lambda x, w: jnp.sum(jax.nn.softmax(x, axis=-1) * w)  # noqa: E731
batched_ref = jax.vmap(jax.grad(loss_builtin_jax))(xb_jax, wb_jax)
assert_close(grads_batched_jax, batched_ref, **TOL_GRAD, name="vmapped custom_vjp gradient")
print(f"gradients equal the built-in softmax's within {TOL_GRAD}: custom_op, custom_vjp, "
      "its vmap, and PyTorch's against JAX's")


# %% [markdown]
# Under `vmap`, JAX batches the Pallas kernel by adding a grid axis, one set of programs per
# matrix, and batches the backward rule too.
#
# For Triton kernels PyTorch has a second registration that Inductor can see into:
# `torch.library.triton_op` defines the operator, and `torch.library.wrap_triton` marks the
# launch inside it. It compiles on a CUDA GPU only.

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
for what, softmax in (("NumPy inside the function", softmax_numpy_torch),
                      ("host function (disabled)", softmax_host_torch)):
    n_graphs = kernels.count_graphs(functools.partial(scores_torch, softmax=softmax), x_small_torch)
    print(f"{what}: {n_graphs} graph(s), {n_graphs - 1} break(s)")

# %% [markdown]
# One graph for the NumPy version means Dynamo rewrote `np.exp`, `max` and `sum` into torch
# operations. The skipped function leaves two graphs here, with Python running it in
# between. Whether a NumPy routine compiles depends on what it touches:
# `kernels.count_graphs` or `torch._dynamo.explain` answers in one call. With
# `fullgraph=True` the break is an error that names the skipped function:

# %%
with expect_error(torch._dynamo.exc.Unsupported, match="softmax_numpy_torch", lines=2):
    kernels.count_graphs(lambda x: scores_torch(x, softmax_host_torch), x_small_torch,
                         fullgraph=True)


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


n_graphs = kernels.count_graphs(lambda x: scores_torch(x, softmax_host_op_torch), x_small_torch,
                                fullgraph=True)
print(f"host code as custom_op: {n_graphs} graph(s)")


# %%
# JAX: pure_callback inside jit
def softmax_callback_jax(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.pure_callback(softmax_np, out, x, vmap_method="broadcast_all")


jaxpr = jax.make_jaxpr(lambda x: scores_jax(x, softmax_callback_jax))(x_jax[:4])
print(jaxpr.pretty_print(use_color=False))

# %% [markdown]
# The callback is one equation, `pure_callback`, between the multiplications: the program is
# still one compiled program, with an instruction to call back into Python.
#
# The timings below run every variant compiled, on the whole input, after checking that all
# compute the same scores. The speed column is lesson 00's median of the per-round ratios,
# and the bracket after a verdict is its interval. The `first call` column includes
# compiling, so the lesson reads nothing from it.

# %%
# PyTorch: the built-in op, the graph break and the custom op, each compiled
torch.compiler.reset()
builtin_softmax_torch = lambda v: torch.softmax(v, -1)  # noqa: E731
escape_torch = timing.compare(
    {
        "built-in softmax": torch.compile(lambda x: scores_torch(x, builtin_softmax_torch)),
        "host function, graph break": torch.compile(lambda x: scores_torch(x, softmax_host_torch)),
        "host code as custom_op": torch.compile(
            lambda x: scores_torch(x, softmax_host_op_torch), fullgraph=True
        ),
    },
    x_torch,
    rtol=1e-5,
)
kernels.folded(escape_torch)

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
kernels.folded(escape_jax)

# %%
scores_callback_jax = jax.jit(lambda x: scores_jax(x, softmax_callback_jax))(x_jax)
assert_close(scores_torch(x_torch, softmax_host_op_torch), scores_callback_jax,
             rtol=1e-5, atol=1e-6, name="PyTorch host op vs JAX callback")
ESCAPE_VERDICTS = {f"PyTorch, {name}": claims.faster(escape_torch, name, "built-in softmax")
                   for name in ("host function, graph break", "host code as custom_op")}
ESCAPE_VERDICTS["JAX, pure_callback"] = claims.faster(escape_jax, "pure_callback",
                                                     "built-in softmax")
print(claims.compact(ESCAPE_VERDICTS))

# %% [markdown]
# Each line says which way this run went. A host route adds a return to Python, and on an
# accelerator a copy to the host and back while the device waits. The built-in op stays in
# the compiled program, fused with the multiplications. On a CPU there is no copy, and a
# contended run can put either side ahead. A `custom_op` and a graph break run the same host
# code: the operator buys one graph and `fullgraph=True`, not faster host code.

# %% [markdown]
# ## 6. Speed on the hardware the kernels target
#
# **Key concepts**
# - An **interpreter** times its simulation, not the kernel. A speed claim is judged only
#   where the kernels compile: on a GPU, or on a TPU for Pallas.
# - **Roofline** (lesson 09): a kernel that does fewer FLOPs per byte moved than the chip's
#   *ridge* is **memory-bound**: bandwidth sets its time. Above the ridge it is
#   **compute-bound**.
# - **Block sizes** set how many bytes a tiled kernel moves and how many grid steps it takes.
#
# First, which kernels compile on this machine. Only their times are read below; the tables
# of interpreted kernels are folded.

# %%
triton_compiles = TRITON.available and not TRITON.interpreted
compiled = [name for name, yes in (("Pallas", not INTERPRET), ("Triton", triton_compiles)) if yes]
print(f"compiled here: {' and '.join(compiled)}; section 6 judges those kernels" if compiled else
      f"on {SETUP.alone_kind} every kernel runs interpreted: section 6's times are a "
      "simulation's, so it judges nothing here")

# %% [markdown]
# The softmax is timed first, each kernel against its own framework's built-in op. Where a
# kernel compiles, the input grows to `S.chip_softmax`, large enough to keep a chip busy. A
# softmax does a few operations per element it moves, far below any chip's ridge, so memory
# bandwidth sets its time.

# %%
# PyTorch: the Triton kernel against torch.softmax, on the device PyTorch computes on
x_chip_np = (np.random.default_rng(4).normal(size=S.chip_softmax).astype(np.float32)
             if compiled else x_np)  # the large input only where a kernel compiles
x_speed_torch = torch.from_numpy(x_chip_np if triton_compiles else x_np).to(torch_dev)
variants_torch = {"torch.softmax": lambda x: torch.softmax(x, -1)}
if TRITON.available:
    variants_torch["Triton kernel"] = softmax_triton
kernel_torch = timing.compare(variants_torch, x_speed_torch, rtol=1e-5)
kernels.folded(kernel_torch, interpreted=TRITON.interpreted)

# %%
# JAX alone: the Pallas kernel against jax.nn.softmax, on the accelerator where there is one
x_speed_jax = jnp.asarray(x_np if INTERPRET else x_chip_np)
n_rows = x_speed_jax.shape[0]
PALLAS_SOFTMAX = f"Pallas kernel, 8-row blocks, grid ({pl.cdiv(n_rows, 8)},)"
variants_jax = {"jax.nn.softmax": jax.jit(lambda x: jax.nn.softmax(x, axis=-1)),
                PALLAS_SOFTMAX: jax.jit(functools.partial(softmax_pallas, block_rows=8))}
if PALLAS.name != "triton":  # a 64-row block is too large for a GPU program's registers
    variants_jax[f"Pallas kernel, 64-row blocks, grid ({pl.cdiv(n_rows, 64)},)"] = jax.jit(
        functools.partial(softmax_pallas, block_rows=64))
print(f"{SETUP.alone_label}: a {x_speed_jax.shape} softmax on {x_speed_jax.device}")
kernel_jax = timing.compare(variants_jax, x_speed_jax, **TOL)
kernels.folded(kernel_jax, interpreted=INTERPRET)

# %%
CLAIM = "fused-softmax-kernel"
INTERPRETED = "the kernel ran interpreted here, and an interpreter times its simulation"
ABSENT = f"Triton is not installed ({kernels.INSTALL_HINT})"
KERNEL_VERDICTS = {
    "pallas": claims.judge(CLAIM, kernel_jax, "jax.nn.softmax", PALLAS_SOFTMAX, pairing="pallas")
    if not INTERPRET else claims.not_testable(CLAIM, INTERPRETED),
    "triton": claims.judge(CLAIM, kernel_torch, "torch.softmax", "Triton kernel", pairing="triton")
    if triton_compiles else claims.not_testable(CLAIM, INTERPRETED if TRITON.available else ABSENT),
}
print(claims.compact(KERNEL_VERDICTS))

# %% [markdown]
# A compiled kernel's line judges the course's claim. Each grid step has a fixed cost, so the
# step counts in the labels matter.
#
# **The tiled matmul against `jnp.dot`.** A matrix product does `2·n³` FLOPs on `2·n²`
# inputs, so with large enough blocks it is compute-bound. Each block of `A` is read once per
# column of output blocks, `n / bn` times, and each block of `B` `n / bm` times. The next
# cell times a few block sizes on bfloat16 inputs, which the matrix units of a TPU, and of
# GPUs from Ampere on, multiply natively. It sets the matmul precision to `default`, because
# Mosaic TPU refuses the course's `highest` for bfloat16 inputs.

# %%
n_mm = S.interpreted_mm if INTERPRET else S.chip_mm
a_sp = jax.random.normal(jax.random.key(5), (n_mm, n_mm), jnp.bfloat16)
b_sp = jax.random.normal(jax.random.key(6), (n_mm, n_mm), jnp.bfloat16)
dot_f32 = jax.jit(lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32))
SWEEP = [(128, 128, 128), (256, 256, 256), (512, 512, 512)]  # (bm, bk, bn)
if PALLAS.name == "triton":  # on a GPU, the 128 block only
    SWEEP = SWEEP[:1]
SWEEP = [b for b in SWEEP if max(b) <= n_mm]  # no block larger than the matrix
mm_variants = {"jnp.dot": dot_f32}
for bm, bk, bn in SWEEP:
    tiled = functools.partial(matmul_jax, bm=bm, bk=bk, bn=bn)
    mm_variants[f"Pallas {(bm, bk, bn)}"] = jax.jit(tiled)
with jax.default_matmul_precision("default"):  # one bfloat16 pass, not float32 passes
    cost = dot_f32.lower(a_sp, b_sp).compile().cost_analysis()  # XLA's count for jnp.dot
    mm_speed = timing.compare(mm_variants, a_sp, b_sp, rtol=1e-3, atol=1e-2)
MM_FLOPS = cost["flops"]
print(f"{SETUP.alone_label}: a {n_mm}³ bfloat16 matmul on {a_sp.device}, "
      f"{MM_FLOPS / 1e9:.3g} GFLOP and {cost['bytes accessed'] / 2**20:.3g} MiB by XLA's count")


# %%
def bytes_moved(n, bm, bk, bn):  # bf16 A read n/bn times, B n/bm times; float32 C written once
    return 2 * n * n * (n // bn) + 2 * n * n * (n // bm) + 4 * n * n


top = peaks.peak(SETUP.jax_alone)  # the published peak; None for a CPU
peak_flops = top.flops("bfloat16") if top else None
ridge = peak_flops / top.bytes_per_s if peak_flops else None  # FLOPs per byte at the ridge
lines = []
for (name, m), block in zip(mm_speed.measurements.items(), [None, *SWEEP], strict=True):
    moved = cost["bytes accessed"] if block is None else bytes_moved(n_mm, *block)
    intensity, rate = MM_FLOPS / moved, MM_FLOPS / m.median  # FLOPs per byte, FLOP/s
    where = (f", {'above' if intensity >= ridge else 'below'} the ridge, "
             f"{rate / peak_flops:.0%} of peak") if ridge else ""
    lines.append(f"- {name}: {intensity:.0f} FLOPs per byte, {rate / 1e12:.3g} TFLOP/s{where}")
lines.append(f"- the ridge of the {top.name}: {peak_flops / 1e12:.0f} TFLOP/s ÷ "
             f"{top.bytes_per_s / 1e9:.0f} GB/s = {ridge:.0f} FLOPs per byte" if ridge
             else f"- no bfloat16 peak known for a {SETUP.alone_kind}, so no ridge")
best = min(list(mm_variants)[1:], key=lambda v: mm_speed.measurements[v].median)
lines.append(f"\nThe fastest Pallas block here, {best}, ran at {1 / mm_speed.ratio(best):.0%} "
             f"of jnp.dot's speed on {SETUP.alone_kind}.")
kernels.folded(mm_speed, "\n".join(lines), interpreted=INTERPRET)

# %% [markdown]
# Each line under the table sets a variant's FLOPs per byte against the chip's ridge. At
# `n = 8192`, the size timed on a chip, 128 × 128 blocks reread `A` and `B` 64 times each,
# 256 × 256 blocks 32 times, and 512 × 512 blocks 16 times. Small blocks also make many grid
# steps. On a GPU the lesson times the 128 block only: larger blocks need the tuning that
# Triton's matmul tutorial shows.
#
# **When is a custom kernel worth writing?** Start from a profile (lesson 09). If the time
# goes to an operation the compiler already fuses well, a kernel will at best match it.
# Kernels pay where the compiler wastes memory traffic it cannot see how to avoid. Attention
# is the classic case. FlashAttention never writes the sequence-by-sequence score matrix to
# HBM: it keeps one tile of it on chip at a time, with an online softmax over column blocks.
#
# Check the libraries first: `torch.nn.functional.scaled_dot_product_attention`,
# `jax.nn.dot_product_attention`, the Pallas TPU kernels in `jax.experimental.pallas.ops.tpu`
# and the `tokamax` library's Pallas GPU kernels. When you do write a kernel, keep this
# lesson's pattern: the framework's op as the oracle, `InterpretParams()` to catch bad
# accesses, the registration so that compiling and differentiating still work, and timings
# on the hardware it targets.

# %% [markdown]
# ## Summary
#
# | idea | PyTorch (Triton, torch.library) | JAX (Pallas, custom_vjp) |
# |---|---|---|
# | write a kernel | `@triton.jit`, pointers, `tl.load`/`tl.store` | a Python function on refs, `pl.pallas_call` |
# | which work a program does | `tl.program_id(axis)`, offsets `pid * B + tl.arange(0, B)` | `pl.program_id(axis)`, `BlockSpec(block_shape, index_map)` |
# | number of programs | `kernel[grid](...)`, `triton.cdiv` | `grid=...`, `pl.cdiv` |
# | accumulate across steps | a loop over K in the program, `acc += tl.dot(a, b)` in float32 | K as the last grid axis, `pl.when(pl.program_id(2) == 0)` zeroes the output block |
# | block sizes | `triton.autotune(configs=[...], key=[...])` | arguments of the launcher: time a few, keep the fastest |
# | ragged edges | `mask=` on every load and store, `other=` on loads | pad to whole blocks and slice; mask reads with `jnp.where` on an iota |
# | run without the hardware | `TRITON_INTERPRET=1` before the first `@triton.jit` | `interpret=True`; `interpret=pltpu.InterpretParams()` checks every access |
# | make it an op | `torch.library.custom_op` + `register_fake`; `triton_op` + `wrap_triton` | a function: `pallas_call` is already a JAX primitive |
# | its gradient | `register_autograd(backward, setup_context=...)` | `jax.custom_vjp` + `defvjp(fwd, bwd)` |
# | prove it composes | `torch.compile(fullgraph=True)`, `torch.library.opcheck` | `jit`, `grad`, `vmap` around it |
# | call host code | a graph break, or a `custom_op` around it | `jax.pure_callback(..., vmap_method=...)` |
#
# **Popular claims vs what you measured.** The lesson tested one claim, that a hand-written
# fused softmax kernel beats the framework's own softmax, once per kernel language:

# %%
claim_rows = [f"| {pairing} | {v.claim.text} | {v.claim.claimed} | **{v.verdict}** | "
              f"{v.line() if v.stats else v.explanation} |" for pairing, v in KERNEL_VERDICTS.items()]
display(Markdown("| pairing | claim | stated | verdict | why |\n|---|---|---|---|---|\n"
                 + "\n".join(claim_rows)))

# %% [markdown]
# A row that reads "not testable here" is not a verdict against the claim. A CUDA GPU with
# Triton installed judges the Triton row. A TPU, or a GPU of sm_80 or newer, judges the
# Pallas row.
#
# **Common misconceptions** (each with the section that corrects it)
# - *"The padding of a block is zeros."* It is whatever the launcher or the backend leaves
#   there, NaN here: mask it (1). Along `K` the matmul pads with zeros on purpose, since they
#   add nothing (3).
# - *"A kernel that is right under `interpret=True` reads only its own block."* That
#   interpreter clamps a read outside the block; `InterpretParams()` raises on it (2).
# - *"A Pallas grid is a loop, so any kernel may accumulate across its steps."* Only where the
#   grid runs in order, as on a TPU or in the interpreter; on a GPU the programs run at once
#   (3).
# - *"JAX differentiates any JAX code, kernels included."* Forward mode goes through a
#   `pallas_call`; reverse mode needs a `custom_vjp` (4).
# - *"NumPy inside `torch.compile` breaks the graph."* Dynamo translates NumPy calls into
#   torch ops; only code it cannot trace breaks the graph (5).
# - *"A custom kernel is faster."* Only where it compiles and saves traffic the compiler
#   cannot; its block sizes alone can decide which wins (6).
#
# **Review questions**
#
# The cell below asks this lesson's review questions: pick or type an answer and press
# *Check*, or open *Show the answer* under a question.

# %%
from course_utils import quiz

quiz.load("10_custom_kernels")

# %% [markdown]
# **Next:** the exercises in `exercises/10_custom_kernels_exercises.ipynb`: an index map, a
# masked Pallas log-sum-exp, a `custom_vjp` for a Pallas op, a `torch.library` custom
# operator, a `pure_callback` that works under `vmap`, and a Triton kernel that sums rows in
# float32.
