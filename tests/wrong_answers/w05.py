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

WRONG = {
    "shard-batch": [
        ("splits the feature columns", COLUMNS_SPLIT, "only the rows are split"),
        ("replicates the batch", REPLICATED, "X is sharded as"),
        ("leaves y unsplit on one device", Y_UNSPLIT, "split y's rows like X's"),
        ("replicates y", Y_REPLICATED, "split y's rows like X's"),
    ],
    "column-parallel": [
        (
            "splits W's rows, as torch's (out, in) weight",
            TORCH_LAYOUT,
            "not PyTorch's (out, in)",
        ),
        ("gathers the result", GATHERED, "the result is sharded as"),
        ("b whole on every device", COLUMN_B_WHOLE, "b is split like W's columns"),
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
    ],
}
