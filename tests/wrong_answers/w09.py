"""Wrong answers to solutions/09_numerics_and_tools_exercises.py."""

CE_IN_BF16 = """
def cross_entropy_f32(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)  # stays bfloat16
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

CE_CAST_LOSS_AFTER = """
def cross_entropy_f32(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean().astype(jnp.float32)
"""

CE_NO_MAX = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

FLOPS_NO_TWO = """
def mlp_flops(widths, batch, training=False):
    pairs = list(zip(widths[:-1], widths[1:]))
    forward = sum(batch * a * b for a, b in pairs)  # multiply-adds, not FLOPs
    return 3 * forward if training else forward
"""

FLOPS_BACKWARD_TWICE = """
def mlp_flops(widths, batch, training=False):
    forward = sum(2 * batch * a * b for a, b in zip(widths[:-1], widths[1:]))
    return 3 * forward if training else forward  # counts the data's gradient too
"""

FLOPS_BACKWARD_ONCE = """
def mlp_flops(widths, batch, training=False):
    forward = sum(2 * batch * a * b for a, b in zip(widths[:-1], widths[1:]))
    return 2 * forward if training else forward  # weight gradients only
"""

NONFINITE_LOSS = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        if not bool(jnp.isfinite(loss_fn(params, batch))):
            return i
    return -1
"""

NONFINITE_FIRST_LEAF = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        first = jax.tree.leaves(jax.grad(loss_fn)(params, batch))[0]
        if not bool(jnp.isfinite(first).all()):
            return i
    return -1
"""

NONFINITE_ONE_BASED = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches, start=1):
        if not all(bool(jnp.isfinite(g).all()) for g in jax.tree.leaves(jax.grad(loss_fn)(params, batch))):
            return i
    return -1
"""

KEY_SEED_PLUS_RANK = """
def rank_key(seed, rank):
    return jax.random.key(seed + rank)
"""

KEY_SAME_FOR_ALL = """
def rank_key(seed, rank):
    return jax.random.key(seed)
"""

KEY_LEGACY = """
def rank_key(seed, rank):
    return jax.random.fold_in(jax.random.PRNGKey(seed), rank)
"""

TOP_BY_CALLS = """
def top_ops(events, n):
    calls = {}
    for e in events:
        if e.get("ph") == "X":
            calls[e["name"]] = calls.get(e["name"], 0) + 1
    return sorted(calls.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""

TOP_EVERY_EVENT = """
def top_ops(events, n):
    totals = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""

TOP_ASCENDING = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return sorted(totals.items(), key=lambda kv: kv[1])[:n]
"""

CE_GLOBAL_MAX = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max()  # one maximum for the whole batch (torch's .max() habit without dim)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

CE_NO_KEEPDIMS = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1)  # (batch, classes) - (batch,)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

FLOPS_FLOAT = """
def mlp_flops(widths, batch, training=False):
    forward = sum(2 * batch * a * b for a, b in pairwise(widths))
    if not training:
        return forward
    first = 2 * batch * widths[0] * widths[1]
    return forward * 3 - first / 1  # true division: a float
"""

NONFINITE_ISNAN = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if any(bool(jnp.isnan(g).any()) for g in leaves):  # misses infinities
            return i
    return -1
"""

NONFINITE_ANY = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if not all(bool(jnp.isfinite(g).any()) for g in leaves):  # any, not all
            return i
    return -1
"""

NONFINITE_NONE = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            return i
    return None  # not -1
"""

NONFINITE_LAST_LEAF = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        g = jax.tree.leaves(jax.grad(loss_fn)(params, batch))[-1]  # the last leaf only
        if not bool(jnp.isfinite(g).all()):
            return i
    return -1
"""

KEY_LINEAR_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 1000 + rank)  # seed 0's rank 1000 is seed 1's rank 0
"""

TOP_DUR_DEFAULT = """
def top_ops(events, n):
    totals = {}
    for e in events:
        totals[e["name"]] = totals.get(e["name"], 0.0) + float(e.get("dur", 0.0))
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""

TOP_MAX_NOT_TOTAL = """
def top_ops(events, n):
    longest = {}
    for e in events:
        if e.get("ph") == "X":
            longest[e["name"]] = max(longest.get(e["name"], 0.0), float(e["dur"]))
    return sorted(longest.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""

WRONG = {
    "bf16-cross-entropy": [
        ("computed in bfloat16", CE_IN_BF16, "runs in bfloat16"),
        (
            "the loss cast after the fact",
            CE_CAST_LOSS_AFTER,
            "afterwards does not bring them back",
        ),
        (
            "no max subtracted",
            CE_NO_MAX,
            "exp of a float32 above about 88.7 is infinity",
        ),
        (
            "one maximum for the whole batch",
            CE_GLOBAL_MAX,
            "shifted by one maximum over the whole array",
        ),
        ("the max without keepdims", CE_NO_KEEPDIMS, "dropped the axis it reduced"),
    ],
    "mlp-flops": [
        (
            "multiply-adds counted once",
            FLOPS_NO_TWO,
            "a multiply-add counts as 2 FLOPs",
        ),
        ("the data's gradient counted", FLOPS_BACKWARD_TWICE, "except the first"),
        ("weight gradients only", FLOPS_BACKWARD_ONCE, "one input-gradient matmul"),
        ("a float from true division", FLOPS_FLOAT, "as an int"),
    ],
    "first-nonfinite": [
        ("the loss checked", NONFINITE_LOSS, "not the loss"),
        ("only the first leaf", NONFINITE_FIRST_LEAF, "check every leaf"),
        ("counted from 1", NONFINITE_ONE_BASED, "count from 0"),
        ("isnan only (infinities missed)", NONFINITE_ISNAN, "jnp.isnan misses them"),
        ("any element finite, not all", NONFINITE_ANY, "all, not any"),
        ("None when every batch is finite", NONFINITE_NONE, "the answer is then -1"),
        ("only the last leaf", NONFINITE_LAST_LEAF, "check every leaf"),
    ],
    "rank-keys": [
        ("seed + rank", KEY_SEED_PLUS_RANK, "seed + rank collides"),
        ("one key for all ranks", KEY_SAME_FOR_ALL, "the ranks share a key"),
        ("a legacy uint32 key", KEY_LEGACY, "return a typed key"),
        ("seed * 1000 + rank", KEY_LINEAR_MIX, "collides once a rank reaches K"),
    ],
    "top-ops": [
        ("calls counted", TOP_BY_CALLS, "do not count calls"),
        ("metadata events read", TOP_EVERY_EVENT, "have no 'dur'"),
        (
            "events without a duration counted as 0",
            TOP_DUR_DEFAULT,
            "not metadata or instant",
        ),
        ("the longest call, not the total", TOP_MAX_NOT_TOTAL, "total duration"),
        ("smallest first", TOP_ASCENDING, "largest first"),
    ],
}

CE_SOFTMAX_OVER_THE_BATCH = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=0, keepdims=True)  # axis 0 is the batch, not the classes
    log_p = z - jnp.log(jnp.exp(z).sum(axis=0, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

CE_TORCH_KEYWORDS = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(dim=1, keepdim=True)  # PyTorch's keywords on a jax.Array
    log_p = z - jnp.log(jnp.exp(z).sum(dim=1, keepdim=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

CE_SUM_OVER_THE_BATCH = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).sum()  # the sum over the batch
"""

WRONG["bf16-cross-entropy"] += [
    (
        "the log-softmax over the batch axis",
        CE_SOFTMAX_OVER_THE_BATCH,
        "normalises over its classes",
    ),
    ("the sum over the batch, not the mean", CE_SUM_OVER_THE_BATCH, "not the sum"),
    (
        "PyTorch's dim=/keepdim= keywords",
        CE_TORCH_KEYWORDS,
        "jax.numpy takes axis= and keepdims=",
    ),
]

CE_LABELS_AS_COLUMNS = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -log_p[:, labels].mean()  # (batch, batch): every row at every label
"""

CE_SHIFT_IN_BF16 = """
def cross_entropy_f32(logits, labels):
    z = (logits - logits.max(axis=1, keepdims=True)).astype(jnp.float32)  # the shift in bfloat16
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

FLOPS_NO_FORWARD_IN_TRAINING = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    forward = sum(2 * batch * a * b for a, b in pairs)
    if not training:
        return forward
    return forward + sum(2 * batch * a * b for a, b in pairs[1:])  # the backward alone
"""

NONFINITE_ISFINITE_OF_THE_DICT = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        if not bool(jnp.isfinite(jax.grad(loss_fn)(params, batch)).all()):  # the whole pytree
            return i
    return -1
"""

KEY_SPLIT_IN_TWO = """
def rank_key(seed, rank):
    return jax.random.split(jax.random.key(seed))[rank]  # two keys: rank 2 and up read the last
"""

KEY_SPLIT_IN_EIGHT = """
def rank_key(seed, rank):
    return jax.random.split(jax.random.key(seed), 8)[rank]  # rank 8 and up read the last
"""

KEY_PLUS_RANK = """
def rank_key(seed, rank):
    return jax.random.key(seed) + rank  # arithmetic on a typed key
"""

TOP_NAMES_ONLY = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return sorted(totals, key=totals.get, reverse=True)[:n]  # names without their totals
"""

WRONG["bf16-cross-entropy"] += [
    ("every row at every label", CE_LABELS_AS_COLUMNS, "picks (batch, batch) entries"),
    (
        "the shift by the maximum in bfloat16",
        CE_SHIFT_IN_BF16,
        "the shift by the maximum too",
    ),
]
WRONG["mlp-flops"] += [
    (
        "training=True without the forward",
        FLOPS_NO_FORWARD_IN_TRAINING,
        "counts the forward as well",
    ),
]
WRONG["first-nonfinite"] += [
    (
        "jnp.isfinite of the whole gradient dict",
        NONFINITE_ISFINITE_OF_THE_DICT,
        "not one array",
    ),
]
WRONG["rank-keys"] += [
    ("a split into two keys", KEY_SPLIT_IN_TWO, "a split into fewer keys than ranks"),
    ("a split into eight keys", KEY_SPLIT_IN_EIGHT, "a split into K keys clamps"),
    ("a rank added to a key", KEY_PLUS_RANK, "typed keys take no arithmetic"),
]
WRONG["top-ops"] += [
    (
        "names without their totals",
        TOP_NAMES_ONLY,
        "return a list of (name, total_us) pairs",
    ),
]

CE_NO_MINUS = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()  # log p, not -log p
"""

CE_MEAN_OVER_CLASSES = """
def cross_entropy_f32(logits, labels):
    log_p = jax.nn.log_softmax(logits.astype(jnp.float32), axis=1)
    return -(jax.nn.one_hot(labels, log_p.shape[1]) * log_p).mean()  # divides by batch * classes
"""

NONFINITE_ISINF = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if any(bool(jnp.isinf(g).any()) for g in leaves):  # misses NaNs
            return i
    return -1
"""

KEY_MILLION_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 1_000_000 + rank)  # seed 0's rank 10**6 is seed 1's rank 0
"""

KEY_HIGH_BITS = """
def rank_key(seed, rank):
    return jax.random.key(seed * 2**32 + rank)  # the seed lands in bits the key drops
"""

WRONG["bf16-cross-entropy"] += [
    ("the minus sign lost", CE_NO_MINUS, "lost the minus sign"),
    (
        "a mean over classes too",
        CE_MEAN_OVER_CLASSES,
        "not a mean over every (row, class)",
    ),
]
WRONG["first-nonfinite"] += [
    ("isinf only (NaNs missed)", NONFINITE_ISINF, "which jnp.isinf misses"),
]
WRONG["rank-keys"] += [
    ("seed * 1_000_000 + rank", KEY_MILLION_MIX, "collides once a rank reaches K"),
    ("seed * 2**32 + rank", KEY_HIGH_BITS, "keeps only a seed's low"),
]

CE_NO_MEAN = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1)  # (batch, 1): no mean
"""

CE_SHIFT_ONE_SIDE = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    lse = jnp.log(jnp.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1))  # shifted, m not added back
    return (lse - jnp.take_along_axis(z, labels[:, None], axis=1)[:, 0]).mean()  # unshifted z
"""

NONFINITE_TREE_MAP_ALL = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        finite = jax.tree.map(jnp.isfinite, jax.grad(loss_fn)(params, batch))
        if not all(jax.tree.leaves(finite)):  # each leaf is a bool array, not one bool
            return i
    return -1
"""

TOP_UNSORTED = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return list(totals.items())[:n]  # in the order the names first appeared
"""

TOP_CUT_BEFORE_SORT = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + float(e["dur"])
    return sorted(list(totals.items())[:n], key=lambda kv: kv[1], reverse=True)  # cut, then sorted
"""

WRONG["bf16-cross-entropy"] += [
    ("per-example losses, no mean", CE_NO_MEAN, "still need their mean"),
    (
        "the label's logit unshifted",
        CE_SHIFT_ONE_SIDE,
        "the same shifted row as the log of the sum",
    ),
]
WRONG["first-nonfinite"] += [
    (
        "all() of bool arrays from tree.map",
        NONFINITE_TREE_MAP_ALL,
        "reduce each leaf to one bool",
    ),
]
WRONG["top-ops"] += [
    ("not sorted", TOP_UNSORTED, "first appear in the trace is not a ranking"),
    ("cut to n before sorting", TOP_CUT_BEFORE_SORT, "before taking the first n"),
]

CE_LOG_OF_SOFTMAX = """
def cross_entropy_f32(logits, labels):
    p = jax.nn.softmax(logits.astype(jnp.float32), axis=1)
    return -jnp.log(jnp.take_along_axis(p, labels[:, None], axis=1)).mean()  # log(0) = -inf
"""

CE_LOG_OF_SHIFTED_PROBABILITY = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    p = jnp.exp(z) / jnp.exp(z).sum(axis=1, keepdims=True)  # exp(-120) is 0 in float32
    return -jnp.log(jnp.take_along_axis(p, labels[:, None], axis=1)).mean()
"""

CE_TAKE_ALONG_1D_LABELS = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels, axis=1).mean()  # (batch,) index, 2-D array
"""

NONFINITE_LAST_FOUND = """
def first_nonfinite_step(loss_fn, params, batches):
    found = -1
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            found = i  # keeps going: the last such batch
    return found
"""

NONFINITE_RETURN_IN_LOOP = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            return i
        return -1  # indented one level too far: answers at batch 0
"""

WRONG["bf16-cross-entropy"] += [
    ("the log of the softmax", CE_LOG_OF_SOFTMAX, "the log of a softmax"),
    (
        "the log of a probability from shifted logits",
        CE_LOG_OF_SHIFTED_PROBABILITY,
        "or of any probability, fails there",
    ),
    (
        "take_along_axis given (batch,) labels",
        CE_TAKE_ALONG_1D_LABELS,
        "as torch.gather does",
    ),
]
WRONG["first-nonfinite"] += [
    ("the last such batch, not the first", NONFINITE_LAST_FOUND, "return the first"),
    (
        "return -1 inside the loop",
        NONFINITE_RETURN_IN_LOOP,
        "a return -1 inside the loop",
    ),
]

KEY_HUNDRED_THOUSAND_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 100_000 + rank)  # seed 0's rank 10**5 is seed 1's rank 0
"""

WRONG["rank-keys"] += [
    (
        "seed * 100_000 + rank",
        KEY_HUNDRED_THOUSAND_MIX,
        "collides once a rank reaches K",
    ),
]

CE_ONE_HOT_TEN = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -(jax.nn.one_hot(labels, 10) * log_p).sum(axis=1).mean()  # the digits' 10 classes
"""

NONFINITE_GRAD_OF_THE_BATCH = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn, argnums=1)(params, batch))  # the batch's gradient
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            return i
    return -1
"""

WRONG["bf16-cross-entropy"] += [
    ("the number of classes fixed at 10", CE_ONE_HOT_TEN, "fixed at 10")
]
WRONG["first-nonfinite"] += [
    (
        "the gradient of the batch, not of params",
        NONFINITE_GRAD_OF_THE_BATCH,
        "not to the batch",
    )
]
CE_TORCH_FLOAT = """
def cross_entropy_f32(logits, labels):
    z = logits.float()  # PyTorch's cast
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""
FLOPS_RELU_COUNTED = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    relus = sum(batch * b for _, b in pairs[:-1])  # one max per hidden unit
    forward = sum(2 * batch * a * b for a, b in pairs) + relus
    if not training:
        return forward
    return 3 * forward - 2 * batch * widths[0] * widths[1]
"""
NONFINITE_EVERY_LEAF = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(params, batch))
        if not any(bool(jnp.isfinite(g).all()) for g in leaves):  # every leaf non-finite
            return i
    return -1
"""
NONFINITE_ARGS_SWAPPED = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        leaves = jax.tree.leaves(jax.grad(loss_fn)(batch, params))  # (batch, params)
        if not all(bool(jnp.isfinite(g).all()) for g in leaves):
            return i
    return -1
"""
NONFINITE_LOSS_TOO = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        loss, grads = jax.value_and_grad(loss_fn)(params, batch)
        if not all(bool(jnp.isfinite(x).all()) for x in jax.tree.leaves((loss, grads))):
            return i  # a non-finite loss with a finite gradient counted too
    return -1
"""
KEY_TEN_MILLION_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 10**7 + rank)  # seed 2**25's keys are seed 0's
"""
KEY_TWO_TO_24_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 2**24 + rank)  # seed 2**8's keys are seed 0's
"""
KEY_FOLD_IN_MIX = """
def rank_key(seed, rank):
    return jax.random.fold_in(jax.random.key(0), seed * 10**7 + rank)  # past 32 bits
