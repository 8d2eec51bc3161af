"""Wrong answers to solutions/05_distributed_training_exercises.py."""


def _shard_map_refuses_unplaced_arguments() -> bool:
    """Whether this jax's ``shard_map``, on a mesh with explicit axes, refuses an argument
    that does not already carry its in_spec's sharding (jax 0.10) rather than resharding
    it (jax 0.7, Colab's): only then is leaving W and b unplaced a wrong answer."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh(
        (1,), ("model",), (AxisType.Explicit,), devices=jax.devices()[:1]
    )
    spec = P("model")
    try:
        jax.shard_map(lambda w: w, mesh=mesh, in_specs=spec, out_specs=spec)(
            jnp.ones(4)
        )
    except ValueError as err:
        if "does not match the specs of the input" not in str(err):
            raise  # another refusal: this probe no longer tells the two apart
        return True
    return False


COLUMNS_SPLIT = """
def shard_batch(X, y, mesh):
    cols = NamedSharding(mesh, P(None, "data"))  # the feature dimension, not the batch
    return jax.device_put(X, cols), jax.device_put(y, cols)
"""

REPLICATED = """
def shard_batch(X, y, mesh):
    everywhere = NamedSharding(mesh, P())  # every device gets the whole batch
    return jax.device_put(X, everywhere), jax.device_put(y, everywhere)
"""

TORCH_LAYOUT = """
def column_parallel_linear(X, W, b, mesh):
    # torch's ColumnParallelLinear splits weight dim 0, but torch's weight is (out, in)
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))
    return jax.shard_map(lambda X, W, b: X @ W + b, mesh=mesh,
                         in_specs=(P(), P("model", None), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

GATHERED = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))
    Y = jax.shard_map(lambda X, W, b: X @ W + b, mesh=mesh,
                      in_specs=(P(), P(None, "model"), P("model")),
                      out_specs=P(None, "model"))(jnp.asarray(X), W, b)
    return jax.device_put(Y, NamedSharding(mesh, P()))  # gathered: a whole Y, as torch returns
"""

BIAS_EVERY_DEVICE = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P()))
    return jax.shard_map(lambda X, W, b: jax.lax.psum(X @ W + b, "model"), mesh=mesh,
                         in_specs=(P(None, "model"), P("model", None), P()), out_specs=P())(X, W, b)
"""

PMEAN = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P()))
    return jax.shard_map(lambda X, W, b: jax.lax.pmean(X @ W, "model") + b, mesh=mesh,
                         in_specs=(P(None, "model"), P("model", None), P()), out_specs=P())(X, W, b)
"""

PER_PARAMETER = """
def average_gradients_bucketed(model, bucket_numel=256):
    world = dist.get_world_size()
    for p in model.parameters():  # the lesson's function: one all_reduce per parameter
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world
"""

BUCKETED = """
def average_gradients_bucketed(model, bucket_numel=256):
    world = dist.get_world_size()
    buckets, current, size = [], [], 0
    for p in model.parameters():
        if p.grad is None:
            continue
{pack}
    if current:
        buckets.append(current)
    for bucket in buckets:
        flat = torch.cat([p.grad.reshape(-1) for p in bucket])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
{average}
"""
PACK = """        if current and size + p.grad.numel() > bucket_numel:
            buckets.append(current)
            current, size = [], 0
        current.append(p)
        size += p.grad.numel()"""
PACK_OVERFULL = """        current.append(p)
        size += p.grad.numel()
        if size >= bucket_numel:  # closed only once it is already too big
            buckets.append(current)
            current, size = [], 0"""
AVERAGE = """        flat /= world
        for p, part in zip(bucket, flat.split([p.grad.numel() for p in bucket])):
            p.grad.copy_(part.view_as(p.grad))"""

OVERFULL = BUCKETED.format(pack=PACK_OVERFULL, average=AVERAGE)
SUM_NOT_MEAN = BUCKETED.format(
    pack=PACK,
    average=AVERAGE.replace("flat /= world", "pass  # the sum, never divided"),
)
NOT_COPIED_BACK = BUCKETED.format(
    pack=PACK, average="        flat /= world  # averaged, but .grad never sees it"
)

FIRST_DIVISIBLE = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        fits = [d for d in range(len(shape)) if shape[d] % n_devices == 0]
        specs[name] = P(*["data" if d == fits[0] else None for d in range(len(shape))]) if fits else P()
    return specs
"""

