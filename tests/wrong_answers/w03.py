"""Wrong answers to solutions/03_jit_compilation_exercises.py."""

UNCOMPILED = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step(w, X, y, torch.tensor(lr, dtype=w.dtype))  # the uncompiled step
    return w
"""

PYTHON_FLOAT = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step_c(w, X, y, lr)  # a Python float is a constant Dynamo guards on
    return w
"""

MEAN_OVER_ALL = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    mask = jnp.arange(y.shape[0]) < n_valid
    return jnp.mean(jnp.where(mask, X @ w - y, 0.0) ** 2)  # divides by len(y)
"""

SLICE_TRACED = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    return jnp.mean((X[:n_valid] @ w - y[:n_valid]) ** 2)  # a slice needs a static length
"""

MASK_OFF_BY_ONE = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    mask = jnp.arange(y.shape[0]) <= n_valid  # one padding row too many
    return jnp.sum(jnp.where(mask, X @ w - y, 0.0) ** 2) / n_valid
"""

PYTHON_WHILE = """
def collatz_steps(n):
    steps = jnp.zeros_like(n)
    while n != 1:  # a Python while on a traced value
        n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        steps += 1
    return steps
"""

PYTHON_IF_IN_BODY = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = n // 2 if n % 2 == 0 else 3 * n + 1  # a Python if on a traced value
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

ROLLOUT = """
def rollout_jax(state, actions):
    def body(carry, action):
        s, alive, total = carry
        s, reward, done = cartpole.jax_step(s, action)
        total = total + jnp.where(alive, reward, 0.0)
        return (s, alive & ~done, total), None

    init = (state, jnp.asarray(True), jnp.zeros((), state.dtype))
    (s, _, total), _ = jax.lax.scan(body, init, actions)
    return s, total


def rollout_torch(state, actions):
    s, alive, total = state, torch.tensor(True), torch.zeros((), dtype=state.dtype)
    for action in actions:
        s, reward, done = cartpole.torch_step(s, action)
        total = total + torch.where(alive, reward, 0.0)
        alive = alive & ~done
    return s, total


def rollout_all_jax(states, actions):
    return jax.vmap(rollout_jax)(states, actions)


def rollout_all_torch(states, actions):
    return torch.func.vmap(rollout_torch)(states, actions)
"""


def _variant(old: str, new: str) -> str:
    assert ROLLOUT.count(old) == 1, old
    return ROLLOUT.replace(old, new)


JAX_NO_ALIVE = _variant(
    "total = total + jnp.where(alive, reward, 0.0)",
    "total = total + reward  # counts rewards after done",
)

JAX_PYTHON_IF = _variant(
    "total = total + jnp.where(alive, reward, 0.0)",
    "total = total + (reward if alive else 0.0)  # a Python if on a traced value",
)

TORCH_IF_BREAK = _variant(
    """        total = total + torch.where(alive, reward, 0.0)
        alive = alive & ~done""",
    """        total = total + reward
        if done:  # data-dependent control flow under torch.func.vmap
            break""",
)

TORCH_NO_ALIVE = _variant(
    "total = total + torch.where(alive, reward, 0.0)",
    "total = total + reward  # counts rewards after done",
)

KMEANS = """
def kmeans_step_jax(X, C):
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    labels = jnp.argmin(d2, axis=1)
    k = C.shape[0]
    counts = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments=k)
    sums = jax.ops.segment_sum(X, labels, num_segments=k)
    means = sums / jnp.maximum(counts, 1)[:, None]
    empty = counts == 0
    farthest = jax.lax.top_k(d2.min(axis=1), k)[1]
    rank = jnp.maximum(jnp.cumsum(empty) - 1, 0)
    return jnp.where(empty[:, None], X[farthest[rank]], means), labels