"""
TOP_IN_MS = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"] / 1000  # ms
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
WRONG["bf16-cross-entropy"] += [
    ("PyTorch's .float() cast", CE_TORCH_FLOAT, "PyTorch's casts"),
]
WRONG["mlp-flops"] += [
    ("the ReLUs counted", FLOPS_RELU_COUNTED, "the ReLUs between the layers are free"),
]
WRONG["first-nonfinite"] += [
    (
        "only when every leaf is non-finite",
        NONFINITE_EVERY_LEAF,
        "one leaf that is not finite is enough",
    ),
    (
        "loss_fn given (batch, params)",
        NONFINITE_ARGS_SWAPPED,
        "it takes (params, batch)",
    ),
    (
        "a non-finite loss counted",
        NONFINITE_LOSS_TOO,
        "a non-finite loss does not count",
    ),
]
WRONG["rank-keys"] += [
    ("seed * 10**7 + rank", KEY_TEN_MILLION_MIX, "seed 2**25 for K = 10**7"),
    ("seed * 2**24 + rank", KEY_TWO_TO_24_MIX, "2**8 for K = 2**24"),
    ("fold_in of seed * 10**7 + rank", KEY_FOLD_IN_MIX, "an OverflowError means"),
]
WRONG["top-ops"] += [
    ("totals in milliseconds", TOP_IN_MS, "the unit of 'dur'"),
]

CE_IN_FLOAT16 = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float16)  # 16 bits, not 32
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return (-jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()).astype(jnp.float32)
"""
CE_SHIFT_BY_THE_MEAN = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.mean(axis=1, keepdims=True)  # the mean, not the maximum
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""
CE_SHIFT_BY_THE_MIN = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.min(axis=1, keepdims=True)  # the minimum, not the maximum
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""
NONFINITE_SUM_OF_ENTRIES = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        grads = jax.grad(loss_fn)(params, batch)
        if not bool(jnp.isfinite(sum(jnp.sum(g) for g in jax.tree.leaves(grads)))):
            return i  # a finite gradient whose sum overflows counted too
    return -1