MATRICES_ONLY = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        if len(shape) < 2:  # biases are small: left replicated
            specs[name] = P()
            continue
        best = max(range(len(shape)), key=lambda d: (shape[d] % n_devices == 0, shape[d], -d))
        specs[name] = P(*["data" if d == best else None for d in range(len(shape))]) if shape[best] % n_devices == 0 else P()
    return specs
"""

LAST_DIM = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        if shape and shape[-1] % n_devices == 0:  # as torch's FSDP flattens: the last dimension
            specs[name] = P(*[None] * (len(shape) - 1), "data")
        else:
            specs[name] = P()
    return specs
"""

Y_UNSPLIT = """
def shard_batch(X, y, mesh):
    rows = NamedSharding(mesh, P("data", None))
    return jax.device_put(X, rows), jnp.asarray(y)  # y left whole on one device
"""

Y_REPLICATED = """
def shard_batch(X, y, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P("data", None)))
    return X, jax.device_put(y, NamedSharding(mesh, P()))  # y copied to every device
"""

COLUMN_B_WHOLE = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P()))

    def local(X, W, b):
        return X @ W + b  # (batch, d_out / N) + (d_out,)

    return jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "model"), P()),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

COLUMN_NOT_PLACED = """
def column_parallel_linear(X, W, b, mesh):
    def local(X, W, b):
        return X @ W + b

    return jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), jnp.asarray(W), jnp.asarray(b))
"""

ROW_NO_PSUM = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P()))

    def local(X, W, b):
        return X @ W + b  # a partial product, never summed

    return jax.shard_map(local, mesh=mesh, in_specs=(P(None, "model"), P("model", None), P()),
                         out_specs=P())(X, W, b)
"""

ROW_X_WHOLE = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P()))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P()))

    def local(X, W, b):  # X whole, W a block of rows
        return jax.lax.psum(X @ W, "model") + b

    return jax.shard_map(local, mesh=mesh, in_specs=(P(), P("model", None), P()),
                         out_specs=P())(X, W, b)
"""

PACK_AT_EXACTLY_FULL = """        if current and size + p.grad.numel() >= bucket_numel:  # a full bucket is closed early
            buckets.append(current)
            current, size = [], 0
        current.append(p)
        size += p.grad.numel()"""

FULL_BUCKET_CLOSED = BUCKETED.format(pack=PACK_AT_EXACTLY_FULL, average=AVERAGE)
TWO_RANKS_ASSUMED = BUCKETED.format(
    pack=PACK, average=AVERAGE.replace("flat /= world", "flat /= 2  # two processes")
)
NONE_GRADS_KEPT = BUCKETED.format(pack=PACK, average=AVERAGE).replace(
    "if p.grad is None:", "if False:  # a frozen layer's None .grad packed too"
)

LARGEST_THEN_DIVISIBLE = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        if not shape:
            specs[name] = P()
            continue
        d = int(np.argmax(shape))  # the largest dimension, divisible or not
        ok = shape[d] % n_devices == 0
        specs[name] = P(*["data" if i == d else None for i in range(len(shape))]) if ok else P()
    return specs
"""

LAST_ON_TIE = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        best = None
        for d in range(len(shape)):
            if shape[d] % n_devices == 0 and (best is None or shape[d] >= shape[best]):
                best = d  # >=: a tie goes to the later dimension
        specs[name] = P() if best is None else P(*["data" if i == best else None for i in range(len(shape))])
    return specs
"""

BARE_SPEC = """
def shard_batch(X, y, mesh):
    return jax.device_put(X, P("data")), jax.device_put(y, P("data"))  # no mesh named
"""

NOT_PLACED = """
def shard_batch(X, y, mesh):
    return jnp.asarray(X), jnp.asarray(y)  # as torch tensors: jit would split them?
"""

ARRAY_AXIS_NAME = """
def shard_batch(X, y, mesh):
    rows = NamedSharding(mesh, P("batch", None))  # the dimension's name, not the mesh axis
    return jax.device_put(X, rows), jax.device_put(y, rows)
"""