def kmeans_step_torch(X, C):
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    labels = d2.argmin(dim=1)
    counts = torch.zeros_like(C[:, 0]).index_add_(0, labels, torch.ones_like(X[:, 0]))
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    means = sums / counts.clamp(min=1)[:, None]
    empty = counts == 0
    farthest = d2.min(dim=1).values.topk(C.shape[0]).indices
    rank = (empty.cumsum(0) - 1).clamp(min=0)
    return torch.where(empty[:, None], X[farthest[rank]], means), labels
"""


def _kmeans(old: str, new: str) -> str:
    assert KMEANS.count(old) == 1, old
    return KMEANS.replace(old, new)


JAX_STAYS_PUT = _kmeans(
    "return jnp.where(empty[:, None], X[farthest[rank]], means), labels",
    "return jnp.where(empty[:, None], C, means), labels  # the lesson's step",
)

JAX_ONE_POINT_FOR_ALL = _kmeans(
    "return jnp.where(empty[:, None], X[farthest[rank]], means), labels",
    "return jnp.where(empty[:, None], X[farthest[0]], means), labels  # all take one",
)

JAX_BOOLEAN_INDEX = _kmeans(
    "    means = sums / jnp.maximum(counts, 1)[:, None]",
    "    means = jnp.stack([X[labels == j].mean(0) for j in range(k)])  # boolean indexing",
)

TORCH_PYTHON_IF = _kmeans(
    "    return torch.where(empty[:, None], X[farthest[rank]], means), labels",
    """    new = means.clone()
    if empty.any():  # a Python if on a tensor
        new = torch.where(empty[:, None], X[farthest[rank]], means)
    return new, labels""",
)

TORCH_FARTHEST_CENTROID = _kmeans(
    "farthest = d2.min(dim=1).values.topk(C.shape[0]).indices",
    "farthest = d2.max(dim=1).values.topk(C.shape[0]).indices  # from the farthest centroid",
)

JAX_INITIAL_STATE = _variant(
    "    (s, _, total), _ = jax.lax.scan(body, init, actions)\n    return s, total",
    "    (s, _, total), _ = jax.lax.scan(body, init, actions)\n    return state, total  # the input",
)

TORCH_INITIAL_STATE = _variant(
    "        alive = alive & ~done\n    return s, total",
    "        alive = alive & ~done\n    return state, total  # the input",
)

WRONG = {
    "torch-schedule": [
        (
            "calls the uncompiled step",
            UNCOMPILED,
            "called the compiled step train_step_c 0 times",
        ),
        (
            "passes the rate as a Python float",
            PYTHON_FLOAT,
            "the rate is a Python float, but the step was warmed up with a 0-d tensor",
        ),
    ],
    "masked-mse": [
        ("divides by len(y)", MEAN_OVER_ALL, "divided by len(y), not by n_valid"),
        ("slices with a traced length", SLICE_TRACED, "n_valid is traced"),
        (
            "mask with <= (one row too many)",
            MASK_OFF_BY_ONE,
            "one padding row too many",
        ),
    ],
    "collatz": [
        ("a Python while loop", PYTHON_WHILE, "a Python `while` or `if` tests n"),
        (
            "a Python if in the loop body",
            PYTHON_IF_IN_BODY,
            "a Python `while` or `if` tests n",
        ),
    ],
    "vmap-rollout": [
        (
            "JAX: counts rewards after done",
            JAX_NO_ALIVE,
            "JAX: a reward counts only while",
        ),
        (
            "JAX: a Python if on alive",
            JAX_PYTHON_IF,
            "has no True or False under jit",
        ),
        (
            "PyTorch: if done: break under vmap",
            TORCH_IF_BREAK,
            "cannot batch a Python `if`, `break`",
        ),
        (
            "PyTorch: counts rewards after done",
            TORCH_NO_ALIVE,
            "PyTorch: a reward counts only while",
        ),
        (
            "JAX: returns the initial state",
            JAX_INITIAL_STATE,
            "JAX: return the state after",
        ),
        (
            "PyTorch: returns the initial state",
            TORCH_INITIAL_STATE,
            "PyTorch: return the state after",
        ),
    ],
    "kmeans-step": [
        (
            "JAX: the empty centroid stays put",
            JAX_STAYS_PUT,
            "JAX: centroid 4 had no points",
        ),
        (
            "JAX: every empty centroid takes the farthest point",
            JAX_ONE_POINT_FOR_ALL,
            "the second farthest",
        ),
        (
            "JAX: boolean indexing per cluster",
            JAX_BOOLEAN_INDEX,
            "boolean indices must be concrete",
        ),
        (
            "PyTorch: a Python if on a tensor",
            TORCH_PYTHON_IF,
            "PyTorch: torch.compile(fullgraph=True) found a graph break",
        ),
        (
            "PyTorch: far from the farthest centroid, not the nearest",
            TORCH_FARTHEST_CENTROID,
            "PyTorch: centroid 4 had no points",
        ),
    ],
}

MSE_SUM_NOT_MEAN = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    mask = jnp.arange(y.shape[0]) < n_valid
    return jnp.sum(jnp.where(mask, X @ w - y, 0.0) ** 2)  # a sum: never divided
"""

