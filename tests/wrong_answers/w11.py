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

KV_TORCH_OK = """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1]
"""

KV_JAX_OK = """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""

KV_TORCH_NEW_TENSOR = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache = torch.cat([k_cache[:, :, :pos], k], dim=2)  # a new tensor: the caller's cache stays zeros
    v_cache = torch.cat([v_cache[:, :, :pos], v], dim=2)
    scores = q @ k_cache.transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v_cache
"""
)

KV_TORCH_SLICE_TO_POS = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, :pos].transpose(-2, -1) / q.shape[-1] ** 0.5  # pos itself left out
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, :pos]
"""
)

KV_TORCH_WHOLE_CACHE = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache.transpose(-2, -1) / q.shape[-1] ** 0.5  # the empty slots too
    return torch.softmax(scores, dim=-1) @ v_cache
"""
)

KV_TORCH_SQUEEZED = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos] = k  # (B, H, 1, hd) into a (B, H, hd) slot
    v_cache[:, :, pos] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1]
"""
)

KV_BODY = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, {at}, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, {at}, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    {mask}
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

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

KV_MASK_BELOW_POS = KV_BODY.format(at="pos", mask=MASK_OK.replace("<= pos", "< pos"))

KV_AT_SET_SQUEEZED = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = k_cache.at[:, :, pos].set(k)  # (B, H, 1, hd) into a (B, H, hd) slot
    v_cache = v_cache.at[:, :, pos].set(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

KV_SLICE_TO_POS = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    keys, values = k_cache[:, :, : pos + 1], v_cache[:, :, : pos + 1]  # PyTorch's cache[:, :, :pos + 1]
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, keys) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(scores, axis=-1) @ values, k_cache, v_cache
"""
)

KV_TORCH_UNSCALED = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1)  # no 1/sqrt(head_dim)
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1]
"""
)

KV_UNSCALED = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache)  # no 1/sqrt(head_dim)
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

MASK_TORCH_FLOAT = """
def causal_mask_torch(T):
    return torch.tril(torch.ones(T, T))  # 1.0 / 0.0: the float mask an additive-mask habit makes


def causal_mask_jax(T):
    return jnp.arange(T)[None, :] <= jnp.arange(T)[:, None]
"""

ATTN_PROJ_UNTRANSPOSED = """
def attention_torch_to_nnx(sd):
    return {"qkv": {"kernel": sd["qkv.weight"].T, "bias": sd["qkv.bias"]},
            "proj": {"kernel": sd["proj.weight"], "bias": sd["proj.bias"]}}  # square: the shape fits as it is
"""

KV_TORCH_SCALED_BY_HEAD_SIZE = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1]  # the head size, not its root
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1]
"""
)

KV_SCALED_BY_HEAD_SIZE = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / q.shape[-1]  # the head size, not its root
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

KV_AT_TRACED_SLICE = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = k_cache.at[:, :, pos : pos + 1].set(k)  # PyTorch's slice, with a traced pos
    v_cache = v_cache.at[:, :, pos : pos + 1].set(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

KV_JAX_AT_DISCARDED = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache.at[:, :, pos].set(k[:, :, 0])  # as in PyTorch: written in place?
    v_cache.at[:, :, pos].set(v[:, :, 0])
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

KV_JAX_OLD_CACHE_RETURNED = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_new = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_new = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_new) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_new.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_new, k_cache, v_cache
"""
)

MASK_INVERTED = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).triu(1)  # as for masked_fill / nn.MultiheadAttention


def causal_mask_jax(T):
    return jnp.arange(T)[None, :] <= jnp.arange(T)[:, None]
"""

ATTN_KEY_WEIGHT = """
def attention_torch_to_nnx(sd):
    return {name: {"weight": sd[f"{name}.weight"].T, "bias": sd[f"{name}.bias"]} for name in ("qkv", "proj")}
"""

KV_SCALED_BY_CACHE_LENGTH = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(k_cache.shape[-2])  # axis 2, not 3
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

