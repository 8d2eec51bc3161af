"""Wrong answers to solutions/02_autodiff_exercises.py."""

RIGHT_JAX = """
def accumulate_jax(params, X, y, n_micro):
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, n_micro), jnp.split(y, n_micro), strict=True):
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g / n_micro, total, g)
    return total
"""

NO_ZERO_GRAD = (
    RIGHT_JAX
    + """
def accumulate_torch(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro), strict=True):
        (torch.nn.functional.cross_entropy(model(X_micro), y_micro) / n_micro).backward()
"""
)

NO_SCALING = """
def accumulate_jax(params, X, y, n_micro):
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, n_micro), jnp.split(y, n_micro), strict=True):
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g, total, g)  # n_micro times too large
    return total
"""

WRONG = {
    "grad-accum": [
        ("forgets zero_grad", NO_ZERO_GRAD, "model.zero_grad()"),
        (
            "sums micro-batch gradients unscaled",
            NO_SCALING,
            "divide each micro-batch gradient",
        ),
    ],
}

RIGHT_HVP_TORCH = """
def hvp_torch(f, x, v):
    return tf.jvp(tf.grad(f), (x,), (v,))[1]
"""

HVP_GRAD_TIMES_V = (
    """
def hvp_jax(f, x, v):
    return jax.grad(f)(x) * v  # gradient scaled by v, not its derivative along v
"""
    + RIGHT_HVP_TORCH
)

HVP_JVP_OF_F = """
def hvp_jax(f, x, v):
    return jax.jvp(jax.grad(f), (x,), (v,))[1]

def hvp_torch(f, x, v):
    return tf.jvp(f, (x,), (v,))[1]  # directional derivative of f, a scalar
"""

CLIP_SETUP = """
@jax.custom_vjp
def clip_gradient_jax(x, lo, hi):
    return x
"""

CLIP_TORCH_RIGHT = """
class ClipGradient(torch.autograd.Function):
    @staticmethod
    def forward(x, lo, hi):
        return x.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.lo, ctx.hi = inputs[1], inputs[2]

    @staticmethod
    def backward(ctx, g):
        return g.clamp(ctx.lo, ctx.hi), None, None
"""

CLIP_JAX_RIGHT = (
    CLIP_SETUP
    + """
def clip_gradient_fwd(x, lo, hi):
    return x, (lo, hi)

def clip_gradient_bwd(residuals, g):
    lo, hi = residuals
    return jnp.clip(g, lo, hi), None, None

clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)
"""
)

CLIP_JAX_ONE_COTANGENT = (
    CLIP_SETUP
    + """
def clip_gradient_fwd(x, lo, hi):
    return x, (lo, hi)

def clip_gradient_bwd(residuals, g):
    lo, hi = residuals
    return jnp.clip(g, lo, hi)  # a cotangent for x only, not a tuple for (x, lo, hi)

clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)
"""
    + CLIP_TORCH_RIGHT
)

CLIP_TORCH_ONE_GRADIENT = CLIP_JAX_RIGHT + CLIP_TORCH_RIGHT.replace(
    "return g.clamp(ctx.lo, ctx.hi), None, None", "return g.clamp(ctx.lo, ctx.hi)"
)

CLIP_TORCH_CLIPS_FORWARD = CLIP_JAX_RIGHT + CLIP_TORCH_RIGHT.replace(
    "return x.clone()", "return x.clamp(lo, hi)"
).replace("return g.clamp(ctx.lo, ctx.hi), None, None", "return g, None, None")

STE_PLAIN_ROUND = """
def round_ste_jax(x):
    return jnp.round(x)  # zero gradient almost everywhere

def round_ste_torch(x):
    return x + (torch.round(x) - x).detach()
"""

STE_STOPS_EVERYTHING = """
def round_ste_jax(x):
    return x + jax.lax.stop_gradient(jnp.round(x) - x)

def round_ste_torch(x):
    return (x + (torch.round(x) - x)).detach()  # detaches the identity part too
"""

NORMS_RIGHT_TORCH = """
def per_example_norms_torch(model, X, y):
    p = {name: value.detach() for name, value in model.named_parameters()}

    def loss_one(p, x, label):
        logits = tf.functional_call(model, p, (x[None],))
        return torch.nn.functional.cross_entropy(logits, label[None])

    grads = tf.vmap(tf.grad(loss_one), in_dims=(None, 0, 0))(p, X, y)
    return torch.sqrt(sum(g.flatten(1).pow(2).sum(dim=1) for g in grads.values()))
"""