COLLATZ_COUNTS_THE_START = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.ones_like(n)))[1]  # from 1
"""

WRONG["masked-mse"] += [
    (
        "the squared errors summed, not averaged",
        MSE_SUM_NOT_MEAN,
        "summed, not averaged",
    ),
]
WRONG["collatz"] += [
    (
        "counts from 1 (off by one)",
        COLLATZ_COUNTS_THE_START,
        "n = 1 is already the end (0 steps)",
    ),
]

COLLATZ_TRUE_DIVISION = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n / 2, lambda n: 3 * n + 1, n)  # a float
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

COLLATZ_WHERE_TRUE_DIVISION = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        return jnp.where(n % 2 == 0, n / 2, 3 * n + 1), steps + 1  # a float carry

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

WRONG["collatz"] += [
    ("n / 2 in lax.cond", COLLATZ_TRUE_DIVISION, "`n / 2` is true division"),
    ("n / 2 in jnp.where", COLLATZ_WHERE_TRUE_DIVISION, "n before and after a step"),
]

JAX_ALIVE_FIRST = _variant(
    """        total = total + jnp.where(alive, reward, 0.0)
        return (s, alive & ~done, total), None""",
    """        alive = alive & ~done  # updated before the reward is added
        total = total + jnp.where(alive, reward, 0.0)
        return (s, alive, total), None""",
)

TORCH_ALIVE_FIRST = _variant(
    """        total = total + torch.where(alive, reward, 0.0)
        alive = alive & ~done""",
    """        alive = alive & ~done  # updated before the reward is added
        total = total + torch.where(alive, reward, 0.0)""",
)

WRONG["vmap-rollout"] += [
    (
        "JAX: alive updated before adding the reward",
        JAX_ALIVE_FIRST,
        "JAX: with a reward paid on the step that reports done",
    ),
    (
        "PyTorch: alive updated before adding the reward",
        TORCH_ALIVE_FIRST,
        "PyTorch: with a reward paid on the step that reports done",
    ),
]

JAX_KMEANS_PYTHON_IF = _kmeans(
    "    return jnp.where(empty[:, None], X[farthest[rank]], means), labels",
    """    if empty.any():  # a Python if on a traced value
        return jnp.where(empty[:, None], X[farthest[rank]], means), labels
    return means, labels""",
)

JAX_NONZERO = _kmeans(
    "    return jnp.where(empty[:, None], X[farthest[rank]], means), labels",
    """    empty_ids = jnp.nonzero(empty)[0]  # as many as there are empty centroids
    return means.at[empty_ids].set(X[farthest[: len(empty_ids)]]), labels""",
)

WRONG["kmeans-step"] += [
    (
        "JAX: a Python if on a traced value",
        JAX_KMEANS_PYTHON_IF,
        "cannot choose a branch",
    ),
    (
        "JAX: jnp.nonzero for the empty centroids",
        JAX_NONZERO,
        "gives a shape that depends on the data",
    ),
]

COLLATZ_SHORTCUT = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jnp.where(n % 2 == 0, n // 2, (3 * n + 1) // 2)  # the shortcut map: two updates in one
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

FLOAT64_RATE = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step_c(w, X, y, torch.tensor(lr, dtype=torch.float64))  # not the warm-up's dtype
    return w
"""