KV_TORCH_SOFTMAX_QUERY_AXIS = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=2) @ v_cache[:, :, : pos + 1]  # (B, H, T, S): dim 2 is the queries
"""
)

KV_JAX_SOFTMAX_QUERY_AXIS = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-2) @ v_cache, k_cache, v_cache
"""
)

KV_TORCH_RETURNS_CACHES = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):  # the JAX step's signature, mirrored
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v_cache[:, :, : pos + 1], k_cache, v_cache
"""
)

KV_TORCH_SDPA_IS_CAUSAL = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    return torch.nn.functional.scaled_dot_product_attention(
        q, k_cache[:, :, : pos + 1], v_cache[:, :, : pos + 1], is_causal=True
    )
"""
)

KV_JAX_NEW_KEY_ONLY = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    return jax.nn.softmax(scores, axis=-1) @ v, k_cache, v_cache
"""
)

KV_JAX_SDPA_TORCH_LAYOUT = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, v, (0, 0, pos, 0))
    mask = (jnp.arange(k_cache.shape[2]) <= pos)[None, None, None, :]
    # PyTorch's (B, H, T, hd) handed to jax.nn, which reads (B, T, H, hd)
    return jax.nn.dot_product_attention(q, k_cache, v_cache, mask=mask), k_cache, v_cache
"""
)

MASK_TORCH_BUFFER_VIEW = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).tril().view(1, 1, T, T)  # nanoGPT's bias buffer


def causal_mask_jax(T):
    return jnp.arange(T)[None, :] <= jnp.arange(T)[:, None]
"""

KV_TORCH_NEW_V_ONLY = (
    KV_JAX_OK
    + """
def decode_step_torch(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k
    v_cache[:, :, pos : pos + 1] = v
    scores = q @ k_cache[:, :, : pos + 1].transpose(-2, -1) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ v  # the new value, not the cached ones
"""
)

KV_JAX_KEYS_AS_VALUES = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache = jax.lax.dynamic_update_slice(k_cache, k, (0, 0, pos, 0))
    v_cache = jax.lax.dynamic_update_slice(v_cache, k, (0, 0, pos, 0))  # the line above copied: k again
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

MASK_TORCH_OK = """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.bool).tril()
"""
MASK_JAX_OK = """
def causal_mask_jax(T):
    return jnp.arange(T)[None, :] <= jnp.arange(T)[:, None]
"""
MASK_JAX_NUMPY = (
    MASK_TORCH_OK
    + """
def causal_mask_jax(T):
    return np.tril(np.ones((T, T), dtype=bool))  # NumPy's tril, not jax.numpy's
"""
)
MASK_JAX_AT_DROPPED = (
    MASK_TORCH_OK
    + """
def causal_mask_jax(T):
    mask = jnp.zeros((T, T), dtype=bool)
    for t in range(T):
        mask.at[t, : t + 1].set(True)  # as if in place: the new array is dropped
    return mask
"""
)
MASK_JAX_ITEM_ASSIGN = (
    MASK_TORCH_OK
    + """
def causal_mask_jax(T):
    mask = jnp.zeros((T, T), dtype=bool)
    for t in range(T):
        mask[t, : t + 1] = True  # PyTorch's in-place write
    return mask
"""
)
MASK_JAX_TRIL_DROPPED = (
    MASK_TORCH_OK
    + """
def causal_mask_jax(T):
    mask = jnp.ones((T, T), dtype=bool)
    jnp.tril(mask)  # returns a new array, dropped
    return mask
"""
)
MASK_TORCH_TRIL_DROPPED = (
    MASK_JAX_OK
    + """
def causal_mask_torch(T):
    mask = torch.ones(T, T, dtype=torch.bool)
    mask.tril()  # tril_ works in place; tril returns a new tensor, dropped
    return mask
"""
)
MASK_TORCH_UINT8 = (
    MASK_JAX_OK
    + """
def causal_mask_torch(T):
    return torch.ones(T, T, dtype=torch.uint8).tril()  # the old byte masks of masked_fill
