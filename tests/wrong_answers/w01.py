"""Wrong answers to solutions/01_design_philosophy_exercises.py."""

RIGHT_JAX = """
def dropout_masks_jax(key, num_steps, shape, rate):
    step_keys = [jax.random.fold_in(key, step) for step in range(num_steps)]
    return jnp.stack([jax.random.bernoulli(k, 1.0 - rate, shape) for k in step_keys])
"""

KEEP_DROP_SWAPPED = (
    RIGHT_JAX.replace("1.0 - rate", "rate")
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) < rate  # True where DROPPED
"""
)

GLOBAL_GENERATOR = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    torch.manual_seed(seed)  # reseeds everyone's generator
    return torch.rand((num_steps, *shape)) >= rate
"""
)

REUSED_KEY = (
    """
def dropout_masks_jax(key, num_steps, shape, rate):
    return jnp.stack([jax.random.bernoulli(key, 1.0 - rate, shape) for _ in range(num_steps)])
"""
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) >= rate
"""
)

WRONG = {
    "dropout-keys": [
        ("keep and drop swapped", KEEP_DROP_SWAPPED, "KEPT, with probability 1 - rate"),
        ("the global torch generator", GLOBAL_GENERATOR, "a generator of your own"),
        ("one key for every step", REUSED_KEY, "each step needs a key of its own"),
    ],
}

SGD_OLD_VELOCITY = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)  # the old velocity
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    return new_params, new_velocity
"""

SGD_EMA_VELOCITY = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    # an Adam-style moving average, not torch.optim.SGD's momentum
    new_velocity = jax.tree.map(lambda v, g: momentum * v + (1 - momentum) * g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return new_params, new_velocity
"""

SCATTER_RIGHT_JAX = """
def bin_sums_jax(idx, weights, n_bins):
    return jnp.zeros(n_bins, dtype=weights.dtype).at[idx].add(weights)
"""

SCATTER_TORCH_PLUS_EQUALS = (
    """
def bin_sums_torch(idx, weights, n_bins):
    out = torch.zeros(n_bins, dtype=weights.dtype)
    out[idx] += weights  # a repeated index is written once
    return out
"""
    + SCATTER_RIGHT_JAX
)

SCATTER_JAX_SET = """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)

def bin_sums_jax(idx, weights, n_bins):
    return jnp.zeros(n_bins, dtype=weights.dtype).at[idx].set(weights)  # last write wins
"""

STATS_INIT = """
def init_stats(dim):
    return Stats(jnp.zeros(()), jnp.zeros(dim), jnp.zeros(dim))
"""

STATS_PYTHON_COUNTER = (
    STATS_INIT
    + """
_seen = {"count": 0}

def update_stats(state, batch):
    n, batch_mean = batch.shape[0], batch.mean(axis=0)
    count = _seen["count"]  # read once, at trace time
    delta, total = batch_mean - state.mean, count + n
    mean = state.mean + delta * n / total
    m2 = state.m2 + ((batch - batch_mean) ** 2).sum(axis=0) + delta**2 * count * n / total
    _seen["count"] = total
    return Stats(jnp.asarray(total, jnp.float32), mean, m2)
"""
)

STATS_NO_CROSS_TERM = (
    STATS_INIT
    + """
def update_stats(state, batch):
    n, batch_mean = batch.shape[0], batch.mean(axis=0)
    delta, total = batch_mean - state.mean, state.count + n
    mean = state.mean + delta * n / total
    m2 = state.m2 + ((batch - batch_mean) ** 2).sum(axis=0)  # the delta**2 term forgotten
    return Stats(total, mean, m2)
"""
)

NNX_CLASS = """
class MLPNNX(nnx.Module):
    def __init__(self, d_in, d_hidden, d_out, *, rngs):
        self.linear1 = nnx.Linear(d_in, d_hidden, rngs=rngs)
        self.linear2 = nnx.Linear(d_hidden, d_out, rngs=rngs)

    def __call__(self, X):
        return self.linear2(jnp.tanh(self.linear1(X)))
"""

NNX_FROM_TORCH = """
def from_torch(model):
    d_hidden, d_in = model.linear1.weight.shape
    out = MLPNNX(d_in, d_hidden, model.linear2.weight.shape[0], rngs=nnx.Rngs(0))
    for mine, theirs in ((out.linear1, model.linear1), (out.linear2, model.linear2)):
        mine.kernel[...] = jnp.asarray(theirs.weight.detach().numpy().T)
        mine.bias[...] = jnp.asarray(theirs.bias.detach().numpy())
    return out