WRONG["collatz"] += [
    (
        "the shortcut map (3n + 1) / 2 for odd n",
        COLLATZ_SHORTCUT,
        "are not those of the Collatz map",
    ),
]
WRONG["torch-schedule"] += [
    ("a float64 tensor rate", FLOAT64_RATE, "the rate's dtype differs"),
]

COLLATZ_RETURNS_N = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[0]  # n, not steps
"""

COLLATZ_INT_PREDICATE = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2, lambda n: n // 2, lambda n: 3 * n + 1, n)  # true for odd n
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

MASK_AS_INDEX = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    mask = jnp.arange(y.shape[0]) < n_valid
    return jnp.mean((X[mask] @ w - y[mask]) ** 2)  # PyTorch's boolean indexing
"""

RATE_OF_SHAPE_ONE = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step_c(w, X, y, torch.tensor([lr]))  # shape (1,), not 0-d
    return w
"""

NUMPY_RATE = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = train_step_c(w, X, y, np.float32(lr))  # a NumPy scalar, not a tensor
    return w
"""

JAX_AND_NOT = _variant(
    "return (s, alive & ~done, total), None",
    "return (s, alive and not done, total), None  # Python's and/not on tracers",
)

TORCH_AND_NOT = _variant(
    "alive = alive & ~done",
    "alive = alive and not done  # Python's and/not on a batched tensor",
)

TORCH_STEPS_FROM_START = _variant(
    "s, reward, done = cartpole.torch_step(s, action)",
    "s, reward, done = cartpole.torch_step(state, action)  # always the initial state",
)

WRONG["collatz"] += [
    ("returns the final n, not the count", COLLATZ_RETURNS_N, "returns the final n"),
    (
        "lax.cond on n % 2 with the even branch first",
        COLLATZ_INT_PREDICATE,
        "Which one runs for an even n?",
    ),
]
WRONG["masked-mse"] += [
    ("indexes with the boolean mask", MASK_AS_INDEX, "a boolean mask as an index"),
]
WRONG["torch-schedule"] += [
    ("a rate of shape (1,)", RATE_OF_SHAPE_ONE, "the rate's shape differs"),
    ("a NumPy float32 rate", NUMPY_RATE, "the rate is a NumPy number"),
]
WRONG["vmap-rollout"] += [
    (
        "JAX: Python's and/not on alive",
        JAX_AND_NOT,
        "`if`, `and`, `or` or `not` tests a traced value",
    ),
    (
        "PyTorch: Python's and/not on alive",
        TORCH_AND_NOT,
        "`and`, `or` or `not` on a tensor",
    ),
    (
        "PyTorch: every step from the initial state",
        TORCH_STEPS_FROM_START,
        "each step taken from the state the step before",
    ),
]

TORCH_TOTAL_IN_PLACE = _variant(
    "total = total + torch.where(alive, reward, 0.0)",
    "total += torch.where(alive, reward, 0.0)  # in place, into an unbatched zeros",
)

TORCH_ALIVE_IN_PLACE = _variant(
    "alive = alive & ~done",
    "alive &= ~done  # in place, into an unbatched torch.tensor(True)",
)

TORCH_ALIVE_PYTHON_BOOL = _variant(
    "s, alive, total = state, torch.tensor(True), torch.zeros((), dtype=state.dtype)",
    "s, alive, total = state, True, torch.zeros((), dtype=state.dtype)  # a Python bool",
)