"""
)
MASK_JAX_UPPER = (
    MASK_TORCH_OK
    + """
def causal_mask_jax(T):
    return jnp.arange(T)[:, None] <= jnp.arange(T)[None, :]  # rows and columns swapped
"""
)
ATTN_FLAT_NAMES = """
def attention_torch_to_nnx(sd):
    out = {f"{name}.kernel": sd[f"{name}.weight"].T for name in ("qkv", "proj")}
    return out | {f"{name}.bias": sd[f"{name}.bias"] for name in ("qkv", "proj")}  # dotted, as a state dict
"""
ATTN_NO_BIAS = """
def attention_torch_to_nnx(sd):
    return {name: {"kernel": sd[f"{name}.weight"].T} for name in ("qkv", "proj")}  # the biases left behind
"""
KV_JAX_ITEM_ASSIGN = (
    KV_TORCH_OK
    + """
def decode_step(q, k, v, k_cache, v_cache, pos):
    k_cache[:, :, pos : pos + 1] = k  # PyTorch's in-place write
    v_cache[:, :, pos : pos + 1] = v
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k_cache) / jnp.sqrt(q.shape[-1])
    scores = jnp.where(jnp.arange(k_cache.shape[2]) <= pos, scores, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1) @ v_cache, k_cache, v_cache
