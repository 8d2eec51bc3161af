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

DP_TORCH_OK = """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
"""
DP_JAX_OK = """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
"""
DP_TORCH_SUMMED = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) for name in per_rank[0]}  # summed, not averaged
"""
)
DP_TORCH_NO_ZERO_GRAD = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.loss(x_rank, y_rank).backward()  # adds to the previous rank's .grad
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
"""
)
DP_TORCH_Y_UNSPLIT = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank in x.chunk(world):
        model.zero_grad()
        model.loss(x_rank, y).backward()  # every rank given all of y
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
"""
)

DP_SUM_OF_SHARDS = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    def per_shard(params, x, y):
        return jax.lax.psum(loss_fn(params, x, y), "data")  # each shard's mean, summed

    return jax.jit(jax.shard_map(per_shard, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=P()))
"""
)

DP_NO_SHARDING = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    return jax.jit(loss_fn)  # right loss, but one device does all the work
"""
)

DP_PARAMS_SPLIT_BATCH_REPLICATED = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated = NamedSharding(mesh, P())
    return jax.jit(loss_fn, in_shardings=(replicated, replicated, replicated), out_shardings=replicated)
"""
)

RESUME_TORCH_OK = """
def resume_torch(path, model, optimizer):
    msd, osd = get_state_dict(model, optimizer)
    state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["step"])
"""
RESUME_JAX_OK = """
def resume(path, params_like, opt_state_like):
    target = gpt.checkpoint.abstract_like({"params": params_like, "opt_state": opt_state_like,
                                           "step": jnp.zeros((), jnp.int32)})
    saved = gpt.checkpoint.orbax_load(path, target)
    return saved["params"], saved["opt_state"], int(saved["step"])
"""
RESUME_TORCH_BODY = """
def resume_torch(path, model, optimizer):
    msd, osd = get_state_dict(model, optimizer)
    state = {{"model": msd, "optim": osd{extra}}}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    {put}
    return {ret}
"""
PUT_BOTH = 'set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])'
RESUME_TORCH_DATA_RESTARTED = RESUME_JAX_OK + RESUME_TORCH_BODY.format(
    extra=', "step": torch.tensor(0)', put=PUT_BOTH, ret="0"
)
RESUME_TORCH_FRESH_OPTIMIZER = RESUME_JAX_OK + RESUME_TORCH_BODY.format(
    extra=', "step": torch.tensor(0)',
    put='model.load_state_dict(state["model"])\n    optimizer.state.clear()  # a fresh AdamW',
    ret='int(state["step"])',
)
RESUME_TORCH_MODEL_NOT_LOADED = (
    RESUME_JAX_OK
    + """
def resume_torch(path, model, optimizer):
    msd, osd = get_state_dict(model, optimizer)
    state = {"optim": osd, "step": torch.tensor(0)}  # the optimizer and the step only
    dcp.load(state, checkpoint_id=path, no_dist=True)
    set_state_dict(model, optimizer, model_state_dict=msd, optim_state_dict=state["optim"])
    return int(state["step"])
"""
)

RESUME_BODY = """
def resume(path, params_like, opt_state_like):
    target = gpt.checkpoint.abstract_like({{"params": params_like, "opt_state": opt_state_like,
                                           "step": jnp.zeros((), jnp.int32)}})
    saved = gpt.checkpoint.orbax_load(path, target)
    return {ret}
"""
RESUME_FRESH_OPTIMIZER = RESUME_TORCH_OK + RESUME_BODY.format(
    ret='saved["params"], tx.init(saved["params"]), int(saved["step"])'
)
RESUME_DATA_RESTARTED = RESUME_TORCH_OK + RESUME_BODY.format(
    ret='saved["params"], saved["opt_state"], 0'
)
RESUME_PARAMS_NOT_RESTORED = RESUME_TORCH_OK + RESUME_BODY.format(
    ret='params_like, saved["opt_state"], int(saved["step"])'
)

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

DP_Y_UNSPLIT = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, replicated), out_shardings=replicated)
"""
)

DP_PARAMS_SPLIT_TOO = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    by_rows = NamedSharding(mesh, P("data"))  # the parameters split too
    return jax.jit(loss_fn, in_shardings=(by_rows, by_rows, by_rows), out_shardings=NamedSharding(mesh, P()))
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

DP_TORCH_SPLIT_SIZE = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.split(world), y.split(world), strict=True):  # pieces of `world` rows each
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
"""
)