ROWS_THEN_RESHARD = """
def column_parallel_linear(X, W, b, mesh):
    # torch's ColumnParallelLinear splits weight dim 0: here that is W's rows; a psum mends the sum
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    Y = jax.shard_map(lambda X, W: jax.lax.psum(X @ W, "model"), mesh=mesh,
                      in_specs=(P(None, "model"), P("model", None)), out_specs=P())(X, W) + b
    return jax.device_put(Y, NamedSharding(mesh, P(None, "model")))
"""

GATHER_W = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))

    def local(X, W, b):  # gathers the whole W, multiplies, keeps its own columns
        W_all = jax.lax.all_gather(W, "model", axis=1, tiled=True)
        b_all = jax.lax.all_gather(b, "model", axis=0, tiled=True)
        k = W.shape[1]
        Y = X @ W_all + b_all
        return jax.lax.dynamic_slice_in_dim(Y, jax.lax.axis_index("model") * k, k, axis=1)

    return jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

WHOLE_THEN_SPLIT = """
def column_parallel_linear(X, W, b, mesh):
    Y = jnp.asarray(X) @ jnp.asarray(W) + jnp.asarray(b)  # the whole product on one device
    return jax.device_put(Y, NamedSharding(mesh, P(None, "model")))
"""

LOOP_OVER_RANKS = """
def column_parallel_linear(X, W, b, mesh):
    k = W.shape[1] // mesh.shape["model"]  # each rank's block, computed rank by rank
    X, W, b = jnp.asarray(X), jnp.asarray(W), jnp.asarray(b)
    Y = jnp.concatenate([X @ W[:, r * k:(r + 1) * k] + b[r * k:(r + 1) * k]
                         for r in range(mesh.shape["model"])], axis=1)
    return jax.device_put(Y, NamedSharding(mesh, P(None, "model")))
"""

GATHER_OUTPUT = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))

    def local(X, W, b):  # Megatron's gather_output=True
        return jax.lax.all_gather(X @ W + b, "model", axis=1, tiled=True)

    return jax.shard_map(local, mesh=mesh, in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P())(jnp.asarray(X), W, b)
"""

B_SPEC_WHOLE = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))
    return jax.shard_map(lambda X, W, b: X @ W + b, mesh=mesh, in_specs=(P(), P(None, "model"), P()),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

LINEAR_TRANSPOSE = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))
    return jax.shard_map(lambda X, W, b: X @ W.T + b, mesh=mesh,  # torch's F.linear: x @ weight.T
                         in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

PSUM_COLUMNS = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(b, NamedSharding(mesh, P("model")))
    return jax.shard_map(lambda X, W, b: jax.lax.psum(X @ W + b, "model"), mesh=mesh,  # as in §4
                         in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

ROW_ALL_GATHER = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P("model", None)))
    b = jax.device_put(b, NamedSharding(mesh, P()))
    return jax.shard_map(lambda X, W, b: jax.lax.all_gather(X @ W, "model").sum(0) + b, mesh=mesh,
                         in_specs=(P(None, "model"), P("model", None), P()), out_specs=P())(X, W, b)
"""

ROW_W_TORCH_LAYOUT = """
def row_parallel_linear(X, W, b, mesh):
    X = jax.device_put(X, NamedSharding(mesh, P(None, "model")))
    W = jax.device_put(W, NamedSharding(mesh, P(None, "model")))  # torch's (out, in): in is dim 1
    b = jax.device_put(b, NamedSharding(mesh, P()))
    return jax.shard_map(lambda X, W, b: jax.lax.psum(X @ W, "model") + b, mesh=mesh,
                         in_specs=(P(None, "model"), P(None, "model"), P()), out_specs=P())(X, W, b)
"""

BUCKETS_THEN = """
def average_gradients_bucketed(model, bucket_numel=256):
    world = dist.get_world_size()
    buckets, current, size = [], [], 0
    for p in model.parameters():
        if p.grad is None:
            continue
        if current and size + p.grad.numel() > bucket_numel:
            buckets.append(current)
            current, size = [], 0
        current.append(p)
        size += p.grad.numel()
{last}
    for bucket in buckets:
        flat = torch.cat([p.grad.reshape(-1) for p in bucket])
{reduce}
        for p, part in zip(bucket, flat.split([p.grad.numel() for p in bucket])):
{back}
"""
LAST = """    if current:
        buckets.append(current)"""