"""

NNX_NO_TRANSPOSE = NNX_CLASS + NNX_FROM_TORCH.replace(
    "theirs.weight.detach().numpy().T", "theirs.weight.detach().numpy()"
)

NNX_NO_BIAS = NNX_CLASS + NNX_FROM_TORCH.replace(
    "        mine.bias[...] = jnp.asarray(theirs.bias.detach().numpy())\n", ""
)

NNX_RELU = NNX_CLASS.replace("jnp.tanh", "jax.nn.relu") + NNX_FROM_TORCH

SCATTER_JAX_AT_DISCARDED = """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)

def bin_sums_jax(idx, weights, n_bins):
    out = jnp.zeros(n_bins, dtype=weights.dtype)
    out.at[idx].add(weights)  # PyTorch's in-place habit: the new array is thrown away
    return out
"""

SCATTER_TORCH_SCATTER = (
    """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).scatter_(0, idx, weights)  # overwrites
"""
    + SCATTER_RIGHT_JAX
)

WRONG.update(
    {
        "pure-sgd": [
            (
                "params step with the old velocity",
                SGD_OLD_VELOCITY,
                "step along the new velocity",
            ),
            (
                "moving-average velocity",
                SGD_EMA_VELOCITY,
                "no dampening",
            ),
        ],
        "scatter-add": [
            (
                "torch out[idx] += w",
                SCATTER_TORCH_PLUS_EQUALS,
                "PyTorch: an indexed in-place add (t[idx] += w) or a scatter writes a repeated index once",
            ),
            (
                "JAX .at[idx].set",
                SCATTER_JAX_SET,
                "a repeated index must add up, not overwrite",
            ),
            (
                "JAX .at[idx].add result thrown away",
                SCATTER_JAX_AT_DISCARDED,
                "keep what it returns",
            ),
            (
                "torch scatter_ (overwrites)",
                SCATTER_TORCH_SCATTER,
                "PyTorch: an indexed in-place add (t[idx] += w) or a scatter writes a repeated index once",
            ),
        ],
        "jit-stats": [
            (
                "a Python counter outside the function",
                STATS_PYTHON_COUNTER,
                "a Python counter freezes under jit",
            ),
            ("m2 without the cross term", STATS_NO_CROSS_TERM, "term for term"),
        ],
        "port-nnx": [
            ("kernel not transposed", NNX_NO_TRANSPOSE, "kernel = weight.T"),
            ("biases left at their init", NNX_NO_BIAS, "the biases copied too"),
            ("relu instead of tanh", NNX_RELU, "tanh between the layers"),
        ],
    }
)

SGD_STEPS_WITH_GRAD = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, g: p - lr * g, params, grads)  # plain SGD: v is unused
    return new_params, new_velocity
"""

FIXED_KEY_JAX = """
def dropout_masks_jax(key, num_steps, shape, rate):
    key = jax.random.key(0)  # a global seed, as torch.manual_seed(0) at the top of a script
    step_keys = [jax.random.fold_in(key, step) for step in range(num_steps)]
    return jnp.stack([jax.random.bernoulli(k, 1.0 - rate, shape) for k in step_keys])

def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) >= rate
"""

FIXED_SEED_TORCH = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(0)  # the seed argument ignored
    return torch.rand((num_steps, *shape), generator=gen) >= rate
"""
)

SEED_PLUS_STEP_TORCH = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    masks = [torch.rand(shape, generator=torch.Generator().manual_seed(seed + step)) >= rate
             for step in range(num_steps)]  # seed 43's step 0 is seed 42's step 1
    return torch.stack(masks)
"""
)

SCATTER_TORCH_INT_BINS = (
    """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=torch.long).index_add_(0, idx, weights)  # integer bins
"""
    + SCATTER_RIGHT_JAX
)

WRONG["pure-sgd"] += [
    (
        "params step with the gradient, not the velocity",
        SGD_STEPS_WITH_GRAD,
        "step along the new velocity",
    ),
]
WRONG["dropout-keys"] += [
    (
        "JAX: a fixed key instead of the one passed in",
        FIXED_KEY_JAX,
        "JAX: key/seed 42 and 43",
    ),
    (
        "PyTorch: a fixed seed instead of the one passed in",
        FIXED_SEED_TORCH,
        "PyTorch: key/seed 42",
    ),
    (
        "PyTorch: a generator seeded seed + step for each step",
        SEED_PLUS_STEP_TORCH,
        "seed one generator once",
    ),
]
SCATTER_RIGHT_TORCH = """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)
"""

SCATTER_JAX_NUMPY = (
    SCATTER_RIGHT_TORCH
    + """
def bin_sums_jax(idx, weights, n_bins):
    out = np.zeros(n_bins, np.float32)  # back to NumPy, where np.add.at accumulates
    np.add.at(out, np.asarray(idx), np.asarray(weights))
    return jnp.asarray(out)
"""
)