JAX_IN_DIMS = _variant(
    "return jax.vmap(rollout_jax)(states, actions)",
    "return jax.vmap(rollout_jax, in_dims=0)(states, actions)  # torch.func.vmap's keyword",
)

WRONG["vmap-rollout"] += [
    ("PyTorch: total += under vmap", TORCH_TOTAL_IN_PLACE, "in-place update (`+=`"),
    (
        "PyTorch: alive &= under vmap",
        TORCH_ALIVE_IN_PLACE,
        "which vmap leaves unbatched",
    ),
    (
        "PyTorch: alive starts as a Python bool",
        TORCH_ALIVE_PYTHON_BOOL,
        "torch.where got a Python bool",
    ),
    ("JAX: jax.vmap given in_dims", JAX_IN_DIMS, "which JAX spells in_axes"),
]

COLLATZ_COND_VALUES = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, n // 2, 3 * n + 1)  # two values, as jnp.where takes
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

JAX_SCAN_CARRY_ONLY = _variant(
    "return (s, alive & ~done, total), None",
    "return (s, alive & ~done, total)  # the carry alone, no per-step output",
)

JAX_KMEANS_IN_PLACE = _kmeans(
    "    counts = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments=k)",
    """    counts = jnp.zeros(k, X.dtype)
    counts[labels] += 1  # in place, as PyTorch's index_add_ does""",
)

JAX_TOP_K_VALUES = _kmeans(
    "farthest = jax.lax.top_k(d2.min(axis=1), k)[1]",
    "farthest = jax.lax.top_k(d2.min(axis=1), k)[0]  # the distances, not the indices",
)

TORCH_MIN_PAIR = _kmeans(
    "farthest = d2.min(dim=1).values.topk(C.shape[0]).indices",
    "farthest = d2.min(dim=1).topk(C.shape[0]).indices  # min(dim=) is a (values, indices) pair",
)

WRONG["collatz"] += [
    (
        "lax.cond given two values",
        COLLATZ_COND_VALUES,
        "lax.cond was given the two results",
    ),
]
WRONG["vmap-rollout"] += [
    (
        "JAX: scan body returns the carry alone",
        JAX_SCAN_CARRY_ONLY,
        "scan needs a pair",
    ),
]
WRONG["kmeans-step"] += [
    ("JAX: counts updated in place", JAX_KMEANS_IN_PLACE, "JAX arrays are immutable"),
    ("JAX: top_k's values as indices", JAX_TOP_K_VALUES, "returns (values, indices)"),
    (
        "PyTorch: min(dim=1) used as a tensor",
        TORCH_MIN_PAIR,
        "return a (values, indices) pair",
    ),
]

JAX_FLOAT_ALIVE = _variant(
    "init = (state, jnp.asarray(True), jnp.zeros((), state.dtype))",
    "init = (state, jnp.ones(()), jnp.zeros((), state.dtype))  # 1.0 standing for True",
)

TORCH_FLOAT_ALIVE = _variant(
    "s, alive, total = state, torch.tensor(True), torch.zeros((), dtype=state.dtype)",
    "s, alive, total = state, torch.ones(()), torch.zeros((), dtype=state.dtype)  # 1.0 for True",
)

WRONG["vmap-rollout"] += [
    ("JAX: alive starts as a float", JAX_FLOAT_ALIVE, "alive started as a number"),
    (
        "PyTorch: alive starts as a float",
        TORCH_FLOAT_ALIVE,
        "alive started as torch.ones(())",
    ),
]

JAX_ALIVE_FROM_DONE = _variant(
    "return (s, alive & ~done, total), None",
    "return (s, ~done, total), None  # this step's done only: forgets an earlier one",
)

TORCH_ALIVE_FROM_DONE = _variant(
    "alive = alive & ~done",
    "alive = ~done  # this step's done only: forgets an earlier one",
)

