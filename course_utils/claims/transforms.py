"""JAX's function transformations against PyTorch: third derivatives, and vmap over environments.

- ``higher-order``: the third derivative of sin(x²)+exp(cos x) at many points,
  PyTorch eager autograd against ``jax.jit(jax.vmap(grad³))``, both checked
  against :func:`third_derivative_analytic`;
- ``vmap-simulation``: one step of many CartPole environments
  (:mod:`course_utils.cartpole`), ``jax.vmap`` + ``jit`` against PyTorch's
  fastest batched variant.
"""

from __future__ import annotations

import numpy as np

from course_utils.claims.harness import Ctx, compare_ratios, medians
from course_utils.claims.verdicts import Measured


def third_derivative_analytic(x: np.ndarray) -> np.ndarray:
    """d³/dx³ [sin(x²) + exp(cos x)] in float64, the oracle."""
    x = np.asarray(x, dtype=np.float64)
    s2, c2 = np.sin(x**2), np.cos(x**2)
    return (
        -12 * x * s2
        - 8 * x**3 * c2
        + np.exp(np.cos(x)) * np.sin(x) * (3 * np.cos(x) + 1 - np.sin(x) ** 2)
    )


def higher_order(ctx: Ctx) -> Measured:
    import jax
    import jax.numpy as jnp
    import torch

    from course_utils import timing
    from course_utils.parity import assert_close

    n = ctx.size(100_000, 2_000)
    x_np = np.linspace(-2.0, 2.0, n, dtype=np.float32)

    def third_torch(x):
        x = x.detach().requires_grad_(True)
        y = (torch.sin(x**2) + torch.exp(torch.cos(x))).sum()  # elementwise f, so the
        (g1,) = torch.autograd.grad(
            y, x, create_graph=True
        )  # gradient of the sum is f'
        (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = torch.autograd.grad(g2.sum(), x)
        return g3

    def f(x):
        return jnp.sin(x**2) + jnp.exp(jnp.cos(x))

    third_jax = jax.jit(jax.vmap(jax.grad(jax.grad(jax.grad(f)))))
    xt, xj = ctx.torch_put(x_np), ctx.jax_put(x_np)
    assert_close(
        third_jax(xj),
        third_derivative_analytic(x_np),
        rtol=1e-3,
        atol=1e-3,
        name="jax f'''",
    )
    cmp = timing.compare(
        {"PyTorch eager": lambda: third_torch(xt), "JAX jit": lambda: third_jax(xj)},
        rtol=1e-4,
        atol=1e-3,
        target_s=ctx.target_s,
    )
    return Measured(
        compare_ratios(cmp, "PyTorch eager", "JAX jit"),
        f"{n:,} points; PyTorch eager autograd vs jax.jit, the article's pairing "
        "(lesson 02 also times compiled vs compiled, where the answer can differ); "
        "both checked against the analytic f'''",
        {
            "median_s": medians(cmp),
            "jax_first_call_s": cmp.measurements["JAX jit"].first_call_s,
        },
    )


def vmap_simulation(ctx: Ctx) -> Measured:
    from course_utils import cartpole, timing

    n = ctx.size(10_000, 2_000)
    v = cartpole.fps_variants(
        n, seed=0, torch_device=ctx.torch_device
    )  # JAX: default device
    names = ["JAX vmap + jit", "PyTorch torch.func.vmap", "PyTorch hand-batched"]
    cmp = timing.compare(
        {k: v[k] for k in names}, rtol=1e-5, atol=1e-5, target_s=ctx.target_s
    )
    med = medians(cmp)
    best = min(names[1:], key=med.get)
    return Measured(
        compare_ratios(cmp, best, "JAX vmap + jit"),
        f"{n:,} CartPole environments, one step; PyTorch's fastest: {best}",
        {"median_s": med, "env_steps_per_s": {k: n / t for k, t in med.items()}},
    )