"""
WRONG["bf16-cross-entropy"] += [
    ("computed in float16", CE_IN_FLOAT16, "a cast to float16"),
    ("shifted by the row's mean", CE_SHIFT_BY_THE_MEAN, "shifted by a smaller value"),
    ("shifted by the row's minimum", CE_SHIFT_BY_THE_MIN, "shifted by a smaller value"),
]
WRONG["first-nonfinite"] += [
    (
        "the sum of the entries checked",
        NONFINITE_SUM_OF_ENTRIES,
        "not whether their sum is finite",
    ),
]

CE_TORCH_MAX_INDEX = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)[0]  # torch's max(dim=1, keepdim=True)[0]: row 0's maximum
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean()
"""

KEY_FOLD_IN_A_SEED = """
def rank_key(seed, rank):
    return jax.random.fold_in(seed, rank)  # an int where a key goes
"""

WRONG["bf16-cross-entropy"] += [
    ("torch's max(...)[0] on a jax array", CE_TORCH_MAX_INDEX, "keeps row 0's maximum"),
]
WRONG["rank-keys"] += [
    ("fold_in given the seed, not a key", KEY_FOLD_IN_A_SEED, "take a key, not a seed"),
]

KEY_ODD_MILLION_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * 1_000_003 + rank)  # seed 0's rank 1_000_003 is seed 1's rank 0
"""
KEY_TWO_TO_20_PLUS_ONE_MIX = """
def rank_key(seed, rank):
    return jax.random.key(seed * (2**20 + 1) + rank)  # past the ranks the other checks try
