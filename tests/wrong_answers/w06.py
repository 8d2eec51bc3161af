"""Wrong answers to solutions/06_ecosystem_exercises.py."""

ADAMW = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.adamw(schedule, b1=0.8, b2=0.99, weight_decay=0.01),  # decoupled, not torch's coupled L2
    )
"""

DECAY_BEFORE_CLIP = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.add_decayed_weights(0.01),  # clipped together with the gradient
        optax.clip_by_global_norm(0.5),
        optax.adam(schedule, b1=0.8, b2=0.99),
    )
"""

SMOOTH_SCHEDULE = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5)  # no staircase
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.add_decayed_weights(0.01),
        optax.adam(schedule, b1=0.8, b2=0.99),
    )
"""

MODEL_ONLY = """
def save_checkpoint(path, model, optimizer):
    ocp.v1.save(Path(path).absolute(), {"model": nnx.state(model)})


def restore_checkpoint(path, model, optimizer):
    target = {"model": nnx.state(model)}
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), target)
    nnx.update(model, ocp.v1.load(Path(path).absolute(), abstract)["model"])
"""

OPTIMIZER_NOT_UPDATED = """
def save_checkpoint(path, model, optimizer):
    ocp.v1.save(Path(path).absolute(), {"model": nnx.state(model), "optimizer": nnx.state(optimizer)})


def restore_checkpoint(path, model, optimizer):
    target = {"model": nnx.state(model), "optimizer": nnx.state(optimizer)}
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), target)
    restored = ocp.v1.load(Path(path).absolute(), abstract)
    nnx.update(model, restored["model"])  # the optimizer's state is loaded but never put back
"""

CONCRETE_BATCH = """
def export_mlp(params, n_features):
    param_specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.float32), params)
    x_spec = jax.ShapeDtypeStruct((3, n_features), jnp.float32)  # an example batch, not a symbolic one
    return jax.export.export(jax.jit(mlp))(param_specs, x_spec)
"""

NONE_BATCH = """
def export_mlp(params, n_features):
    param_specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.float32), params)
    x_spec = jax.ShapeDtypeStruct((None, n_features), jnp.float32)  # torch.export-style "any size"
    return jax.export.export(jax.jit(mlp))(param_specs, x_spec)
"""

FEATURES_SYMBOLIC = """
def export_mlp(params, n_features):
    batch, features = jax.export.symbolic_shape("batch, features")  # both dimensions symbolic
    param_specs = {
        "W": jax.ShapeDtypeStruct((features, params["W"].shape[1]), jnp.float32),
        "b": jax.ShapeDtypeStruct(np.shape(params["b"]), jnp.float32),
        "V": jax.ShapeDtypeStruct(np.shape(params["V"]), jnp.float32),
    }
    x_spec = jax.ShapeDtypeStruct((batch, features), jnp.float32)
    return jax.export.export(jax.jit(mlp))(param_specs, x_spec)
"""

ALL_SYMBOLIC = """
def export_mlp(params, n_features):
    batch, features, hidden = jax.export.symbolic_shape("batch, features, hidden")
    param_specs = {  # every size symbolic: any MLP of this form
        "W": jax.ShapeDtypeStruct((features, hidden), jnp.float32),
        "b": jax.ShapeDtypeStruct((hidden,), jnp.float32),
        "V": jax.ShapeDtypeStruct((hidden, params["V"].shape[1]), jnp.float32),
    }
    x_spec = jax.ShapeDtypeStruct((batch, features), jnp.float32)
    return jax.export.export(jax.jit(mlp))(param_specs, x_spec)
"""

FORWARD = """
class JaxLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out, vjp_fn = jax.vjp(lse_jax, jax.dlpack.from_dlpack(x.detach()))
        ctx.vjp_fn = vjp_fn
        return torch.from_dlpack(out)
