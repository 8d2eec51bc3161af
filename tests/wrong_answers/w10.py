"""Wrong answers to solutions/10_custom_kernels_exercises.py."""

import importlib.util

TILING_FLOOR = """
def tiling(shape, block):
    grid = (shape[0] // block[0], shape[1] // block[1])  # drops the ragged last block
    return grid, lambda i, j: (i, j)
"""

TILING_OFFSETS = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    return grid, lambda i, j: (i * block[0], j * block[1])  # element offsets
"""

TILING_SWAPPED = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    return grid, lambda i, j: (j, i)
"""

LSE_BODY = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    {mask}
    m = {m}
    o_ref[...] = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=1, keepdims=True))
"""
MASK = "x = jnp.where(cols < n_cols, x, -jnp.inf)"
MAX = "jnp.max(x, axis=1, keepdims=True)"

LSE_NO_MASK = LSE_BODY.format(mask="pass  # padding read as it is", m=MAX)
LSE_ZERO_FILL = LSE_BODY.format(mask="x = jnp.where(cols < n_cols, x, 0.0)", m=MAX)
LSE_OFF_BY_ONE = LSE_BODY.format(mask=MASK.replace("<", "<="), m=MAX)
LSE_NO_MAX = LSE_BODY.format(mask=MASK, m="jnp.zeros((x.shape[0], 1), x.dtype)")
LSE_NO_ADD_BACK = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)
    m = jnp.max(x, axis=1, keepdims=True)
    o_ref[...] = jnp.log(jnp.sum(jnp.exp(x - m), axis=1, keepdims=True))  # m not added back
"""

SILU_ONE_TERM = """
def silu_fwd(x):
    return silu_pallas(x), x


def silu_bwd(residuals, g):
    return (g * jax.nn.sigmoid(residuals),)  # only one term of the product rule
"""

SILU_AT_OUTPUT = """
def silu_fwd(x):
    y = silu_pallas(x)
    return y, y  # the output saved, as for softmax


def silu_bwd(residuals, g):
    s = jax.nn.sigmoid(residuals)
    return (g * s * (1 + residuals * (1 - s)),)
"""

SILU_NO_G = """
def silu_fwd(x):
    return silu_pallas(x), x


def silu_bwd(residuals, g):
    s = jax.nn.sigmoid(residuals)
    return (s * (1 + residuals * (1 - s)),)  # the local derivative alone
"""

SILU_NOT_TUPLE = """
def silu_fwd(x):
    return silu_pallas(x), x


def silu_bwd(residuals, g):
    s = jax.nn.sigmoid(residuals)
    return g * s * (1 + residuals * (1 - s))
"""

OP_BODY = """
def silu_fake(x):
    return {fake}


def silu_setup_context(ctx, inputs, output):
    ctx.save_for_backward({saved})


def silu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    s = torch.sigmoid(x)
    return {backward}
"""
RIGHT_OP = {
    "fake": "torch.empty_like(x)",
    "saved": "inputs[0]",
    "backward": "grad * s * (1 + x * (1 - s))",
}
OP_FAKE_SHAPE = OP_BODY.format(**{**RIGHT_OP, "fake": "x.new_empty(x.shape[:-1])"})
OP_SAVES_OUTPUT = OP_BODY.format(**{**RIGHT_OP, "saved": "output"})
OP_ONE_TERM = OP_BODY.format(**{**RIGHT_OP, "backward": "grad * s"})
OP_NO_GRAD = OP_BODY.format(**{**RIGHT_OP, "backward": "s * (1 + x * (1 - s))"})
# the input itself, not a new tensor
OP_FAKE_IS_X = OP_BODY.format(**{**RIGHT_OP, "fake": "x"})