"""
WRONG["rank-keys"] += [
    ("seed * 1_000_003 + rank", KEY_ODD_MILLION_MIX, "any such number collides"),
    (
        "seed * (2**20 + 1) + rank",
        KEY_TWO_TO_20_PLUS_ONE_MIX,
        "any such number collides",
    ),
]
FLOPS_LAST_INPUT_GRAD_ONLY = """
def mlp_flops(widths, batch, training=False):
    pairs = list(zip(widths[:-1], widths[1:]))
    forward = sum(2 * batch * a * b for a, b in pairs)
    if not training:
        return forward
    a, b = pairs[-1]
    return 2 * forward + 2 * batch * a * b  # the last layer's input gradient alone
"""
WRONG["mlp-flops"] += [
    (
        "the input gradient of the last layer only",
        FLOPS_LAST_INPUT_GRAD_ONLY,
        "not the last layer's alone",
    ),
]

# Slips a PyTorch user makes in these exercises, each caught by a visible check whose hint
# names it first.
CE_PYTHON_FLOAT = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return float(-jnp.take_along_axis(log_p, labels[:, None], axis=1).mean())  # a Python float
"""
CE_ITEM = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -jnp.take_along_axis(log_p, labels[:, None], axis=1).mean().item()  # PyTorch's .item()
"""
CE_NUMPY = """
def cross_entropy_f32(logits, labels):
    z = np.asarray(logits, np.float32)  # NumPy: right on arrays, impossible under jax.jit
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.take_along_axis(log_p, np.asarray(labels)[:, None], axis=1).mean()
"""
CE_ONE_HOT_OVER_THE_BATCH = """
def cross_entropy_f32(logits, labels):
    z = logits.astype(jnp.float32)
    z = z - z.max(axis=1, keepdims=True)
    log_p = z - jnp.log(jnp.exp(z).sum(axis=1, keepdims=True))
    return -(jax.nn.one_hot(labels, log_p.shape[1]) * log_p).sum(axis=0).mean()  # axis 0: the batch