"""
)

WRONG = {
    "causal-mask": [
        (
            "PyTorch: nanoGPT's (1, 1, T, T) buffer",
            MASK_TORCH_BUFFER_VIEW,
            "nanoGPT registers its bias buffer",
        ),
        (
            "the diagonal left out (off by one)",
            MASK_NO_DIAGONAL,
            "hides each query's own position",
        ),
        ("the upper triangle (transposed)", MASK_TRANSPOSED, "rows are queries"),
        ("a float mask", MASK_FLOAT, "must be boolean"),
        (
            "PyTorch: the inverted mask, True where hidden (as for masked_fill)",
            MASK_INVERTED,
            "marks the hidden keys",
        ),
        (
            "PyTorch: a float tril, as for an additive mask",
            MASK_TORCH_FLOAT,
            "must be boolean",
        ),
        ("JAX: a NumPy mask", MASK_JAX_NUMPY, "returned a NumPy array"),
        (
            "JAX: .at[...].set called as if in place, its result dropped",
            MASK_JAX_AT_DROPPED,
            "returns a new array and leaves its input",
        ),
        (
            "JAX: mask[t, :t + 1] = True, PyTorch's item assignment",
            MASK_JAX_ITEM_ASSIGN,
            "JAX arrays are immutable",
        ),
        (
            "JAX: jnp.tril's result dropped",
            MASK_JAX_TRIL_DROPPED,
            "jnp.tril returns a new array",
        ),
        (
            "PyTorch: tril's result dropped (tril_ is the in-place one)",
            MASK_TORCH_TRIL_DROPPED,
            "tril() returns a new tensor",
        ),
        ("PyTorch: a uint8 mask", MASK_TORCH_UINT8, "must be boolean"),
        ("JAX: rows and columns swapped", MASK_JAX_UPPER, "JAX: rows are queries"),
    ],
    "attention-converter": [
        (
            "PyTorch's dotted names kept",
            ATTN_FLAT_NAMES,
            "not keyed by PyTorch's dotted",
        ),
        ("the biases left behind", ATTN_NO_BIAS, "a layer without its bias"),
        ("weights not transposed", ATTN_NOT_TRANSPOSED, "change of layout"),
        (
            "PyTorch's name weight kept for the kernel",
            ATTN_KEY_WEIGHT,
            "PyTorch's weight is NNX's kernel",
        ),
        ("reshape instead of transpose", ATTN_RESHAPED, "change of layout"),
        (
            "q, k, v side by side untransposed",
            ATTN_QKV_SPLIT_TRANSPOSED,
            "change of layout",
        ),
        (
            "proj left untransposed (a square weight)",
            ATTN_PROJ_UNTRANSPOSED,
            "change of layout",
        ),
    ],
    "kv-cache-step": [
        (
            "JAX: k_cache[:, :, pos:pos + 1] = k, PyTorch's in-place write",
            KV_JAX_ITEM_ASSIGN,
            "JAX arrays are immutable",
        ),
        (
            "PyTorch: the weights multiply the new v alone",
            KV_TORCH_NEW_V_ONLY,
            "not the new v alone",
        ),
        (
            "JAX: k written into v_cache too (a copied line)",
            KV_JAX_KEYS_AS_VALUES,
            "still writes k",
        ),
        (
            "PyTorch: the cache rebuilt, not written in place",
            KV_TORCH_NEW_TENSOR,
            "not the cache that was passed in",
        ),
        (
            "PyTorch: the slice stops before pos",
            KV_TORCH_SLICE_TO_POS,
            "pos itself is left out",
        ),
        (
            "JAX: the mask keeps the positions below pos (all keys hidden at pos 0)",
            KV_MASK_BELOW_POS,
            "leaves pos itself out",
        ),
        (
            "PyTorch: the whole cache attended",
            KV_TORCH_WHOLE_CACHE,
            "still-empty slots after pos",
        ),
        (
            "PyTorch: k written as cache[:, :, pos]",
            KV_TORCH_SQUEEZED,
            "one position long",
        ),
        (
            "PyTorch: the scores not scaled",
            KV_TORCH_UNSCALED,
            "unscaled scores",
        ),
        ("the scores not scaled", KV_UNSCALED, "unscaled scores"),
        (
            "PyTorch: the scores divided by the head size",
            KV_TORCH_SCALED_BY_HEAD_SIZE,
            "divided by the whole head size",
        ),
        (
            "the scores divided by the head size",
            KV_SCALED_BY_HEAD_SIZE,
            "divided by the whole head size",
        ),
        (
            "PyTorch: out and the caches returned, as the JAX step does",
            KV_TORCH_RETURNS_CACHES,
            "return out alone",
        ),
        (
            "PyTorch: the softmax over dim 2, the queries",
            KV_TORCH_SOFTMAX_QUERY_AXIS,
            "the softmax ran over the query axis",
        ),
        (
            "the softmax over axis -2, the queries",
            KV_JAX_SOFTMAX_QUERY_AXIS,
            "the softmax ran over the query axis",
        ),
        (
            "the scores divided by the square root of the cache's length",
            KV_SCALED_BY_CACHE_LENGTH,
            "another scale",
        ),
        (
            "PyTorch: F.scaled_dot_product_attention with is_causal=True on one query",
            KV_TORCH_SDPA_IS_CAUSAL,
            "top-left corner",
        ),
        (
            "the new key alone attended, not the cache",
            KV_JAX_NEW_KEY_ONLY,
            "gives its own value back",
        ),
        ("cache written at pos + 1", KV_WRONG_POSITION, "one slot off"),
        ("no mask over the empty slots", KV_NO_MASK, "still-empty slots after pos"),
        ("pos itself masked out", KV_OFF_BY_ONE, "pos itself is left out"),
        (
            ".at[...].set called as if in place, its result dropped",
            KV_JAX_AT_DISCARDED,
            "return a new array",
        ),
        (
            "the updated caches attended, the old ones returned",
            KV_JAX_OLD_CACHE_RETURNED,
            "still all zeros",
        ),
        (
            "k written with .at[:, :, pos] (its axis of 1 kept)",
            KV_AT_SET_SQUEEZED,
            "one position long",
        ),
        (
            "the cache sliced to a traced pos",
            KV_SLICE_TO_POS,
            "a slice cannot start or end at it",
        ),
        (
            "k written with .at[:, :, pos:pos + 1] (a traced slice)",
            KV_AT_TRACED_SLICE,
            "a slice cannot start or end at it",
        ),
        (
            "jax.nn.dot_product_attention given PyTorch's (B, H, T, hd) layout",
            KV_JAX_SDPA_TORCH_LAYOUT,
            "(batch, seq, heads, head_dim)",
        ),
    ],
}