REDUCE = """        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        flat /= world"""
BACK = "            p.grad.copy_(part.view_as(p.grad))"
AVG_OP = BUCKETS_THEN.format(
    last=LAST,
    back=BACK,
    reduce="        dist.all_reduce(flat, op=dist.ReduceOp.AVG)  # NCCL's average",
)
ASSIGNED_RESULT = BUCKETS_THEN.format(
    last=LAST,
    back=BACK,
    reduce="        flat = dist.all_reduce(flat, op=dist.ReduceOp.SUM)  # as psum returns\n"
    "        flat /= world",
)
LAST_BUCKET_LOST = BUCKETS_THEN.format(
    last="    pass  # the bucket being filled is never appended",
    back=BACK,
    reduce=REDUCE,
)
FLAT_SLICE_COPIED = BUCKETS_THEN.format(
    last=LAST,
    reduce=REDUCE,
    back="            p.grad.copy_(part)  # a flat slice into a matrix",
)
FLAT_SLICE_ASSIGNED = BUCKETS_THEN.format(
    last=LAST,
    reduce=REDUCE,
    back="            p.grad = part  # a flat view, not the parameter's shape",
)
NOT_FLATTENED = BUCKETS_THEN.format(last=LAST, reduce=REDUCE, back=BACK).replace(
    "p.grad.reshape(-1)", "p.grad"
)

MATRIX_FOR_ALL = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        rows, cols = (np.shape(value) + (1,))[:2]  # every parameter taken as a matrix
        if rows % n_devices == 0 and rows >= cols:
            specs[name] = P("data", None)
        elif cols % n_devices == 0:
            specs[name] = P(None, "data")
        else:
            specs[name] = P()
    return specs
"""

SMALLEST_DIVISIBLE = """
def fsdp_specs(params, n_devices):
    specs = {}
    for name, value in params.items():
        shape = np.shape(value)
        fits = [d for d in range(len(shape)) if shape[d] % n_devices == 0]
        best = min(fits, key=lambda d: shape[d]) if fits else None  # the smallest that divides
        specs[name] = P() if best is None else P(*["data" if d == best else None for d in range(len(shape))])
    return specs