"""

NO_CONTIGUOUS = (
    FORWARD
    + """
    @staticmethod
    def backward(ctx, grad_out):
        (grad_x,) = ctx.vjp_fn(jax.dlpack.from_dlpack(grad_out))
        return torch.from_dlpack(grad_x)
"""
)

IGNORES_GRAD_OUT = (
    FORWARD
    + """
    @staticmethod
    def backward(ctx, grad_out):
        (grad_x,) = ctx.vjp_fn(jnp.ones(grad_out.shape))  # the gradient of the output itself
        return torch.from_dlpack(grad_x)
"""
)

NO_CLIP = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(optax.add_decayed_weights(0.01), optax.adam(schedule, b1=0.8, b2=0.99))  # no clipping
"""

DEFAULT_BETAS = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.add_decayed_weights(0.01),
        optax.adam(schedule),  # optax's default betas (0.9, 0.999), not torch's (0.8, 0.99) here
    )
"""

CLIP_THE_UPDATE = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.add_decayed_weights(0.01),
        optax.adam(schedule, b1=0.8, b2=0.99),
        optax.clip_by_global_norm(0.5),  # clips Adam's update, not the gradient
    )
"""

CONSTANT_LR = """
def make_tx():
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.add_decayed_weights(0.01),
        optax.adam(0.05, b1=0.8, b2=0.99),  # the scheduler forgotten
    )
"""

ONE_BOUNDARY = """
def make_tx():
    schedule = optax.piecewise_constant_schedule(0.05, {5: 0.5})  # halves once, not every 5 steps
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.add_decayed_weights(0.01),
        optax.adam(schedule, b1=0.8, b2=0.99),
    )
"""

ELEMENTWISE_CLIP = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.clip(0.5),  # each element clipped, not the global norm
        optax.add_decayed_weights(0.01),
        optax.adam(schedule, b1=0.8, b2=0.99),
    )
"""

DECAY_AFTER_ADAM = """
def make_tx():
    schedule = optax.exponential_decay(0.05, transition_steps=5, decay_rate=0.5, staircase=True)
    return optax.chain(
        optax.clip_by_global_norm(0.5),
        optax.adam(schedule, b1=0.8, b2=0.99),
        optax.add_decayed_weights(0.01),  # added to the update, after Adam
    )
"""

REBINDS = """
def save_checkpoint(path, model, optimizer):
    ocp.v1.save(Path(path).absolute(), {"model": nnx.state(model), "optimizer": nnx.state(optimizer)})


def restore_checkpoint(path, model, optimizer):
    graphdef_model, state_model = nnx.split(model)
    graphdef_opt, state_opt = nnx.split(optimizer)
    target = {"model": state_model, "optimizer": state_opt}
    abstract = jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), target)
    restored = ocp.v1.load(Path(path).absolute(), abstract)
    model = nnx.merge(graphdef_model, restored["model"])  # new objects, bound to local names
    optimizer = nnx.merge(graphdef_opt, restored["optimizer"])
"""

NO_JIT = """
def export_mlp(params, n_features):
    (batch,) = jax.export.symbolic_shape("batch")
    param_specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.float32), params)
    x_spec = jax.ShapeDtypeStruct((batch, n_features), jnp.float32)
    return jax.export.export(mlp, platforms=[PLATFORM])(param_specs, x_spec)  # no jax.jit
"""

TRANSPOSED_INPUT = """
def export_mlp(params, n_features):
    (batch,) = jax.export.symbolic_shape("batch")
    param_specs = jax.tree.map(lambda a: jax.ShapeDtypeStruct(np.shape(a), jnp.float32), params)
    x_spec = jax.ShapeDtypeStruct((n_features, batch), jnp.float32)  # features first
    return jax.export.export(jax.jit(mlp), platforms=[PLATFORM])(param_specs, x_spec)
"""

BACKWARD = """
    @staticmethod
    def backward(ctx, grad_out):
        (grad_x,) = ctx.vjp_fn(jax.dlpack.from_dlpack(grad_out.contiguous()))
        return torch.from_dlpack(grad_x)