MEDIAN_BODY = """
def row_median_jax(x):
    def host(a):
        return np.median(a, axis=-1){cast}

    out = jax.ShapeDtypeStruct({shape}, x.dtype)
    return jax.pure_callback(host, out, x{vmap})
"""
RIGHT_MEDIAN = {
    "cast": ".astype(a.dtype)",
    "shape": "x.shape[:-1]",
    "vmap": ', vmap_method="broadcast_all"',
}
MEDIAN_SHAPE = MEDIAN_BODY.format(**{**RIGHT_MEDIAN, "shape": "x.shape"})
MEDIAN_NO_VMAP = MEDIAN_BODY.format(**{**RIGHT_MEDIAN, "vmap": ""})
MEDIAN_NO_AXIS = """
def row_median_jax(x):
    def host(a):
        return np.median(a).astype(a.dtype)  # one number for the whole array

    out = jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)
    return jax.pure_callback(host, out, x, vmap_method="broadcast_all")
"""

# the 1-D softmax's index map carried over to two program ids: j left out
TILING_J_LEFT_OUT = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    return grid, lambda i, j: (i, 0)
"""

TILING_GRID_SWAPPED = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[1], block[1]), pl.cdiv(shape[0], block[0]))  # columns first
    return grid, lambda i, j: (i, j)
"""

TILING_ONE_TOO_MANY = """
def tiling(shape, block):
    grid = ((shape[0] + block[0]) // block[0], (shape[1] + block[1]) // block[1])  # cdiv, off by one
    return grid, lambda i, j: (i, j)
"""

TILING_ONE_BLOCK_SIDE = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[0]))  # block[0] twice
    return grid, lambda i, j: (i, j)
"""

TILING_ONE_LENGTH = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[0], block[1]))  # shape[0] twice
    return grid, lambda i, j: (i, j)
"""

LSE_NAN_TO_NEG_INF = LSE_BODY.format(
    mask="x = jnp.where(jnp.isnan(x), -jnp.inf, x)  # finds the padding by its value",
    m=MAX,
)
LSE_NO_KEEPDIMS = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)
    m = jnp.max(x, axis=1)  # (8,): the column axis reduced away
    o_ref[...] = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=1))
"""

SILU_FWD_JAX_SILU = """
def silu_fwd(x):
    return jax.nn.silu(x), x  # the same values, but not the Pallas kernel


def silu_bwd(residuals, g):
    s = jax.nn.sigmoid(residuals)
    return (g * s * (1 + residuals * (1 - s)),)
"""

SILU_FWD_NO_RESIDUALS = """
def silu_fwd(x):
    return silu_pallas(x)  # no residuals


def silu_bwd(residuals, g):
    s = jax.nn.sigmoid(residuals)
    return (g * s * (1 + residuals * (1 - s)),)
"""

OP_FAKE_DEFAULT_DTYPE = OP_BODY.format(**{**RIGHT_OP, "fake": "torch.empty(x.shape)"})
OP_SAVES_TUPLE = OP_BODY.format(**{**RIGHT_OP, "saved": "inputs"})  # the tuple itself
# the input's dtype kept but not its device: a CPU tensor for a GPU (or meta) input
OP_FAKE_DEFAULT_DEVICE = OP_BODY.format(
    **{**RIGHT_OP, "fake": "torch.empty(x.shape, dtype=x.dtype)"}
)

# axis=1: the last axis of a 2-D x, not of a 3-D one
MEDIAN_AXIS_1 = MEDIAN_BODY.format(**RIGHT_MEDIAN).replace("axis=-1", "axis=1")

MEDIAN_FLOAT32 = """
def row_median_jax(x):
    def host(a):
        return np.median(a, axis=-1).astype(np.float32)

    out = jax.ShapeDtypeStruct(x.shape[:-1], jnp.float32)  # a fixed dtype
    return jax.pure_callback(host, out, x, vmap_method="broadcast_all")
"""

TILING_CDIV_SWAPPED = """
def tiling(shape, block):
    grid = (pl.cdiv(block[0], shape[0]), pl.cdiv(block[1], shape[1]))  # arguments swapped
    return grid, lambda i, j: (i, j)