WRONG["vmap-rollout"] += [
    (
        "JAX: alive from this step's done only",
        JAX_ALIVE_FROM_DONE,
        "alive must remember every earlier done",
    ),
    (
        "PyTorch: alive from this step's done only",
        TORCH_ALIVE_FROM_DONE,
        "alive must remember every earlier done",
    ),
]

WEIGHTS_NOT_CARRIED = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w_new = train_step_c(w, X, y, torch.tensor(lr))  # every step from the initial w
    return w_new
"""

MASK_OVER_FEATURES = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    mask = jnp.arange(X.shape[1]) < n_valid  # one entry per feature, not per row
    return jnp.sum(jnp.where(mask, X @ w - y, 0.0) ** 2) / n_valid
"""

JAX_WHERE_NO_AXIS = _kmeans(
    "return jnp.where(empty[:, None], X[farthest[rank]], means), labels",
    "return jnp.where(empty, X[farthest[rank]], means), labels  # (k,) against (k, d)",
)

TORCH_WHERE_NO_AXIS = _kmeans(
    "    return torch.where(empty[:, None], X[farthest[rank]], means), labels",
    "    return torch.where(empty, X[farthest[rank]], means), labels  # (k,) against (k, d)",
)

WRONG["torch-schedule"] += [
    (
        "every step from the initial weights",
        WEIGHTS_NOT_CARRIED,
        "each step must start from the weights the step before returned",
    ),
]
WRONG["masked-mse"] += [
    ("a mask with one entry per column", MASK_OVER_FEATURES, "one entry per row of X"),
]
WRONG["kmeans-step"] += [
    (
        "JAX: a (k,) condition in jnp.where",
        JAX_WHERE_NO_AXIS,
        "(k,) condition in jnp.where",
    ),
    (
        "PyTorch: a (k,) condition in torch.where",
        TORCH_WHERE_NO_AXIS,
        "(k,) condition in torch.where",
    ),
]

COLLATZ_STOP_TEST = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1

    return jax.lax.while_loop(lambda c: c[0] == 1, body, (n, jnp.zeros_like(n)))[1]  # when to stop
"""

JAX_TOTAL_OF_SHAPE_ONE = _variant(
    "init = (state, jnp.asarray(True), jnp.zeros((), state.dtype))",
    "init = (state, jnp.asarray(True), jnp.zeros(1, state.dtype))  # shape (1,), not 0-d",
)

TORCH_TOTAL_OF_SHAPE_ONE = _variant(
    "s, alive, total = state, torch.tensor(True), torch.zeros((), dtype=state.dtype)",
    "s, alive, total = state, torch.tensor(True), torch.zeros(1, dtype=state.dtype)  # (1,)",
)

JAX_ACTIONS_ON_AXIS_1 = _variant(
    "return jax.vmap(rollout_jax)(states, actions)",
    "return jax.vmap(rollout_jax, in_axes=(0, 1))(states, actions)  # actions read as (T, n)",
)

TORCH_ACTIONS_ON_DIM_1 = _variant(
    "return torch.func.vmap(rollout_torch)(states, actions)",
    "return torch.func.vmap(rollout_torch, in_dims=(0, 1))(states, actions)  # as (T, n)",
)

WRONG["collatz"] += [
    (
        "while_loop's cond as the stopping test",
        COLLATZ_STOP_TEST,
        "the loop's test is the wrong way round",
    ),
]
WRONG["vmap-rollout"] += [
    ("JAX: a total of shape (1,)", JAX_TOTAL_OF_SHAPE_ONE, "not jnp.zeros(1)"),
    ("PyTorch: a total of shape (1,)", TORCH_TOTAL_OF_SHAPE_ONE, "not torch.zeros(1)"),
    ("JAX: actions mapped along axis 1", JAX_ACTIONS_ON_AXIS_1, "in_axes=(0, 1)"),
    (
        "PyTorch: actions mapped along dimension 1",
        TORCH_ACTIONS_ON_DIM_1,
        "in_dims=(0, 1)",
    ),
]

JAX_PYTHON_FOR = _variant(
    "    (s, _, total), _ = jax.lax.scan(body, init, actions)\n    return s, total",
    """    carry = init
    for action in actions:  # a Python loop: unrolled while tracing, one step per action
        carry, _ = body(carry, action)
    s, _, total = carry
    return s, total""",
)

WRONG["vmap-rollout"] += [
    (
        "JAX: a Python for loop instead of lax.scan",
        JAX_PYTHON_FOR,
        "a Python loop over them",
    ),
]

NO_JIT_INT_SLICE = """
def masked_mse(w, X, y, n_valid):  # @jax.jit removed, so that int(n_valid) has a value
    n = int(n_valid)
    return jnp.mean((X[:n] @ w - y[:n]) ** 2)