"""
FLOPS_NO_BATCH = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    forward = sum(2 * a * b for a, b in pairs)  # one example, not the batch
    if not training:
        return forward
    return 2 * forward + sum(2 * a * b for a, b in pairs[1:])
"""
FLOPS_BIAS_COUNTED = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    forward = sum(2 * batch * a * b + batch * b for a, b in pairs)  # a bias add the MLP does not have
    if not training:
        return forward
    return 2 * forward + sum(2 * batch * a * b for a, b in pairs[1:])
"""
FLOPS_INPUT_GRADS_BUT_THE_LAST = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    forward = sum(2 * batch * a * b for a, b in pairs)
    if not training:
        return forward
    return 2 * forward + sum(2 * batch * a * b for a, b in pairs[:-1])  # every layer's but the last
"""
FLOPS_FLOAT_FACTOR = """
def mlp_flops(widths, batch, training=False):
    pairs = list(pairwise(widths))
    forward = sum(2.0 * batch * a * b for a, b in pairs)  # 2.0: a float
    if not training:
        return forward
    return 2 * forward + sum(2.0 * batch * a * b for a, b in pairs[1:])
"""
NONFINITE_TORCH_ISFINITE = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        grads = jax.grad(loss_fn)(params, batch)
        if not all(bool(torch.isfinite(g).all()) for g in jax.tree.leaves(grads)):  # torch on a JAX array
            return i
    return -1
