"""Wrong answers to solutions/05_distributed_training_exercises.py."""

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

WRONG = {
    "shard-batch": [
        ("splits the feature columns", COLUMNS_SPLIT, "splits dimension 0 over 'data'"),
        ("replicates the batch", REPLICATED, "X is sharded as"),
    ],
    "column-parallel": [
        (
            "splits W's rows, as torch's (out, in) weight",
            TORCH_LAYOUT,
            "in_specs=(P(), P(None, 'model')",
        ),
        ("gathers the result", GATHERED, "the result is sharded as"),
    ],
    "row-parallel": [
        ("adds the bias on every device", BIAS_EVERY_DEVICE, "then add b once"),
        ("pmean instead of psum", PMEAN, "psum the partial products"),
    ],
    "allreduce-grads": [
        ("one all_reduce per parameter", PER_PARAMETER, "one all_reduce per bucket"),
        ("buckets closed too late", OVERFULL, "at most bucket_numel numbers"),
        ("sums without dividing", SUM_NOT_MEAN, "divide by dist.get_world_size()"),
        ("never copies the bucket back", NOT_COPIED_BACK, "copied back into every"),
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
    ],
}
