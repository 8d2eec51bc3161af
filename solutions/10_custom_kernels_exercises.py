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
# # 10 · Exercises: custom kernels
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/10_custom_kernels_exercises.ipynb) [![Open In Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)](https://kaggle.com/kernels/welcome?src=https://github.com/jax-pytorch-side-by-side/course/blob/v0.1.0/solutions/10_custom_kernels_exercises.ipynb) [![Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/jax-pytorch-side-by-side/course/v0.1.0?labpath=solutions/10_custom_kernels_exercises.ipynb)
#
# Six exercises on custom kernels: a grid and an index map for a ragged tiling, a masked
# Pallas reduction, a `custom_vjp` around a Pallas op, a `torch.library` custom operator, a
# `jax.pure_callback` that works under `vmap`, and a Triton kernel that sums rows in float32.
# Only the last needs Triton; without it, its cells say so and skip. On a CPU both languages
# run in their interpreters. Replace each `raise NotImplementedError()` with your code, then
# run the check cell below it. It prints "passed", explains what is wrong, or says "not
# implemented yet".

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
SIZES = {"rows": (64, 13), "cols": (300, 100), "batch": (4, 3)}  # name: (full, smoke)

# %%
from course_utils import env

SETUP = env.setup(one_kind=True)  # first: JAX's memory policy, JAX first, float32 in both,
# and one device kind for both (PyTorch stays on the CPU on a TPU: so does JAX, to compare)

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from course_utils import config, kernels
from course_utils.exercises import CheckFailed, check
from course_utils.parity import assert_close

S = config.sizes(SIZES, SMOKE)
rng = np.random.default_rng(0)
TRITON = kernels.setup_triton()  # before anything imports triton: its interpreter without a CUDA GPU
if TRITON.available:
    import triton
    import triton.language as tl
print(TRITON.line())


def launch_on_each_platform(launch, block, array_shape=None, backends=None):
    """launch(backend) with each platform's Pallas backend (lesson 10, sections 0 and 1), or with `backends`."""
    return kernels.per_platform(launch, backends or kernels.pallas_backends(block, array_shape=array_shape))


# the backend for the device JAX computes on here: the CPU's interpreter on a TPU machine too (the setup line)
BACKEND = (kernels.choose_pallas_backend("cpu") if SETUP.pair()[1].platform == "cpu"
           else kernels.pallas_backend((8, 128)))
print(BACKEND.line())
print(kernels.filter_triton_deprecation(*kernels.pallas_backends((8, 128)).values()))  # CUDA's call included


# %% [markdown]
# ## Exercise 1 · A grid and an index map for a ragged tiling
#
# A Pallas kernel tiles a 2-D array of `shape` with blocks of `block`. Return the `grid` and
# the `index_map`. The grid is the number of programs along each axis, enough to cover every
# element, a partial last block included. The index map takes the two program ids and returns
# the index of the program's block, in units of blocks. About 3 lines.

# %%
# EXERCISE: tiling
def tiling(shape: tuple[int, int], block: tuple[int, int]):
    """(grid, index_map) for a 2-D pallas_call over `shape` in blocks of `block`."""
    ### BEGIN SOLUTION
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    return grid, lambda i, j: (i, j)
    ### END SOLUTION


# %%
def tile_ids_kernel(out_ref):
    out_ref[...] = jnp.full(out_ref.shape, pl.program_id(0) * pl.num_programs(1) + pl.program_id(1), jnp.int32)


def tile_ids(shape, block):
    """Each element: the number of the program that wrote it (with your tiling)."""
    grid, index_map = tiling(shape, block)
    tiles = (*grid, *block)  # whole blocks, tile (i, j) at [i, j]: a layout TPUs take (lesson 10, section 2)
    spec = pl.BlockSpec(block_shape=(None, None, *block), index_map=lambda i, j: (*index_map(i, j), 0, 0))

    def launch(backend):
        return pl.pallas_call(tile_ids_kernel, out_shape=jax.ShapeDtypeStruct(tiles, jnp.int32), grid=grid,
                              out_specs=spec, interpret=backend.interpret, compiler_params=backend.compiler_params())

    out = launch_on_each_platform(launch, spec.block_shape, tiles)()
    out = out.transpose(0, 2, 1, 3).reshape(grid[0] * block[0], grid[1] * block[1])
    return out[: shape[0], : shape[1]]


def expected_ids(shape, block):
    gn = pl.cdiv(shape[1], block[1])
    ids = np.add.outer(np.arange(shape[0]) // block[0] * gn, np.arange(shape[1]) // block[1])
    return ids.astype(np.int32)  # the kernel's dtype


# %%
# TESTS: tiling points=2
check("tiling", lambda: np.array(tiling((10, 10), (4, 4))[0]), np.array((3, 3)),
      hint="the grid must cover the ragged last block too: floor division (n // block) drops the last, partial "
           "block, so its elements get no program; and a grid of 1 along an axis longer than its block has "
           "cdiv's two arguments swapped (pl.cdiv(a, b) rounds a / b up)")
check("tiling", lambda: np.array(tiling((10, 20), (4, 7))[0]), np.array((3, 3)),
      hint="the counts mix the axes up: along each axis the programs cover that axis's length (shape[a]) with "
           "that axis's side of the block (block[a]), and a (4, 7) block over (10, 20) has two different sides")
check("tiling", lambda: np.array(tiling((8, 16), (4, 8))[0]), np.array((2, 2)),
      hint="when the block divides the axis there is no partial block: (n + block) // block counts one "
           "program too many")
check("tiling", lambda: np.array(tiling((10, 12), (4, 8))[0]), np.array((3, 2)),
      hint="the counts are right but not in the array's order: grid[0] is the number of programs along axis 0 "
           "(the rows, shape[0]), grid[1] along axis 1 (the columns)")
check("tiling", lambda: all(np.issubdtype(np.asarray(g).dtype, np.integer) for g in tiling((10, 12), (4, 8))[0]),
      True, hint="the grid counts programs, so it holds integers: np.ceil and a true division (/) give floats "
                 "(3.0), which pallas_call refuses")
_unwritten = (" (-2147483648, int32's smallest value, marks an element no program wrote: Pallas's "
              "interpreter fills an output with it before the kernel runs)")
_tiling_crash = ("the index_map returns one block index per axis of the 2-D array, two numbers for the two "
                 "program ids: the launcher appends the zeros of its 4-D layout itself (lesson 10's fold on small "
                 "TPU blocks spells out all four)")
check("tiling", lambda: tile_ids((3, 2), (1, 1)), expected_ids((3, 2), (1, 1)),
      hint="with 1 x 1 blocks, where block and element indices agree, programs still wrote into each other's "
           "blocks: the index_map mixes the two program ids up, or leaves one out (a 0 where j belongs, as in a "
           "1-D softmax's (i, 0), sends every program of a row of blocks to the same block)" + _unwritten,
      crash_hint=_tiling_crash)
check("tiling", lambda: tile_ids((10, 12), (4, 8)), expected_ids((10, 12), (4, 8)),
      hint="the index_map returns block indices (which block), not element offsets; Pallas multiplies by the block "
           "shape" + _unwritten, crash_hint=_tiling_crash)

# %%
# HIDDEN TESTS: tiling points=2
### BEGIN HIDDEN TESTS
for shape, block in (((8, 16), (4, 8)), ((5, 3), (2, 2)), ((16, 9), (8, 4))):
    assert tuple(tiling(shape, block)[0]) == (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    np.testing.assert_array_equal(tile_ids(shape, block), expected_ids(shape, block))
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 2 · A masked Pallas reduction: row-wise log-sum-exp
#
# Write the kernel body of a row-wise `logsumexp(x) = m + log Σⱼ exp(xⱼ − m)`, with `m` the
# row's maximum. The launcher below gives each program 8 rows and a column block padded to the
# next power of two. So the columns from `n_cols` on are padding: NaN here, though a block past
# an array's edge may hold anything. Read `x_ref[...]`, make the padding harmless, and write
# one number per row into `o_ref[...]`, a column of shape `(8, 1)`, since a TPU takes 2-D
# output blocks. The first checks run in Pallas's TPU interpreter, which refuses a read
# outside a block. Some checks use inputs near 100, where `exp` overflows float32, or below
# −150, where it underflows to 0. The last check compiles the kernel for a CUDA GPU without
# running it: there Pallas's Triton backend takes only arrays whose sides are powers of two.
# About 5 lines.

# %%
# EXERCISE: masked-logsumexp
def logsumexp_kernel(x_ref, o_ref, *, n_cols: int):
    """o_ref[r, 0] = log Σ_{j < n_cols} exp(x_ref[r, j]), computed stably."""
    ### BEGIN SOLUTION
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)
    m = jnp.max(x, axis=1, keepdims=True)  # (8, 1)
    o_ref[...] = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=1, keepdims=True))
    ### END SOLUTION