"""

WRONG["masked-mse"] += [
    (
        "@jax.jit removed to slice by int(n_valid)",
        NO_JIT_INT_SLICE,
        "Removing @jax.jit",
    ),
]

MSE_ITEM_ASSIGNMENT = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    err = X @ w - y
    err[jnp.arange(y.shape[0]) >= n_valid] = 0.0  # in place, PyTorch's way
    return jnp.sum(err**2) / n_valid
"""

JAX_SCAN_RESULT_AS_CARRY = _variant(
    "    (s, _, total), _ = jax.lax.scan(body, init, actions)\n    return s, total",
    "    s, _, total = jax.lax.scan(body, init, actions)  # scan returns (carry, outputs)\n"
    "    return s, total",
)

JAX_RETURNS_WHOLE_CARRY = _variant(
    "    (s, _, total), _ = jax.lax.scan(body, init, actions)\n    return s, total",
    "    carry, _ = jax.lax.scan(body, init, actions)\n    return carry  # (s, alive, total)",
)

JAX_BINCOUNT_MINLENGTH = _kmeans(
    "    counts = jax.ops.segment_sum(jnp.ones(X.shape[0], X.dtype), labels, num_segments=k)",
    "    counts = jnp.bincount(labels, minlength=k).astype(X.dtype)  # torch.bincount's way",
)

WRONG["masked-mse"] += [
    (
        "an item assignment into the errors",
        MSE_ITEM_ASSIGNMENT,
        "an item assignment",
    ),
]
WRONG["vmap-rollout"] += [
    (
        "JAX: lax.scan's result unpacked as the carry",
        JAX_SCAN_RESULT_AS_CARRY,
        "lax.scan's result was unpacked as if it were the carry",
    ),
    (
        "JAX: rollout_jax returns lax.scan's whole carry",
        JAX_RETURNS_WHOLE_CARRY,
        "not lax.scan's whole carry",
    ),
]
WRONG["kmeans-step"] += [
    (
        "JAX: jnp.bincount with minlength, no length",
        JAX_BINCOUNT_MINLENGTH,
        "jnp.bincount without a static `length`",
    ),
]

COLLATZ_FLOAT_COUNT = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1.0

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, 0.0))[1]  # a float count
"""

WRONG["collatz"] += [
    (
        "the step count is a float",
        COLLATZ_FLOAT_COUNT,
        "a count of steps is a whole number",
    ),
]

# The slips below were added when each hint came to name one cause, chosen by the error.

COLLATZ_INT_OF_N = """
def collatz_steps(n):
    return jnp.int32(collatz_steps_python(int(n)))  # a Python int of a traced value
"""

COLLATZ_COUNT_CHANGES_DTYPE = """
def collatz_steps(n):
    def body(carry):
        n, steps = carry
        n = jax.lax.cond(n % 2 == 0, lambda n: n // 2, lambda n: 3 * n + 1, n)
        return n, steps + 1.0  # an int32 count grown by a float

    return jax.lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.zeros_like(n)))[1]