"""
NONFINITE_BACKWARD = """
def first_nonfinite_step(loss_fn, params, batches):
    for i, batch in enumerate(batches):
        loss = loss_fn(params, batch)
        loss.backward()  # PyTorch's habit
        if not all(bool(jnp.isfinite(g).all()) for g in jax.tree.leaves(params)):
            return i
    return -1
"""
KEY_DIGITS = """
def rank_key(seed, rank):
    return jax.random.key(int(f"{seed}{rank}"))  # seed 1's rank 0 is seed 0's rank 10
"""
KEY_XOR = """
def rank_key(seed, rank):
    return jax.random.key(seed ^ rank)  # symmetric: seed 0's rank 1 is seed 1's rank 0
"""
KEY_TIMES = """
def rank_key(seed, rank):
    return jax.random.key(seed * rank)  # every rank of seed 0 is key(0)
"""
_TOP_TOTALS = """
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
"""
TOP_INT_DURATIONS = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0) + int(e["dur"])  # fractions dropped
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
TOP_ROUNDED_DURATIONS = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0) + round(e["dur"])  # fractions rounded away
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
TOP_BY_LONGEST_EVENT = """
def top_ops(events, n):
    complete = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["dur"], reverse=True)
    totals, order = {}, []
    for e in complete:  # names in the order of their longest event
        if e["name"] not in totals:
            order.append(e["name"])
        totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
    return [(name, totals[name]) for name in order[:n]]