NORMS_SUM_OF_LEAF_NORMS = (
    """
def per_example_norms_jax(params, X, y):
    def loss_one(params, x, label):
        return loss_jax(params, x[None], label[None])

    grads = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(params, X, y)
    # one norm per leaf, added up: not the norm over all parameters
    return sum(jnp.linalg.norm(g.reshape(g.shape[0], -1), axis=1) for g in jax.tree.leaves(grads))
"""
    + NORMS_RIGHT_TORCH
)

NORMS_TORCH_MAPS_PARAMS = """
def per_example_norms_jax(params, X, y):
    def loss_one(params, x, label):
        return loss_jax(params, x[None], label[None])

    grads = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(params, X, y)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    return jnp.sqrt(sum(squares))
""" + NORMS_RIGHT_TORCH.replace("in_dims=(None, 0, 0)", "in_dims=0")

NORMS_JAX_NO_SQRT = (
    """
def per_example_norms_jax(params, X, y):
    def loss_one(params, x, label):
        return loss_jax(params, x[None], label[None])

    grads = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(params, X, y)
    return sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads))
"""
    + NORMS_RIGHT_TORCH
)

HVP_FULL_HESSIAN_JAX = (
    """
def hvp_jax(f, x, v):
    return jax.hessian(f)(x) @ v  # right values, n x n memory
"""
    + RIGHT_HVP_TORCH
)

HVP_FULL_HESSIAN_TORCH = """
def hvp_jax(f, x, v):
    return jax.jvp(jax.grad(f), (x,), (v,))[1]

def hvp_torch(f, x, v):
    return tf.hessian(f)(x) @ v  # right values, n x n memory
"""

HVP_HESSIAN_IN_NESTED_JIT = (
    """
def hvp_jax(f, x, v):
    return jax.jit(lambda: jax.hessian(f)(x) @ v)()  # the Hessian, inside a nested jit
"""
    + RIGHT_HVP_TORCH
)

HVP_HESSIAN_IN_CHECKPOINT = (
    """
def hvp_jax(f, x, v):
    return jax.checkpoint(lambda x: jax.hessian(f)(x) @ v)(x)  # the Hessian, inside remat
"""
    + RIGHT_HVP_TORCH
)

HVP_AUTOGRAD_HESSIAN_TORCH = """
def hvp_jax(f, x, v):
    return jax.jvp(jax.grad(f), (x,), (v,))[1]

def hvp_torch(f, x, v):
    return torch.autograd.functional.hessian(f, x) @ v  # the Hessian, by double backward
"""

ACCUM_TORCH_SPLIT = """
def accumulate_torch(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.split(n_micro), y.split(n_micro)):  # pieces of n_micro rows
        (torch.nn.functional.cross_entropy(model(X_micro), y_micro) / n_micro).backward()

def accumulate_jax(params, X, y, n_micro):
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, n_micro), jnp.split(y, n_micro)):
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g / n_micro, total, g)
    return total
"""

ACCUM_JAX_SPLIT_BY_SIZE = """
def accumulate_jax(params, X, y, n_micro):
    size = X.shape[0] // n_micro
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, size), jnp.split(y, size)):  # torch.split's habit
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g / n_micro, total, g)
    return total
"""

ACCUM_ZERO_IN_LOOP = """
def accumulate_torch(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        model.zero_grad()  # wipes the micro-batches before this one
        (torch.nn.functional.cross_entropy(model(X_micro), y_micro) / n_micro).backward()

def accumulate_jax(params, X, y, n_micro):
    total = jax.tree.map(jnp.zeros_like, params)
    for X_micro, y_micro in zip(jnp.split(X, n_micro), jnp.split(y, n_micro)):
        g = jax.grad(loss_jax)(params, X_micro, y_micro)
        total = jax.tree.map(lambda t, g: t + g / n_micro, total, g)
    return total
"""