# %%
def logsumexp_pallas(x, block_rows=8, pad_value=jnp.nan, interpreter=True, backends=None):  # interpreter: the CPU's interpret=
    n_rows, n_cols = x.shape
    x_pad = kernels.pad_to_blocks(x, (block_rows, pl.next_power_of_2(n_cols)), pad_value)
    out_shape = (x_pad.shape[0], 1)  # one column: (8, 1) blocks

    def launch(backend):
        return pl.pallas_call(
            functools.partial(logsumexp_kernel, n_cols=n_cols),
            out_shape=jax.ShapeDtypeStruct(out_shape, x.dtype),
            grid=(x_pad.shape[0] // block_rows,),
            in_specs=[pl.BlockSpec(block_shape=(block_rows, x_pad.shape[1]), index_map=lambda i: (i, 0))],
            out_specs=pl.BlockSpec(block_shape=(block_rows, 1), index_map=lambda i: (i, 0)),
            interpret=interpreter if backend.interpret else False,
            compiler_params=backend.compiler_params(),
        )

    return launch_on_each_platform(launch, (block_rows, 1), out_shape, backends)(x_pad)[:n_rows, 0]


x_lse = jnp.asarray(rng.normal(size=(S.rows, S.cols)).astype(np.float32))
x_lse_big = x_lse * 10 + 100  # values near 100: exp overflows float32
x_lse_low = x_lse * 10 - 200  # values below -150 at both sizes: exp underflows to 0 in float32
x_lse_whole = jnp.asarray(np.random.default_rng(4).normal(size=(S.rows, 128)).astype(np.float32))  # no padded column


# %%
# TESTS: masked-logsumexp points=3
def _lse_bounds_checked(x):
    """The launcher's call in Pallas's TPU interpreter, on the CPU, which raises where a kernel reads or
    writes outside its block (interpret=True, which the later checks use, clamps such an access into the block)."""
    with kernels.out_of_bounds_errors():
        return logsumexp_pallas(jax.device_put(x, jax.devices("cpu")[0]), interpreter=pltpu.InterpretParams())


def _lse_crash(err):
    """The likely cause of an error raised while the kernel runs: one cause for each kind of error."""
    if isinstance(err, IndexError) and "Out-of-bounds" in str(err):
        return ("x_ref and o_ref are this program's blocks already (the BlockSpecs' index_map chose them): index "
                "them from 0, not at the program's offset in the whole array (pl.program_id(0) * 8 is Triton's "
                "habit). Pallas's TPU interpreter, which runs this check, refuses a read past a block's edge")
    if "broadcast" in str(err).lower():
        return ("a reduction over axis 1 without keepdims=True drops the reduced axis: its (8,) result lines up "
                "with the columns, not the rows, so it does not broadcast against the (8, padded columns) block")
    return ("o_ref is (8, 1), one number per row: a reduction over axis 0 reduces the 8 rows instead, one value "
            "per column, which does not fit it")


check("masked-logsumexp", lambda: bool(np.isnan(np.asarray(_lse_bounds_checked(x_lse_whole))).any()), False,
      hint="NaN, though no column is padded here: the launcher also pads the rows of the last block with NaN, and "
           "a maximum or a sum over the whole block (no axis) takes them in; each row needs its own",
      crash_hint=_lse_crash)
check("masked-logsumexp", lambda: _lse_bounds_checked(x_lse_whole), jax.nn.logsumexp(x_lse_whole, axis=1),
      rtol=1e-5, atol=1e-5,
      hint="no padding here (128 columns), yet the result is off by each row's maximum m: the m subtracted inside "
           "the exp is missing outside the log, or the one outside has no counterpart inside",
      crash_hint=_lse_crash)
check("masked-logsumexp", lambda: bool(np.isnan(np.asarray(logsumexp_pallas(x_lse))).any()), False,
      hint="NaN: the mask lets the launcher's NaN padding, the columns from n_cols on, into the max and the sum. "
           "Check its comparison (cols <= n_cols lets one padded column in) and its iota (one along axis 0 "
           "numbers the rows, all below n_cols)", crash_hint=_lse_crash)
check("masked-logsumexp", lambda: logsumexp_pallas(x_lse), jax.nn.logsumexp(x_lse, axis=1), rtol=1e-5, atol=1e-5,
      hint="padding set to 0 is not neutral: exp(0 − m) adds to each row's sum, and 0 may exceed a row's maximum",
      crash_hint=_lse_crash)


def _logsumexp_padded_with(value):
    """The launcher's call, its padding filled with `value` instead of NaN."""
    return logsumexp_pallas(x_lse, pad_value=value)


check("masked-logsumexp", lambda: _logsumexp_padded_with(1e30), jax.nn.logsumexp(x_lse, axis=1),
      rtol=1e-5, atol=1e-5,
      hint="here the padding holds 1e30, not NaN: a block past the edge may hold any value, so tell the padding "
           "apart by its column index, not by its value", crash_hint=_lse_crash)
check("masked-logsumexp", lambda: logsumexp_pallas(x_lse_big), jax.nn.logsumexp(x_lse_big, axis=1), rtol=1e-5, atol=1e-4,
      hint="the inputs reach 100 here, and exp of such a value is beyond float32's largest (about 3.4e38, "
           "exp(88.7)): exponentiating the raw values overflows to inf before the log")
check("masked-logsumexp", lambda: logsumexp_pallas(x_lse_low), jax.nn.logsumexp(x_lse_low, axis=1), rtol=1e-5, atol=1e-4,
      hint="every input lies below -150 here, and exp of such a value underflows to 0 in float32 (below about "
           "exp(-103)), so the sum is 0 and its log -inf: m must be each row's own maximum, and a maximum taken "
           "with the padding set to 0 is 0 here")


def _logsumexp_lowers_for_triton():
    """The launcher's call lowered for a CUDA GPU through Pallas's Triton backend (compiled to a kernel,
    not run), which works on any machine; a kernel it cannot lower raises AssertionError."""
    backends = {**kernels.pallas_backends((8, 1)), "cuda": kernels.PallasBackend("triton", "this check's")}
    kernels.filter_triton_deprecation(backends["cuda"])
    traced = jax.jit(functools.partial(logsumexp_pallas, backends=backends)).trace(
        jax.ShapeDtypeStruct(x_lse.shape, x_lse.dtype))
    try:
        traced.lower(lowering_platforms=("cuda",))
    except Exception as err:  # noqa: BLE001 - any lowering error is the answer's
        why = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
        raise AssertionError(f"Pallas's Triton backend cannot compile the kernel for a CUDA GPU: {why}") from None


check("masked-logsumexp", _logsumexp_lowers_for_triton,
      hint="the kernel runs in the interpreter but a CUDA GPU cannot compile it: Pallas's Triton backend (sm_80 "
           "and newer) takes only arrays whose sides are powers of two, so slicing the padding away "
           "(x_ref[:, :n_cols], 100 columns) leaves an array it refuses; read the whole block and mask the "
           "padding by its column index instead")

# %%
# HIDDEN TESTS: masked-logsumexp points=2
### BEGIN HIDDEN TESTS
for shape in ((16, 128), (9, 33), (1, 5)):
    x_h = jnp.asarray(np.random.default_rng(1).normal(size=shape).astype(np.float32) * 30)
    assert_close(logsumexp_pallas(x_h), jax.nn.logsumexp(x_h, axis=1), rtol=1e-5, atol=1e-4)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 3 · A `custom_vjp` around a Pallas op
#
# `silu_pallas(x)` computes `x · σ(x)` in a Pallas kernel, and JAX cannot differentiate a
# `pallas_call`. Write the forward rule, which returns the output and the residuals the
# backward needs. Then write the backward rule, which returns the cotangent of `x` from the
# residuals and `g`, as a tuple with one entry per input. `silu_custom()` wires them together.
# About 4 lines.

# %%
def silu_kernel(x_ref, y_ref):
    x = x_ref[...]
    y_ref[...] = x * jax.nn.sigmoid(x)


def silu_pallas(x):
    block = (8, pl.next_power_of_2(x.shape[1]))
    x_pad = kernels.pad_to_blocks(x, block)
    spec = pl.BlockSpec(block_shape=block, index_map=lambda i: (i, 0))

    def launch(backend):
        return pl.pallas_call(silu_kernel, out_shape=jax.ShapeDtypeStruct(x_pad.shape, x.dtype), grid=(x_pad.shape[0] // 8,),
                              in_specs=[spec], out_specs=spec, interpret=backend.interpret,
                              compiler_params=backend.compiler_params())

    return launch_on_each_platform(launch, block)(x_pad)[: x.shape[0], : x.shape[1]]


# %%
# EXERCISE: silu-custom-vjp
def silu_fwd(x):
    """(output, residuals): the output is silu_pallas(x)."""
    ### BEGIN SOLUTION
    return silu_pallas(x), x
    ### END SOLUTION


def silu_bwd(residuals, g):
    """The cotangent of x, as a one-element tuple."""
    ### BEGIN SOLUTION
    x = residuals
    s = jax.nn.sigmoid(x)
    return (g * s * (1 + x * (1 - s)),)
    ### END SOLUTION


# %%
def silu_custom():
    """silu_pallas as a custom_vjp op with your two rules."""
    op = jax.custom_vjp(silu_pallas)
    op.defvjp(silu_fwd, silu_bwd)
    return op


x_silu = jnp.asarray(rng.normal(size=(S.rows, S.cols)).astype(np.float32) * 3)
w_silu = jnp.asarray(rng.normal(size=(S.rows, S.cols)).astype(np.float32))
ones_silu = jnp.ones_like(w_silu)  # the loss sum(silu(x)): its cotangent g is all ones


def silu_loss(silu, x, w):
    return jnp.sum(silu(x) * w)


def silu_batched_grads():
    xb = jnp.stack([x_silu * (k + 1) / S.batch for k in range(S.batch)])
    return jax.jit(jax.vmap(jax.grad(functools.partial(silu_loss, silu_custom())), in_axes=(0, None)))(xb, w_silu)


# %%
# TESTS: silu-custom-vjp points=3
check("silu-custom-vjp", lambda: jax.jit(jax.grad(functools.partial(silu_loss, silu_custom())))(x_silu, ones_silu),
      jax.grad(functools.partial(silu_loss, jax.nn.silu))(x_silu, ones_silu), rtol=1e-5, atol=1e-5,
      hint="the derivative of x·σ(x) needs the product rule (two terms), evaluated at the input x (the output "
           "y = x·σ(x) is another point)",
      crash_hint="JAX: fwd returns a pair (output, residuals) and bwd a tuple with one cotangent per input "
                 "((g_x,), not a bare array); bwd gets the residuals exactly as fwd returned them")
check("silu-custom-vjp", lambda: jax.jit(jax.grad(functools.partial(silu_loss, silu_custom())))(x_silu, w_silu),
      jax.grad(functools.partial(silu_loss, jax.nn.silu))(x_silu, w_silu), rtol=1e-5, atol=1e-5,
      hint="right for the loss sum(silu(x)), wrong for a weighted one: the result does not follow the incoming "
           "cotangent g (the chain rule multiplies the local derivative by it)")
check("silu-custom-vjp", lambda: "pallas_call" in str(jax.make_jaxpr(lambda x: silu_fwd(x)[0])(x_silu)), True,
      hint="the forward's output must come from the Pallas op being wrapped (silu_pallas), not from "
           "jax.nn.silu: the custom_vjp gives that kernel its derivative")

# %%
# HIDDEN TESTS: silu-custom-vjp points=2
### BEGIN HIDDEN TESTS
xb_h = jnp.stack([x_silu * (k + 1) / S.batch for k in range(S.batch)])
ref_h = jax.vmap(jax.grad(functools.partial(silu_loss, jax.nn.silu)), in_axes=(0, None))(xb_h, w_silu)
assert_close(silu_batched_grads(), ref_h, rtol=1e-5, atol=1e-5)
assert_close(jax.jit(silu_custom())(x_silu), jax.nn.silu(x_silu), rtol=1e-6, atol=1e-6)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 4 · A PyTorch custom operator with its fake function and backward
#
# The operator's body, a plain PyTorch SiLU standing in for a kernel, is given. Write the
# three functions that make it a first-class operator. The fake function returns an output of
# the right shape, dtype and device without computing it. `setup_context` saves what the
# backward needs. The backward returns the gradient of `x` from the saved tensors and the
# output's gradient. The check registers them on a fresh operator and runs it under
# `torch.compile(fullgraph=True)` and `torch.library.opcheck`. About 5 lines.

# %%
# EXERCISE: torch-custom-op
def silu_fake(x: torch.Tensor) -> torch.Tensor:
    """An empty tensor like the operator's output."""
    ### BEGIN SOLUTION
    return torch.empty_like(x)
    ### END SOLUTION


def silu_setup_context(ctx, inputs, output):
    """Save what silu_backward needs (inputs is the tuple of the operator's inputs)."""
    ### BEGIN SOLUTION
    (x,) = inputs
    ctx.save_for_backward(x)
    ### END SOLUTION


def silu_backward(ctx, grad):
    """The gradient of x."""
    ### BEGIN SOLUTION
    (x,) = ctx.saved_tensors
    s = torch.sigmoid(x)
    return grad * s * (1 + x * (1 - s))
    ### END SOLUTION


# %%
_OP_NAMES = itertools.count()


def registered_silu():
    """A fresh operator ex10::silu_N with your three functions registered on it."""

    @torch.library.custom_op(f"ex10::silu_{next(_OP_NAMES)}", mutates_args=())
    def silu(x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)

    silu.register_fake(silu_fake)
    silu.register_autograd(silu_backward, setup_context=silu_setup_context)
    return silu


def compiled_grad(op, x, w):
    """One graph under fullgraph=True, then the gradient of sum(op(x) * w)."""
    graphs = kernels.count_graphs(lambda v: op(v) * w, x, fullgraph=True)
    assert graphs == 1, f"{graphs} graphs"
    x = x.clone().requires_grad_(True)
    (op(x) * w).sum().backward()
    return x.grad


def stub_as_stub(fn):
    """fn, with an untouched stub's NotImplementedError passed on unwrapped (PyTorch wraps it)."""

    def run():
        try:
            return fn()
        except Exception as err:
            cause = err
            while cause is not None:
                if isinstance(cause, NotImplementedError):
                    raise NotImplementedError from None
                cause = cause.__cause__ or cause.__context__
            raise

    return run


x_silu_torch, w_silu_torch = torch.from_numpy(np.array(x_silu)), torch.from_numpy(np.array(w_silu))  # copies: writable
ones_silu_torch = torch.ones_like(w_silu_torch)

# %%
# TESTS: torch-custom-op points=3
check("torch-custom-op", stub_as_stub(lambda: torch.library.opcheck(registered_silu(), (x_silu_torch[:4],))),
      hint="the fake function must return a new tensor (not x itself: the operator's output does not alias its "
           "input) of the output's shape, dtype and device (the output of silu has the input's shape)")
check("torch-custom-op", stub_as_stub(lambda: torch.library.opcheck(registered_silu(), (x_silu_torch[:4].double(),))),
      hint="PyTorch: for a float64 input the fake output must be float64 too: torch.empty(shape) makes the default "
           "dtype (float32) whatever x is")
check("torch-custom-op", lambda: str(silu_fake(torch.empty(3, 4, device="meta")).device), "meta",
      hint="PyTorch: the fake output must be on x's device too (on a GPU, cuda): a tensor made from a shape and a "
           "dtype alone lands on the default device (the CPU) whatever x is; this check hands the fake function "
           "a tensor on the meta device")
_op_crash = ("PyTorch: setup_context gets the operator's inputs as one tuple, and ctx.save_for_backward takes "
             "tensors, not a tuple of them; ctx.saved_tensors hands them back as a tuple, and the backward "
             "returns the gradient of x")
check("torch-custom-op", stub_as_stub(lambda: compiled_grad(registered_silu(), x_silu_torch, ones_silu_torch)),
      torch.func.grad(lambda v: torch.nn.functional.silu(v).sum())(x_silu_torch), rtol=1e-5, atol=1e-5,
      hint="the derivative of x·σ(x) needs the product rule (two terms), evaluated at the input x (a backward "
           "that reads the saved output y evaluates it at another point)", crash_hint=_op_crash)
check("torch-custom-op", stub_as_stub(lambda: compiled_grad(registered_silu(), x_silu_torch, w_silu_torch)),
      torch.func.grad(lambda v: (torch.nn.functional.silu(v) * w_silu_torch).sum())(x_silu_torch), rtol=1e-5, atol=1e-5,
      hint="right for the loss sum(silu(x)), wrong for a weighted one: the result does not follow the incoming "
           "gradient of the output, grad (the chain rule multiplies the local derivative by it)", crash_hint=_op_crash)


def _saves_with_save_for_backward():
    """Whether the operator's forward saves a tensor through ctx.save_for_backward: autograd's saved-tensor
    hooks see each one, and miss a tensor kept as an attribute of ctx (ctx.x = x)."""
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        registered_silu()(x_silu_torch[:4].clone().requires_grad_(True))
    return len(saved) > 0


check("torch-custom-op", stub_as_stub(_saves_with_save_for_backward), True,
      hint="PyTorch: the tensors the backward needs go through ctx.save_for_backward; one kept as an attribute "
           "(ctx.x = x) escapes autograd's bookkeeping: x changed in place between the forward and the backward "
           "then gives a wrong gradient silently, where a saved tensor raises an error, and saved-tensor hooks "
           "(activation offloading, checkpointing) never see it", crash_hint=_op_crash)

# %%
# HIDDEN TESTS: torch-custom-op points=2
### BEGIN HIDDEN TESTS
op_h = registered_silu()
x_h = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(op_h, (x_h,))
assert_close(compiled_grad(op_h, x_silu_torch, w_silu_torch), np.asarray(jax.grad(functools.partial(silu_loss, jax.nn.silu))(x_silu, w_silu)),
             rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 5 · A host callback that works under `jit` and `vmap`
#
# Write `row_median_jax(x)`: the median of each row of `x`, shape `(..., n)` to `(...)`,
# computed on the host by `np.median` through `jax.pure_callback`. It must work under `jit`
# and `vmap` and return `x`'s dtype. About 4 lines.

# %%
# EXERCISE: callback-median
def row_median_jax(x: jax.Array) -> jax.Array:
    """np.median over the last axis, called from JAX with jax.pure_callback."""
    ### BEGIN SOLUTION
    def host(a):
        return np.median(a, axis=-1).astype(a.dtype)

    out = jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)
    return jax.pure_callback(host, out, x, vmap_method="broadcast_all")
    ### END SOLUTION


# %%
x_med = jnp.asarray(rng.normal(size=(S.batch, S.rows, 7)).astype(np.float32))
x_med_even = jnp.asarray(np.random.default_rng(5).normal(size=(S.rows, 8)).astype(np.float32))  # 8 values a row


def on_host(fn):
    """fn, with an error from the host side told by its last line, not the frames JAX wraps it in."""

    def run():
        try:
            return fn()
        except jax.errors.JaxRuntimeError as err:
            lines = str(err).strip().splitlines()
            if "Traceback" not in str(err):
                raise
            kind, _, text = lines[-1].partition(": ")
            if "read-only" in text:  # an in-place write into the callback's argument
                raise CheckFailed(
                    f"callback-median: the host function raised {kind}: {text}\nHint: the host function gets "
                    "JAX's buffer as a read-only array: an in-place NumPy method (a.sort()) cannot write into it; "
                    "work on a copy") from None
            message = f"{text} ({kind} in the host callback)"
            if "unexpected keyword argument" in text:  # a keyword pure_callback does not take, handed on
                message += ("\njax.pure_callback hands a keyword it does not take on to the host function: the "
                            "one that says how a batch axis is handled is vmap_method (vectorized=True is its old "
                            "spelling, deprecated and then removed)")
            raise RuntimeError(message) from None

    return run


def batched_medians():
    try:
        return jax.jit(jax.vmap(row_median_jax))(x_med)
    except NotImplementedError as err:  # JAX's own message, not an untouched stub
        if "vmap_method" in str(err):
            raise AssertionError(str(err)) from None
        raise


# %%
# TESTS: callback-median points=2
check("callback-median", on_host(lambda: jax.jit(row_median_jax)(x_med[0])), np.median(np.asarray(x_med[0]), axis=-1),
      hint="the values are not each row's median: a median made by hand from a.sort() reads an unsorted row, "
           "since the host function's argument is a jax.Array, whose sort() returns a sorted copy and leaves the "
           "array as it was",
      crash_hint="result_shape_dtypes describes the callback's result: one median per row (the last axis is "
                 "reduced), in x's dtype")
check("callback-median", on_host(lambda: jax.jit(row_median_jax)(x_med)), np.median(np.asarray(x_med), axis=-1),
      hint="x may have leading axes, shape (..., n): for a 3-D x the host function gets the 3-D array, and an axis "
           "counted from the front (axis=1) is no longer the last one, nor is a result shape taken from the front "
           "((x.shape[0],)) the shape of x without its last axis")
check("callback-median", on_host(lambda: jax.jit(row_median_jax)(x_med_even)), np.median(np.asarray(x_med_even), axis=-1),
      hint="rows of 8 values here: with an even count the median lies halfway between the two middle values, "
           "where torch.median, or the middle element of a sorted row, returns the lower one")
check("callback-median", on_host(batched_medians), np.median(np.asarray(x_med), axis=-1),
      hint="under vmap, pure_callback needs a vmap_method that says how the host function handles a batch axis")
check("callback-median", on_host(lambda: str(jax.jit(row_median_jax)(x_med[0].astype(jnp.float16)).dtype)), "float16",
      hint="the result has x's dtype, whatever it is: a float16 x gives float16 medians, not a fixed float32")
check("callback-median", lambda: "io_callback" in str(jax.make_jaxpr(row_median_jax)(x_med[0])), False,
      hint="io_callback is for host code with side effects, which JAX must run once per call and in order; a "
           "pure function of its input, such as np.median, goes through jax.pure_callback")
check("callback-median", lambda: "pure_callback" in str(jax.make_jaxpr(row_median_jax)(x_med[0])), True,
      hint="the medians must come from np.median on the host, through jax.pure_callback: the traced program has no "
           "pure_callback (jnp.median computes them in XLA, which is not the host code the exercise calls)")

# %%
# HIDDEN TESTS: callback-median points=2
### BEGIN HIDDEN TESTS
x_h = jnp.asarray(np.random.default_rng(2).normal(size=(2, 3, 4, 5)).astype(np.float32))
assert_close(jax.vmap(jax.vmap(row_median_jax))(x_h), np.median(np.asarray(x_h), axis=-1))
assert row_median_jax(x_h).dtype == jnp.float32
### END HIDDEN TESTS

# %% [markdown]
# ## Exercise 6 · A Triton kernel: row sums in float32, block by block
#
# Write the body of a Triton kernel in which program `r` sums row `r` of a 2-D tensor and
# stores the sum at `out_ptr + r`. Row `r` starts at `x_ptr + r * stride`; the launcher's
# buffer is wider than the row, so `stride` is not `n_cols`. Read the row `BLOCK` columns at a
# time, in a loop, with a mask for the columns past `n_cols`, which hold NaN here. The inputs
# may be float16: add them up in float32, since a float16 sum keeps only 11 significant bits.
# About 7 lines; lesson 10's section 1 and its matmul's `K` loop have every piece. One thing
# no check can see: on a GPU a masked lane holds no defined value unless `tl.load` is given
# one, while Triton's interpreter happens to give it 0.

# %%
# EXERCISE: triton-row-sums
if TRITON.available:

    @triton.jit
    def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        """out[r] = Σ_{j < n_cols} x[r, j] for the row r of this program, accumulated in float32."""
        ### BEGIN SOLUTION
        row = tl.program_id(0)
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
            acc += x.to(tl.float32)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))
        ### END SOLUTION