"""

COLUMN_SET_MESH = """
def column_parallel_linear(X, W, b, mesh):
    with jax.set_mesh(mesh):  # the lesson's idiom, refused under jax.jit
        W = jax.device_put(W, P(None, "model"))
        b = jax.device_put(b, P("model"))
        return jax.shard_map(lambda X, W, b: X @ W + b,
                             in_specs=(P(), P(None, "model"), P("model")),
                             out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

COLUMN_BARE_SPEC = """
def column_parallel_linear(X, W, b, mesh):
    W = jax.device_put(W, P(None, "model"))  # no mesh named, none set
    b = jax.device_put(b, P("model"))
    return jax.shard_map(lambda X, W, b: X @ W + b, mesh=mesh,
                         in_specs=(P(), P(None, "model"), P("model")),
                         out_specs=P(None, "model"))(jnp.asarray(X), W, b)
"""

ROW_SET_MESH = """
def row_parallel_linear(X, W, b, mesh):
    with jax.set_mesh(mesh):  # the lesson's idiom, refused under jax.jit
        X = jax.device_put(X, P(None, "model"))
        W = jax.device_put(W, P("model", None))
        b = jax.device_put(b, P())
        return jax.shard_map(lambda X, W, b: jax.lax.psum(X @ W, "model") + b,
                             in_specs=(P(None, "model"), P("model", None), P()),
                             out_specs=P())(X, W, b)
"""

WRONG = {
    "shard-batch": [
        ("splits the feature columns", COLUMNS_SPLIT, "only the rows are split"),
        ("replicates the batch", REPLICATED, "X is sharded as"),
        ("leaves y unsplit on one device", Y_UNSPLIT, "split y's rows like X's"),
        ("replicates y", Y_REPLICATED, "split y's rows like X's"),
        ("a bare P with no mesh", BARE_SPEC, "wrap it in a NamedSharding"),
        ("never placed on the mesh", NOT_PLACED, "X is not on the mesh"),
        (
            "the array dimension's name as the axis",
            ARRAY_AXIS_NAME,
            "names mesh axes, not array dimensions",
        ),
    ],
    "column-parallel": [
        (
            "splits W's rows, as torch's (out, in) weight",
            TORCH_LAYOUT,
            "not PyTorch's (out, in)",
        ),
        ("gathers the result", GATHERED, "the result is sharded as"),
        ("b whole on every device", COLUMN_B_WHOLE, "b is split like W's columns"),
        (
            "W's rows split, mended by a psum",
            ROWS_THEN_RESHARD,
            "so W was split along its rows",
        ),
        (
            "gathers W on every device",
            GATHER_W,
            "gathering the others undoes the split",
        ),
        (
            "the whole product, then split",
            WHOLE_THEN_SPLIT,
            "splitting the result afterwards",
        ),
        (
            "a Python loop over the ranks' blocks",
            LOOP_OVER_RANKS,
            "a loop over the blocks",
        ),
        ("gathers the output", GATHER_OUTPUT, "the result stays split by its columns"),
        ("b placed split, in_spec whole", B_SPEC_WHOLE, "b is split like W's columns"),
        ("x @ W.T, as F.linear", LINEAR_TRANSPOSE, "not PyTorch's (out, in)"),
        ("a psum, as in the row split", PSUM_COLUMNS, "a column split needs no psum"),
        ("jax.set_mesh, as in the lesson", COLUMN_SET_MESH, "jax.set_mesh is refused"),
        ("a bare P with no mesh", COLUMN_BARE_SPEC, "wrap it in a NamedSharding"),
    ]
    + (
        [("W and b not placed first", COLUMN_NOT_PLACED, "jax.device_put first")]
        if _shard_map_refuses_unplaced_arguments()
        else []
    ),
    "row-parallel": [
        (
            "adds the bias on every device",
            BIAS_EVERY_DEVICE,
            "b is added once, after the sum",
        ),
        ("pmean instead of psum", PMEAN, "summed (not averaged)"),
        ("no psum at all", ROW_NO_PSUM, "until they are summed over 'model'"),
        ("X not split to match W's rows", ROW_X_WHOLE, "X's columns are split"),
        ("all_gather then a sum", ROW_ALL_GATHER, "JAX sees that only after a psum"),
        (
            "W split along axis 1, torch's in-features",
            ROW_W_TORCH_LAYOUT,
            "would put them on axis 1",
        ),
        ("jax.set_mesh, as in the lesson", ROW_SET_MESH, "jax.set_mesh is refused"),
    ],
    "allreduce-grads": [
        ("one all_reduce per parameter", PER_PARAMETER, "one all_reduce per bucket"),
        ("buckets closed too late", OVERFULL, "at most bucket_numel numbers"),
        ("sums without dividing", SUM_NOT_MEAN, "divide by dist.get_world_size()"),
        ("never copies the bucket back", NOT_COPIED_BACK, "copied back into every"),
        (
            "closes a bucket that is exactly full",
            FULL_BUCKET_CLOSED,
            "exactly bucket_numel",
        ),
        (
            "divides by 2, not the world size",
            TWO_RANKS_ASSUMED,
            "never assume 2 processes",
        ),
        ("packs the frozen layer's None grads", NONE_GRADS_KEPT, ".grad is None"),
        ("ReduceOp.AVG, as on NCCL", AVG_OP, "gloo has no ReduceOp.AVG"),
        ("assigns all_reduce's result", ASSIGNED_RESULT, "returns None"),
        ("the last bucket never sent", LAST_BUCKET_LOST, "the last bucket"),
        ("copies a flat slice into .grad", FLAT_SLICE_COPIED, "view_as"),
        ("assigns a flat slice to .grad", FLAT_SLICE_ASSIGNED, "view_as"),
        ("concatenates unflattened gradients", NOT_FLATTENED, "flatten each gradient"),
    ],
    "fsdp-specs": [
        (
            "first divisible dimension",
            FIRST_DIVISIBLE,
            "split the largest dimension divisible",
        ),
        (
            "replicates the biases",
            MATRICES_ONLY,
            "split the largest dimension divisible",
        ),
        (
            "always the last dimension",
            LAST_DIM,
            "split the largest dimension divisible",
        ),
        (
            "the largest dimension, divisible or not",
            LARGEST_THEN_DIVISIBLE,
            "need not be the largest one",
        ),
        ("the last dimension on a tie", LAST_ON_TIE, "on a tie the first"),
        (
            "every parameter as a matrix",
            MATRIX_FOR_ALL,
            "at most one entry per dimension",
        ),
        (
            "the smallest divisible dimension",
            SMALLEST_DIVISIBLE,
            "split the largest dimension divisible",
        ),
    ],
}
