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