"""

MSE_RETURNS_FLOAT = """
@jax.jit
def masked_mse(w, X, y, n_valid):
    err = jnp.where(jnp.arange(y.shape[0]) < n_valid, X @ w - y, 0.0)
    return float(jnp.sum(err**2) / n_valid)  # PyTorch's .item() habit
"""

COMPILE_IN_THE_LOOP = """
def train_torch(w, X, y, lrs):
    for lr in lrs:
        w = torch.compile(train_step, backend="eager")(w, X, y, torch.tensor(lr))  # not train_step_c
    return w
"""

JAX_ACTIONS_TRANSPOSED = _variant(
    "return jax.vmap(rollout_jax)(states, actions)",
    "return jax.vmap(rollout_jax)(states, actions.T)  # (T, n), a time-major layout",
)

TORCH_ACTIONS_TRANSPOSED = _variant(
    "return torch.func.vmap(rollout_torch)(states, actions)",
    "return torch.func.vmap(rollout_torch)(states, actions.T)  # (T, n), a time-major layout",
)

JAX_ARGMIN_OVER_POINTS = _kmeans(
    "labels = jnp.argmin(d2, axis=1)",
    "labels = jnp.argmin(d2, axis=0)  # over the points, not the centroids",
)

TORCH_ARGMIN_OVER_POINTS = _kmeans(
    "labels = d2.argmin(dim=1)",
    "labels = d2.argmin(dim=0)  # over the points, not the centroids",
)

TORCH_TOPK_PAIR = _kmeans(
    "farthest = d2.min(dim=1).values.topk(C.shape[0]).indices",
    "farthest = d2.min(dim=1).values.topk(C.shape[0])  # the (values, indices) pair",
)

JAX_FLOAT_RANK = _kmeans(
    "rank = jnp.maximum(jnp.cumsum(empty) - 1, 0)",
    "rank = jnp.maximum(jnp.cumsum(empty.astype(X.dtype)) - 1, 0)  # a float count",
)

TORCH_FLOAT_RANK = _kmeans(
    "rank = (empty.cumsum(0) - 1).clamp(min=0)",
    "rank = (empty.float().cumsum(0) - 1).clamp(min=0)  # a float count",
)

WRONG["collatz"] += [
    ("int(n) of a traced n", COLLATZ_INT_OF_N, "int(n) or float(n) asks a tracer"),
    (
        "an int32 count grown by 1.0",
        COLLATZ_COUNT_CHANGES_DTYPE,
        "the count changes dtype",
    ),
]
WRONG["masked-mse"] += [
    (
        "returns a Python float",
        MSE_RETURNS_FLOAT,
        "float() or int() asks a traced value",
    ),
]
WRONG["torch-schedule"] += [
    ("torch.compile inside the loop", COMPILE_IN_THE_LOOP, "train_step_c 0 times"),
]
WRONG["vmap-rollout"] += [
    (
        "JAX: actions transposed to (T, n)",
        JAX_ACTIONS_TRANSPOSED,
        "or the actions transposed",
    ),
    (
        "PyTorch: actions transposed to (T, n)",
        TORCH_ACTIONS_TRANSPOSED,
        "or the actions transposed",
    ),
]
WRONG["kmeans-step"] += [
    (
        "JAX: argmin over the points",
        JAX_ARGMIN_OVER_POINTS,
        "one entry per centroid, not one per point",
    ),
    (
        "PyTorch: argmin over the points",
        TORCH_ARGMIN_OVER_POINTS,
        "one entry per centroid, not one per point",
    ),
    (
        "PyTorch: topk's pair used as indices",
        TORCH_TOPK_PAIR,
        "return a (values, indices) pair",
    ),
    ("JAX: a float running count", JAX_FLOAT_RANK, "must stay an integer"),
    ("PyTorch: a float running count", TORCH_FLOAT_RANK, "must stay an integer"),
]
