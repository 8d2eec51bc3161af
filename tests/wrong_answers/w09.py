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

WRONG = {
    "bf16-cross-entropy": [
        ("computed in bfloat16", CE_IN_BF16, "cast the logits to float32"),
        ("the loss cast after the fact", CE_CAST_LOSS_AFTER, "not the loss after it"),
        ("no max subtracted", CE_NO_MAX, "subtract each row's maximum"),
    ],
    "mlp-flops": [
        (
            "multiply-adds counted once",
            FLOPS_NO_TWO,
            "a multiply-add counts as 2 FLOPs",
        ),
        ("the data's gradient counted", FLOPS_BACKWARD_TWICE, "except the first"),
        ("weight gradients only", FLOPS_BACKWARD_ONCE, "one input-gradient matmul"),
    ],
    "first-nonfinite": [
        ("the loss checked", NONFINITE_LOSS, "not the loss"),
        ("only the first leaf", NONFINITE_FIRST_LEAF, "check every leaf"),
        ("counted from 1", NONFINITE_ONE_BASED, "count from 0"),
    ],
    "rank-keys": [
        ("seed + rank", KEY_SEED_PLUS_RANK, "seed + rank collides"),
        ("one key for all ranks", KEY_SAME_FOR_ALL, "the ranks share a key"),
        ("a legacy uint32 key", KEY_LEGACY, "return a typed key"),
    ],
    "top-ops": [
        ("calls counted", TOP_BY_CALLS, "do not count calls"),
        ("metadata events read", TOP_EVERY_EVENT, "skip events without a duration"),
        ("smallest first", TOP_ASCENDING, "largest first"),
    ],
}