"""
TOP_SORTED_IN_PLACE = (
    """
def top_ops(events, n):
    events.sort(key=lambda e: e.get("dur", 0.0), reverse=True)  # the caller's list, reordered
"""
    + _TOP_TOTALS
    + """
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
)
TOP_LAST_N_OF_ASCENDING = (
    "\ndef top_ops(events, n):"
    + _TOP_TOTALS
    + """
    return sorted(totals.items(), key=lambda kv: kv[1])[-n:][::-1]  # n = 0: the whole list
"""
)
TOP_SORTED_BY_NAME = (
    "\ndef top_ops(events, n):"
    + _TOP_TOTALS
    + """
    return sorted(totals.items(), reverse=True)[:n]  # the pairs compare by name first
"""
)
TOP_HEAPQ_WITHOUT_KEY = (
    "\nimport heapq\n\n\ndef top_ops(events, n):"
    + _TOP_TOTALS
    + """
    return heapq.nlargest(n, totals.items())  # no key: the largest names
"""
)
TOP_LAST_DURATION = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = e["dur"]  # the last event's, not the sum
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
TOP_MEAN_PER_CALL = """
def top_ops(events, n):
    totals, calls = {}, {}
    for e in events:
        if e.get("ph") == "X":
            totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
            calls[e["name"]] = calls.get(e["name"], 0) + 1
    return sorted(((k, totals[k] / calls[k]) for k in totals), key=lambda kv: kv[1], reverse=True)[:n]
"""
TOP_A_DICT = (
    "\ndef top_ops(events, n):"
    + _TOP_TOTALS
    + """
    return dict(sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n])  # a dict, not pairs
"""
)
TOP_NOT_METADATA = """
def top_ops(events, n):
    totals = {}
    for e in events:
        if e["ph"] != "M":  # instant events pass too
            totals[e["name"]] = totals.get(e["name"], 0.0) + e["dur"]
    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]
"""
WRONG["bf16-cross-entropy"] += [
    (
        "a Python float returned",
        CE_PYTHON_FLOAT,
        "float() or .item() makes a Python float",
    ),
    ("PyTorch's .item()", CE_ITEM, "float() or .item() makes a Python float"),
    ("NumPy instead of jax.numpy", CE_NUMPY, "NumPy (np.exp, np.asarray)"),
    (
        "a one-hot product summed over the batch",
        CE_ONE_HOT_OVER_THE_BATCH,
        "a sum over axis 0",
    ),
]
WRONG["mlp-flops"] += [
    ("the batch left out", FLOPS_NO_BATCH, "the batch multiplies the count"),
    ("a bias add counted", FLOPS_BIAS_COUNTED, "only the matmuls count"),
    (
        "input gradients of every layer but the last",
        FLOPS_INPUT_GRADS_BUT_THE_LAST,
        "except the first",
    ),
    ("a float from a factor 2.0", FLOPS_FLOAT_FACTOR, "as an int"),
]
WRONG["first-nonfinite"] += [
    ("torch.isfinite on a JAX gradient", NONFINITE_TORCH_ISFINITE, "jnp.isfinite"),
    ("loss.backward()", NONFINITE_BACKWARD, "has no .backward()"),
]
WRONG["rank-keys"] += [
    (
        "the digits of seed and rank joined",
        KEY_DIGITS,
        "collides once a rank reaches K",
    ),
    ("seed xor rank", KEY_XOR, "a sum or an xor"),
    ("seed times rank", KEY_TIMES, "the ranks share a key"),
]
WRONG["top-ops"] += [
    ("durations cut to whole microseconds", TOP_INT_DURATIONS, "int() or round()"),
    ("durations rounded", TOP_ROUNDED_DURATIONS, "int() or round()"),
    ("ranked by the longest event", TOP_BY_LONGEST_EVENT, "not by its longest event"),
    (
        "the caller's events sorted in place",
        TOP_SORTED_IN_PLACE,
        "changed the events it was given",
    ),
    (
        "the last n of an ascending sort",
        TOP_LAST_N_OF_ASCENDING,
        "a slice [-n:] is the whole list",
    ),
    (
        "sorted by name",
        TOP_SORTED_BY_NAME,
        "compare the (name, total) pairs by their names",
    ),
    (
        "heapq.nlargest without a key",
        TOP_HEAPQ_WITHOUT_KEY,
        "compare the (name, total) pairs by their names",
    ),
    (
        "the last event's duration",
        TOP_LAST_DURATION,
        "an assignment keeps the last event's alone",
    ),
    ("the mean per call", TOP_MEAN_PER_CALL, "not the mean per call"),
    ("a dict returned", TOP_A_DICT, "return a list of (name, total_us) pairs"),
    ("every event but metadata", TOP_NOT_METADATA, "have no 'dur'"),
]