DP_BARE_SPECS = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    return jax.jit(loss_fn, in_shardings=(P(), P("data"), P("data")), out_shardings=P())  # no mesh given
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

DP_TWO_SHARDINGS = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows), out_shardings=replicated)  # y's entry missing
"""
)

RESUME_TORCH_LOAD = (
    RESUME_JAX_OK
    + """
def resume_torch(path, model, optimizer):
    state = torch.load(path)  # torch.save's file format, not DCP's directory
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optim"])
    return int(state["step"])
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

DP_LOSS_SHARDED_OUT = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=by_rows)
"""
)

RESUME_TORCH_PLAIN_STATE_DICTS = (
    RESUME_JAX_OK
    + """
def resume_torch(path, model, optimizer):
    state = {"model": model.state_dict(), "optim": optimizer.state_dict(), "step": torch.tensor(0)}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optim"])
    return int(state["step"])
"""
)

RESUME_TORCH_PLUS_ONE = (
    RESUME_JAX_OK
    + """
def resume_torch(path, model, optimizer):
    msd, osd = get_state_dict(model, optimizer)
    state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
    dcp.load(state, checkpoint_id=path, no_dist=True)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return int(state["step"]) + 1
"""
)


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

DP_SEQUENCE_SPLIT = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
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
DP_TORCH_MEAN_OVER_ROWS = (
    """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / len(x) for name in per_rank[0]}  # the batch size
"""
    + DP_JAX_OK
)

DP_TORCH_WHOLE_BATCH = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    model.zero_grad()
    model.loss(x, y).backward()  # the right gradients, but no rank computed its own rows
    return {name: p.grad.clone() for name, p in model.named_parameters()}
"""
)
DP_TORCH_SEQUENCE_CHUNKS = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    per_rank = []
    for x_rank, y_rank in zip(x.chunk(world, dim=1), y.chunk(world, dim=1), strict=True):  # cuts sequences
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
        per_rank.append({name: p.grad.clone() for name, p in model.named_parameters()})
    return {name: sum(g[name] for g in per_rank) / world for name in per_rank[0]}