else:
    print(TRITON.skipped())

# %%
TRITON_DEVICE = "cuda" if TRITON.available and not TRITON.interpreted else "cpu"


def row_sums_triton(x, block=32, pad=float("nan")):
    """Row sums of a 2-D tensor through row_sum_kernel, one program per row."""
    n_rows, n_cols = x.shape
    # the rows padded with NaN to whole blocks, and one spare row: a read past a row's end
    # reads NaN (visible in the sums), never memory outside the buffer
    buf = torch.full((n_rows + 1, triton.cdiv(n_cols, block) * block), pad, dtype=x.dtype, device=x.device)
    buf[:n_rows, :n_cols] = x
    # out needs one number per row; it gets as many as buf has, so that a store at a wrong
    # offset (x's row stride, a program id off by one) lands in NaN padding, not outside memory
    out = torch.full((buf.numel(),), float("nan"), dtype=torch.float32, device=x.device)
    try:
        row_sum_kernel[(n_rows,)](buf, out, n_cols, buf.stride(0), BLOCK=block)
    except Exception as err:  # an untouched stub, interpreted or compiled, reads as one
        if "NotImplementedError" in str(err):
            raise NotImplementedError() from None
        raise
    return out[:n_rows]


def row_sums_expected(x):
    return x.double().sum(dim=1).float().cpu().numpy()