SCATTER_JAX_BINCOUNT = (
    SCATTER_RIGHT_TORCH
    + """
def bin_sums_jax(idx, weights, n_bins):
    return jnp.bincount(idx, weights)  # its length comes from the values of idx
"""
)

WRONG["scatter-add"] += [
    (
        "PyTorch: integer bins for float weights",
        SCATTER_TORCH_INT_BINS,
        "the weights' dtype",
    ),
    (
        "JAX: NumPy's np.add.at on the inputs",
        SCATTER_JAX_NUMPY,
        "NumPy cannot read them",
    ),
    (
        "JAX: bincount with its length from the data",
        SCATTER_JAX_BINCOUNT,
        "the length from n_bins",
    ),
]

SGD_ONLY_PARAMS = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    return jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)  # the velocity is lost
"""

SGD_DICT_IN_PLACE = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    for k in params:  # PyTorch's habit: update the buffers in place, a dict only
        velocity[k] = momentum * velocity[k] + grads[k]
        params[k] = params[k] - lr * velocity[k]
    return params, velocity
"""

SGD_SWAPPED_PAIR = """
def sgd_momentum(params, velocity, grads, lr, momentum):
    new_velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - lr * v, params, new_velocity)
    return new_velocity, new_params  # the pair in the other order
"""

SCATTER_JAX_ITEM_ASSIGN = """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)

def bin_sums_jax(idx, weights, n_bins):
    out = jnp.zeros(n_bins, dtype=weights.dtype)
    out[idx] += weights  # PyTorch's habit: item assignment
    return out
"""

SCATTER_JAX_INT_BINS = """
def bin_sums_torch(idx, weights, n_bins):
    return torch.zeros(n_bins, dtype=weights.dtype).index_add_(0, idx, weights)

def bin_sums_jax(idx, weights, n_bins):
    return jnp.zeros(n_bins, dtype=jnp.int32).at[idx].add(weights)  # fractions cut off
"""

TORCH_FLOAT_MASK = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    keep = torch.full((num_steps, *shape), 1.0 - rate)
    return torch.bernoulli(keep, generator=gen)  # 0.0 and 1.0, not a boolean mask
"""
)

TORCH_RESEED_EACH_STEP = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    masks = []
    for _ in range(num_steps):
        gen = torch.Generator().manual_seed(seed)  # seeded again every step
        masks.append(torch.rand(shape, generator=gen) >= rate)
    return torch.stack(masks)
"""
)

STATS_FIELDS_IN_PLACE = (
    STATS_INIT
    + """
def update_stats(state, batch):
    n, batch_mean = batch.shape[0], batch.mean(axis=0)
    delta, total = batch_mean - state.mean, state.count + n
    state.m2 = state.m2 + ((batch - batch_mean) ** 2).sum(axis=0) + delta**2 * state.count * n / total
    state.mean = state.mean + delta * n / total  # PyTorch's habit: update the fields
    state.count = total
    return state
"""
)

NNX_REPLACES_PARAM = NNX_CLASS + NNX_FROM_TORCH.replace(
    "mine.kernel[...] = jnp.asarray(theirs.weight.detach().numpy().T)",
    "mine.kernel = jnp.asarray(theirs.weight.detach().numpy().T)  # like module.weight = ...",
)

NNX_NO_DETACH = NNX_CLASS + NNX_FROM_TORCH.replace(
    "theirs.weight.detach().numpy().T", "theirs.weight.numpy().T"
)

WRONG["pure-sgd"] += [
    ("returns the new parameters only", SGD_ONLY_PARAMS, "return the pair"),
    ("updates the dicts in place", SGD_DICT_IN_PLACE, "map over its leaves"),
    ("returns (velocity, params)", SGD_SWAPPED_PAIR, "the second item"),
]
WRONG["scatter-add"] += [
    ("JAX: out[idx] += w", SCATTER_JAX_ITEM_ASSIGN, "item assignment raises"),
    ("JAX: integer bins", SCATTER_JAX_INT_BINS, "the weights' dtype"),
]
WRONG["dropout-keys"] += [
    ("PyTorch: a float mask from torch.bernoulli", TORCH_FLOAT_MASK, "a boolean array"),
    (
        "PyTorch: the generator seeded every step",
        TORCH_RESEED_EACH_STEP,
        "seeding it again",
    ),
]
WRONG["jit-stats"] += [
    (
        "assigns to the NamedTuple's fields",
        STATS_FIELDS_IN_PLACE,
        "immutable NamedTuple",
    ),
]
WRONG["port-nnx"] += [
    (
        "replaces the kernel Param with an array",
        NNX_REPLACES_PARAM,
        "replaces its nnx.Param",
    ),
    ("numpy() without detach()", NNX_NO_DETACH, "must be detached"),
]