"""

# the lesson's tile-ids index map copied, zeros of the 4-D layout included
TILING_FOUR_INDICES = """
def tiling(shape, block):
    grid = (pl.cdiv(shape[0], block[0]), pl.cdiv(shape[1], block[1]))
    return grid, lambda i, j: (i, j, 0, 0)
"""

# the column index taken along axis 0: it numbers the rows, all below n_cols
LSE_IOTA_ROWS = LSE_BODY.format(mask=MASK, m=MAX).replace("x.shape, 1)", "x.shape, 0)")
LSE_MAX_OVER_ROWS = LSE_BODY.format(mask=MASK, m=MAX.replace("axis=1", "axis=0"))

# the right medians, computed by XLA: no host code, no callback
MEDIAN_JNP = """
def row_median_jax(x):
    return jnp.median(x, axis=-1)
"""

# one median per row of a 2-D x only: the shape taken from the front
MEDIAN_SHAPE_FRONT = MEDIAN_BODY.format(**{**RIGHT_MEDIAN, "shape": "(x.shape[0],)"})

ROWS_BODY = """
if TRITON.available:

    @triton.jit
    def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0){pid}
        acc = tl.zeros((BLOCK,), dtype=tl.{acc})
        for start in range(0, {stop}, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * {stride} + cols{mask})
            acc += x{cast}
        tl.store(out_ptr + row, tl.sum(acc, axis=0))
"""
RIGHT_ROWS = {
    "pid": "",
    "acc": "float32",
    "stop": "n_cols",
    "stride": "stride",
    "mask": ", mask=cols < n_cols, other=0.0",
    "cast": ".to(tl.float32)",
}


def _rows(**wrong):
    return ROWS_BODY.format(**{**RIGHT_ROWS, **wrong})


ROWS_NO_MASK = _rows(mask="")  # reads the padding past the row's end
ROWS_MASK_LE = _rows(mask=", mask=cols <= n_cols, other=0.0")
ROWS_PID_PLUS_ONE = _rows(pid=" + 1")  # program ids counted from 1
ROWS_STRIDE_N_COLS = _rows(stride="n_cols")  # rows assumed packed
ROWS_FLOAT16_ACC = _rows(acc="float16", cast="")  # the sum kept in the input's dtype
ROWS_FIRST_BLOCK = _rows(stop="BLOCK")  # one block: no loop over the row
# block 0 read at every step of the loop
ROWS_NO_START = _rows().replace("start + tl.arange", "tl.arange")
ROWS_NO_SUM = _rows().replace("tl.sum(acc, axis=0)", "acc")  # the block, not its sum
ROWS_FLOOR_BLOCKS = _rows(stop="n_cols // BLOCK * BLOCK")  # whole blocks only
# the sum stored at x's row offset, in a buffer of one number per row
ROWS_OUT_STRIDE = _rows().replace(
    "tl.store(out_ptr + row,", "tl.store(out_ptr + row * stride,"
)

# one maximum for the whole block, not one per row: the padded rows' NaN takes it over
LSE_BLOCK_MAX = LSE_BODY.format(mask=MASK, m="jnp.max(x)")
# each row's maximum, but one sum over the whole block (no axis)
LSE_BLOCK_SUM = LSE_BODY.format(mask=MASK, m=MAX).replace(
    "axis=1, keepdims=True))", "keepdims=True))"
)

# a float32 total, but each block summed by tl.sum in float16 before it is widened
ROWS_BLOCK_SUM_FLOAT16 = """
if TRITON.available:

    @triton.jit
    def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        total = 0.0
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
            total += tl.sum(x, axis=0).to(tl.float32)
        tl.store(out_ptr + row, total)
"""

# the maximum taken with the padding set to 0: right for any row whose maximum is at
# least about -88, but 0 for rows of very negative values, whose exp then underflows
LSE_MAX_ZERO_FILL = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    x = x_ref[...]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    valid = cols < n_cols
    m = jnp.max(jnp.where(valid, x, 0.0), axis=1, keepdims=True)
    e = jnp.where(valid, jnp.exp(x - m), 0.0)
    o_ref[...] = m + jnp.log(jnp.sum(e, axis=1, keepdims=True))
"""