def random_rows(shape, dtype=torch.float32, scale=1.0, seed=0):
    data = np.random.default_rng(seed).uniform(0, scale, size=shape)
    return torch.from_numpy(data).to(dtype).to(TRITON_DEVICE)


# %%
# TESTS: triton-row-sums points=3
if TRITON.available:
    x_one, x_even = random_rows((S.rows, 32), seed=3), random_rows((S.rows, 64))  # one block, two blocks a row
    x_ragged = random_rows((S.rows, S.cols), seed=1)
    x_half = random_rows((S.rows, S.cols), torch.float16, scale=64, seed=2)
    _rows_crash = ("Triton: each value is a scalar or a block of BLOCK lanes; a pointer plus a block of offsets "
                   "loads a block, a mask has the shape of the offsets, and a store to one address (out_ptr + r) "
                   "takes a scalar, not a block")
    check("triton-row-sums", lambda: row_sums_triton(x_one).cpu().numpy(), row_sums_expected(x_one),
          hint="with rows of a single block, some sums are missing or belong to another row: row r starts at "
               "x_ptr + r * stride (a load from x_ptr + cols reads row 0 in every program); out holds one number "
               "per row, so row r's sum goes to out_ptr + r (the row stride is x's, not out's), and "
               "tl.program_id(0) is the row itself, counting from 0 (no + 1)", crash_hint=_rows_crash)
    check("triton-row-sums", lambda: row_sums_triton(x_even).cpu().numpy(), row_sums_expected(x_even),
          hint="every block of the row counts, not the first block only: with 64 columns read 32 at a time, the sums "
               "miss or repeat columns; and a row is two blocks long here, so row r starts r * stride elements in, "
               "not r * BLOCK (the first check's rows were one block long, where the two agree)", crash_hint=_rows_crash)
    check("triton-row-sums", lambda: row_sums_triton(x_ragged[:1], pad=0.0).cpu().numpy(),
          row_sums_expected(x_ragged[:1]),
          hint="one row, padded with zeros, whose length is not a whole number of blocks, and its sum misses "
               "columns: the loop must reach the last, partial block too (n_cols // BLOCK whole blocks stop "
               "short of it)", crash_hint=_rows_crash)
    check("triton-row-sums", lambda: row_sums_triton(x_ragged, pad=0.0).cpu().numpy(), row_sums_expected(x_ragged),
          hint="the padding holds zeros here, and rows after the first are still off: a row starts stride elements "
               "after the previous one (the buffer is wider than the row), not n_cols", crash_hint=_rows_crash)
    check("triton-row-sums", lambda: row_sums_triton(x_ragged).cpu().numpy(), row_sums_expected(x_ragged),
          hint="the columns from n_cols on are padding (NaN here): read unmasked, or through a mask that admits one "
               "column past the row's end (<=), they enter the sum", crash_hint=_rows_crash)
    check("triton-row-sums", lambda: row_sums_triton(x_half).cpu().numpy(), row_sums_expected(x_half),
          hint="the input is float16 here and the sums lose units: a float16 accumulator keeps 11 significant "
               "bits, too few for sums in the thousands, and a float16 block summed by tl.sum is added up in "
               "float16 too (tl.sum widens integers only), whatever the accumulator it lands in; a float32 sum "
               "cast back to the input's dtype before the store (torch.sum's habit) is rounded to float16 all the same",
          crash_hint=_rows_crash)
else:
    print(f"… triton-row-sums: skipped, Triton is absent ({kernels.INSTALL_HINT} to run it)")

# %%
# HIDDEN TESTS: triton-row-sums points=2
### BEGIN HIDDEN TESTS
if TRITON.available:
    for shape, block, dtype in (((1, 1), 16, torch.float32), ((5, 33), 16, torch.float32), ((7, 257), 64, torch.float16)):
        x_h = random_rows(shape, dtype, scale=8, seed=3)
        np.testing.assert_allclose(row_sums_triton(x_h, block).cpu().numpy(), row_sums_expected(x_h), rtol=1e-5, atol=1e-5)
### END HIDDEN TESTS

# %% [markdown]
# **Done.** You tiled an array with a ragged edge, masked the padding of a block, gave a Pallas
# op a derivative, and made a PyTorch function a first-class operator. You called host code
# from compiled JAX under `vmap` and, with Triton installed (`pip install ".[kernels]"`),
# wrote a Triton kernel with pointers, masks and a float32 accumulator.