NORMS_JAX_MAPS_PARAMS = (
    NORMS_RIGHT_TORCH
    + """
def per_example_norms_jax(params, X, y):
    def loss_one(params, x, label):
        return loss_jax(params, x[None], label[None])

    grads = jax.vmap(jax.grad(loss_one))(params, X, y)  # in_axes=0 for the parameters too
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    return jnp.sqrt(sum(squares))
"""
)

CLIP_JAX_FWD_NO_RESIDUALS = (
    CLIP_SETUP
    + """
def clip_gradient_fwd(x, lo, hi):
    return x  # no residuals: fwd returns a pair

def clip_gradient_bwd(residuals, g):
    lo, hi = residuals
    return jnp.clip(g, lo, hi), None, None

clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)
"""
    + CLIP_TORCH_RIGHT
)

STE_FLOOR_HALF = """
def round_ste_jax(x):
    return x + jax.lax.stop_gradient(jnp.floor(x + 0.5) - x)  # rounds halves up

def round_ste_torch(x):
    return x + (torch.floor(x + 0.5) - x).detach()
"""

STE_ONES_BACKWARD = """
@jax.custom_vjp
def round_ste_jax(x):
    return jnp.round(x)

def _fwd(x):
    return jnp.round(x), None

def _bwd(_, g):
    return (jnp.ones_like(g),)  # ones, whatever flows in

round_ste_jax.defvjp(_fwd, _bwd)

class _RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.round(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return torch.ones_like(g)

def round_ste_torch(x):
    return _RoundSTE.apply(x)
"""

STE_TORCH_ROUND_ONLY_DETACHED = """
def round_ste_jax(x):
    return x + jax.lax.stop_gradient(jnp.round(x) - x)

def round_ste_torch(x):
    return torch.round(x).detach()  # no path back to x at all
"""

WRONG["grad-accum"] += [
    (
        "torch.split(X, n_micro): pieces of n_micro rows",
        ACCUM_TORCH_SPLIT,
        "torch.split takes a piece size",
    ),
    (
        "jnp.split by piece size",
        ACCUM_JAX_SPLIT_BY_SIZE,
        "jnp.split takes the number of pieces",
    ),
    (
        "zero_grad inside the loop",
        ACCUM_ZERO_IN_LOOP,
        "not per micro-batch",
    ),
]

WRONG.update(
    {
        "hvp": [
            (
                "gradient times v",
                HVP_GRAD_TIMES_V,
                "JAX: H v is the derivative of the gradient",
            ),
            (
                "JAX builds the Hessian",
                HVP_FULL_HESSIAN_JAX,
                "JAX: O(n) memory means no n x n Hessian",
            ),
            (
                "JAX builds the Hessian inside a nested jit",
                HVP_HESSIAN_IN_NESTED_JIT,
                "JAX: O(n) memory means no n x n Hessian",
            ),
            (
                "JAX builds the Hessian inside jax.checkpoint",
                HVP_HESSIAN_IN_CHECKPOINT,
                "JAX: O(n) memory means no n x n Hessian",
            ),
            (
                "torch builds the Hessian",
                HVP_FULL_HESSIAN_TORCH,
                "PyTorch: O(n) memory means no n x n Hessian",
            ),
            (
                "torch builds the Hessian with torch.autograd.functional",
                HVP_AUTOGRAD_HESSIAN_TORCH,
                "PyTorch: O(n) memory means no n x n Hessian",
            ),
            (
                "jvp of f, not of its gradient",
                HVP_JVP_OF_F,
                "PyTorch: H v is the derivative of the gradient",
            ),
        ],
        "clip-vjp": [
            (
                "JAX bwd returns a bare cotangent",
                CLIP_JAX_ONE_COTANGENT,
                "a tuple with one cotangent per input",
            ),
            (
                "torch backward returns one gradient",
                CLIP_TORCH_ONE_GRADIENT,
                "one gradient per input of forward",
            ),
            (
                "torch clips the forward value",
                CLIP_TORCH_CLIPS_FORWARD,
                "PyTorch: the forward pass returns x unchanged",
            ),
            (
                "JAX fwd without residuals",
                CLIP_JAX_FWD_NO_RESIDUALS,
                "fwd returns a pair",
            ),
        ],
        "straight-through": [
            (
                "plain round in JAX",
                STE_PLAIN_ROUND,
                "the gradient must be 1 everywhere",
            ),
            (
                "torch detaches the identity too",
                STE_STOPS_EVERYTHING,
                "the gradient must be 1 everywhere",
            ),
            (
                "floor(x + 0.5) for round",
                STE_FLOOR_HALF,
                "floor(x + 0.5) rounds them up",
            ),
            ("a backward of ones", STE_ONES_BACKWARD, "not be replaced by ones"),
            (
                "torch detaches everything",
                STE_TORCH_ROUND_ONLY_DETACHED,
                "the gradient must be 1 everywhere",
            ),
        ],
        "per-example-norms": [
            (
                "sum of per-leaf norms",
                NORMS_SUM_OF_LEAF_NORMS,
                "JAX: one norm per example over all leaves together",
            ),
            (
                "torch maps over the parameters too",
                NORMS_TORCH_MAPS_PARAMS,
                "in_dims says None",
            ),
            (
                "JAX forgets the square root",
                NORMS_JAX_NO_SQRT,
                "JAX: one norm per example over all leaves together",
            ),
            (
                "JAX maps over the parameters too",
                NORMS_JAX_MAPS_PARAMS,
                "in_axes says None",
            ),
        ],
    }
)

