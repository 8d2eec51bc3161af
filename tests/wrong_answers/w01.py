"""Wrong answers to solutions/01_design_philosophy_exercises.py."""

RIGHT_JAX = """
def dropout_masks_jax(key, num_steps, shape, rate):
    step_keys = [jax.random.fold_in(key, step) for step in range(num_steps)]
    return jnp.stack([jax.random.bernoulli(k, 1.0 - rate, shape) for k in step_keys])
"""

KEEP_DROP_SWAPPED = (
    RIGHT_JAX.replace("1.0 - rate", "rate")
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) < rate  # True where DROPPED
"""
)

GLOBAL_GENERATOR = (
    RIGHT_JAX
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    torch.manual_seed(seed)  # reseeds everyone's generator
    return torch.rand((num_steps, *shape)) >= rate
"""
)

REUSED_KEY = (
    """
def dropout_masks_jax(key, num_steps, shape, rate):
    return jnp.stack([jax.random.bernoulli(key, 1.0 - rate, shape) for _ in range(num_steps)])
"""
    + """
def dropout_masks_torch(seed, num_steps, shape, rate):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand((num_steps, *shape), generator=gen) >= rate
"""
)

WRONG = {
    "dropout-keys": [
        ("keep and drop swapped", KEEP_DROP_SWAPPED, "KEPT, with probability 1 - rate"),
        ("the global torch generator", GLOBAL_GENERATOR, "private torch.Generator"),
        ("one key for every step", REUSED_KEY, "fold_in(key, step)"),
    ],
}
