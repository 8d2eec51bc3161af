"""Wrong answers to solutions/11_capstone_gpt_exercises.py."""

MASK_NO_DIAGONAL = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).tril(-1)  # a position may not see itself


def causal_mask_jax(T):
    return jnp.arange(T)[None, :] < jnp.arange(T)[:, None]
"""

MASK_TRANSPOSED = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).triu()  # the upper triangle: queries see the future


def causal_mask_jax(T):
    return jnp.arange(T)[None, :] >= jnp.arange(T)[:, None]
"""

MASK_FLOAT = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).tril()


def causal_mask_jax(T):
    return jnp.tril(jnp.ones((T, T)))  # 1.0 / 0.0, not True / False
"""

ATTN_NOT_TRANSPOSED = """
def attention_torch_to_nnx(sd):
    return {name: {"kernel": sd[f"{name}.weight"], "bias": sd[f"{name}.bias"]} for name in ("qkv", "proj")}
"""

ATTN_RESHAPED = """
def attention_torch_to_nnx(sd):
    out = {}
    for name in ("qkv", "proj"):
        w = sd[f"{name}.weight"]
        out[name] = {"kernel": w.reshape(w.shape[1], w.shape[0]), "bias": sd[f"{name}.bias"]}
    return out
"""

ATTN_QKV_SPLIT_TRANSPOSED = """
def attention_torch_to_nnx(sd):
    q, k, v = np.split(sd["qkv.weight"], 3, axis=0)
    return {"qkv": {"kernel": np.concatenate([q, k, v], axis=1), "bias": sd["qkv.bias"]},  # (C, 3C) but q, k, v untransposed
            "proj": {"kernel": sd["proj.weight"].T, "bias": sd["proj.bias"]}}
"""

KV_BODY = """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, {at}, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, {at}, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    {mask}
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
MASK_OK = "scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)"
KV_WRONG_POSITION = KV_BODY.format(
    at="pos + 1", mask=MASK_OK.replace("<= pos", "<= pos + 1")
)
KV_NO_MASK = KV_BODY.format(
    at="pos", mask="pass  # the empty slots are zeros: harmless?"
)
KV_OFF_BY_ONE = KV_BODY.format(
    at="pos", mask=MASK_OK.replace("<= pos", "< pos + (pos == 0)")
)

DP_SUM_OF_SHARDS = """
def data_parallel(loss_fn, mesh):
    def per_shard(params, x, y):
        return jax.lax.psum(loss_fn(params, x, y), "data")  # each shard's mean, summed

    return jax.jit(jax.shard_map(per_shard, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()))
"""

DP_NO_SHARDING = """
def data_parallel(loss_fn, mesh):
    return jax.jit(loss_fn)  # right loss, but one device does all the work
"""

DP_PARAMS_SPLIT_BATCH_REPLICATED = """
def data_parallel(loss_fn, mesh):
    replicated = NamedSharding(mesh, P())
    return jax.jit(loss_fn, in_shardings=(replicated, replicated, replicated), out_shardings=replicated)
"""

RESUME_BODY = """
def resume(path, params_like, opt_state_like):
    target = gpt.checkpoint.abstract_like({{"params": params_like, "opt_state": opt_state_like,
                                           "step": jnp.zeros((), jnp.int32)}})
    saved = gpt.checkpoint.orbax_load(path, target)
    return {ret}
"""
RESUME_FRESH_OPTIMIZER = RESUME_BODY.format(
    ret='saved["params"], tx.init(saved["params"]), int(saved["step"])'
)
RESUME_DATA_RESTARTED = RESUME_BODY.format(ret='saved["params"], saved["opt_state"], 0')
RESUME_PARAMS_NOT_RESTORED = RESUME_BODY.format(
    ret='params_like, saved["opt_state"], int(saved["step"])'
)

KV_AT_SET_SQUEEZED = """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = k_cache.at[:, :, pos].set(k)  # (B, H, 1, hd) into a (B, H, hd) slot
    v_cache = v_cache.at[:, :, pos].set(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""

KV_SLICE_TO_POS = """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    keys, values = k_cache[:, :, : pos + 1], v_cache[:, :, : pos + 1]  # PyTorch's cache[:, :, :pos + 1]
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, keys) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(scores, axis=-1) @ values, k_cache, v_cache
"""

DP_Y_UNSPLIT = """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, replicated), out_shardings=replicated)
"""

DP_PARAMS_SPLIT_TOO = """
def data_parallel(loss_fn, mesh):
    by_rows = NamedSharding(mesh, P("data"))  # the parameters split too
    return jax.jit(loss_fn, in_shardings=(by_rows, by_rows, by_rows), out_shardings=NamedSharding(mesh, P()))
"""

WRONG = {
    "causal-mask": [
        ("the diagonal left out (off by one)", MASK_NO_DIAGONAL, "diagonal included"),
        ("the upper triangle (transposed)", MASK_TRANSPOSED, "keep the lower triangle"),
        ("a float mask", MASK_FLOAT, "must be boolean"),
    ],
    "attention-converter": [
        ("weights not transposed", ATTN_NOT_TRANSPOSED, "transpose each weight"),
        ("reshape instead of transpose", ATTN_RESHAPED, "transpose each weight"),
        (
            "q, k, v side by side untransposed",
            ATTN_QKV_SPLIT_TRANSPOSED,
            "transpose each weight",
        ),
    ],
    "kv-cache-step": [
        ("cache written at pos + 1", KV_WRONG_POSITION, "at index pos"),
        ("no mask over the empty slots", KV_NO_MASK, "positions 0..pos only"),
        ("pos itself masked out", KV_OFF_BY_ONE, "positions 0..pos only"),
        (
            "k written with .at[:, :, pos] (its axis of 1 kept)",
            KV_AT_SET_SQUEEZED,
            "a slot of length 1",
        ),
        (
            "the cache sliced to a traced pos",
            KV_SLICE_TO_POS,
            "a slice cannot end at it",
        ),
    ],
    "dp-loss": [
        ("sum of the shards' means", DP_SUM_OF_SHARDS, "not their sum"),
        ("no shardings at all", DP_NO_SHARDING, "shard the batch"),
        ("the batch replicated", DP_PARAMS_SPLIT_BATCH_REPLICATED, "shard the batch"),
        ("y left unsplit", DP_Y_UNSPLIT, "y is split like x"),
        (
            "the parameters split over 'data' too",
            DP_PARAMS_SPLIT_TOO,
            "a full copy of the parameters",
        ),
    ],
    "resume": [
        (
            "a fresh optimizer state",
            RESUME_FRESH_OPTIMIZER,
            "restore the optimizer state too",
        ),
        (
            "the data restarted from batch 0",
            RESUME_DATA_RESTARTED,
            "continue from the saved step",
        ),
        (
            "the fresh model's parameters",
            RESUME_PARAMS_NOT_RESTORED,
            "restore the parameters",
        ),
    ],
}