# the old keyword for a batched callback, which jax hands on to the host function
MEDIAN_VECTORIZED = MEDIAN_BODY.format(**{**RIGHT_MEDIAN, "vmap": ", vectorized=True"})

# a float32 sum, cast back to the input's dtype (as torch.sum returns it) before the store
ROWS_STORE_INPUT_DTYPE = _rows().replace(
    "tl.sum(acc, axis=0))", "tl.sum(acc, axis=0).to(x_ptr.dtype.element_ty))"
)

# every program loads from the start of the buffer: row 0, whatever its row
ROWS_NO_ROW_OFFSET = _rows().replace("x_ptr + row * stride + cols", "x_ptr + cols")

# Triton's habit in Pallas: the block indexed at the program's offset in the whole array
# (interpret=True clamps the out-of-block slice back into the block, so the values agree;
# the first check runs Pallas's TPU interpreter, which raises)
LSE_GLOBAL_ROWS = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    rows = pl.ds(pl.program_id(0) * 8, 8)  # this program's rows, as in the whole array
    x = x_ref[rows, :]
    cols = jax.lax.broadcasted_iota(jnp.int32, x.shape, 1)
    x = jnp.where(cols < n_cols, x, -jnp.inf)
    m = jnp.max(x, axis=1, keepdims=True)
    o_ref[rows, :] = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=1, keepdims=True))
"""

# vector-add's pid * BLOCK offset for a row: right only while a row is one block long
ROWS_ROW_TIMES_BLOCK = _rows(stride="BLOCK")

# the padding sliced away instead of masked: right everywhere it runs, but an (8, n_cols)
# array that Pallas's Triton backend cannot lower (its arrays' sides are powers of two)
LSE_SLICED = """
def logsumexp_kernel(x_ref, o_ref, *, n_cols):
    x = x_ref[:, :n_cols]
    m = jnp.max(x, axis=1, keepdims=True)
    o_ref[...] = m + jnp.log(jnp.sum(jnp.exp(x - m), axis=1, keepdims=True))
"""

# the input kept as an attribute of ctx, not saved with save_for_backward
OP_CTX_ATTRIBUTE = """
def silu_fake(x):
    return torch.empty_like(x)


def silu_setup_context(ctx, inputs, output):
    ctx.x = inputs[0]


def silu_backward(ctx, grad):
    x = ctx.x
    s = torch.sigmoid(x)
    return grad * s * (1 + x * (1 - s))
"""

# a grid of floats: np.ceil of a true division (3.0 programs)
TILING_FLOAT = """
def tiling(shape, block):
    grid = (np.ceil(shape[0] / block[0]), np.ceil(shape[1] / block[1]))
    return grid, lambda i, j: (i, j)
