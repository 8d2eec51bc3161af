"""Wrong answers to solutions/12_gpt_at_scale_exercises.py."""

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

DP_SEQUENCE_SPLIT = (
    DP_TORCH_OK
    + """
def data_parallel(loss_fn, mesh):
    replicated, by_rows = NamedSharding(mesh, P()), NamedSharding(mesh, P(None, "data"))
    return jax.jit(loss_fn, in_shardings=(replicated, by_rows, by_rows), out_shardings=replicated)
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
            "not start from the saved step",
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
            "not start from the saved step",
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
            "not DCP's directory",
        ),
        (
            "a fresh optimizer state",
            RESUME_FRESH_OPTIMIZER,
            "not the saved AdamW state",
        ),
        (
            "the data restarted from batch 0",
            RESUME_DATA_RESTARTED,
            "not start from the saved step",
        ),
        (
            "the fresh model's parameters",
            RESUME_PARAMS_NOT_RESTORED,
            "are not the saved ones",
        ),
    ],
}