STE_STOPS_THE_WRONG_PART = """
def round_ste_jax(x):
    return jnp.round(x) + jax.lax.stop_gradient(x - jnp.round(x))  # the value is x again

def round_ste_torch(x):
    return x + (torch.round(x) - x).detach()
"""

STE_TORCH_DETACHES_X = """
def round_ste_jax(x):
    return x + jax.lax.stop_gradient(jnp.round(x) - x)

def round_ste_torch(x):
    return x.detach() + torch.round(x) - x  # detaches the identity, keeps round's zero gradient
"""

WRONG["straight-through"] += [
    (
        "JAX: stop_gradient on the identity part",
        STE_STOPS_THE_WRONG_PART,
        "JAX: the value is rounded",
    ),
    (
        "PyTorch: detach on the identity part",
        STE_TORCH_DETACHES_X,
        "the gradient must be 1 everywhere",
    ),
]

CLIP_JAX_TEMPLATE = (
    CLIP_SETUP
    + """
def clip_gradient_fwd(x, lo, hi):
    return FWD

def clip_gradient_bwd(residuals, g):
    BWD

clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)
"""
)


def _clip_jax(fwd: str, bwd: str) -> str:
    """A wrong JAX half with the right PyTorch half."""
    return CLIP_JAX_TEMPLATE.replace("FWD", fwd).replace("BWD", bwd) + CLIP_TORCH_RIGHT


def _clip_torch(old: str, new: str) -> str:
    """The right JAX half with a wrong PyTorch half."""
    return CLIP_JAX_RIGHT + CLIP_TORCH_RIGHT.replace(old, new)


TORCH_BACKWARD = "return g.clamp(ctx.lo, ctx.hi), None, None"