"""

# the middle element of each sorted row: the lower of the two middle values for an even count
MEDIAN_LOWER_MIDDLE = MEDIAN_BODY.format(**RIGHT_MEDIAN).replace(
    "np.median(a, axis=-1)",
    "np.sort(np.asarray(a), axis=-1)[..., (a.shape[-1] - 1) // 2]",
)

# PyTorch's median, which returns the lower middle value for an even count
MEDIAN_TORCH = MEDIAN_BODY.format(**RIGHT_MEDIAN).replace(
    "np.median(a, axis=-1)",
    "torch.from_numpy(np.array(a)).median(dim=-1).values.numpy()",
)

# a.sort() on the callback's argument, a jax.Array: it returns a sorted copy, a stays unsorted
MEDIAN_SORT_COPY = """
def row_median_jax(x):
    def host(a):
        a.sort(axis=-1)
        n = a.shape[-1]
        return np.asarray((a[..., (n - 1) // 2] + a[..., n // 2]) / 2).astype(a.dtype)

    out = jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)
    return jax.pure_callback(host, out, x, vmap_method="broadcast_all")
"""

# the same in NumPy: np.asarray of JAX's buffer is read-only, so the in-place sort raises
MEDIAN_SORT_READ_ONLY = MEDIAN_SORT_COPY.replace(
    "        a.sort(axis=-1)", "        a = np.asarray(a)\n        a.sort(axis=-1)"
)

# io_callback, the callback for side effects, in place of pure_callback
MEDIAN_IO_CALLBACK = """
def row_median_jax(x):
    from jax.experimental import io_callback

    def host(a):
        return np.median(a, axis=-1).astype(a.dtype)

    return io_callback(host, jax.ShapeDtypeStruct(x.shape[:-1], x.dtype), x)
"""

# the residuals packed in a tuple by fwd, read by bwd as if they were x itself
SILU_RESIDUAL_TUPLE = """
def silu_fwd(x):
    return silu_pallas(x), (x,)


def silu_bwd(residuals, g):
    x = residuals
    s = jax.nn.sigmoid(x)
    return (g * s * (1 + x * (1 - s)),)
"""

WRONG = {
    "tiling": [
        ("n // block programs", TILING_FLOOR, "drops the last, partial block"),
        ("element offsets", TILING_OFFSETS, "not element offsets"),
        ("ids swapped", TILING_SWAPPED, "mixes the two program ids up"),
        (
            "grid in the wrong axis order",
            TILING_GRID_SWAPPED,
            "not in the array's order",
        ),
        ("(n + block) // block programs", TILING_ONE_TOO_MANY, "one program too many"),
        ("block[0] for both axes", TILING_ONE_BLOCK_SIDE, "mix the axes up"),
        ("shape[0] for both axes", TILING_ONE_LENGTH, "mix the axes up"),
        ("cdiv(block, n)", TILING_CDIV_SWAPPED, "cdiv's two arguments swapped"),
        ("four block indices", TILING_FOUR_INDICES, "appends the zeros"),
        ("(i, 0): j left out", TILING_J_LEFT_OUT, "or leaves one out"),
        ("a grid of floats (np.ceil)", TILING_FLOAT, "holds integers"),
    ],
    "masked-logsumexp": [
        ("no mask", LSE_NO_MASK, "the mask lets the launcher's NaN padding"),
        ("padding filled with 0", LSE_ZERO_FILL, "set to 0 is not neutral"),
        ("cols <= n_cols", LSE_OFF_BY_ONE, "cols <= n_cols lets one padded column in"),
        (
            "no maximum subtracted",
            LSE_NO_MAX,
            "exponentiating the raw values overflows",
        ),
        ("maximum not added back", LSE_NO_ADD_BACK, "off by each row's maximum"),
        ("the padding found by its NaN value", LSE_NAN_TO_NEG_INF, "not by its value"),
        ("no keepdims: an (8,) maximum", LSE_NO_KEEPDIMS, "drops the reduced axis"),
        ("the iota along axis 0", LSE_IOTA_ROWS, "numbers the rows"),
        ("the maximum over axis 0", LSE_MAX_OVER_ROWS, "reduces the 8 rows"),
        ("one maximum for the whole block", LSE_BLOCK_MAX, "over the whole block"),
        ("one sum for the whole block", LSE_BLOCK_SUM, "a sum over the whole block"),
        ("the maximum with the padding set to 0", LSE_MAX_ZERO_FILL, "underflows to 0"),
        (
            "the block indexed at the program's offset",
            LSE_GLOBAL_ROWS,
            "index them from 0",
        ),
        ("the padding sliced away", LSE_SLICED, "a CUDA GPU cannot compile it"),
    ],
    "silu-custom-vjp": [
        ("one term of the product rule", SILU_ONE_TERM, "product rule"),
        ("derivative at the output", SILU_AT_OUTPUT, "evaluated at the input x"),
        ("backward not a tuple", SILU_NOT_TUPLE, "not a bare array"),
        (
            "forward by jax.nn.silu, not the kernel",
            SILU_FWD_JAX_SILU,
            "must come from the Pallas op",
        ),
        ("forward without residuals", SILU_FWD_NO_RESIDUALS, "fwd returns a pair"),
        ("cotangent g left out", SILU_NO_G, "incoming cotangent g"),
        (
            "residuals read as x, not unpacked",
            SILU_RESIDUAL_TUPLE,
            "exactly as fwd returned them",
        ),
    ],
    "torch-custom-op": [
        ("fake of the wrong shape", OP_FAKE_SHAPE, "the fake function must return"),
        ("output saved", OP_SAVES_OUTPUT, "evaluated at the input x"),
        ("fake returns x itself", OP_FAKE_IS_X, "not x itself"),
        ("grad left out", OP_NO_GRAD, "incoming gradient of the output"),
        ("one term of the product rule", OP_ONE_TERM, "product rule"),
        (
            "fake in the default dtype",
            OP_FAKE_DEFAULT_DTYPE,
            "the fake output must be float64",
        ),
        ("the inputs tuple saved", OP_SAVES_TUPLE, "not a tuple of them"),
        ("fake on the default device", OP_FAKE_DEFAULT_DEVICE, "on x's device too"),
        (
            "the input kept as ctx.x",
            OP_CTX_ATTRIBUTE,
            "go through ctx.save_for_backward",
        ),
    ],
    "callback-median": [
        ("result shape of the input", MEDIAN_SHAPE, "one median per row"),
        ("no vmap_method", MEDIAN_NO_VMAP, "needs a vmap_method"),
        ("always float32", MEDIAN_FLOAT32, "not a fixed float32"),
        ("median of the whole array", MEDIAN_NO_AXIS, "one median per row"),
        ("axis=1", MEDIAN_AXIS_1, "no longer the last one"),
        (
            "result shape (x.shape[0],)",
            MEDIAN_SHAPE_FRONT,
            "a result shape taken from the front",
        ),
        (
            "jnp.median, no callback",
            MEDIAN_JNP,
            "the traced program has no pure_callback",
        ),
        ("vectorized=True", MEDIAN_VECTORIZED, "vmap_method"),
        ("the lower middle value", MEDIAN_LOWER_MIDDLE, "returns the lower one"),
        ("torch.median", MEDIAN_TORCH, "torch.median"),
        ("a.sort() on a jax.Array", MEDIAN_SORT_COPY, "returns a sorted copy"),
        ("in-place sort of JAX's buffer", MEDIAN_SORT_READ_ONLY, "read-only"),
        (
            "io_callback",
            MEDIAN_IO_CALLBACK,
            "io_callback is for host code with side effects",
        ),
    ],
}
if importlib.util.find_spec("triton") is not None:  # without Triton the exercise skips
    WRONG["triton-row-sums"] = [
        ("no mask on the ragged last block", ROWS_NO_MASK, "read unmasked"),
        ("cols <= n_cols", ROWS_MASK_LE, "one column past the row's end"),
        ("program id off by one", ROWS_PID_PLUS_ONE, "no + 1"),
        ("n_cols as the row stride", ROWS_STRIDE_N_COLS, "not n_cols"),
        ("float16 accumulator", ROWS_FLOAT16_ACC, "a float16 accumulator"),
        ("the first block only", ROWS_FIRST_BLOCK, "not the first block only"),
        ("the first block at every step", ROWS_NO_START, "not the first block only"),
        ("a block stored at one address", ROWS_NO_SUM, "takes a scalar, not a block"),
        ("sum stored at row * stride", ROWS_OUT_STRIDE, "not out's"),
        ("n_cols // BLOCK whole blocks", ROWS_FLOOR_BLOCKS, "the last, partial block"),
        ("each block summed in float16", ROWS_BLOCK_SUM_FLOAT16, "added up in float16"),
        (
            "the sum cast to the input's dtype",
            ROWS_STORE_INPUT_DTYPE,
            "cast back to the input's dtype",
        ),
        (
            "the load without the row's offset",
            ROWS_NO_ROW_OFFSET,
            "reads row 0 in every program",
        ),
        ("row r at r * BLOCK", ROWS_ROW_TIMES_BLOCK, "not r * BLOCK"),
    ]