"""
)
DP_AXIS_NAME = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))  # not the mesh's axis
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
"""
)
RESUME_TORCH_INT_STEP = RESUME_JAX_OK + RESUME_TORCH_BODY.format(
    extra=', "step": 0', put=PUT_BOTH, ret='int(state["step"])'
)
RESUME_TARGET_WITHOUT_STEP = (
    RESUME_TORCH_OK
    + """
def resume(path, params_like, opt_state_like):
    target = gpt.checkpoint.abstract_like({"params": params_like, "opt_state": opt_state_like})
    saved = gpt.checkpoint.orbax_load(path, target)
    return saved["params"], saved["opt_state"], 0
"""
)
RESUME_NO_TARGET = (
    RESUME_TORCH_OK
    + """
import orbax.checkpoint as ocp


def resume(path, params_like, opt_state_like):
    saved = ocp.v1.load(path)  # no target: optax's named tuples come back as dicts
    return saved["params"], saved["opt_state"], int(saved["step"])
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
DP_TORCH_LAST_RANK_ONLY = (
    DP_JAX_OK
    + """
def data_parallel_grads_torch(model, x, y, world):
    for x_rank, y_rank in zip(x.chunk(world), y.chunk(world), strict=True):
        model.zero_grad()
        model.loss(x_rank, y_rank).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}  # the last rank's alone
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
            "hides a query's own position",
        ),
        ("the upper triangle (transposed)", MASK_TRANSPOSED, "see a later key"),
        ("a float mask", MASK_FLOAT, "must be boolean"),
        (
            "PyTorch: the inverted mask, True where hidden (as for masked_fill)",
            MASK_INVERTED,
            "not the ones hidden",
        ),
        (
            "PyTorch: a float tril, as for an additive mask",
            MASK_TORCH_FLOAT,
            "must be boolean",
        ),
    ],
    "attention-converter": [
        ("weights not transposed", ATTN_NOT_TRANSPOSED, "change of layout"),
        ("PyTorch's name weight kept for the kernel", ATTN_KEY_WEIGHT, "NNX's names"),
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
    "dp-loss": [
        (
            "PyTorch: the last rank's gradients returned alone",
            DP_TORCH_LAST_RANK_ONLY,
            "the last rank's gradients",
        ),
        (
            "PyTorch: the ranks' gradients summed",
            DP_TORCH_SUMMED,
            "summed rather than averaged",
        ),
        (
            "PyTorch: the summed gradients divided by the batch size, not by world",
            DP_TORCH_MEAN_OVER_ROWS,
            "another count than world",
        ),
        (
            "PyTorch: no zero_grad between ranks",
            DP_TORCH_NO_ZERO_GRAD,
            "added to the gradients the rank before it left",
        ),
        (
            "PyTorch: the whole batch in one call, no rank's rows",
            DP_TORCH_WHOLE_BATCH,
            "ran once, on the whole batch",
        ),
        (
            "PyTorch: x.chunk(world, dim=1), every sequence cut",
            DP_TORCH_SEQUENCE_CHUNKS,
            "another axis than its first",
        ),
        (
            "P('batch'), an axis the mesh does not have",
            DP_AXIS_NAME,
            "the mesh's own axes",
        ),
        (
            "PyTorch: x.split(world), pieces of world rows",
            DP_TORCH_SPLIT_SIZE,
            "not the chunk size",
        ),
        (
            "bare P() specs, no mesh",
            DP_BARE_SPECS,
            "which mesh to shard the arrays onto",
        ),
        ("PyTorch: y left unsplit", DP_TORCH_Y_UNSPLIT, "do not have the same rows"),
        ("sum of the shards' means", DP_SUM_OF_SHARDS, "not their sum"),
        ("no shardings at all", DP_NO_SHARDING, "the batch is not split"),
        (
            "x and y split over their sequence axis, P(None, 'data')",
            DP_SEQUENCE_SPLIT,
            "another axis than its first",
        ),
        (
            "the batch replicated",
            DP_PARAMS_SPLIT_BATCH_REPLICATED,
            "the batch is not split",
        ),
        ("y left unsplit", DP_Y_UNSPLIT, "but y is not"),
        (
            "the parameters split over 'data' too",
            DP_PARAMS_SPLIT_TOO,
            "would not split the parameters",
        ),
        ("in_shardings without y's entry", DP_TWO_SHARDINGS, "one entry per argument"),
        (
            "the scalar loss split over 'data'",
            DP_LOSS_SHARDED_OUT,
            "out_shardings can only replicate",
        ),
    ],
    "resume": [
        (
            "PyTorch: the data restarted from batch 0",
            RESUME_TORCH_DATA_RESTARTED,
            "not from the saved step",
        ),
        (
            "PyTorch: a fresh optimizer",
            RESUME_TORCH_FRESH_OPTIMIZER,
            "not the saved AdamW state",
        ),
        (
            "PyTorch: the optimizer's own state_dict() loaded into",
            RESUME_TORCH_PLAIN_STATE_DICTS,
            "has no moments",
        ),
        (
            "PyTorch: next batch one past the saved step",
            RESUME_TORCH_PLUS_ONE,
            "past the saved step",
        ),
        (
            "PyTorch: the fresh weights kept",
            RESUME_TORCH_MODEL_NOT_LOADED,
            "its fresh weights",
        ),
        (
            "PyTorch: the step to fill a Python int, not a tensor",
            RESUME_TORCH_INT_STEP,
            "not a Python int",
        ),
        (
            "a restore target without the step",
            RESUME_TARGET_WITHOUT_STEP,
            "the three keys",
        ),
        (
            "ocp.v1.load without a target",
            RESUME_NO_TARGET,
            "optax's named tuples",
        ),
        (
            "PyTorch: torch.load of the DCP directory",
            RESUME_TORCH_LOAD,
            "DCP directory",
        ),
        (
            "a fresh optimizer state",
            RESUME_FRESH_OPTIMIZER,
            "not the saved AdamW state",
        ),
        (
            "the data restarted from batch 0",
            RESUME_DATA_RESTARTED,
            "do not start at the saved step",
        ),
        (
            "the fresh model's parameters",
            RESUME_PARAMS_NOT_RESTORED,
            "are not the saved ones",
        ),
    ],
}