CLIP_JAX_PRIMAL = _clip_jax(
    "jnp.clip(x, lo, hi), (lo, hi)  # clips the value, not the cotangent",
    "return g, None, None",
)
CLIP_JAX_BOTH = _clip_jax(
    "jnp.clip(x, lo, hi), (lo, hi)  # the value clipped too",
    "lo, hi = residuals\n    return jnp.clip(g, lo, hi), None, None",
)
CLIP_JAX_BY_NORM = _clip_jax(
    "x, (lo, hi)",
    "lo, hi = residuals  # optax.clip_by_global_norm's habit: scale by the norm\n"
    "    return g * jnp.minimum(1.0, hi / jnp.linalg.norm(g)), None, None",
)
CLIP_JAX_CONSTANT_BOUNDS = _clip_jax(
    "x, None  # no residuals",
    "return jnp.clip(g, -1.0, 1.0), None, None  # the bounds typed in",
)
CLIP_JAX_SYMMETRIC = _clip_jax(
    "x, (lo, hi)",
    "lo, hi = residuals\n    return jnp.clip(g, -hi, hi), None, None  # clip_grad_value_'s habit",
)
CLIP_JAX_ONE_TUPLE = _clip_jax(
    "x, (lo, hi)",
    "lo, hi = residuals\n    return (jnp.clip(g, lo, hi),)  # a cotangent for x only",
)
CLIP_JAX_FLOAT_BOUNDS = _clip_jax(
    "x, (float(lo), float(hi))  # ctx.lo = float(lo)'s habit",
    "lo, hi = residuals\n    return jnp.clip(g, lo, hi), None, None",
)
CLIP_JAX_NONDIFF = (
    """
from functools import partial


@partial(jax.custom_vjp, nondiff_argnums=(1, 2))  # breaks on traced bounds
def clip_gradient_jax(x, lo, hi):
    return x

def clip_gradient_fwd(x, lo, hi):
    return x, None

def clip_gradient_bwd(lo, hi, residuals, g):
    return (jnp.clip(g, lo, hi),)

clip_gradient_jax.defvjp(clip_gradient_fwd, clip_gradient_bwd)
"""
    + CLIP_TORCH_RIGHT
)
CLIP_TORCH_BOTH = _clip_torch("return x.clone()", "return x.clamp(lo, hi)")
CLIP_TORCH_BY_NORM = _clip_torch(
    TORCH_BACKWARD,
    "return g * min(1.0, ctx.hi / float(g.norm())), None, None  # clip_grad_norm_'s habit",
)
CLIP_TORCH_CONSTANT_BOUNDS = _clip_torch(
    TORCH_BACKWARD, "return g.clamp(-1.0, 1.0), None, None"
)
CLIP_TORCH_SYMMETRIC = _clip_torch(
    TORCH_BACKWARD, "return g.clamp(-ctx.hi, ctx.hi), None, None"
)
CLIP_TORCH_SAVE_FLOATS = _clip_torch(
    "ctx.lo, ctx.hi = inputs[1], inputs[2]",
    "ctx.save_for_backward(inputs[1], inputs[2])",
)
CLIP_TORCH_NOTHING_ON_CTX = _clip_torch("ctx.lo, ctx.hi = inputs[1], inputs[2]", "pass")

WRONG["clip-vjp"] += [
    (
        "JAX clips the value instead of the cotangent",
        CLIP_JAX_PRIMAL,
        "JAX: the forward pass returns x unchanged",
    ),
    (
        "JAX clips the value and the cotangent",
        CLIP_JAX_BOTH,
        "JAX: the forward pass returns x unchanged",
    ),
    ("JAX clips by norm, not by value", CLIP_JAX_BY_NORM, "not by its norm"),
    (
        "JAX: no residuals, bounds typed into bwd",
        CLIP_JAX_CONSTANT_BOUNDS,
        "not from constants",
    ),
    ("JAX clips to [-hi, hi]", CLIP_JAX_SYMMETRIC, "not to a symmetric"),
    (
        "JAX bwd returns a one-tuple",
        CLIP_JAX_ONE_TUPLE,
        "a tuple with one cotangent per input",
    ),
    ("JAX saves float(lo), float(hi)", CLIP_JAX_FLOAT_BOUNDS, "traced values"),
    ("JAX with nondiff_argnums", CLIP_JAX_NONDIFF, "traced values"),
    (
        "PyTorch clips the value and the gradient",
        CLIP_TORCH_BOTH,
        "PyTorch: the forward pass returns x unchanged",
    ),
    ("PyTorch clips by norm, not by value", CLIP_TORCH_BY_NORM, "not by its norm"),
    (
        "PyTorch: bounds typed into backward",
        CLIP_TORCH_CONSTANT_BOUNDS,
        "not from constants",
    ),
    ("PyTorch clips to [-hi, hi]", CLIP_TORCH_SYMMETRIC, "not to a symmetric"),
    (
        "PyTorch save_for_backward on floats",
        CLIP_TORCH_SAVE_FLOATS,
        "takes tensors only",
    ),
    (
        "PyTorch keeps nothing on ctx",
        CLIP_TORCH_NOTHING_ON_CTX,
        "what setup_context stored",
    ),
]

ACCUM_TORCH_NO_SCALING = (
    RIGHT_JAX
    + """
def accumulate_torch(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        torch.nn.functional.cross_entropy(model(X_micro), y_micro).backward()  # n_micro times too large
"""
)

WRONG["grad-accum"] += [
    (
        "PyTorch sums unscaled micro-batch losses",
        ACCUM_TORCH_NO_SCALING,
        "scale each micro-batch loss",
    ),
]