"""

NO_DETACH = (
    """
class JaxLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out, vjp_fn = jax.vjp(lse_jax, jax.dlpack.from_dlpack(x))  # x still requires grad
        ctx.vjp_fn = vjp_fn
        return torch.from_dlpack(out)
"""
    + BACKWARD
)

RETURNS_JAX = (
    """
class JaxLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out, vjp_fn = jax.vjp(lse_jax, jax.dlpack.from_dlpack(x.detach()))
        ctx.vjp_fn = vjp_fn
        return out  # a JAX array handed to PyTorch
"""
    + BACKWARD
)

VJP_TUPLE = (
    FORWARD
    + """
    @staticmethod
    def backward(ctx, grad_out):
        return torch.from_dlpack(ctx.vjp_fn(jax.dlpack.from_dlpack(grad_out.contiguous())))  # a tuple
"""
)

BACKWARD_RETURNS_JAX = (
    FORWARD
    + """
    @staticmethod
    def backward(ctx, grad_out):
        (grad_x,) = ctx.vjp_fn(jax.dlpack.from_dlpack(grad_out.contiguous()))
        return grad_x  # a JAX array handed to PyTorch
"""
)

CLIP_WORDS = "rescales the whole raw gradient"

WRONG = {
    "optax-match": [
        ("decoupled AdamW decay", ADAMW, "coupled L2"),
        (
            "decay added before clipping",
            DECAY_BEFORE_CLIP,
            "sees the raw gradient only",
        ),
        (
            "smooth exponential schedule",
            SMOOTH_SCHEDULE,
            "StepLR halves it every 5 steps",
        ),
        ("no schedule at all", CONSTANT_LR, "StepLR halves it every 5 steps"),
        ("one boundary only", ONE_BOUNDARY, "StepLR halves it every 5 steps"),
        ("no clipping", NO_CLIP, CLIP_WORDS),
        ("element-wise clipping", ELEMENTWISE_CLIP, CLIP_WORDS),
        ("optax's default betas", DEFAULT_BETAS, "the colleague's betas"),
        ("the update clipped, after Adam", CLIP_THE_UPDATE, CLIP_WORDS),
        ("the decay added after Adam", DECAY_AFTER_ADAM, "coupled L2"),
    ],
    "orbax-resume": [
        ("saves only the model", MODEL_ONLY, "holds no optimizer state"),
        (
            "loads the optimizer but never updates it",
            OPTIMIZER_NOT_UPDATED,
            "never put it back",
        ),
        (
            "restores into new local objects",
            REBINDS,
            "in place, as load_state_dict does",
        ),
    ],
    "export-dynamic": [
        (
            "exports a concrete batch",
            CONCRETE_BATCH,
            "does not accept batches of 3 and 11",
        ),
        ("None for the batch, as in torch", NONE_BATCH, "a symbolic size"),
        (
            "the feature dimension symbolic too",
            FEATURES_SYMBOLIC,
            "only x's first dimension (the batch) may be symbolic",
        ),
        (
            "every size symbolic",
            ALL_SYMBOLIC,
            "only x's first dimension (the batch) may be symbolic",
        ),
        ("the plain function, not jax.jit", NO_JIT, "wrapped in jax.jit"),
        ("the input spec transposed", TRANSPOSED_INPUT, "the batch comes first"),
    ],
    "jax-backward": [
        ("no .contiguous() on the incoming gradient", NO_CONTIGUOUS, ".contiguous()"),
        (
            "ignores the incoming gradient",
            IGNORES_GRAD_OUT,
            "pass it to the VJP function",
        ),
        ("hands JAX a tensor that requires grad", NO_DETACH, "x.detach()"),
        ("forward returns a JAX array", RETURNS_JAX, "torch.from_dlpack"),
        ("backward converts the VJP's tuple", VJP_TUPLE, "one gradient per input"),
        ("backward returns a JAX array", BACKWARD_RETURNS_JAX, "torch.from_dlpack"),
    ],
}
